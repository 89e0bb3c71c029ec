package config

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"wharf/engine/message"
)

// NetworkConnector is one <networkConnector>: a store-and-forward bridge
// from this broker to each of its static peers (package cluster runs it).
// Defaults are ActiveMQ 5.17's (NetworkBridgeConfiguration,
// SimpleDiscoveryAgent); docs/config.md lists what is refused.
type NetworkConnector struct {
	// Name is the connector's name (ActiveMQ's default "NC"); it is part
	// of the bridge's client id on the remote broker.
	Name string
	// URI is the discovery URI as written: static:(tcp://h:p,...)?opts,
	// masterslave:(tcp://m,tcp://s)?opts.
	URI string
	// Discovery is the URI's scheme: DiscoveryStatic,
	// DiscoveryMasterSlave or DiscoveryMulticast.
	Discovery string
	// Multicast is the multicast:// URI's group and address
	// (DiscoveryMulticast only).
	Multicast Multicast
	// Peers are the remote brokers' host:port: one bridge each with
	// static:, one bridge to the first that accepts with masterslave:.
	Peers []string
	// InitialReconnectDelay is the wait before the first reconnect
	// (1000 ms); MaxReconnectDelay caps the back-off (30000 ms).
	InitialReconnectDelay time.Duration
	MaxReconnectDelay     time.Duration
	// UseExponentialBackOff multiplies the delay by BackOffMultiplier after
	// each failure (true, 2).
	UseExponentialBackOff bool
	BackOffMultiplier     int64
	// MaxReconnectAttempts bounds the reconnects after a failure; 0 (the
	// default) never gives up.
	MaxReconnectAttempts int
	// Duplex also forwards the other way over the same connection: what
	// this broker's consumers ask of the peer (cluster/duplex.go).
	Duplex bool
	// ConduitSubscriptions folds the remote consumers of one destination
	// into one bridge consumer (true).
	ConduitSubscriptions bool
	// MessageTTL is how many brokers a message may cross, ConsumerTTL how
	// many a consumer's demand may (1 each; networkTTL sets both).
	MessageTTL  int
	ConsumerTTL int
	// DecreaseNetworkConsumerPriority gives bridge consumers priority
	// -5 minus the hops of the demand, so local consumers are preferred.
	DecreaseNetworkConsumerPriority bool
	// DynamicOnly: network durable subscriptions are activated only by
	// demand; DurableDestinations are not restored at start and the
	// peer's BrokerSubscriptionInfo is ignored (ActiveMQ's
	// DurableConduitBridge and DemandForwardingBridgeSupport).
	DynamicOnly bool
	// SuppressDuplicateQueueSubscriptions (false) and
	// SuppressDuplicateTopicSubscriptions (true): a remote consumer
	// whose demand this broker already serves through another bridge
	// (the same original consumer, by its networkConsumerPath) is not
	// served twice; the higher priority demand wins, the first on a tie
	// (DemandForwardingBridgeSupport.duplicateSuppressionIsRequired).
	SuppressDuplicateQueueSubscriptions bool
	SuppressDuplicateTopicSubscriptions bool
	// SyncDurableSubs: the bridge asks the peer (networkProperties in
	// its BrokerInfo) for its durable subscriptions on connection, and
	// serves those on DynamicallyIncluded topics as demand even while
	// their subscribers are offline; NC-DS_ subscriptions for which the
	// peer has none are destroyed. Needs conduitSubscriptions and not
	// dynamicOnly, as in ActiveMQ.
	SyncDurableSubs bool
	// DestinationFilter is the connector's destinationFilter: when set,
	// the consumer advisory topics the bridge subscribes to on the peer,
	// as written (comma-separated, wildcards allowed), with
	// "ActiveMQ.Advisory.Consumer." put in front unless the value starts
	// with it (NetworkBridgeConfiguration.getDestinationFilter), instead
	// of those made from DynamicallyIncluded. "" makes them.
	DestinationFilter string
	// UseVirtualDestSubs: the bridge also reads the peer's
	// ActiveMQ.Advisory.VirtualDestination.Consumer advisories (the peer's
	// useVirtualDestSubs), so a consumer on a queue a virtual destination
	// of the peer forwards to is demand for that virtual destination here.
	UseVirtualDestSubs bool
	// DurableDestinations are topics whose NC-DS_ network durable
	// subscription, when one exists here from an earlier run, is
	// re-attached at bridge start, before any demand
	// (DurableConduitBridge.setupStaticDestinations).
	DurableDestinations []message.Destination
	// StaticBridge: no advisory subscription at all; only the statically
	// included destinations are forwarded.
	StaticBridge bool
	// PrefetchSize is the bridge consumers' window (1000).
	PrefetchSize int
	// AlwaysSyncSend sends non-persistent messages synchronously too
	// (ActiveMQ 5.17's default: true). Either way the bridge pipelines.
	AlwaysSyncSend bool
	// BridgeTempDestinations (true) makes the peer's temporary
	// destinations exist here too, from its advisories, and serves its
	// consumers on them: a reply sent here to a JMSReplyTo temporary
	// queue of the peer's reaches it (cluster/temp.go).
	BridgeTempDestinations bool
	// UserName and Password authenticate the bridge to the remote broker.
	UserName, Password string
	// DynamicallyIncluded, Excluded and StaticallyIncluded are the
	// destination filters (wildcards allowed).
	DynamicallyIncluded []message.Destination
	Excluded            []message.Destination
	StaticallyIncluded  []message.Destination
	// Line is where the connector is declared (0 in YAML or Go).
	Line int
}

