package conformance

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"

	"wharf/cmd/wharf/wiring"
	"wharf/conform"
	"wharf/engine/brokertest"
	"wharf/engine/config"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// Seed 000's security section ("Sécuriser le broker"): each snippet in a
// complete activemq.xml (testdata/security/seed000-*.xml), loaded as
// `wharf run` loads it and started in process with every port 0, then
// exercised with real clients. What is asserted is what ActiveMQ 5.17 does
// with the same file (the texts are ActiveMQ's; the security matrix,
// security_matrix_test.go, records ActiveMQ's whole table).

// seedUsers are seed 000's users with the test passwords of
// testdata/security (seed000-credentials.properties, users.properties).
var seedUsers = []struct{ name, password string }{
	{"orders-svc", "orders-pw"},
	{"fulfilment", "fulfilment-pw"},
	{"ops", "ops-pw"},
}

// tlsFixtures is the directory of the TLS test fixtures.
var tlsFixtures = filepath.Join("..", "security", "testdata", "tls")

// startSeedBroker loads file through config.LoadFileWith (placeholders:
// activemq.conf is the file's directory, wharf.tls.dir the TLS fixtures)
// and starts it in process on a memory store with every port 0.
func startSeedBroker(t *testing.T, file string) *brokertest.Broker {
	t.Helper()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	tlsDir, err := filepath.Abs(tlsFixtures)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := config.LoadFileWith(abs, map[string]string{
		"activemq.conf": filepath.Dir(abs),
		"activemq.data": t.TempDir(),
		"wharf.tls.dir": tlsDir,
	}, config.LoadOptions{Decrypt: wiring.Decrypt})
	if err != nil {
		t.Fatalf("load %s: %v", file, err)
	}
	return brokertest.Start(t, wiring.Factories(), brokertest.WithConfig(func(c *config.Config) {
		*c = *loaded
		c.DataDirectory = t.TempDir()
		c.Persistence.Kind = config.KindMemory
	}))
}

// seedAddr is the bound address of connector name.
func seedAddr(t *testing.T, b *brokertest.Broker, name string) string {
	t.Helper()
	a := b.Addr(name)
	if a == nil {
		t.Fatalf("the broker has no connector %q (it has %v)", name, b.Addrs())
	}
	return a.String()
}

// stompConnectAs opens a raw STOMP 1.2 connection as user and checks
// CONNECTED.
func stompConnectAs(t *testing.T, addr, user, password string) *conform.RawConn {
	t.Helper()
	c, _ := conform.ConnectRaw(t, addr, "1.2", "login:"+user, "passcode:"+password)
	return c
}

// stompRefusedLogin checks that CONNECT as user is answered with ActiveMQ's
// ERROR and the connection closed.
func stompRefusedLogin(t *testing.T, addr, user, password string) {
	t.Helper()
	c := conform.DialRaw(t, addr)
	c.Send("CONNECT", []string{"accept-version:1.2", "host:localhost", "login:" + user, "passcode:" + password}, nil)
	c.ExpectError("User name ["+user+"] or password is invalid.", "")
	c.ExpectClosed(wait)
}

// stompRefused sends cmd with a receipt and expects ActiveMQ's ERROR text
// (a regexp, anchored) with that receipt-id; the connection stays open.
func stompRefused(t *testing.T, c *conform.RawConn, cmd string, headers []string, want string) {
	t.Helper()
	rid := "r-" + strings.ToLower(cmd) + "-" + uniq(t)
	c.Send(cmd, append(headers, "receipt:"+rid), []byte("x"))
	f := c.Expect("ERROR")
	msg := f.Must(t, "message")
	if !regexp.MustCompile("^(" + want + ")$").MatchString(msg) {
		t.Errorf("%s %v: ERROR %q, want %q", cmd, headers, msg, want)
	}
	if got, _ := f.Get("receipt-id"); got != rid {
		t.Errorf("%s %v: ERROR receipt-id %q, want %q", cmd, headers, got, rid)
	}
	c.MustSync() // still open
}

// owDial opens an OpenWire connection as user.
func owDial(addr, user, password string) (*client.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	o := client.DefaultOptions()
	o.Username, o.Password = user, password
	o.DialTimeout = wait
	return client.Dial(ctx, addr, o)
}

