package stomp

import "errors"

// Sentinel errors of the STOMP adapter.
var (
	ErrInactive       = errors.New("stomp: no data received within the heart-beat interval")
	ErrConnectTimeout = errors.New("stomp: no CONNECT frame within the connect timeout")
	ErrBadOption      = errors.New("stomp: invalid transport option")
)

// protocolError is a failure to report in an ERROR frame. fatal errors close
// the connection after the frame, as ActiveMQ's ProtocolException(fatal)
// does.
type protocolError struct {
	msg   string
	fatal bool
	// security errors carry only the message in the body, as ActiveMQ's
	// handleException writes them.
	security bool
}

func (e *protocolError) Error() string { return e.msg }

func perr(msg string) *protocolError  { return &protocolError{msg: msg} }
func fatal(msg string) *protocolError { return &protocolError{msg: msg, fatal: true} }
