package mqtt

import (
	"bytes"
	"crypto/x509"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/internal/conntest"
	"wharf/protocols/mqtt/wire"
	"wharf/storage/memory"
)

func securedMQTT(t *testing.T, anonymous bool) (*engine.Engine, *Server, *conntest.Auth) {
	t.Helper()
	auth := &conntest.Auth{Anonymous: anonymous}
	e, err := engine.New(engine.Options{Shards: 2, Store: memory.New(), TickInterval: time.Hour,
		Authenticator: auth, Authorizer: auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, NewServer(e, DefaultOptions()), auth
}

func connectPacket(v byte, clientID, user, pass string) []byte {
	c := &wire.Connect{ProtocolName: "MQTT", ProtocolLevel: v, CleanSession: true, ClientID: clientID}
	if v == wire.Version31 {
		c.ProtocolName = "MQIsdp"
	}
	if user != "" {
		c.UsernameFlag, c.Username = true, user
	}
	if pass != "" {
		c.PasswordFlag, c.Password = true, []byte(pass)
	}
	return wire.AppendPacket(nil, &wire.Packet{Type: wire.CONNECT, Connect: c}, v)
}

// waitOut polls tc's output from offset from until it holds want (bounded).
func waitOut(t *testing.T, tc *conntest.Conn, from int, want []byte) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !bytes.Contains(tc.Written()[from:], want) {
		if time.Now().After(deadline) {
			t.Fatalf("no % x in output % x", want, tc.Written()[from:])
		}
		time.Sleep(time.Millisecond) // poll interval, not synchronisation
	}
}

// A refused MQTT 3.1/3.1.1 login gets CONNACK 5 (not authorized), as
// ActiveMQ 5.17 answers a wrong password, an unknown user and no
// credentials alike (observed), and the close; MQTT 5 gets 0x86 with
// ActiveMQ's text as the reason string. A refused CONNECT does not take
// the client id from the session that holds it.
func TestMQTTLoginRefused(t *testing.T) {
	cases := []struct{ name, user, pass string }{
		{"bad password", "user", "wrong"},
		{"unknown user", "nobody", "secret"},
		{"no credentials", "", ""},
	}
	for _, v := range []byte{wire.Version31, wire.Version311, wire.Version5} {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, srv, _ := securedMQTT(t, false)
				holder := &conntest.Conn{}
				srv.Handler(holder).OnData(connectPacket(wire.Version311, "dev1", "user", "secret"))
				if got := holder.Written(); !bytes.Equal(got, []byte{0x20, 2, 0, 0}) {
					t.Fatalf("holder CONNACK % x", got)
				}
				tc := &conntest.Conn{}
				srv.Handler(tc).OnData(connectPacket(v, "dev1", c.user, c.pass))
				got := tc.Written()
				if v == wire.Version5 {
					if len(got) < 4 || got[0] != 0x20 || got[3] != wire.ReasonBadUserNameOrPassword ||
						!bytes.Contains(got, []byte("User name ["+c.user+"] or password is invalid.")) {
						t.Fatalf("v5 CONNACK % x", got)
					}
				} else if !bytes.Equal(got, []byte{0x20, 2, 0, wire.ConnRefusedNotAuthorized}) {
					t.Fatalf("v%d CONNACK % x, want 20 02 00 05", v, got)
				}
				if !tc.Closed() {
					t.Fatal("refused connection left open")
				}
				if holder.Closed() {
					t.Fatal("a refused CONNECT took the client id over")
				}
			})
		}
	}
}

