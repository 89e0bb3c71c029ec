package wire

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"math"
)

// Opcode is a frame's opcode [RFC 6455 §5.2].
type Opcode byte

// Opcodes [RFC 6455 §11.8].
const (
	OpContinuation Opcode = 0x0
	OpText         Opcode = 0x1
	OpBinary       Opcode = 0x2
	OpClose        Opcode = 0x8
	OpPing         Opcode = 0x9
	OpPong         Opcode = 0xA
)

// IsControl reports whether o is a control opcode (close, ping, pong, and
// the reserved 0xB-0xF) [RFC 6455 §5.5].
func (o Opcode) IsControl() bool { return o&0x8 != 0 }

// known reports whether o is defined by RFC 6455; the others are reserved.
func (o Opcode) known() bool {
	switch o {
	case OpContinuation, OpText, OpBinary, OpClose, OpPing, OpPong:
		return true
	}
	return false
}

func (o Opcode) String() string {
	switch o {
	case OpContinuation:
		return "continuation"
	case OpText:
		return "text"
	case OpBinary:
		return "binary"
	case OpClose:
		return "close"
	case OpPing:
		return "ping"
	case OpPong:
		return "pong"
	}
	return "reserved"
}

const (
	// MaxControlPayload is the largest payload of a control frame, in bytes
	// [RFC 6455 §5.5].
	MaxControlPayload = 125
	// MaxHeaderLen is the longest frame header, in bytes: 2 fixed, 8 of
	// extended payload length, 4 of masking key [RFC 6455 §5.2].
	MaxHeaderLen = 14
)

// Header is a frame header [RFC 6455 §5.2].
type Header struct {
	Fin bool
	// RSV holds RSV1, RSV2 and RSV3 as the bits 0x4, 0x2 and 0x1.
	RSV           byte
	Opcode        Opcode
	Masked        bool
	MaskKey       [4]byte
	PayloadLength int64 // bytes
}

// HeaderLen is the length in bytes of a header with the given payload
// length (in bytes) and masking.
func HeaderLen(payloadLength int, masked bool) int {
	n := 2
	switch {
	case payloadLength > math.MaxUint16:
		n += 8
	case payloadLength > 125:
		n += 2
	}
	if masked {
		n += 4
	}
	return n
}

// AppendHeader appends h encoded with the shortest payload length form,
// which RFC 6455 §5.2 requires ("the minimal number of bytes MUST be
// used").
func AppendHeader(dst []byte, h Header) []byte {
	b0 := byte(h.Opcode&0xF) | (h.RSV&0x7)<<4
	if h.Fin {
		b0 |= 0x80
	}
	var mask byte
	if h.Masked {
		mask = 0x80
	}
	switch n := h.PayloadLength; {
	case n > math.MaxUint16:
		dst = append(dst, b0, mask|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	case n > 125:
		dst = append(dst, b0, mask|126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(n))
	default:
		dst = append(dst, b0, mask|byte(n))
	}
	if h.Masked {
		dst = append(dst, h.MaskKey[:]...)
	}
	return dst
}

// AppendFrame appends one unmasked, final frame carrying payload: a whole
// message as a server sends it [RFC 6455 §5.1: a server MUST NOT mask].
func AppendFrame(dst []byte, op Opcode, payload []byte) []byte {
	dst = AppendHeader(dst, Header{Fin: true, Opcode: op, PayloadLength: int64(len(payload))})
	return append(dst, payload...)
}

// ParseHeader decodes the header at the start of b. It returns the header
// and its length in bytes, or n == 0 and a nil error when b does not hold
// the whole header yet. It checks only the encoding (a 64-bit length with
// its most significant bit set); what a header may say is the Decoder's
// business.
func ParseHeader(b []byte) (h Header, n int, err error) {
	if len(b) < 2 {
		return Header{}, 0, nil
	}
	h.Fin = b[0]&0x80 != 0
	h.RSV = b[0] >> 4 & 0x7
	h.Opcode = Opcode(b[0] & 0xF)
	h.Masked = b[1]&0x80 != 0
	n = 2
	switch l := b[1] & 0x7F; l {
	case 126:
		if len(b) < n+2 {
			return Header{}, 0, nil
		}
		h.PayloadLength = int64(binary.BigEndian.Uint16(b[n:]))
		n += 2
	case 127:
		if len(b) < n+8 {
			return Header{}, 0, nil
		}
		v := binary.BigEndian.Uint64(b[n:])
		if v>>63 != 0 {
			// [RFC 6455 §5.2] "the most significant bit MUST be 0"
			return Header{}, 0, ErrLengthOverflow
		}
		h.PayloadLength = int64(v)
		n += 8
	default:
		h.PayloadLength = int64(l)
	}
	if h.Masked {
		if len(b) < n+4 {
			return Header{}, 0, nil
		}
		copy(h.MaskKey[:], b[n:n+4])
		n += 4
	}
	return h, n, nil
}

// Mask XORs b in place with key, b being the payload bytes from offset pos
// on [RFC 6455 §5.3]. It returns the offset just past b, for the next
// call. Masking and unmasking are the same operation.
func Mask(key [4]byte, pos int, b []byte) int {
	end := pos + len(b)
	// Rotate the key so that its first byte applies to b[0], then XOR eight
	// bytes at a time: this runs for every payload byte a client sends.
	var k [4]byte
	for i := range k {
		k[i] = key[(pos+i)&3]
	}
	k32 := binary.LittleEndian.Uint32(k[:])
	k64 := uint64(k32) | uint64(k32)<<32
	for len(b) >= 8 {
		v := binary.LittleEndian.Uint64(b)
		binary.LittleEndian.PutUint64(b, v^k64)
		b = b[8:]
	}
	for i := range b {
		b[i] ^= k[i&3]
	}
	return end
}

// keyGUID is appended to the client's key to make the accept value
// [RFC 6455 §1.3].
const keyGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// AcceptKey is the Sec-WebSocket-Accept value answering the client's
// Sec-WebSocket-Key [RFC 6455 §4.2.2 item 5.4].
func AcceptKey(key string) string {
	h := sha1.New()
	h.Write([]byte(key))
	h.Write([]byte(keyGUID))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// ValidKey reports whether key is a valid Sec-WebSocket-Key: the base64
// encoding of 16 bytes [RFC 6455 §4.1 item 7].
func ValidKey(key string) bool {
	if len(key) != 24 {
		return false
	}
	v, err := base64.StdEncoding.DecodeString(key)
	return err == nil && len(v) == 16
}
