package bench

import "errors"

var (
	// ErrConfig wraps every problem Config.Validate finds.
	ErrConfig = errors.New("bench: invalid configuration")
	// ErrBadURL is a broker URL that cannot be used.
	ErrBadURL = errors.New("bench: bad broker URL")
	// ErrTLSFiles is a --ca, --cert or --key file that cannot be loaded.
	ErrTLSFiles = errors.New("bench: cannot load the TLS files")
	// ErrConnect is the failure of the first connection of a run: the
	// broker is not there, or refuses us.
	ErrConnect = errors.New("bench: cannot connect to the broker")
	// ErrBrokerPID is a --broker-pid whose /proc entries cannot be read.
	ErrBrokerPID = errors.New("bench: cannot sample the broker process")
	// errSTOMPError is an ERROR frame from a STOMP broker.
	errSTOMPError = errors.New("bench: stomp ERROR frame")
	// errSTOMPFrame is a frame the STOMP client cannot read.
	errSTOMPFrame = errors.New("bench: malformed stomp frame")
	// errClosed is an operation on a closed connection.
	errClosed = errors.New("bench: connection closed")
	// errMQTTRefused is a SUBACK that refuses the subscription.
	errMQTTRefused = errors.New("bench: mqtt subscription refused")
	// errBadStamp is a body without the stamp Wharf bench writes.
	errBadStamp = errors.New("bench: message without a bench stamp")
)
