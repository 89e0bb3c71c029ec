package wire

import (
	"encoding/binary"
	"math"
)

// AppendHeader appends the protocol header of p (HeaderAMQP, HeaderSASL or
// HeaderTLS) to dst.
func AppendHeader(dst []byte, p ProtocolID) []byte {
	return append(dst, p.Header()...)
}

// AppendFrame appends one frame on channel carrying p and payload, and
// returns the extended slice; it does not allocate when dst has room. The
// frame type is that of p: AMQP for performatives, SASL for SASL bodies. A
// nil p makes an empty frame, the heartbeat of AMQP 1.0 §2.4.5. No extended
// header is written (doff 2).
//
// AppendFrame does not check the peer's max-frame-size; the session
// compares the length written with it, or uses AppendTransfer, which
// splits payloads.
func AppendFrame(dst []byte, channel uint16, p Performative, payload []byte) []byte {
	start := len(dst)
	t := FrameAMQP
	if p != nil && !isNilComposite(p) {
		t = p.frameType()
	} else {
		p = nil
	}
	dst = append(dst, 0, 0, 0, 0, 2, byte(t), byte(channel>>8), byte(channel))
	if p != nil {
		dst = p.appendComposite(dst)
	}
	dst = append(dst, payload...)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst
}

// AppendSASLFrame appends a SASL frame carrying p (channel 0, which SASL
// frames ignore, AMQP 1.0 §5.3.1). It panics when p is not a SASL body.
func AppendSASLFrame(dst []byte, p Performative) []byte {
	if p == nil || p.frameType() != FrameSASL {
		panic("wire: AppendSASLFrame needs a SASL frame body")
	}
	return AppendFrame(dst, 0, p, nil)
}

// AppendTransfer appends the frames that carry one delivery: t with as
// much of payload as fits in maxFrameSize (the peer's max-frame-size,
// bytes; 0 means no limit), then continuation transfers holding only the
// handle and the rest of payload (AMQP 1.0 §2.6.14). Every frame but the
// last has More set; the last has t.More. t is not modified.
//
// When even the first performative leaves no room for payload bytes the
// frames cannot be formed: dst is returned unchanged with an *Error of
// condition amqp:frame-size-too-small (§2.8.15), which the session sends.
func AppendTransfer(dst []byte, channel uint16, t *Transfer, payload []byte, maxFrameSize uint32) ([]byte, error) {
	limit := int(maxFrameSize)
	if maxFrameSize == 0 || uint64(maxFrameSize) > math.MaxInt32 {
		limit = math.MaxInt32
	}
	start := len(dst)
	// The usual case, a delivery that fits one frame, encodes t itself:
	// the copy the loop below changes would escape, an allocation per
	// transfer. The margin keeps the result byte for byte that of the
	// loop, whose test for one frame counts the performative with more
	// set (a byte or two longer, never more than the margin).
	if dst = AppendFrame(dst, channel, t, payload); len(dst)-start+transferMargin <= limit {
		return dst, nil
	}
	return appendTransferSplit(dst[:start], channel, t, payload, limit)
}

// transferMargin is the slack AppendTransfer's one-frame path leaves below
// max-frame-size.
const transferMargin = 8

// appendTransferSplit is AppendTransfer for a delivery that may need
// several frames.
func appendTransferSplit(dst []byte, channel uint16, t *Transfer, payload []byte, limit int) ([]byte, error) {
	start := len(dst)
	cur := *t
	for {
		at := len(dst)
		cur.More = true
		dst = AppendFrame(dst, channel, &cur, nil)
		room := limit - (len(dst) - at)
		if room < 0 || (room == 0 && len(payload) > 0) {
			return dst[:start], &Error{Condition: ErrCondFrameSizeTooSmall,
				Description: "transfer performative does not fit in max-frame-size with any payload",
				err:         ErrFrameTooLarge}
		}
		if len(payload) <= room {
			cur.More = t.More // may shorten the performative, never lengthen it
			return AppendFrame(dst[:at], channel, &cur, payload), nil
		}
		dst = append(dst, payload[:room]...)
		binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at))
		payload = payload[room:]
		cur = Transfer{Handle: t.Handle}
	}
}
