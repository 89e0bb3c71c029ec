package jolokia_test

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/internal/version"
	"wharf/protocols/http/jolokia"
)

func TestJolokiaReadBrokerAttributes(t *testing.T) {
	v := startEnv(t, nil)
	c := v.conn("c1")
	v.send(c, message.QueueDest("orders"), "a", "b", "c")
	v.send(c, message.TopicDest("news"), "x")
	v.clock.Add(90_500)
	broker := "/read/org.apache.activemq:type=Broker,brokerName=localhost"

	got := v.ok(v.get(broker)).(map[string]any)
	want := map[string]any{
		"BrokerName": "localhost", "BrokerId": v.e.BrokerID(), "BrokerVersion": version.Broker,
		"Uptime": "1 minute",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
	for k, w := range map[string]int64{
		"UptimeMillis": 90_500, "TotalEnqueueCount": 4, "TotalDequeueCount": 0, "TotalMessageCount": 3,
		"TotalConsumerCount": 0, "MemoryLimit": 64 << 20, "StoreLimit": 1 << 30, "TempLimit": 512 << 20,
		"MemoryPercentUsage": 0, "StorePercentUsage": 0, "TempPercentUsage": 0, "CurrentConnectionsCount": 1,
	} {
		if n := num(t, got[k]); n != w {
			t.Errorf("%s = %d, want %d", k, n, w)
		}
	}
	queues := got["Queues"].([]any)
	if len(queues) != 1 || queues[0].(map[string]any)["objectName"] != canonicalQueue("orders") {
		t.Errorf("Queues = %v, want [{objectName: %s}]", queues, canonicalQueue("orders"))
	}
	if topics := got["Topics"].([]any); len(topics) != 1 || !strings.Contains(topics[0].(map[string]any)["objectName"].(string), "destinationName=news,destinationType=Topic") {
		t.Errorf("Topics = %v", topics)
	}

	// One attribute: the bare value; an inner path goes into it.
	if n := num(t, v.ok(v.get(broker+"/TotalMessageCount"))); n != 3 {
		t.Errorf("TotalMessageCount = %d, want 3", n)
	}
	if on := v.ok(v.get(broker + "/Queues/0/objectName")); on != canonicalQueue("orders") {
		t.Errorf("Queues/0/objectName = %v", on)
	}
	r := v.get(broker + "/TotalMessageCount")
	req := r["request"].(map[string]any)
	if req["type"] != "read" || req["attribute"] != "TotalMessageCount" || req["mbean"] != "org.apache.activemq:brokerName=localhost,type=Broker" {
		t.Errorf("echoed request = %v", req)
	}
	if ts := num(t, r["timestamp"]); ts != v.clock.Load()/1000 {
		t.Errorf("timestamp = %d, want %d (seconds)", ts, v.clock.Load()/1000)
	}
	// A comma list of attributes: a map.
	m := v.ok(v.get(broker + "/BrokerName,TotalEnqueueCount")).(map[string]any)
	if len(m) != 2 || m["BrokerName"] != "localhost" || num(t, m["TotalEnqueueCount"]) != 4 {
		t.Errorf("attribute list = %v", m)
	}
	health := v.ok(v.get("/read/org.apache.activemq:type=Broker,brokerName=localhost,service=Health/CurrentStatus"))
	if health != "Good" {
		t.Errorf("CurrentStatus = %v, want Good", health)
	}
}

func TestJolokiaReadQueueAttributes(t *testing.T) {
	v := startEnv(t, nil)
	q := message.QueueDest("orders")
	prod := v.conn("producer")
	prod.AddProducer(q)
	v.send(prod, q, "one", "two", "three")
	s := make(sink, 10)
	if _, err := v.conn("consumer").Subscribe(engine.SubSpec{Destination: q, AckMode: engine.AckIndividual, Prefetch: 1}, s); err != nil {
		t.Fatal(err)
	}
	s.recv(t)
	got := v.ok(v.get("/read/" + queueBean("orders"))).(map[string]any)
	st := v.e.Stats(q)
	for k, w := range map[string]int64{
		"QueueSize": 3, "EnqueueCount": 3, "DequeueCount": 0, "DispatchCount": 1, "InFlightCount": 1,
		"ExpiredCount": 0, "ConsumerCount": 1, "ProducerCount": 1, "BlockedSends": 0,
		"MemoryUsageByteCount": st.MemoryUsage, "MemoryLimit": 64 << 20, "MemoryPercentUsage": int64(st.MemoryPercentUsage),
	} {
		if n := num(t, got[k]); n != w {
			t.Errorf("%s = %d, want %d", k, n, w)
		}
	}
	if st.MemoryUsage <= 0 {
		t.Errorf("engine reports MemoryUsage %d after three sends", st.MemoryUsage)
	}
	if got["Name"] != "orders" {
		t.Errorf("Name = %v", got["Name"])
	}
	// The registered producer has its bean, listed by the broker.
	ps := v.ok(v.get("/read/org.apache.activemq:type=Broker,brokerName=localhost/QueueProducers")).([]any)
	if len(ps) != 1 {
		t.Fatalf("QueueProducers = %v, want one", ps)
	}
	pb := v.ok(v.get("/read/" + ps[0].(map[string]any)["objectName"].(string))).(map[string]any)
	if pb["ClientId"] != "producer" || pb["DestinationName"] != "orders" || pb["DestinationQueue"] != true || pb["ConnectionId"] != prod.ID() {
		t.Errorf("producer = %v", pb)
	}
}

func TestJolokiaWildcardRead(t *testing.T) {
	v := startEnv(t, nil)
	c := v.conn("")
	v.send(c, message.QueueDest("a"), "1")
	v.send(c, message.QueueDest("b"), "1", "2")
	v.send(c, message.TopicDest("t"), "1")
	for _, pattern := range []string{
		"org.apache.activemq:type=Broker,brokerName=*,destinationType=Queue,destinationName=*",
		"org.apache.activemq:destinationName=*,destinationType=Queue,brokerName=localhost,type=Broker", // key order does not matter
		"org.apache.activemq:type=Broker,destinationType=Queue,*",
		"org.apache.*:type=Broker,brokerName=local%3Fost,destinationType=Queue,destinationName=*", // ? escaped in a URL path
	} {
		t.Run(pattern, func(t *testing.T) {
			v := v.with(t)
			got := v.ok(v.get("/read/" + pattern + "/QueueSize")).(map[string]any)
			want := map[string]int64{canonicalQueue("a"): 1, canonicalQueue("b"): 2}
			if len(got) != len(want) {
				t.Fatalf("got %v, want keys %v", got, want)
			}
			for k, w := range want {
				attrs, ok := got[k].(map[string]any)
				if !ok || num(t, attrs["QueueSize"]) != w {
					t.Fatalf("%s: %v, want QueueSize %d", k, got[k], w)
				}
			}
		})
	}
	// POST with an attribute list over a pattern: beans lacking one of
	// them (the broker) keep the ones they have.
	code, out := v.post(`{"type":"read","mbean":"org.apache.activemq:type=Broker,*","attribute":["QueueSize","BrokerName"]}`, false)
	r := response(out.(map[string]any))
	if code != 200 || r.status() != 200 {
		t.Fatalf("HTTP %d %v", code, r)
	}
	got := r.value().(map[string]any)
	if b := got["org.apache.activemq:brokerName=localhost,type=Broker"].(map[string]any); b["BrokerName"] != "localhost" || len(b) != 1 {
		t.Errorf("broker entry = %v, want only BrokerName", b)
	}
	if q := got[canonicalQueue("b")].(map[string]any); num(t, q["QueueSize"]) != 2 || len(q) != 1 {
		t.Errorf("queue b entry = %v", q)
	}
	// canonicalNaming=false keeps the names as ActiveMQ builds them.
	keys := v.ok(v.get("/search/org.apache.activemq:type=Broker,brokerName=localhost,destinationType=Queue,destinationName=a?canonicalNaming=false")).([]any)
	if len(keys) != 1 || keys[0] != queueBean("a") {
		t.Errorf("non-canonical search = %v, want [%s]", keys, queueBean("a"))
	}
}

func TestJolokiaSearch(t *testing.T) {
	v := startEnv(t, nil)
	c := v.conn("")
	v.send(c, message.QueueDest("q2"), "x")
	v.send(c, message.QueueDest("q1"), "x")
	got := v.ok(v.get("/search/org.apache.activemq:type=Broker,brokerName=localhost,destinationType=Queue,*")).([]any)
	want := []any{canonicalQueue("q1"), canonicalQueue("q2")}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("search = %v, want %v", got, want)
	}
	none := v.ok(v.get("/search/org.apache.activemq:type=Broker,destinationType=Queue,destinationName=nothing*,*"))
	if l, ok := none.([]any); !ok || len(l) != 0 {
		t.Errorf("search matching nothing = %v, want []", none)
	}
}

