// Package wire is the STOMP 1.0/1.1/1.2 frame codec: bytes to Frame values and
// back, with no I/O, no goroutines and only the standard library.
//
// # Ownership
//
// A Decoder belongs to one connection and is driven by that connection's
// owner goroutine; it is not safe for concurrent use. Feed may be given the
// stream split at any byte (inside a CRLF, an escape sequence, a
// content-length body); the decoder is a state machine that keeps exactly what
// it needs between calls. Frames it returns own their memory: they never alias
// the input slice or the decoder's reusable buffers, so the caller may reuse
// its read buffer at once and hand the frames to other goroutines.
// AppendFrame is a pure function, safe from any goroutine.
//
// # Framing
//
// A frame is COMMAND EOL, header lines name:value EOL, a blank line, the body
// and NUL (STOMP 1.2 "STOMP Frames"). The body is exactly content-length bytes
// followed by NUL when that header is present (first occurrence), otherwise it
// runs to the first NUL. EOLs, and NULs, between frames are heart-beats
// (STOMP 1.2 "Heart-beating"); they are counted, not returned. Unknown
// commands are returned as frames: the session answers them with ERROR.
//
// # Versions
//
// Header rules depend on the negotiated version, which the session sets with
// Decoder.SetVersion after CONNECT; see SetVersion for the 1.0/1.1/1.2 rules
// and Feed for how frames pipelined behind CONNECT wait for it. CONNECT,
// STOMP and CONNECTED frames always use the 1.0 rules.
//
// # Invariants
//
//   - Every length and count read from the wire is checked against Limits
//     before memory is reserved for it; a content-length body is grown as its
//     bytes arrive, never allocated from the announced size alone.
//   - A decoded frame never has more than Limits.MaxHeaders headers or a body
//     longer than Limits.MaxBodyBytes.
//   - Decoding never panics on input. Any error is fatal and sticky; it wraps
//     one of the Err* sentinels and says what was wrong, for the ERROR frame's
//     message header.
//   - For every frame f the decoder returns under version v, decoding
//     AppendFrame(nil, &f, v) under v yields f again (given limits that
//     admit it: re-escaping a raw colon in a 1.1/1.2 value lengthens the
//     line). The one lossy case is AppendFrame's 1.0 LF replacement, which
//     decoded frames never need.
//   - The result of Feed does not depend on how the stream was split: the
//     same frames, heart-beat count and error text for any split.
//
// Choices where ActiveMQ and the specification differ are marked DEVIATION
// next to the code.
package wire
