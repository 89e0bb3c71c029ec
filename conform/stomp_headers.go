package conform

import (
	"bytes"
	"strconv"
	"time"

	"github.com/go-stomp/stomp/v3"
)

// STOMP 1.2 "Value Encoding": a header value with ':', '\n' and '\\' is
// escaped on the wire and arrives as the same property value.
func stompHeaderEscaping12(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	c, _ := ConnectRaw(t, addr, "1.2")
	c.Subscribe("s", q)
	c.SendMsg(q, "esc", `weird:a\cb\nc\\d`)
	m := c.ExpectMessage("esc")
	if got := m.Must(t, "weird"); got != "a:b\nc\\d" {
		t.Fatalf("weird: got %q, want %q", got, "a:b\nc\\d")
	}
	// go-stomp encodes and decodes the same way.
	g := dial(t, addr)
	gq := queue(t, "g")
	s := sub(t, g, gq, stomp.AckAuto)
	send(t, g, gq, "esc2", hdr("weird", "x:y\nz\\"))
	if got := recvBody(t, s, "esc2").Header.Get("weird"); got != "x:y\nz\\" {
		t.Fatalf("weird via go-stomp: got %q", got)
	}
}

// STOMP 1.0 has no escaping: the broker writes values as they are, and
// everything after the first colon is the value.
//
// DEVIATION (documented difference, the case branches on T.ActiveMQBehaviour): ActiveMQ
// 5.17's StompWireFormat.decodeHeader decodes \c, \n and \\ in incoming
// headers whatever the version, so a 1.0 client's backslashes are not
// literal there. Wharf keeps them, as STOMP 1.0 defines no escapes.
func stompHeaderNoEscaping10(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	c, _ := ConnectRaw(t, addr, "")
	if c.version != "1.0" {
		t.Fatalf("version %q, want 1.0", c.version)
	}
	c.Subscribe("s", q)
	c.SendMsg(q, "raw", `lit:a\cb\\d`, "colons:x:y:z")
	m := c.ExpectMessage("raw")
	want := `a\cb\\d`
	if t.ActiveMQBehaviour() {
		want = `a:b\d`
	}
	if got := m.Must(t, "lit"); got != want {
		t.Fatalf("lit: got %q, want %q", got, want)
	}
	if got := m.Must(t, "colons"); got != "x:y:z" {
		t.Fatalf("colons: got %q, want x:y:z", got)
	}
	// A 1.2 sender's value with a colon and a backslash reaches the 1.0
	// consumer unescaped.
	p, _ := ConnectRaw(t, addr, "1.2")
	p.SendMsg(q, "from 1.2", `v:p\cq\\r`)
	if got := c.ExpectMessage("from 1.2").Must(t, "v"); got != `p:q\r` {
		t.Fatalf("v: got %q, want %q", got, `p:q\r`)
	}
}

// content-length makes a BytesMessage: a binary body with NULs arrives whole,
// with content-length. Without content-length the body is text up to the
// first NUL and the MESSAGE has no content-length (reference mappings.md
// §1.4–1.5).
func stompContentLength(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	c, _ := ConnectRaw(t, addr, "1.2")
	c.Subscribe("s", q)
	bin := []byte{0, 1, 2, 0, 'x', 0xff, 0}
	c.Send("SEND", []string{"destination:" + q, "content-length:" + strconv.Itoa(len(bin)), "receipt:b"}, bin)
	c.ExpectReceipt("b")
	m := c.Expect("MESSAGE")
	if !bytes.Equal(m.Body, bin) {
		t.Fatalf("binary body: got %q, want %q", m.Body, bin)
	}
	if got := m.Must(t, "content-length"); got != strconv.Itoa(len(bin)) {
		t.Fatalf("content-length: got %q, want %d", got, len(bin))
	}

	c.SendMsg(q, "plain text")
	m = c.ExpectMessage("plain text")
	if cl, ok := m.Get("content-length"); ok {
		t.Fatalf("text message has content-length %q, want none", cl)
	}

	// go-stomp sends content-length by default: a bytes message.
	g := dial(t, addr)
	s := sub(t, g, queue(t, "g"), stomp.AckAuto)
	if err := g.Send(queue(t, "g"), "", bin, stomp.SendOpt.Receipt); err != nil {
		t.Fatal(err)
	}
	gm := recv(t, s)
	if !bytes.Equal(gm.Body, bin) || gm.Header.Get("content-length") != strconv.Itoa(len(bin)) {
		t.Fatalf("go-stomp bytes message: body %q content-length %q", gm.Body, gm.Header.Get("content-length"))
	}
}

// JMS headers from SEND headers and back on MESSAGE; other headers are
// string properties (LegacyFrameTranslator).
func stompMessageHeaders(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	reply := queue(t, "reply")
	c := dial(t, addr)
	s := sub(t, c, q, stomp.AckAuto)
	send(t, c, q, "h",
		hdr("persistent", "true"),
		hdr("priority", "7"),
		hdr("reply-to", reply),
		hdr("correlation-id", "corr-1"),
		hdr("type", "kind-a"),
		hdr("custom", "value 1"),
		hdr("number", "42"),
	)
	m := recvBody(t, s, "h")
	want := map[string]string{
		"persistent":     "true",
		"priority":       "7",
		"reply-to":       reply,
		"correlation-id": "corr-1",
		"type":           "kind-a",
		"custom":         "value 1",
		"number":         "42",
		"expires":        "0",
		"destination":    q,
	}
	for k, v := range want {
		if got := m.Header.Get(k); got != v {
			t.Errorf("%s: got %q, want %q", k, got, v)
		}
	}
	for _, k := range []string{"message-id", "timestamp"} {
		if m.Header.Get(k) == "" {
			t.Errorf("%s missing", k)
		}
	}
	if _, ok := m.Header.Contains("redelivered"); ok {
		t.Errorf("first delivery has a redelivered header")
	}

	// Without persistent:true the message is non-persistent: no header.
	send(t, c, q, "np")
	if got := recvBody(t, s, "np").Header.Get("persistent"); got != "" {
		t.Errorf("non-persistent message: persistent header %q, want none", got)
	}
}

// expires is absolute epoch ms: an already expired message is never
// delivered, and an expired persistent message goes to ActiveMQ.DLQ
// (reference broker-behaviour.md §6–7).
func stompExpires(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	id := t.Uniq()
	past := strconv.FormatInt(time.Now().Add(-time.Minute).UnixMilli(), 10)
	future := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
	c, _ := ConnectRaw(t, addr, "1.2")
	c.SendMsg(q, "expired", "expires:"+past, "persistent:true", "testid:"+id)
	c.SendMsg(q, "expired-np", "expires:"+past, "testid:"+id)
	c.SendMsg(q, "fresh", "expires:"+future)
	c.Subscribe("s", q)
	if got := c.ExpectMessage("fresh").Must(t, "expires"); got != future {
		t.Fatalf("expires: got %q, want %q", got, future)
	}
	c.MustSync()

	dlq, _ := ConnectRaw(t, addr, "1.2")
	dlq.Subscribe("dlq", "/queue/ActiveMQ.DLQ", "selector:testid = '"+id+"'")
	d := dlq.ExpectMessage("expired")
	if got := d.Must(t, "original-destination"); got != q {
		t.Fatalf("original-destination: got %q, want %q", got, q)
	}
	// The non-persistent one is dropped (processNonPersistent=false).
	dlq.MustSync()
}