// The discovery schemes Wharf builds.
const (
	// DiscoveryStatic bridges to each listed peer (SimpleDiscoveryAgent).
	DiscoveryStatic = "static"
	// DiscoveryMulticast bridges to each broker heard advertising on
	// the multicast group (MulticastDiscoveryAgent).
	DiscoveryMulticast = "multicast"
	// DiscoveryMasterSlave bridges to whichever listed broker accepts,
	// in order, failing over to the others when it goes
	// (MasterSlaveDiscoveryAgent).
	DiscoveryMasterSlave = "masterslave"
)

// DefaultNetworkConnector returns ActiveMQ's defaults.
func DefaultNetworkConnector() NetworkConnector {
	return NetworkConnector{
		Name:                   "NC",             // NetworkConnector's default name
		InitialReconnectDelay:  time.Second,      // SimpleDiscoveryAgent.initialReconnectDelay
		MaxReconnectDelay:      30 * time.Second, // SimpleDiscoveryAgent.maxReconnectDelay
		UseExponentialBackOff:  true,
		BackOffMultiplier:      2,
		ConduitSubscriptions:   true,
		MessageTTL:             1,
		ConsumerTTL:            1,
		PrefetchSize:           1000,
		BridgeTempDestinations: true, // NetworkBridgeConfiguration.bridgeTempDestinations
		AlwaysSyncSend:         true, // NetworkBridgeConfiguration.alwaysSyncSend (5.17)
		// NetworkBridgeConfiguration's defaults.
		SuppressDuplicateTopicSubscriptions: true,
	}
}

// networkTTL records a networkTTL setting: it sets messageTTL and
// consumerTTL unless those are written too (NetworkBridgeConfiguration).
type networkTTL struct {
	ttl               val
	set, msgSet, cSet bool
}

func (l *loader) applyNetworkTTL(nc *NetworkConnector, t *networkTTL) {
	if !t.set {
		return
	}
	var n int
	l.setInt(&n, t.ttl)
	if !t.msgSet {
		nc.MessageTTL = n
	}
	if !t.cSet {
		nc.ConsumerTTL = n
	}
}

