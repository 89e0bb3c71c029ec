package stomp

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/internal/conntest"
	"wharf/protocols/stomp/wire"
)

// The session state machine driven frame by frame over the in-memory
// transport.Conn, on a real engine with the memory store: what each frame
// writes back, what it leaves in the engine, and when the connection closes.

// wait bounds every wait for a frame the session writes from a shard or
// timer goroutine; a passing test never waits that long.
const wait = 5 * time.Second

func newSTOMPServer(t *testing.T, o Options) (*engine.Engine, *Server) {
	e := conntest.Engine(t)
	return e, NewServer(e, o)
}

// stompClient is a client's view of one session: it feeds frames and
// decodes what the session wrote.
type stompClient struct {
	t      *testing.T
	tc     *conntest.Conn
	s      *session
	dec    *wire.Decoder
	read   int // bytes of tc's output decoded so far
	frames []wire.Frame
}

func dialSTOMP(t *testing.T, srv *Server) *stompClient {
	t.Helper()
	tc := &conntest.Conn{}
	c := &stompClient{t: t, tc: tc, s: srv.Handler(tc).(*session), dec: wire.NewDecoder(wire.DefaultLimits())}
	t.Cleanup(func() { c.s.OnClose(nil) })
	return c
}

// connect opens the session as a STOMP 1.2 client and returns CONNECTED.
func (c *stompClient) connect(headers ...string) wire.Frame {
	c.t.Helper()
	c.send("CONNECT\naccept-version:1.2\nhost:x\n" + strings.Join(append(headers, ""), "\n") + "\n\x00")
	return c.expect("CONNECTED\nversion:1.2")
}

func (c *stompClient) send(frames string) { c.s.OnData([]byte(frames)) }

// next returns the next frame the session wrote, waiting for it.
func (c *stompClient) next() wire.Frame {
	c.t.Helper()
	for len(c.frames) == 0 {
		in := c.tc.Since(c.read, wait)
		if in == nil {
			c.t.Fatalf("no frame within %v (closed: %v)", wait, c.tc.Closed())
		}
		c.read += len(in)
		c.feed(in)
	}
	f := c.frames[0]
	c.frames = c.frames[1:]
	return f
}

func (c *stompClient) feed(in []byte) {
	for {
		frames, _, err := c.dec.Feed(in, nil)
		if err != nil {
			c.t.Fatalf("session wrote an undecodable frame: %v", err)
		}
		for _, f := range frames {
			if f.Command == wire.CmdConnected {
				// The decoder stops after CONNECTED; what follows is in
				// the negotiated version.
				v, _ := f.Get("version")
				c.dec.SetVersion(v)
			}
		}
		c.frames = append(c.frames, frames...)
		if len(frames) == 0 || c.dec.Buffered() == 0 {
			return
		}
		in = nil
	}
}

// expect reads the next frame and checks it against want: a command line,
// then "name:value" lines that must be among its headers, and an optional
// "$body:" line the body must equal.
func (c *stompClient) expect(want string) wire.Frame {
	c.t.Helper()
	f := c.next()
	lines := strings.Split(want, "\n")
	if f.Command != lines[0] {
		c.t.Fatalf("got %s %v %q, want %q", f.Command, f.Headers, f.Body, want)
	}
	for _, l := range lines[1:] {
		name, value, _ := strings.Cut(l, ":")
		if name == "$body" {
			if string(f.Body) != value {
				c.t.Fatalf("%s body %q, want %q", f.Command, f.Body, value)
			}
			continue
		}
		if got, ok := f.Get(name); !ok || got != value {
			c.t.Fatalf("%s header %s = %q (present %v), want %q; headers %v", f.Command, name, got, ok, value, f.Headers)
		}
	}
	return f
}

// awaitClosed waits for the session to close its connection.
func (c *stompClient) awaitClosed() {
	c.t.Helper()
	if !c.tc.Await(wait, func(_ []byte, closed bool) bool { return closed }) {
		c.t.Fatalf("the session did not close the connection within %v", wait)
	}
}

// header returns f's header name, failing when it is absent.
func header(t *testing.T, f wire.Frame, name string) string {
	t.Helper()
	v, ok := f.Get(name)
	if !ok {
		t.Fatalf("%s has no %s header: %v", f.Command, name, f.Headers)
	}
	return v
}

