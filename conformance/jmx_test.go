package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"wharf/cmd/wharf/wiring"
	"wharf/engine/brokertest"
	"wharf/protocols/http/jolokia"
)

// jmxRead is one line of conformance/activemq/jmx/JmxRead's output, or
// the same read made through Wharf's Jolokia API.
type jmxRead struct {
	MBean     string `json:"mbean"`
	Attribute string `json:"attribute"`
	Type      string `json:"type"`
	Value     any    `json:"value"`
	ErrorType string `json:"error_type"`
}

// jmxSameStore names the two brokers' stores alike: the
// PersistenceAdapter bean's instanceName holds each one's own directory.
func jmxSameStore(name string) string {
	return jmxStoreDir.ReplaceAllString(name, "instanceName=KahaDBPersistenceAdapter[DIR]")
}

var jmxStoreDir = regexp.MustCompile(`instanceName=KahaDBPersistenceAdapter\[[^\]]*\]`)

// jmxStoreDifferences are the known differences of the PersistenceAdapter
// bean.
var jmxStoreDifferences = map[string]string{
	"Name": "each store's own directory",
	"Size": "the bytes of each store's files: ActiveMQ's index is a B-tree page file, Wharf's its own",
}

// jmxKnownDifferences are the attributes whose values differ between
// ActiveMQ and Wharf for the same traffic, and why. Their names and types
// are still compared.
var jmxKnownDifferences = map[string]string{
	"BrokerVersion":        "ActiveMQ says 5.17.x, Wharf its own version",
	"MemoryUsageByteCount": "ActiveMQ counts its estimate of the OpenWire message size, Wharf the engine message's",
	"MemoryLimit":          "ActiveMQ's default is 70% of the JVM heap, Wharf's the configured or 1 GiB default",
	"StoreLimit":           "ActiveMQ's default is bounded by the free disk space",
	"TempLimit":            "ActiveMQ's default is bounded by the free disk space",
	"Topics":               "ActiveMQ lists the advisory topics its connections created; Wharf creates them on first use",
	"TotalEnqueueCount":    "ActiveMQ counts its advisory messages too",
	"TotalConsumerCount":   "ActiveMQ counts its own advisory consumers",
	"AverageMessageSize":   "ActiveMQ counts its estimate of the OpenWire message size (and, on the broker, its advisory messages), Wharf the engine message's",
	"MaxMessageSize":       "ActiveMQ counts its estimate of the OpenWire message size, Wharf the engine message's",
	"MinMessageSize":       "ActiveMQ counts its estimate of the OpenWire message size, Wharf the engine message's",
	"AverageEnqueueTime":   "milliseconds between a send and its dispatch: timing, not traffic",
	"MaxEnqueueTime":       "milliseconds between a send and its dispatch: timing, not traffic",
	"MinEnqueueTime":       "milliseconds between a send and its dispatch: timing, not traffic",
}

