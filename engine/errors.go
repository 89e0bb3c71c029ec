package engine

import "errors"

// Errors returned by the engine. Protocols map them to their own error
// frames; tests match them with errors.Is.
var (
	ErrClosed             = errors.New("engine: broker is shutting down")
	ErrConnClosed         = errors.New("engine: connection is closed")
	ErrClientIDInUse      = errors.New("engine: client id is already in use") // javax.jms.InvalidClientIDException
	ErrNoClientID         = errors.New("engine: a durable subscription needs a client id")
	ErrDurableOnQueue     = errors.New("engine: durable subscriptions are only for topics")
	ErrDurableInUse       = errors.New("engine: durable subscription is already in use")
	ErrNoSuchSubscription = errors.New("engine: no such durable subscription") // InvalidDestinationException
	ErrBadDestination     = errors.New("engine: invalid destination")
	ErrTempGone           = errors.New("engine: temporary destination does not exist")
	ErrWildcardSend       = errors.New("engine: cannot send to a wildcard destination")
	ErrUnknownTx          = errors.New("engine: unknown transaction")
	ErrTxExists           = errors.New("engine: transaction already started")
	ErrUnknownDelivery    = errors.New("engine: no such delivery awaits acknowledgement")
	ErrBadSelector        = errors.New("engine: invalid selector")
	ErrSubClosed          = errors.New("engine: subscription is closed")
)
