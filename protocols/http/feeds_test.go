package http_test

import (
	"encoding/xml"
	"net/http"
	"strings"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	httpserver "wharf/protocols/http"
	"wharf/security"
)

// The structs Telegraf's activemq input decodes the feeds into
// (influxdata/telegraf plugins/inputs/activemq/activemq.go): the same
// element and attribute names, the same Go types.
type telegrafQueues struct {
	XMLName    xml.Name        `xml:"queues"`
	QueueItems []telegrafQueue `xml:"queue"`
}

type telegrafQueue struct {
	XMLName xml.Name      `xml:"queue"`
	Name    string        `xml:"name,attr"`
	Stats   telegrafStats `xml:"stats"`
}

type telegrafTopics struct {
	XMLName    xml.Name        `xml:"topics"`
	TopicItems []telegrafTopic `xml:"topic"`
}

type telegrafTopic struct {
	XMLName xml.Name      `xml:"topic"`
	Name    string        `xml:"name,attr"`
	Stats   telegrafStats `xml:"stats"`
}

type telegrafSubscribers struct {
	XMLName         xml.Name             `xml:"subscribers"`
	SubscriberItems []telegrafSubscriber `xml:"subscriber"`
}

type telegrafSubscriber struct {
	XMLName          xml.Name      `xml:"subscriber"`
	ClientID         string        `xml:"clientId,attr"`
	SubscriptionName string        `xml:"subscriptionName,attr"`
	ConnectionID     string        `xml:"connectionId,attr"`
	DestinationName  string        `xml:"destinationName,attr"`
	Selector         string        `xml:"selector,attr"`
	Active           string        `xml:"active,attr"`
	Stats            telegrafStats `xml:"stats"`
}

type telegrafStats struct {
	XMLName             xml.Name `xml:"stats"`
	Size                int      `xml:"size,attr"`
	ConsumerCount       int      `xml:"consumerCount,attr"`
	EnqueueCount        int      `xml:"enqueueCount,attr"`
	DequeueCount        int      `xml:"dequeueCount,attr"`
	PendingQueueSize    int      `xml:"pendingQueueSize,attr"`
	DispatchedQueueSize int      `xml:"dispatchedQueueSize,attr"`
	DispatchedCounter   int      `xml:"dispatchedCounter,attr"`
	EnqueueCounter      int      `xml:"enqueueCounter,attr"`
	DequeueCounter      int      `xml:"dequeueCounter,attr"`
}

// The structs netdata's activemq collector decodes into
// (netdata/go.d.plugin modules/activemq/apiclient.go), int64 counts.
type netdataQueues struct {
	XMLName xml.Name       `xml:"queues"`
	Items   []netdataQueue `xml:"queue"`
}

type netdataQueue struct {
	XMLName xml.Name     `xml:"queue"`
	Name    string       `xml:"name,attr"`
	Stats   netdataStats `xml:"stats"`
}

type netdataTopics struct {
	XMLName xml.Name       `xml:"topics"`
	Items   []netdataTopic `xml:"topic"`
}

type netdataTopic struct {
	XMLName xml.Name     `xml:"topic"`
	Name    string       `xml:"name,attr"`
	Stats   netdataStats `xml:"stats"`
}

type netdataStats struct {
	XMLName       xml.Name `xml:"stats"`
	Size          int64    `xml:"size,attr"`
	ConsumerCount int64    `xml:"consumerCount,attr"`
	EnqueueCount  int64    `xml:"enqueueCount,attr"`
	DequeueCount  int64    `xml:"dequeueCount,attr"`
}