func TestJolokiaList(t *testing.T) {
	v := startEnv(t, nil)
	v.send(v.conn(""), message.QueueDest("orders"), "x")
	tree := v.ok(v.get("/list")).(map[string]any)
	dom := tree["org.apache.activemq"].(map[string]any)
	q := dom["brokerName=localhost,destinationName=orders,destinationType=Queue,type=Broker"].(map[string]any)
	if q["class"] != "org.apache.activemq.broker.jmx.QueueView" {
		t.Errorf("class = %v", q["class"])
	}
	attr := q["attr"].(map[string]any)["QueueSize"].(map[string]any)
	if attr["type"] != "long" || attr["rw"] != false {
		t.Errorf("QueueSize info = %v", attr)
	}
	ops := q["op"].(map[string]any)
	if purge, ok := ops["purge"].([]any); !ok || len(purge) != 2 {
		t.Errorf("purge (overloaded) = %v, want a list of two", ops["purge"])
	}
	if _, ok := dom["brokerName=localhost,type=Broker"].(map[string]any); !ok {
		t.Errorf("broker bean missing from list: keys %v", keysOf(dom))
	}
	// A path in any key order, down to one operation.
	add := v.ok(v.get("/list/org.apache.activemq/type=Broker,brokerName=localhost/op/addQueue")).(map[string]any)
	args := add["args"].([]any)
	if add["ret"] != "void" || len(args) != 1 || args[0].(map[string]any)["type"] != "java.lang.String" {
		t.Errorf("addQueue info = %v", add)
	}
	if r := v.get("/list/org.apache.activemq/type=Broker,brokerName=nope"); r.status() != 404 {
		t.Errorf("list of a missing bean: %v, want 404", r)
	}
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestJolokiaExec(t *testing.T) {
	v := startEnv(t, nil)
	broker := "org.apache.activemq:type=Broker,brokerName=localhost"
	exec := func(body string) response {
		t.Helper()
		code, out := v.post(body, true)
		r := response(out.(map[string]any))
		if code != 200 || r.status() != 200 {
			t.Fatalf("%s: HTTP %d %v", body, code, r)
		}
		return r
	}
	// addQueue by GET and by POST (with a signature).
	if code, out := v.do(http.MethodGet, "/exec/"+broker+"/addQueue/viaGet", nil, true); code != 200 || response(out.(map[string]any)).status() != 200 {
		t.Fatalf("GET addQueue: %d %v", code, out)
	}
	exec(`{"type":"exec","mbean":"` + broker + `","operation":"addQueue(java.lang.String)","arguments":["viaPost"]}`)
	for _, n := range []string{"viaGet", "viaPost"} {
		if !v.e.Stats(message.QueueDest(n)).Exists {
			t.Errorf("queue %s not created", n)
		}
	}
	// From the server's own page (same origin, as the console sends it).
	origin := http.Header{"Origin": {strings.TrimSuffix(v.url, "/api/jolokia")}, "Sec-Fetch-Site": {"same-origin"}}
	body := `{"type":"exec","mbean":"` + broker + `","operation":"removeQueue","arguments":["viaGet"]}`
	if code, out := v.doWith(http.MethodPost, "/", []byte(body), true, origin); code != 200 || response(out.(map[string]any)).status() != 200 {
		t.Fatalf("same-origin removeQueue: %d %v", code, out)
	}
	if v.e.Stats(message.QueueDest("viaGet")).Exists {
		t.Error("removeQueue left the queue")
	}

	c := v.conn("")
	ids := v.send(c, message.QueueDest("work"), "m0", "m1", "m2", "m3")
	work := queueBean("work")
	browsed := exec(`{"type":"exec","mbean":"` + work + `","operation":"browse()"}`).value().([]any)
	if len(browsed) != 4 {
		t.Fatalf("browse returned %d messages, want 4", len(browsed))
	}
	first := browsed[0].(map[string]any)
	if first["JMSMessageID"] != ids[0] || first["Text"] != "m0" || first["JMSDeliveryMode"] != "PERSISTENT" {
		t.Errorf("browsed message = %v", first)
	}
	sel := exec(`{"type":"exec","mbean":"` + work + `","operation":"browse(java.lang.String)","arguments":["n >= 2"]}`).value().([]any)
	if len(sel) != 2 {
		t.Errorf("browse with selector n >= 2: %d messages, want 2", len(sel))
	}
	if moved := exec(`{"type":"exec","mbean":"` + work + `","operation":"moveMessageTo","arguments":["` + ids[0] + `","elsewhere"]}`).value(); moved != true {
		t.Errorf("moveMessageTo = %v, want true", moved)
	}
	if n := num(t, exec(`{"type":"exec","mbean":"`+work+`","operation":"copyMatchingMessagesTo(java.lang.String,java.lang.String)","arguments":["n = 3","elsewhere"]}`).value()); n != 1 {
		t.Errorf("copyMatchingMessagesTo = %d, want 1", n)
	}
	if st := v.e.Stats(message.QueueDest("elsewhere")); st.QueueSize != 2 {
		t.Errorf("elsewhere holds %d, want 2 (one moved, one copied)", st.QueueSize)
	}
	if removed := exec(`{"type":"exec","mbean":"` + work + `","operation":"removeMessage","arguments":["` + ids[1] + `"]}`).value(); removed != true {
		t.Errorf("removeMessage = %v", removed)
	}
	if r := exec(`{"type":"exec","mbean":"` + work + `","operation":"purge()"}`); r.value() != nil {
		t.Errorf("purge returned %v, want null", r.value())
	}
	st := v.e.Stats(message.QueueDest("work"))
	if st.QueueSize != 0 || st.DequeueCount != 4 {
		t.Errorf("after purge %+v, want empty with 4 dequeued", st)
	}
	// The read side sees the same numbers.
	if n := num(t, v.ok(v.get("/read/"+work+"/DequeueCount"))); n != 4 {
		t.Errorf("DequeueCount read = %d", n)
	}

	// Wharf's retryMessages(int): at most that many go back to the queue
	// they came from (moved to the DLQ here, which makes work their
	// OriginalDestination); retryMessages() the rest.
	v.send(c, message.QueueDest("work"), "r0", "r1", "r2", "r3", "r4")
	exec(`{"type":"exec","mbean":"` + work + `","operation":"moveMatchingMessagesTo(java.lang.String,java.lang.String)","arguments":["","ActiveMQ.DLQ"]}`)
	dlq := queueBean("ActiveMQ.DLQ")
	if n := num(t, exec(`{"type":"exec","mbean":"`+dlq+`","operation":"retryMessages(int)","arguments":[3]}`).value()); n != 3 {
		t.Errorf("retryMessages(int) 3 = %d, want 3", n)
	}
	if st := v.e.Stats(message.QueueDest("work")); st.QueueSize != 3 {
		t.Errorf("work holds %d after retryMessages(3), want 3", st.QueueSize)
	}
	if n := num(t, exec(`{"type":"exec","mbean":"`+dlq+`","operation":"retryMessages","arguments":[]}`).value()); n != 2 {
		t.Errorf("retryMessages (no signature, no argument) = %d, want the other 2", n)
	}
	if n := num(t, exec(`{"type":"exec","mbean":"`+dlq+`","operation":"retryMessages(int)","arguments":["7"]}`).value()); n != 0 {
		t.Errorf("retryMessages(int) of an empty DLQ = %d, want 0", n)
	}
	if st := v.e.Stats(message.QueueDest("work")); st.QueueSize != 5 {
		t.Errorf("work holds %d after the retries, want 5", st.QueueSize)
	}
	// A signature the bean lacks is answered in Jolokia's words, which
	// a client falls back on (wharf dlq replay against ActiveMQ).
	_, out := v.post(`{"type":"exec","mbean":"`+work+`","operation":"retryMessages(long)","arguments":[1]}`, true)
	if msg, _ := out.(map[string]any)["error"].(string); !strings.Contains(msg, "No operation retryMessages(long) on MBean") || !strings.Contains(msg, "Known signatures: retryMessages(), retryMessages(int)") {
		t.Errorf("retryMessages(long): error %q, want Jolokia's \"No operation ... exists. Known signatures\"", msg)
	}
}

func TestJolokiaBulk(t *testing.T) {
	v := startEnv(t, nil)
	v.send(v.conn(""), message.QueueDest("orders"), "x")
	code, out := v.post(`[
		{"type":"read","mbean":"`+queueBean("orders")+`","attribute":"QueueSize"},
		{"type":"read","mbean":"`+queueBean("missing")+`","attribute":"QueueSize"},
		{"type":"version"},
		{"type":"exec","mbean":"`+queueBean("orders")+`","operation":"purge()"},
		"not a request"
	]`, false)
	if code != 200 {
		t.Fatalf("HTTP %d", code)
	}
	list := out.([]any)
	var statuses []int
	for _, x := range list {
		statuses = append(statuses, response(x.(map[string]any)).status())
	}
	if fmt.Sprint(statuses) != "[200 404 200 403 400]" {
		t.Fatalf("statuses %v, want [200 404 200 403 400]: %v", statuses, list)
	}
	if n := num(t, list[0].(map[string]any)["value"]); n != 1 {
		t.Errorf("QueueSize = %d", n)
	}
	if st := v.e.Stats(message.QueueDest("orders")); st.QueueSize != 1 {
		t.Errorf("the refused purge in a bulk request changed the queue: %+v", st)
	}
	// A read after a change in the same bulk request sees the change.
	code, out = v.post(`[
		{"type":"read","mbean":"`+queueBean("orders")+`","attribute":"QueueSize"},
		{"type":"exec","mbean":"`+queueBean("orders")+`","operation":"purge()"},
		{"type":"read","mbean":"`+queueBean("orders")+`","attribute":"QueueSize"}
	]`, true)
	list = out.([]any)
	if code != 200 || len(list) != 3 {
		t.Fatalf("HTTP %d: %v", code, out)
	}
	before, after := list[0].(map[string]any)["value"], list[2].(map[string]any)["value"]
	if num(t, before) != 1 || num(t, after) != 0 {
		t.Errorf("QueueSize around the purge: %v then %v, want 1 then 0", before, after)
	}
}

func TestJolokiaVersion(t *testing.T) {
	v := startEnv(t, nil)
	for _, path := range []string{"/version", "/"} {
		got := v.ok(v.get(path)).(map[string]any)
		info := got["info"].(map[string]any)
		if got["agent"] == "" || got["protocol"] == nil || info["version"] != version.Broker || info["product"] != "wharf" {
			t.Errorf("%s: %v", path, got)
		}
	}
}

// Every bad request gets the error Jolokia gives, and changes nothing.
func TestJolokiaBadInput(t *testing.T) {
	v := startEnv(t, func(o *jolokia.Options) { o.MaxBodyBytes = 4096; o.MaxBulkRequests = 3 })
	keep := message.QueueDest("keep")
	v.send(v.conn(""), keep, "precious")
	broker := "org.apache.activemq:type=Broker,brokerName=localhost"
	for _, tc := range []struct {
		name     string
		method   string
		path     string
		body     string
		admin    bool
		httpCode int
		status   int
		errType  string
	}{
		{"malformed JSON", "POST", "/", `{"type":"read",`, true, 200, 400, "java.lang.IllegalArgumentException"},
		{"JSON that is not a request", "POST", "/", `42`, true, 200, 400, "java.lang.IllegalArgumentException"},
		{"unknown type", "POST", "/", `{"type":"delete","mbean":"` + queueBean("keep") + `"}`, true, 200, 400, "java.lang.IllegalArgumentException"},
		{"unknown MBean", "GET", "/read/" + queueBean("nope") + "/QueueSize", "", true, 200, 404, "javax.management.InstanceNotFoundException"},
		{"unknown attribute", "GET", "/read/" + queueBean("keep") + "/NoSuchThing", "", true, 200, 404, "javax.management.AttributeNotFoundException"},
		{"unknown attribute in a list", "POST", "/", `{"type":"read","mbean":"` + queueBean("keep") + `","attribute":["QueueSize","Nope"]}`, true, 200, 404, "javax.management.AttributeNotFoundException"},
		{"wildcard whose beans lack the attribute", "GET", "/read/org.apache.activemq:type=Broker,destinationType=Queue,*/NoSuchThing", "", true, 200, 400, "java.lang.IllegalArgumentException"},
		{"wildcard matching nothing", "GET", "/read/org.apache.activemq:type=Broker,brokerName=*,destinationType=Queue,destinationName=zz*", "", true, 200, 404, "javax.management.InstanceNotFoundException"},
		{"malformed ObjectName", "GET", "/read/org.apache.activemq", "", true, 200, 400, "javax.management.MalformedObjectNameException"},
		{"unknown operation", "POST", "/", `{"type":"exec","mbean":"` + broker + `","operation":"destroyEverything","arguments":[]}`, true, 200, 400, "java.lang.IllegalArgumentException"},
		{"wrong argument count", "GET", "/exec/" + broker + "/removeQueue/keep/extra", "", true, 200, 400, "java.lang.IllegalArgumentException"},
		{"overloaded without a fitting arity", "POST", "/", `{"type":"exec","mbean":"` + queueBean("keep") + `","operation":"moveMatchingMessagesTo","arguments":["a"]}`, true, 200, 400, "java.lang.IllegalArgumentException"},
		{"signature the MBean lacks", "POST", "/", `{"type":"exec","mbean":"` + queueBean("keep") + `","operation":"retryMessage(int)","arguments":[1]}`, true, 200, 400, "java.lang.IllegalArgumentException"},
		{"retryMessages(int) of 0", "POST", "/", `{"type":"exec","mbean":"` + queueBean("keep") + `","operation":"retryMessages(int)","arguments":[0]}`, true, 200, 400, "java.lang.IllegalArgumentException"},
		{"retryMessages(int) of a word", "GET", "/exec/" + queueBean("keep") + "/retryMessages(int)/many", "", true, 200, 400, "java.lang.IllegalArgumentException"},
		{"retryMessages(int) without the right to write", "POST", "/", `{"type":"exec","mbean":"` + queueBean("keep") + `","operation":"retryMessages(int)","arguments":[5]}`, false, 403, 403, "java.lang.SecurityException"},
		{"exec on a pattern", "GET", "/exec/org.apache.activemq:type=Broker,*/removeQueue/keep", "", true, 200, 400, "java.lang.IllegalArgumentException"},
		{"removeQueue without the right to write", "GET", "/exec/" + broker + "/removeQueue/keep", "", false, 403, 403, "java.lang.SecurityException"},
		{"purge without the right to write", "POST", "/", `{"type":"exec","mbean":"` + queueBean("keep") + `","operation":"purge"}`, false, 403, 403, "java.lang.SecurityException"},
		{"browse without the right to exec", "GET", "/exec/" + queueBean("keep") + "/browse()", "", false, 403, 403, "java.lang.SecurityException"},
		{"exec from another site's page", "GET", "/exec/" + broker + "/removeQueue/keep", "", true, 403, 403, "java.lang.SecurityException"},
		{"exec from another origin", "POST", "/", `{"type":"exec","mbean":"` + broker + `","operation":"removeQueue","arguments":["keep"]}`, true, 403, 403, "java.lang.SecurityException"},
		{"write without the right to write", "POST", "/", `{"type":"write","mbean":"` + queueBean("keep") + `","attribute":"MemoryLimit","value":1}`, false, 403, 403, "java.lang.SecurityException"},
		{"write of a read-only attribute", "POST", "/", `{"type":"write","mbean":"` + queueBean("keep") + `","attribute":"QueueSize","value":0}`, true, 200, 404, "javax.management.AttributeNotFoundException"},
		{"write of a value of the wrong type", "POST", "/", `{"type":"write","mbean":"` + queueBean("keep") + `","attribute":"MaxPageSize","value":"lots"}`, true, 200, 400, "java.lang.IllegalArgumentException"},
		{"write of a page size of 0", "GET", "/write/" + queueBean("keep") + "/MaxPageSize/0", "", true, 200, 400, "java.lang.IllegalArgumentException"},
		{"write of an int out of range", "GET", "/write/" + queueBean("keep") + "/MaxPageSize/4294967296", "", true, 200, 400, "java.lang.IllegalArgumentException"},
		{"write of a boolean as a number", "POST", "/", `{"type":"write","mbean":"` + queueBean("keep") + `","attribute":"ProducerFlowControl","value":1}`, true, 200, 400, "java.lang.IllegalArgumentException"},
		{"oversized body", "POST", "/", `{"type":"exec","mbean":"` + broker + `","operation":"removeQueue","arguments":["keep"],"pad":"` + strings.Repeat("x", 5000) + `"}`, true, 413, 413, "java.lang.IllegalArgumentException"},
		{"bulk over the limit", "POST", "/", strings.Repeat(`{"type":"exec","mbean":"`+broker+`","operation":"removeQueue","arguments":["keep"]},`, 3) + `{"type":"version"}]`, true, 200, 400, "java.lang.IllegalArgumentException"},
		{"selector that does not parse", "POST", "/", `{"type":"exec","mbean":"` + queueBean("keep") + `","operation":"removeMatchingMessages(java.lang.String)","arguments":["n >"]}`, true, 200, 500, "javax.jms.InvalidSelectorException"},
		{"proxy request", "POST", "/", `{"type":"read","mbean":"` + broker + `","target":{"url":"service:jmx:rmi:///x"}}`, true, 200, 400, "java.lang.IllegalArgumentException"},
		{"method not allowed", "PUT", "/", `{}`, true, 405, 405, "java.lang.UnsupportedOperationException"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := v.with(t)
			body := tc.body
			if tc.name == "bulk over the limit" {
				body = "[" + body
			}
			hdr := http.Header{}
			switch tc.name {
			case "exec from another site's page":
				hdr.Set("Sec-Fetch-Site", "cross-site")
			case "exec from another origin":
				hdr.Set("Origin", "http://evil.example")
			}
			code, out := v.doWith(tc.method, tc.path, []byte(body), tc.admin, hdr)
			r := response(out.(map[string]any))
			if code != tc.httpCode || r.status() != tc.status || r["error_type"] != tc.errType {
				t.Fatalf("HTTP %d status %d %v: %v; want HTTP %d status %d %s", code, r.status(), r["error_type"], r["error"], tc.httpCode, tc.status, tc.errType)
			}
			if msg, _ := r["error"].(string); !strings.HasPrefix(msg, tc.errType+" : ") {
				t.Errorf("error %q does not start with the exception class", msg)
			}
			if _, leaked := r["stacktrace"]; leaked {
				t.Error("response carries a stack trace")
			}
			if st := v.e.Stats(keep); !st.Exists || st.QueueSize != 1 || st.Policy.MaxPageSize != 200 || !st.Policy.ProducerFlowControl || st.MemoryLimit != 0 {
				t.Fatalf("queue keep after the refused request: %+v, want it with its message and its policy", st)
			}
		})
	}
}