// mqttDial connects with MQTT 3.1.1 as user; it returns the CONNECT error.
func mqttDial(t *testing.T, addr, clientID, user, password string) (paho.Client, error) {
	t.Helper()
	o := paho.NewClientOptions().AddBroker("tcp://" + addr).SetClientID(clientID).
		SetUsername(user).SetPassword(password).
		SetAutoReconnect(false).SetConnectRetry(false).SetProtocolVersion(4).SetConnectTimeout(wait)
	c := paho.NewClient(o)
	tok := c.Connect()
	if !tok.WaitTimeout(wait) {
		t.Fatal("MQTT connect timed out")
	}
	if err := tok.Error(); err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Disconnect(0) })
	return c, nil
}

// checkSeedLogins logs in as every seed user over STOMP, OpenWire, MQTT
// and AMQP with its password (accepted) and a wrong one (refused: STOMP
// and OpenWire with ActiveMQ's text, MQTT with CONNACK 5, AMQP with SASL
// auth failure).
func checkSeedLogins(t *testing.T, b *brokertest.Broker) {
	t.Helper()
	for _, u := range seedUsers {
		stompConnectAs(t, seedAddr(t, b, "stomp"), u.name, u.password).Disconnect()
		stompRefusedLogin(t, seedAddr(t, b, "stomp"), u.name, u.password+"x")

		if c, err := owDial(seedAddr(t, b, "openwire"), u.name, u.password); err != nil {
			t.Errorf("OpenWire login as %s: %v", u.name, err)
		} else {
			c.Close()
		}
		want := "User name [" + u.name + "] or password is invalid."
		if c, err := owDial(seedAddr(t, b, "openwire"), u.name, "nope"); err == nil || !strings.Contains(err.Error(), want) {
			if c != nil {
				c.Close()
			}
			t.Errorf("OpenWire login as %s with a wrong password: %v, want %q", u.name, err, want)
		}

		if _, err := mqttDial(t, seedAddr(t, b, "mqtt"), uniq(t)+"-"+u.name, u.name, u.password); err != nil {
			t.Errorf("MQTT login as %s: %v", u.name, err)
		}
		// ActiveMQ 5.17 answers a failed MQTT login with CONNACK 5 (its
		// SecurityException), not 4; Wharf on main sent 4 until branch
		// protoauth (commit 8d2d907) made it 5.
		if _, err := mqttDial(t, seedAddr(t, b, "mqtt"), uniq(t)+"-bad-"+u.name, u.name, "nope"); !errors.Is(err, packets.ErrorRefusedNotAuthorised) {
			t.Errorf("MQTT login as %s with a wrong password: %v, want CONNACK 5 (%v)", u.name, err, packets.ErrorRefusedNotAuthorised)
		}

		if c, err := amqp.Dial(amqpCtx(t), "amqp://"+seedAddr(t, b, "amqp"), &amqp.ConnOptions{SASLType: amqp.SASLTypePlain(u.name, u.password)}); err != nil {
			t.Errorf("AMQP SASL PLAIN login as %s: %v", u.name, err)
		} else {
			c.Close()
		}
		if c, err := amqp.Dial(amqpCtx(t), "amqp://"+seedAddr(t, b, "amqp"), &amqp.ConnOptions{SASLType: amqp.SASLTypePlain(u.name, "nope")}); err == nil {
			c.Close()
			t.Errorf("AMQP SASL PLAIN login as %s with a wrong password accepted", u.name)
		}
	}
	stompRefusedLogin(t, seedAddr(t, b, "stomp"), "nobody", "x")
	// No credentials: ActiveMQ prints the missing name as "null".
	c := conform.DialRaw(t, seedAddr(t, b, "stomp"))
	c.Send("CONNECT", []string{"accept-version:1.2", "host:localhost"}, nil)
	c.ExpectError("User name [null] or password is invalid.", "")
	c.ExpectClosed(wait)
}

// TestConformanceSecuritySeedSimple: seed 000's simpleAuthenticationPlugin
// (anonymousAccessAllowed="false", passwords from ${...} placeholders).
// Without an authorization plugin an authenticated user may do anything.
func TestConformanceSecuritySeedSimple(t *testing.T) {
	b := startSeedBroker(t, "testdata/security/seed000-simple.xml")
	checkSeedLogins(t, b)
	c := stompConnectAs(t, seedAddr(t, b, "stomp"), "orders-svc", "orders-pw")
	q := "/queue/other." + uniq(t)
	c.Subscribe("s1", q)
	c.SendMsg(q, "anything goes")
	c.ExpectMessage("anything goes")
}

