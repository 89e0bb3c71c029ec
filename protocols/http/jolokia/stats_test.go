package jolokia_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"wharf/protocols/http/jolokia"

	"wharf/engine"
	"wharf/engine/message"
)

// TestJolokiaEnqueueTimeAndMessageSize: the statistics of DestinationView
// (AverageEnqueueTime, Min/MaxEnqueueTime, Average/Min/MaxMessageSize) and
// BrokerView (Average/Min/MaxMessageSize over every destination), with
// their JMX types, for messages whose enqueue times the test clock sets.
func TestJolokiaEnqueueTimeAndMessageSize(t *testing.T) {
	v := startEnv(t, nil)
	q, other := message.QueueDest("timed"), message.QueueDest("timed.other")
	prod := v.conn("producer")
	v.send(prod, q, "a")
	v.clock.Add(40)
	v.send(prod, q, "bbbbbbbbbb")
	v.send(prod, other, "cccccccccccccccccccc")
	v.clock.Add(60)
	s := make(sink, 10)
	if _, err := v.conn("consumer").Subscribe(engine.SubSpec{Destination: q, AckMode: engine.AckAuto, Prefetch: 10}, s); err != nil {
		t.Fatal(err)
	}
	s.recv(t) // held 100 ms
	s.recv(t) // held 60 ms
	got := v.ok(v.get("/read/" + queueBean("timed"))).(map[string]any)
	if n, _ := got["AverageEnqueueTime"].(json.Number); n.String() != "80.0" && n.String() != "80" {
		t.Errorf("AverageEnqueueTime = %v, want 80", got["AverageEnqueueTime"])
	}
	st := v.e.Stats(q)
	ot := v.e.Stats(other)
	for k, w := range map[string]int64{
		"MaxEnqueueTime": 100, "MinEnqueueTime": 60,
		"AverageMessageSize": (st.MessageSize.Total) / 2, "MinMessageSize": st.MessageSize.Min, "MaxMessageSize": st.MessageSize.Max,
	} {
		if n := num(t, got[k]); n != w {
			t.Errorf("%s = %d, want %d", k, n, w)
		}
	}
	if st.MessageSize.Max-st.MessageSize.Min != 9 {
		t.Errorf("sizes %+v: the bodies differ by 9 bytes", st.MessageSize)
	}
	b := v.ok(v.get("/read/org.apache.activemq:type=Broker,brokerName=localhost")).(map[string]any)
	all := st.MessageSize
	all.Merge(ot.MessageSize)
	for k, w := range map[string]int64{
		"AverageMessageSize": int64(all.Average()), "MinMessageSize": st.MessageSize.Min, "MaxMessageSize": ot.MessageSize.Max,
	} {
		if n := num(t, b[k]); n != w {
			t.Errorf("broker %s = %d, want %d", k, n, w)
		}
	}
	if b["StatisticsEnabled"] != true {
		t.Errorf("StatisticsEnabled = %v", b["StatisticsEnabled"])
	}
	// The types ActiveMQ declares (DestinationViewMBean, BrokerViewMBean).
	list := v.ok(v.get("/list/org.apache.activemq/type=Broker,brokerName=localhost,destinationType=Queue,destinationName=timed/attr")).(map[string]any)
	for k, w := range map[string]string{"AverageEnqueueTime": "double", "MaxEnqueueTime": "long", "MinEnqueueTime": "long",
		"AverageMessageSize": "long", "MaxMessageSize": "long", "MinMessageSize": "long"} {
		a, _ := list[k].(map[string]any)
		if a["type"] != w {
			t.Errorf("list %s: %v, want type %s", k, list[k], w)
		}
	}
}

// TestJolokiaStatisticsDisabled: with <broker enableStatistics="false">
// the broker says so and the statistics stay 0.
func TestJolokiaStatisticsDisabled(t *testing.T) {
	v := startEnvEngine(t, func(o *engine.Options) { o.DisableStatistics = true }, nil)
	q := message.QueueDest("untimed")
	v.send(v.conn("p"), q, "x")
	v.clock.Add(int64(time.Second / time.Millisecond))
	s := make(sink, 1)
	if _, err := v.conn("c").Subscribe(engine.SubSpec{Destination: q, AckMode: engine.AckAuto, Prefetch: 10}, s); err != nil {
		t.Fatal(err)
	}
	s.recv(t)
	got := v.ok(v.get("/read/" + queueBean("untimed"))).(map[string]any)
	for _, k := range []string{"MaxEnqueueTime", "MinEnqueueTime", "AverageMessageSize", "MaxMessageSize"} {
		if n := num(t, got[k]); n != 0 {
			t.Errorf("%s = %d with statistics off", k, n)
		}
	}
	if num(t, got["EnqueueCount"]) != 1 {
		t.Errorf("EnqueueCount = %v, counters are kept", got["EnqueueCount"])
	}
	if b := v.ok(v.get("/read/org.apache.activemq:type=Broker,brokerName=localhost/StatisticsEnabled")); b != false {
		t.Errorf("StatisticsEnabled = %v", b)
	}
}

