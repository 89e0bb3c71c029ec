package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// mKahaDBXML is the <persistenceAdapter> of the mKahaDB interop tests: a
// child for the queues "orders.>" and a catch-all, under
// -Dwharf.kahadb.dir.
const mKahaDBXML = `<persistenceAdapter>
      <mKahaDB directory="${wharf.kahadb.dir}">
        <filteredPersistenceAdapters>
          <filteredKahaDB queue="orders.>"><persistenceAdapter><kahaDB/></persistenceAdapter></filteredKahaDB>
          <filteredKahaDB><persistenceAdapter><kahaDB/></persistenceAdapter></filteredKahaDB>
        </filteredPersistenceAdapters>
      </mKahaDB>
    </persistenceAdapter>`

// wharfMKahaDB is the YAML equivalent of mKahaDBXML (directory %q), with
// one shard: each child is then a single journal, as ActiveMQ's.
const wharfMKahaDB = `shards: 1
persistence:
  mkahadb:
    directory: %q
    filtered:
      - {queue: "orders.>", kahadb: {}}
      - {kahadb: {}}
transport_connectors:
  - {name: openwire, uri: "tcp://127.0.0.1:0"}
  - {name: stomp, uri: "stomp://127.0.0.1:0"}
`

// startActiveMQMKahaDB starts ActiveMQ 5.17 with mKahaDBXML in dir.
func startActiveMQMKahaDB(t *testing.T, dir string) *amqProc {
	t.Helper()
	tmpl, err := os.ReadFile(filepath.FromSlash("kahadb/activemq.xml"))
	if err != nil {
		t.Fatal(err)
	}
	const old = "<persistenceAdapter>\n      <kahaDB directory=\"${wharf.kahadb.dir}\"/>\n    </persistenceAdapter>"
	if !strings.Contains(string(tmpl), old) {
		t.Fatalf("kahadb/activemq.xml has no %q", old)
	}
	xml := strings.Replace(string(tmpl), old, mKahaDBXML, 1)
	return startActiveMQXML(t, []byte(xml), "wharf.kahadb.dir="+dir)
}

// mKahaDBQueues are the queues the tests write: one in the "orders.>"
// child, one in the catch-all.
var mKahaDBQueues = []string{"orders.a", "other.b"}

// sendMKahaDB sends three persistent messages to each of mKahaDBQueues
// through the broker at addr.
func sendMKahaDB(t *testing.T, addr string) map[string][]*wire.Message {
	t.Helper()
	c := dialOW(t, addr, "")
	s := must(c.Session(false))(t)
	sent := map[string][]*wire.Message{}
	for _, q := range mKahaDBQueues {
		p := must(s.Producer(wire.NewQueue(q)))(t)
		for i := range 3 {
			m := richMessage(fmt.Sprintf("%s-%d", q, i), i)
			owSend(t, p, m)
			sent[q] = append(sent[q], m)
		}
	}
	c.Close()
	return sent
}

// checkMKahaDB receives what sendMKahaDB sent through the broker at addr,
// then a marker: nothing else was pending.
func checkMKahaDB(t *testing.T, addr, who string, sent map[string][]*wire.Message) {
	t.Helper()
	c := dialOW(t, addr, "")
	s := must(c.Session(false))(t)
	for _, q := range mKahaDBQueues {
		k := must(s.Consumer(wire.NewQueue(q), client.ConsumerOptions{}))(t)
		checkMessages(t, who+" queue "+q, receiveN(t, k, q, len(sent[q])), sent[q])
		expectMarkerNext(t, must(s.Producer(wire.NewQueue(q)))(t), k, q)
	}
	c.Close()
}

// TestConformanceMKahaDBFromActiveMQ: an mKahaDB store ActiveMQ 5.17
// wrote (a child for "orders.>" and a catch-all, which ActiveMQ names
// "#210") is recovered whole by Wharf with the equivalent configuration:
// the messages of both children, the catch-all's included.
func TestConformanceMKahaDBFromActiveMQ(t *testing.T) {
	skipWithoutActiveMQ(t)
	dir := filepath.Join(t.TempDir(), "mkahadb")
	amq := startActiveMQMKahaDB(t, dir)
	sent := sendMKahaDB(t, amq.openwire)
	amq.stop()
	if _, err := os.Stat(filepath.Join(dir, "#210")); err != nil {
		t.Fatalf("ActiveMQ's catch-all child: %v (store holds %v)", err, dirNames(t, dir))
	}

	w := startWharfYAML(t, fmt.Sprintf(wharfMKahaDB, dir))
	checkMKahaDB(t, w.openwire, "Wharf", sent)
	w.stop()
}

// TestConformanceMKahaDBToActiveMQ is the reverse: the mKahaDB store Wharf
// wrote is recovered whole by ActiveMQ 5.17.
func TestConformanceMKahaDBToActiveMQ(t *testing.T) {
	skipWithoutActiveMQ(t)
	dir := filepath.Join(t.TempDir(), "mkahadb")
	w := startWharfYAML(t, fmt.Sprintf(wharfMKahaDB, dir))
	sent := sendMKahaDB(t, w.openwire)
	w.stop()

	amq := startActiveMQMKahaDB(t, dir)
	checkMKahaDB(t, amq.openwire, "ActiveMQ", sent)
	if bad := grepLine(amq.log.String(), "ERROR"); bad != "" {
		t.Errorf("ActiveMQ logged an error: %s", bad)
	}
	amq.stop()
}
