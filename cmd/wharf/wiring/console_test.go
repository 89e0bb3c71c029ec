package wiring

import (
	"context"
	"html"
	"net/http"
	neturl "net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/go-stomp/stomp/v3"

	"wharf/engine"
	"wharf/protocols/openwire/client"
)

// The console's connections page lists a client of each protocol with its
// client id, and its Close button ends each: the client sees its
// connection go and the broker no longer lists it.
func TestWiringConsoleClosesConnections(t *testing.T) {
	b, s := restBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	gone := map[string]<-chan struct{}{}

	sc, err := stomp.Dial("tcp", b.STOMPAddr(), stomp.ConnOpt.Header("client-id", "stomp-app"))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := sc.Subscribe("/queue/console.close", stomp.AckAuto)
	if err != nil {
		t.Fatal(err)
	}
	stompGone := make(chan struct{})
	go func() {
		for range sub.C { // closed when the connection is
		}
		close(stompGone)
	}()
	gone["stomp-app"] = stompGone

	mqttGone := make(chan struct{})
	mo := paho.NewClientOptions().AddBroker("tcp://" + b.MQTTAddr()).SetClientID("mqtt-app").SetAutoReconnect(false).
		SetConnectionLostHandler(func(paho.Client, error) { close(mqttGone) })
	mc := paho.NewClient(mo)
	if tok := mc.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("mqtt connect: %v", tok.Error())
	}
	gone["mqtt-app"] = mqttGone

	ac, err := amqp.Dial(ctx, "amqp://"+b.AMQPAddr(), &amqp.ConnOptions{ContainerID: "amqp-app", SASLType: amqp.SASLTypeAnonymous()})
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Close()
	gone["amqp-app"] = ac.Done()

	o := client.DefaultOptions()
	o.ClientID = "openwire-app"
	oc, err := client.Dial(ctx, b.Addr("openwire").String(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()
	gone["openwire-app"] = oc.Done()

	base := "http://" + s.Addr().String() + "/admin/"
	code, _, page := restDo(t, "GET", base+"connections.jsp", "", "")
	if code != 200 {
		t.Fatalf("connections.jsp: HTTP %d", code)
	}
	tok := regexp.MustCompile(`name="secret" value="([^"]+)"`).FindStringSubmatch(page)
	if tok == nil {
		t.Fatal("connections.jsp has no form")
	}
	ids := map[string]string{}
	for _, ci := range b.Engine().Connections() {
		ids[ci.ClientID] = ci.ID
	}
	nc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for cid, done := range gone {
		id := ids[cid]
		if id == "" || !strings.Contains(page, cid) || !strings.Contains(page, id) {
			t.Fatalf("connections.jsp does not list %s (connection %q)", cid, id)
		}
		form := neturl.Values{"connectionID": {id}, "secret": {html.UnescapeString(tok[1])}}
		resp, err := nc.PostForm(base+"closeConnection.action", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("close %s: HTTP %d", cid, resp.StatusCode)
		}
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatalf("%s: the client's connection is still open", cid)
		}
		// The session releases the engine's connection as it winds
		// down: wait for that (a condition with a deadline).
		for listed(b.Engine().Connections(), id) {
			if ctx.Err() != nil {
				t.Fatalf("%s: the broker still lists connection %s", cid, id)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func listed(cs []engine.ConnectionInfo, id string) bool {
	for _, c := range cs {
		if c.ID == id {
			return true
		}
	}
	return false
}
