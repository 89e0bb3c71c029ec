package cluster_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"wharf/internal/activemq"
	"wharf/protocols/openwire/client"
)

// amqMulticastXML is an ActiveMQ 5.17 broker advertising its OpenWire
// connector on multicast://default?group=%[2]s and discovering there, on
// address %[1]s (seed 001's multicast example).
const amqMulticastXML = `<beans
  xmlns="http://www.springframework.org/schema/beans"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="http://www.springframework.org/schema/beans http://www.springframework.org/schema/beans/spring-beans.xsd
  http://activemq.apache.org/schema/core http://activemq.apache.org/schema/core/activemq-core.xsd">
  <broker xmlns="http://activemq.apache.org/schema/core" brokerName="amq" useJmx="false" persistent="false">
    <networkConnectors>
      <networkConnector uri="multicast://default?group=%[2]s"/>
    </networkConnectors>
    <transportConnectors>
      <transportConnector name="openwire" uri="tcp://%[1]s:61616" discoveryUri="multicast://default?group=%[2]s"/>
    </transportConnectors>
  </broker>
</beans>
`

// amqNS is an ActiveMQ process in a network namespace, with its log.
type amqNS struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	lines  []string
	exited chan struct{}
}

func (a *amqNS) waitLine(t *testing.T, re *regexp.Regexp) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		a.mu.Lock()
		for _, l := range a.lines {
			if re.MatchString(l) {
				a.mu.Unlock()
				return
			}
		}
		a.mu.Unlock()
		select {
		case <-a.exited:
			t.Fatalf("ActiveMQ exited before logging %q; log:\n%s", re, a.tail())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("ActiveMQ did not log %q; log:\n%s", re, a.tail())
}

func (a *amqNS) tail() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.lines
	if len(l) > 40 {
		l = l[len(l)-40:]
	}
	return strings.Join(l, "\n")
}

// startActiveMQIn starts Debian's ActiveMQ 5.17 in namespace ns with xml
// and stops it at the end of the test.
func startActiveMQIn(t *testing.T, ns, xml string) *amqNS {
	t.Helper()
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("java not found (apt-get install activemq)")
	}
	if _, err := os.Stat(filepath.Join(activemq.Home, "bin", "activemq.jar")); err != nil {
		t.Skipf("ActiveMQ 5.17 not installed in %s (apt-get install activemq)", activemq.Home)
	}
	base := t.TempDir()
	conf := filepath.Join(base, "conf")
	for _, d := range []string{conf, filepath.Join(base, "data"), filepath.Join(base, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(conf, "activemq.xml"), []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	l4j, err := os.ReadFile(filepath.Join("..", "conformance", "activemq", "log4j.properties"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conf, "log4j.properties"), l4j, 0o644); err != nil {
		t.Fatal(err)
	}
	j := activemq.Command(base, "java.net.preferIPv4Stack=true")
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, j.Path}, j.Args[1:]...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	a := &amqNS{cmd: cmd, exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			a.mu.Lock()
			a.lines = append(a.lines, sc.Text())
			a.mu.Unlock()
		}
		cmd.Wait()
		close(a.exited)
	}()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-a.exited:
		case <-time.After(30 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-a.exited
		}
	})
	return a
}

// An ActiveMQ 5.17 broker and a Wharf broker, each on its own host,
// advertise on the same multicast group and discover each other: each
// runs a bridge to the other (so each reads the other's datagrams), and
// queue messages flow both ways.
func TestClusterMulticastDiscoveryActiveMQ(t *testing.T) {
	lab := newMcastLab(t)
	group := "g" + lab.id
	ns, ip := lab.host(1)
	amq := startActiveMQIn(t, ns, fmt.Sprintf(amqMulticastXML, ip, group))
	amq.waitLine(t, regexp.MustCompile(`Apache ActiveMQ \S+ \(amq, .*\) started`))
	w := lab.node("W", 2, group, "")
	a := &node{t: t, name: "amq", addr: ip + ":61616"}

	// Wharf read ActiveMQ's advertisement and bridged to it...
	w.waitLog(`"msg":"network bridge started".*"remote_addr":"` + regexp.QuoteMeta(a.addr) + `"`)
	// ...and ActiveMQ read Wharf's.
	amq.waitLine(t, regexp.MustCompile(`Network connection between vm://amq#\d+ and tcp://[^ ]*`+regexp.QuoteMeta(w.addr)+`[^ ]* \(W\) has been established`))

	ka := a.consumer("queue://MCA.Q", client.ConsumerOptions{})
	w.waitDemand("queue://MCA.Q", 1)
	w.send("queue://MCA.Q", "w", 5, true)
	if got := receive(t, ka, 5); !slices.Equal(got, seq("w", 5)) {
		t.Fatalf("ActiveMQ's consumer received %v", got)
	}
	kw := w.consumer("queue://MCW.Q", client.ConsumerOptions{})
	a.send("queue://MCW.Q", "a", 5, true)
	if got := receive(t, kw, 5); !slices.Equal(got, seq("a", 5)) {
		t.Fatalf("Wharf's consumer received %v", got)
	}
}
