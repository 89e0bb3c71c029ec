package main

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/go-stomp/stomp/v3"
	"github.com/gorilla/websocket"
)

// wsStream carries a byte stream over a WebSocket: each Write is one
// text message (STOMP frames, as stomp.js sends them), Read goes through
// the messages received in order. go-stomp runs over it unchanged.
type wsStream struct {
	*websocket.Conn
	r io.Reader
}

func (c *wsStream) Read(p []byte) (int, error) {
	for {
		if c.r == nil {
			_, r, err := c.NextReader()
			if err != nil {
				return 0, err
			}
			c.r = r
		}
		n, err := c.r.Read(p)
		if err == io.EOF {
			c.r = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (c *wsStream) Write(p []byte) (int, error) {
	if err := c.WriteMessage(websocket.TextMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// stompOverWS connects go-stomp to url (ws:// or wss://) offering
// v12.stomp, as user/password.
func stompOverWS(t *testing.T, url string, tc *tls.Config, user, password string) (*stomp.Conn, error) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"v12.stomp"}, HandshakeTimeout: 10 * time.Second, TLSClientConfig: tc}
	ws, resp, err := d.Dial(url, nil)
	if err != nil {
		t.Fatalf("WebSocket dial %s: %v", url, err)
	}
	if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != "v12.stomp" {
		t.Errorf("%s: subprotocol %q, want v12.stomp", url, got)
	}
	c, err := stomp.Connect(&wsStream{Conn: ws}, stomp.ConnOpt.Login(user, password), stomp.ConnOpt.Host("localhost"), stomp.ConnOpt.HeartBeat(0, 0))
	if err != nil {
		ws.Close()
		return nil, err
	}
	t.Cleanup(func() { c.Disconnect(); ws.Close() })
	return c, nil
}

// mqttOverWS connects paho to url (ws:// or wss://) as user/password.
func mqttOverWS(t *testing.T, url string, tc *tls.Config, id, user, password string) (paho.Client, error) {
	t.Helper()
	o := paho.NewClientOptions().AddBroker(url).SetClientID(id).SetUsername(user).SetPassword(password).
		SetAutoReconnect(false).SetConnectRetry(false).SetConnectTimeout(10 * time.Second).SetProtocolVersion(4)
	if tc != nil {
		o.SetTLSConfig(tc)
	}
	c := paho.NewClient(o)
	tok := c.Connect()
	if !tok.WaitTimeout(10 * time.Second) {
		t.Fatalf("MQTT over %s: no CONNACK within 10s", url)
	}
	if err := tok.Error(); err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Disconnect(0) })
	return c, nil
}

// wsSecurity is the broker's authentication plugin and authorization map
// in the WebSocket test: app may use topics ws.>, other may log in but
// not send there.
const wsSecurity = `security:
  authentication:
    kind: simple
    users:
      - {username: app, password: apppw, groups: [apps]}
      - {username: other, password: otherpw, groups: [others]}
  authorization:
    entries:
      - {topic: "ws.>", read: [apps], write: [apps], admin: [apps]}
      - {topic: "ActiveMQ.Advisory.>", read: [everyone], write: [everyone], admin: [everyone]}
`