func (p *xmlParser) networkConnectors(e *xmlElem) {
	p.attrs(e, "network_connectors", nil)
	p.noText(e, "network_connectors")
	l, c := p.l, &p.l.cfg
	for _, k := range e.kids {
		if k.name != "networkConnector" {
			p.unsupported(k, "network_connectors", "")
			continue
		}
		i := len(c.NetworkConnectors)
		c.NetworkConnectors = append(c.NetworkConnectors, DefaultNetworkConnector())
		nc := &c.NetworkConnectors[i]
		nc.Line = k.line
		path := fmt.Sprintf("network_connectors[%d]", i)
		l.note(path, k.line, k.col, "<networkConnector>")
		p.noText(k, path)
		f := func(key string, set func(val)) func(val) { return at(path+"."+key, set) }
		var ttl networkTTL
		var duplex bool
		p.attrs(k, path, map[string]func(val){
			"name":                 f("name", func(v val) { l.setString(&nc.Name, v) }),
			"uri":                  f("uri", func(v val) { l.setString(&nc.URI, v) }),
			"duplex":               f("duplex", func(v val) { l.setBool(&duplex, v) }),
			"conduitSubscriptions": f("conduit_subscriptions", func(v val) { l.setBool(&nc.ConduitSubscriptions, v) }),
			"networkTTL": f("network_ttl", func(v val) {
				ttl.ttl, ttl.set = v, true
			}),
			"messageTTL": f("message_ttl", func(v val) {
				ttl.msgSet = true
				l.setInt(&nc.MessageTTL, v)
			}),
			"consumerTTL": f("consumer_ttl", func(v val) {
				ttl.cSet = true
				l.setInt(&nc.ConsumerTTL, v)
			}),
			"decreaseNetworkConsumerPriority": f("decrease_network_consumer_priority", func(v val) { l.setBool(&nc.DecreaseNetworkConsumerPriority, v) }),
			"dynamicOnly":                     f("dynamic_only", func(v val) { l.setBool(&nc.DynamicOnly, v) }),
			"staticBridge":                    f("static_bridge", func(v val) { l.setBool(&nc.StaticBridge, v) }),
			"prefetchSize":                    f("prefetch_size", func(v val) { l.setInt(&nc.PrefetchSize, v) }),
			"alwaysSyncSend":                  f("always_sync_send", func(v val) { l.setBool(&nc.AlwaysSyncSend, v) }),
			"bridgeTempDestinations":          f("bridge_temp_destinations", func(v val) { l.setBool(&nc.BridgeTempDestinations, v) }),
			"userName":                        f("user_name", func(v val) { l.setString(&nc.UserName, v) }),
			"password":                        f("password", func(v val) { l.setString(&nc.Password, v) }),
			"suppressDuplicateQueueSubscriptions": f("suppress_duplicate_queue_subscriptions", func(v val) {
				l.setBool(&nc.SuppressDuplicateQueueSubscriptions, v)
			}),
			"suppressDuplicateTopicSubscriptions": f("suppress_duplicate_topic_subscriptions", func(v val) {
				l.setBool(&nc.SuppressDuplicateTopicSubscriptions, v)
			}),
			"syncDurableSubs":    f("sync_durable_subs", func(v val) { l.setBool(&nc.SyncDurableSubs, v) }),
			"destinationFilter":  f("destination_filter", func(v val) { l.setString(&nc.DestinationFilter, v) }),
			"useVirtualDestSubs": f("use_virtual_dest_subs", func(v val) { l.setBool(&nc.UseVirtualDestSubs, v) }),
		})
		l.applyNetworkTTL(nc, &ttl)
		nc.Duplex = duplex
		once := map[string]bool{}
		for _, kk := range k.kids {
			var dst *[]message.Destination
			var key string
			switch kk.name {
			case "dynamicallyIncludedDestinations":
				dst, key = &nc.DynamicallyIncluded, "dynamically_included_destinations"
			case "excludedDestinations":
				dst, key = &nc.Excluded, "excluded_destinations"
			case "staticallyIncludedDestinations":
				dst, key = &nc.StaticallyIncluded, "statically_included_destinations"
			case "durableDestinations":
				dst, key = &nc.DurableDestinations, "durable_destinations"
			default:
				p.unsupported(kk, path, "")
				continue
			}
			if once[kk.name] {
				l.problemAt(path, kk.line, kk.col, fmt.Sprintf("<%s> appears more than once in <networkConnector>", kk.name))
				continue
			}
			once[kk.name] = true
			p.attrs(kk, path+"."+key, nil)
			p.noText(kk, path+"."+key)
			for _, d := range kk.kids {
				dp := fmt.Sprintf("%s.%s[%d]", path, key, len(*dst))
				typ := message.Queue
				switch d.name {
				case "queue":
				case "topic":
					typ = message.Topic
				default:
					p.unsupported(d, dp, "a destination list holds <queue> and <topic>")
					continue
				}
				l.note(dp, d.line, d.col, "<"+d.name+">")
				dest := message.Destination{Type: typ}
				p.attrs(d, dp, map[string]func(val){
					"physicalName": at(dp+"."+d.name, func(v val) { l.setString(&dest.Name, v) }),
				})
				p.noText(d, dp)
				for _, x := range d.kids {
					p.unsupported(x, dp, "")
				}
				*dst = append(*dst, dest)
			}
		}
	}
}

