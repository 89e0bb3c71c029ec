package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-stomp/stomp/v3"

	"wharf/cmd/wharf/internal/jolokiaclient"
)

// testRealm is the web server's users in the admin tests: admin may run
// operations, viewer may only read.
const testRealm = "admin: secret, admin\nviewer: pw, user\n"

// adminBroker is a `wharf run` whose web server asks for testRealm's
// logins, and the admin commands pointed at it.
type adminBroker struct {
	*runningWharf
	url string
}

func startAdminBroker(t *testing.T) *adminBroker {
	t.Helper()
	w := startRunHTTP(t, "{port: 0, realm: realm.properties}")
	if w.webAddr == "" || w.stompAddr == "" {
		t.Fatalf("log %q: no web server or STOMP address", w.msgs)
	}
	return &adminBroker{runningWharf: w, url: "http://" + w.webAddr}
}

// wharf runs a wharf admin command as admin against b.
func (b *adminBroker) wharf(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runWharf(t, append(args, "--url", b.url, "--user", "admin", "--password", "secret")...)
}

// ok runs a wharf admin command that must succeed, and returns stdout.
func (b *adminBroker) ok(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := b.wharf(t, args...)
	if code != 0 {
		t.Fatalf("wharf %q: exit %d, stderr %q; want 0", args, code, errOut)
	}
	return out
}

// okJSON runs a wharf admin command with --json and decodes its output
// into v.
func (b *adminBroker) okJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out := b.ok(t, append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("wharf %q --json: %v in %q", args, err, out)
	}
}

// stomp connects to b's STOMP connector, with opts.
func (b *adminBroker) stomp(t *testing.T, opts ...func(*stomp.Conn) error) *stomp.Conn {
	t.Helper()
	conn, err := stomp.Dial("tcp", b.stompAddr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Disconnect() })
	return conn
}

// send sends bodies to a queue over STOMP, persistent (a non-persistent
// message is not dead-lettered, as in ActiveMQ), each with a receipt,
// with the header region=eu on those whose body starts with "eu".
func (b *adminBroker) send(t *testing.T, queue string, bodies ...string) {
	t.Helper()
	conn := b.stomp(t)
	for _, body := range bodies {
		region := "us"
		if strings.HasPrefix(body, "eu") {
			region = "eu"
		}
		if err := conn.Send("/queue/"+queue, "text/plain", []byte(body), stomp.SendOpt.Receipt,
			stomp.SendOpt.NoContentLength, stomp.SendOpt.Header("region", region), stomp.SendOpt.Header("persistent", "true")); err != nil {
			t.Fatal(err)
		}
	}
}

// awaitQueueSize waits until the queue's QueueSize is n, asking the
// Jolokia API; the wait is for a change the engine makes after a STOMP
// frame it does not confirm (a NACK).
func (b *adminBroker) awaitQueueSize(t *testing.T, queue string, n int64) {
	t.Helper()
	c := &jolokiaclient.Client{Base: b.url, User: "admin", Password: "secret"}
	bean := "org.apache.activemq:type=Broker,brokerName=localhost,destinationType=Queue,destinationName=" + queue
	deadline := time.Now().Add(10 * time.Second)
	var last map[string]map[string]any
	for time.Now().Before(deadline) {
		var err error
		if last, err = c.ReadAll(context.Background(), bean, "QueueSize"); err != nil {
			t.Fatal(err)
		}
		for _, attrs := range last { // one bean, keyed by its canonical name
			if attrs["QueueSize"] == float64(n) {
				return
			}
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not synchronisation
	}
	t.Fatalf("queue %s: %v, want QueueSize %d", queue, last, n)
}

// row is the fields of the table line of out whose first field is name.
func row(t *testing.T, out, name string) []string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == name {
			return f
		}
	}
	t.Fatalf("no line for %s in\n%s", name, out)
	return nil
}