// TestJolokiaSubscriptionCounters: SubscriptionView's PendingQueueSize,
// DispatchedQueueSize, EnqueueCounter, DispatchedCounter and
// DequeueCounter, on a queue consumer and on durable subscriptions, one
// active and one offline.
func TestJolokiaSubscriptionCounters(t *testing.T) {
	// Consumers are listed as the broker registers them for its
	// advisories.
	v := startEnvEngine(t, func(o *engine.Options) { o.DisableAdvisories = false }, nil)
	q := message.QueueDest("counted")
	c := v.conn("worker")
	s := make(sink, 10)
	sub, err := c.Subscribe(engine.SubSpec{Destination: q, AckMode: engine.AckIndividual, Prefetch: 2}, s)
	if err != nil {
		t.Fatal(err)
	}
	v.send(v.conn("p"), q, "a", "b", "c")
	first := s.recv(t)
	s.recv(t)
	if err := c.Ack(sub, first.ID, ""); err != nil {
		t.Fatal(err)
	}
	s.recv(t) // the third, once the ack made room
	subs := v.ok(v.get("/read/" + queueBean("counted") + "/Subscriptions")).([]any)
	if len(subs) != 1 {
		t.Fatalf("Subscriptions = %v", subs)
	}
	got := v.ok(v.get("/read/" + subs[0].(map[string]any)["objectName"].(string))).(map[string]any)
	for k, w := range map[string]int64{"PendingQueueSize": 0, "DispatchedQueueSize": 2, "MessageCountAwaitingAcknowledge": 2,
		"EnqueueCounter": 3, "DispatchedCounter": 3, "DequeueCounter": 1} {
		if n := num(t, got[k]); n != w {
			t.Errorf("queue consumer %s = %d, want %d", k, n, w)
		}
	}

	tp := message.TopicDest("counted.news")
	dc := v.conn("reader")
	ds := make(sink, 10)
	live, err := dc.Subscribe(engine.SubSpec{Destination: tp, DurableName: "live", AckMode: engine.AckIndividual, Prefetch: 10}, ds)
	if err != nil {
		t.Fatal(err)
	}
	idle, err := dc.Subscribe(engine.SubSpec{Destination: tp, DurableName: "idle", AckMode: engine.AckIndividual, Prefetch: 10}, make(sink, 10))
	if err != nil {
		t.Fatal(err)
	}
	if err := dc.CloseSubscription(idle); err != nil {
		t.Fatal(err)
	}
	v.send(v.conn("p2"), tp, "x", "y")
	d := ds.recv(t)
	ds.recv(t)
	if err := dc.Ack(live, d.ID, ""); err != nil {
		t.Fatal(err)
	}
	base := "org.apache.activemq:type=Broker,brokerName=localhost,destinationType=Topic,destinationName=counted.news,endpoint=Consumer,clientId=reader,consumerId=Durable(reader_%s)"
	for name, want := range map[string]map[string]int64{
		"live": {"PendingQueueSize": 0, "DispatchedQueueSize": 1, "EnqueueCounter": 2, "DispatchedCounter": 2, "DequeueCounter": 1},
		"idle": {"PendingQueueSize": 2, "DispatchedQueueSize": 0, "EnqueueCounter": 2, "DispatchedCounter": 0, "DequeueCounter": 0},
	} {
		got := v.ok(v.get("/read/" + fmt.Sprintf(base, name))).(map[string]any)
		for k, w := range want {
			if n := num(t, got[k]); n != w {
				t.Errorf("durable %s %s = %d, want %d", name, k, n, w)
			}
		}
	}
}

