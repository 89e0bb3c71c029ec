package transport

import (
	"crypto/tls"
	"crypto/x509"
	"net"
)

// Conn is the transport's side of one client connection, as a protocol
// session sees it.
type Conn interface {
	// Write queues b to be sent and returns at once; b may be reused by the
	// caller as soon as Write returns. Safe from any goroutine. Writes from
	// one goroutine are sent in the order they were made. When the bytes
	// queued and not yet on the socket exceed the connection's outbound cap
	// (Options.MaxOutboundBytes) the connection is closed and Write returns
	// ErrOutboundFull: a client that does not read is cut, never buffered
	// without bound.
	//
	// The queue Wharf holds is checked by Write itself; gnet's own outbound
	// buffer can only be measured on the event loop, so when it is that part
	// which crosses the cap the connection is cut on the loop and it is the
	// next Write that returns ErrOutboundFull. After Close, or once the
	// connection is gone, Write returns ErrClosed.
	Write(b []byte) error
	// WriteNotify is Write, then calls done (from the transport's goroutine)
	// once the bytes have been handed to the kernel, or with an error when the
	// connection closed first. Protocols use it to return flow-control credit:
	// a peer that stops reading stops getting callbacks once the kernel's
	// socket buffers are full, so a window of WriteNotify credits bounds what
	// Wharf and gnet hold for it.
	//
	// Precisely: done runs on the connection's event loop, in write order,
	// once every byte of b has left gnet's outbound buffer (gnet writes what
	// the kernel takes at once and keeps the rest, sending it on writable
	// events). gnet has no callback for that moment, so the loop checks on
	// each flush and otherwise polls while callbacks wait, with a back-off
	// from 1 ms to 50 ms that restarts whenever a callback runs: done may
	// come up to that much after the kernel took the bytes. done gets nil,
	// or ErrClosed, ErrOutboundFull or the connection's error when the
	// connection closed before the bytes left gnet's buffer. If WriteNotify
	// itself returns an error, done is never called. done must not block.
	WriteNotify(b []byte, done func(error)) error
	// Close flushes what was queued by Write, then closes the connection. Safe
	// from any goroutine; later calls do nothing. It returns at once: the
	// flush and close happen on the event loop, which waits (up to 30 s) for
	// gnet's outbound buffer to reach the kernel before closing the socket;
	// input arriving meanwhile is read and discarded. Handler.OnClose
	// follows with nil, or ErrDrainTimeout when the peer never took the bytes.
	// After an orderly close the socket lingers half-closed, still read,
	// until the peer closes too (at most 5 s): see the package doc.
	Close() error
	// PauseReading stops delivering this connection's input to OnData and
	// stops reading its socket, so the peer's sends back up in TCP: the
	// kernel's receive buffer fills, the advertised window closes and the
	// peer's writes block. Protocols call it when the engine withholds a
	// producer's send completion (a full destination). Safe from any
	// goroutine; idempotent. Other connections, on the same event loop too,
	// are not affected.
	//
	// It takes effect on the event loop: an OnData call under way finishes,
	// and no OnData follows until ResumeReading. Input that reaches gnet
	// after the call and before the loop has taken the socket out of its
	// poller (at most one read, 64 KiB) is held, not delivered. On Linux
	// nothing more is read; elsewhere (or with gnet's poll_opt build) the
	// socket cannot be left unread, gnet keeps reading it into memory, and
	// beyond 4 MiB held the connection is cut with ErrInboundFull.
	//
	// Writes still go out while reading is paused. A connection being
	// closed (Close, an OnData error) reads and drops its input whatever was
	// asked, so that its close stays a FIN. A peer that resets the
	// connection while paused still closes it (OnClose once, with nil: gnet
	// reports the reset of a socket it is not reading as EOF); a peer's FIN
	// is seen only after ResumeReading, once the input before it was
	// delivered.
	PauseReading()
	// ResumeReading undoes PauseReading: the input held meanwhile is
	// delivered to OnData on the event loop at once, in order and before
	// anything read later, even if no new bytes arrive, and the socket is
	// read again. Safe from any goroutine; idempotent. When PauseReading and
	// ResumeReading race, the connection ends in the state asked for by the
	// call that ran last.
	ResumeReading()
	// RemoteAddr is the peer's address. Safe from any goroutine.
	RemoteAddr() net.Addr
	// LocalAddr is the address the connection was accepted on, with the real
	// port. Safe from any goroutine.
	LocalAddr() net.Addr
	// ID is unique among the connections of this process. Safe from any
	// goroutine.
	ID() uint64
}

// Handler is a protocol session bound to one connection. The transport calls
// its methods from one goroutine at a time, never concurrently: the gnet event
// loop that owns the connection (see doc.go). A panic in a method is
// recovered, logged with the connection's ID and remote address, and cuts
// that connection only; OnClose still follows (with an error wrapping
// ErrHandlerPanic).
type Handler interface {
	// OnData is called with bytes read from the socket. b is valid only during
	// the call: copy what must outlive it. A non-nil error closes the
	// connection (the handler has already written whatever error frame its
	// protocol sends). OnData must not block for long: it runs on an event
	// loop shared with other connections.
	OnData(b []byte) error
	// OnClose is called exactly once when the connection is gone, whoever
	// closed it; err is nil for an orderly close (the peer's FIN, or Close
	// after a complete flush). Otherwise it is the handler's own OnData
	// error, ErrOutboundFull, ErrDrainTimeout, ErrListenerClosed,
	// ErrInboundFull (only where PauseReading cannot stop reads), an error
	// wrapping ErrHandlerPanic, or the socket error. Writes are refused from
	// then on.
	OnClose(err error)
}

// HandlerFactory builds the session for a newly accepted connection. It runs
// on the connection's event loop and may Write (a greeting) or Close; a nil
// Handler or a panic refuses the connection (no OnClose follows).
type HandlerFactory func(c Conn) Handler

// TLSConn is implemented by the connections of TLS listeners (ssl://,
// stomp+ssl://, wss://...) once the handshake is complete: sessions read
// the client's verified certificate chain from it for certificate
// authentication. Safe from any goroutine.
type TLSConn interface {
	Conn
	// ConnectionState is the completed handshake's state.
	ConnectionState() tls.ConnectionState
}

// PeerCertificates returns the verified client certificate chain of c,
// leaf first, or nil when c is not a TLS connection or the client sent no
// certificate; tls reports whether c is a TLS connection at all.
func PeerCertificates(c Conn) (certs []*x509.Certificate, tls bool) {
	t, ok := c.(TLSConn)
	if !ok {
		return nil, false
	}
	st := t.ConnectionState()
	if len(st.VerifiedChains) > 0 {
		return st.VerifiedChains[0], true
	}
	return nil, true
}