// TestConformanceJMXDifferential makes the same traffic on Debian's
// ActiveMQ 5.17 (read over its JMX connector by JmxRead, run.sh) and on
// Wharf (read through the Jolokia handler), then compares every read of
// activemq/jmx/reads.txt: the same MBeans and attributes exist, with the
// same declared types and, but for jmxKnownDifferences, the same values.
func TestConformanceJMXDifferential(t *testing.T) {
	skipWithoutActiveMQ(t)
	if _, err := exec.LookPath("javac"); err != nil {
		t.Skip("javac not found (apt-get install -y default-jdk-headless)")
	}
	if testing.Short() {
		t.Skip("starts ActiveMQ")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "activemq/jmx/run.sh")
	// Ports the kernel just handed out rather than run.sh's fixed
	// defaults, which another ActiveMQ on the machine (a concurrent test
	// run) may hold.
	ports := freeLoopbackPorts(t, 3)
	cmd.Env = append(os.Environ(), "STOMP_PORT="+ports[0], "JMX_PORT="+ports[1], "JMX_RMI_PORT="+ports[2])
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("activemq/jmx/run.sh: %v\n%s", err, stderr.String())
	}
	amq := map[string]jmxRead{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r jmxRead
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("JmxRead line %q: %v", sc.Text(), err)
		}
		r.MBean = jmxSameStore(r.MBean)
		amq[r.MBean+" "+r.Attribute] = r
	}
	if len(amq) == 0 {
		t.Fatalf("JmxRead printed nothing; stderr:\n%s", stderr.String())
	}

	// On KahaDB, as ActiveMQ: its store has a PersistenceAdapter bean.
	b := brokertest.Start(t, wiring.Factories(), brokertest.WithKahaDB())
	jmxTraffic(t, b.STOMPAddr())
	connectors, store := wiring.JolokiaServices(b.Config())
	if store == nil {
		t.Fatal("no PersistenceAdapter for the KahaDB store")
	}
	srv := httptest.NewServer(jolokia.New(b.Engine(), jolokia.Options{Prefix: "/", Connectors: connectors, PersistenceAdapter: store}))
	t.Cleanup(srv.Close)
	wharf := wharfReads(t, srv.URL)

	var keys []string
	for k := range amq {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) < 40 {
		t.Fatalf("JmxRead printed %d reads, reads.txt asks for more than 40", len(keys))
	}
	known := func(r jmxRead) string {
		if strings.Contains(r.MBean, "service=PersistenceAdapter") {
			return jmxStoreDifferences[r.Attribute]
		}
		return jmxKnownDifferences[r.Attribute]
	}
	t.Logf("comparing %d reads of ActiveMQ 5.17's JMX with Wharf's Jolokia", len(keys))
	for _, k := range keys {
		a, w := amq[k], wharf[k]
		switch {
		case a.ErrorType != "" || w.ErrorType != "":
			if a.ErrorType != w.ErrorType {
				t.Errorf("%s: ActiveMQ error %q, Wharf error %q (value %v)", k, a.ErrorType, w.ErrorType, w.Value)
			}
		case w.MBean == "":
			t.Errorf("%s: Wharf has no such MBean or attribute (ActiveMQ: %v)", k, a.Value)
		case a.Type != w.Type:
			t.Errorf("%s: type %s on ActiveMQ, %s on Wharf", k, a.Type, w.Type)
		case known(a) != "":
			if !reflect.DeepEqual(a.Value, w.Value) {
				t.Logf("%s: ActiveMQ %v, Wharf %v (known: %s)", k, a.Value, w.Value, known(a))
			}
		case !reflect.DeepEqual(jmxUnordered(a.Value), jmxUnordered(w.Value)):
			t.Errorf("%s: ActiveMQ %v, Wharf %v", k, a.Value, w.Value)
		}
	}
}