// TestWharfAdmin runs each admin command against one `wharf run` with
// logins, after sending messages over STOMP.
func TestWharfAdmin(t *testing.T) {
	b := startAdminBroker(t)
	b.send(t, "adm.orders", "eu one", "us two", "eu three")
	b.send(t, "adm.other", "us four")

	t.Run("dstat", func(t *testing.T) {
		out := b.ok(t, "dstat", "queues")
		if h := strings.Split(out, "\n")[0]; !strings.HasPrefix(h, "Name") || !strings.HasSuffix(h, "Enqueue #  Dequeue #  Forward #  Memory %") {
			t.Errorf("dstat header %q: want ActiveMQ's columns", h)
		}
		if got, want := strings.Join(row(t, out, "adm.orders"), " "), "adm.orders 3 0 0 3 0 0 0"; got != want {
			t.Errorf("dstat row %q, want %q", got, want)
		}
		if strings.Contains(out, "ActiveMQ.Advisory") {
			t.Errorf("dstat queues lists topics:\n%s", out)
		}
		var rows []dstatRow
		b.okJSON(t, &rows, "dstat")
		found := map[string]dstatRow{}
		for _, r := range rows {
			found[r.Type+":"+r.Name] = r
		}
		if r := found["Queue:adm.other"]; r.QueueSize != 1 || r.EnqueueCount != 1 {
			t.Errorf("dstat --json adm.other: %+v, want queueSize 1, enqueueCount 1", r)
		}
		if _, ok := found["Topic:ActiveMQ.Advisory.Queue"]; !ok {
			t.Errorf("dstat --json without a type: no advisory topic in %+v", rows)
		}
		// dstat topics: the topics alone, as activemq dstat topics.
		out = b.ok(t, "dstat", "topics")
		if h := strings.Split(out, "\n")[0]; !strings.HasPrefix(h, "Name") {
			t.Errorf("dstat topics header %q", h)
		}
		row(t, out, "ActiveMQ.Advisory.Queue")
		if strings.Contains(out, "adm.orders") || strings.Contains(out, "adm.other") {
			t.Errorf("dstat topics lists queues:\n%s", out)
		}
		rows = nil
		b.okJSON(t, &rows, "dstat", "topics")
		for _, r := range rows {
			if r.Type != "Topic" {
				t.Errorf("dstat topics --json: %+v is not a topic", r)
			}
		}
		if len(rows) == 0 {
			t.Error("dstat topics --json lists no topic")
		}
	})

	t.Run("query", func(t *testing.T) {
		out := b.ok(t, "query", "-QQueue=adm.*", "-xQQueue=adm.other", "--view", "QueueSize,EnqueueCount")
		want := "ObjectName = org.apache.activemq:brokerName=localhost,destinationName=adm.orders,destinationType=Queue,type=Broker\nEnqueueCount = 3\nQueueSize = 3\n"
		if out != want {
			t.Errorf("query output\n%s\nwant\n%s", out, want)
		}
		var beans map[string]map[string]any
		b.okJSON(t, &beans, "query", "-QBroker", "--view", "BrokerName")
		if got := beans["org.apache.activemq:brokerName=localhost,type=Broker"]["BrokerName"]; got != "localhost" {
			t.Errorf("query -QBroker --json: %v, want BrokerName localhost", beans)
		}
		beans = nil
		b.okJSON(t, &beans, "query", "--objname", "destinationType=Queue,destinationName=adm.other", "--view", "QueueSize")
		if len(beans) != 1 || beans["org.apache.activemq:brokerName=localhost,destinationName=adm.other,destinationType=Queue,type=Broker"]["QueueSize"] != 1.0 {
			t.Errorf("query --objname --json: %v, want adm.other's QueueSize 1", beans)
		}
		code, _, errOut := b.wharf(t, "query", "-QQueue=adm.nothing.*")
		if code != 1 || !strings.Contains(errOut, "no MBean") {
			t.Errorf("query matching nothing: exit %d, stderr %q; want 1 and why", code, errOut)
		}
		code, _, errOut = b.wharf(t, "query", "-QFrob=x")
		if code != 2 || !strings.Contains(errOut, `unknown type "Frob"`) {
			t.Errorf("query -QFrob: exit %d, stderr %q; want 2 and why", code, errOut)
		}
	})

	t.Run("browse", func(t *testing.T) {
		out := b.ok(t, "browse", "adm.orders", "--selector", "region = 'eu'")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || !strings.Contains(lines[1], `"eu one"`) || !strings.Contains(lines[2], `"eu three"`) {
			t.Errorf("browse with selector:\n%s\nwant a header and the two eu messages", out)
		}
		var msgs []map[string]any
		b.okJSON(t, &msgs, "browse", "adm.orders", "--max", "2")
		if len(msgs) != 2 || msgs[0]["Text"] != "eu one" || msgs[1]["Text"] != "us two" || msgs[0]["JMSDestination"] != "queue://adm.orders" {
			t.Errorf("browse --max 2 --json: %v, want the first two messages", msgs)
		}
		// A name with characters an ObjectName value cannot hold as
		// they are (ActiveMQ's JMXSupport encoding).
		b.send(t, "adm:odd=1", "us odd")
		msgs = nil
		b.okJSON(t, &msgs, "browse", "adm:odd=1")
		if len(msgs) != 1 || msgs[0]["Text"] != "us odd" {
			t.Errorf("browse adm:odd=1 --json: %v, want its message", msgs)
		}
		code, out, errOut := b.wharf(t, "browse", "adm.missing")
		if code != 1 || out != "" || errOut != "wharf: no queue \"adm.missing\" on broker localhost\n" {
			t.Errorf("browse of an unknown queue: exit %d, stdout %q, stderr %q; want 1 and the queue named", code, out, errOut)
		}
	})

	t.Run("purge", func(t *testing.T) {
		b.send(t, "adm.purge.a", "eu a1", "us a2", "eu a3")
		b.send(t, "adm.purge.b", "us b1")
		if got := row(t, b.ok(t, "purge", "adm.purge.a", "--selector", "region = 'eu'"), "adm.purge.a"); got[1] != "2" {
			t.Errorf("purge with selector: %q, want 2 removed", got)
		}
		code, out, errOut := b.wharf(t, "purge", "adm.purge.*", "adm.purge.none", "--json")
		var rows []map[string]any
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("purge --json: %v in %q", err, out)
		}
		if code != 1 || !strings.Contains(errOut, `no queue "adm.purge.none"`) {
			t.Errorf("purge with an unknown queue: exit %d, stderr %q; want 1 naming it", code, errOut)
		}
		if fmt.Sprint(rows) != "[map[name:adm.purge.a removed:1] map[name:adm.purge.b removed:1]]" {
			t.Errorf("purge adm.purge.*: %v, want a and b purged of 1 each, the unknown queue notwithstanding", rows)
		}
		b.awaitQueueSize(t, "adm.purge.b", 0)
	})

	t.Run("many", func(t *testing.T) {
		// More queues than the API takes requests in one bulk POST (100).
		c := &jolokiaclient.Client{Base: b.url, User: "admin", Password: "secret"}
		for i := range 150 {
			if _, err := c.Exec(context.Background(), "org.apache.activemq:type=Broker,brokerName=localhost", "addQueue", fmt.Sprintf("adm.many.%03d", i)); err != nil {
				t.Fatal(err)
			}
		}
		var rows []dstatRow
		b.okJSON(t, &rows, "dstat", "queues")
		n := 0
		for _, r := range rows {
			if strings.HasPrefix(r.Name, "adm.many.") {
				n++
			}
		}
		var beans map[string]map[string]any
		b.okJSON(t, &beans, "query", "-QQueue=adm.many.*", "--view", "Name")
		if n != 150 || len(beans) != 150 {
			t.Errorf("150 queues: dstat lists %d, query %d", n, len(beans))
		}
	})

	t.Run("connections", func(t *testing.T) {
		b.stomp(t, stomp.ConnOpt.Header("client-id", "adm-client"))
		var rows []connectionRow
		b.okJSON(t, &rows, "connections")
		var mine []connectionRow
		for _, r := range rows {
			if r.ClientID == "adm-client" {
				mine = append(mine, r)
			}
		}
		if len(mine) != 1 || mine[0].Protocol != "stomp" || !strings.HasPrefix(mine[0].RemoteAddress, "tcp://127.0.0.1:") {
			t.Errorf("connections --json: %+v, want adm-client once, over stomp, from 127.0.0.1", rows)
		}
		if r := row(t, b.ok(t, "connections"), "adm-client"); r[len(r)-1] != "stomp" {
			t.Errorf("connections row %q: want the protocol stomp last", r)
		}
	})
}

