package engine

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"wharf/engine/message"
)

// Errors returned by the engine. Protocols map them to their own error
// frames; tests match them with errors.Is. The text a client is shown for
// one is ClientText's, not Error's.
//
// DEVIATION: two refusals have no ActiveMQ counterpart. ErrNoClientID:
// ActiveMQ's STOMP converter gives every connection a client id (its
// connection id when CONNECT names none), so a STOMP durable subscription
// without client-id works there. ErrWildcardSend: ActiveMQ 5.17 accepts a
// send to a destination pattern (a STOMP SEND to /queue/a.* gets its
// RECEIPT). Wharf refuses both with these texts.
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

// clientError is an engine error that also carries the text ActiveMQ 5.17
// gives a client for the same failure. Client scripts match on those texts
// (a STOMP ERROR's message header, a JMSException's message), so protocols
// show it; logs and errors.Is keep the engine's own error.
type clientError struct {
	err  error  // the engine's error, wrapping its sentinel
	text string // ActiveMQ's text
}

func (e *clientError) Error() string { return e.err.Error() }
func (e *clientError) Unwrap() error { return e.err }

// WithClientText gives err the text ActiveMQ shows a client for it, for
// ClientText to find; protocols use it for failures they detect
// themselves.
func WithClientText(err error, text string) error {
	return &clientError{err: err, text: text}
}

// ClientText is the text to show a client for err, in any protocol: the
// text ActiveMQ 5.17 gives for the same failure where the engine knows it,
// else err.Error(). Errors of ErrResourceAllocation carry ActiveMQ's text
// after the sentinel's (flowcontrol.go): that part is shown alone. Safe
// from any goroutine.
func ClientText(err error) string {
	var ce *clientError
	if errors.As(err, &ce) {
		return ce.text
	}
	msg := err.Error()
	if errors.Is(err, ErrResourceAllocation) {
		if rest, ok := strings.CutPrefix(msg, ErrResourceAllocation.Error()+": "); ok {
			return rest
		}
	}
	return msg
}

// errClientIDInUse refuses a connection whose client id another holds, in
// RegionBroker.addConnection's words; holder is the address the holding
// connection comes from (nil for one made inside the process).
func errClientIDInUse(brokerName, clientID string, holder net.Addr) error {
	from := "null" // what Java prints for a transport without a socket
	if holder != nil {
		from = "tcp://" + holder.String()
	}
	return WithClientText(fmt.Errorf("%w: %q", ErrClientIDInUse, clientID),
		"Broker: "+brokerName+" - Client: "+clientID+" already connected from "+from)
}

// errDurableInUse refuses a second consumer on an active durable
// subscription, in TopicRegion.addConsumer's words.
func errDurableInUse(key SubKey) error {
	return WithClientText(fmt.Errorf("%w: %s", ErrDurableInUse, key.String()),
		"Durable consumer is in use for client: "+key.ClientID+" and subscriptionName: "+key.Name)
}

// errUnsubscribeInUse refuses to destroy a durable subscription a consumer
// is attached to, in TopicRegion.removeSubscription's words (which, unlike
// addConsumer's, name neither client nor subscription).
func errUnsubscribeInUse(key SubKey) error {
	return WithClientText(fmt.Errorf("%w: %s", ErrDurableInUse, key.String()), "Durable consumer is in use")
}

// errNoSuchSubscription is TopicRegion.removeSubscription's refusal of an
// unknown durable subscription.
func errNoSuchSubscription(key SubKey) error {
	return WithClientText(fmt.Errorf("%w: %s", ErrNoSuchSubscription, key.String()),
		"No durable subscription exists for clientID: "+key.ClientID+" and subscriptionName: "+key.Name)
}

// TempGoneError refuses a send to, a producer or a consumer on, the
// temporary destination d, which no longer exists. ActiveMQ's
// DestinationDoesNotExistException carries only the destination's qualified
// name (AbstractRegion.lookup), temp-queue://ID:..., which is
// Destination.String.
func TempGoneError(d message.Destination) error {
	return WithClientText(fmt.Errorf("%w: %s", ErrTempGone, d), d.String())
}