func TestJolokiaDurableSubscriptions(t *testing.T) {
	v := startEnv(t, nil)
	c := v.conn("client-1")
	tp := message.TopicDest("prices")
	live, err := c.Subscribe(engine.SubSpec{Destination: tp, DurableName: "live", AckMode: engine.AckAuto, Prefetch: 10}, make(sink, 10))
	if err != nil {
		t.Fatal(err)
	}
	idle, err := c.Subscribe(engine.SubSpec{Destination: tp, DurableName: "idle", Selector: "n > 1", AckMode: engine.AckAuto, Prefetch: 10}, make(sink, 10))
	if err != nil {
		t.Fatal(err)
	}
	_ = live
	if err := c.CloseSubscription(idle); err != nil {
		t.Fatal(err)
	}
	base := "org.apache.activemq:brokerName=localhost,clientId=client-1,consumerId=Durable(client-1_%s),destinationName=prices,destinationType=Topic,endpoint=Consumer,type=Broker"
	broker := v.ok(v.get("/read/org.apache.activemq:type=Broker,brokerName=localhost/DurableTopicSubscribers,InactiveDurableTopicSubscribers")).(map[string]any)
	active := broker["DurableTopicSubscribers"].([]any)
	inactive := broker["InactiveDurableTopicSubscribers"].([]any)
	if len(active) != 1 || active[0].(map[string]any)["objectName"] != fmt.Sprintf(base, "live") {
		t.Errorf("DurableTopicSubscribers = %v", active)
	}
	if len(inactive) != 1 || inactive[0].(map[string]any)["objectName"] != fmt.Sprintf(base, "idle") {
		t.Errorf("InactiveDurableTopicSubscribers = %v", inactive)
	}
	sub := v.ok(v.get("/read/" + fmt.Sprintf(base, "idle"))).(map[string]any)
	if sub["SubscriptionName"] != "idle" || sub["ClientId"] != "client-1" || sub["Active"] != false || sub["Selector"] != "n > 1" || sub["DestinationName"] != "prices" {
		t.Errorf("idle subscription = %v", sub)
	}
	// endpoint=Consumer across the broker, as ActiveMQ's consumer query asks.
	found := v.ok(v.get("/search/org.apache.activemq:type=Broker,brokerName=*,destinationType=*,destinationName=*,endpoint=Consumer,clientId=client-1,consumerId=*")).([]any)
	if len(found) != 2 {
		t.Errorf("consumer search = %v, want 2", found)
	}
	code, out := v.do(http.MethodGet, "/exec/"+fmt.Sprintf(base, "idle")+"/destroy", nil, true)
	if r := response(out.(map[string]any)); code != 200 || r.status() != 200 {
		t.Fatalf("destroy: %d %v", code, r)
	}
	if subs := v.e.DurableSubs("client-1"); len(subs) != 1 || subs[0].Key.Name != "live" {
		t.Errorf("after destroy: %v, want only live", subs)
	}
}

