// Command scale measures what an idle MQTT connection costs a broker: it
// starts Wharf and Mosquitto in turn, opens N MQTT connections to each
// (CONNECT, CONNACK, then silence), and reports the broker's resident
// memory per connection and the connect rate.
//
//	go build -o bin/wharf ./cmd/wharf
//	go run ./bench/scale -n 10000,100000
//
// Connections come from several loopback source addresses (127.0.0.2,
// 127.0.0.3, ...) so that their number is not bounded by the ephemeral port
// range of one address; the file-descriptor limit is raised for this
// process and the brokers it starts (as root, up to fs.nr_open).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	counts := flag.String("n", "10000", "connection counts to measure, comma-separated")
	wharfBin := flag.String("wharf", "bin/wharf", "the wharf binary (make build)")
	mosq := flag.String("mosquitto", "/usr/sbin/mosquitto", "the mosquitto binary ('' to skip it)")
	parallel := flag.Int("parallel", 64, "connections opened at once")
	perAddr := flag.Int("per-addr", 10000, "connections per loopback source address")
	flag.Parse()
	if err := run(*counts, *wharfBin, *mosq, *parallel, *perAddr); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

type broker struct {
	name  string
	start func(dir string, port int) (*exec.Cmd, error)
}

func run(counts, wharfBin, mosq string, parallel, perAddr int) error {
	var ns []int
	for _, f := range strings.Split(counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return fmt.Errorf("-n %q: not a list of counts", counts)
		}
		ns = append(ns, n)
	}
	maxN := 0
	for _, n := range ns {
		maxN = max(maxN, n)
	}
	limit, err := raiseNoFile(uint64(maxN + 1000))
	if err != nil {
		return err
	}
	if limit < uint64(maxN+100) {
		return fmt.Errorf("the file-descriptor limit is %d, below %d connections: raising the hard limit needs root with CAP_SYS_RESOURCE (each broker holds one descriptor per connection)", limit, maxN)
	}
	brokers := []broker{{"wharf", func(dir string, port int) (*exec.Cmd, error) { return startWharf(wharfBin, dir, port) }}}
	if mosq != "" {
		if _, err := os.Stat(mosq); err == nil {
			brokers = append(brokers, broker{"mosquitto", func(dir string, port int) (*exec.Cmd, error) { return startMosquitto(mosq, dir, port) }})
		} else {
			fmt.Printf("# mosquitto: %v (apt-get install mosquitto); measuring Wharf only\n", err)
		}
	}
	fmt.Printf("# idle MQTT connections: CONNECT (clean, keep-alive 0) then nothing; RSS from /proc/<pid>/status; fd limit %d\n", limit)
	fmt.Printf("%-10s %8s %12s %12s %12s %10s\n", "broker", "conns", "rss_before", "rss_after", "per_conn", "conn/s")
	for _, n := range ns {
		for _, b := range brokers {
			r, err := measure(b, n, parallel, perAddr)
			if err != nil {
				return fmt.Errorf("%s, %d connections: %w", b.name, n, err)
			}
			fmt.Printf("%-10s %8d %10.1fMi %10.1fMi %9.2fKiB %10.0f\n", b.name, r.opened,
				float64(r.before)/(1<<20), float64(r.after)/(1<<20), float64(r.after-r.before)/float64(r.opened)/1024, r.rate)
		}
	}
	return nil
}

// addrsUsed counts the loopback source addresses measurements have used.
var addrsUsed atomic.Int64

type result struct {
	opened        int
	before, after int64 // bytes
	rate          float64
}