func TestSTOMPConnect(t *testing.T) {
	cases := []struct {
		name    string
		connect string
		want    string // the frame answered
		closed  bool
	}{
		{"highest common version", "CONNECT\naccept-version:1.0,1.1,1.2\nhost:x\n\n\x00",
			"CONNECTED\nversion:1.2\nheart-beat:0,0\nserver:" + serverHeader, false},
		{"STOMP command, 1.1", "STOMP\naccept-version:1.1\nhost:x\n\n\x00",
			"CONNECTED\nversion:1.1", false},
		{"no accept-version is 1.0", "CONNECT\n\n\x00",
			"CONNECTED\nversion:1.0", false},
		{"heart-beat swapped back", "CONNECT\naccept-version:1.2\nheart-beat:1000,2000\n\n\x00",
			"CONNECTED\nheart-beat:2000,1000", false},
		{"client-id names the session", "CONNECT\naccept-version:1.2\nclient-id:app-7\n\n\x00",
			"CONNECTED\nsession:app-7", false},
		{"receipt on CONNECT", "CONNECT\naccept-version:1.2\nreceipt:c1\n\n\x00",
			"CONNECTED\nreceipt-id:c1\nresponse-id:c1", false},
		{"unsupported version", "CONNECT\naccept-version:2.0\n\n\x00",
			"ERROR\nmessage:Invalid Protocol version[2.0], supported versions are: [1.0, 1.1, 1.2]", true},
		{"bad heart-beat", "CONNECT\naccept-version:1.2\nheart-beat:often\n\n\x00",
			"ERROR\nmessage:Invalid heart-beat header:often", true},
		{"SEND before CONNECT", "SEND\ndestination:/queue/q\nreceipt:s1\n\nx\x00",
			"ERROR\nmessage:Not connected.\nreceipt-id:s1", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, srv := newSTOMPServer(t, DefaultOptions())
			c := dialSTOMP(t, srv)
			c.send(tc.connect)
			f := c.expect(tc.want)
			if f.Command == wire.CmdConnected && header(t, f, "session") == "" {
				t.Fatal("CONNECTED names no session")
			}
			if c.tc.Closed() != tc.closed {
				t.Fatalf("closed %v after %q, want %v", c.tc.Closed(), tc.connect, tc.closed)
			}
		})
	}
}

// A second CONNECT is refused and the connection stays usable.
func TestSTOMPSecondConnect(t *testing.T) {
	_, srv := newSTOMPServer(t, DefaultOptions())
	c := dialSTOMP(t, srv)
	c.connect()
	c.send("CONNECT\naccept-version:1.2\n\n\x00")
	c.expect("ERROR\nmessage:Already connected.")
	c.send("BEGIN\ntransaction:t\nreceipt:b\n\n\x00")
	c.expect("RECEIPT\nreceipt-id:b")
	if c.tc.Closed() {
		t.Fatal("a refused second CONNECT closed the connection")
	}
}

var (
	queueA = message.QueueDest("a")
	dlq    = message.QueueDest("ActiveMQ.DLQ")
)

// stompStep is one exchange of a scripted session: frames sent, then the
// frames expected back in order (see stompClient.expect for their form).
type stompStep struct {
	send string
	want []string
}