// TestConformanceSecuritySeedJAAS: seed 000's <jaasAuthenticationPlugin
// configuration="activemq"/> with its login.config entry (found beside the
// configuration file) and users.properties/groups.properties.
func TestConformanceSecuritySeedJAAS(t *testing.T) {
	b := startSeedBroker(t, "testdata/security/seed000-jaas.xml")
	checkSeedLogins(t, b)
}

// TestConformanceSecuritySeedAuthorization: seed 000's authorizationPlugin
// map with its simple users. orders-svc (producers) writes orders.> and
// may not read it; fulfilment (consumers) reads orders.> and may not write
// it; ops (admins) does everything on '>' (ActiveMQ unions every matching
// entry, so admins may use orders.> too); DLQ.> is admins only. Nobody is
// in the group "everyone" (ActiveMQ has no implicit one), so only ops may
// read advisory topics and nobody may use temporary destinations.
func TestConformanceSecuritySeedAuthorization(t *testing.T) {
	b := startSeedBroker(t, "testdata/security/seed000-authz.xml")
	stompAddr := seedAddr(t, b, "stomp")
	base := uniq(t)
	orders := "orders." + base + ".in"
	dlq := "DLQ." + base
	other := "other." + base

	// ops first: on ActiveMQ a fresh broker refuses orders-svc's and
	// fulfilment's connections until an admin's connection has created
	// topic://ActiveMQ.Advisory.Connection (only admins may create
	// advisory topics under this map).
	// DEVIATION (Wharf, not asserted): Wharf accepts orders-svc on a fresh
	// broker, where ActiveMQ answers "User orders-svc is not authorized to
	// create: topic://ActiveMQ.Advisory.Connection" and closes.
	ops := stompConnectAs(t, stompAddr, "ops", "ops-pw")
	ops.Subscribe("adv", "/topic/ActiveMQ.Advisory.Queue")

	t.Run("orders-svc", func(t *testing.T) {
		c := stompConnectAs(t, stompAddr, "orders-svc", "orders-pw")
		c.SendMsg("/queue/"+orders, "order 1")
		c.SendMsg("/queue/"+orders, "order 2")
		stompRefused(t, c, "SUBSCRIBE", []string{"id:s", "destination:/queue/" + orders},
			"User orders-svc is not authorized to read from: queue://"+regexp.QuoteMeta(orders))
		stompRefused(t, c, "SEND", []string{"destination:/queue/" + dlq},
			"User orders-svc is not authorized to write to: queue://"+regexp.QuoteMeta(dlq))
		stompRefused(t, c, "SEND", []string{"destination:/queue/" + other},
			"User orders-svc is not authorized to write to: queue://"+regexp.QuoteMeta(other))
		stompRefused(t, c, "SEND", []string{"destination:/topic/" + other},
			"User orders-svc is not authorized to write to: topic://"+regexp.QuoteMeta(other))
		stompRefused(t, c, "SUBSCRIBE", []string{"id:adv", "destination:/topic/ActiveMQ.Advisory.Queue"},
			"User orders-svc is not authorized to read from: topic://ActiveMQ.Advisory.Queue")
		stompRefused(t, c, "SUBSCRIBE", []string{"id:tmp", "destination:/temp-queue/" + base},
			"User orders-svc is not authorized to (create|read from): temp-queue://.*")
	})
	t.Run("fulfilment", func(t *testing.T) {
		c := stompConnectAs(t, stompAddr, "fulfilment", "fulfilment-pw")
		c.Subscribe("s", "/queue/"+orders)
		c.ExpectMessage("order 1")
		c.ExpectMessage("order 2") // prefetched: before the ERROR below
		stompRefused(t, c, "SEND", []string{"destination:/queue/" + orders},
			"User fulfilment is not authorized to write to: queue://"+regexp.QuoteMeta(orders))
		stompRefused(t, c, "SUBSCRIBE", []string{"id:d", "destination:/queue/" + dlq},
			"User fulfilment is not authorized to read from: queue://"+regexp.QuoteMeta(dlq))
		stompRefused(t, c, "SEND", []string{"destination:/queue/" + dlq},
			"User fulfilment is not authorized to write to: queue://"+regexp.QuoteMeta(dlq))
		stompRefused(t, c, "SUBSCRIBE", []string{"id:adv", "destination:/topic/ActiveMQ.Advisory.Queue"},
			"User fulfilment is not authorized to read from: topic://ActiveMQ.Advisory.Queue")
	})
	t.Run("ops", func(t *testing.T) {
		c := stompConnectAs(t, stompAddr, "ops", "ops-pw")
		for _, d := range []string{"/queue/" + dlq, "/queue/" + other, "/topic/" + other, "/queue/" + orders + ".ops"} {
			c.Subscribe("s-"+d, d)
			c.SendMsg(d, "ops to "+d)
			c.ExpectMessage("ops to " + d)
		}
		stompRefused(t, c, "SUBSCRIBE", []string{"id:tmp", "destination:/temp-queue/" + base},
			"User ops is not authorized to (create|read from): temp-queue://.*")
	})

	t.Run("openwire", func(t *testing.T) {
		addr := seedAddr(t, b, "openwire")
		// orders-svc: a producer on orders.> sends; a consumer is refused.
		c, err := owDial(addr, "orders-svc", "orders-pw")
		if err != nil {
			t.Fatalf("OpenWire login as orders-svc: %v", err)
		}
		defer c.Close()
		s, err := c.Session(false)
		if err != nil {
			t.Fatal(err)
		}
		q := orders + ".ow"
		p, err := s.Producer(wire.NewQueue(q))
		if err != nil {
			t.Fatalf("orders-svc producer on %s: %v", q, err)
		}
		owSend(t, p, client.NewTextMessage("ow order"))
		want := "User orders-svc is not authorized to read from: queue://" + q
		if _, err := s.Consumer(wire.NewQueue(q), client.ConsumerOptions{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("orders-svc consumer on %s: %v, want %q", q, err, want)
		}
		// fulfilment: a consumer on orders.> receives; a send is refused.
		f, err := owDial(addr, "fulfilment", "fulfilment-pw")
		if err != nil {
			t.Fatalf("OpenWire login as fulfilment: %v", err)
		}
		defer f.Close()
		fs, err := f.Session(false)
		if err != nil {
			t.Fatal(err)
		}
		k, err := fs.Consumer(wire.NewQueue(q), client.ConsumerOptions{})
		if err != nil {
			t.Fatalf("fulfilment consumer on %s: %v", q, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		if m, err := k.Receive(ctx); err != nil || m == nil {
			t.Errorf("fulfilment receive from %s: %v", q, err)
		}
		fp, err := fs.Producer(wire.NewQueue(q))
		want = "User fulfilment is not authorized to write to: queue://" + q
		if err == nil {
			err = fp.Send(ctx, client.NewTextMessage("no"), true)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("fulfilment send to %s: %v, want %q", q, err, want)
		}
	})

	t.Run("mqtt", func(t *testing.T) {
		addr := seedAddr(t, b, "mqtt")
		topic := "t/" + base
		for _, u := range seedUsers {
			c, err := mqttDial(t, addr, base+"-"+u.name, u.name, u.password)
			if err != nil {
				t.Fatalf("MQTT login as %s: %v", u.name, err)
			}
			tok := c.Subscribe(topic, 1, func(paho.Client, paho.Message) {})
			conform.MQTTWait(t, tok, "subscribe "+topic)
			// A refused SUBSCRIBE is SUBACK 0x80 (failure), as ActiveMQ's
			// MQTTProtocolConverter answers; admins get QoS 1.
			want := byte(0x80)
			if u.name == "ops" {
				want = 1
			}
			if got := tok.(*paho.SubscribeToken).Result()[topic]; got != want {
				t.Errorf("MQTT SUBACK for %s subscribing %s: %#x, want %#x", u.name, topic, got, want)
			}
		}
	})

	t.Run("amqp", func(t *testing.T) {
		addr := seedAddr(t, b, "amqp")
		q := "queue://" + orders + ".amqp"
		prod := amqpSession(t, amqpDial(t, addr, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain("orders-svc", "orders-pw")}))
		amqpSend(t, amqpSender(t, prod, q, nil), amqp.NewMessage([]byte("amqp order")))
		if _, err := prod.NewReceiver(amqpCtx(t), q, nil); err == nil || !strings.Contains(err.Error(), "User orders-svc is not authorized to read from: queue://"+orders+".amqp") {
			t.Errorf("orders-svc AMQP receiver from %s: %v, want ActiveMQ's read refusal", q, err)
		}
		cons := amqpSession(t, amqpDial(t, addr, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain("fulfilment", "fulfilment-pw")}))
		if m := amqpRecv(t, amqpReceiver(t, cons, q, nil)); string(m.GetData()) != "amqp order" {
			t.Errorf("fulfilment AMQP got %q", m.GetData())
		}
		snd, err := cons.NewSender(amqpCtx(t), q, nil)
		if err == nil {
			err = snd.Send(amqpCtx(t), amqp.NewMessage([]byte("no")), nil)
		}
		if err == nil || !strings.Contains(err.Error(), "User fulfilment is not authorized to write to: queue://"+orders+".amqp") {
			t.Errorf("fulfilment AMQP send to %s: %v, want ActiveMQ's write refusal", q, err)
		}
	})

	// ops's advisory subscription saw the queues being created.
	mustSyncAllowMessages(t, ops)
}

// mustSyncAllowMessages is a RECEIPT round trip that tolerates MESSAGE
// frames (advisories) before the RECEIPT but no ERROR.
func mustSyncAllowMessages(t *testing.T, c *conform.RawConn) {
	t.Helper()
	for _, f := range c.Sync() {
		if f.Command != "MESSAGE" {
			t.Fatalf("unexpected frame before the RECEIPT: %s", f)
		}
	}
}

// seedTLS is a client TLS configuration trusting the fixtures' CA, with
// the certificate cert ("" for none).
func seedTLS(t *testing.T, cert string) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join(tlsFixtures, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("ca.pem: no certificate")
	}
	c := &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
	if cert != "" {
		kp, err := tls.LoadX509KeyPair(filepath.Join(tlsFixtures, cert+".pem"), filepath.Join(tlsFixtures, cert+"-key.pem"))
		if err != nil {
			t.Fatal(err)
		}
		// Always present it, even when its issuer is not among the CAs
		// the broker lists (crypto/tls would send none then).
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &kp, nil }
	}
	return c
}

