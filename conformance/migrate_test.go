package conformance

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-stomp/stomp/v3"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// Migrating from ActiveMQ: its own shipped activemq.xml, and the KahaDB
// layout an activemq.xml can ask for (issue 13, items 7 and 8).

// stockActiveMQXML is the shape of the activemq.xml ActiveMQ 5.17 ships
// in conf/ (every connector on 0.0.0.0, no authentication), with the
// credentials.properties it loads next to it.
const stockActiveMQXML = "../engine/config/testdata/activemq-stock-shape.xml"

// stockConf copies the stock activemq.xml, its credentials.properties,
// and the jetty.xml and jetty-realm.properties it imports into a conf
// directory of a new ActiveMQ base (as bin/activemq lays it out), every
// connector's port rewritten to 0, and returns the base.
func stockConf(t *testing.T) (base, file string) {
	t.Helper()
	base = t.TempDir()
	conf := filepath.Join(base, "conf")
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.FromSlash(stockActiveMQXML))
	if err != nil {
		t.Fatal(err)
	}
	// Port 0: a test never listens on a fixed port on every interface.
	ports := regexp.MustCompile(`(://0\.0\.0\.0:)\d+`)
	if n := len(ports.FindAll(b, -1)); n != 5 {
		t.Fatalf("%s: %d connectors on 0.0.0.0, want 5", stockActiveMQXML, n)
	}
	b = ports.ReplaceAll(b, []byte("${1}0"))
	file = filepath.Join(conf, "activemq.xml")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"credentials.properties", "jetty.xml", "jetty-realm.properties"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.FromSlash(stockActiveMQXML)), f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(conf, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return base, file
}

// TestConformanceMigrateStockActiveMQXML: `wharf run` refuses ActiveMQ's
// stock activemq.xml, naming the ways out (authentication, not yet
// configurable, and the trusted-network opt-in), and starts it with
// --trusted-network, warning about every listener not on loopback.
func TestConformanceMigrateStockActiveMQXML(t *testing.T) {
	base, file := stockConf(t)
	defines := []string{"-Dactivemq.base=" + base, "-Dactivemq.conf=" + filepath.Join(base, "conf")}

	ctx, cancel := context.WithTimeout(context.Background(), procStartTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, wharfBinary(t), append([]string{"run", "--http=false", "--config", file}, defines...)...).CombinedOutput()
	if err == nil {
		t.Fatalf("wharf run started the stock activemq.xml without --trusted-network:\n%s", out)
	}
	for _, want := range []string{
		`listening on "0.0.0.0" needs authentication`,
		"add an authentication plugin to <plugins>",
		"wharf run --trusted-network",
		`wharf:trustedNetwork="true"`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("refusal does not say %q:\n%s", want, out)
		}
	}
	if n := strings.Count(string(out), "needs authentication"); n != 5 {
		t.Errorf("%d connectors refused, want all 5:\n%s", n, out)
	}

	w := startWharfArgs(t, append([]string{"--config", file, "--trusted-network"}, defines...)...)
	warns := w.logged("trusted network: listening on non-loopback addresses without authentication; anyone who can reach these ports can use the broker")
	if len(warns) != 1 || warns[0]["level"] != "WARN" {
		t.Fatalf("trusted-network warnings = %v, want one at WARN", warns)
	}
	var names []string
	for _, l := range warns[0]["listeners"].([]any) {
		name, addr, _ := strings.Cut(l.(string), "=")
		if host, port, err := net.SplitHostPort(addr); err != nil || port == "0" || !net.ParseIP(host).IsUnspecified() {
			t.Errorf("listener %s bound at %q, want the unspecified address and a port", name, addr)
		}
		names = append(names, name)
	}
	if want := []string{"openwire", "amqp", "stomp", "mqtt", "ws"}; !slices.Equal(names, want) {
		t.Errorf("warned about %v, want %v", names, want)
	}
	// The broker serves: a persistent STOMP message round trip.
	_, port, _ := net.SplitHostPort(w.stomp)
	c := dial(t, "127.0.0.1:"+port)
	s := sub(t, c, "/queue/migrate.stock", stomp.AckAuto)
	send(t, c, "/queue/migrate.stock", "from the stock activemq.xml")
	recvBody(t, s, "from the stock activemq.xml")
	if err := c.Disconnect(); err != nil {
		t.Error(err)
	}
	w.stop()
	if _, err := os.Stat(filepath.Join(base, "data", "kahadb")); err != nil {
		t.Errorf("the stock <kahaDB directory=\"${activemq.data}/kahadb\"> was not used: %v", err)
	}
}

// TestConformanceMigrateShardsAttribute: <broker wharf:shards="1"> in an
// activemq.xml makes the store one plain KahaDB directory (a journal, no
// shard-* directories) however many cores the machine has, and ActiveMQ
// 5.17, started with the same file, recovers what Wharf left there.
func TestConformanceMigrateShardsAttribute(t *testing.T) {
	tmpl, err := os.ReadFile(filepath.FromSlash("kahadb/activemq.xml"))
	if err != nil {
		t.Fatal(err)
	}
	const broker = `<broker xmlns="http://activemq.apache.org/schema/core"`
	if !strings.Contains(string(tmpl), broker) {
		t.Fatalf("kahadb/activemq.xml has no %q", broker)
	}
	xml := strings.Replace(string(tmpl), broker, broker+` xmlns:wharf="urn:wharf:config" wharf:shards="1"`, 1)
	// startWharfArgs wants a STOMP connector too.
	const ow = `<transportConnector name="openwire" uri="tcp://127.0.0.1:0"/>`
	xml = strings.Replace(xml, ow, ow+`<transportConnector name="stomp" uri="stomp://127.0.0.1:0"/>`, 1)
	dir := filepath.Join(t.TempDir(), "kahadb")
	cfg := filepath.Join(t.TempDir(), "activemq.xml")
	if err := os.WriteFile(cfg, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	w := startWharfArgs(t, "--config", cfg, "-Dwharf.kahadb.dir="+dir, "-Dactivemq.data="+t.TempDir())
	c := dialOW(t, w.openwire, "")
	s := must(c.Session(false))(t)
	q := wire.NewQueue("migrate.shards")
	m := richMessage("one-shard", 1)
	owSend(t, must(s.Producer(q))(t), m)
	c.Close()
	w.stop()

	names := dirNames(t, dir)
	if !slices.Contains(names, "db-1.log") || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "shard-") }) {
		t.Fatalf("store after wharf:shards=\"1\": %v, want a plain KahaDB directory (db-1.log, no shard-*)", names)
	}
	amq := startActiveMQXML(t, []byte(xml), "wharf.kahadb.dir="+dir)
	c = dialOW(t, amq.openwire, "")
	s = must(c.Session(false))(t)
	k := must(s.Consumer(q, client.ConsumerOptions{}))(t)
	checkMessages(t, "ActiveMQ "+q.PhysicalName, receiveN(t, k, "queue", 1), []*wire.Message{m})
	c.Close()
	amq.stop()
}