// TestSTOMPFrames plays scripts on a connected STOMP 1.2 session, then
// checks what the engine holds. Each script ends with a frame whose answer
// proves that nothing else was written before it.
func TestSTOMPFrames(t *testing.T) {
	cases := []struct {
		name   string
		steps  []stompStep
		closed bool
		check  func(t *testing.T, e *engine.Engine)
	}{
		{name: "SEND with receipt stores the message",
			steps: []stompStep{{"SEND\ndestination:/queue/a\npersistent:true\nreceipt:s1\n\nhello\x00", []string{"RECEIPT\nreceipt-id:s1"}}},
			check: queueHolds(queueA, 1)},
		{name: "SEND without receipt writes nothing",
			steps: []stompStep{
				{"SEND\ndestination:/queue/a\n\none\x00", nil},
				{"SEND\ndestination:/queue/a\nreceipt:s2\n\ntwo\x00", []string{"RECEIPT\nreceipt-id:s2"}},
			},
			check: queueHolds(queueA, 2)},
		{name: "SEND without destination",
			steps: []stompStep{{"SEND\nreceipt:s1\n\nx\x00", []string{"ERROR\nmessage:SEND received without a Destination specified!\nreceipt-id:s1"}}},
			check: queueHolds(queueA, 0)},
		{name: "content-length body keeps its NULs",
			steps: []stompStep{
				{"SUBSCRIBE\nid:0\ndestination:/queue/a\nreceipt:sub\n\n\x00", []string{"RECEIPT\nreceipt-id:sub"}},
				{"SEND\ndestination:/queue/a\ncontent-length:5\n\na\x00b\x00c\x00", []string{"MESSAGE\nsubscription:0\ncontent-length:5\n$body:a\x00b\x00c"}},
			}},
		{name: "SUBSCRIBE auto consumes on delivery",
			steps: []stompStep{
				{"SUBSCRIBE\nid:0\ndestination:/queue/a\nack:auto\nreceipt:sub\n\n\x00", []string{"RECEIPT\nreceipt-id:sub"}},
				{"SEND\ndestination:/queue/a\n\nm1\x00", []string{"MESSAGE\nsubscription:0\ndestination:/queue/a\n$body:m1"}},
			},
			check: queueHolds(queueA, 0)},
		{name: "SUBSCRIBE client keeps the message until ACK",
			steps: []stompStep{
				{"SUBSCRIBE\nid:0\ndestination:/queue/a\nack:client\nreceipt:sub\n\n\x00", []string{"RECEIPT\nreceipt-id:sub"}},
				{"SEND\ndestination:/queue/a\n\nm1\x00", []string{"MESSAGE\nsubscription:0\n$body:m1"}},
			},
			check: queueHolds(queueA, 1)},
		{name: "UNSUBSCRIBE with receipt removes the consumer",
			steps: []stompStep{
				{"SUBSCRIBE\nid:s\ndestination:/queue/a\n\n\x00", nil},
				{"UNSUBSCRIBE\nid:s\nreceipt:u\n\n\x00", []string{"RECEIPT\nreceipt-id:u"}},
			},
			check: func(t *testing.T, e *engine.Engine) {
				if n := e.Stats(queueA).ConsumerCount; n != 0 {
					t.Fatalf("%d consumers on /queue/a after UNSUBSCRIBE", n)
				}
			}},
		{name: "UNSUBSCRIBE of an unknown id",
			steps: []stompStep{{"UNSUBSCRIBE\nid:nope\nreceipt:u\n\n\x00", []string{"ERROR\nmessage:No subscription matched.\nreceipt-id:u"}}}},
		{name: "SUBSCRIBE without id in 1.2",
			steps: []stompStep{{"SUBSCRIBE\ndestination:/queue/a\n\n\x00", []string{"ERROR\nmessage:SUBSCRIBE received without a subscription id!"}}}},
		{name: "duplicate subscription id",
			steps: []stompStep{
				{"SUBSCRIBE\nid:s\ndestination:/queue/a\n\n\x00", nil},
				{"SUBSCRIBE\nid:s\ndestination:/queue/b\n\n\x00", []string{"ERROR\nmessage:Duplicate subscription id: s"}},
			}},
		{name: "ACK without id in 1.2",
			steps: []stompStep{{"ACK\nmessage-id:x\n\n\x00", []string{"ERROR\nmessage:ACK received without a ack id for acknowledge!"}}}},
		{name: "ACK of an unknown delivery",
			steps: []stompStep{{"ACK\nid:9-9\n\n\x00", []string{"ERROR\nmessage:Unexpected ACK received for message-id [null]"}}}},
		{name: "NACK of an unknown delivery",
			steps: []stompStep{{"NACK\nid:9-9\nmessage-id:m\n\n\x00", []string{"ERROR\nmessage:Unexpected NACK received for message-id [m]"}}}},
		{name: "BEGIN, SEND, COMMIT",
			steps: []stompStep{
				{"BEGIN\ntransaction:t1\nreceipt:b\n\n\x00", []string{"RECEIPT\nreceipt-id:b"}},
				{"SEND\ndestination:/queue/a\ntransaction:t1\n\nx\x00", nil},
				{"COMMIT\ntransaction:t1\nreceipt:c\n\n\x00", []string{"RECEIPT\nreceipt-id:c"}},
			},
			check: queueHolds(queueA, 1)},
		{name: "BEGIN, SEND, ABORT",
			steps: []stompStep{
				{"BEGIN\ntransaction:t1\n\n\x00", nil},
				{"SEND\ndestination:/queue/a\ntransaction:t1\n\nx\x00", nil},
				{"ABORT\ntransaction:t1\nreceipt:a\n\n\x00", []string{"RECEIPT\nreceipt-id:a"}},
			},
			check: queueHolds(queueA, 0)},
		{name: "BEGIN twice",
			steps: []stompStep{
				{"BEGIN\ntransaction:t1\n\n\x00", nil},
				{"BEGIN\ntransaction:t1\n\n\x00", []string{"ERROR\nmessage:The transaction was already started: t1"}},
			}},
		{name: "COMMIT of an unknown transaction",
			steps: []stompStep{{"COMMIT\ntransaction:nope\nreceipt:c\n\n\x00", []string{"ERROR\nmessage:Invalid transaction id: nope\nreceipt-id:c"}}}},
		{name: "SEND in an unknown transaction",
			steps: []stompStep{{"SEND\ndestination:/queue/a\ntransaction:nope\n\nx\x00", []string{"ERROR\nmessage:Invalid transaction id: nope"}}},
			check: queueHolds(queueA, 0)},
		{name: "DISCONNECT with receipt releases and closes",
			steps: []stompStep{
				{"SUBSCRIBE\nid:s\ndestination:/queue/a\n\n\x00", nil},
				{"DISCONNECT\nreceipt:bye\n\n\x00", []string{"RECEIPT\nreceipt-id:bye"}},
			},
			closed: true,
			check: func(t *testing.T, e *engine.Engine) {
				if n := e.Stats(queueA).ConsumerCount; n != 0 {
					t.Fatalf("%d consumers on /queue/a after DISCONNECT", n)
				}
			}},
		{name: "header line without a colon is fatal",
			steps:  []stompStep{{"SEND\ndestination\n\nx\x00", []string{"ERROR\ncontent-type:text/plain"}}},
			closed: true},
		{name: "unknown command is fatal",
			steps:  []stompStep{{"FROB\n\n\x00", []string{"ERROR\nmessage:Unknown STOMP action: FROB"}}},
			closed: true},
		{name: "content-length without trailing NUL is fatal",
			steps:  []stompStep{{"SEND\ndestination:/queue/a\ncontent-length:1\n\nxy\x00", []string{"ERROR\nmessage:content-length bytes were read and there was no trailing null byte"}}},
			closed: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, srv := newSTOMPServer(t, DefaultOptions())
			c := dialSTOMP(t, srv)
			c.connect()
			for _, st := range tc.steps {
				c.send(st.send)
				for _, w := range st.want {
					c.expect(w)
				}
			}
			if c.tc.Closed() != tc.closed {
				t.Fatalf("closed %v, want %v", c.tc.Closed(), tc.closed)
			}
			if tc.check != nil {
				tc.check(t, e)
			}
		})
	}
}