// stompTLSConnect opens STOMP over TLS and sends CONNECT as user; it
// returns the first frame, or the error reading it.
func stompTLSConnect(t *testing.T, addr string, cfg *tls.Config, user, password string) (*conform.RawFrame, error) {
	t.Helper()
	d := &tls.Dialer{Config: cfg}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { nc.Close() })
	c := conform.NewRawConn(t, nc, "1.2")
	c.Send("CONNECT", []string{"accept-version:1.2", "host:localhost", "login:" + user, "passcode:" + password}, nil)
	return c.ReadWithin(wait)
}

// TestConformanceSecuritySeedSSL: seed 000's <sslContext> with ssl:// and
// stomp+ssl:// connectors that require a client certificate
// (transport.needClientAuth=true): a client with a certificate the trust
// store accepts logs in; one without is refused in the handshake. A
// wantClientAuth connector accepts both.
func TestConformanceSecuritySeedSSL(t *testing.T) {
	b := startSeedBroker(t, "testdata/security/seed000-ssl.xml")
	for _, name := range []string{"stomp+ssl", "stomp+ssl-want"} {
		addr := seedAddr(t, b, name)
		f, err := stompTLSConnect(t, addr, seedTLS(t, "client1"), "ops", "ops-pw")
		if err != nil || f.Command != "CONNECTED" {
			t.Errorf("%s with client1's certificate: %v %v, want CONNECTED", name, f, err)
		}
		f, err = stompTLSConnect(t, addr, seedTLS(t, "client1"), "ops", "wrong")
		if err != nil || f.Command != "ERROR" || !strings.HasPrefix(conform.Header(f, "message"), "User name [ops] or password is invalid.") {
			t.Errorf("%s with a certificate and a wrong password: %v %v, want ActiveMQ's ERROR", name, f, err)
		}
		f, err = stompTLSConnect(t, addr, seedTLS(t, ""), "ops", "ops-pw")
		if name == "stomp+ssl" {
			if err == nil {
				t.Errorf("%s without a client certificate: got %v, want the handshake refused", name, f)
			}
		} else if err != nil || f.Command != "CONNECTED" {
			t.Errorf("%s (wantClientAuth) without a client certificate: %v %v, want CONNECTED", name, f, err)
		}
		f, err = stompTLSConnect(t, addr, seedTLS(t, "untrusted"), "ops", "ops-pw")
		if err == nil {
			t.Errorf("%s with a certificate the trust store does not accept: got %v, want the handshake refused", name, f)
		}
	}
	// ssl:// (OpenWire): the handshake completes with a certificate and
	// the broker's WireFormatInfo follows; without one it is refused.
	addr := seedAddr(t, b, "ssl")
	for _, cert := range []string{"client1", ""} {
		d := &tls.Dialer{Config: seedTLS(t, cert)}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		nc, err := d.DialContext(ctx, "tcp", addr)
		cancel()
		if err == nil {
			var buf [16]byte
			nc.SetReadDeadline(time.Now().Add(wait))
			_, err = nc.Read(buf[:])
			nc.Close()
		}
		if cert != "" && err != nil {
			t.Errorf("ssl:// with %s's certificate: %v", cert, err)
		}
		if cert == "" && err == nil {
			t.Error("ssl:// without a client certificate: the broker answered, want the handshake refused")
		}
	}
}