// nack receives n messages of queue over STOMP and NACKs them, which
// sends them to ActiveMQ.DLQ, and disconnects.
func (b *adminBroker) nack(t *testing.T, queue string, n int) {
	t.Helper()
	conn, err := stomp.Dial("tcp", b.stompAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Disconnect()
	sub, err := conn.Subscribe("/queue/"+queue, stomp.AckClientIndividual)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		m := <-sub.C
		if m.Err != nil {
			t.Fatal(m.Err)
		}
		if err := conn.Nack(m); err != nil {
			t.Fatal(err)
		}
	}
	sub.Unsubscribe()
}

// TestWharfAdminDLQ: messages NACKed over STOMP are in ActiveMQ.DLQ (dlq
// list), dlq replay with a selector sends back the one it matches and
// without one the rest, to the queue they came from, where a consumer
// gets them; dlq purge empties a dead-letter queue.
func TestWharfAdminDLQ(t *testing.T) {
	b := startAdminBroker(t)
	b.send(t, "dlq.orders", "eu one", "us two")
	b.nack(t, "dlq.orders", 2)
	b.awaitQueueSize(t, "ActiveMQ.DLQ", 2)
	b.awaitQueueSize(t, "dlq.orders", 0)

	if got := strings.Join(row(t, b.ok(t, "dlq", "list"), "ActiveMQ.DLQ"), " "); got != "ActiveMQ.DLQ 2" {
		t.Errorf("dlq list: %q, want ActiveMQ.DLQ 2", got)
	}
	var rows []map[string]any
	b.okJSON(t, &rows, "dlq", "replay", "ActiveMQ.DLQ", "--selector", "region = 'eu'")
	if fmt.Sprint(rows) != "[map[name:ActiveMQ.DLQ replayed:1]]" {
		t.Errorf("dlq replay --selector: %v, want 1 replayed", rows)
	}
	if got := row(t, b.ok(t, "dlq", "replay"), "ActiveMQ.DLQ"); got[1] != "1" {
		t.Errorf("dlq replay: %q, want the other 1 replayed", got)
	}
	b.awaitQueueSize(t, "ActiveMQ.DLQ", 0)
	var back []map[string]any
	b.okJSON(t, &back, "browse", "dlq.orders")
	if len(back) != 2 || back[0]["Text"] != "eu one" && back[1]["Text"] != "eu one" {
		t.Errorf("dlq.orders after replay: %v, want both messages back", back)
	}
	code, out, _ := runWharf(t, "consumer", "--broker-url", "stomp://"+b.stompAddr, "--destination", "queue://dlq.orders", "--messageCount", "2")
	if code != 0 || out != "Received 2 messages from queue://dlq.orders\n" {
		t.Errorf("consumer of the replayed queue: exit %d, %q; want both messages", code, out)
	}

	// dlq list names the shared and the individual strategies' queues,
	// by their names, and no other queue.
	c := &jolokiaclient.Client{Base: b.url, User: "admin", Password: "secret"}
	for _, q := range []string{"DLQ.orders", "orders.DLQ", "orders.DLQ.archive"} {
		if _, err := c.Exec(context.Background(), "org.apache.activemq:type=Broker,brokerName=localhost", "addQueue", q); err != nil {
			t.Fatal(err)
		}
	}
	var dlqs []map[string]any
	b.okJSON(t, &dlqs, "dlq", "list", "--broker", "localhost")
	if fmt.Sprint(dlqs) != "[map[name:ActiveMQ.DLQ queueSize:0] map[name:DLQ.orders queueSize:0] map[name:orders.DLQ queueSize:0]]" {
		t.Errorf("dlq list --json: %v, want ActiveMQ.DLQ, DLQ.orders and orders.DLQ", dlqs)
	}

	b.send(t, "dlq.purged", "us five")
	b.nack(t, "dlq.purged", 1)
	b.awaitQueueSize(t, "ActiveMQ.DLQ", 1)
	if got := row(t, b.ok(t, "dlq", "purge"), "ActiveMQ.DLQ"); got[1] != "1" {
		t.Errorf("dlq purge: %q, want 1 removed", got)
	}
	b.awaitQueueSize(t, "ActiveMQ.DLQ", 0)
	// A replay with a selector of many messages: one retryMessage each,
	// several in flight.
	many := make([]string, 150)
	for i := range many {
		many[i] = fmt.Sprintf("eu %d", i)
	}
	b.send(t, "dlq.many", many...)
	b.nack(t, "dlq.many", len(many))
	b.awaitQueueSize(t, "ActiveMQ.DLQ", int64(len(many)))
	if got := row(t, b.ok(t, "dlq", "replay", "--selector", "region = 'eu'"), "ActiveMQ.DLQ"); got[1] != "150" {
		t.Errorf("dlq replay --selector of 150 messages: %q, want all 150 replayed", got)
	}
	b.awaitQueueSize(t, "dlq.many", int64(len(many)))
	b.awaitQueueSize(t, "ActiveMQ.DLQ", 0)
	if code, _, errOut := b.wharf(t, "dlq", "replay", "DLQ.none"); code != 1 || !strings.Contains(errOut, `no queue "DLQ.none"`) {
		t.Errorf("dlq replay of an unknown queue: exit %d, stderr %q; want 1 naming it", code, errOut)
	}
}

