package transport

import "errors"

// Sentinel errors. Callers compare with errors.Is; values passed to
// Handler.OnClose and to WriteNotify callbacks may wrap them.
var (
	// ErrClosed is returned by Write and WriteNotify once Close was called or
	// the connection is gone, and passed to WriteNotify callbacks whose bytes
	// were never handed to the socket.
	ErrClosed = errors.New("transport: connection closed")
	// ErrOutboundFull means the connection's queued-but-unsent bytes exceeded
	// Options.MaxOutboundBytes; the connection has been cut.
	ErrOutboundFull = errors.New("transport: outbound buffer full")
	// ErrHandlerPanic is wrapped into the error given to Handler.OnClose when
	// the connection was cut because its handler (or a WriteNotify callback)
	// panicked.
	ErrHandlerPanic = errors.New("transport: handler panicked")
	// ErrListenerClosed is given to Handler.OnClose for connections closed
	// because their Listener was closed.
	ErrListenerClosed = errors.New("transport: listener closed")
	// ErrDrainTimeout is given to Handler.OnClose when Close could not hand
	// all queued bytes to the kernel within the drain timeout (the peer stopped
	// reading) and the connection was closed with bytes unsent.
	ErrDrainTimeout = errors.New("transport: close timed out with bytes unsent")
	// ErrInvalidOptions is wrapped by Listen when its arguments are unusable.
	ErrInvalidOptions = errors.New("transport: invalid options")
	// ErrInboundFull is given to Handler.OnClose when a connection whose
	// reading was paused had more than maxHeldInboundBytes of input held for
	// it. It happens only where the transport cannot stop reading a socket
	// (off Linux, or gnet built with poll_opt; see pause.go); on Linux a
	// paused connection's socket is not read at all.
	ErrInboundFull = errors.New("transport: inbound bytes held while paused exceed the limit")
)

// errReadCtlUnsupported means the event loop's poller cannot be reached to
// change a connection's read interest; PauseReading then holds input.
var errReadCtlUnsupported = errors.New("transport: read interest control unsupported")