// yamlNetworkConnectors reads network_connectors: a list of mappings with
// the attributes' snake_case names.
func (p *yamlParser) networkConnectors(n *yaml.Node, path string) {
	l, c := p.l, &p.l.cfg
	p.list(n, path, func(el *yaml.Node, ep string) {
		nc := DefaultNetworkConnector()
		nc.Line = el.Line
		var ttl networkTTL
		var duplex bool
		dests := func(dst *[]message.Destination) handler {
			return func(n *yaml.Node, path string) {
				p.list(n, path, func(el *yaml.Node, dp string) {
					var d message.Destination
					p.mapping(el, dp, map[string]handler{
						"queue": p.dest(&d, message.Queue),
						"topic": p.dest(&d, message.Topic),
					})
					*dst = append(*dst, d)
				})
			}
		}
		p.mapping(el, ep, map[string]handler{
			"name":                  p.str(&nc.Name),
			"uri":                   p.str(&nc.URI),
			"duplex":                p.boolean(&duplex),
			"conduit_subscriptions": p.boolean(&nc.ConduitSubscriptions),
			"network_ttl": p.scalar(func(l *loader, v val) {
				ttl.ttl, ttl.set = v, true
			}),
			"message_ttl": func(n *yaml.Node, path string) {
				ttl.msgSet = true
				p.integer(&nc.MessageTTL)(n, path)
			},
			"consumer_ttl": func(n *yaml.Node, path string) {
				ttl.cSet = true
				p.integer(&nc.ConsumerTTL)(n, path)
			},
			"decrease_network_consumer_priority":     p.boolean(&nc.DecreaseNetworkConsumerPriority),
			"dynamic_only":                           p.boolean(&nc.DynamicOnly),
			"static_bridge":                          p.boolean(&nc.StaticBridge),
			"prefetch_size":                          p.integer(&nc.PrefetchSize),
			"always_sync_send":                       p.boolean(&nc.AlwaysSyncSend),
			"bridge_temp_destinations":               p.boolean(&nc.BridgeTempDestinations),
			"user_name":                              p.str(&nc.UserName),
			"password":                               p.str(&nc.Password),
			"dynamically_included_destinations":      dests(&nc.DynamicallyIncluded),
			"excluded_destinations":                  dests(&nc.Excluded),
			"statically_included_destinations":       dests(&nc.StaticallyIncluded),
			"durable_destinations":                   dests(&nc.DurableDestinations),
			"suppress_duplicate_queue_subscriptions": p.boolean(&nc.SuppressDuplicateQueueSubscriptions),
			"suppress_duplicate_topic_subscriptions": p.boolean(&nc.SuppressDuplicateTopicSubscriptions),
			"sync_durable_subs":                      p.boolean(&nc.SyncDurableSubs),
			"destination_filter":                     p.str(&nc.DestinationFilter),
			"use_virtual_dest_subs":                  p.boolean(&nc.UseVirtualDestSubs),
		})
		l.applyNetworkTTL(&nc, &ttl)
		nc.Duplex = duplex
		c.NetworkConnectors = append(c.NetworkConnectors, nc)
	})
}

