package conform

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"time"

	"github.com/Azure/go-amqp"

	"wharf/protocols/amqp/wire"
)

// Raw AMQP 1.0 cases, built with Wharf's own codec (protocols/amqp/wire):
// bad input and transfers split or aborted as go-amqp never sends them.
// RawAMQP is also the client of conformance/'s AMQP tests that need
// Wharf's internals.

// RawAMQP is a byte-level AMQP 1.0 connection: frames encoded and decoded
// with protocols/amqp/wire.
type RawAMQP struct {
	t     TB
	nc    net.Conn
	dec   *wire.Decoder
	queue []wire.Frame
}

func DialRawAMQP(t TB, addr string) *RawAMQP {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &RawAMQP{t: t, nc: nc, dec: wire.NewDecoder(wire.Limits{MaxFrameSize: 1 << 20})}
}

func (r *RawAMQP) Write(b []byte) {
	r.t.Helper()
	if _, err := r.nc.Write(b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

func (r *RawAMQP) Send(ch uint16, p wire.Performative, payload []byte) {
	r.Write(wire.AppendFrame(nil, ch, p, payload))
}

func (r *RawAMQP) TryRead(d time.Duration) (*wire.Frame, error) {
	buf := make([]byte, 64<<10)
	deadline := time.Now().Add(d)
	for {
		if len(r.queue) > 0 {
			f := r.queue[0]
			r.queue = r.queue[1:]
			return &f, nil
		}
		if r.dec.Buffered() > 0 {
			var err error
			if r.queue, err = r.dec.Feed(nil, r.queue); err != nil {
				return nil, err
			}
			continue
		}
		r.nc.SetReadDeadline(deadline)
		n, err := r.nc.Read(buf)
		if n > 0 {
			var derr error
			if r.queue, derr = r.dec.Feed(buf[:n], r.queue); derr != nil {
				return nil, derr
			}
		}
		if err != nil && len(r.queue) == 0 {
			return nil, err
		}
	}
}

// next returns the next frame that is not an empty (heartbeat) frame.
func (r *RawAMQP) Next() *wire.Frame {
	r.t.Helper()
	for {
		f, err := r.TryRead(wait)
		if err != nil {
			r.t.Fatalf("read: %v", err)
		}
		if f.Type == wire.FrameHeader || f.Body != nil {
			observe(r.t, "recv", "%T", f.Body)
			return f
		}
	}
}

// closed asserts the broker closes the socket.
func (r *RawAMQP) Closed() {
	r.t.Helper()
	for {
		f, err := r.TryRead(wait)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				r.t.Fatal("the broker did not close the connection")
			}
			if errors.Is(err, io.EOF) || IsReset(err) {
				return
			}
			r.t.Fatalf("read: %v", err)
		}
		if f.Body != nil {
			r.t.Fatalf("got %T before the close", f.Body)
		}
	}
}

// open goes through the handshake, Open and Begin, and returns the
// broker's Open.
func (r *RawAMQP) Open(containerID string) *wire.Open {
	r.t.Helper()
	r.Handshake()
	r.Send(0, wire.NewOpen(containerID), nil)
	open, ok := r.Next().Body.(*wire.Open)
	if !ok {
		r.t.Fatal("no Open")
	}
	r.Send(0, &wire.Begin{NextOutgoingID: 1, IncomingWindow: 1000, OutgoingWindow: 1000, HandleMax: 100}, nil)
	if _, ok := r.Next().Body.(*wire.Begin); !ok {
		r.t.Fatal("no Begin")
	}
	return open
}

// handshake goes through SASL (ANONYMOUS, or PLAIN with the target's
// credentials) and the AMQP header.
func (r *RawAMQP) Handshake() {
	r.t.Helper()
	r.Write([]byte(wire.HeaderSASL))
	if f := r.Next(); f.Type != wire.FrameHeader || f.Protocol != wire.ProtocolSASL {
		r.t.Fatalf("got %v, want the SASL header", f.Type)
	}
	if _, ok := r.Next().Body.(*wire.SASLMechanisms); !ok {
		r.t.Fatal("no sasl-mechanisms")
	}
	init := &wire.SASLInit{Mechanism: "ANONYMOUS"}
	if u, p := credentials(r.t); u != "" {
		init = &wire.SASLInit{Mechanism: "PLAIN", InitialResponse: []byte("\x00" + u + "\x00" + p)}
	}
	r.Write(wire.AppendSASLFrame(nil, init))
	if o, ok := r.Next().Body.(*wire.SASLOutcome); !ok || o.Code != wire.SASLOK {
		r.t.Fatalf("SASL outcome %+v", o)
	}
	r.dec.SetExpectHeader()
	r.Write([]byte(wire.HeaderAMQP))
	if f := r.Next(); f.Type != wire.FrameHeader || f.Protocol != wire.ProtocolAMQP {
		r.t.Fatal("no AMQP header")
	}
}

