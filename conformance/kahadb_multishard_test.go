package conformance

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
	"wharf/storage/kahadb"
)

// wharfTwoShards is the YAML of TestConformanceKahaDBMultiShardToActiveMQ:
// two shards (two shard-<i>-of-2 journals), loopback port 0.
const wharfTwoShards = `shards: 2
persistence:
  kahadb:
    directory: %q
transport_connectors:
  - {name: openwire, uri: "tcp://127.0.0.1:0"}
  - {name: stomp, uri: "stomp://127.0.0.1:0"}
`

// TestConformanceKahaDBMultiShardToActiveMQ: a Wharf store of two shards,
// handed to ActiveMQ 5.17 with what `wharf kahadb activemq` writes (links
// in the store and an <mKahaDB> fragment), is recovered whole: every
// pending message of queues in both shards and of a durable subscription.
// The ActiveMQ configuration also carries Wharf's namespaced attributes
// (wharf:shards, wharf:trustedNetwork), which ActiveMQ must accept.
func TestConformanceKahaDBMultiShardToActiveMQ(t *testing.T) {
	skipWithoutActiveMQ(t)
	const clientID = "kdb-multi"
	dir := filepath.Join(t.TempDir(), "kahadb")
	w := startWharfYAML(t, fmt.Sprintf(wharfTwoShards, dir))
	c := dialOW(t, w.openwire, clientID)
	s := must(c.Session(false))(t)
	top := wire.NewTopic("kdb.ms.t")
	d := must(s.Consumer(top, client.ConsumerOptions{DurableName: "sub1"}))(t)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// Eight queues: the hash of their names spreads them over both shards
	// (checked on the plan below).
	sent := map[string][]*wire.Message{}
	for q := range 8 {
		name := fmt.Sprintf("kdb.ms.q%d", q)
		p := must(s.Producer(wire.NewQueue(name)))(t)
		for i := range 3 {
			m := richMessage(fmt.Sprintf("%s-%d", name, i), i)
			owSend(t, p, m)
			sent[name] = append(sent[name], m)
		}
	}
	tp := must(s.Producer(top))(t)
	var tsent []*wire.Message
	for i := range 4 {
		m := richMessage(fmt.Sprintf("t-%d", i), i)
		owSend(t, tp, m)
		tsent = append(tsent, m)
	}
	c.Close()
	w.stop()

	cmd := exec.Command(wharfBinary(t), "kahadb", "activemq", dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("wharf kahadb activemq: %v\n%s", err, stderr.String())
	}
	fragment := stdout.String()
	t.Logf("wharf kahadb activemq:\n%s%s", stderr.String(), fragment)
	plan, err := kahadb.PlanMKahaDB(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan) != 2 || len(plan[0].Destinations) == 0 || len(plan[1].Destinations) == 0 {
		t.Fatalf("plan = %+v, want both shards holding destinations", plan)
	}
	for _, ch := range plan {
		if target, err := os.Readlink(filepath.Join(dir, ch.Link)); err != nil || target != ch.Shard {
			t.Errorf("link %s = %q, %v; want %s", ch.Link, target, err, ch.Shard)
		}
	}

	tmpl, err := os.ReadFile(filepath.FromSlash("kahadb/activemq.xml"))
	if err != nil {
		t.Fatal(err)
	}
	xml := string(tmpl)
	for old, repl := range map[string]string{
		"<persistenceAdapter>\n      <kahaDB directory=\"${wharf.kahadb.dir}\"/>\n    </persistenceAdapter>": fragment,
		`<broker xmlns="http://activemq.apache.org/schema/core"`:                                             `<broker xmlns="http://activemq.apache.org/schema/core" xmlns:wharf="urn:wharf:config" wharf:shards="2" wharf:trustedNetwork="false"`,
	} {
		if !strings.Contains(xml, old) {
			t.Fatalf("kahadb/activemq.xml has no %q", old)
		}
		xml = strings.Replace(xml, old, repl, 1)
	}
	amq := startActiveMQXML(t, []byte(xml))
	c = dialOW(t, amq.openwire, clientID)
	s = must(c.Session(false))(t)
	for q := range 8 {
		name := fmt.Sprintf("kdb.ms.q%d", q)
		k := must(s.Consumer(wire.NewQueue(name), client.ConsumerOptions{}))(t)
		checkMessages(t, "ActiveMQ queue "+name, receiveN(t, k, name, len(sent[name])), sent[name])
		expectMarkerNext(t, must(s.Producer(wire.NewQueue(name)))(t), k, name)
	}
	d = must(s.Consumer(top, client.ConsumerOptions{DurableName: "sub1"}))(t)
	checkMessages(t, "ActiveMQ durable sub1", receiveN(t, d, "sub1", len(tsent)), tsent)
	expectMarkerNext(t, must(s.Producer(top))(t), d, "durable sub1")
	c.Close()
	if bad := grepLine(amq.log.String(), "ERROR"); bad != "" {
		t.Errorf("ActiveMQ logged an error: %s", bad)
	}
	amq.stop()
}
