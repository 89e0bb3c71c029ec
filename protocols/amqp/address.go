package amqp

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"wharf/engine/message"
)

// ErrBadAddress is returned for an address that names no destination.
var ErrBadAddress = errors.New("amqp: invalid address")

// ParseAddress parses a terminus address or a message's to / reply-to as
// ActiveMQ's AMQP adapter does (AmqpSupport.createDestination, which calls
// ActiveMQDestination.createDestination(address, QUEUE_TYPE)): a
// "queue://", "topic://", "temp-queue://" or "temp-topic://" prefix names
// the kind, and a bare name is a queue (mappings.md §3.2). Composite names
// ("a,topic://b") and wildcards are kept in the name as the engine reads
// them.
//
// As ActiveMQDestination.setPhysicalName does, the name is trimmed and
// destination options ("orders?consumer.prefetchSize=10") are cut off;
// AddressOptions returns them. An empty name is an error wrapping
// ErrBadAddress that quotes the address.
func ParseAddress(addr string) (message.Destination, error) {
	return parseAddressAs(addr, message.Queue)
}

// parseAddressAs is ParseAddress with the kind of a bare name given.
func parseAddressAs(addr string, def message.DestType) (message.Destination, error) {
	d := message.ParseQualified(addr, def)
	name, _, _ := strings.Cut(trimJava(d.Name), "?")
	if name == "" {
		return message.Destination{}, fmt.Errorf("%w %q: a non-empty destination name is required", ErrBadAddress, addr)
	}
	d.Name = name
	return d, nil
}

// FormatAddress is the qualified name of d ("queue://orders"), as ActiveMQ
// writes properties.to, reply-to and dynamic termini
// (ActiveMQDestination.getQualifiedName); "" for the zero destination.
func FormatAddress(d message.Destination) string { return d.String() }

// AddressOptions returns the destination options of an address, the query
// after its first "?" decoded as ActiveMQ's URISupport.parseQuery decodes
// it (pairs split on "&", names and values URL-decoded; a pair with no "="
// has an empty value). It returns nil when there are none, and an error
// wrapping ErrBadAddress for a malformed escape. Only "consumer."-prefixed
// options mean anything to ActiveMQ (applied to the ConsumerInfo of a
// receiving client's link; unknown ones refuse the link).
func AddressOptions(addr string) (map[string]string, error) {
	_, q, ok := strings.Cut(addr, "?")
	if !ok || q == "" {
		return nil, nil
	}
	opts := map[string]string{}
	for _, pair := range strings.Split(q, "&") {
		k, v, _ := strings.Cut(pair, "=")
		dk, err := url.QueryUnescape(k)
		if err != nil {
			return nil, fmt.Errorf("%w %q: option %q: %v", ErrBadAddress, addr, pair, err)
		}
		dv, err := url.QueryUnescape(v)
		if err != nil {
			return nil, fmt.Errorf("%w %q: option %q: %v", ErrBadAddress, addr, pair, err)
		}
		opts[dk] = dv
	}
	return opts, nil
}

// trimJava trims as Java's String.trim: every character <= ' ' at either end.
func trimJava(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}
