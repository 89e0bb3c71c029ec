// Package wire is the OpenWire codec: bytes <-> data structures for
// ActiveMQ Classic 5.17 clients, brokers and network bridges, and the
// message format the KahaDB store persists. It imports only the standard
// library and knows nothing of the engine.
//
// # Model
//
// Every ActiveMQ command, id and destination is a Go struct implementing
// DataStructure; fields carry the names of the OpenWire reference
// (docs: shared/reference/openwire.md, §6-§7) and each type's marshal
// method lists them once, in wire order, with the version in which each
// field appeared (§12). One internal codec walks that list to encode or
// decode, tight or loose, so the four directions cannot disagree.
// Versions 1..12 are supported; v10-v12 are checked byte for byte against
// ActiveMQ's own OpenWireFormat (interop_test.go).
//
// # Ownership
//
// A connection owns one Decoder (inbound) and one Encoder (outbound); each
// holds its side of the marshal cache, so neither is safe for concurrent
// use. Both start in InitialFormat (loose, uncached, size-prefixed) because
// the first frame in each direction is a WireFormatInfo sent before
// negotiation; after reading the peer's, call Negotiate and SetFormat on
// both. The Decoder is sans-I/O: Feed bytes split anywhere, then call Next
// until it returns nil. Decoded byte slices (message Content, properties)
// alias a buffer allocated for their frame alone, so they stay valid after
// further Feeds; values taken from the marshal cache are copies.
//
// # Invariants
//
//   - Every length, count and nesting depth read from the wire is checked
//     against Limits, or against the bytes left in the frame, before
//     anything is allocated; the frame size is checked against
//     min(Limits.MaxFrameSize, negotiated MaxFrameSize) before the frame is
//     buffered. Decoders return errors and never panic.
//   - The Encoder reproduces Java's marshal-cache slot assignment exactly
//     (including tight mode assigning a nested object's slot after its own
//     nested cached fields), so frames are byte-identical to Java's; a
//     failed encode rolls its cache additions back.
//   - Message bodies and properties stay as received (Message.Content,
//     Message.MarshalledProperties, and Message.Raw for the whole frame), so
//     a message can be stored or forwarded without re-encoding them;
//     body.go and primitive.go decode them on demand.
//   - Strings are Java modified UTF-8 (CESU-8 with C0 80 for NUL), converted
//     at the edge by mutf8.go.
//
// # Deviations
//
//   - Go strings cannot be null: "" is written as a null string (see
//     codec.str).
//   - The Decoder skips null commands (type 0) instead of returning them.
//   - Trailing bytes inside a size-prefixed frame are an error; Java
//     ignores the size and would misread the stream.
//   - ActiveMQ 5.17 itself decodes property strings with standard UTF-8
//     (UTF8Buffer), so a non-BMP character in a property, written as CESU-8
//     as Java writes it, reads back in Java as two U+FFFD. This codec writes
//     what Java writes and decodes it correctly.
package wire
