package conformance

import (
	"bufio"
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Wharf tried as a new user would, with Debian's mosquitto-clients
// (mosquitto_pub, mosquitto_sub), which `make test` installs when it can.

func mosquittoTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not found: apt-get install mosquitto-clients", name)
	}
	return p
}

// mosquittoSub starts mosquitto_sub printing "topic payload" lines and
// returns them as they come; it is ready once its subscription is made
// (-v prints nothing until then, so the caller publishes a marker first).
func mosquittoSub(t *testing.T, addr string, args ...string) <-chan string {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 3*wait)
	cmd := exec.CommandContext(ctx, mosquittoTool(t, "mosquitto_sub"), append([]string{"-h", host, "-p", port, "-v"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return lines
}

func mosquittoPub(t *testing.T, addr string, args ...string) {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	out, err := exec.CommandContext(ctx, mosquittoTool(t, "mosquitto_pub"), append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("mosquitto_pub %v: %v\n%s", args, err, out)
	}
}

func nextLine(t *testing.T, lines <-chan string) string {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatal("mosquitto_sub exited")
		}
		return l
	case <-time.After(wait):
		t.Fatal("mosquitto_sub printed nothing within", wait)
		return ""
	}
}

func TestConformanceMQTTMosquittoClients(t *testing.T) {
	b := mqttBroker(t, nil)
	addr := b.MQTTAddr()
	base := uniq(t)
	// A retained message first: mosquitto_sub prints it as soon as its
	// subscription exists, which tells us it is ready.
	mosquittoPub(t, addr, "-t", base+"/ready", "-m", "r", "-r", "-q", "1")
	for _, qos := range []string{"0", "1", "2"} {
		t.Run("qos "+qos, func(t *testing.T) {
			lines := mosquittoSub(t, addr, "-q", qos, "-t", base+"/ready", "-t", base+"/q"+qos)
			if l := nextLine(t, lines); l != base+"/ready r" {
				t.Fatalf("first line %q, want the retained marker", l)
			}
			mosquittoPub(t, addr, "-q", qos, "-t", base+"/q"+qos, "-m", "hello "+qos)
			if l := nextLine(t, lines); l != base+"/q"+qos+" hello "+qos {
				t.Fatalf("got %q", l)
			}
		})
	}
	t.Run("will", func(t *testing.T) {
		lines := mosquittoSub(t, addr, "-q", "1", "-t", base+"/ready", "-t", base+"/will")
		nextLine(t, lines)
		// A mosquitto_sub killed without DISCONNECT leaves its will.
		host, port, _ := net.SplitHostPort(addr)
		ctx, cancel := context.WithCancel(context.Background())
		dying := exec.CommandContext(ctx, mosquittoTool(t, "mosquitto_sub"), "-h", host, "-p", port,
			"-t", base+"/ready", "-v", "--will-topic", base+"/will", "--will-payload", "gone", "--will-qos", "1")
		out, _ := dying.StdoutPipe()
		if err := dying.Start(); err != nil {
			t.Fatal(err)
		}
		// It prints the retained marker once connected and subscribed.
		if l, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.HasPrefix(l, base+"/ready") {
			t.Fatalf("dying client: %q %v", l, err)
		}
		cancel() // SIGKILL
		dying.Wait()
		if l := nextLine(t, lines); l != base+"/will gone" {
			t.Fatalf("got %q, want the will", l)
		}
	})
	t.Run("retained cleared", func(t *testing.T) {
		mosquittoPub(t, addr, "-t", base+"/ready", "-r", "-n")
		mosquittoPub(t, addr, "-t", base+"/ready2", "-m", "r2", "-r")
		lines := mosquittoSub(t, addr, "-t", base+"/#")
		if l := nextLine(t, lines); l != base+"/ready2 r2" {
			t.Fatalf("after clearing, got %q, want only ready2", l)
		}
	})
}
