package wire

import (
	"encoding/binary"
)

// Decoder states.
const (
	stHeader    = iota // reading an 8-byte protocol header
	stFrameHead        // between frames, or reading a frame's 8-byte header
	stFrameBody        // reading the rest of a frame
)

// keepBytes is the buffer capacity (bytes) a decoder keeps between frames;
// a larger buffer grown for one big frame is released so that an idle
// connection does not pin it.
const keepBytes = 64 * 1024

// Decoder turns an AMQP 1.0 byte stream into protocol headers and frames.
// It is sans-I/O: the owner feeds whatever bytes it read, split anywhere,
// and gets back what those bytes completed. A Decoder is used by one
// goroutine (the connection's owner); it is not safe for concurrent use.
type Decoder struct {
	lim   Limits
	err   error // sticky: once set every Feed returns it
	state int
	mode  FrameType // frame type expected after the last header
	// headerNext makes the decoder expect a protocol header once the frame
	// being read is complete (SetExpectHeader called mid-frame).
	headerNext bool

	head  [FrameHeaderSize]byte // protocol or frame header being read
	nhead int

	size    int // size of the current frame (bytes, header included)
	doff    int // data offset of the current frame (4-byte words)
	ftype   FrameType
	channel uint16
	body    []byte // frame bytes after the header, assembled across Feeds

	pending []byte // input held back after a header or a SASL frame

	// rd decodes frame bodies. It lives here, not on the stack, because
	// escape analysis would move it to the heap on every frame.
	rd reader

	// arena, when set (ReuseBodies), holds the transfers and dispositions
	// decoded by the last Feed.
	arena *bodyArena
}

// ReuseBodies makes the decoder decode transfers and dispositions into
// performatives it owns and reuses: such a Frame's Body, and the values
// its pointer fields point to, are good only until the next Feed. A
// caller that keeps one longer copies it (Transfer.Clone). Their binary
// fields and the transfer's Payload stay the frame's own, as always.
// A broker's connection uses it: they are the frames of every message
// (issue 18: a delivery allocated a Transfer and a Disposition each).
func (d *Decoder) ReuseBodies() {
	if d.arena == nil {
		d.arena = &bodyArena{}
	}
}

// arenaKeep bounds the performatives an arena keeps for reuse: past it, a
// Feed that decodes more frames allocates the rest, which are not kept
// (a burst does not pin memory for good).
const arenaKeep = 64

// bodyArena is the reusable transfers and dispositions of one Decoder,
// handed out in order since the last Feed.
type bodyArena struct {
	transfers []*transferBox
	disps     []*dispositionBox
	nt, nd    int
}

func (a *bodyArena) reset() { a.nt, a.nd = 0, 0 }

func (a *bodyArena) transfer() *transferBox {
	if a.nt == len(a.transfers) {
		if a.nt == arenaKeep {
			return &transferBox{}
		}
		a.transfers = append(a.transfers, &transferBox{})
	}
	b := a.transfers[a.nt]
	a.nt++
	*b = transferBox{}
	return b
}

func (a *bodyArena) disposition() *dispositionBox {
	if a.nd == len(a.disps) {
		if a.nd == arenaKeep {
			return &dispositionBox{}
		}
		a.disps = append(a.disps, &dispositionBox{})
	}
	b := a.disps[a.nd]
	a.nd++
	*b = dispositionBox{}
	return b
}

// NewDecoder returns a decoder for a new connection: it expects a protocol
// header first. Zero fields of l take the DefaultLimits values.
func NewDecoder(l Limits) *Decoder {
	return &Decoder{lim: l.withDefaults(), state: stHeader}
}

// SetExpectHeader makes the decoder expect a protocol header next, as the
// stream does after a successful SASL exchange (AMQP 1.0 §5.3.2: the
// client sends the "AMQP" 0 1 0 0 header after the sasl-outcome) and at the
// start of the stream inside a TLS layer. Called while a frame is only
// partly read, it takes effect when that frame is complete.
func (d *Decoder) SetExpectHeader() {
	if d.state == stFrameHead && d.nhead == 0 {
		d.state = stHeader
		return
	}
	if d.state != stHeader {
		d.headerNext = true
	}
}

