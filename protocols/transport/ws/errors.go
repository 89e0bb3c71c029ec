package ws

import (
	"errors"
	"fmt"
)

// ErrAbnormalClosure is given to Handler.OnClose (wrapping the socket
// error, io.EOF for a plain TCP close) when the connection ended without a
// close frame from either side: what RFC 6455 §7.1.5 reports as close code
// 1006. Other causes are those of package transport (ErrOutboundFull,
// ErrDrainTimeout, ErrListenerClosed, ErrHandlerPanic, the handler's own
// OnData error), a *CloseError, or an error wrapping one of the
// protocols/transport/ws/wire decoding errors (wire.ErrMessageTooBig, ...)
// for a client that broke the framing rules.
var ErrAbnormalClosure = errors.New("ws: connection closed without a close frame")

// CloseError is given to Handler.OnClose when the peer closed the
// connection with a status code other than 1000 (normal), 1001 (going
// away) or none, which are orderly closes (nil).
type CloseError struct {
	Code   uint16 // RFC 6455 §7.4 status code
	Reason string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("ws: peer closed the connection with status %d %q", e.Code, e.Reason)
}
