package conformance

// Bad input against a secured broker (issue #14, "Bad input"): wrong
// passwords, unknown users, empty credentials, refused client
// certificates, plain text on a TLS port, a TLS handshake that never
// completes, a login flood, and the connection and frame limits that apply
// before authentication. Every case checks the refusal the client sees and
// that a good client on the same broker keeps working.
//
// The broker runs testdata/badinput/activemq.xml: user "good" (password
// "good-secret", group "users") may do everything; the TLS connectors
// require a client certificate signed by the fixtures' CA
// (security/testdata/tls).

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/eclipse/paho.golang/paho"
	"github.com/go-stomp/stomp/v3"
	"github.com/gorilla/websocket"

	"wharf/cmd/wharf/wiring"
	"wharf/conform"
	"wharf/engine/broker"
	"wharf/engine/brokertest"
	"wharf/engine/config"
	amqpwire "wharf/protocols/amqp/wire"
	mqttwire "wharf/protocols/mqtt/wire"
	owwire "wharf/protocols/openwire/wire"
)

// The one account of testdata/badinput/activemq.xml.
const (
	badInputUser     = "good"
	badInputPassword = "good-secret"
	badInputConfig   = "testdata/badinput/activemq.xml"
	// badInputMaxConns is the maximumConnections of the *-max connectors.
	badInputMaxConns = 2
)

// badInputTLSDir is the absolute path of the TLS fixtures (tlsFixtures).
func badInputTLSDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(tlsFixtures)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// logCounts counts the broker's log records by level and message.
type logCounts struct {
	mu     sync.Mutex
	counts map[string]int // "LEVEL msg" → records
	total  int
	echo   slog.Handler // nil unless WHARF_TEST_LOG is set
}

func (l *logCounts) snapshot() (map[string]int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := make(map[string]int, len(l.counts))
	for k, v := range l.counts {
		m[k] = v
	}
	return m, l.total
}

// countingHandler is a slog.Handler that counts what it is given (Info and
// above, what an operator's log keeps).
type countingHandler struct {
	l     *logCounts
	attrs []slog.Attr
	group string
}

func (h *countingHandler) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelInfo }

func (h *countingHandler) Handle(ctx context.Context, r slog.Record) error {
	h.l.mu.Lock()
	h.l.counts[r.Level.String()+" "+r.Message]++
	h.l.total++
	h.l.mu.Unlock()
	if h.l.echo != nil {
		return h.l.echo.WithAttrs(h.attrs).Handle(ctx, r)
	}
	return nil
}

func (h *countingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &countingHandler{l: h.l, attrs: append(append([]slog.Attr(nil), h.attrs...), as...), group: h.group}
}

func (h *countingHandler) WithGroup(g string) slog.Handler {
	return &countingHandler{l: h.l, attrs: h.attrs, group: g}
}

// startBadInputBroker starts Wharf with testdata/badinput/activemq.xml and
// returns it with the counter of its log records.
func startBadInputBroker(t *testing.T) (*brokertest.Broker, *logCounts) {
	t.Helper()
	if external {
		t.Skipf("needs an in-process broker (%s is set)", envSTOMPAddr)
	}
	cfg, err := config.LoadFile(filepath.FromSlash(badInputConfig), map[string]string{
		"activemq.data": t.TempDir(),
		"tls.dir":       badInputTLSDir(t),
	})
	if err != nil {
		t.Fatalf("load %s: %v", badInputConfig, err)
	}
	logs := &logCounts{counts: map[string]int{}}
	if os.Getenv("WHARF_TEST_LOG") != "" {
		logs.echo = slog.NewTextHandler(os.Stderr, nil)
	}
	b := brokertest.Start(t, wiring.Factories(), brokertest.WithConfig(func(c *config.Config) {
		*c = *cfg
		c.Persistence.Kind = config.KindMemory
	}), func(_ *config.Config, o *broker.Options) {
		o.Logger = slog.New(&countingHandler{l: logs})
	})
	return b, logs
}

// addr is the bound address of a connector of the bad-input broker.
func badAddr(t *testing.T, b *brokertest.Broker, name string) string {
	t.Helper()
	a := b.Addr(name)
	if a == nil {
		t.Fatalf("no connector %q", name)
	}
	return a.String()
}

// badInputClientTLS is clientTLS (tls_helpers_test.go) with the named
// fixture certificate ("" for none).
func badInputClientTLS(t *testing.T, cert string) *tls.Config {
	t.Helper()
	if cert == "" {
		return clientTLS(t)
	}
	return clientTLS(t, cert+".pem", cert+"-key.pem")
}

// dialer opens one client connection to a connector: plain TCP, TLS with
// client1's certificate, or a WebSocket (subprotocol sub) over either.
type dialer func(ctx context.Context) (net.Conn, error)

func tcpDialer(addr string) dialer {
	return func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
}

func tlsDialer(addr string, cfg *tls.Config) dialer {
	return func(ctx context.Context) (net.Conn, error) {
		d := tls.Dialer{Config: cfg}
		return d.DialContext(ctx, "tcp", addr)
	}
}

func wsDialer(url, sub string, cfg *tls.Config) dialer {
	return func(ctx context.Context) (net.Conn, error) {
		d := websocket.Dialer{Subprotocols: []string{sub}, TLSClientConfig: cfg, HandshakeTimeout: wait}
		ws, _, err := d.DialContext(ctx, url, nil)
		if err != nil {
			return nil, err
		}
		return &wsConn{Conn: ws}, nil
	}
}

// login is one connection attempt's outcome.
type login struct {
	// accepted: the broker let the client in (CONNECTED, CONNACK 0, SASL
	// ok, Response to ConnectionInfo).
	accepted bool
	// refusal renders what the broker answered instead: the ERROR
	// frame's message, "CONNACK n reason-string", "SASL outcome n", the
	// exception "class: message".
	refusal string
	// closed: the broker closed the connection after answering (checked
	// only when asked).
	closed bool
}

