package conform

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// RawConn is a byte-level STOMP client for what go-stomp cannot express:
// malformed frames, unknown commands, exact ERROR headers, heart-beat
// silence, 1.0 and 1.1 ACK forms, and connections that must survive an
// ERROR (go-stomp closes on every ERROR).
type RawConn struct {
	t       TB
	c       net.Conn
	r       *bufio.Reader
	version string // negotiated; decides header unescaping
	// beats counts heart-beat EOLs read between frames.
	beats int
	// Pending are MESSAGE frames that arrived while waiting for a RECEIPT
	// (a subscriber may see its own message before the SEND's receipt);
	// Read returns them first.
	Pending []*RawFrame
}

// Close closes the connection's socket (as a crashed client would: no
// DISCONNECT).
func (c *RawConn) Close() error { return c.c.Close() }

// RawFrame is a frame as read: headers in wire order, values decoded for the
// connection's version, repeated names kept.
type RawFrame struct {
	Command string
	Headers [][2]string
	Body    []byte
}

// Get returns the first occurrence of a header (STOMP 1.2 "Repeated Header
// Entries").
func (f *RawFrame) Get(name string) (string, bool) {
	for _, h := range f.Headers {
		if h[0] == name {
			return h[1], true
		}
	}
	return "", false
}

// Must returns a header that must be present.
func (f *RawFrame) Must(t TB, name string) string {
	t.Helper()
	v, ok := f.Get(name)
	if !ok {
		t.Fatalf("%s frame has no %q header: %s", f.Command, name, f)
	}
	return v
}

func (f *RawFrame) String() string {
	var b strings.Builder
	b.WriteString(f.Command)
	for _, h := range f.Headers {
		fmt.Fprintf(&b, " %s:%q", h[0], h[1])
	}
	if len(f.Body) > 0 {
		body := f.Body
		if len(body) > 200 {
			body = body[:200]
		}
		fmt.Fprintf(&b, " body=%q", body)
	}
	return b.String()
}

// volatileHeaders differ from run to run and broker to broker without
// meaning anything (ids, times, names with the run prefix); compact leaves
// them out of observations, so that two brokers' frames compare.
var volatileHeaders = map[string]bool{
	"message-id": true, "ack": true, "session": true, "timestamp": true, "subscription": true,
	"destination": true, "server": true, "receipt-id": true, "expires": true, "content-length": true,
	"original-destination": true, "reply-to": true, "JMSXUserID": true, "correlation-id": true,
}

// compact is the frame without its volatile headers, for observations.
func (f *RawFrame) compact() string {
	var b strings.Builder
	b.WriteString(f.Command)
	for _, h := range f.Headers {
		if !volatileHeaders[h[0]] && !strings.HasPrefix(h[0], "conf_") {
			fmt.Fprintf(&b, " %s:%q", h[0], h[1])
		}
	}
	if len(f.Body) > 0 {
		body := f.Body
		if len(body) > 120 {
			body = body[:120]
		}
		fmt.Fprintf(&b, " body=%q", body)
	}
	return b.String()
}

// DialRaw opens a TCP connection; it is closed at the end of the test.
func DialRaw(t TB, addr string) *RawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return NewRawConn(t, c, "1.0")
}

// NewRawConn is a STOMP client on a connection already open (over TLS,
// say) whose frames are read as of version (which ConnectRaw sets from
// CONNECTED).
func NewRawConn(t TB, nc net.Conn, version string) *RawConn {
	return &RawConn{t: t, c: nc, r: bufio.NewReader(nc), version: version}
}

// ConnectRaw dials and connects with accept-version (e.g. "1.2"; "" sends
// none) and extra headers ("name:value"), and checks CONNECTED.
func ConnectRaw(t TB, addr, version string, headers ...string) (*RawConn, *RawFrame) {
	t.Helper()
	c := DialRaw(t, addr)
	h := []string{"host:" + stompHost(t)}
	if version != "" {
		h = append(h, "accept-version:"+version)
	}
	if user, pass := credentials(t); user != "" && !slices.ContainsFunc(headers, func(h string) bool { return strings.HasPrefix(h, "login:") }) {
		h = append(h, "login:"+user, "passcode:"+pass)
	}
	f := c.Request("CONNECT", append(h, headers...), nil)
	if f.Command != "CONNECTED" {
		t.Fatalf("CONNECT: got %s, want CONNECTED", f)
	}
	c.version = f.Must(t, "version")
	return c, f
}