// queueHolds checks the messages d holds (pending and in flight).
func queueHolds(d message.Destination, n int64) func(*testing.T, *engine.Engine) {
	return func(t *testing.T, e *engine.Engine) {
		t.Helper()
		if got := e.Stats(d).QueueSize; got != n {
			t.Fatalf("%s holds %d messages, want %d", d, got, n)
		}
	}
}

// The three ack modes differ in what an ACK settles and in what a closed
// session gives back: m1 and m2 are delivered, the ACK names m2, and the
// session closes; the queue then holds what was not acknowledged.
func TestSTOMPAckModes(t *testing.T) {
	cases := []struct {
		mode string
		left int64 // messages still on the queue after the close
	}{
		{"auto", 0},              // consumed on delivery; the ACK is refused
		{"client", 0},            // ACK of m2 settles m1 too
		{"client-individual", 1}, // only m2: m1 comes back
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			e, srv := newSTOMPServer(t, DefaultOptions())
			c := dialSTOMP(t, srv)
			c.connect()
			c.send("SUBSCRIBE\nid:0\ndestination:/queue/a\nack:" + tc.mode + "\nreceipt:sub\n\n\x00")
			c.expect("RECEIPT\nreceipt-id:sub")
			c.send("SEND\ndestination:/queue/a\npersistent:true\n\nm1\x00SEND\ndestination:/queue/a\npersistent:true\n\nm2\x00")
			c.expect("MESSAGE\n$body:m1")
			m2 := c.expect("MESSAGE\n$body:m2")
			ackID, hasAck := m2.Get("ack")
			if hasAck != (tc.mode != "auto") {
				t.Fatalf("ack header present %v in mode %s", hasAck, tc.mode)
			}
			if tc.mode == "auto" {
				c.send("ACK\nid:1-1\n\n\x00")
				c.expect("ERROR\nmessage:Unexpected ACK received for message-id [null]")
			} else {
				c.send("ACK\nid:" + ackID + "\nreceipt:ack\n\n\x00")
				c.expect("RECEIPT\nreceipt-id:ack")
			}
			c.send("DISCONNECT\nreceipt:bye\n\n\x00")
			c.expect("RECEIPT\nreceipt-id:bye")
			if got := e.Stats(queueA).QueueSize; got != tc.left {
				t.Fatalf("ack:%s left %d messages, want %d", tc.mode, got, tc.left)
			}
		})
	}
}