// loginFunc tries one login on nc; with checkClose it then waits (up to
// closeWait) for the broker to close the connection.
type loginFunc func(nc net.Conn, user, pass, clientID string, checkClose bool) (login, error)

// closeWait bounds how long a refused connection may stay open. ActiveMQ
// closes a refused OpenWire connection 2 s after its ExceptionResponse
// (TransportConnection.processAddConnection, delayedStop(2000)); the other
// protocols close at once.
const closeWait = 4 * time.Second

// waitClosed reads (and discards) until the peer closes nc, or closeWait.
func waitClosed(nc net.Conn) bool {
	_ = nc.SetReadDeadline(time.Now().Add(closeWait))
	_, err := io.Copy(io.Discard, nc)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return true // EOF (nil from io.Copy) or a reset
}

// badInputSTOMPLogin sends a STOMP 1.2 CONNECT (login and passcode only when not
// empty) and reads the answer.
func badInputSTOMPLogin(nc net.Conn, user, pass, clientID string, checkClose bool) (login, error) {
	h := []string{"accept-version:1.2", "host:localhost", "heart-beat:0,0"}
	if user != "" {
		h = append(h, "login:"+user)
	}
	if pass != "" {
		h = append(h, "passcode:"+pass)
	}
	if clientID != "" {
		h = append(h, "client-id:"+clientID)
	}
	_ = nc.SetDeadline(time.Now().Add(wait))
	if _, err := nc.Write(conform.EncodeRaw("CONNECT", h, nil)); err != nil {
		return login{}, err
	}
	f, err := readSTOMPFrame(bufio.NewReader(nc))
	if err != nil {
		return login{}, err
	}
	_ = nc.SetDeadline(time.Time{})
	var l login
	switch f.Command {
	case "CONNECTED":
		l.accepted = true
	case "ERROR":
		msg, _ := f.Get("message")
		l.refusal = msg
	default:
		return l, fmt.Errorf("CONNECT answered with %s", f)
	}
	if checkClose {
		l.closed = waitClosed(nc)
	}
	return l, nil
}