// write sends raw bytes.
func (c *RawConn) Write(b []byte) {
	c.t.Helper()
	c.c.SetWriteDeadline(time.Now().Add(wait))
	if _, err := c.c.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// send writes a frame; headers are "name:value" strings written verbatim
// (the caller escapes), and body follows the blank line.
func (c *RawConn) Send(cmd string, headers []string, body []byte) {
	c.t.Helper()
	if cmd != "CONNECT" && cmd != "STOMP" {
		observe(c.t, "send", "%s", (&RawFrame{Command: cmd, Headers: splitHeaders(headers), Body: body}).String())
	}
	c.Write(EncodeRaw(cmd, headers, body))
}

// splitHeaders turns "name:value" strings into pairs, for observations.
func splitHeaders(hs []string) [][2]string {
	out := make([][2]string, 0, len(hs))
	for _, h := range hs {
		k, v, _ := strings.Cut(h, ":")
		out = append(out, [2]string{k, v})
	}
	return out
}

func EncodeRaw(cmd string, headers []string, body []byte) []byte {
	var b bytes.Buffer
	b.WriteString(cmd)
	b.WriteByte('\n')
	for _, h := range headers {
		b.WriteString(h)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.Write(body)
	b.WriteByte(0)
	return b.Bytes()
}

// request sends a frame and returns the next frame the broker sends.
func (c *RawConn) Request(cmd string, headers []string, body []byte) *RawFrame {
	c.t.Helper()
	c.Send(cmd, headers, body)
	return c.Read()
}

// read returns the next frame, skipping heart-beats, failing after wait.
func (c *RawConn) Read() *RawFrame {
	c.t.Helper()
	if len(c.Pending) > 0 {
		f := c.Pending[0]
		c.Pending = c.Pending[1:]
		return f
	}
	f, err := c.ReadWithin(wait)
	if err != nil {
		c.t.Fatalf("read frame: %v", err)
	}
	return f
}

// readWithin reads the next frame within d.
func (c *RawConn) ReadWithin(d time.Duration) (*RawFrame, error) {
	f, err := c.readFrameWithin(d)
	if err == nil {
		observe(c.t, "recv", "%s", f.compact())
	}
	return f, err
}

// readFrameWithin is readWithin without the observation.
func (c *RawConn) readFrameWithin(d time.Duration) (*RawFrame, error) {
	c.c.SetReadDeadline(time.Now().Add(d))
	defer c.c.SetReadDeadline(time.Time{})
	var line string
	for {
		l, err := c.r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		l = strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
		if l == "" {
			c.beats++ // heart-beat, or the EOL after a frame's NUL
			continue
		}
		line = l
		break
	}
	f := &RawFrame{Command: line}
	for {
		l, err := c.r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("%s headers: %w", f.Command, err)
		}
		l = strings.TrimSuffix(l, "\n")
		if c.version != "1.0" {
			l = strings.TrimSuffix(l, "\r")
		}
		if l == "" {
			break
		}
		name, value, ok := strings.Cut(l, ":")
		if !ok {
			return nil, fmt.Errorf("%s: header line %q has no colon", f.Command, l)
		}
		// CONNECTED is never escaped (STOMP 1.2 "Value Encoding").
		if c.version != "1.0" && f.Command != "CONNECTED" {
			name, value = Unescape(name), Unescape(value)
		}
		f.Headers = append(f.Headers, [2]string{name, value})
	}
	if cl, ok := f.Get("content-length"); ok {
		n, err := strconv.Atoi(cl)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s: bad content-length %q", f.Command, cl)
		}
		f.Body = make([]byte, n)
		if _, err := io.ReadFull(c.r, f.Body); err != nil {
			return nil, fmt.Errorf("%s body: %w", f.Command, err)
		}
		nul, err := c.r.ReadByte()
		if err != nil || nul != 0 {
			return nil, fmt.Errorf("%s: no NUL after %d body bytes (got %q, %v)", f.Command, n, nul, err)
		}
		return f, nil
	}
	body, err := c.r.ReadBytes(0)
	if err != nil {
		return nil, fmt.Errorf("%s body: %w", f.Command, err)
	}
	f.Body = body[:len(body)-1]
	return f, nil
}

func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'c':
			b.WriteByte(':')
		case '\\':
			b.WriteByte('\\')
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// expect reads the next frame and checks its command.
func (c *RawConn) Expect(cmd string) *RawFrame {
	c.t.Helper()
	f := c.Read()
	if f.Command != cmd {
		c.t.Fatalf("got %s, want a %s frame", f, cmd)
	}
	return f
}

// expectReceipt reads up to the RECEIPT for id; MESSAGE frames before it
// are kept for read, any other frame fails the test.
func (c *RawConn) ExpectReceipt(id string) {
	c.t.Helper()
	var msgs []*RawFrame
	for {
		f := c.Read()
		if f.Command == "MESSAGE" {
			msgs = append(msgs, f)
			continue
		}
		if f.Command != "RECEIPT" {
			c.t.Fatalf("got %s, want RECEIPT %s", f, id)
		}
		if got := f.Must(c.t, "receipt-id"); got != id {
			c.t.Fatalf("RECEIPT receipt-id: got %q, want %q", got, id)
		}
		c.Pending = append(c.Pending, msgs...)
		return
	}
}