func TestJolokiaConnections(t *testing.T) {
	v := startEnv(t, nil)
	v.conn("app-7")
	got := v.ok(v.get("/search/org.apache.activemq:type=Broker,brokerName=localhost,connector=clientConnectors,*")).([]any)
	want := []any{
		"org.apache.activemq:brokerName=localhost,connectionName=app-7,connectionViewType=clientId,connector=clientConnectors,connectorName=openwire,type=Broker",
		"org.apache.activemq:brokerName=localhost,connectionName=tcp_//127.0.0.1_40000,connectionViewType=remoteAddress,connector=clientConnectors,connectorName=openwire,type=Broker",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("connections = %v, want %v", got, want)
	}
	attrs := v.ok(v.get("/read/" + want[0].(string))).(map[string]any)
	if attrs["ClientId"] != "app-7" || attrs["RemoteAddress"] != "tcp://127.0.0.1:40000" || attrs["UserName"] != "alice" || attrs["Connected"] != true {
		t.Errorf("connection = %v", attrs)
	}
}

func TestJolokiaUptimeFormat(t *testing.T) {
	v := startEnv(t, nil)
	uptime := "/read/org.apache.activemq:type=Broker,brokerName=localhost/Uptime"
	for _, tc := range []struct {
		after time.Duration
		want  string
	}{
		{12345 * time.Millisecond, "12.345 seconds"},
		{2 * time.Minute, "2 minutes"},
		{63 * time.Minute, "1 hour 3 minutes"},
		{49*time.Hour + 30*time.Minute, "2 days 1 hour"}, // 2.0625 days: exact in binary, as Java computes it
	} {
		start := v.clock.Load()
		v.clock.Add(tc.after.Milliseconds())
		if got := v.ok(v.get(uptime)); got != tc.want {
			t.Errorf("after %v: Uptime %v, want %q", tc.after, got, tc.want)
		}
		v.clock.Store(start)
	}
}

