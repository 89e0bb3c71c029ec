package client

import (
	"crypto/tls"
	"log/slog"
	"time"

	"wharf/protocols/openwire/wire"
)

// Options configure a connection. Start from DefaultOptions: the zero value
// is valid but asks for loose, uncached encoding (which any broker accepts,
// since both are negotiated with AND, reference §3.3).
type Options struct {
	// ClientID is ConnectionInfo.ClientId; durable subscriptions need a
	// stable one. Empty: a unique id is generated, as the Java client does.
	ClientID string
	// Username and Password go in ConnectionInfo (plain text, as in Java).
	Username, Password string
	// BrokerInfo, when set, is sent (one-way) before ConnectionInfo, as
	// a network bridge introduces its broker to the remote one
	// (DemandForwardingBridgeSupport: BrokerInfo with networkConnection).
	BrokerInfo *wire.BrokerInfo
	// FailoverReconnect marks the ConnectionInfo as a failover client's
	// reconnection (ConnectionInfo.failoverReconnect), as ActiveMQ's
	// FailoverTransport sends it after a reconnect: the broker then checks
	// the connection's persistent sends against its producer audit.
	FailoverReconnect bool
	// ConnectionID, when set, is the connection's id instead of a new
	// one: a failover client keeps its connection id (and so its
	// session and producer ids) across reconnects.
	ConnectionID string
	// BrokerSubscriptionInfo, when set with BrokerInfo, is sent (one-way)
	// right after it, as a bridge with syncDurableSubs does
	// (DemandForwardingBridgeSupport.startRemoteBridge); only on
	// OpenWire 12 or later.
	BrokerSubscriptionInfo *wire.BrokerSubscriptionInfo

	// Version is the highest OpenWire version advertised; 0 means 12.
	Version int
	// TightEncoding and CacheEnabled are advertised in WireFormatInfo; the
	// format used is what both sides ask for.
	TightEncoding bool
	CacheEnabled  bool
	// CacheSize is the advertised marshal cache size in slots; 0 means 1024.
	CacheSize int32
	// MaxInactivityDuration is advertised in WireFormatInfo; the smaller of
	// both sides' values drives keep-alives. 0 means 30s, negative disables
	// the inactivity monitor (if the broker agrees: it takes the minimum).
	MaxInactivityDuration time.Duration
	// MaxInactivityDurationInitalDelay (sic, as the OpenWire option) delays
	// the first inactivity check; 0 means 10s.
	MaxInactivityDurationInitalDelay time.Duration
	// Limits bound what the decoder accepts from the broker; zero fields
	// take wire.DefaultLimits.
	Limits wire.Limits

	// DialTimeout bounds Dial: TCP connect, WireFormatInfo exchange,
	// ConnectionInfo and BrokerInfo. 0 means 30s. The context passed to Dial
	// can shorten it.
	DialTimeout time.Duration
	// CloseTimeout bounds the orderly part of Close (waiting for the
	// Response to RemoveInfo) before the socket is closed anyway. 0 means
	// 15s, the Java client's closeTimeout.
	CloseTimeout time.Duration
	// TLS, when set, runs a TLS handshake over the TCP connection before
	// the WireFormatInfo exchange (ActiveMQ's ssl:// and nio+ssl://
	// connectors); the handshake counts against DialTimeout. An empty
	// ServerName is taken from Dial's host, as crypto/tls.Dial does.
	TLS *tls.Config

	// SyncAcks makes Consumer.Ack (AckClient, AckIndividual) ask for the
	// broker's Response and wait for it (30 s at most), as the Java client does with
	// jms.sendAcksAsync=false; the broker answers once the acknowledgement
	// is on disk. False: acks are one-way, the Java client's default.
	SyncAcks bool

	// Logger receives lifecycle and per-frame (Debug) logs; nil discards.
	Logger *slog.Logger
	// OnError is called, from the connection's reader goroutine, with
	// errors the broker reports asynchronously (ConnectionError, a
	// *BrokerError). It must not block. Nil logs them at Warn.
	OnError func(error)
	// OnCommand, if set, is called from the reader goroutine with each
	// command the client itself has no use for (a BrokerSubscriptionInfo
	// sent to a network bridge, say). It must not block; it may keep ds.
	OnCommand func(ds wire.DataStructure)
	// Trace, if set, sees every frame after the WireFormatInfo exchange:
	// outbound ones (out=true) from the goroutine writing them, inbound ones
	// from the reader goroutine. It must not block, modify or retain ds.
	Trace func(out bool, ds wire.DataStructure)
}