// An ACK in client mode settles the deliveries before it, which cannot be
// acknowledged again; in client-individual mode only the one it names.
func TestSTOMPAckSettles(t *testing.T) {
	cases := []struct {
		mode   string
		reAck1 string // the answer to an ACK of m1 after the ACK of m2
	}{
		{"client", "ERROR\nmessage:Unexpected ACK received for message-id [null]"},
		{"client-individual", "RECEIPT\nreceipt-id:ack1"},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			e, srv := newSTOMPServer(t, DefaultOptions())
			c := dialSTOMP(t, srv)
			c.connect()
			c.send("SUBSCRIBE\nid:0\ndestination:/queue/a\nack:" + tc.mode + "\n\n\x00")
			c.send("SEND\ndestination:/queue/a\n\nm1\x00SEND\ndestination:/queue/a\n\nm2\x00")
			m1 := c.expect("MESSAGE\n$body:m1")
			m2 := c.expect("MESSAGE\n$body:m2")
			c.send("ACK\nid:" + header(t, m2, "ack") + "\nreceipt:ack2\n\n\x00")
			c.expect("RECEIPT\nreceipt-id:ack2")
			c.send("ACK\nid:" + header(t, m1, "ack") + "\nreceipt:ack1\n\n\x00")
			c.expect(tc.reAck1)
			if got := e.Stats(queueA).QueueSize; got != 0 {
				t.Fatalf("ack:%s: /queue/a holds %d after both were acknowledged", tc.mode, got)
			}
		})
	}
}

// NACK is ActiveMQ's poison ack: the message goes to the DLQ, and the
// RECEIPT waits for the store.
func TestSTOMPNackToDLQ(t *testing.T) {
	e, srv := newSTOMPServer(t, DefaultOptions())
	c := dialSTOMP(t, srv)
	c.connect()
	c.send("SUBSCRIBE\nid:0\ndestination:/queue/a\nack:client-individual\n\n\x00")
	c.send("SEND\ndestination:/queue/a\npersistent:true\n\npoison\x00")
	m := c.expect("MESSAGE\n$body:poison")
	c.send("NACK\nid:" + header(t, m, "ack") + "\nreceipt:n\n\n\x00")
	c.expect("RECEIPT\nreceipt-id:n")
	if got := e.Stats(queueA).QueueSize; got != 0 {
		t.Fatalf("/queue/a holds %d after NACK, want 0", got)
	}
	if got := e.Stats(dlq).QueueSize; got != 1 {
		t.Fatalf("the DLQ holds %d after NACK, want 1", got)
	}
}