func TestJolokiaTemporaryDestinations(t *testing.T) {
	v := startEnv(t, nil)
	c := v.conn("")
	tq, err := c.CreateTemp(false)
	if err != nil {
		t.Fatal(err)
	}
	v.send(c, tq, "reply")
	broker := "/read/org.apache.activemq:type=Broker,brokerName=localhost"
	temps := v.ok(v.get(broker + "/TemporaryQueues")).([]any)
	if len(temps) != 1 {
		t.Fatalf("TemporaryQueues = %v, want one", temps)
	}
	name := temps[0].(map[string]any)["objectName"].(string)
	if !strings.Contains(name, "destinationType=TempQueue") || strings.Contains(name, tq.Name) {
		t.Errorf("temporary queue named %s: want destinationType=TempQueue and the id encoded (no ':')", name)
	}
	if n := num(t, v.ok(v.get("/read/"+name+"/QueueSize"))); n != 1 {
		t.Errorf("QueueSize of the temporary queue = %d, want 1", n)
	}
	if q := v.ok(v.get(broker + "/Queues")).([]any); len(q) != 0 {
		t.Errorf("Queues lists %v; temporary queues are listed apart", q)
	}
	code, out := v.do(http.MethodGet, "/exec/"+name+"/purge()", nil, true)
	if r := response(out.(map[string]any)); code != 200 || r.status() != 400 {
		t.Errorf("purge of a temporary queue: HTTP %d %v, want status 400 (no such operation)", code, r)
	}
	if st := v.e.Stats(tq); st.QueueSize != 1 {
		t.Errorf("temporary queue holds %d after the refused purge", st.QueueSize)
	}
}