// discoveryOptions are the static: and masterslave: URIs' options
// (SimpleDiscoveryAgent's setters, which MasterSlaveDiscoveryAgent
// inherits), by name.
var discoveryOptions = map[string]func(nc *NetworkConnector, s string) error{
	"initialReconnectDelay": func(nc *NetworkConnector, s string) error {
		return millisOption(&nc.InitialReconnectDelay, s)
	},
	"maxReconnectDelay": func(nc *NetworkConnector, s string) error {
		return millisOption(&nc.MaxReconnectDelay, s)
	},
	"useExponentialBackOff": func(nc *NetworkConnector, s string) error {
		b, ok := parseBool(s)
		if !ok {
			return fmt.Errorf(`%q is not a boolean (want "true" or "false")`, s)
		}
		nc.UseExponentialBackOff = b
		return nil
	},
	"backOffMultiplier": func(nc *NetworkConnector, s string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || n < 1 {
			return fmt.Errorf("%q is not a whole number of at least 1 (ActiveMQ's backOffMultiplier is a long)", s)
		}
		nc.BackOffMultiplier = n
		return nil
	},
	"maxReconnectAttempts": func(nc *NetworkConnector, s string) error {
		n, ok := parseInt(s)
		if !ok || n < 0 {
			return fmt.Errorf("%q is not a count (0 retries forever)", s)
		}
		nc.MaxReconnectAttempts = n
		return nil
	},
}

func millisOption(dst *time.Duration, s string) error {
	d, ok := parseMillis(s)
	if !ok || d < 0 {
		return fmt.Errorf("%q is not a number of milliseconds", s)
	}
	*dst = d
	return nil
}

// refusedDiscovery names the discovery schemes ActiveMQ has and Wharf
// does not build yet.
var refusedDiscovery = map[string]string{
	"rendezvous": "rendezvous (zeroconf) discovery is not supported by Wharf yet; use static:(tcp://host:port,...)",
	"zeroconf":   "zeroconf discovery is not supported by Wharf yet; use static:(tcp://host:port,...)",
}