// SetMaxFrameSize changes Limits.MaxFrameSize, for when this side's
// announced max-frame-size takes effect. Values below FrameHeaderSize are
// raised to it.
func (d *Decoder) SetMaxFrameSize(n uint32) {
	d.lim.MaxFrameSize = max(n, FrameHeaderSize)
}

// Limits returns the limits in force.
func (d *Decoder) Limits() Limits { return d.lim }

// Buffered reports how many input bytes Feed held back after a protocol
// header or a SASL frame (see Feed).
func (d *Decoder) Buffered() int { return len(d.pending) }

// TakeBuffered returns the input bytes Feed held back and forgets them. A
// session that received HeaderTLS uses it to hand the bytes that followed
// (the start of the TLS handshake) to its TLS layer.
func (d *Decoder) TakeBuffered() []byte {
	p := d.pending
	d.pending = nil
	return p[:len(p):len(p)]
}

// Err returns the error that stopped the decoder, or nil.
func (d *Decoder) Err() error { return d.err }

// Feed consumes b, which may end anywhere, and appends to out every header
// and frame completed so far. The frames never alias b or the decoder's
// buffers, so the caller may reuse b at once.
//
// A protocol header is returned as a Frame of Type FrameHeader. After
// HeaderAMQP the decoder expects AMQP frames, after HeaderSASL SASL
// frames, after HeaderTLS another header (the one inside TLS).
//
// Feed returns right after a protocol header and right after each SASL
// frame, and keeps the rest of b: the session must look at them first (to
// refuse the header, or to end SASL with SetExpectHeader) because they
// decide how the following bytes are read. The session then calls
// Feed(nil, out) to decode the held bytes; Buffered tells whether any are
// held.
//
// An error is fatal: it is an *Error holding the condition to send (see
// errors.go), and every later Feed returns it with no frames. For
// ErrProtocolHeader the server replies with its own header and closes
// (AMQP 1.0 §2.2); for any other error it sends Close with the condition.
func (d *Decoder) Feed(b []byte, out []Frame) ([]Frame, error) {
	if d.err != nil {
		return out, d.err
	}
	if d.arena != nil {
		d.arena.reset()
	}
	in, owned := b, false
	if len(d.pending) > 0 {
		// The held bytes are ours, so appending to them and keeping a
		// suffix costs no copy: a stream of many SASL frames stays linear.
		in, owned = append(d.pending, b...), true
		d.pending = nil
	}
	out, rest, err := d.run(in, out)
	if err != nil {
		d.err = err
		d.body = nil
		return out, err
	}
	if len(rest) > 0 {
		if !owned {
			rest = append([]byte(nil), rest...)
		}
		d.pending = rest
	}
	return out, nil
}

// run decodes b until it is used up, an error, or a stop (a header or a
// SASL frame); it returns the unused rest of b.
func (d *Decoder) run(b []byte, out []Frame) ([]Frame, []byte, error) {
	for len(b) > 0 {
		switch d.state {
		case stHeader:
			n := copy(d.head[d.nhead:], b)
			d.nhead += n
			b = b[n:]
			if d.nhead < len(d.head) {
				return out, nil, nil
			}
			d.nhead = 0
			f, err := d.protocolHeader()
			if err != nil {
				return out, nil, err
			}
			return append(out, f), b, nil

		case stFrameHead:
			var h []byte
			if d.nhead == 0 && len(b) >= FrameHeaderSize {
				h, b = b[:FrameHeaderSize], b[FrameHeaderSize:]
			} else {
				n := copy(d.head[d.nhead:], b)
				d.nhead += n
				b = b[n:]
				if d.nhead < len(d.head) {
					return out, nil, nil
				}
				d.nhead = 0
				h = d.head[:]
			}
			if err := d.frameHeader(h); err != nil {
				return out, nil, err
			}
			if d.size == FrameHeaderSize {
				f, err := d.frame(nil)
				if err != nil {
					return out, nil, err
				}
				out = append(out, f)
				d.endFrame()
				continue
			}
			d.state = stFrameBody

		case stFrameBody:
			need := d.size - FrameHeaderSize
			var body []byte
			if len(d.body) == 0 && len(b) >= need {
				body, b = b[:need], b[need:] // the whole frame is here: no copy
			} else {
				n := min(len(b), need-len(d.body))
				d.body = appendCapped(d.body, b[:n], need)
				b = b[n:]
				if len(d.body) < need {
					return out, nil, nil
				}
				body = d.body
			}
			f, err := d.frame(body)
			if err != nil {
				return out, nil, err
			}
			out = append(out, f)
			d.endFrame()
			if f.Type == FrameSASL {
				return out, b, nil
			}
		}
	}
	return out, nil, nil
}