// jmxUnordered sorts a list value (the broker's Queues, Topics ...: sets
// of ObjectNames, which each broker lists in its own map order) so that
// two lists compare as sets; other values are returned as they are.
func jmxUnordered(v any) any {
	l, ok := v.([]any)
	if !ok {
		return v
	}
	l = slices.Clone(l)
	slices.SortFunc(l, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return l
}

// jmxTraffic is run.sh's traffic, over STOMP: 3 persistent messages to
// queue jmx.orders, the one tagged x consumed with auto ack, 1 to topic
// jmx.news, and the durable subscription
// jmx-client:sub on jmx.news, left inactive, then 1 more to jmx.news.
func jmxTraffic(t *testing.T, addr string) {
	t.Helper()
	// session sends frames, the last a DISCONNECT with a receipt, and
	// waits for the receipt; with awaitMessage it first waits for a
	// MESSAGE before the DISCONNECT (as run.sh does: a dispatch must not
	// be overtaken).
	session := func(awaitMessage bool, frames ...string) {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		rd := bufio.NewReader(c)
		readUntil := func(want string) {
			got, err := rd.ReadString(0)
			for err == nil && !strings.Contains(got, want) {
				got, err = rd.ReadString(0)
			}
			if err != nil {
				t.Fatalf("STOMP session waiting for %q: %v (last frame %q)", want, err, got)
			}
		}
		for i, f := range frames {
			if i == len(frames)-1 && awaitMessage {
				readUntil("MESSAGE\n")
			}
			if _, err := io.WriteString(c, f+"\x00"); err != nil {
				t.Fatal(err)
			}
		}
		readUntil("receipt-id:done")
	}
	session(false, "CONNECT\naccept-version:1.2\nhost:localhost\n\n",
		"SEND\ndestination:/queue/jmx.orders\npersistent:true\n\none",
		"SEND\ndestination:/queue/jmx.orders\npersistent:true\ntag:x\n\ntwo",
		"SEND\ndestination:/queue/jmx.orders\npersistent:true\n\nthree",
		"SEND\ndestination:/topic/jmx.news\npersistent:true\n\nnews",
		"DISCONNECT\nreceipt:done\n\n")
	session(true, "CONNECT\naccept-version:1.2\nhost:localhost\n\n",
		"SUBSCRIBE\nid:1\ndestination:/queue/jmx.orders\nack:auto\nselector:tag = 'x'\n\n",
		"DISCONNECT\nreceipt:done\n\n")
	session(false, "CONNECT\naccept-version:1.2\nhost:localhost\nclient-id:jmx-client\n\n",
		"SUBSCRIBE\nid:1\ndestination:/topic/jmx.news\nactivemq.subscriptionName:sub\n\n",
		"DISCONNECT\nreceipt:done\n\n")
	session(false, "CONNECT\naccept-version:1.2\nhost:localhost\n\n",
		"SEND\ndestination:/topic/jmx.news\npersistent:true\n\nmore news",
		"DISCONNECT\nreceipt:done\n\n")
	jmxPoison(t, addr)
}

// jmxPoison is run.sh's last session: a message sent to queue jmx.poison,
// received with client-individual acks and NACKed, which moves it to
// ActiveMQ.DLQ.
func jmxPoison(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	rd := bufio.NewReader(c)
	io.WriteString(c, "CONNECT\naccept-version:1.2\nhost:localhost\n\n\x00"+
		"SEND\ndestination:/queue/jmx.poison\npersistent:true\nreceipt:sent\n\npoison\x00"+
		"SUBSCRIBE\nid:1\ndestination:/queue/jmx.poison\nack:client-individual\n\n\x00")
	ack := ""
	for ack == "" {
		f, err := rd.ReadString(0)
		if err != nil {
			t.Fatalf("STOMP session waiting for the poison MESSAGE: %v", err)
		}
		if strings.Contains(f, "MESSAGE\n") {
			for _, line := range strings.Split(f, "\n") {
				if v, ok := strings.CutPrefix(line, "ack:"); ok {
					ack = v
				}
			}
			if ack == "" {
				t.Fatalf("MESSAGE without an ack header: %q", f)
			}
		}
	}
	io.WriteString(c, "NACK\nid:"+ack+"\n\n\x00DISCONNECT\nreceipt:done\n\n\x00")
	for {
		f, err := rd.ReadString(0)
		if err != nil {
			t.Fatalf("STOMP session waiting for the DISCONNECT receipt: %v", err)
		}
		if strings.Contains(f, "receipt-id:done") {
			return
		}
	}
}

// wharfReads makes the reads of activemq/jmx/reads.txt through the
// Jolokia API at url, keyed as JmxRead's output is; the declared types
// come from a list request.
func wharfReads(t *testing.T, url string) map[string]jmxRead {
	t.Helper()
	f, err := os.ReadFile("activemq/jmx/reads.txt")
	if err != nil {
		t.Fatal(err)
	}
	return wharfReadsOf(t, url, string(f))
}

// wharfReadsOf makes the reads of reads (reads.txt's format) through
// Wharf's Jolokia API at url.
func wharfReadsOf(t *testing.T, url, reads string) map[string]jmxRead {
	t.Helper()
	post := func(req any) map[string]any {
		body, _ := json.Marshal(req)
		resp, err := http.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	types := map[string]string{} // "<canonical name> <attribute>" -> type
	list := post(map[string]any{"type": "list"})["value"].(map[string]any)
	for domain, beans := range list {
		for props, info := range beans.(map[string]any) {
			attrs, _ := info.(map[string]any)["attr"].(map[string]any)
			for name, a := range attrs {
				types[domain+":"+props+" "+name] = a.(map[string]any)["type"].(string)
			}
		}
	}
	out := map[string]jmxRead{}
	for _, line := range strings.Split(reads, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, attrs, _ := strings.Cut(line, " ")
		list := strings.Split(strings.TrimSpace(attrs), ",")
		r := post(map[string]any{"type": "read", "mbean": name, "attribute": list})
		if status := r["status"].(float64); status != 200 {
			for _, a := range list {
				out[name+" "+a] = jmxRead{MBean: name, Attribute: a, ErrorType: fmt.Sprint(r["error_type"])}
			}
			continue
		}
		byBean := map[string]any{}
		if strings.ContainsAny(name, "*?") {
			byBean = r["value"].(map[string]any)
		} else {
			byBean[r["request"].(map[string]any)["mbean"].(string)] = r["value"]
		}
		for bean, vals := range byBean {
			for a, v := range vals.(map[string]any) {
				key := jmxSameStore(bean)
				out[key+" "+a] = jmxRead{MBean: key, Attribute: a, Type: types[bean+" "+a], Value: v}
			}
		}
	}
	return out
}

// freeLoopbackPorts returns n distinct loopback TCP ports that were free a
// moment ago: each is bound on port 0 and released, all at once so the
// kernel hands out different ones.
func freeLoopbackPorts(t *testing.T, n int) []string {
	t.Helper()
	var ports []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return ports
}