// readSTOMPFrame reads one frame (heart-beat EOLs skipped); header values
// are unescaped as STOMP 1.2 says.
func readSTOMPFrame(r *bufio.Reader) (*conform.RawFrame, error) {
	var cmd string
	for cmd == "" {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		cmd = strings.TrimRight(line, "\r\n")
	}
	f := &conform.RawFrame{Command: cmd}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		k, v, _ := strings.Cut(line, ":")
		v = strings.NewReplacer(`\r`, "\r", `\n`, "\n", `\c`, ":", `\\`, `\`).Replace(v)
		f.Headers = append(f.Headers, [2]string{k, v})
	}
	body, err := r.ReadBytes(0)
	if err != nil {
		return nil, err
	}
	f.Body = body[:len(body)-1]
	return f, nil
}

// mqttLogin sends an MQTT CONNECT at level (4: 3.1.1, 5) and reads the
// CONNACK.
func mqttLogin(level byte) loginFunc {
	return func(nc net.Conn, user, pass, clientID string, checkClose bool) (login, error) {
		c := &mqttwire.Connect{ProtocolName: mqttwire.ProtocolName, ProtocolLevel: level, CleanSession: true,
			KeepAlive: 30, ClientID: clientID, UsernameFlag: user != "", Username: user}
		if pass != "" {
			c.PasswordFlag, c.Password = true, []byte(pass)
		}
		_ = nc.SetDeadline(time.Now().Add(wait))
		if _, err := nc.Write(mqttwire.AppendPacket(nil, &mqttwire.Packet{Type: mqttwire.CONNECT, Connect: c}, level)); err != nil {
			return login{}, err
		}
		dec := mqttwire.NewDecoder(mqttwire.DefaultLimits())
		dec.SetVersion(level)
		var q []mqttwire.Packet
		buf := make([]byte, 4096)
		for len(q) == 0 {
			n, err := nc.Read(buf)
			if n > 0 {
				var derr error
				if q, derr = dec.Feed(buf[:n], q); derr != nil {
					return login{}, derr
				}
			}
			if err != nil && len(q) == 0 {
				return login{}, err
			}
		}
		_ = nc.SetDeadline(time.Time{})
		p := q[0]
		if p.Type != mqttwire.CONNACK {
			return login{}, fmt.Errorf("CONNECT answered with %s", p.Type)
		}
		l := login{accepted: p.ReasonCode == 0, refusal: "CONNACK " + strconv.Itoa(int(p.ReasonCode))}
		if p.Props != nil && p.Props.ReasonString != "" {
			l.refusal += " " + p.Props.ReasonString
		}
		if l.accepted {
			l.refusal = ""
		}
		if checkClose {
			l.closed = waitClosed(nc)
		}
		return l, nil
	}
}

// amqpLogin runs the SASL exchange with mechanism (PLAIN: user and pass;
// EXTERNAL, ANONYMOUS: neither) and reads the outcome.
func amqpLogin(mechanism string) loginFunc {
	return func(nc net.Conn, user, pass, _ string, checkClose bool) (login, error) {
		_ = nc.SetDeadline(time.Now().Add(wait))
		dec := amqpwire.NewDecoder(amqpwire.Limits{MaxFrameSize: 1 << 20})
		var q []amqpwire.Frame
		buf := make([]byte, 4096)
		next := func() (amqpwire.Frame, error) {
			for len(q) == 0 {
				if dec.Buffered() > 0 {
					// Feed returns one frame at a time; the rest stays
					// buffered in the decoder.
					var derr error
					if q, derr = dec.Feed(nil, q); derr != nil {
						return amqpwire.Frame{}, derr
					}
					continue
				}
				n, err := nc.Read(buf)
				if n > 0 {
					var derr error
					if q, derr = dec.Feed(buf[:n], q); derr != nil {
						return amqpwire.Frame{}, derr
					}
				}
				if err != nil && len(q) == 0 {
					return amqpwire.Frame{}, err
				}
			}
			f := q[0]
			q = q[1:]
			return f, nil
		}
		if _, err := nc.Write([]byte(amqpwire.HeaderSASL)); err != nil {
			return login{}, err
		}
		if f, err := next(); err != nil || f.Type != amqpwire.FrameHeader || f.Protocol != amqpwire.ProtocolSASL {
			return login{}, fmt.Errorf("no SASL header (%v)", err)
		}
		if f, err := next(); err != nil {
			return login{}, err
		} else if _, ok := f.Body.(*amqpwire.SASLMechanisms); !ok {
			return login{}, fmt.Errorf("got %T, want sasl-mechanisms", f.Body)
		}
		init := &amqpwire.SASLInit{Mechanism: amqpwire.Symbol(mechanism)}
		if mechanism == "PLAIN" {
			init.InitialResponse = []byte("\x00" + user + "\x00" + pass)
		}
		if _, err := nc.Write(amqpwire.AppendSASLFrame(nil, init)); err != nil {
			return login{}, err
		}
		f, err := next()
		if err != nil {
			return login{}, err
		}
		o, ok := f.Body.(*amqpwire.SASLOutcome)
		if !ok {
			return login{}, fmt.Errorf("got %T, want sasl-outcome", f.Body)
		}
		_ = nc.SetDeadline(time.Time{})
		l := login{accepted: o.Code == amqpwire.SASLOK}
		if !l.accepted {
			l.refusal = "SASL outcome " + strconv.Itoa(int(o.Code))
		}
		if checkClose {
			l.closed = waitClosed(nc)
		}
		return l, nil
	}
}

// openwireLogin exchanges WireFormatInfo, sends ConnectionInfo and reads
// its answer.
func openwireLogin(limits owwire.Limits) loginFunc {
	return func(nc net.Conn, user, pass, clientID string, checkClose bool) (login, error) {
		if clientID == "" {
			clientID = "badinput-" + strconv.FormatInt(owSeq.Add(1), 10)
		}
		_ = nc.SetDeadline(time.Now().Add(wait))
		dec := owwire.NewDecoder(owwire.InitialFormat(owwire.MaxVersion), owwire.DefaultLimits())
		enc := owwire.NewEncoder(owwire.InitialFormat(owwire.MaxVersion))
		opts := owwire.DefaultOptions()
		wfi, _ := owwire.NewWireFormatInfo(opts)
		b, err := enc.Append(nil, wfi)
		if err != nil {
			return login{}, err
		}
		if _, err := nc.Write(b); err != nil {
			return login{}, err
		}
		buf := make([]byte, 64<<10)
		read := func() (owwire.DataStructure, error) {
			for {
				ds, err := dec.Next()
				if err != nil || ds != nil {
					return ds, err
				}
				n, err := nc.Read(buf)
				if n > 0 {
					dec.Feed(buf[:n])
					continue
				}
				if err != nil {
					return nil, err
				}
			}
		}
		ds, err := read()
		if err != nil {
			return login{}, err
		}
		theirs, ok := ds.(*owwire.WireFormatInfo)
		if !ok {
			return login{}, fmt.Errorf("first command %T, want WireFormatInfo", ds)
		}
		remote, err := theirs.Options()
		if err != nil {
			return login{}, err
		}
		f, err := owwire.Negotiate(opts, remote)
		if err != nil {
			return login{}, err
		}
		dec.SetFormat(f)
		// The client's encoder ignores the negotiated frame limit, so
		// that an oversized ConnectionInfo reaches the broker's check.
		fe := f
		fe.MaxFrameSize = 0
		enc.SetFormat(fe)
		ci := &owwire.ConnectionInfo{ConnectionId: &owwire.ConnectionId{Value: "ID:" + clientID}, ClientId: clientID,
			UserName: user, Password: pass, Manageable: true, ClientMaster: true}
		ci.CommandId, ci.ResponseRequired = 1, true
		b, err = enc.Append(nil, ci)
		if err != nil {
			return login{}, err
		}
		if _, err := nc.Write(b); err != nil {
			return login{}, err
		}
		var l login
		for answered := false; !answered; {
			ds, err := read()
			if err != nil {
				return login{}, err
			}
			switch r := ds.(type) {
			case *owwire.ExceptionResponse:
				if r.CorrelationId == 1 {
					answered = true
					if r.Exception != nil {
						l.refusal = r.Exception.ClassName + ": " + r.Exception.Message
					} else {
						l.refusal = "ExceptionResponse without exception"
					}
				}
			case *owwire.Response:
				if r.CorrelationId == 1 {
					answered, l.accepted = true, true
				}
			}
		}
		_ = nc.SetDeadline(time.Time{})
		if checkClose {
			l.closed = waitClosed(nc)
		}
		return l, nil
	}
}

var owSeq atomic.Int64

// try dials and runs one login, closing the connection after.
func try(ctx context.Context, d dialer, fn loginFunc, user, pass, clientID string, checkClose bool) (login, error) {
	nc, err := d(ctx)
	if err != nil {
		return login{}, fmt.Errorf("dial: %w", err)
	}
	defer nc.Close()
	return fn(nc, user, pass, clientID, checkClose)
}

// badInputProtocols are the connectors and clients of the login cases:
// each protocol plain and over TLS (with client1's certificate), STOMP
// and MQTT over ws:// and wss://.
type badInputProtocol struct {
	name      string
	connector string
	fn        loginFunc
	// ws is the WebSocket subprotocol ("" for a socket connector).
	ws string
	// wrong, unknown and empty are the refusals of a wrong password, an
	// unknown user and no credentials (ActiveMQ's text names a null user).
	wrong, unknown, empty string
}

func badInputProtocols() []badInputProtocol {
	invalid := func(u string) string { return "User name [" + u + "] or password is invalid." }
	stompCase := func(name, conn, ws string) badInputProtocol {
		return badInputProtocol{name: name, connector: conn, fn: badInputSTOMPLogin, ws: ws,
			wrong: invalid(badInputUser), unknown: invalid("nobody"), empty: invalid("null")}
	}
	// CONNACK 5 (not authorized), as ActiveMQ 5.17 answers every refused
	// login (conformance/security-reference.md); MQTT 5 gets 0x86 and
	// ActiveMQ's text as reason string.
	mqtt3 := func(name, conn, ws string) badInputProtocol {
		return badInputProtocol{name: name, connector: conn, fn: mqttLogin(mqttwire.Version311), ws: ws,
			wrong: "CONNACK 5", unknown: "CONNACK 5", empty: "CONNACK 5"}
	}
	mqtt5 := func(name, conn string) badInputProtocol {
		return badInputProtocol{name: name, connector: conn, fn: mqttLogin(mqttwire.Version5),
			wrong: "CONNACK 134 " + invalid(badInputUser), unknown: "CONNACK 134 " + invalid("nobody"), empty: "CONNACK 134 " + invalid("null")}
	}
	amqpCase := func(name, conn string) badInputProtocol {
		return badInputProtocol{name: name, connector: conn, fn: amqpLogin("PLAIN"),
			wrong: "SASL outcome 1", unknown: "SASL outcome 1", empty: "SASL outcome 1"}
	}
	owCase := func(name, conn string) badInputProtocol {
		return badInputProtocol{name: name, connector: conn, fn: openwireLogin(owwire.DefaultLimits()),
			wrong:   "java.lang.SecurityException: " + invalid(badInputUser),
			unknown: "java.lang.SecurityException: " + invalid("nobody"),
			empty:   "java.lang.SecurityException: " + invalid("null")}
	}
	return []badInputProtocol{
		stompCase("stomp", "stomp", ""), stompCase("stomp+ssl", "stomp+ssl", ""),
		stompCase("stomp+ws", "ws", "v12.stomp"), stompCase("stomp+wss", "wss", "v12.stomp"),
		mqtt3("mqtt", "mqtt", ""), mqtt3("mqtt+ssl", "mqtt+ssl", ""),
		mqtt3("mqtt+ws", "ws", "mqtt"), mqtt3("mqtt+wss", "wss", "mqtt"),
		mqtt5("mqtt5", "mqtt"), mqtt5("mqtt5+ssl", "mqtt+ssl"),
		amqpCase("amqp", "amqp"), amqpCase("amqp+ssl", "amqp+ssl"),
		owCase("openwire", "openwire"), owCase("openwire+ssl", "ssl"),
	}
}

// dialerFor is how a client reaches p's connector.
func (p badInputProtocol) dialerFor(t *testing.T, b *brokertest.Broker) dialer {
	t.Helper()
	addr := badAddr(t, b, p.connector)
	secure := strings.Contains(p.connector, "ssl") || p.connector == "wss"
	var cfg *tls.Config
	if secure {
		cfg = badInputClientTLS(t, "client1")
	}
	switch {
	case p.ws != "" && secure:
		return wsDialer("wss://"+addr+"/", p.ws, cfg)
	case p.ws != "":
		return wsDialer("ws://"+addr+"/", p.ws, nil)
	case secure:
		return tlsDialer(addr, cfg)
	}
	return tcpDialer(addr)
}

// TestConformanceSecurityBadLogin: on every protocol and connector kind, a
// wrong password, an unknown user and empty credentials each get the
// protocol's refusal in ActiveMQ's words and the connection is closed;
// nothing is left behind: the same client id then logs in.
func TestConformanceSecurityBadLogin(t *testing.T) {
	b, _ := startBadInputBroker(t)
	for _, p := range badInputProtocols() {
		t.Run(p.name, func(t *testing.T) {
			d := p.dialerFor(t, b)
			ctx, cancel := context.WithTimeout(context.Background(), 4*wait)
			defer cancel()
			clientID := uniq(t)
			for _, c := range []struct{ name, user, pass, want string }{
				{"wrong password", badInputUser, "not-the-password", p.wrong},
				{"unknown user", "nobody", badInputPassword, p.unknown},
				{"empty credentials", "", "", p.empty},
			} {
				l, err := try(ctx, d, p.fn, c.user, c.pass, clientID, true)
				if err != nil {
					t.Errorf("%s: %v", c.name, err)
					continue
				}
				if l.accepted {
					t.Errorf("%s: accepted", c.name)
					continue
				}
				if l.refusal != c.want {
					t.Errorf("%s: refused with %q, want %q", c.name, l.refusal, c.want)
				}
				if !l.closed {
					t.Errorf("%s: the broker left the connection open %v after the refusal", c.name, closeWait)
				}
			}
			// Nothing is left of the refused logins: the client id is free.
			l, err := try(ctx, d, p.fn, badInputUser, badInputPassword, clientID, false)
			if err != nil || !l.accepted {
				t.Fatalf("good login with client id %q after the refusals: %+v, %v", clientID, l, err)
			}
		})
	}
}

// TestConformanceSecurityBadLoginRealClients: the client libraries see the
// refusals as errors: go-stomp, Paho MQTT 5, go-amqp (PLAIN and
// ANONYMOUS, with anonymousAccessAllowed false) and AMQP SASL EXTERNAL
// (not offered by the broker on main: refused with the auth outcome).
func TestConformanceSecurityBadLoginRealClients(t *testing.T) {
	b, _ := startBadInputBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*wait)
	defer cancel()
	t.Run("go-stomp", func(t *testing.T) {
		_, err := stomp.Dial("tcp", badAddr(t, b, "stomp"), stomp.ConnOpt.Login(badInputUser, "bad"), stomp.ConnOpt.HeartBeat(0, 0))
		if err == nil || !strings.Contains(err.Error(), "User name [good] or password is invalid.") {
			t.Fatalf("go-stomp: %v, want the ERROR frame's message", err)
		}
	})
	t.Run("paho-mqtt5", func(t *testing.T) {
		nc, err := net.Dial("tcp", badAddr(t, b, "mqtt"))
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		c := paho.NewClient(paho.ClientConfig{Conn: nc, OnClientError: func(error) {}})
		ack, err := c.Connect(ctx, &paho.Connect{ClientID: uniq(t), KeepAlive: 30, CleanStart: true,
			Username: badInputUser, UsernameFlag: true, Password: []byte("bad"), PasswordFlag: true})
		if err == nil || ack == nil || ack.ReasonCode != 0x86 ||
			ack.Properties == nil || ack.Properties.ReasonString != "User name [good] or password is invalid." {
			t.Fatalf("paho MQTT 5: connack %+v, err %v; want reason 0x86 with ActiveMQ's text", ack, err)
		}
	})
	for _, c := range []struct {
		name string
		sasl amqp.SASLType
	}{
		{"go-amqp PLAIN", amqp.SASLTypePlain(badInputUser, "bad")},
		{"go-amqp ANONYMOUS", amqp.SASLTypeAnonymous()},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := amqp.Dial(ctx, "amqp://"+badAddr(t, b, "amqp"), &amqp.ConnOptions{SASLType: c.sasl})
			if err == nil {
				conn.Close()
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), "auth failed with code 0x1") {
				t.Fatalf("go-amqp: %v, want SASL outcome auth (1)", err)
			}
		})
	}
	t.Run("amqp EXTERNAL over TLS", func(t *testing.T) {
		l, err := try(ctx, tlsDialer(badAddr(t, b, "amqp+ssl"), badInputClientTLS(t, "client1")), amqpLogin("EXTERNAL"), "", "", "", true)
		if err != nil {
			t.Fatal(err)
		}
		// simpleAuthenticationPlugin does not map certificates: EXTERNAL
		// is refused like any login without a user name.
		if l.accepted || l.refusal != "SASL outcome 1" || !l.closed {
			t.Fatalf("EXTERNAL: %+v, want refused with SASL outcome 1 and closed", l)
		}
	})
	// The good account works with every one of these clients.
	c, err := stomp.Dial("tcp", badAddr(t, b, "stomp"), stomp.ConnOpt.Login(badInputUser, badInputPassword), stomp.ConnOpt.HeartBeat(0, 0))
	if err != nil {
		t.Fatalf("good STOMP login: %v", err)
	}
	c.Disconnect()
	ac, err := amqp.Dial(ctx, "amqp://"+badAddr(t, b, "amqp"), &amqp.ConnOptions{SASLType: amqp.SASLTypePlain(badInputUser, badInputPassword)})
	if err != nil {
		t.Fatalf("good AMQP login: %v", err)
	}
	ac.Close()
}

// goodClient is an authenticated STOMP client over TLS that sends
// persistent messages to a queue and receives them on a second
// connection, timing each round trip.
type goodClient struct {
	t     *testing.T
	prod  *stomp.Conn
	sub   *stomp.Subscription
	queue string
	sent  int
	worst time.Duration
}

func newGoodClient(t *testing.T, b *brokertest.Broker) *goodClient {
	t.Helper()
	conn := func() *stomp.Conn {
		nc, err := tls.DialWithDialer(&net.Dialer{Timeout: wait}, "tcp", badAddr(t, b, "stomp+ssl"), badInputClientTLS(t, "client1"))
		if err != nil {
			t.Fatalf("good client TLS dial: %v", err)
		}
		c, err := stomp.Connect(nc, stomp.ConnOpt.Host("localhost"), stomp.ConnOpt.HeartBeat(0, 0),
			stomp.ConnOpt.Login(badInputUser, badInputPassword))
		if err != nil {
			t.Fatalf("good client connect: %v", err)
		}
		t.Cleanup(func() { c.Disconnect() })
		return c
	}
	g := &goodClient{t: t, prod: conn(), queue: "/queue/" + uniq(t)}
	cons := conn()
	g.sub = sub(t, cons, g.queue, stomp.AckAuto)
	return g
}

// exchange sends one persistent message with a receipt and receives it;
// it returns the round trip, or an error.
func (g *goodClient) exchange() (time.Duration, error) {
	start := time.Now()
	body := "m" + strconv.Itoa(g.sent)
	if err := g.prod.Send(g.queue, "text/plain", []byte(body), stomp.SendOpt.Receipt, stomp.SendOpt.Header("persistent", "true")); err != nil {
		return 0, fmt.Errorf("send %s: %w", body, err)
	}
	select {
	case m, ok := <-g.sub.C:
		if !ok || m.Err != nil {
			return 0, fmt.Errorf("receive %s: %v", body, m)
		}
		if string(m.Body) != body {
			return 0, fmt.Errorf("received %q, want %q (lost or reordered)", m.Body, body)
		}
	case <-time.After(wait):
		return 0, fmt.Errorf("%s not received within %v", body, wait)
	}
	g.sent++
	rt := time.Since(start)
	g.worst = max(g.worst, rt)
	return rt, nil
}

// keepExchanging runs exchanges until stop is closed, at least once, and
// reports the first failure and the count on the returned channel.
func (g *goodClient) keepExchanging(stop <-chan struct{}) <-chan error {
	done := make(chan error, 1)
	go func() {
		for {
			if _, err := g.exchange(); err != nil {
				done <- err
				return
			}
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
		}
	}()
	return done
}

// goodRoundTripBound is the slowest round trip a good client may see while
// the broker is under attack (a loaded CI machine with -race included).
const goodRoundTripBound = 2 * time.Second

// TestConformanceSecurityBadCertificates: on needClientAuth connectors an
// expired client certificate, one the trust store does not know, and no
// certificate at all are refused during the handshake (the client never
// reaches its protocol's CONNECT); a good TLS client keeps exchanging
// messages meanwhile.
func TestConformanceSecurityBadCertificates(t *testing.T) {
	b, logs := startBadInputBroker(t)
	g := newGoodClient(t, b)
	stop := make(chan struct{})
	done := g.keepExchanging(stop)
	for _, conn := range []string{"stomp+ssl", "mqtt+ssl", "amqp+ssl", "ssl", "wss"} {
		for _, cert := range []string{"expired", "untrusted", ""} {
			name := cert
			if name == "" {
				name = "none"
			}
			t.Run(conn+"/"+name, func(t *testing.T) {
				addr := badAddr(t, b, conn)
				// clientTLS presents the certificate whatever CAs the
				// broker names: crypto/tls would hold back one whose
				// issuer is not among them (the untrusted one), and a
				// client that sends it anyway is the case to check.
				cfg := badInputClientTLS(t, cert)
				nc, err := tls.DialWithDialer(&net.Dialer{Timeout: wait}, "tcp", addr, cfg)
				if err == nil {
					// TLS 1.3: the client finishes before the server has
					// checked its certificate; the refusal comes as an
					// alert on the first read.
					defer nc.Close()
					_ = nc.SetDeadline(time.Now().Add(wait))
					_, _ = nc.Write(conform.EncodeRaw("CONNECT", []string{"accept-version:1.2", "host:localhost",
						"login:" + badInputUser, "passcode:" + badInputPassword}, nil))
					_, err = nc.Read(make([]byte, 1))
				}
				if err == nil {
					t.Fatal("the broker answered a client with a refused certificate")
				}
				// The alert crypto/tls sends for each (RFC 8446 §6.2).
				want := map[string]string{"expired": "expired certificate", "untrusted": "unknown certificate authority", "": "certificate required"}[cert]
				if !strings.Contains(err.Error(), want) {
					t.Errorf("client error %v, want the alert %q", err, want)
				}
			})
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("good client during the certificate refusals: %v", err)
	}
	if g.worst > goodRoundTripBound {
		t.Errorf("good client's slowest round trip %v, want under %v", g.worst, goodRoundTripBound)
	}
	counts, _ := logs.snapshot()
	t.Logf("good client: %d round trips, slowest %v; log: %v", g.sent, g.worst, counts)
}

// TestConformanceSecurityPlainTextOnTLSPort: a STOMP CONNECT in clear on
// each TLS connector gets no protocol answer, the connection is closed,
// and the broker keeps serving a good TLS client.
func TestConformanceSecurityPlainTextOnTLSPort(t *testing.T) {
	b, logs := startBadInputBroker(t)
	g := newGoodClient(t, b)
	for _, conn := range []string{"stomp+ssl", "mqtt+ssl", "amqp+ssl", "ssl", "wss"} {
		t.Run(conn, func(t *testing.T) {
			nc, err := net.DialTimeout("tcp", badAddr(t, b, conn), wait)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			_ = nc.SetDeadline(time.Now().Add(wait))
			if _, err := nc.Write(conform.EncodeRaw("CONNECT", []string{"accept-version:1.2", "host:localhost",
				"login:" + badInputUser, "passcode:" + badInputPassword}, nil)); err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(nc)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("connection still open after %v", wait)
			}
			// crypto/tls answers a non-TLS record with nothing, or with a
			// plain "HTTP/1.0 400" when the bytes look like HTTP: never
			// with a STOMP frame.
			if bytes.Contains(got, []byte("CONNECTED")) || bytes.Contains(got, []byte("ERROR")) {
				t.Fatalf("answered %q", got)
			}
			if _, err := g.exchange(); err != nil {
				t.Fatalf("good client after plain text on %s: %v", conn, err)
			}
		})
	}
	counts, _ := logs.snapshot()
	if counts["WARN tls handshake failed, connection closed"] == 0 {
		t.Errorf("no \"tls handshake failed\" warning logged: %v", counts)
	}
}

// TestConformanceSecurityStalledHandshake: a client that sends half a
// ClientHello and then nothing is closed by the broker after its TLS
// handshake timeout (10 s, transport.DefaultTLSHandshakeTimeout: not
// configurable per connector), while a good TLS client keeps exchanging
// messages with round trips under goodRoundTripBound.
func TestConformanceSecurityStalledHandshake(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 10 s TLS handshake timeout")
	}
	t.Parallel()
	b, logs := startBadInputBroker(t)
	g := newGoodClient(t, b)
	// A real ClientHello, cut in half: record the one a Go client sends.
	hello := recordClientHello(t)
	const stalled = 8
	var conns []net.Conn
	for i := 0; i < stalled; i++ {
		nc, err := net.DialTimeout("tcp", badAddr(t, b, "stomp+ssl"), wait)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		if _, err := nc.Write(hello[:len(hello)/2]); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, nc)
	}
	start := time.Now()
	stop := make(chan struct{})
	done := g.keepExchanging(stop)
	var wg sync.WaitGroup
	closedAfter := make([]time.Duration, stalled)
	for i, nc := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = nc.SetReadDeadline(time.Now().Add(15 * time.Second))
			_, err := io.Copy(io.Discard, nc)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				closedAfter[i] = -1
				return
			}
			closedAfter[i] = time.Since(start)
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("good client during the stalled handshakes: %v", err)
	}
	for i, d := range closedAfter {
		if d < 0 {
			t.Errorf("stalled connection %d still open after 15 s", i)
		} else if d < 9*time.Second {
			t.Errorf("stalled connection %d closed after %v, before the 10 s handshake timeout", i, d)
		}
	}
	if g.worst > goodRoundTripBound {
		t.Errorf("good client's slowest round trip %v, want under %v", g.worst, goodRoundTripBound)
	}
	counts, _ := logs.snapshot()
	t.Logf("stalled handshakes closed after %v; good client: %d round trips, slowest %v; log: %v", closedAfter, g.sent, g.worst, counts)
}

// recordClientHello returns the first flight a Go TLS client sends.
func recordClientHello(t *testing.T) []byte {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(wait))
		buf := make([]byte, 5)
		if _, err := io.ReadFull(c, buf); err != nil {
			got <- nil
			return
		}
		n := int(buf[3])<<8 | int(buf[4])
		rest := make([]byte, n)
		if _, err := io.ReadFull(c, rest); err != nil {
			got <- nil
			return
		}
		got <- append(buf, rest...)
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	tc := tls.Client(nc, badInputClientTLS(t, "client1"))
	_ = tc.SetDeadline(time.Now().Add(wait))
	go tc.Handshake() // fails when the fake server closes
	h := <-got
	if len(h) < 10 || h[0] != 0x16 {
		t.Fatalf("no ClientHello recorded: %x", h)
	}
	return h
}

// TestConformanceSecurityLoginFlood: a thousand failed logins from one
// address over STOMP, MQTT, AMQP and OpenWire at once are each refused and
// none is accepted; a good TLS client sending and receiving persistent
// messages meanwhile loses nothing and stays fast; the broker's goroutines
// return to their baseline; and the log lines the flood produced are
// counted (reported, and bounded: STYLE.md §7 rate-limits repeated
// warnings).
func TestConformanceSecurityLoginFlood(t *testing.T) {
	b, logs := startBadInputBroker(t)
	g := newGoodClient(t, b)
	if _, err := g.exchange(); err != nil {
		t.Fatal(err)
	}
	baseline := runtime.NumGoroutine()
	_, logsBefore := logs.snapshot()

	const perProtocol = 250
	const workers = 16
	protos := []struct {
		name string
		d    dialer
		fn   loginFunc
		want string
	}{
		{"stomp", tcpDialer(badAddr(t, b, "stomp")), badInputSTOMPLogin, "User name [good] or password is invalid."},
		{"mqtt", tcpDialer(badAddr(t, b, "mqtt")), mqttLogin(mqttwire.Version311), "CONNACK 5"},
		{"amqp", tcpDialer(badAddr(t, b, "amqp")), amqpLogin("PLAIN"), "SASL outcome 1"},
		{"openwire", tcpDialer(badAddr(t, b, "openwire")), openwireLogin(owwire.DefaultLimits()),
			"java.lang.SecurityException: User name [good] or password is invalid."},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stop := make(chan struct{})
	done := g.keepExchanging(stop)
	start := time.Now()
	type tally struct {
		refused, accepted atomic.Int64
		mu                sync.Mutex
		errs              []string
	}
	tallies := make([]tally, len(protos))
	var wg sync.WaitGroup
	for i, p := range protos {
		next := atomic.Int64{}
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= perProtocol && ctx.Err() == nil {
					l, err := try(ctx, p.d, p.fn, badInputUser, "flood", "", false)
					tl := &tallies[i]
					switch {
					case err != nil:
						tl.mu.Lock()
						if len(tl.errs) < 5 {
							tl.errs = append(tl.errs, err.Error())
						}
						tl.mu.Unlock()
					case l.accepted:
						tl.accepted.Add(1)
					case l.refusal == p.want:
						tl.refused.Add(1)
					default:
						tl.mu.Lock()
						tl.errs = append(tl.errs, "refused with "+l.refusal)
						tl.mu.Unlock()
					}
				}
			}()
		}
	}
	wg.Wait()
	floodTime := time.Since(start)
	close(stop)
	if err := <-done; err != nil {
		t.Errorf("good client during the flood: %v", err)
	}
	for i, p := range protos {
		tl := &tallies[i]
		if n := tl.accepted.Load(); n != 0 {
			t.Errorf("%s: %d flood logins accepted", p.name, n)
		}
		if n := tl.refused.Load(); n != perProtocol {
			t.Errorf("%s: %d of %d flood logins refused as %q; failures: %v", p.name, n, perProtocol, p.want, tl.errs)
		}
	}
	if floodTime > 20*time.Second {
		t.Errorf("the flood of %d logins took %v", perProtocol*len(protos), floodTime)
	}
	if g.worst > goodRoundTripBound {
		t.Errorf("good client's slowest round trip %v, want under %v", g.worst, goodRoundTripBound)
	}
	// The good client still works after the flood.
	if _, err := g.exchange(); err != nil {
		t.Fatalf("good client after the flood: %v", err)
	}
	// Every refused connection's goroutines are gone.
	var now int
	deadline := time.Now().Add(10 * time.Second)
	for now = runtime.NumGoroutine(); now > baseline+10 && time.Now().Before(deadline); now = runtime.NumGoroutine() {
		runtime.Gosched()
		time.Sleep(20 * time.Millisecond) // polling interval, not synchronisation
	}
	if now > baseline+10 {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: %d before the flood, %d 10 s after it\n%s", baseline, now, buf[:runtime.Stack(buf, true)])
	}
	counts, total := logs.snapshot()
	lines := total - logsBefore
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "\n  %6d %s", counts[k], k)
	}
	t.Logf("flood: %d failed logins in %v; good client %d round trips, slowest %v; goroutines %d → %d; %d log lines:%s",
		perProtocol*len(protos), floodTime, g.sent, g.worst, baseline, now, lines, sb.String())
	// The flood must not amplify: at most one line per failed login.
	if lines > perProtocol*len(protos) {
		t.Errorf("%d log lines for %d failed logins", lines, perProtocol*len(protos))
	}
	// STYLE.md §7: repeated warnings are rate-limited per call site. A
	// flood of N failed logins must not write N warnings.
	for _, k := range keys {
		if !strings.HasPrefix(k, "WARN ") || counts[k] < perProtocol/2 {
			continue
		}
		t.Errorf("%d %q lines for %d failed logins: repeated warnings are not rate-limited (STYLE.md §7)", counts[k], k, perProtocol*len(protos))
	}
}

// TestConformanceSecurityMaximumConnections: on a plain, a TLS and a
// WebSocket connector with maximumConnections=2, the third connection is
// refused before any protocol byte is read, even with good credentials;
// once one of the two closes, a new one is accepted.
func TestConformanceSecurityMaximumConnections(t *testing.T) {
	b, _ := startBadInputBroker(t)
	for _, c := range []struct{ name, connector, ws string }{
		{"plain", "stomp-max", ""},
		{"tls", "stomp+ssl-max", ""},
		{"ws", "ws-max", "v12.stomp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := badInputProtocol{connector: c.connector, ws: c.ws}
			d := p.dialerFor(t, b)
			ctx, cancel := context.WithTimeout(context.Background(), 4*wait)
			defer cancel()
			var held []net.Conn
			for i := 0; i < badInputMaxConns; i++ {
				nc, err := d(ctx)
				if err != nil {
					t.Fatalf("connection %d of %d: %v", i+1, badInputMaxConns, err)
				}
				defer nc.Close()
				if l, err := badInputSTOMPLogin(nc, badInputUser, badInputPassword, "", false); err != nil || !l.accepted {
					t.Fatalf("connection %d of %d: %+v %v", i+1, badInputMaxConns, l, err)
				}
				held = append(held, nc)
			}
			// The one over the limit: closed before the TLS handshake or
			// WebSocket upgrade completes, or before CONNECT is answered.
			if nc, err := d(ctx); err == nil {
				l, err := badInputSTOMPLogin(nc, badInputUser, badInputPassword, "", false)
				nc.Close()
				if err == nil {
					t.Fatalf("connection %d over maximumConnections=%d answered: %+v", badInputMaxConns+1, badInputMaxConns, l)
				}
			}
			held[0].Close()
			// The slot is released asynchronously: poll.
			deadline := time.Now().Add(wait)
			for {
				l, err := try(ctx, d, badInputSTOMPLogin, badInputUser, badInputPassword, "", false)
				if err == nil && l.accepted {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no connection accepted within %v after one of %d closed: %+v %v", wait, badInputMaxConns, l, err)
				}
			}
		})
	}
}

// checkSTOMPFrameError reads the broker's answer to an oversized CONNECT:
// an ERROR with msg, then the close.
func checkSTOMPFrameError(t *testing.T, conn string, nc net.Conn, msg string) {
	t.Helper()
	_ = nc.SetReadDeadline(time.Now().Add(wait))
	f, err := readSTOMPFrame(bufio.NewReader(nc))
	if err != nil {
		t.Fatalf("%s: no answer: %v", conn, err)
	}
	if got, _ := f.Get("message"); f.Command != "ERROR" || got != msg {
		t.Errorf("%s: got %s, want ERROR %q", conn, f, msg)
	}
	if !waitClosed(nc) {
		t.Errorf("%s: connection left open after the frame error", conn)
	}
}

// TestConformanceSecurityFrameLimitBeforeAuth: an oversized CONNECT (a
// 10 MB header or password) on a connector with a 4 KiB frame limit gets
// the frame-size refusal, never an authentication answer, on every
// protocol; good logins on the same connectors work.
func TestConformanceSecurityFrameLimitBeforeAuth(t *testing.T) {
	b, _ := startBadInputBroker(t)
	huge := strings.Repeat("x", 10<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 6*wait)
	defer cancel()
	t.Run("stomp", func(t *testing.T) {
		for _, conn := range []string{"stomp-small", "stomp+ssl-small"} {
			p := badInputProtocol{connector: conn}
			d := p.dialerFor(t, b)
			nc, err := d(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			// The frame is written from a goroutine, since the broker
			// may stop reading.
			go nc.Write(conform.EncodeRaw("CONNECT", []string{"accept-version:1.2", "host:localhost",
				"login:" + badInputUser, "passcode:" + badInputPassword, "x-pad:" + huge}, nil))
			// A 10 MB header line hits ActiveMQ's header line limit
			// (StompWireFormat.MAX_HEADER_LENGTH, 10 KiB) first.
			checkSTOMPFrameError(t, conn, nc, "The maximum header length was exceeded")
			// Headers each under 10 KiB but together over the 4 KiB
			// frame limit hit maxFrameSize.
			nc2, err := d(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer nc2.Close()
			h := []string{"accept-version:1.2", "host:localhost", "login:" + badInputUser, "passcode:" + badInputPassword}
			for i := 0; i < 20; i++ {
				h = append(h, "x-pad-"+strconv.Itoa(i)+":"+huge[:1000])
			}
			go nc2.Write(conform.EncodeRaw("CONNECT", h, nil))
			checkSTOMPFrameError(t, conn, nc2, "The maximum frame size was exceeded")
			if l, err := try(ctx, d, badInputSTOMPLogin, badInputUser, badInputPassword, "", false); err != nil || !l.accepted {
				t.Errorf("%s: good login after: %+v %v", conn, l, err)
			}
		}
	})
	// The other protocols: the password is 10 MB; the broker must close
	// the connection without a login answer.
	for _, c := range []struct {
		name, connector string
		fn              loginFunc
	}{
		{"mqtt", "mqtt-small", mqttLogin(mqttwire.Version311)},
		{"mqtt5", "mqtt-small", mqttLogin(mqttwire.Version5)},
		{"amqp", "amqp-small", amqpLogin("PLAIN")},
		{"openwire", "openwire-small", openwireLogin(owwire.DefaultLimits())},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := tcpDialer(badAddr(t, b, c.connector))
			pass := huge
			if c.name == "openwire" {
				// An OpenWire string holds at most 32 KiB here.
				pass = huge[:30000]
			}
			l, err := try(ctx, d, c.fn, badInputUser, pass, "", false)
			switch {
			case err == nil && l.accepted:
				t.Fatal("a 10 MB password logged in")
			case err == nil && strings.Contains(l.refusal, "password is invalid"):
				t.Fatalf("authenticated an oversized frame: %q", l.refusal)
			case err == nil && l.refusal == "SASL outcome 2" && c.name == "amqp":
				// sasl-outcome sys: the frame was refused for its size
				// before any credential was looked at (outcome 1, auth,
				// would mean it had been); the close follows it.
			case err == nil && strings.HasPrefix(l.refusal, "CONNACK "):
				// MQTT 5 may say why: 0x95 packet too large.
				if l.refusal != "CONNACK 149" {
					t.Fatalf("refused with %q, want the connection closed or CONNACK 0x95", l.refusal)
				}
			case err == nil:
				t.Fatalf("refused with %q, want the connection closed for its size", l.refusal)
			}
			t.Logf("oversized login: %+v, %v", l, err)
			if l, err := try(ctx, d, c.fn, badInputUser, badInputPassword, "", false); err != nil || !l.accepted {
				t.Errorf("good login after: %+v %v", l, err)
			}
		})
	}
}