// DefaultOptions returns the options of a 5.17 Java client: OpenWire 12,
// tight encoding and the marshal cache on, 30s inactivity.
func DefaultOptions() Options {
	return Options{
		Version:       wire.MaxVersion,
		TightEncoding: true,
		CacheEnabled:  true,
	}
}

func (o Options) withDefaults() Options {
	if o.Version == 0 {
		o.Version = wire.MaxVersion
	}
	if o.CacheSize == 0 {
		o.CacheSize = 1024
	}
	if o.MaxInactivityDuration == 0 {
		o.MaxInactivityDuration = 30 * time.Second
	}
	if o.MaxInactivityDuration < 0 {
		o.MaxInactivityDuration = 0
	}
	if o.MaxInactivityDurationInitalDelay <= 0 {
		o.MaxInactivityDurationInitalDelay = 10 * time.Second
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 30 * time.Second
	}
	if o.CloseTimeout <= 0 {
		o.CloseTimeout = 15 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// AckMode says how a consumer acknowledges (JMS session acknowledge modes;
// a transacted session ignores it and acknowledges on Commit).
type AckMode int

const (
	// AckAuto acknowledges each message as Receive returns it, with a
	// STANDARD MessageAck (Java AUTO_ACKNOWLEDGE).
	AckAuto AckMode = iota
	// AckClient: Ack(m) acknowledges m and every message this consumer
	// delivered before it (one STANDARD MessageAck for the range).
	// DEVIATION: Java's CLIENT_ACKNOWLEDGE acknowledges every consumer of
	// the session; here the range is the consumer's own.
	AckClient
	// AckIndividual: Ack(m) acknowledges m only (INDIVIDUAL MessageAck,
	// ActiveMQSession.INDIVIDUAL_ACKNOWLEDGE).
	AckIndividual
)

// String names the mode.
func (m AckMode) String() string {
	switch m {
	case AckAuto:
		return "auto"
	case AckClient:
		return "client"
	case AckIndividual:
		return "individual"
	}
	return "unknown"
}

// PrefetchPull requests prefetch 0: the broker sends nothing until Receive
// asks with a MessagePull (ConsumerOptions.Prefetch).
const PrefetchPull = -1

// The Java client's prefetch defaults (ActiveMQPrefetchPolicy), in messages.
const (
	DefaultQueuePrefetch        = 1000
	DefaultQueueBrowserPrefetch = 500
	DefaultTopicPrefetch        = 32767
	DefaultDurableTopicPrefetch = 100
)

// ConsumerOptions configure Session.Consumer.
type ConsumerOptions struct {
	// Prefetch is ConsumerInfo.PrefetchSize in messages: 0 takes the Java
	// default for the kind of consumer (queue 1000, browser 500, topic
	// 32767, durable topic 100); PrefetchPull asks for prefetch 0, in which
	// case each Receive sends a MessagePull.
	Prefetch int
	// Selector is a JMS selector, sent verbatim.
	Selector string
	// NoLocal drops messages published on this connection (topics).
	NoLocal bool
	// DurableName makes a durable topic subscription with this name; the
	// connection's ClientID identifies it.
	DurableName string
	// Browser makes a queue browser: messages are copied, not consumed, and
	// Receive returns ErrBrowseDone after the last one.
	Browser bool
	// Exclusive asks to be the queue's exclusive consumer.
	Exclusive bool
	// AckMode is ignored in transacted sessions.
	AckMode AckMode
	// Network, when set, makes the consumer a network bridge's demand
	// subscription (a duplex bridge's, package cluster): ConsumerInfo
	// networkSubscription and brokerPath, and a NetworkBridgeFilter as
	// its additionalPredicate, as ActiveMQ's bridges send them.
	Network *NetworkConsumer
}

// NetworkConsumer describes a network bridge's consumer.
type NetworkConsumer struct {
	// BrokerPath are the ids of the brokers the demand came through.
	BrokerPath []string
	// NetworkBrokerID is the bridge's broker: the filter keeps from the
	// consumer messages that went through it.
	NetworkBrokerID string
	// MessageTTL and ConsumerTTL go in the NetworkBridgeFilter.
	MessageTTL, ConsumerTTL int
	// Priority is ConsumerInfo.priority.
	Priority int8
}
