package openwire

import (
	"errors"

	"wharf/engine"
	"wharf/protocols/openwire/wire"
)

// Sentinel errors of the OpenWire adapter.
var (
	ErrNotNegotiated  = errors.New("openwire: command before WireFormatInfo")
	ErrNoConnection   = errors.New("openwire: command before ConnectionInfo")
	ErrUnknownSession = errors.New("openwire: unknown session")
	ErrUnknownTx      = errors.New("openwire: unknown transaction")
	ErrInactive       = errors.New("openwire: no data received within the inactivity duration")
	ErrBadOption      = errors.New("openwire: invalid transport option")
	// ErrNoClientID refuses a ConnectionInfo without a client id, in
	// ActiveMQ's words (RegionBroker.addConnection); JMS clients always
	// send one, generated when the application sets none.
	ErrNoClientID = errors.New("No clientID specified for connection request")
)

// javaException names the Java exception class ActiveMQ's JMS client
// expects for an engine error, so that applications catching
// InvalidClientIDException and the like keep working.
func javaException(err error) *wire.Throwable {
	class := "javax.jms.JMSException"
	switch {
	case errors.Is(err, engine.ErrClientIDInUse), errors.Is(err, ErrNoClientID):
		class = "javax.jms.InvalidClientIDException"
	case errors.Is(err, engine.ErrTempGone):
		class = "org.apache.activemq.DestinationDoesNotExistException"
	case errors.Is(err, engine.ErrNoSuchSubscription), errors.Is(err, engine.ErrBadDestination),
		errors.Is(err, engine.ErrDurableOnQueue):
		class = "javax.jms.InvalidDestinationException"
	case errors.Is(err, engine.ErrNotAuthorized), errors.Is(err, engine.ErrBadCredentials):
		class = "java.lang.SecurityException"
	case errors.Is(err, engine.ErrResourceAllocation):
		class = "javax.jms.ResourceAllocationException"
	case errors.Is(err, engine.ErrBadSelector):
		class = "javax.jms.InvalidSelectorException"
	}
	return &wire.Throwable{ClassName: class, Message: engine.ClientText(err)}
}
