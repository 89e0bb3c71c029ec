package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"wharf/bench"
)

// rabbitMQServer is Debian's rabbitmq-server start script (without the
// wrapper that switches to the rabbitmq user), as cmd/wharf's
// TestWharfConformRabbitMQ runs it.
const rabbitMQServer = "/usr/lib/rabbitmq/bin/rabbitmq-server"

// rabbitMQCtl is its rabbitmqctl, next to it.
const rabbitMQCtl = "/usr/lib/rabbitmq/bin/rabbitmqctl"

// rabbitMQNode is the node name, unique by its AMQP port.
func rabbitMQNode(p rabbitMQPorts) string { return "compare" + strconv.Itoa(p.amqp091) + "@localhost" }

// rabbitMQPlugins are the plugins of the private node: STOMP, MQTT and
// AMQP 1.0 next to its own AMQP 0-9-1.
const rabbitMQPlugins = "[rabbitmq_stomp,rabbitmq_mqtt,rabbitmq_amqp1_0].\n"

// rabbitMQAttempts bounds the starts of a node whose ports were taken.
const rabbitMQAttempts = 3

// rabbitMQPorts are the ports of one RabbitMQ node: its listeners, its
// Erlang distribution port and the port of the epmd it starts.
type rabbitMQPorts struct{ amqp091, stomp, mqtt, dist, epmd int }

// rabbitMQConf is the node's rabbitmq.conf: every listener on loopback at
// its port. The AMQP 1.0 plugin listens on the AMQP 0-9-1 port (it tells
// the two apart by the protocol header). guest may log in from loopback,
// and is the default user of STOMP, MQTT and AMQP 1.0's ANONYMOUS.
func rabbitMQConf(p rabbitMQPorts, defs string) string {
	return fmt.Sprintf(`listeners.tcp.default = 127.0.0.1:%d
stomp.listeners.tcp.1 = 127.0.0.1:%d
mqtt.listeners.tcp.1 = 127.0.0.1:%d
mqtt.allow_anonymous = true
load_definitions = %s
`, p.amqp091, p.stomp, p.mqtt, defs)
}

// rabbitMQDefinitions are the node's users, virtual hosts and
// permissions, loaded at boot (which then seeds no default user): guest
// (password guest) on "/" and on "127.0.0.1". RabbitMQ's STOMP takes the
// CONNECT frame's host header as the virtual host, and wharf bench sends
// the URL's host there, as a STOMP 1.2 client does.
func rabbitMQDefinitions(salt [4]byte) string {
	h := sha256.Sum256(append(salt[:], "guest"...))
	hash := base64.StdEncoding.EncodeToString(append(salt[:], h[:]...))
	perm := func(vhost string) string {
		return fmt.Sprintf(`{"user": "guest", "vhost": %q, "configure": ".*", "write": ".*", "read": ".*"}`, vhost)
	}
	return fmt.Sprintf(`{
  "users": [{"name": "guest", "password_hash": %q, "hashing_algorithm": "rabbit_password_hashing_sha256", "tags": ["administrator"]}],
  "vhosts": [{"name": "/"}, {"name": "127.0.0.1"}],
  "permissions": [%s, %s]
}
`, hash, perm("/"), perm("127.0.0.1"))
}