// TestWharfAdminExitStatus: a wrong password, no login, a login without
// the admin role for an operation and a broker that is not there are exit
// status 3 with a message that says which; a bad argument is 2.
func TestWharfAdminExitStatus(t *testing.T) {
	b := startAdminBroker(t)
	b.send(t, "adm.queue", "one")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"dstat", "--url", b.url, "--user", "admin", "--password", "wrong"}, 3, `login refused for user "admin": wrong user or password`},
		{[]string{"dstat", "--url", b.url}, 3, "the server asks for a login"},
		{[]string{"purge", "adm.queue", "--url", b.url, "--user", "viewer", "--password", "pw"}, 3, `user "viewer" may not do this (operations need the admin role)`},
		{[]string{"dstat", "--url", "http://127.0.0.1:1"}, 3, "broker API at http://127.0.0.1:1: cannot reach it: dial tcp 127.0.0.1:1"},
		{[]string{"dstat", "--url", b.url, "--user", "admin", "--password", "secret", "--broker", "nope"}, 1, `--broker "nope": ` + b.url + ` shows no such broker (brokers: localhost)`},
		{[]string{"dstat", "frob", "--url", b.url}, 2, `"frob": want queues or topics`},
		{[]string{"browse", "--url", b.url}, 2, "want one queue"},
		{[]string{"dlq", "frob"}, 2, `unknown subcommand "frob"`},
		{[]string{"dstat", "--frob"}, 2, "flag provided but not defined: -frob"},
		{[]string{"producer", "--broker-url", "stomp://127.0.0.1:1", "--messageCount", "1"}, 3, "connection refused"},
	} {
		code, out, errOut := runWharf(t, tc.args...)
		if code != tc.code || out != "" || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("wharf %q: exit %d, stdout %q, stderr %q; want %d and one line with %q", tc.args, code, out, errOut, tc.code, tc.want)
		}
	}
	// WHARF_USER and WHARF_PASSWORD stand for --user and --password.
	cmd := wharfCommand(context.Background(), "dstat", "queues", "--url", b.url)
	cmd.Env = append(cmd.Env, "WHARF_USER=viewer", "WHARF_PASSWORD=pw")
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "adm.queue") {
		t.Errorf("dstat with WHARF_USER/WHARF_PASSWORD: %v, %q", err, out)
	}
}