// TestJolokiaConnectorAndStoreBeans: ConnectorViewMBean per transport
// connector (connectionCount counts its protocol's connections) and
// service=PersistenceAdapter named as KahaDBPersistenceAdapter.toString,
// with the journal files of its directory.
func TestJolokiaConnectorAndStoreBeans(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]int{"db-1.log": 100, "db-3.log": 50, "db.data": 20, "shard-1/db-1.log": 10} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	v := startEnv(t, func(o *jolokia.Options) {
		o.Connectors = []jolokia.Connector{{Name: "openwire", Protocol: "openwire"}, {Name: "stomp", Protocol: "stomp"}}
		o.PersistenceAdapter = &jolokia.PersistenceAdapter{Dir: dir}
	})
	v.conn("one")
	v.conn("two") // openwire, as env.conn connects
	found := v.ok(v.get("/search/org.apache.activemq:type=Broker,brokerName=localhost,connector=clientConnectors,connectorName=*")).([]any)
	if len(found) != 2 {
		t.Fatalf("connector search = %v, want openwire and stomp", found)
	}
	ow := "org.apache.activemq:type=Broker,brokerName=localhost,connector=clientConnectors,connectorName=openwire"
	got := v.ok(v.get("/read/" + ow)).(map[string]any)
	if got["StatisticsEnabled"] != true || got["AllowLinkStealingEnabled"] != false || got["UpdateClusterFilter"] != nil || got["Started"] != nil {
		t.Errorf("openwire connector = %v", got)
	}
	// ActiveMQ's isStarted is no attribute (its JMX read fails so).
	if r := v.get("/read/" + ow + "/Started"); r.status() != 404 || r["error_type"] != "javax.management.AttributeNotFoundException" {
		t.Errorf("read of Started: %v", r)
	}
	for name, want := range map[string]int64{"openwire": 2, "stomp": 0} {
		code, out := v.do(http.MethodGet, "/exec/org.apache.activemq:type=Broker,brokerName=localhost,connector=clientConnectors,connectorName="+name+"/connectionCount", nil, true)
		if r := response(out.(map[string]any)); code != 200 || num(t, r.value()) != want {
			t.Errorf("%s connectionCount: %d %v, want %d", name, code, r, want)
		}
	}

	pa := v.ok(v.get("/search/org.apache.activemq:type=Broker,brokerName=localhost,service=PersistenceAdapter,*")).([]any)
	wantName := "KahaDBPersistenceAdapter[" + dir + ",Index:" + dir + "]"
	if len(pa) != 1 || !strings.Contains(pa[0].(string), "instanceName=KahaDBPersistenceAdapter["+dir+"_Index_"+dir+"]") {
		t.Fatalf("PersistenceAdapter search = %v, want instanceName=%s", pa, wantName)
	}
	// POSTed: the name holds the directory's slashes, which a GET path
	// would have to escape as Jolokia's "!/".
	req, _ := json.Marshal(map[string]any{"type": "read", "mbean": pa[0]})
	_, out := v.post(string(req), false)
	st := v.ok(response(out.(map[string]any))).(map[string]any)
	if st["Name"] != wantName || num(t, st["Size"]) != 180 || st["Data"] != "[1, 3]" || st["Transactions"] != "[]" {
		t.Errorf("PersistenceAdapter = %v, want name %s, size 180, data [1, 3], no transactions", st, wantName)
	}

	// Without a KahaDB store (the memory store) there is no such bean, as
	// in ActiveMQ.
	w := startEnv(t, nil)
	if r := w.get("/read/org.apache.activemq:type=Broker,brokerName=localhost,service=PersistenceAdapter,*/Name"); r.status() != 404 {
		t.Errorf("PersistenceAdapter on the memory store: %v", r)
	}
}