// parseNetworkURI fills nc.Peers and the discovery options from nc.URI.
func parseNetworkURI(nc *NetworkConnector) error {
	u := strings.TrimSpace(nc.URI)
	scheme, rest, ok := strings.Cut(u, ":")
	if !ok {
		return fmt.Errorf("%q is not a discovery URI (want static:(tcp://host:port,...))", u)
	}
	if why, refused := refusedDiscovery[scheme]; refused {
		return fmt.Errorf("%s", why)
	}
	if scheme == DiscoveryMulticast {
		nc.Discovery = scheme
		var err error
		nc.Multicast, err = parseMulticast(u, func(name, v string) error {
			set, ok := discoveryOptions[name]
			if !ok {
				return fmt.Errorf("discovery option %s is not supported by Wharf yet (supported: group, initialReconnectDelay, maxReconnectDelay, useExponentialBackOff, backOffMultiplier, maxReconnectAttempts)", name)
			}
			if err := set(nc, v); err != nil {
				return fmt.Errorf("discovery option %s: %w", name, err)
			}
			return nil
		})
		return err
	}
	switch scheme {
	case DiscoveryStatic, DiscoveryMasterSlave:
		nc.Discovery = scheme
	default:
		return fmt.Errorf("discovery scheme %q is not supported by Wharf (want static:(tcp://host:port,...), masterslave:(tcp://master,tcp://slave) or multicast://default)", scheme)
	}
	var list, query string
	if strings.HasPrefix(rest, "(") {
		end := strings.LastIndex(rest, ")")
		if end < 0 {
			return fmt.Errorf("%q: unbalanced parentheses", u)
		}
		list, query = rest[1:end], rest[end+1:]
		if query != "" && !strings.HasPrefix(query, "?") {
			return fmt.Errorf("%q: unexpected %q after the peer list", u, query)
		}
		query = strings.TrimPrefix(query, "?")
	} else if scheme == DiscoveryMasterSlave {
		return fmt.Errorf("%q: want masterslave:(tcp://master:port,tcp://slave:port)", u)
	} else {
		// static:tcp://host:port (one peer; its options would be the
		// transport's, which Wharf's bridge does not take).
		list = rest
	}
	if strings.TrimSpace(list) == "" {
		return fmt.Errorf("%q names no peer", u)
	}
	for _, one := range strings.Split(list, ",") {
		one = strings.TrimSpace(one)
		pu, err := url.Parse(one)
		if err != nil {
			return fmt.Errorf("peer %q: %v", one, err)
		}
		switch pu.Scheme {
		case "tcp", "nio":
		default:
			return fmt.Errorf("peer %q: transport %q is not supported for network connectors by Wharf yet (want tcp://host:port)", one, pu.Scheme)
		}
		if pu.RawQuery != "" {
			return fmt.Errorf("peer %q: transport options (%s) are not supported for network connectors by Wharf yet", one, pu.RawQuery)
		}
		host, port, err := net.SplitHostPort(pu.Host)
		if err != nil || host == "" {
			return fmt.Errorf("peer %q: want tcp://host:port", one)
		}
		if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
			return fmt.Errorf("peer %q: port %q is not in 1..65535", one, port)
		}
		nc.Peers = append(nc.Peers, net.JoinHostPort(host, port))
	}
	if query != "" {
		q, err := url.ParseQuery(query)
		if err != nil {
			return fmt.Errorf("%q: options: %v", u, err)
		}
		for name, vs := range q {
			set, ok := discoveryOptions[name]
			if !ok {
				return fmt.Errorf("discovery option %s is not supported by Wharf yet (supported: initialReconnectDelay, maxReconnectDelay, useExponentialBackOff, backOffMultiplier, maxReconnectAttempts)", name)
			}
			if err := set(nc, vs[len(vs)-1]); err != nil {
				return fmt.Errorf("discovery option %s: %w", name, err)
			}
		}
	}
	return nil
}

// Multicast is a multicast:// discovery URI: the group name and the
// group's address (MulticastDiscoveryAgent).
type Multicast struct {
	// Group is the ?group= option ("default"): brokers hear only
	// advertisements of their own group.
	Group string
	// Addr is the multicast address and port; multicast://default is
	// 239.255.2.3:6155.
	Addr string
}

// The defaults of ActiveMQ's MulticastDiscoveryAgent.
const (
	MulticastDefaultGroup = "default"
	MulticastDefaultIP    = "239.255.2.3"
	MulticastDefaultPort  = 6155
)

// parseMulticast reads multicast://host[:port][?group=g&...]; other
// options go to opt (nil refuses them).
func parseMulticast(s string, opt func(name, v string) error) (Multicast, error) {
	m := Multicast{Group: MulticastDefaultGroup}
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return m, fmt.Errorf("%q: %v", s, err)
	}
	if u.Scheme != "multicast" || u.Host == "" || u.Path != "" {
		return m, fmt.Errorf("%q is not a multicast discovery URI (want multicast://default or multicast://239.255.2.3:6155)", s)
	}
	host, port := u.Hostname(), MulticastDefaultPort
	if host == "default" {
		host = MulticastDefaultIP
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return m, fmt.Errorf("%q: port %q is not in 1..65535", s, p)
		}
		port = n
	}
	if ip := net.ParseIP(host); ip == nil || ip.To4() == nil || !ip.IsMulticast() {
		return m, fmt.Errorf("%q: %s is not an IPv4 multicast address (224.0.0.0/4), nor default", s, host)
	}
	m.Addr = net.JoinHostPort(host, strconv.Itoa(port))
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return m, fmt.Errorf("%q: options: %v", s, err)
	}
	for name, vs := range q {
		v := vs[len(vs)-1]
		if name == "group" {
			if v == "" {
				return m, fmt.Errorf("%q: the group must not be empty", s)
			}
			m.Group = v
			continue
		}
		if opt == nil {
			return m, fmt.Errorf("%q: option %s is not supported by Wharf yet (supported: group)", s, name)
		}
		if err := opt(name, v); err != nil {
			return m, err
		}
	}
	return m, nil
}

