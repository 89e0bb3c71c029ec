package openwire

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"wharf/protocols/internal/logthrottle"

	"wharf/engine"
	"wharf/protocols/openwire/wire"
	"wharf/protocols/transport"
)

// Options configure the OpenWire adapter, from the transport connector's
// URI options as ActiveMQ names them (wireFormat.*).
type Options struct {
	// Local is what the broker advertises in its WireFormatInfo.
	Local wire.Options
	// Limits bound what a decoder accepts (wireFormat.maxFrameSize).
	Limits wire.Limits
	// NegotiationTimeout is how long a client has to send its
	// WireFormatInfo (transport.connectAttemptTimeout, or else
	// wireFormat.maxInactivityDurationInitalDelay; 10 s).
	NegotiationTimeout time.Duration
	// BrokerURL is told to clients in BrokerInfo.
	BrokerURL string
	// ConnectedBrokers is the connectedBrokers of the ConnectionControl
	// every JMS connection gets (the connector's updateClusterClients):
	// a comma-separated list of broker URIs a failover client adds to its
	// own. "" names none. When set, it is this broker's URI, and the
	// brokerURL of each broker a network bridge of the engine connects
	// to is added after it (engine.WatchPeerBrokers; clusterclients.go).
	ConnectedBrokers string
	// ClusterFilter is updateClusterFilter: whether a peer broker of
	// that name is added to ConnectedBrokers; nil adds every one.
	ClusterFilter func(brokerName string) bool
	// UpdateClusterClientsOnRemove takes a peer's URI out again when its
	// bridge stops.
	UpdateClusterClientsOnRemove bool
	// RebalanceClients is the connector's rebalanceClusterClients: the
	// ConnectionControl asks the client to reconnect to the first broker
	// of its list, unless the connection is one it made to fail over.
	RebalanceClients bool
	// AuditNetworkProducers is the connector's auditNetworkProducers
	// (default false): the sends of network connections (a broker's
	// bridge) are checked against the producer audit, so that a message
	// a bridge forwards again after a failure is not stored twice.
	AuditNetworkProducers bool
	// Duplex runs the reverse bridge of a duplex network connection a
	// remote broker opens (duplex.go); nil runs none.
	Duplex DuplexFunc
	Logger *slog.Logger
}

// DefaultOptions are ActiveMQ 5.17's broker-side defaults.
func DefaultOptions() Options {
	return Options{
		Local:              wire.DefaultOptions(),
		Limits:             wire.DefaultLimits(),
		NegotiationTimeout: 10 * time.Second,
	}
}

// ParseOptions reads a tcp:// or nio:// connector's URI options. Options
// Wharf does not know are an error naming them.
func ParseOptions(q map[string]string) (Options, error) {
	o := DefaultOptions()
	for k, v := range q {
		var err error
		switch k {
		case "wireFormat.maxFrameSize":
			var n int64
			n, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err == nil && n <= 0 {
				err = fmt.Errorf("must be positive")
			}
			o.Local.MaxFrameSize, o.Limits.MaxFrameSize = n, n
		case "wireFormat.maxInactivityDuration":
			o.Local.MaxInactivityDuration, err = msOption(v)
		case "wireFormat.maxInactivityDurationInitalDelay":
			o.Local.MaxInactivityDurationInitalDelay, err = msOption(v)
			if _, set := q["transport.connectAttemptTimeout"]; !set {
				o.NegotiationTimeout = o.Local.MaxInactivityDurationInitalDelay
			}
		case "transport.connectAttemptTimeout":
			// ActiveMQ's InactivityMonitor closes a connection that sends
			// no WireFormatInfo within it; it wins over the initial delay.
			o.NegotiationTimeout, err = msOption(v)
		case "wireFormat.tightEncodingEnabled":
			o.Local.TightEncodingEnabled, err = strconv.ParseBool(v)
		case "wireFormat.cacheEnabled":
			o.Local.CacheEnabled, err = strconv.ParseBool(v)
		case "wireFormat.cacheSize":
			var n int64
			n, err = strconv.ParseInt(v, 10, 32)
			o.Local.CacheSize = int32(n)
		case "wireFormat.stackTraceEnabled":
			o.Local.StackTraceEnabled, err = strconv.ParseBool(v)
		case "wireFormat.tcpNoDelayEnabled":
			o.Local.TcpNoDelayEnabled, err = strconv.ParseBool(v)
		case "wireFormat.version":
			o.Local.Version, err = strconv.Atoi(v)
			if err == nil && (o.Local.Version < wire.MinVersion || o.Local.Version > wire.MaxVersion) {
				err = fmt.Errorf("versions %d to %d are supported", wire.MinVersion, wire.MaxVersion)
			}
		default:
			return o, fmt.Errorf("%w: %q is not an OpenWire transport option Wharf supports", ErrBadOption, k)
		}
		if err != nil {
			return o, fmt.Errorf("%w: %s=%q: %v", ErrBadOption, k, v, err)
		}
	}
	return o, nil
}

func msOption(v string) (time.Duration, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a duration in milliseconds")
	}
	return time.Duration(n) * time.Millisecond, nil
}

// Server makes OpenWire sessions on an engine.
type Server struct {
	e    *engine.Engine
	opts Options
	log  *slog.Logger
	info *wire.WireFormatInfo
	// refused rate-limits the "connection refused" warnings of all the
	// server's sessions (a login flood: at most 20 lines per 10 s, then
	// one with the count held back; STYLE.md §7).
	refused logthrottle.Burst
	// refusedSend likewise for "async send refused" (a producer sending
	// in a loop where it may not).
	refusedSend logthrottle.Burst
	// cluster is the updateClusterClients list, nil without it
	// (clusterclients.go).
	cluster *clusterClients
}

// NewServer returns an OpenWire server for e.
func NewServer(e *engine.Engine, o Options) (*Server, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.NegotiationTimeout <= 0 {
		o.NegotiationTimeout = 10 * time.Second
	}
	o.Local.ProviderName = "ActiveMQ"
	o.Local.PlatformDetails = "Wharf"
	info, err := wire.NewWireFormatInfo(o.Local)
	if err != nil {
		return nil, err
	}
	s := &Server{e: e, opts: o, log: o.Logger, info: info, refused: logthrottle.Burst{Every: 10 * time.Second, Max: 20},
		refusedSend: logthrottle.Burst{Every: 10 * time.Second, Max: 20}}
	if o.ConnectedBrokers != "" {
		// For the engine's lifetime: a connector is not stopped before
		// its broker.
		s.cluster = newClusterClients(o)
		e.WatchPeerBrokers(s.cluster.peer)
	}
	return s, nil
}

// Handler is the transport.HandlerFactory of the server.
func (s *Server) Handler(c transport.Conn) transport.Handler { return newSession(s, c) }