// endFrame resets the per-frame state.
func (d *Decoder) endFrame() {
	d.state = stFrameHead
	if d.headerNext {
		d.headerNext = false
		d.state = stHeader
	}
	if cap(d.body) > keepBytes {
		d.body = nil
	}
	d.body = d.body[:0]
}

// protocolHeader checks the 8 header bytes in d.head (AMQP 1.0 §2.2).
func (d *Decoder) protocolHeader() (Frame, error) {
	h := d.head
	if string(h[:4]) == "AMQP" && h[5] == 1 && h[6] == 0 && h[7] == 0 {
		switch ProtocolID(h[4]) {
		case ProtocolAMQP:
			d.state, d.mode = stFrameHead, FrameAMQP
			return Frame{Type: FrameHeader, Protocol: ProtocolAMQP}, nil
		case ProtocolSASL:
			d.state, d.mode = stFrameHead, FrameSASL
			return Frame{Type: FrameHeader, Protocol: ProtocolSASL}, nil
		case ProtocolTLS:
			// The bytes that follow are TLS records; the stream inside
			// TLS starts with its own header.
			d.state = stHeader
			return Frame{Type: FrameHeader, Protocol: ProtocolTLS}, nil
		}
	}
	return Frame{}, newError(ErrCondFramingError, ErrProtocolHeader,
		"protocol header %q is not AMQP 1.0 (want %q, %q or %q)", string(h[:]), HeaderAMQP, HeaderSASL, HeaderTLS)
}

// frameHeader checks a frame header (AMQP 1.0 §2.3.1) and records it.
func (d *Decoder) frameHeader(h []byte) error {
	size := binary.BigEndian.Uint32(h)
	doff, typ := int(h[4]), FrameType(h[5])
	switch {
	case size < FrameHeaderSize:
		return newError(ErrCondFramingError, ErrMalformedFrame, "frame size %d is smaller than the frame header", size)
	case size > d.lim.MaxFrameSize:
		return newError(ErrCondFramingError, ErrFrameTooLarge, "frame of %d bytes exceeds max-frame-size %d", size, d.lim.MaxFrameSize)
	case doff < 2:
		// §2.3.1: "doff ... MUST be 2 or greater".
		return newError(ErrCondFramingError, ErrMalformedFrame, "frame data offset %d is below 2", doff)
	case uint32(doff)*4 > size:
		return newError(ErrCondFramingError, ErrMalformedFrame, "frame data offset %d points past the %d-byte frame", doff, size)
	case typ != FrameAMQP && typ != FrameSASL:
		return newError(ErrCondFramingError, ErrMalformedFrame, "unknown frame type 0x%02x", byte(typ))
	case typ != d.mode:
		if typ == FrameSASL {
			return newError(ErrCondFramingError, ErrMalformedFrame, "SASL frame outside the SASL exchange")
		}
		return newError(ErrCondFramingError, ErrMalformedFrame, "AMQP frame during the SASL exchange")
	}
	d.size, d.doff, d.ftype, d.channel = int(size), doff, typ, binary.BigEndian.Uint16(h[6:])
	return nil
}

