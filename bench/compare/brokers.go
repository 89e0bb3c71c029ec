package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"wharf/bench/internal/mosquitto"
	"wharf/internal/activemq"
)

// The brokers a comparison runs against, by the names the report uses.
const (
	nameWharf     = "wharf"
	nameActiveMQ  = "activemq"
	nameMosquitto = "mosquitto"
	nameRabbitMQ  = "rabbitmq"
	// nameWharfSTOMP is Wharf over STOMP as the reference of a row that
	// compares Wharf's AMQP with its own STOMP: the same broker process.
	nameWharfSTOMP = "wharf-stomp"
	// nameDisk is the disk as the reference of the near-the-limit rows:
	// its write+fsync rate, measured next to Wharf's run.
	nameDisk = "disk"
)

// displayName is how the table names a broker.
func displayName(b string) string {
	switch b {
	case nameWharf:
		return "Wharf"
	case nameActiveMQ:
		return "ActiveMQ"
	case nameMosquitto:
		return "Mosquitto"
	case nameRabbitMQ:
		return "RabbitMQ"
	case nameWharfSTOMP:
		return "Wharf STOMP"
	case nameDisk:
		return "disk fsync"
	}
	return b
}

// The connectors of a broker, as keys of broker.urls.
const (
	connOpenWire = "openwire" // tcp://, for the message scenarios
	connNIO      = "nio"      // nio://, for the idle connections scenario
	connSTOMP    = "stomp"
	connMQTT     = "mqtt"
	// stomp+nio:// and mqtt+nio://, for the idle connections scenarios
	// (Mosquitto has one MQTT listener: both MQTT keys name it).
	connSTOMPNIO = "stomp-nio"
	connMQTTNIO  = "mqtt-nio"
	// amqp://, AMQP 1.0: Wharf's and RabbitMQ's (Debian's ActiveMQ has no
	// AMQP transport).
	connAMQP = "amqp"
)

// broker is a running broker the scenarios are pointed at.
type broker struct {
	name string
	// urls maps a connector (connOpenWire, ...) to its wharf bench URL; a
	// broker without MQTT has no connMQTT.
	urls map[string]string
	pid  int
	// exited is closed when the process has ended.
	exited <-chan struct{}
	// stop ends the process and waits for it.
	stop func() error
	// log is the path of its log file.
	log string
	// epmd is the port of the Erlang port mapper a RabbitMQ node started
	// (0 for the others).
	epmd int
	// ctl runs rabbitmqctl against a RabbitMQ node (nil for the others).
	ctl func(ctx context.Context, args ...string) (string, error)
}

// alive reports whether the broker process is still running.
func (b *broker) alive() bool {
	select {
	case <-b.exited:
		return false
	default:
		return true
	}
}

// startTimeout bounds the wait for a broker's connectors; ActiveMQ takes
// a few seconds on a quiet machine, more on a busy one.
const startTimeout = 2 * time.Minute

// stopTimeout is how long a broker has to exit after SIGTERM.
const stopTimeout = 20 * time.Second

// proc is a broker process this program started. It runs in its own
// process group (a Ctrl-C on the terminal reaches it through stop, after
// the runs ended) and gets SIGKILL from Linux if this program dies first.
type proc struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