// TestWharfProducerConsumer: wharf producer sends --messageCount messages
// in transactions, persistent, which dstat counts, and wharf consumer
// receives them all in transactions and then stops at --receiveTimeout.
func TestWharfProducerConsumer(t *testing.T) {
	b := startAdminBroker(t)
	url := "stomp://" + b.stompAddr
	code, out, errOut := runWharf(t, "producer", "--broker-url", url, "--destination", "queue://pc.q", "--messageCount", "20", "--transactionBatchSize", "7", "--messageSize", "64")
	if code != 0 || out != "Sent 20 messages to queue://pc.q\n" {
		t.Fatalf("producer: exit %d, %q, %q", code, out, errOut)
	}
	b.awaitQueueSize(t, "pc.q", 20)
	var msgs []map[string]any
	b.okJSON(t, &msgs, "browse", "pc.q", "--max", "1")
	if len(msgs) != 1 || msgs[0]["BodyLength"] != 64.0 || msgs[0]["JMSDeliveryMode"] != "PERSISTENT" {
		t.Errorf("browse of the producer's messages: %v, want persistent bytes messages of 64 bytes", msgs)
	}
	code, out, errOut = runWharf(t, "consumer", "--broker-url", url, "--destination", "pc.q", "--messageCount", "100", "--transacted", "--transactionBatchSize", "6", "--receiveTimeout", "300ms")
	if code != 0 || out != "Received 20 messages from pc.q\n" {
		t.Fatalf("consumer: exit %d, %q, %q; want all 20 and a stop after the idle timeout", code, out, errOut)
	}
	b.awaitQueueSize(t, "pc.q", 0)
	if code, _, errOut := runWharf(t, "producer", "--destination", "exchange://x"); code != 2 || !strings.Contains(errOut, "want queue://NAME or topic://NAME") {
		t.Errorf("producer --destination exchange://x: exit %d, %q; want 2", code, errOut)
	}
}