// feedBroker is a broker holding: queue orders with 3 messages sent, one
// consumed by an open consumer that still holds a second; a queue whose
// name needs escaping with one message; a temporary queue; topic prices
// with an active durable subscription (selector, 2 messages dispatched
// and unacknowledged) and an inactive one with 3 messages pending.
func feedBroker(t *testing.T) (*engine.Engine, string) {
	t.Helper()
	e := startBroker(t)
	c, err := e.Connect(engine.Credentials{Protocol: "test", ClientID: "active-client"})
	if err != nil {
		t.Fatal(err)
	}
	orders := message.QueueDest("orders")
	sendTo(t, c, orders, 3)
	got := make(sinkCh, 8)
	sub, err := c.Subscribe(engine.SubSpec{Destination: orders, Prefetch: 1, AckMode: engine.AckIndividual}, got)
	if err != nil {
		t.Fatal(err)
	}
	d := <-got
	acked := make(done, 1)
	if err := c.AckDurable(sub, d.ID, "", acked, 0); err != nil {
		t.Fatal(err)
	}
	if err := <-acked; err != nil {
		t.Fatal(err)
	}
	<-got // the second, now in flight
	sendTo(t, c, message.QueueDest(odd), 1)
	if _, err := c.CreateTemp(false); err != nil {
		t.Fatal(err)
	}

	prices := message.TopicDest("prices")
	gone, err := e.Connect(engine.Credentials{Protocol: "test", ClientID: "gone-client"})
	if err != nil {
		t.Fatal(err)
	}
	off, err := gone.Subscribe(engine.SubSpec{Destination: prices, DurableName: "nightly", Prefetch: 10, AckMode: engine.AckIndividual}, make(sinkCh, 10))
	if err != nil {
		t.Fatal(err)
	}
	if err := gone.CloseSubscription(off); err != nil {
		t.Fatal(err)
	}
	live := make(sinkCh, 10)
	if _, err := c.Subscribe(engine.SubSpec{Destination: prices, DurableName: "live", Selector: "region = 'eu'", Prefetch: 10, AckMode: engine.AckIndividual}, live); err != nil {
		t.Fatal(err)
	}
	for i, region := range []string{"eu", "us", "eu"} {
		m := &message.Message{Destination: prices, Body: []byte("p"), BodyType: message.TextBody, Persistent: true, Priority: 4}
		m.Props.Set("region", message.StringValue(region))
		sent := make(done, 1)
		if err := c.Send(m, "", sent, uint64(i)); err != nil {
			t.Fatal(err)
		}
		if err := <-sent; err != nil {
			t.Fatal(err)
		}
	}
	<-live
	<-live
	return e, c.ID()
}

// odd is a queue name that XML must escape, with characters outside
// ASCII and ISO-8859-1.
const odd = `a&b<"c">'é€`