func startProc(cmd *exec.Cmd, logPath string) (*proc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	p := &proc{cmd: cmd, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// stop sends SIGTERM to the process group, then SIGKILL after
// stopTimeout, and waits for the process.
func (p *proc) stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	pgid := p.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(stopTimeout)
	defer t.Stop()
	select {
	case <-p.exited:
		return nil
	case <-t.C:
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.exited
		return fmt.Errorf("pid %d did not stop within %s of SIGTERM; killed", pgid, stopTimeout)
	}
}

// waitListening polls addrs until each accepts a connection, the process
// exits, ctx ends or startTimeout passes.
func waitListening(ctx context.Context, p *proc, logPath string, addrs ...string) error {
	deadline := time.Now().Add(startTimeout)
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	for _, a := range addrs {
		for {
			c, err := net.DialTimeout("tcp", a, time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-p.exited:
				return fmt.Errorf("%w (%v); log %s:\n%s", errExited, p.cmd.ProcessState, logPath, tail(logPath, 20))
			case <-ctx.Done():
				return ctx.Err()
			case <-poll.C:
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("not listening on %s after %s; log %s", a, startTimeout, logPath)
			}
		}
	}
	return nil
}

var errExited = errors.New("exited during startup")

// tail is the last n lines of a file.
func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ports picks n free loopback ports by binding port 0 and closing it. An
// external broker cannot be handed a listening socket, so this races with
// other processes; a broker that loses the race fails to start and says
// so in its log.
func ports(n int) ([]int, error) {
	return pickPorts(n, net.ListenConfig{}, "tcp", "127.0.0.1:0")
}

// pickPorts binds n listeners on address with lc, all held together so
// that the ports differ, and returns their ports once they are closed.
func pickPorts(n int, lc net.ListenConfig, network, address string) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var out []int
	for range n {
		l, err := lc.Listen(context.Background(), network, address)
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// brokerPorts are the connector ports of one broker instance, and the -D
// properties that hand them to the shared activemq.xml.
type brokerPorts struct{ openwire, nio, stomp, mqtt, stompNIO, mqttNIO, amqp int }

func newBrokerPorts() (brokerPorts, error) {
	p, err := ports(7)
	if err != nil {
		return brokerPorts{}, err
	}
	return brokerPorts{p[0], p[1], p[2], p[3], p[4], p[5], p[6]}, nil
}

func (p brokerPorts) props(data string) []string {
	return []string{
		"activemq.data=" + data,
		"compare.openwire.port=" + strconv.Itoa(p.openwire),
		"compare.nio.port=" + strconv.Itoa(p.nio),
		"compare.stomp.port=" + strconv.Itoa(p.stomp),
		"compare.mqtt.port=" + strconv.Itoa(p.mqtt),
		"compare.stompnio.port=" + strconv.Itoa(p.stompNIO),
		"compare.mqttnio.port=" + strconv.Itoa(p.mqttNIO),
		"compare.amqp.port=" + strconv.Itoa(p.amqp),
	}
}

func addr(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

func (p brokerPorts) urls(withMQTT bool) map[string]string {
	u := map[string]string{
		connOpenWire: "tcp://" + addr(p.openwire),
		connNIO:      "nio://" + addr(p.nio),
		connSTOMP:    "stomp://" + addr(p.stomp),
		connSTOMPNIO: "stomp://" + addr(p.stompNIO),
	}
	if withMQTT {
		u[connMQTT] = "mqtt://" + addr(p.mqtt)
		u[connMQTTNIO] = "mqtt://" + addr(p.mqttNIO)
	}
	return u
}

// withoutMQTT is the broker configuration without its MQTT connectors,
// for a Wharf that has no MQTT listener.
func withoutMQTT(xml string) string { return withoutConnectors(xml, "mqtt", "mqtt-nio") }

// withoutConnectors is the broker configuration without the named
// transport connectors: each element spans two lines.
func withoutConnectors(xml string, names ...string) string {
	lines := strings.Split(xml, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		if slices.ContainsFunc(names, func(n string) bool { return strings.Contains(lines[i], `name="`+n+`"`) }) {
			i++ // and its uri line
			continue
		}
		out = append(out, lines[i])
	}
	return strings.Join(out, "\n")
}

// storingEvery is the broker configuration with
// concurrentStoreAndDispatchQueues off: every persistent queue message is
// written and synced before its producer hears back, whether or not its
// consumer has it already. (A placeholder in the shared file would not
// do: ActiveMQ's schema validation takes a boolean attribute only.)
func storingEvery(xml string) string {
	return strings.Replace(xml, "<kahaDB ", `<kahaDB concurrentStoreAndDispatchQueues="false" `, 1)
}

// errNoMQTT is a Wharf that refuses the MQTT connector.
var errNoMQTT = errors.New("wharf: n/a (no MQTT listener)")

// startWharf runs `wharf run` with the shared activemq.xml in dir. With
// withMQTT it keeps the MQTT connector and returns errNoMQTT when Wharf
// refuses it (a build without an MQTT listener).
func startWharf(ctx context.Context, bin, confXML, dir string, withMQTT bool) (*broker, error) {
	return startWharfStoring(ctx, bin, confXML, dir, withMQTT, false)
}

// startWharfStoring is startWharf with concurrentStoreAndDispatchQueues
// off when storeEvery (storingEvery).
func startWharfStoring(ctx context.Context, bin, confXML, dir string, withMQTT, storeEvery bool) (*broker, error) {
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, err
	}
	xml := confXML
	if !withMQTT {
		xml = withoutMQTT(xml)
	}
	if storeEvery {
		xml = storingEvery(xml)
	}
	conf := filepath.Join(dir, "activemq.xml")
	if err := os.WriteFile(conf, []byte(xml), 0o644); err != nil {
		return nil, err
	}
	bp, err := newBrokerPorts()
	if err != nil {
		return nil, err
	}
	args := []string{"run", "--config", conf, "--log-level", "warn", "--http=false"}
	for _, p := range bp.props(filepath.Join(dir, "data")) {
		args = append(args, "-D"+p)
	}
	logPath := filepath.Join(dir, "wharf.log")
	p, err := startProc(exec.Command(bin, args...), logPath)
	if err != nil {
		return nil, err
	}
	addrs := []string{addr(bp.openwire), addr(bp.nio), addr(bp.stomp), addr(bp.stompNIO), addr(bp.amqp)}
	if withMQTT {
		addrs = append(addrs, addr(bp.mqtt), addr(bp.mqttNIO))
	}
	if err := waitListening(ctx, p, logPath, addrs...); err != nil {
		p.stop()
		if withMQTT && errors.Is(err, errExited) && strings.Contains(tail(logPath, 5), `"mqtt"`) {
			return nil, errNoMQTT
		}
		return nil, fmt.Errorf("wharf: %w", err)
	}
	urls := bp.urls(withMQTT)
	urls[connAMQP] = "amqp://" + addr(bp.amqp)
	return &broker{name: nameWharf, urls: urls, pid: p.cmd.Process.Pid, exited: p.exited, stop: p.stop, log: logPath}, nil
}

// startActiveMQ runs Debian's ActiveMQ with the shared activemq.xml and
// log4j.properties, ACTIVEMQ_BASE dir, as internal/activemq starts it.
func startActiveMQ(ctx context.Context, confXML, log4j, dir string) (*broker, error) {
	for _, sub := range []string{"conf", "data", "tmp", "lib"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "conf", "activemq.xml"), []byte(withoutConnectors(confXML, "amqp")), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "conf", "log4j.properties"), []byte(log4j), 0o644); err != nil {
		return nil, err
	}
	// ActiveMQ's MQTT transport (activemq-mqtt.jar, in Debian's lib/)
	// decodes with the FuseSource MQTT codec, which Debian ships in
	// libmqtt-client-java and leaves off the broker's classpath;
	// $ACTIVEMQ_BASE/lib is on it.
	for _, jar := range mqttJars {
		if err := os.Symlink(filepath.Join("/usr/share/java", jar), filepath.Join(dir, "lib", jar)); err != nil {
			return nil, err
		}
	}
	bp, err := newBrokerPorts()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "activemq.log")
	p, err := startProc(activemq.Command(dir, bp.props(filepath.Join(dir, "data"))...), logPath)
	if err != nil {
		return nil, err
	}
	if err := waitListening(ctx, p, logPath, addr(bp.openwire), addr(bp.nio), addr(bp.stomp), addr(bp.mqtt), addr(bp.stompNIO), addr(bp.mqttNIO)); err != nil {
		p.stop()
		return nil, fmt.Errorf("activemq: %w", err)
	}
	return &broker{name: nameActiveMQ, urls: bp.urls(true), pid: p.cmd.Process.Pid, exited: p.exited, stop: p.stop, log: logPath}, nil
}

// mqttJars are the jars of libmqtt-client-java that ActiveMQ's MQTT
// transport needs.
var mqttJars = []string{"mqtt-client.jar", "hawtdispatch.jar", "hawtdispatch-transport.jar"}

// startMosquitto runs Mosquitto with its configuration in dir.
func startMosquitto(ctx context.Context, dir string) (*broker, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// Mosquitto's default keeps at most 1000 QoS 1 and 2 messages queued
	// per subscriber beyond those in flight and drops the rest; unbounded
	// queues keep at-least-once, as ActiveMQ's flow control and Wharf's
	// do. Nagle stays on, as in Mosquitto's default.
	b, err := mosquitto.Start(ctx, dir, "max_queued_messages 0")
	if err != nil {
		return nil, err
	}
	return &broker{name: nameMosquitto, urls: map[string]string{connMQTT: "mqtt://" + b.Addr, connMQTTNIO: "mqtt://" + b.Addr}, pid: b.PID, exited: b.Exited(), stop: b.Stop, log: b.Log}, nil
}
