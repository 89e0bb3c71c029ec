package client

import (
	"errors"

	"wharf/protocols/openwire/wire"
)

// Sentinel errors; callers test them with errors.Is.
var (
	// ErrClosed: the connection, session, producer or consumer was closed
	// by this side.
	ErrClosed = errors.New("openwire client: closed")
	// ErrConnectionLost: the broker closed the socket, sent ShutdownInfo,
	// or a read or write failed.
	ErrConnectionLost = errors.New("openwire client: connection lost")
	// ErrInactivity: nothing was read from the broker for the negotiated
	// MaxInactivityDuration (Java: "Channel was inactive for too long").
	ErrInactivity = errors.New("openwire client: broker inactive for too long")
	// ErrHandshake: the broker's first frame was not a valid WireFormatInfo,
	// or no BrokerInfo arrived during Dial.
	ErrHandshake = errors.New("openwire client: handshake failed")
	// ErrUnexpectedResponse: a response of a type the request cannot take.
	ErrUnexpectedResponse = errors.New("openwire client: unexpected response")
	// ErrConsumerClosedByBroker: the broker closed the consumer with
	// ConsumerControl.Close (for example the slow-consumer abort strategy).
	ErrConsumerClosedByBroker = errors.New("openwire client: consumer closed by broker")
	// ErrBrowseDone: a browser consumer has seen every message of its queue
	// (the broker's MessageDispatch with no message).
	ErrBrowseDone = errors.New("openwire client: end of browse")
	// ErrUnknownMessage: Ack was given a message this consumer did not
	// deliver, or one already acknowledged.
	ErrUnknownMessage = errors.New("openwire client: message not delivered by this consumer or already acknowledged")
	// ErrNotTransacted: Commit or Rollback on a session that is not
	// transacted.
	ErrNotTransacted = errors.New("openwire client: session is not transacted")
	// ErrNoDestination: a send from an anonymous producer with no
	// destination on the message.
	ErrNoDestination = errors.New("openwire client: no destination")
	// ErrBadDestination: ParseDestination was given a name it cannot read.
	ErrBadDestination = errors.New("openwire client: bad destination")
	// ErrBadMessage: Producer.Forward was given a message it cannot
	// forward (no MessageId).
	ErrBadMessage = errors.New("openwire client: bad message")
)

// BrokerError is a failure the broker reported in an ExceptionResponse (to
// a command sent with ResponseRequired) or, asynchronously, in a
// ConnectionError. It carries the Java exception as the broker marshalled
// it, e.g. ClassName "javax.jms.InvalidClientIDException".
type BrokerError struct {
	// Command is the OpenWire name of the command that failed
	// ("ConnectionInfo", "ActiveMQTextMessage", ...); "ConnectionError" for
	// asynchronous errors.
	Command string
	// Exception is the Java throwable; its stack trace and cause are filled
	// only when StackTraceEnabled was negotiated.
	Exception *wire.Throwable
}

// Error implements error.
func (e *BrokerError) Error() string {
	return "openwire client: " + e.Command + " failed: " + e.Exception.Error()
}

// Unwrap returns the Java throwable, which is itself an error.
func (e *BrokerError) Unwrap() error { return e.Exception }

// ClassName is the Java exception class.
func (e *BrokerError) ClassName() string { return e.Exception.ClassName }

// Message is the Java exception message.
func (e *BrokerError) Message() string { return e.Exception.Message }

// ExceptionClass returns the Java exception class carried by err (a
// *BrokerError anywhere in its chain), or "" if there is none.
func ExceptionClass(err error) string {
	var be *BrokerError
	if errors.As(err, &be) {
		return be.ClassName()
	}
	return ""
}

func brokerError(cmd string, t *wire.Throwable) *BrokerError {
	if t == nil {
		t = &wire.Throwable{ClassName: "java.lang.Exception"}
	}
	return &BrokerError{Command: cmd, Exception: t}
}