// validateNetwork checks the network connectors: their URIs, TTLs,
// prefetch, and that two connectors to the same peer have distinct names
// (ActiveMQ's rule for several bridges between two brokers).
func (l *loader) validateNetwork() {
	c := &l.cfg
	names := map[string]int{}
	for i := range c.NetworkConnectors {
		nc := &c.NetworkConnectors[i]
		path := fmt.Sprintf("network_connectors[%d]", i)
		if nc.URI == "" {
			l.fail(path, "uri is required (static:(tcp://host:port,...))")
		} else if err := parseNetworkURI(nc); err != nil {
			l.fail(path+".uri", "%v", err)
		}
		if nc.Name == "" {
			l.fail(path+".name", "must not be empty")
		} else if j, dup := names[nc.Name]; dup {
			l.fail(path+".name", "%q is also the name of network connector %d: each connector needs a unique name", nc.Name, j)
		} else {
			names[nc.Name] = i
		}
		if nc.MessageTTL < 1 {
			l.fail(path+".message_ttl", "messageTTL (or networkTTL) %d must be at least 1", nc.MessageTTL)
		}
		if nc.ConsumerTTL < 1 {
			l.fail(path+".consumer_ttl", "consumerTTL (or networkTTL) %d must be at least 1", nc.ConsumerTTL)
		}
		if nc.PrefetchSize < 1 {
			// ActiveMQ refuses prefetchSize 0 for a bridge
			// (DemandForwardingBridgeSupport: "prefetchSize must be > 0").
			l.fail(path+".prefetch_size", "prefetchSize %d must be at least 1", nc.PrefetchSize)
		}
		if nc.MaxReconnectDelay < nc.InitialReconnectDelay {
			l.fail(path+".uri", "maxReconnectDelay (%v) is less than initialReconnectDelay (%v)", nc.MaxReconnectDelay, nc.InitialReconnectDelay)
		}
		for _, list := range []struct {
			key   string
			dests []message.Destination
		}{{"dynamically_included_destinations", nc.DynamicallyIncluded}, {"excluded_destinations", nc.Excluded}, {"statically_included_destinations", nc.StaticallyIncluded}, {"durable_destinations", nc.DurableDestinations}} {
			for j, d := range list.dests {
				dp := fmt.Sprintf("%s.%s[%d]", path, list.key, j)
				if d.Name == "" {
					l.fail(dp, "physicalName is required")
				} else if list.key == "durable_destinations" && !d.Type.IsTopic() {
					// Durable subscriptions are on topics (ActiveMQ's
					// NetworkConnector keeps only the topics of the list).
					l.fail(dp, "%s: durableDestinations lists topics (network durable subscriptions are on topics)", d)
				} else if list.key == "statically_included_destinations" && d.IsWildcard() {
					// The seed: wildcards only in excluded and dynamically
					// included destinations.
					l.fail(dp, "%s: wildcards are allowed only in excludedDestinations and dynamicallyIncludedDestinations", d)
				}
			}
		}
		if nc.StaticBridge && len(nc.StaticallyIncluded) == 0 {
			l.fail(path+".static_bridge", "a static bridge forwards only its staticallyIncludedDestinations, and there are none")
		}
	}
	for i := range c.Transports {
		t := &c.Transports[i]
		if t.DiscoveryURI == "" {
			continue
		}
		path := fmt.Sprintf("transport_connectors[%d].discovery_uri", i)
		m, err := parseMulticast(t.DiscoveryURI, nil)
		if err != nil {
			l.fail(path, "%v", err)
			continue
		}
		t.Discovery = m
	}
}