func TestHTTPFeedsDecodeAsAgentsDo(t *testing.T) {
	r, err := security.ParseRealm([]byte(realm))
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, httpserver.Options{Authenticate: true, Auth: r.Authenticate})
	if code, _, _ := request(t, http.DefaultClient, "GET", url(s, "/admin/xml/queues.jsp"), "reader", "r3ad"); code != 503 {
		t.Errorf("feed before the broker is ready: %d, want 503", code)
	}
	e, connID := feedBroker(t)
	s.Ready(e)

	get := func(path string, into ...any) string {
		t.Helper()
		code, h, body := request(t, http.DefaultClient, "GET", url(s, path), "reader", "r3ad")
		if code != 200 {
			t.Fatalf("GET %s: %d %q", path, code, body)
		}
		if ct := h.Get("Content-Type"); ct != "text/xml;charset=ISO-8859-1" {
			t.Errorf("GET %s: Content-Type %q, want ActiveMQ's text/xml;charset=ISO-8859-1", path, ct)
		}
		for _, v := range into {
			if err := xml.Unmarshal([]byte(body), v); err != nil {
				t.Fatalf("GET %s: %v decoding %T from %q", path, err, v, body)
			}
		}
		return body
	}

	var tq telegrafQueues
	var nq netdataQueues
	body := get("/admin/xml/queues.jsp", &tq, &nq)
	if strings.Contains(body, "ID:") || len(tq.QueueItems) != 2 {
		t.Fatalf("queues.jsp lists %d queues, want orders and %q, not the temporary queue: %s", len(tq.QueueItems), odd, body)
	}
	// Sorted by name: "a&b..." before "orders".
	if q := tq.QueueItems[0]; q.Name != odd || q.Stats.Size != 1 || q.Stats.EnqueueCount != 1 {
		t.Errorf("escaped queue decoded as %+v, want name %q size 1", q, odd)
	}
	want := telegrafStats{XMLName: xml.Name{Local: "stats"}, Size: 2, ConsumerCount: 1, EnqueueCount: 3, DequeueCount: 1}
	if q := tq.QueueItems[1]; q.Name != "orders" || q.Stats != want {
		t.Errorf("Telegraf reads orders as %q %+v, want %+v", q.Name, q.Stats, want)
	}
	if q := nq.Items[1]; q.Name != "orders" || q.Stats.Size != 2 || q.Stats.ConsumerCount != 1 || q.Stats.EnqueueCount != 3 || q.Stats.DequeueCount != 1 {
		t.Errorf("netdata reads orders as %q %+v", q.Name, q.Stats)
	}
	if !strings.Contains(body, "<atom>queueBrowse/orders?view=rss&amp;amp;feedType=atom_1.0</atom>") {
		t.Errorf("queues.jsp lacks ActiveMQ 5.17's atom link: %s", body)
	}
	for _, c := range body {
		if c > 0x7e {
			t.Fatalf("queues.jsp has %q outside ASCII: %s", c, body)
		}
	}

	var tt telegrafTopics
	var nt netdataTopics
	body = get("/admin/xml/topics.jsp", &tt, &nt)
	var prices *telegrafTopic
	for i, tp := range tt.TopicItems {
		if tp.Name == "prices " { // ActiveMQ's JSP leaves a space after the name
			prices = &tt.TopicItems[i]
			if nt.Items[i].Name != "prices " || nt.Items[i].Stats.EnqueueCount != 3 {
				t.Errorf("netdata reads prices as %+v", nt.Items[i])
			}
		}
		if strings.HasPrefix(tp.Name, "ID:") {
			t.Errorf("topics.jsp lists temporary topic %q", tp.Name)
		}
	}
	if prices == nil {
		t.Fatalf("topics.jsp lacks prices: %s", body)
	}
	// The engine counts the inactive durable subscription among the
	// topic's consumers (as Jolokia's ConsumerCount reports it).
	st := e.Stats(message.TopicDest("prices"))
	if prices.Stats.EnqueueCount != 3 || int64(prices.Stats.ConsumerCount) != st.ConsumerCount || int64(prices.Stats.DequeueCount) != st.DequeueCount {
		t.Errorf("Telegraf reads prices as %+v, want 3 enqueued, %d consumers, %d dequeued", prices.Stats, st.ConsumerCount, st.DequeueCount)
	}

	var ts telegrafSubscribers
	body = get("/admin/xml/subscribers.jsp", &ts)
	wantSubs := []telegrafSubscriber{
		{ClientID: "active-client", SubscriptionName: "live", ConnectionID: connID, DestinationName: "prices", Selector: "region = 'eu'", Active: "yes",
			Stats: telegrafStats{PendingQueueSize: 0, DispatchedQueueSize: 2, DispatchedCounter: 2, EnqueueCounter: 2}},
		{ClientID: "gone-client", SubscriptionName: "nightly", ConnectionID: "NOTSET", DestinationName: "prices", Selector: "", Active: "no",
			Stats: telegrafStats{PendingQueueSize: 3, EnqueueCounter: 3}},
	}
	if len(ts.SubscriberItems) != len(wantSubs) {
		t.Fatalf("subscribers.jsp lists %d subscribers, want %d: %s", len(ts.SubscriberItems), len(wantSubs), body)
	}
	for i, w := range wantSubs {
		g := ts.SubscriberItems[i]
		g.XMLName, g.Stats.XMLName = xml.Name{}, xml.Name{}
		if g != w {
			t.Errorf("subscriber %d: %+v, want %+v", i, g, w)
		}
	}
}

func TestHTTPFeedsNeedALogin(t *testing.T) {
	r, err := security.ParseRealm([]byte(realm))
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, httpserver.Options{Authenticate: true, Auth: r.Authenticate})
	s.Ready(startBroker(t))
	for _, path := range []string{"/admin/xml/queues.jsp", "/admin/xml/topics.jsp", "/admin/xml/subscribers.jsp"} {
		for _, tc := range []struct {
			user, password string
			want           int
		}{{"", "", 401}, {"admin", "wrong", 401}, {"norole", "n0ne", 403}, {"reader", "r3ad", 200}, {"admin", "s3cret", 200}} {
			if code, _, body := request(t, http.DefaultClient, "GET", url(s, path), tc.user, tc.password); code != tc.want {
				t.Errorf("GET %s as %q: %d %q, want %d", path, tc.user, code, body, tc.want)
			}
		}
		if code, _, _ := request(t, http.DefaultClient, "POST", url(s, path), "admin", "s3cret"); code != 405 {
			t.Errorf("POST %s: %d, want 405", path, code)
		}
	}
}