// expectClose reads up to the broker's Close and checks its condition.
func (r *RawAMQP) ExpectClose(cond wire.Symbol) {
	r.t.Helper()
	for {
		f := r.Next()
		if c, ok := f.Body.(*wire.Close); ok {
			if c.Error == nil || c.Error.Condition != cond {
				r.t.Fatalf("Close %+v, want condition %s", c.Error, cond)
			}
			observe(r.t, "close", "%s: %s", c.Error.Condition, c.Error.Description)
			return
		}
	}
}

// attachSender attaches a sending link and waits for the broker's credit.
func (r *RawAMQP) AttachSender(handle uint32, name, address string) {
	r.t.Helper()
	a := wire.NewAttach(name, handle, wire.RoleSender)
	a.Source = &wire.Source{}
	a.Target = &wire.Target{Address: address}
	r.Send(0, a, nil)
	for {
		if fl, ok := r.Next().Body.(*wire.Flow); ok && fl.Handle != nil && *fl.Handle == handle && fl.LinkCredit != nil && *fl.LinkCredit > 0 {
			return
		}
	}
}

// RawAMQPFrame wraps a hand-written performative body in a frame header.
func RawAMQPFrame(ch uint16, body []byte) []byte {
	n := 8 + len(body)
	return append([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n), 2, 0, byte(ch >> 8), byte(ch)}, body...)
}

// amqpRawBadInput: each kind of bad input ends that connection with the
// broker's header or a Close naming the error; another connection keeps
// working.
func amqpRawBadInput(t *T) {
	addr := t.Addr(AMQP)
	bystander := amqpSession(t, amqpDial(t, addr, nil))

	t.Run("bad-protocol-header", func(t *T) {
		r := DialRawAMQP(t, addr)
		r.Write([]byte("HTTP/1.1"))
		r.nc.SetReadDeadline(time.Now().Add(wait))
		got := make([]byte, 8)
		if _, err := io.ReadFull(r.nc, got); err != nil || !bytes.Equal(got, []byte(wire.HeaderSASL)) {
			t.Fatalf("got %q %v, want the SASL header", got, err)
		}
		r.Closed()
	})
	t.Run("skipping-sasl", func(t *T) {
		r := DialRawAMQP(t, addr)
		r.Write([]byte(wire.HeaderAMQP))
		r.nc.SetReadDeadline(time.Now().Add(wait))
		got := make([]byte, 8)
		if _, err := io.ReadFull(r.nc, got); err != nil || !bytes.Equal(got, []byte(wire.HeaderSASL)) {
			t.Fatalf("got %q %v, want the SASL header (SASL required)", got, err)
		}
		r.Closed()
	})
	t.Run("frame-over-max-frame-size", func(t *T) {
		r := DialRawAMQP(t, addr)
		open := r.Open(t.Uniq())
		t.Observe("open", "max-frame-size %d", open.MaxFrameSize)
		if open.MaxFrameSize > 1<<20 {
			t.Skipf("the broker announces max-frame-size %d: more than this case sends", open.MaxFrameSize)
		}
		big := make([]byte, open.MaxFrameSize+1024)
		r.Send(0, &wire.Transfer{Handle: 0}, big)
		r.ExpectClose(wire.ErrCondFramingError)
	})
	t.Run("transfer-on-unattached-handle", func(t *T) {
		r := DialRawAMQP(t, addr)
		r.Open(t.Uniq())
		id := uint32(0)
		r.Send(0, &wire.Transfer{Handle: 7, DeliveryID: &id, DeliveryTag: []byte{1}}, []byte{0x00, 0x53, 0x77, 0xa1, 1, 'x'})
		r.ExpectClose(wire.ErrCondUnattachedHandle)
	})
	t.Run("described-type-of-wrong-shape", func(t *T) {
		r := DialRawAMQP(t, addr)
		r.Open(t.Uniq())
		// An attach (0x12) whose list holds an int where the name string
		// must be: list8 size 4 count 3, int 5, uint0 handle, false role.
		r.Write(RawAMQPFrame(0, []byte{0x00, 0x53, 0x12, 0xc0, 0x05, 0x03, 0x54, 0x05, 0x43, 0x42}))
		r.ExpectClose(wire.ErrCondDecodeError)
	})
	// Another connection keeps working.
	amqpSend(t, amqpSender(t, bystander, "queue://"+t.Uniq(), nil), amqp.NewMessage([]byte("still here")))
}

