// Package wire is the AMQP 1.0 codec (OASIS AMQP 1.0, parts 1 to 5): bytes
// to protocol headers, frames, performatives and messages, and back, with
// no I/O, no goroutines and only the standard library.
//
// # Ownership
//
// A Decoder belongs to one connection and is driven by that connection's
// owner goroutine; it is not safe for concurrent use. Feed may be given the
// stream split at any byte; the decoder keeps exactly what it needs between
// calls. Frames it returns own their memory: they never alias the input
// slice or the decoder's reusable buffers, so the caller may reuse its read
// buffer at once and hand the frames to other goroutines; with ReuseBodies
// (a broker's connection) the Transfer and Disposition bodies of one Feed
// are the decoder's and are reused by the next one, while their binary
// fields and a Transfer's Payload stay the frame's own (one copy of a
// transfer's body, which its delivery-tag and payload alias). DecodeMessage is
// the exception, on purpose: a Message aliases the bytes it was decoded
// from (normally a Transfer's Payload, which the frame owns), so a 1 MiB
// body is not copied twice. The Append* functions are pure, safe from any
// goroutine, and do not allocate when dst has room.
//
// # Stream
//
// The stream starts with an 8-byte protocol header (AMQP 1.0 §2.2):
// HeaderAMQP, HeaderSASL or HeaderTLS, reported as a Frame of Type
// FrameHeader; anything else is ErrProtocolHeader, after which the server
// writes its own header and closes. Frames follow (§2.3): an 8-byte header
// (size, doff, type, channel), an ignored extended header, and a body that
// is empty (a heartbeat, §2.4.5), a SASL body (type 0x01, only between
// HeaderSASL and the next header) or a performative (type 0x00) followed,
// for Transfer only, by the payload. Feed stops after each header and each
// SASL frame so that the session can act (refuse the header, or call
// SetExpectHeader once SASL is done) before the next bytes are read. Joining
// the frames of a multi-frame delivery (Transfer.More) and dropping aborted
// ones is session work; AppendTransfer does the splitting on the way out.
//
// # Value model
//
// Generic values (properties, annotations, filters, AmqpValue bodies) are
// Go values of these types:
//
//	null          nil
//	boolean       bool
//	ubyte ushort  uint8 uint16
//	uint ulong    uint32 uint64
//	byte short    int8 int16
//	int long      int32 int64
//	float double  float32 float64
//	decimal32/64/128  Decimal32 Decimal64 Decimal128 (raw IEEE 754 bytes)
//	char          Char (a rune)
//	timestamp     Timestamp (ms since the epoch; .Time() converts)
//	uuid          UUID
//	binary        []byte
//	string        string (valid UTF-8)
//	symbol        Symbol (ASCII)
//	list          []any
//	map           *Map (ordered pairs, keys of any type)
//	array         Array{Type, Descriptor, Elems}
//	described     Described{Descriptor, Value}; descriptor uint64 or Symbol
//
// Decoding accepts every encoding of a type (uint as 0x70, 0x52 or 0x43,
// list as list0, list8 or list32, ...); AppendValue writes the smallest.
// The model is lossless: decode, encode and decode again gives an equal
// value (Equal compares values, treating a NaN as equal to itself).
//
// Performatives, SASL bodies, termini, delivery states, transaction types
// and Error have typed structs (Composite), decoded on a fast path that
// reads each field straight into its struct. Fields follow three rules:
// mandatory fields are plain values; optional fields with a spec default
// hold the effective value (decoding an absent Open.MaxFrameSize gives
// 4294967295; encoding omits a value equal to the default, so build values
// with NewOpen, NewBegin, NewAttach and NewHeader to get the defaults);
// optional fields whose absence means something are pointers, nil slices,
// nil maps or nil interfaces. Optional strings and symbols treat "" as
// absent. Durations are sent in the unit the spec gives (milliseconds,
// seconds for terminus timeouts) and held as time.Duration.
//
// # Invariants
//
//   - Every length and count read from the wire is checked against the
//     bytes present and against Limits before memory is reserved for it;
//     a frame is never larger than Limits.MaxFrameSize, values never nest
//     deeper than Limits.MaxNesting, no list, map or array has more than
//     Limits.MaxContainerCount elements, and a frame body is grown as its
//     bytes arrive.
//   - Decoding never panics on input. Every error is an *Error (the AMQP
//     error composite, so it can be put straight into Close, End or
//     Detach) whose Condition is the one to send, which wraps one of the
//     Err* sentinels, and which names the performative and field at fault.
//     Decoder errors are fatal and sticky.
//   - The result of Feed does not depend on how the stream was split.
//   - Encoding a decoded frame or message and decoding it again gives the
//     same frame or message.
//
// Choices where ActiveMQ and the specification differ are marked DEVIATION
// next to the code.
package wire