func TestMQTTCredentials(t *testing.T) {
	_, srv, auth := securedMQTT(t, true)
	anon := &conntest.Conn{}
	srv.Handler(anon).OnData(connectPacket(wire.Version311, "a", "", ""))
	cert := &conntest.TLSConn{Certs: []*x509.Certificate{conntest.Cert("cert-user")}}
	srv.Handler(cert).OnData(connectPacket(wire.Version311, "b", "", ""))
	for name, out := range map[string][]byte{"anonymous": anon.Written(), "certificate": cert.Written()} {
		if !bytes.Equal(out, []byte{0x20, 2, 0, 0}) {
			t.Fatalf("%s login: CONNACK % x", name, out)
		}
	}
	seen := auth.Seen()
	last := seen[len(seen)-1]
	if last.Protocol != "mqtt" || !last.TLS || len(last.Certs) != 1 || last.Certs[0].Subject.CommonName != "cert-user" || last.ClientID != "b" {
		t.Fatalf("authenticator saw %+v", last)
	}
	if seen[0].TLS || seen[0].Certs != nil {
		t.Fatalf("plain connection reported TLS: %+v", seen[0])
	}
}

// Refused publishes and subscriptions, as ActiveMQ 5.17 answers them
// (observed): 3.1.1 PUBACK/PUBREC as if stored and SUBACK 0x80, 3.1 the
// requested QoS, MQTT 5 reason 0x87; the connection stays; nothing is
// stored.
func TestMQTTNotAuthorized(t *testing.T) {
	e, srv, _ := securedMQTT(t, false)
	pub := func(v byte, topic string, qos byte, pid uint16) []byte {
		return wire.AppendPacket(nil, &wire.Packet{Type: wire.PUBLISH, Topic: topic, QoS: qos, PacketID: pid, Payload: []byte("x")}, v)
	}
	sub := func(v byte, filter string, qos byte, pid uint16) []byte {
		return wire.AppendPacket(nil, &wire.Packet{Type: wire.SUBSCRIBE, PacketID: pid, Subscriptions: []wire.Subscription{{Filter: filter, QoS: qos}}}, v)
	}
	type step struct {
		in   []byte
		want []byte
	}
	for _, tc := range []struct {
		v     byte
		steps []step
	}{
		{wire.Version311, []step{
			{pub(wire.Version311, "secret/x", 1, 7), []byte{0x40, 2, 0, 7}},
			{pub(wire.Version311, "secret/x", 2, 9), []byte{0x50, 2, 0, 9}},
			{wire.AppendPacket(nil, &wire.Packet{Type: wire.PUBREL, PacketID: 9}, wire.Version311), []byte{0x70, 2, 0, 9}},
			{pub(wire.Version311, "secret/x", 0, 0), nil},
			{sub(wire.Version311, "secret/#", 1, 3), []byte{0x90, 3, 0, 3, 0x80}},
			{sub(wire.Version311, "open", 1, 4), []byte{0x90, 3, 0, 4, 1}},
		}},
		{wire.Version31, []step{
			{sub(wire.Version31, "secret/x", 1, 3), []byte{0x90, 3, 0, 3, 1}},
			{pub(wire.Version31, "secret/x", 1, 5), []byte{0x40, 2, 0, 5}},
		}},
		{wire.Version5, []step{
			{pub(wire.Version5, "secret/x", 1, 7), []byte{0x40, 3, 0, 7, wire.ReasonNotAuthorized}},
			{sub(wire.Version5, "secret/x", 1, 3), []byte{0x90, 4, 0, 3, 0, wire.ReasonNotAuthorized}},
		}},
	} {
		c := &conntest.Conn{}
		h := srv.Handler(c)
		h.OnData(connectPacket(tc.v, "", "user", "secret"))
		for i, st := range tc.steps {
			from := len(c.Written())
			h.OnData(st.in)
			if st.want != nil {
				waitOut(t, c, from, st.want)
			}
			if c.Closed() {
				t.Fatalf("v%d step %d: connection closed; ActiveMQ keeps it", tc.v, i)
			}
		}
		h.OnClose(nil)
	}
	if n := e.Stats(message.TopicDest("secret.x")).EnqueueCount; n != 0 {
		t.Fatalf("%d refused publishes stored", n)
	}
}