// rabbitMQEnv is the environment of a private node whose files are under
// base: its own HOME (the Erlang cookie), mnesia, log, plugins file,
// config, pid file, node name, distribution and epmd ports.
// RABBITMQ_ALLOW_INPUT makes the script exec the Erlang VM instead of
// waiting for it in a shell script, so that the process started is the broker
// (its RSS and CPU are the broker's, and SIGTERM stops it).
func rabbitMQEnv(base string, p rabbitMQPorts) []string {
	plugins, _ := filepath.Glob("/usr/lib/rabbitmq/lib/rabbitmq_server-*/plugins")
	return append(os.Environ(),
		"HOME="+filepath.Join(base, "home"),
		"RABBITMQ_MNESIA_BASE="+filepath.Join(base, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(base, "log"),
		"RABBITMQ_NODENAME="+rabbitMQNode(p),
		"RABBITMQ_DIST_PORT="+strconv.Itoa(p.dist),
		"ERL_EPMD_PORT="+strconv.Itoa(p.epmd),
		"RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(base, "enabled_plugins"),
		"RABBITMQ_CONFIG_FILE="+filepath.Join(base, "rabbitmq"),
		"RABBITMQ_PID_FILE="+filepath.Join(base, "pid"),
		// A node that fails to boot writes a crash dump: into base, not
		// into the working directory (the source tree).
		"ERL_CRASH_DUMP="+filepath.Join(base, "erl_crash.dump"),
		"RABBITMQ_ALLOW_INPUT=1",
		// ... without the Erlang shell that RABBITMQ_ALLOW_INPUT
		// otherwise starts, which would end the node at the end of its
		// standard input (/dev/null).
		"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-noinput",
		"RABBITMQ_PLUGINS_DIR="+strings.Join(append([]string{"/usr/lib/rabbitmq/plugins"}, plugins...), ":"))
}

// startRabbitMQ starts a private RabbitMQ node in dir, again on new ports
// when the node exits during start-up. Its ports are picked free and
// handed over, as for every broker here, so another process can take one
// first; the node then fails in one of several ways (its distribution port
// check, {badmatch,{error,address}} when the check's own epmd query fails
// too, or nodistribution from net_kernel), so any exit during start-up is
// retried, up to rabbitMQAttempts times.
func startRabbitMQ(ctx context.Context, dir string) (*broker, error) {
	return retryStart(ctx, dir, startRabbitMQOnce)
}

// retryStart calls once with dir/try1, dir/try2, ... until it returns
// anything but errExited, or rabbitMQAttempts times.
func retryStart(ctx context.Context, dir string, once func(ctx context.Context, base string) (*broker, error)) (*broker, error) {
	var err error
	for attempt := 1; attempt <= rabbitMQAttempts; attempt++ {
		var b *broker
		b, err = once(ctx, filepath.Join(dir, "try"+strconv.Itoa(attempt)))
		if err == nil || !errors.Is(err, errExited) || ctx.Err() != nil {
			return b, err
		}
	}
	return nil, err
}

func startRabbitMQOnce(ctx context.Context, base string) (*broker, error) {
	for _, d := range []string{"mnesia", "log", "home"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			return nil, err
		}
	}
	ps, err := strictPorts(5)
	if err != nil {
		return nil, err
	}
	p := rabbitMQPorts{amqp091: ps[0], stomp: ps[1], mqtt: ps[2], dist: ps[3], epmd: ps[4]}
	if err := os.WriteFile(filepath.Join(base, "enabled_plugins"), []byte(rabbitMQPlugins), 0o644); err != nil {
		return nil, err
	}
	var salt [4]byte
	rand.Read(salt[:])
	defs := filepath.Join(base, "definitions.json")
	if err := os.WriteFile(defs, []byte(rabbitMQDefinitions(salt)), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(base, "rabbitmq.conf"), []byte(rabbitMQConf(p, defs)), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(rabbitMQServer)
	env := rabbitMQEnv(base, p)
	node := rabbitMQNode(p)
	cmd.Env = env
	cmd.Dir = base
	logPath := filepath.Join(base, "server.out")
	pr, err := startProc(cmd, logPath)
	if err != nil {
		return nil, err
	}
	stop := func() error {
		err := pr.stop()
		// The node started an epmd of its own on p.epmd, which
		// daemonizes and outlives it.
		kill := exec.Command("epmd", "-kill")
		kill.Env = append(os.Environ(), "ERL_EPMD_PORT="+strconv.Itoa(p.epmd))
		kill.Run()
		return err
	}
	if err := waitListening(ctx, pr, logPath, addr(p.amqp091), addr(p.stomp), addr(p.mqtt)); err != nil {
		stop()
		return nil, fmt.Errorf("rabbitmq: %w", err)
	}
	return &broker{
		name: nameRabbitMQ, pid: pr.cmd.Process.Pid, exited: pr.exited, stop: stop, log: logPath, epmd: p.epmd,
		ctl: func(ctx context.Context, args ...string) (string, error) {
			ctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			c := exec.CommandContext(ctx, rabbitMQCtl, append([]string{"-n", node, "-q"}, args...)...)
			c.Env = env
			out, err := c.CombinedOutput()
			return string(out), err
		},
		urls: map[string]string{
			connSTOMP: "stomp://" + addr(p.stomp), connSTOMPNIO: "stomp://" + addr(p.stomp),
			connMQTT: "mqtt://" + addr(p.mqtt), connMQTTNIO: "mqtt://" + addr(p.mqtt),
			connAMQP: "amqp://" + addr(p.amqp091),
		},
	}, nil
}

// strictPorts picks n free ports as ports does, but binding all
// addresses without SO_REUSEADDR, which Go sets on every listener:
// RabbitMQ's check of its distribution port listens without it, and so
// fails on a port that a closed connection still holds in TIME_WAIT (the
// idle connections runs leave 10,000 of them for a minute), which a bind
// with SO_REUSEADDR is given.
func strictPorts(n int) ([]int, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 0)
		})
		return errors.Join(err, serr)
	}}
	return pickPorts(n, lc, "tcp4", "0.0.0.0:0")
}

// rabbitMQInstalled reports whether Debian's rabbitmq-server is here.
func rabbitMQInstalled() bool {
	_, err := os.Stat(rabbitMQServer)
	return err == nil
}

// rabbitMQVersion is the installed package's version, empty without it.
func rabbitMQVersion(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f", "${Version}", "rabbitmq-server").Output()
	if err != nil {
		return ""
	}
	return "RabbitMQ " + strings.TrimSpace(string(out))
}

// rabbitMQTopics numbers the MQTT topics of the runs against RabbitMQ.
var rabbitMQTopics atomic.Int64

// brokerSettings adapts a run's configuration to the broker it runs
// against. RabbitMQ names AMQP 1.0 destinations its own way; and its MQTT
// plugin maps a topic's "/" to the routing key's "." and back, so that a
// subscription to wharf bench's default topic names (wharf.bench.topic.N)
// gets nothing published to them: its runs get topics of "/" levels.
func brokerSettings(name string, c *bench.Config) {
	if name != nameRabbitMQ {
		return
	}
	switch {
	case strings.HasPrefix(c.URL, "amqp"):
		c.AMQPAddresses = bench.AMQPRabbitMQ
	case strings.HasPrefix(c.URL, "mqtt") && c.Destination == "":
		c.Destination = fmt.Sprintf("wharf/bench/%d/%d", os.Getpid(), rabbitMQTopics.Add(1))
	}
}