func TestJolokiaConsumers(t *testing.T) {
	v := startEnvEngine(t, func(o *engine.Options) { o.DisableAdvisories = false }, nil)
	q := message.QueueDest("orders")
	v.send(v.conn(""), q, "a", "b")
	c := v.conn("worker")
	s := make(sink, 10)
	if _, err := c.Subscribe(engine.SubSpec{Destination: q, Selector: "n >= 0", AckMode: engine.AckIndividual, Prefetch: 1}, s); err != nil {
		t.Fatal(err)
	}
	s.recv(t)
	broker := v.ok(v.get("/read/org.apache.activemq:type=Broker,brokerName=localhost/QueueSubscribers,TopicSubscribers")).(map[string]any)
	subs := broker["QueueSubscribers"].([]any)
	if len(subs) != 1 || len(broker["TopicSubscribers"].([]any)) != 0 {
		t.Fatalf("QueueSubscribers %v TopicSubscribers %v, want one and none", subs, broker["TopicSubscribers"])
	}
	name := subs[0].(map[string]any)["objectName"].(string)
	wantPrefix := "org.apache.activemq:brokerName=localhost,clientId=worker,consumerId=" + strings.NewReplacer(":", "_").Replace(c.ID()) + "_1_"
	if !strings.HasPrefix(name, wantPrefix) || !strings.HasSuffix(name, ",destinationName=orders,destinationType=Queue,endpoint=Consumer,type=Broker") {
		t.Errorf("consumer bean %s, want %s<n>,destinationName=orders,...", name, wantPrefix)
	}
	got := v.ok(v.get("/read/" + name)).(map[string]any)
	if got["ClientId"] != "worker" || got["ConnectionId"] != c.ID() || got["Selector"] != "n >= 0" || got["DestinationName"] != "orders" ||
		num(t, got["DispatchedQueueSize"]) != 1 || num(t, got["PrefetchSize"]) != 1 || got["DestinationQueue"] != true || got["Durable"] != false {
		t.Errorf("consumer = %v", got)
	}
	onQueue := v.ok(v.get("/read/" + queueBean("orders") + "/Subscriptions")).([]any)
	if len(onQueue) != 1 || onQueue[0].(map[string]any)["objectName"] != name {
		t.Errorf("queue Subscriptions = %v, want [%s]", onQueue, name)
	}
}