// amqpRawMultiFrameAndAborted: an aborted delivery is discarded without a
// disposition, a delivery in three frames is one message, and a receiver
// with a 512-byte max-frame-size gets a 5000-byte message in pieces.
func amqpRawMultiFrameAndAborted(t *T) {
	addr := t.Addr(AMQP)
	q := "queue://" + t.Uniq()
	r := DialRawAMQP(t, addr)
	r.Open(t.Uniq())
	r.AttachSender(0, "snd", q)
	msg := func(body string) []byte {
		return wire.AppendMessage(nil, &wire.Message{Header: &wire.Header{Durable: true, Priority: 4}, BodyKind: wire.BodyValue, Value: body})
	}
	id0 := uint32(0)
	r.Send(0, &wire.Transfer{Handle: 0, DeliveryID: &id0, DeliveryTag: []byte{0}, More: true}, msg("aborted")[:5])
	r.Send(0, &wire.Transfer{Handle: 0, Aborted: true}, nil)
	whole := msg("in three frames")
	id1 := uint32(1)
	r.Send(0, &wire.Transfer{Handle: 0, DeliveryID: &id1, DeliveryTag: []byte{1}, More: true}, whole[:4])
	r.Send(0, &wire.Transfer{Handle: 0, More: true}, whole[4:9])
	r.Send(0, &wire.Transfer{Handle: 0}, whole[9:])
	for {
		if d, ok := r.Next().Body.(*wire.Disposition); ok {
			if d.First != 1 {
				t.Fatalf("disposition for delivery %d; the aborted one must get none", d.First)
			}
			if _, ok := d.State.(*wire.Accepted); !ok || !d.Settled {
				t.Fatalf("multi-frame delivery: %+v", d)
			}
			break
		}
	}
	o := &amqp.ConnOptions{SASLType: amqp.SASLTypeAnonymous(), MaxFrameSize: 512}
	if t.User() != "" {
		o.SASLType = amqp.SASLTypePlain(t.User(), t.Password())
	}
	rc := amqpReceiver(t, amqpSession(t, amqpDial(t, addr, o)), q, nil)
	m := amqpRecv(t, rc)
	if m.Value != "in three frames" {
		t.Fatalf("got %#v, want the three-frame delivery (the aborted one discarded)", m.Value)
	}
	rc.AcceptMessage(amqpCtx(t), m) // go-amqp gives its one credit back on settling
	big := strings.Repeat("x", 5000)
	amqpSend(t, amqpSender(t, amqpSession(t, amqpDial(t, addr, nil)), q, nil), amqp.NewMessage([]byte(big)))
	if m := amqpRecv(t, rc); string(m.GetData()) != big {
		t.Fatalf("large message through 512-byte frames: %d bytes", len(m.GetData()))
	}
}

func init() {
	am := []string{AMQP}
	register(
		Case{Name: "amqp/errors/bad-input", Needs: am, Run: amqpRawBadInput,
			Pins:   "a bad header or no SASL gets the SASL header and the close; an oversized frame, a transfer on an unattached handle, a malformed attach get Close framing-error, unattached-handle, decode-error",
			Source: "AMQP 1.0 §2.2, §2.7.1, §2.8.15, §5.3.1; AmqpProtocolConverter, AmqpFrameParser"},
		Case{Name: "amqp/transfer/multi-frame-and-aborted", Needs: am, Run: amqpRawMultiFrameAndAborted,
			Pins:   "an aborted delivery is discarded, one in three frames is one message, a 512-byte max-frame-size receiver gets a large message in pieces",
			Source: "AMQP 1.0 §2.6.14 (aborted), §2.7.5 (more), §2.7.1 max-frame-size"},
	)
}