// A 1.0 session has no NACK.
func TestSTOMPNackIn10(t *testing.T) {
	_, srv := newSTOMPServer(t, DefaultOptions())
	c := dialSTOMP(t, srv)
	c.send("CONNECT\n\n\x00")
	c.expect("CONNECTED\nversion:1.0")
	c.send("NACK\nmessage-id:x\n\n\x00")
	c.expect("ERROR\nmessage:NACK received but connection is in v1.0 mode.")
}

// A client that promised heart-beats and sends nothing is cut after the
// check period; no heart-beat is written to a client that asked for none.
func TestSTOMPHeartBeatReadCheck(t *testing.T) {
	_, srv := newSTOMPServer(t, DefaultOptions())
	c := dialSTOMP(t, srv)
	c.connect("heart-beat:20,0")
	c.awaitClosed()
	if c.read != len(c.tc.Written()) {
		t.Fatalf("the session wrote %q after CONNECTED to a client that wants no heart-beats", c.tc.Written()[c.read:])
	}
}

// A client that wants heart-beats gets an EOL every period it hears
// nothing else.
func TestSTOMPHeartBeatWrites(t *testing.T) {
	_, srv := newSTOMPServer(t, DefaultOptions())
	c := dialSTOMP(t, srv)
	c.connect("heart-beat:0,10")
	start := c.read
	if !c.tc.Await(wait, func(out []byte, _ bool) bool { return bytes.Count(out[start:], heartBeat) >= 2 }) {
		t.Fatalf("no two heart-beats within %v; wrote %q", wait, c.tc.Written()[start:])
	}
	if out := c.tc.Written()[start:]; len(bytes.Trim(out, "\n")) != 0 {
		t.Fatalf("an idle session wrote %q, want heart-beats only", out)
	}
	if c.tc.Closed() {
		t.Fatal("a client that promised no heart-beats was cut")
	}
}

// A connection that sends no CONNECT is closed after ConnectTimeout.
func TestSTOMPConnectTimeout(t *testing.T) {
	o := DefaultOptions()
	o.ConnectTimeout = 10 * time.Millisecond
	_, srv := newSTOMPServer(t, o)
	c := dialSTOMP(t, srv)
	c.awaitClosed()
	if out := c.tc.Written(); len(out) != 0 {
		t.Fatalf("wrote %q to a connection that never connected", out)
	}
}

// TestSTOMPDecoderPooledBetweenFrames: an idle session holds no decoder;
// one that has read part of a frame keeps it until the frame is whole, and
// a decoder taken from the pool decodes under the negotiated version (1.2
// unescapes "\c" in a SEND's header).
func TestSTOMPDecoderPooledBetweenFrames(t *testing.T) {
	_, srv := newSTOMPServer(t, DefaultOptions())
	c := dialSTOMP(t, srv)
	if c.s.dec != nil {
		t.Fatal("a session holds a decoder before its first read")
	}
	c.connect()
	if c.s.dec != nil {
		t.Fatal("an idle session holds a decoder after CONNECT")
	}
	c.send("SUBSCRIBE\nid:0\ndestination:/queue/pooled\nreceipt:r0\n\n\x00")
	c.expect("RECEIPT\nreceipt-id:r0")
	send := "SEND\ndestination:/queue/pooled\nk:v\\cw\nreceipt:r1\n\nbody\x00"
	from := 0
	for _, cut := range []int{3, 30, len(send) - 1} {
		c.send(send[from:cut])
		if c.s.dec == nil {
			t.Fatalf("cut at %d: the session gave its decoder back with a frame partly read", cut)
		}
		from = cut
	}
	c.send(send[from:])
	if c.s.dec != nil {
		t.Fatal("the session kept its decoder after a whole frame")
	}
	// The RECEIPT and the MESSAGE come from different goroutines, in
	// either order.
	got := map[string]wire.Frame{}
	for range 2 {
		f := c.next()
		got[f.Command] = f
	}
	if r, ok := got[wire.CmdReceipt]; !ok || header(t, r, "receipt-id") != "r1" {
		t.Fatalf("no RECEIPT r1 among %v", got)
	}
	m, ok := got[wire.CmdMessage]
	if !ok || header(t, m, "k") != "v:w" || string(m.Body) != "body" {
		t.Fatalf("MESSAGE %+v; want header k v:w (unescaped under 1.2) and body \"body\"", m)
	}
}
