// Package wire is the server side of RFC 6455 WebSocket framing: frame
// headers, masking, close payloads, the opening handshake's accept key and
// an incremental decoder of client frames that survives any split of the
// stream. It imports only the standard library and is fuzzed
// (FuzzWSWireDecode, FuzzWSWireUTF8).
//
// The decoder is a server's: it requires masked frames [RFC 6455 §5.1] and
// knows no extension, so RSV bits are always an error [RFC 6455 §5.2]. The
// encoder writes whole messages as single frames; it can mask, for tests
// that play the client.
//
// Ownership: a Decoder belongs to the one goroutine that reads its
// connection; it unmasks payload in the caller's buffer and hands chunks
// out aliasing it, so the caller must use a chunk before the next call and
// must own the buffer. Everything else here is a pure function.
package wire
