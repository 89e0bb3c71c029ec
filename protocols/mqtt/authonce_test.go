package mqtt

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"testing"

	"wharf/engine"
	"wharf/protocols/internal/conntest"
	"wharf/protocols/mqtt/wire"
	"wharf/protocols/transport"
)

// One CONNECT runs the Authenticator exactly once, whether the login is
// accepted or refused, and whether it is refused by the Authenticator or
// later (a client id an engine connection holds): the subject Authenticate
// gives is connected as it is (engine.ConnectAuthenticated), so JAAS login
// modules run, and log, once per login, and a reload cannot give a CONNECT
// two answers. A CONNECT refused for its credentials leaves the session
// holding its client id connected.
func TestMQTTSessionAuthenticatesOnce(t *testing.T) {
	cases := []struct {
		name string
		// hold is who holds client id "dev1" before the CONNECT: "" no
		// one, "mqtt" an MQTT session, "engine" an engine connection.
		hold       string
		user, pass string
		cert       string // CN of a client certificate, on a TLS connection
		want311    byte
		want5      byte
	}{
		{"accepted", "", "user", "secret", "", wire.ConnAccepted, wire.ReasonSuccess},
		{"accepted by certificate", "", "", "", "cert-user", wire.ConnAccepted, wire.ReasonSuccess},
		{"bad password", "", "user", "wrong", "", wire.ConnRefusedNotAuthorized, wire.ReasonBadUserNameOrPassword},
		{"unknown certificate", "", "", "", "stranger", wire.ConnRefusedNotAuthorized, wire.ReasonBadUserNameOrPassword},
		{"takes the id over", "mqtt", "user", "secret", "", wire.ConnAccepted, wire.ReasonSuccess},
		{"refused, id held by a session", "mqtt", "user", "wrong", "", wire.ConnRefusedNotAuthorized, wire.ReasonBadUserNameOrPassword},
		{"refused, id held by the engine", "engine", "user", "secret", "", wire.ConnRefusedIdentifierRejected, wire.ReasonClientIDNotValid},
	}
	for _, v := range []byte{wire.Version311, wire.Version5} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s %s", map[byte]string{wire.Version311: "3.1.1", wire.Version5: "5"}[v], tc.name), func(t *testing.T) {
				e, srv, auth := securedMQTT(t, false)
				var holder *conntest.Conn
				var holderH transport.Handler
				switch tc.hold {
				case "mqtt":
					holder = &conntest.Conn{}
					h := srv.Handler(holder)
					h.OnData(connectPacket(wire.Version311, "dev1", "user", "secret"))
					if got := holder.Written(); !bytes.Equal(got, []byte{0x20, 2, 0, 0}) {
						t.Fatalf("holder CONNACK % x", got)
					}
					holderH = h
				case "engine":
					c, err := e.Connect(engine.Credentials{Username: "user", Password: "secret", ClientID: "dev1", Protocol: "openwire"})
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
				}
				before := len(auth.Seen())

				var out func() []byte
				var h transport.Handler
				if tc.cert != "" {
					c := &conntest.TLSConn{Certs: []*x509.Certificate{conntest.Cert(tc.cert)}}
					h, out = srv.Handler(c), c.Written
				} else {
					c := &conntest.Conn{}
					h, out = srv.Handler(c), c.Written
				}
				h.OnData(connectPacket(v, "dev1", tc.user, tc.pass))
				got := out()
				want := tc.want311
				if v == wire.Version5 {
					want = tc.want5
				}
				if len(got) < 4 || got[0] != 0x20 || got[3] != want {
					t.Fatalf("CONNACK % x, want code %#x", got, want)
				}
				seen := auth.Seen()[before:]
				if len(seen) != 1 {
					t.Fatalf("the Authenticator ran %d times for one CONNECT, want 1: %+v", len(seen), seen)
				}
				if seen[0].ClientID != "dev1" || seen[0].Protocol != "mqtt" {
					t.Fatalf("the Authenticator saw %+v", seen[0])
				}
				if tc.hold == "mqtt" && want != wire.ConnAccepted && want != wire.ReasonSuccess {
					// The refused CONNECT took nothing from the holder: it
					// is open and still answers.
					if holder.Closed() {
						t.Fatal("a refused CONNECT disconnected the session holding its client id")
					}
					from := len(holder.Written())
					holderH.OnData(wire.AppendPacket(nil, &wire.Packet{Type: wire.PINGREQ}, wire.Version311))
					if got := holder.Written()[from:]; !bytes.Equal(got, []byte{0xd0, 0}) {
						t.Fatalf("holder answered PINGREQ with % x, want PINGRESP", got)
					}
				}
			})
		}
	}
}
