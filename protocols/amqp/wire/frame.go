package wire

// Protocol headers (AMQP 1.0 §2.2, §5.1, §5.2): "AMQP", a protocol id and
// the version 1.0.0. A connection starts with one; SASL and TLS layers each
// start with their own and are followed by the next header.
const (
	HeaderAMQP = "AMQP\x00\x01\x00\x00"
	HeaderTLS  = "AMQP\x02\x01\x00\x00"
	HeaderSASL = "AMQP\x03\x01\x00\x00"
)

// ProtocolID is the protocol id byte of a protocol header.
type ProtocolID uint8

// Protocol ids (AMQP 1.0 §2.2, §5.1.1, §5.3.1).
const (
	ProtocolAMQP ProtocolID = 0
	ProtocolTLS  ProtocolID = 2
	ProtocolSASL ProtocolID = 3
)

// Header returns the protocol header of p.
func (p ProtocolID) Header() string {
	switch p {
	case ProtocolTLS:
		return HeaderTLS
	case ProtocolSASL:
		return HeaderSASL
	}
	return HeaderAMQP
}

// FrameType is the type byte of a frame header (AMQP 1.0 §2.3.1).
type FrameType uint8

// Frame types. FrameHeader is not a wire frame type: the decoder uses it for
// the protocol headers it reports as frames.
const (
	FrameAMQP   FrameType = 0x00
	FrameSASL   FrameType = 0x01
	FrameHeader FrameType = 0xff
)

// String returns "AMQP", "SASL" or "header".
func (t FrameType) String() string {
	switch t {
	case FrameAMQP:
		return "AMQP"
	case FrameSASL:
		return "SASL"
	case FrameHeader:
		return "header"
	}
	return "unknown"
}

// Frame sizes (AMQP 1.0 §2.3.1, §2.7.1).
const (
	// FrameHeaderSize is the fixed part of every frame header (bytes).
	FrameHeaderSize = 8
	// MinMaxFrameSize is the smallest max-frame-size a peer may announce,
	// and the largest frame either side may send before Open (bytes).
	MinMaxFrameSize = 512
)

// Frame is one decoded frame, or a protocol header (Type FrameHeader). A
// Frame returned by Decoder.Feed owns its memory: nothing in it aliases the
// caller's input or the decoder's buffers.
type Frame struct {
	// Type is FrameAMQP, FrameSASL or FrameHeader.
	Type FrameType
	// Protocol is the protocol id of a FrameHeader frame.
	Protocol ProtocolID
	// Channel is the frame's channel; SASL frames ignore it (§5.3.1).
	Channel uint16
	// Body is the performative or SASL body; nil for an empty frame, which
	// AMQP 1.0 §2.4.5 allows as a heartbeat.
	Body Performative
	// Payload is what follows a Transfer performative: (part of) the
	// encoded message; nil when there is none. Other frames have none.
	Payload []byte
}

// Limits bound what one connection may make the decoder hold. Every length
// and count read from the wire is checked against them before memory is set
// aside for it.
type Limits struct {
	// MaxFrameSize bounds a whole frame, header included (bytes). It is the
	// max-frame-size this side announced in its Open; update it with
	// Decoder.SetMaxFrameSize when that changes. Default 131072, ActiveMQ's
	// wireFormat.maxAmqpFrameSize.
	//
	// DEVIATION: AMQP 1.0 §2.4.1 caps frames before the Open exchange at
	// MinMaxFrameSize (512 bytes). Like ActiveMQ (Proton-J), the decoder
	// applies MaxFrameSize from the first frame; a session that wants the
	// strict rule sets 512 until Open is processed.
	MaxFrameSize uint32
	// MaxNesting bounds how deeply described values, lists, maps and
	// arrays may nest (levels); a performative and its list take two.
	// Default 32.
	MaxNesting int
	// MaxContainerCount bounds the element count of one list, map (keys and
	// values) or array, checked before the elements are allocated. It also
	// bounds, in total for one decoded value, the elements of arrays whose
	// element constructor carries no data (null, true, uint0, list0...),
	// which cost no input bytes. Default 65536.
	MaxContainerCount int
}

// DefaultLimits returns the limits described on Limits.
func DefaultLimits() Limits {
	return Limits{MaxFrameSize: 128 * 1024, MaxNesting: 32, MaxContainerCount: 65536}
}

// withDefaults replaces unset (zero or negative) limits by the defaults.
// MaxFrameSize is raised to at least FrameHeaderSize.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxFrameSize == 0 {
		l.MaxFrameSize = d.MaxFrameSize
	}
	if l.MaxFrameSize < FrameHeaderSize {
		l.MaxFrameSize = FrameHeaderSize
	}
	if l.MaxNesting <= 0 {
		l.MaxNesting = d.MaxNesting
	}
	if l.MaxContainerCount <= 0 {
		l.MaxContainerCount = d.MaxContainerCount
	}
	return l
}