// TestWharfRunWebSocketPaths: with http.websocket [stomp, mqtt], the web
// server serves STOMP at /stomp and MQTT at /mqtt, on its plain and its
// HTTPS port, to unchanged clients (go-stomp over gorilla/websocket,
// paho's ws:// and wss:// URLs), without the web server's own login;
// the broker's authentication plugin and authorization map apply as on
// any connector; a plain GET is told to upgrade; SIGTERM closes the
// connections and the broker exits 0.
func TestWharfRunWebSocketPaths(t *testing.T) {
	dir := t.TempDir()
	ks, err := os.ReadFile("../../security/testdata/tls/broker.ks")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dir+"/broker.ks", ks, 0o644)
	w := startRunConf(t, dir, "{port: 0, realm: realm.properties, websocket: [stomp, mqtt], https: {port: 0, key_store: broker.ks, key_store_password: password}}", wsSecurity)
	listening := w.logged("web server listening")
	if len(listening) != 1 || listening[0]["websocket"] != "/mqtt,/stomp" {
		t.Fatalf("web server listening: %v, want websocket /mqtt,/stomp", listening)
	}
	httpsAddr, _ := listening[0]["https_addr"].(string)
	ca, err := os.ReadFile("../../security/testdata/tls/ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	tc := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}

	// Plain port: MQTT published at /mqtt reaches a STOMP subscriber at
	// /stomp and back.
	sc, err := stompOverWS(t, "ws://"+w.webAddr+"/stomp", nil, "app", "apppw")
	if err != nil {
		t.Fatalf("STOMP over ws://.../stomp as app: %v", err)
	}
	sub, err := sc.Subscribe("/topic/ws.t", stomp.AckAuto)
	if err != nil {
		t.Fatal(err)
	}
	// A receipt after the SUBSCRIBE: the broker has the subscription.
	if err := sc.Send("/topic/ws.sync", "text/plain", nil, stomp.SendOpt.Receipt); err != nil {
		t.Fatal(err)
	}
	mc, err := mqttOverWS(t, "ws://"+w.webAddr+"/mqtt", nil, "ws-plain", "app", "apppw")
	if err != nil {
		t.Fatalf("MQTT over ws://.../mqtt as app: %v", err)
	}
	fromSTOMP := make(chan string, 4)
	if tok := mc.Subscribe("ws/t", 1, func(_ paho.Client, m paho.Message) { fromSTOMP <- string(m.Payload()) }); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("MQTT subscribe: %v", tok.Error())
	}
	if tok := mc.Publish("ws/t", 1, false, "from mqtt"); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("MQTT publish: %v", tok.Error())
	}
	recvSTOMP := func(want string) {
		t.Helper()
		select {
		case m := <-sub.C:
			if m.Err != nil || string(m.Body) != want {
				t.Fatalf("STOMP over WebSocket got %v %q, want %q", m.Err, m.Body, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("STOMP over WebSocket: no %q within 10s", want)
		}
	}
	recvMQTT := func(want string) {
		t.Helper()
		select {
		case got := <-fromSTOMP:
			if got != want {
				t.Fatalf("MQTT over WebSocket got %q, want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("MQTT over WebSocket: no %q within 10s", want)
		}
	}
	recvSTOMP("from mqtt")
	recvMQTT("from mqtt") // its own publication, as MQTT 3.1.1 delivers it
	if err := sc.Send("/topic/ws.t", "text/plain", []byte("from stomp"), stomp.SendOpt.Receipt); err != nil {
		t.Fatal(err)
	}
	recvMQTT("from stomp")
	recvSTOMP("from stomp")

	// HTTPS port: paho's wss:// URL.
	ms, err := mqttOverWS(t, "wss://"+httpsAddr+"/mqtt", tc, "ws-tls", "app", "apppw")
	if err != nil {
		t.Fatalf("MQTT over wss://.../mqtt as app: %v", err)
	}
	if tok := ms.Publish("ws/t", 1, false, "over tls"); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("MQTT publish over wss: %v", tok.Error())
	}
	recvSTOMP("over tls")
	recvMQTT("over tls")
	if _, err := stompOverWS(t, "wss://"+httpsAddr+"/stomp", tc, "app", "apppw"); err != nil {
		t.Errorf("STOMP over wss://.../stomp: %v", err)
	}

	// The broker's authentication and authorization, as on a connector.
	if _, err := mqttOverWS(t, "ws://"+w.webAddr+"/mqtt", nil, "ws-bad", "app", "wrong"); err == nil || !strings.Contains(err.Error(), "not Authorized") {
		t.Errorf("MQTT over WebSocket with a wrong password: %v, want refused", err)
	}
	if _, err := stompOverWS(t, "ws://"+w.webAddr+"/stomp", nil, "app", "wrong"); err == nil {
		t.Error("STOMP over WebSocket with a wrong password: connected, want refused")
	}
	oc, err := stompOverWS(t, "ws://"+w.webAddr+"/stomp", nil, "other", "otherpw")
	if err != nil {
		t.Fatalf("STOMP over WebSocket as other: %v", err)
	}
	if err := oc.Send("/topic/ws.t", "text/plain", []byte("not allowed"), stomp.SendOpt.Receipt); err == nil {
		t.Error("STOMP over WebSocket: other sent to ws.t, which the authorization map keeps to apps")
	}

	// Not a WebSocket request: 426 naming the protocol to upgrade to.
	resp, err := http.Get("http://" + w.webAddr + "/stomp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUpgradeRequired || resp.Header.Get("Upgrade") != "websocket" {
		t.Errorf("plain GET /stomp: %d %q, want 426 with Upgrade: websocket", resp.StatusCode, resp.Header.Get("Upgrade"))
	}

	// A stop closes the WebSocket connections; the broker exits 0.
	rest := w.stop(t)
	select {
	case m, ok := <-sub.C:
		if ok && m.Err == nil {
			t.Errorf("STOMP subscription after the stop: message %q, want the connection closed", m.Body)
		}
	case <-time.After(10 * time.Second):
		t.Error("STOMP over WebSocket still open 10s after the broker stopped")
	}
	if !strings.Contains(strings.Join(rest, "\n"), "broker stopped") {
		t.Errorf("log after SIGTERM: %q", rest)
	}
}