// TestWharfAdminHelpExplainsEveryFlag: the --help of each admin and client
// command has a line for every flag it accepts, and accepts every flag its
// --help names.
func TestWharfAdminHelpExplainsEveryFlag(t *testing.T) {
	type shown struct {
		fs   *flag.FlagSet
		help string
	}
	seen := map[string]shown{}
	helpShown = func(name string, fs *flag.FlagSet, help string) { seen[name] = shown{fs, help} }
	defer func() { helpShown = nil }()
	for _, args := range [][]string{{"dstat"}, {"query"}, {"browse"}, {"purge"}, {"dlq", "list"}, {"dlq", "replay"},
		{"dlq", "purge"}, {"connections"}, {"stop"}, {"producer"}, {"consumer"}} {
		var out, errOut bytes.Buffer
		if err := run(append(args, "--help"), &out, &errOut); err != nil {
			t.Fatalf("%q --help: %v", args, err)
		}
	}
	flagLine := regexp.MustCompile(`(?m)^ {2,4}--([a-zA-Z-]+)`)
	for name, s := range seen {
		documented := map[string]bool{}
		for _, m := range flagLine.FindAllStringSubmatch(s.help, -1) {
			documented[m[1]] = true
			if s.fs.Lookup(m[1]) == nil {
				// dlq's help is shared by its subcommands: a flag of
				// one need not be another's.
				if !strings.HasPrefix(name, "dlq ") || m[1] != "selector" && m[1] != "chunk" {
					t.Errorf("wharf %s --help explains --%s, which it does not accept", name, m[1])
				}
			}
		}
		s.fs.VisitAll(func(f *flag.Flag) {
			if !documented[f.Name] {
				t.Errorf("wharf %s --help has no line for --%s", name, f.Name)
			}
		})
	}
	if len(seen) != 11 {
		t.Errorf("--help shown for %d commands, want 11", len(seen))
	}
}