func measure(b broker, n, parallel, perAddr int) (result, error) {
	dir, err := os.MkdirTemp("", "wharf-scale-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	port, err := freePort()
	if err != nil {
		return result{}, err
	}
	cmd, err := b.start(dir, port)
	if err != nil {
		return result{}, err
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := waitListening(addr, 10*time.Second); err != nil {
		return result{}, err
	}
	before, err := settledRSS(cmd.Process.Pid)
	if err != nil {
		return result{}, err
	}
	conns := make([]net.Conn, n)
	var opened atomic.Int64
	var firstErr error
	var errOnce sync.Once
	work := make(chan int)
	var wg sync.WaitGroup
	// Each measurement uses fresh source addresses: the ports of the last
	// one are still in TIME_WAIT.
	base := int(addrsUsed.Load())
	addrsUsed.Add(int64((n + perAddr - 1) / perAddr))
	start := time.Now()
	for w := 0; w < parallel; w++ {
		wg.Go(func() {
			for i := range work {
				c, err := connect(addr, base+i/perAddr, i)
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					continue
				}
				conns[i] = c
				opened.Add(1)
			}
		})
	}
	deadline := time.Now().Add(5 * time.Minute)
	for i := 0; i < n && time.Now().Before(deadline); i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	took := time.Since(start)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	if firstErr != nil && opened.Load() < int64(n) {
		return result{}, fmt.Errorf("%d of %d connections opened; first error: %w", opened.Load(), n, firstErr)
	}
	after, err := settledRSS(cmd.Process.Pid)
	if err != nil {
		return result{}, err
	}
	return result{opened: int(opened.Load()), before: before, after: after, rate: float64(opened.Load()) / took.Seconds()}, nil
}

// connect opens one MQTT 3.1.1 connection from 127.0.0.<2+addrIdx> and
// completes CONNECT/CONNACK.
func connect(addr string, addrIdx, i int) (net.Conn, error) {
	ip := net.IPv4(127, 0, byte(addrIdx/250), byte(2+addrIdx%250))
	d := net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: ip}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	id := "scale-" + strconv.Itoa(i)
	// CONNECT: "MQTT" level 4, clean session, keep-alive 0.
	pkt := []byte{0x10, byte(12 + len(id)), 0, 4, 'M', 'Q', 'T', 'T', 4, 0x02, 0, 0, 0, byte(len(id))}
	pkt = append(pkt, id...)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(pkt); err != nil {
		c.Close()
		return nil, err
	}
	var ack [4]byte
	if _, err := io.ReadFull(c, ack[:]); err != nil {
		c.Close()
		return nil, fmt.Errorf("CONNACK: %w", err)
	}
	if ack[0] != 0x20 || ack[3] != 0 {
		c.Close()
		return nil, fmt.Errorf("CONNACK % x: refused", ack)
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

func startWharf(bin, dir string, port int) (*exec.Cmd, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%w (make build)", err)
	}
	cfg := filepath.Join(dir, "wharf.yaml")
	y := fmt.Sprintf("persistent: false\ndata_directory: %s\ntransport_connectors:\n  - {name: mqtt, uri: \"mqtt://127.0.0.1:%d\"}\n", dir, port)
	if err := os.WriteFile(cfg, []byte(y), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "run", "--config", cfg, "--log-level", "warn", "--http=false")
	cmd.Stderr = os.Stderr
	return cmd, cmd.Start()
}

func startMosquitto(bin, dir string, port int) (*exec.Cmd, error) {
	cfg := filepath.Join(dir, "mosquitto.conf")
	c := fmt.Sprintf("listener %d 127.0.0.1\nallow_anonymous true\nmax_connections -1\npersistence false\nlog_dest none\n", port)
	if err := os.WriteFile(cfg, []byte(c), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-c", cfg)
	cmd.Stderr = os.Stderr
	return cmd, cmd.Start()
}

// settledRSS reads the process's VmRSS once it stops moving (bytes).
func settledRSS(pid int) (int64, error) {
	var last int64 = -1
	for i := 0; i < 50; i++ {
		r, err := rss(pid)
		if err != nil {
			return 0, err
		}
		if r == last {
			return r, nil
		}
		last = r
		time.Sleep(200 * time.Millisecond) // sampling interval of an external process, not synchronisation
	}
	return last, nil
}

func rss(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("no VmRSS in /proc status")
}

func raiseNoFile(want uint64) (uint64, error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, err
	}
	if l.Max < want {
		n := l
		n.Max, n.Cur = want, want
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &n); err == nil {
			return want, nil
		}
	}
	l.Cur = l.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, err
	}
	return l.Cur, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitListening(addr string, within time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("broker not listening on %s: %w", addr, err)
		}
		time.Sleep(50 * time.Millisecond) // polling an external process's port
	}
}