// frame decodes the bytes of the current frame after its 8-byte header.
func (d *Decoder) frame(body []byte) (Frame, error) {
	f := Frame{Type: d.ftype, Channel: d.channel}
	body = body[d.doff*4-FrameHeaderSize:] // §2.3.1: the extended header is ignored
	if len(body) == 0 {
		if d.ftype == FrameSASL {
			// §5.3.1: a SASL frame has exactly one SASL body.
			return f, newError(ErrCondDecodeError, ErrMalformedFrame, "empty SASL frame")
		}
		return f, nil // §2.4.5: an empty frame is a heartbeat
	}
	// A transfer's body is copied whole, once: its delivery-tag and its
	// payload then alias that copy, the frame's own, instead of being
	// copied one by one (one allocation a message, not two). Other
	// performatives copy the few binary values they have.
	alias := isTransfer(body)
	if alias {
		body = append(make([]byte, 0, len(body)), body...)
	}
	d.rd = newReader(body, &d.lim, alias)
	d.rd.arena = d.arena
	p, err := decodePerformative(&d.rd, d.ftype)
	used := d.rd.i
	d.rd.b, d.rd.arena = nil, nil // do not pin the caller's input
	if err != nil {
		return f, err
	}
	f.Body = p
	if rest := body[used:]; len(rest) > 0 {
		// §2.3.2: what follows the performative is defined by it, and only
		// transfer defines a payload.
		if _, ok := p.(*Transfer); !ok {
			return f, newError(ErrCondDecodeError, ErrMalformed, "%d bytes follow the %s performative", len(rest), codeName(p.Descriptor()))
		}
		if alias {
			f.Payload = rest[:len(rest):len(rest)]
		} else {
			f.Payload = append(make([]byte, 0, len(rest)), rest...)
		}
	}
	return f, nil
}

// isTransfer reports whether a frame body starts with the transfer
// performative's descriptor as encoders write it (0x00 0x53 0x14, or the
// ulong form 0x00 0x80 and 8 bytes): the test only chooses how the body
// is copied; decodePerformative checks the body either way.
func isTransfer(body []byte) bool {
	if len(body) >= 3 && body[0] == codeDescribed && body[1] == 0x53 {
		return body[2] == byte(codeTransfer)
	}
	if len(body) >= 10 && body[0] == codeDescribed && body[1] == 0x80 {
		return binary.BigEndian.Uint64(body[2:]) == codeTransfer
	}
	return false
}

// decodePerformative decodes the performative (or SASL body) at the start
// of a frame body of type t.
func decodePerformative(r *reader, t FrameType) (Performative, error) {
	c, err := r.byte1()
	if err != nil {
		return nil, err
	}
	if c != codeDescribed {
		return nil, newError(ErrCondDecodeError, ErrInvalidField, "frame body starts with constructor 0x%02x, not a described performative", c)
	}
	if err := r.enter(); err != nil {
		return nil, err
	}
	code, err := r.descriptorCode()
	if err != nil {
		return nil, err
	}
	ok := code >= codeOpen && code <= codeClose
	want := "an AMQP performative"
	if t == FrameSASL {
		ok = code >= codeSASLMechanisms && code <= codeSASLOutcome
		want = "a SASL frame body"
	}
	if !ok {
		return nil, newError(ErrCondDecodeError, ErrInvalidField, "%s frame carries %s (descriptor 0x%x), not %s", t, codeName(code), code, want)
	}
	v, err := decodeTyped(code, r)
	if err != nil {
		return nil, err
	}
	r.leave()
	return v.(Performative), nil
}

// appendCapped appends src to dst, growing dst geometrically but never
// beyond limit, so memory follows the bytes received rather than a size
// announced by the peer.
func appendCapped(dst, src []byte, limit int) []byte {
	if need := len(dst) + len(src); need > cap(dst) {
		c := min(max(2*cap(dst), need, 512), limit)
		n := make([]byte, len(dst), c)
		copy(n, dst)
		dst = n
	}
	return append(dst, src...)
}
