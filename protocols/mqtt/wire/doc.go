// Package wire is the MQTT packet codec for MQTT 3.1 (protocol name
// "MQIsdp", level 3), 3.1.1 ("MQTT", level 4) and 5.0 ("MQTT", level 5):
// bytes to Packet values and back, for every packet type in both
// directions, with no I/O, no goroutines and only the standard library.
//
// # Ownership
//
// A Decoder belongs to one connection and is driven by that connection's
// owner goroutine; it is not safe for concurrent use. Feed may be given the
// stream split at any byte; the decoder keeps exactly what it needs between
// calls. Packets it returns own their memory: they never alias the input
// slice or the decoder's reusable buffers, so the caller may reuse its read
// buffer at once and hand packets to other goroutines. All strings and byte
// slices of one packet share one allocation (the packet body); keeping one
// of them keeps the body alive, so clone what must outlive the packet by
// long (see Packet). AppendPacket and PacketSize are pure functions, safe
// from any goroutine.
//
// # Versions
//
// The protocol level decides the packet layout (MQTT 5 adds properties,
// reason codes and subscription options). A new Decoder has no level and
// accepts only CONNECT [MQTT-3.1.0-1]; a CONNECT is decoded under the level
// it carries and sets the decoder's level, so packets pipelined behind it
// are decoded right without the session's help, and a second CONNECT is a
// protocol error [MQTT-3.1.0-2]. A client-side decoder is given its level
// with SetVersion before the CONNACK arrives. MQTT 3.1 is decoded leniently
// where 3.1 had no rule (fixed-header flags of non-PUBLISH packets, the
// CONNECT reserved bit, DUP on QoS 0, a flagged but missing user name or
// password at the end of CONNECT), as ActiveMQ and mosquitto do.
//
// # Errors
//
// Every decoding error is an *Error carrying the MQTT 5 reason code that
// names it (0x81 Malformed Packet, 0x82 Protocol Error, 0x95 Packet too
// large, 0x84 Unsupported Protocol Version, 0x90 Topic Name invalid, 0x94
// Topic Alias invalid, 0x97 Quota exceeded) and a message with the spec
// tag, such as "mqtt: PUBLISH QoS 3 is malformed [MQTT-3.3.1-4]". It
// unwraps to the matching Err* sentinel. Errors are fatal and sticky. The
// reason code tables are in codes.go.
//
// # What the decoder checks, and what it leaves to the session
//
// The decoder enforces every rule that can be judged from one packet: the
// fixed header (reserved flags, QoS 3, DUP on QoS 0, a remaining length of
// at most four bytes), lengths that match their contents exactly, UTF-8
// strings (well formed, no U+0000), non-zero packet identifiers, CONNECT
// flags, the protocol name and level, SUBSCRIBE options, reason codes valid
// for their packet, PUBLISH topic names (no wildcards; empty only with an
// MQTT 5 Topic Alias), and for MQTT 5 properties: legal for the packet,
// not repeated, with legal values, Variable Byte Integers in minimal form.
//
// It leaves to the session what needs connection state or is answered
// rather than fatal: topic filters (an invalid one is refused in SUBACK;
// see ValidTopicFilter and ParseShared), the will topic (ValidTopicName),
// client identifier rules, which direction a packet may travel (a
// Subscription Identifier from a client [MQTT-3.3.4-6], a CONNACK sent to a
// server), topic alias resolution and limits, Receive Maximum, and packet
// sizes negotiated by Maximum Packet Size (PacketSize helps the sender).
//
// # Invariants
//
//   - Every length and count read from the wire is checked against Limits
//     before memory is reserved for it; the body of a split packet is
//     grown as its bytes arrive, never allocated from the announced size.
//   - A packet over Limits.MaxPacketBytes is refused with ErrPacketTooLarge
//     as soon as its fixed header is read, before its body is buffered.
//   - Decoding never panics on input.
//   - The result of Feed does not depend on how the stream was split.
//   - For every packet p the decoder returns under level v, decoding
//     AppendPacket(nil, &p, v) under v yields p again.
//   - Decoding a PUBLISH costs one allocation (its body) in MQTT 3.x; in 5
//     one more for its Properties, if any, and one for each non-empty User
//     or SubscriptionIDs list. Acknowledgements and PINGs cost none.
//     Encoding into a buffer with room costs none.
//
// Choices where ActiveMQ, other brokers and the specification differ are
// marked DEVIATION next to the code.
package wire
