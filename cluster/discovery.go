package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"wharf/engine"
	"wharf/engine/config"
)

// Multicast discovery, as ActiveMQ's MulticastDiscoveryAgent does it: a
// broker whose transport connector has a discoveryUri sends, every
// keepAliveInterval, one UDP datagram to the group's address,
//
//	<group>.ActiveMQ-4.alive.%<broker>%<service URI>
//
// and "dead." instead of "alive." once when it stops. ActiveMQ writes
// "localhost" as the broker name, and so does Wharf: nothing reads it. A
// <networkConnector uri="multicast://..."> listens on the group and runs
// one bridge per service it hears (not its own broker's), stopping it
// when the service says it is dead or has been silent for
// heartbeatMisses keep-alive intervals.
const (
	discoveryTypeSuffix = "ActiveMQ-4."
	discoveryAlive      = "alive."
	discoveryDead       = "dead."
	// keepAliveInterval is MulticastDiscoveryAgent's DEFAULT_IDLE_TIME.
	keepAliveInterval = 500 * time.Millisecond
	// heartbeatMisses is its HEARTBEAT_MISS_BEFORE_DEATH.
	heartbeatMisses = 10
)

// Advert is a transport connector this broker advertises: its URI and the
// multicast group of its discoveryUri.
type Advert struct {
	Service   string
	Multicast config.Multicast
}

// advertisement is the datagram announcing service alive or dead.
func advertisement(group, service string, alive bool) []byte {
	state := discoveryAlive
	if !alive {
		state = discoveryDead
	}
	return []byte(group + "." + discoveryTypeSuffix + state + "%localhost%" + service)
}

// parseAdvertisement reads a datagram of group; ok is false for another
// group's or a malformed one.
func parseAdvertisement(group string, b []byte) (service string, alive, ok bool) {
	s, found := strings.CutPrefix(string(b), group+"."+discoveryTypeSuffix)
	if !found {
		return "", false, false
	}
	switch {
	case strings.HasPrefix(s, discoveryAlive):
		s, alive = s[len(discoveryAlive):], true
	case strings.HasPrefix(s, discoveryDead):
		s = s[len(discoveryDead):]
	default:
		return "", false, false
	}
	// %<broker name>%<service>
	if !strings.HasPrefix(s, "%") {
		return "", false, false
	}
	_, service, found = strings.Cut(s[1:], "%")
	if !found || service == "" {
		return "", false, false
	}
	return service, alive, true
}

// advertise sends a's alive datagram every keepAliveInterval until ctx is
// done, then its dead one.
func advertise(ctx context.Context, a Advert, log *slog.Logger) {
	dst, err := net.ResolveUDPAddr("udp4", a.Multicast.Addr)
	if err != nil {
		log.Error("multicast discovery: cannot advertise", "service", a.Service, "addr", a.Multicast.Addr, "err", err)
		return
	}
	c, err := net.ListenUDP("udp4", nil)
	if err != nil {
		log.Error("multicast discovery: cannot advertise", "service", a.Service, "err", err)
		return
	}
	defer c.Close()
	log.Info("multicast discovery: advertising", "service", a.Service, "group", a.Multicast.Group, "addr", a.Multicast.Addr)
	reported := false
	t := time.NewTicker(keepAliveInterval)
	defer t.Stop()
	for {
		if _, err := c.WriteToUDP(advertisement(a.Multicast.Group, a.Service, true), dst); err != nil && !reported {
			// As ActiveMQ: said once, the next ones would say the same.
			reported = true
			log.Error("multicast discovery: failed to advertise (is there a multicast route?)", "service", a.Service, "addr", a.Multicast.Addr, "err", err)
		}
		select {
		case <-ctx.Done():
			c.WriteToUDP(advertisement(a.Multicast.Group, a.Service, false), dst)
			return
		case <-t.C:
		}
	}
}

// discovered is a service a multicast connector heard, with its bridge.
type discovered struct {
	last   time.Time
	cancel context.CancelFunc
	done   chan struct{}
}

// discover runs a multicast network connector: it listens on the group
// and keeps one bridge per live service that is not one of self.
func (n *Network) discover(ctx context.Context, e *engine.Engine, nc config.NetworkConnector, self map[string]bool, log *slog.Logger) {
	log = log.With("network_connector", nc.Name, "group", nc.Multicast.Group, "addr", nc.Multicast.Addr)
	ga, err := net.ResolveUDPAddr("udp4", nc.Multicast.Addr)
	if err != nil {
		log.Error("multicast discovery: bad group address", "err", err)
		return
	}
	conn, err := net.ListenMulticastUDP("udp4", nil, ga)
	if err != nil {
		log.Error("multicast discovery: cannot join the group", "err", err)
		return
	}
	defer conn.Close()
	log.Info("multicast discovery: listening")
	services := map[string]*discovered{}
	ignored := map[string]bool{} // services refused, said once each
	stop := func(s string, why string) {
		d := services[s]
		delete(services, s)
		d.cancel()
		<-d.done
		log.Info("multicast discovery: service gone, bridge stopped", "service", s, "why", why)
	}
	defer func() {
		for s := range services {
			stop(s, "network connector stopped")
		}
	}()
	buf := make([]byte, 8192) // MulticastDiscoveryAgent's BUFF_SIZE
	for ctx.Err() == nil {
		conn.SetReadDeadline(time.Now().Add(keepAliveInterval))
		k, _, err := conn.ReadFromUDP(buf)
		now := time.Now()
		if err != nil && !errors.Is(err, ctx.Err()) {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				log.Error("multicast discovery: read failed", "err", err)
				return
			}
		}
		if err == nil {
			if service, alive, ok := parseAdvertisement(nc.Multicast.Group, buf[:k]); ok && !self[service] {
				d, known := services[service]
				switch {
				case alive && known:
					d.last = now
				case alive:
					addr, err := serviceAddr(service)
					if err != nil {
						if !ignored[service] {
							ignored[service] = true
							log.Warn("multicast discovery: service ignored", "service", service, "err", err)
						}
						break
					}
					bctx, cancel := context.WithCancel(ctx)
					d = &discovered{last: now, cancel: cancel, done: make(chan struct{})}
					services[service] = d
					log.Info("multicast discovery: service found, starting a bridge", "service", service)
					b := newBridge(e, nc, []string{addr}, log.With("remote", addr))
					n.add(b)
					go func() {
						defer close(d.done)
						b.run(bctx)
					}()
				case known:
					stop(service, "advertised dead")
				}
			}
		}
		for s, d := range services {
			if now.Sub(d.last) > heartbeatMisses*keepAliveInterval {
				stop(s, "no advertisement for "+(heartbeatMisses*keepAliveInterval).String())
			}
		}
	}
}

// serviceAddr is the host:port of an advertised tcp:// (or nio://)
// service.
func serviceAddr(service string) (string, error) {
	u, err := url.Parse(service)
	if err != nil {
		return "", err
	}
	if u.Scheme != "tcp" && u.Scheme != "nio" {
		return "", fmt.Errorf("transport %q is not supported for network connectors by Wharf yet (want tcp://host:port)", u.Scheme)
	}
	if _, _, err := net.SplitHostPort(u.Host); err != nil {
		return "", fmt.Errorf("want tcp://host:port: %v", err)
	}
	return u.Host, nil
}

// selfServices are the services this broker advertises, which its own
// multicast connectors skip (ActiveMQ's agent skips its selfService).
func selfServices(adverts []Advert) map[string]bool {
	m := map[string]bool{}
	for _, a := range adverts {
		m[a.Service] = true
	}
	return m
}
