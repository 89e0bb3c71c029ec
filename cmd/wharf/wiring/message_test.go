package wiring

import (
	"io"
	"log/slog"
	"net/http"
	neturl "net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-stomp/stomp/v3"

	"wharf/engine/brokertest"
	"wharf/engine/config"
	"wharf/engine/message"
	httpserver "wharf/protocols/http"
)

// restBroker starts a broker of this build (STOMP among its connectors,
// opts applied) and a web server open on loopback serving it.
func restBroker(t *testing.T, opts ...brokertest.Option) (*brokertest.Broker, *httpserver.Server) {
	t.Helper()
	b := brokertest.Start(t, Factories(), opts...)
	s, err := httpserver.Listen(httpserver.Options{Addr: "127.0.0.1:0", RealmName: "ActiveMQRealm"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.Ready(b.Engine())
	return b, s
}

// restDo makes one request and returns the status, headers and body.
func restDo(t *testing.T, method, u, user, password string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// TestWiringRESTMessageToSTOMPAndBack: a message POSTed to /api/message
// reaches a STOMP subscriber with its headers and properties, and one
// a STOMP client sends is consumed by a GET.
func TestWiringRESTMessageToSTOMPAndBack(t *testing.T) {
	b, s := restBroker(t)
	sc, err := stomp.Dial("tcp", b.STOMPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Disconnect()
	sub, err := sc.Subscribe("/queue/orders", stomp.AckAuto)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + s.Addr().String() + "/api/message/orders?"
	p := neturl.Values{"type": {"queue"}, "body": {"héllo"}, "JMSPriority": {"6"}, "JMSCorrelationID": {"c-9"}, "region": {"eu"}}
	code, h, body := restDo(t, "POST", base+p.Encode(), "", "")
	if code != 200 || body != "Message sent" {
		t.Fatalf("POST: %d %q", code, body)
	}
	select {
	case m := <-sub.C:
		if m.Err != nil {
			t.Fatal(m.Err)
		}
		if string(m.Body) != "héllo" {
			t.Errorf("STOMP body %q, want héllo", m.Body)
		}
		for k, want := range map[string]string{
			"message-id": h.Get("messageID"), "persistent": "true", "priority": "6", "correlation-id": "c-9", "region": "eu",
		} {
			if got := m.Header.Get(k); got != want {
				t.Errorf("STOMP header %s: %q, want %q", k, got, want)
			}
		}
		if m.Header.Get("content-length") != "" {
			t.Errorf("STOMP sees a bytes message (content-length %s); the servlet sends text", m.Header.Get("content-length"))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("STOMP received nothing")
	}

	if err := sc.Send("/queue/back", "text/plain", []byte("from stomp"), stomp.SendOpt.Header("step", "3"), stomp.SendOpt.NoContentLength); err != nil {
		t.Fatal(err)
	}
	code, h, body = restDo(t, "GET", "http://"+s.Addr().String()+"/api/message/back?type=queue&readTimeout=5000", "", "")
	if code != 200 || body != "from stomp" || h.Get("step") != "3" || h.Get("destination") != "queue://back" {
		t.Errorf("GET of STOMP's message: %d %q step %q destination %q", code, body, h.Get("step"), h.Get("destination"))
	}
}

// TestWiringRESTMessageSurvivesRestart: on KahaDB a persistent message
// POSTed is answered 200 once stored, and a restarted broker gives it to
// a GET; a non-persistent one is gone.
func TestWiringRESTMessageSurvivesRestart(t *testing.T) {
	b, s := restBroker(t, brokertest.WithKahaDB())
	base := "http://" + s.Addr().String() + "/api/message/jobs?type=queue&"
	if code, _, body := restDo(t, "POST", base+"body=kept", "", ""); code != 200 {
		t.Fatalf("POST persistent: %d %q", code, body)
	}
	if code, _, body := restDo(t, "POST", base+"body=lost&JMSDeliveryMode=non_persistent", "", ""); code != 200 {
		t.Fatalf("POST non-persistent: %d %q", code, body)
	}
	b.Restart()
	s.Ready(b.Engine())
	if code, _, body := restDo(t, "GET", base+"readTimeout=5000", "", ""); code != 200 || body != "kept" {
		t.Fatalf("GET after the restart: %d %q, want the persistent message", code, body)
	}
	if code, _, body := restDo(t, "GET", base+"readTimeout=0", "", ""); code != 204 {
		t.Fatalf("second GET after the restart: %d %q, want 204 (the non-persistent message is gone)", code, body)
	}
}

// TestWiringRESTMessageAuthorizationPlugin: the web server's logins and
// the REST connections' are the broker's simple authentication plugin's,
// and its authorization map decides what a login may send to.
func TestWiringRESTMessageAuthorizationPlugin(t *testing.T) {
	y := `security:
  authentication:
    kind: simple
    users:
      - {username: ops, password: opspw, groups: admins}
      - {username: feeder, password: feedpw, groups: [admins, producers]}
  authorization:
    entries:
      - {queue: "orders.>", read: [producers], write: [producers], admin: [producers]}
      - {topic: "ActiveMQ.Advisory.>", read: [admins], write: [admins], admin: [admins]}
`
	c, err := config.ParseYAML(strings.NewReader(y), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	b := brokertest.Start(t, Factories(), brokertest.WithConfig(func(bc *config.Config) { bc.Security = c.Security }))
	s, err := StartHTTP(c, true, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.Ready(b.Engine())
	u := "http://" + s.Addr().String() + "/api/message/orders.eu?type=queue&body=x"
	code, _, body := restDo(t, "POST", u, "ops", "opspw")
	if code != 403 || !strings.Contains(body, "ops") {
		t.Errorf("ops (not a producer) sends to orders.eu: %d %q, want 403 naming the user", code, body)
	}
	if code, _, body := restDo(t, "POST", u, "feeder", "feedpw"); code != 200 {
		t.Errorf("feeder sends to orders.eu: %d %q", code, body)
	}
	if code, _, body := restDo(t, "POST", u, "feeder", "wrong"); code != 401 {
		t.Errorf("wrong password: %d %q, want 401", code, body)
	}
	if st := b.Engine().Stats(message.QueueDest("orders.eu")); st.EnqueueCount != 1 {
		t.Errorf("orders.eu took %d messages, want feeder's 1", st.EnqueueCount)
	}
}

// TestWiringRESTMessageCurl drives /api/message with curl, as operators
// do: a form POST, then a GET, whose headers name the destination and
// the message's properties as the servlet names them.
func TestWiringRESTMessageCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed: apt-get install curl")
	}
	_, s := restBroker(t)
	base := "http://" + s.Addr().String() + "/api/message/orders?type=queue"
	out, err := exec.Command(curl, "-sS", "-f", "-d", "body=from curl", "-d", "JMSType=note", "-d", "orderRef=7", base).CombinedOutput()
	if err != nil || string(out) != "Message sent" {
		t.Fatalf("curl POST: %v %q", err, out)
	}
	out, err = exec.Command(curl, "-sS", "-f", "-i", base+"&readTimeout=5000").CombinedOutput()
	if err != nil {
		t.Fatalf("curl GET: %v %q", err, out)
	}
	resp := strings.ReplaceAll(string(out), "\r\n", "\n")
	if !strings.HasPrefix(resp, "HTTP/1.1 200") || !strings.HasSuffix(resp, "\n\nfrom curl") || !strings.Contains(resp, "\ndestination: queue://orders\n") || !strings.Contains(resp, "\norderRef: 7\n") {
		t.Errorf("curl GET: %q", resp)
	}
	out, err = exec.Command(curl, "-sS", "-o", "/dev/null", "-w", "%{http_code}", base+"&readTimeout=0").CombinedOutput()
	if err != nil || string(out) != "204" {
		t.Errorf("curl GET of the empty queue: %v %q, want 204", err, out)
	}
}
