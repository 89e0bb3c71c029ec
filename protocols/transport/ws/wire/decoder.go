package wire

// Limits bound what a client may send.
type Limits struct {
	// MaxTextMessageBytes and MaxBinaryMessageBytes bound a whole message,
	// all its fragments together, in payload bytes. A message over its limit
	// is refused from the header of the frame that would cross it, before
	// any of that frame's payload is taken in. 0 or less means no limit.
	MaxTextMessageBytes   int64
	MaxBinaryMessageBytes int64
}

// Event is what Decoder.Next found.
type Event struct {
	// Opcode is OpText or OpBinary for message data (the message's type,
	// also for the chunks of its continuation frames), or OpClose, OpPing or
	// OpPong.
	Opcode Opcode
	// Payload is a chunk of message data, unmasked in place in the buffer
	// given to Next and aliasing it, or a control frame's whole payload,
	// aliasing the Decoder and valid until the next call.
	Payload []byte
	// Final is set on the last chunk of a message (which may be empty) and
	// on every control event.
	Final bool
}

// Decoder decodes the frames a client sends, from a byte stream cut
// anywhere: every call takes what it can and keeps the state it needs
// (at most a header and a control payload) for the next. Message data is
// handed out in chunks as it arrives, never gathered, so a message costs
// no memory however large the limits are.
//
// It enforces every rule a server must check on what it reads
// [RFC 6455 §5]: masking, reserved bits and opcodes, control frame size and
// fragmentation, continuation order, UTF-8 in text messages, and the
// message size limits. After an error the stream is unusable.
//
// A Decoder is used by one goroutine at a time.
type Decoder struct {
	lim Limits

	hdr  [MaxHeaderLen]byte // a header cut by the end of a chunk
	hdrN int

	h         Header // the frame being read
	inFrame   bool
	remaining int64 // payload bytes of h not yet read
	maskPos   int   // payload offset, for Mask

	inMessage bool   // a fragmented data message is under way
	msgOp     Opcode // its type
	msgBytes  int64  // its payload so far, in bytes
	text      utf8Stream

	ctrl  [MaxControlPayload]byte
	ctrlN int
}

// NewDecoder returns a decoder enforcing lim.
func NewDecoder(lim Limits) *Decoder { return &Decoder{lim: lim} }

// Next decodes from b. It returns how many bytes of b it used and, when ok,
// the event they completed; with ok false all of b was used and more input
// is needed. Payload bytes of b are unmasked in place. Callers loop until b
// is used up; each data event can be handed on before the next call.
func (d *Decoder) Next(b []byte) (n int, ev Event, ok bool, err error) {
	for {
		if !d.inFrame {
			used, err := d.readHeader(b[n:])
			n += used
			if err != nil {
				return n, Event{}, false, err
			}
			if !d.inFrame {
				return n, Event{}, false, nil // header incomplete: b is used up
			}
			if d.remaining == 0 {
				if ev, ok, err := d.endFrame(nil); ok || err != nil {
					return n, ev, ok, err
				}
				continue // an empty non-final fragment: nothing to report
			}
		}
		if n == len(b) {
			return n, Event{}, false, nil
		}
		take := int(min(d.remaining, int64(len(b)-n)))
		chunk := b[n : n+take]
		n += take
		d.remaining -= int64(take)
		if d.h.Opcode.IsControl() {
			copy(d.ctrl[d.ctrlN:], chunk)
			d.maskPos = Mask(d.h.MaskKey, d.maskPos, d.ctrl[d.ctrlN:d.ctrlN+take])
			d.ctrlN += take
			if d.remaining > 0 {
				continue // b is used up
			}
			ev, ok, err := d.endFrame(d.ctrl[:d.ctrlN])
			return n, ev, ok, err
		}
		d.maskPos = Mask(d.h.MaskKey, d.maskPos, chunk)
		if d.remaining > 0 {
			if d.msgOp == OpText && !d.text.valid(chunk, false) {
				return n, Event{}, false, ErrInvalidUTF8
			}
			return n, Event{Opcode: d.msgOp, Payload: chunk}, true, nil
		}
		ev, ok, err := d.endFrame(chunk)
		return n, ev, ok, err
	}
}

// readHeader takes header bytes from b; once the header is whole it is
// checked and the frame begins.
func (d *Decoder) readHeader(b []byte) (used int, err error) {
	var h Header
	var hl int
	if d.hdrN == 0 {
		// Usual case: the whole header is in b; parse it in place.
		if h, hl, err = ParseHeader(b); err != nil {
			return 0, err
		}
		if hl == 0 {
			d.hdrN = copy(d.hdr[:], b) // fewer than MaxHeaderLen bytes
			return len(b), nil
		}
		used = hl
	} else {
		k := copy(d.hdr[d.hdrN:], b)
		if h, hl, err = ParseHeader(d.hdr[:d.hdrN+k]); err != nil {
			return 0, err
		}
		if hl == 0 {
			d.hdrN += k // all of b went in: it was too short
			return len(b), nil
		}
		used = hl - d.hdrN
		d.hdrN = 0
	}
	if err := d.check(h); err != nil {
		return used, err
	}
	d.h, d.inFrame, d.remaining, d.maskPos = h, true, h.PayloadLength, 0
	switch {
	case h.Opcode.IsControl():
		d.ctrlN = 0
	case h.Opcode != OpContinuation:
		d.inMessage, d.msgOp, d.msgBytes = true, h.Opcode, 0
		d.text.reset()
	}
	if !h.Opcode.IsControl() {
		d.msgBytes += h.PayloadLength
	}
	return used, nil
}

// check applies RFC 6455's rules to a complete header.
func (d *Decoder) check(h Header) error {
	switch {
	case h.RSV != 0:
		return ErrReservedBits
	case !h.Opcode.known():
		return ErrReservedOpcode
	case !h.Masked:
		return ErrUnmasked // [RFC 6455 §5.1] "MUST close the connection"
	case h.Opcode.IsControl():
		if !h.Fin {
			return ErrControlFragmented
		}
		if h.PayloadLength > MaxControlPayload {
			return ErrControlTooLong
		}
		return nil
	case h.Opcode == OpContinuation && !d.inMessage:
		return ErrUnexpectedContinuation
	case h.Opcode != OpContinuation && d.inMessage:
		return ErrExpectedContinuation
	}
	op, sofar := h.Opcode, int64(0)
	if op == OpContinuation {
		op, sofar = d.msgOp, d.msgBytes
	}
	limit := d.lim.MaxBinaryMessageBytes
	if op == OpText {
		limit = d.lim.MaxTextMessageBytes
	}
	if limit > 0 && h.PayloadLength > limit-sofar {
		return ErrMessageTooBig
	}
	return nil
}

// endFrame finishes the frame whose last payload bytes are p and returns
// its event, if it has one.
func (d *Decoder) endFrame(p []byte) (Event, bool, error) {
	d.inFrame = false
	if d.h.Opcode.IsControl() {
		if d.h.Opcode == OpClose {
			if _, _, err := ParseClose(p); err != nil {
				return Event{}, false, err
			}
		}
		return Event{Opcode: d.h.Opcode, Payload: p, Final: true}, true, nil
	}
	final := d.h.Fin
	if d.msgOp == OpText && !d.text.valid(p, final) {
		return Event{}, false, ErrInvalidUTF8
	}
	if final {
		d.inMessage = false
	} else if len(p) == 0 {
		return Event{}, false, nil
	}
	return Event{Opcode: d.msgOp, Payload: p, Final: final}, true, nil
}