// TestJolokiaStop: the Broker bean's stop operation exists only when the
// server gives Options.Stop, calls it once per exec by an administrator,
// and is refused (not called) without the admin role.
func TestJolokiaStop(t *testing.T) {
	broker := "org.apache.activemq:type=Broker,brokerName=localhost"
	body := []byte(`{"type":"exec","mbean":"` + broker + `","operation":"stop"}`)
	none := startEnv(t, nil)
	if _, out := none.post(string(body), true); response(out.(map[string]any)).status() != 400 || !strings.Contains(fmt.Sprint(out), "No operation stop found") {
		t.Errorf("stop without Options.Stop: %v, want a 400 (no such operation)", out)
	}

	var stops atomic.Int32
	v := startEnv(t, func(o *jolokia.Options) { o.Stop = func() { stops.Add(1) } })
	if code, out := v.post(string(body), false); code != http.StatusForbidden || stops.Load() != 0 {
		t.Errorf("stop without the admin role: HTTP %d %v, %d stops; want 403 and none", code, out, stops.Load())
	}
	info := v.ok(v.get("/list/org.apache.activemq/type=Broker,brokerName=localhost/op/stop")).(map[string]any)
	if info["ret"] != "void" || info["desc"] != "Stop the broker and all its components." {
		t.Errorf("list of stop = %v", info)
	}
	code, out := v.post(string(body), true)
	if r := response(out.(map[string]any)); code != 200 || r.status() != 200 || r.value() != nil {
		t.Fatalf("stop: HTTP %d %v, want 200 and a null value", code, out)
	}
	if n := stops.Load(); n != 1 {
		t.Errorf("Options.Stop called %d times, want 1", n)
	}
}