// TestJolokiaWrite: the DestinationViewMBean attributes ActiveMQ lets JMX
// set (MaxPageSize, ProducerFlowControl, MemoryLimit) are written over GET
// and POST by an admin; the answer is the value before, as Jolokia's; the
// engine runs with the new value; list marks them rw.
func TestJolokiaWrite(t *testing.T) {
	v := startEnv(t, nil)
	q := message.QueueDest("tuned")
	v.send(v.conn("p"), q, "one")
	code, out := v.do(http.MethodGet, "/write/"+queueBean("tuned")+"/MaxPageSize/50", nil, true)
	if r := response(out.(map[string]any)); code != 200 || r.status() != 200 || num(t, r.value()) != 200 {
		t.Fatalf("write MaxPageSize: %d %v, want the old value 200", code, r)
	}
	for attr, val := range map[string]string{"ProducerFlowControl": "false", "MemoryLimit": "1048576"} {
		code, out := v.post(`{"type":"write","mbean":"`+queueBean("tuned")+`","attribute":"`+attr+`","value":`+val+`}`, true)
		if r := response(out.(map[string]any)); code != 200 || r.status() != 200 {
			t.Fatalf("write %s: %d %v", attr, code, r)
		}
	}
	st := v.e.Stats(q)
	if st.Policy.MaxPageSize != 50 || st.Policy.ProducerFlowControl || st.MemoryLimit != 1<<20 {
		t.Fatalf("engine after the writes: %+v", st)
	}
	got := v.ok(v.get("/read/" + queueBean("tuned"))).(map[string]any)
	if num(t, got["MaxPageSize"]) != 50 || got["ProducerFlowControl"] != false || num(t, got["MemoryLimit"]) != 1<<20 ||
		num(t, got["MemoryPercentUsage"]) != int64(st.MemoryPercentUsage) || st.MemoryPercentUsage != int(st.MemoryUsage*100/(1<<20)) {
		t.Errorf("read after the writes: %v (engine %+v)", got, st)
	}
	attrs := v.ok(v.get("/list/org.apache.activemq/type=Broker,brokerName=localhost,destinationType=Queue,destinationName=tuned/attr")).(map[string]any)
	for name, rw := range map[string]bool{"MaxPageSize": true, "ProducerFlowControl": true, "MemoryLimit": true, "QueueSize": false, "Name": false} {
		if a := attrs[name].(map[string]any); a["rw"] != rw {
			t.Errorf("list %s rw = %v, want %v", name, a["rw"], rw)
		}
	}
	// Read-only, as JMX says of a getter without a setter.
	code, out = v.do(http.MethodGet, "/write/"+queueBean("tuned")+"/EnqueueCount/0", nil, true)
	if r := response(out.(map[string]any)); code != 200 || r.status() != 404 || r["error"] != "javax.management.AttributeNotFoundException : Read-only attribute: EnqueueCount" {
		t.Errorf("write of EnqueueCount: %d %v", code, r)
	}
	// A user who is not an admin changes nothing.
	code, out = v.do(http.MethodGet, "/write/"+queueBean("tuned")+"/MaxPageSize/7", nil, false)
	if r := response(out.(map[string]any)); code != 403 || r.status() != 403 || v.e.Stats(q).Policy.MaxPageSize != 50 {
		t.Errorf("write without the admin role: %d %v", code, r)
	}
}

// TestJolokiaWriteBrokerLimits: the Broker bean's MemoryLimit, StoreLimit
// and TempLimit are writable (BrokerViewMBean setters); a negative limit
// is refused and changes nothing.
func TestJolokiaWriteBrokerLimits(t *testing.T) {
	v := startEnv(t, nil)
	broker := "org.apache.activemq:type=Broker,brokerName=localhost"
	for attr, val := range map[string]int64{"MemoryLimit": 32 << 20, "StoreLimit": 2 << 30, "TempLimit": 256 << 20} {
		code, out := v.do(http.MethodGet, "/write/"+broker+"/"+attr+"/"+strconv.FormatInt(val, 10), nil, true)
		if r := response(out.(map[string]any)); code != 200 || r.status() != 200 {
			t.Fatalf("write %s: %d %v", attr, code, r)
		}
		if got := num(t, v.ok(v.get("/read/"+broker+"/"+attr))); got != val {
			t.Errorf("%s after the write: %d, want %d", attr, got, val)
		}
	}
	if u := v.e.Usage(); u.MemoryLimit != 32<<20 || u.StoreLimit != 2<<30 || u.TempLimit != 256<<20 {
		t.Errorf("engine usage after the writes: %+v", u)
	}
	code, out := v.do(http.MethodGet, "/write/"+broker+"/MemoryLimit/-5", nil, true)
	if r := response(out.(map[string]any)); code != 200 || r.status() != 400 || v.e.Usage().MemoryLimit != 32<<20 {
		t.Errorf("negative limit: %d %v", code, r)
	}
	code, out = v.do(http.MethodGet, "/write/"+broker+"/TotalEnqueueCount/0", nil, true)
	if r := response(out.(map[string]any)); r.status() != 404 || r["error_type"] != "javax.management.AttributeNotFoundException" {
		t.Errorf("write of TotalEnqueueCount: %d %v", code, r)
	}
}