// expectError reads an ERROR frame and checks that its message header
// starts with msgPrefix and that it carries receipt-id (when not "").
func (c *RawConn) ExpectError(msgPrefix, receiptID string) *RawFrame {
	c.t.Helper()
	f := c.Expect("ERROR")
	if msg := f.Must(c.t, "message"); !strings.HasPrefix(msg, msgPrefix) {
		c.t.Fatalf("ERROR message: got %q, want it to start with %q", msg, msgPrefix)
	}
	rid, ok := f.Get("receipt-id")
	switch {
	case receiptID != "" && rid != receiptID:
		c.t.Fatalf("ERROR receipt-id: got %q (present %v), want %q", rid, ok, receiptID)
	case receiptID == "" && ok:
		c.t.Fatalf("ERROR has receipt-id %q, want none", rid)
	}
	return f
}

// expectClosed reads until the broker closes the connection, failing if it
// does not within d or if a frame other than heart-beats arrives first.
func (c *RawConn) ExpectClosed(d time.Duration) {
	c.t.Helper()
	if len(c.Pending) > 0 {
		c.t.Fatalf("got %s, want the connection closed", c.Pending[0])
	}
	deadline := time.Now().Add(d)
	c.c.SetReadDeadline(deadline)
	defer c.c.SetReadDeadline(time.Time{})
	var buf [512]byte
	for {
		n, err := c.r.Read(buf[:])
		if s := strings.Trim(string(buf[:n]), "\n\r\x00"); s != "" {
			c.t.Fatalf("got %q, want the connection closed", s)
		}
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.t.Fatalf("connection still open after %v, want it closed", d)
		}
		return // EOF or reset: closed
	}
}

// sync does a RECEIPT round trip: every frame the broker sends before the
// RECEIPT is returned (a barrier for "nothing else arrived").
func (c *RawConn) Sync() []*RawFrame {
	c.t.Helper()
	before := c.Pending
	c.Pending = nil
	id := fmt.Sprintf("sync-%d", time.Now().UnixNano())
	tx := "tx-" + id
	c.Send("BEGIN", []string{"transaction:" + tx}, nil)
	c.Send("ABORT", []string{"transaction:" + tx, "receipt:" + id}, nil)
	for {
		f := c.Read()
		if f.Command == "RECEIPT" {
			if rid, _ := f.Get("receipt-id"); rid == id {
				return before
			}
		}
		before = append(before, f)
	}
}

// mustSync is sync that fails when any frame came before the RECEIPT.
func (c *RawConn) MustSync() {
	c.t.Helper()
	if fs := c.Sync(); len(fs) > 0 {
		c.t.Fatalf("unexpected frame before the RECEIPT: %s", fs[0])
	}
}

// subscribe sends SUBSCRIBE with a receipt and waits for it.
func (c *RawConn) Subscribe(id, dest string, headers ...string) {
	c.t.Helper()
	r := "sub-" + id
	c.Send("SUBSCRIBE", append([]string{"id:" + id, "destination:" + dest, "receipt:" + r}, headers...), nil)
	c.ExpectReceipt(r)
}

// sendMsg sends a message with a receipt and waits for it.
func (c *RawConn) SendMsg(dest, body string, headers ...string) {
	c.t.Helper()
	r := fmt.Sprintf("send-%d", time.Now().UnixNano())
	c.Send("SEND", append([]string{"destination:" + dest, "receipt:" + r}, headers...), []byte(body))
	c.ExpectReceipt(r)
}

// expectMessage reads the next frame and checks it is a MESSAGE with body.
func (c *RawConn) ExpectMessage(body string) *RawFrame {
	c.t.Helper()
	f := c.Expect("MESSAGE")
	if string(f.Body) != body {
		c.t.Fatalf("MESSAGE body: got %q, want %q (%s)", f.Body, body, f)
	}
	return f
}

// disconnect sends DISCONNECT with a receipt and waits for it and the close.
func (c *RawConn) Disconnect() {
	c.t.Helper()
	c.Send("DISCONNECT", []string{"receipt:bye"}, nil)
	c.ExpectReceipt("bye")
	c.ExpectClosed(wait)
}

// skipErrors reads and drops ERROR frames until something else (or the
// close) comes; what came is left for the next read.
func (c *RawConn) SkipErrors() {
	c.t.Helper()
	for {
		f, err := c.ReadWithin(wait)
		if err != nil {
			// Closed (or timed out): expectClosed sees it again.
			return
		}
		if f.Command != "ERROR" {
			c.Pending = append(c.Pending, f)
			return
		}
	}
}