// TestJolokiaHawtioRequests: requests shaped as hawtio's console sends
// them (a POSTed bulk request with its query parameters maxDepth,
// maxCollectionSize, ignoreErrors and canonicalNaming=false, and a
// processing config in the list request) are answered, with names in
// ActiveMQ's key order; the limits Wharf does not apply are ignored, not
// refused (docs/http.md, protocols/http/jolokia/doc.go).
func TestJolokiaHawtioRequests(t *testing.T) {
	v := startEnv(t, nil)
	ids := v.send(v.conn(""), message.QueueDest("orders"), "hello hawtio")
	broker := "org.apache.activemq:type=Broker,brokerName=localhost"
	code, out := v.do(http.MethodPost, "/?maxDepth=7&maxCollectionSize=50000&ignoreErrors=true&canonicalNaming=false", []byte(`[
		{"type":"version"},
		{"type":"list","path":"org.apache.activemq","config":{"maxDepth":9,"ignoreErrors":true}},
		{"type":"search","mbean":"org.apache.activemq:type=Broker,brokerName=*"},
		{"type":"read","mbean":"`+broker+`","attribute":["BrokerId","BrokerName","Uptime","TotalMessageCount"]},
		{"type":"read","mbean":"`+queueBean("orders")+`"},
		{"type":"exec","mbean":"`+queueBean("orders")+`","operation":"browse()","arguments":[]},
		{"type":"search","mbean":"org.apache.activemq:type=Broker,brokerName=*","config":{"canonicalNaming":true}}
	]`), true)
	if code != http.StatusOK {
		t.Fatalf("HTTP %d: %v", code, out)
	}
	list := out.([]any)
	if len(list) != 7 {
		t.Fatalf("%d answers to 7 requests: %v", len(list), list)
	}
	r := make([]response, len(list))
	for i, x := range list {
		r[i] = response(x.(map[string]any))
		if r[i].status() != 200 {
			t.Fatalf("request %d: status %d: %v", i, r[i].status(), r[i])
		}
	}
	if tree := r[1].value().(map[string]any); tree["brokerName=localhost,type=Broker"] == nil && tree["type=Broker,brokerName=localhost"] == nil {
		t.Errorf("list of org.apache.activemq lacks the broker bean: %v", slices.Sorted(maps.Keys(tree)))
	}
	if found := r[2].value().([]any); len(found) != 1 || found[0] != broker {
		t.Errorf("search with canonicalNaming=false = %v, want [%s]", found, broker)
	}
	if b := r[3].value().(map[string]any); b["BrokerName"] != "localhost" || num(t, b["TotalMessageCount"]) != 1 || len(b) != 4 {
		t.Errorf("broker read = %v", b)
	}
	if q := r[4].value().(map[string]any); num(t, q["QueueSize"]) != 1 || q["Name"] != "orders" {
		t.Errorf("queue read (every attribute) = QueueSize %v, Name %v", q["QueueSize"], q["Name"])
	}
	if msgs := r[5].value().([]any); len(msgs) != 1 || msgs[0].(map[string]any)["JMSMessageID"] != ids[0] || msgs[0].(map[string]any)["Text"] != "hello hawtio" {
		t.Errorf("browse = %v", msgs)
	}
	// A request's own config wins over the query parameters.
	if found := r[6].value().([]any); len(found) != 1 || found[0] != "org.apache.activemq:brokerName=localhost,type=Broker" {
		t.Errorf("search with its own canonicalNaming=true = %v, want the canonical name", found)
	}
}