// TestConformanceSecurityExampleConfig: docs/examples/secure, the secured
// example the README shows, loads as `wharf run --config` loads it (demo
// keystores: activemq.conf is the TLS fixtures directory, as its README
// says) and starts in process on free ports; each user is allowed one
// operation and refused another, and its TLS connector wants a client
// certificate.
func TestConformanceSecurityExampleConfig(t *testing.T) {
	const file = "../docs/examples/secure/activemq.xml"
	tlsDir, err := filepath.Abs(tlsFixtures)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := config.LoadFileWith(file, map[string]string{
		"activemq.conf": tlsDir,
		"activemq.data": t.TempDir(),
	}, config.LoadOptions{Decrypt: wiring.Decrypt})
	if err != nil {
		t.Fatalf("load %s: %v", file, err)
	}
	if a := loaded.Security.Authentication; a == nil || a.Kind != config.AuthJAAS || filepath.Base(a.LoginConfig) != "login.config" {
		t.Fatalf("%s: authentication %+v, want JAAS with login.config", file, a)
	}
	b := brokertest.Start(t, wiring.Factories(), brokertest.WithConfig(func(c *config.Config) {
		*c = *loaded
		c.DataDirectory = t.TempDir()
		c.Persistence.Kind = config.KindMemory
	}))
	addr := seedAddr(t, b, "stomp")
	q := "orders." + uniq(t)
	dlq := "DLQ." + uniq(t)

	t.Run("orders-svc", func(t *testing.T) {
		c := stompConnectAs(t, addr, "orders-svc", "orders-demo-pw")
		c.SendMsg("/queue/"+q, "example order")
		stompRefused(t, c, "SUBSCRIBE", []string{"id:s", "destination:/queue/" + q},
			"User orders-svc is not authorized to read from: queue://"+regexp.QuoteMeta(q))
	})
	t.Run("fulfilment", func(t *testing.T) {
		c := stompConnectAs(t, addr, "fulfilment", "fulfilment-demo-pw")
		c.Subscribe("s", "/queue/"+q)
		c.ExpectMessage("example order")
		stompRefused(t, c, "SEND", []string{"destination:/queue/" + dlq},
			"User fulfilment is not authorized to write to: queue://"+regexp.QuoteMeta(dlq))
	})
	t.Run("ops", func(t *testing.T) {
		c := stompConnectAs(t, addr, "ops", "ops-demo-pw")
		c.Subscribe("d", "/queue/"+dlq)
		c.SendMsg("/queue/"+dlq, "dead letter")
		c.ExpectMessage("dead letter")
		// ops may do everything the map names: its refusal is a wrong password.
		stompRefusedLogin(t, addr, "ops", "orders-demo-pw")
	})
	t.Run("tls", func(t *testing.T) {
		tlsAddr := seedAddr(t, b, "stomp+ssl")
		if f, err := stompTLSConnect(t, tlsAddr, seedTLS(t, "client1"), "ops", "ops-demo-pw"); err != nil || f.Command != "CONNECTED" {
			t.Errorf("stomp+ssl with client1's certificate: %v %v, want CONNECTED", f, err)
		}
		if f, err := stompTLSConnect(t, tlsAddr, seedTLS(t, ""), "ops", "ops-demo-pw"); err == nil {
			t.Errorf("stomp+ssl without a client certificate: got %v, want the handshake refused", f)
		}
	})
}
