// Package broker assembles a running broker from a validated config: the
// store, the engine and one listener per transport connector. It is written
// against factories it is handed (a listener factory per URI scheme, a
// store factory per persistence kind), so it names no protocol or storage
// package; cmd/wharf and the test harness hand it the concrete ones.
package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"strconv"

	"wharf/engine"
	"wharf/engine/config"
	"wharf/engine/message"
)

// Listener is a running transport connector.
type Listener interface {
	Addr() net.Addr
	Close() error
}

// ListenerFactory starts a connector for a transport: it binds addr
// (host:port, port 0 allowed) and serves its protocol on e. t carries the
// connector's name, scheme and URI options; options it does not know are an
// error naming them.
type ListenerFactory func(e *engine.Engine, t config.Transport, addr string, log *slog.Logger) (Listener, error)

// StoreFactory opens the store a config names.
type StoreFactory func(c *config.Config, log *slog.Logger) (engine.Store, error)

// Factories are the concrete parts a broker is built from.
type Factories struct {
	// Listeners by URI scheme ("stomp", "stomp+nio", "tcp", ...).
	Listeners map[string]ListenerFactory
	// Stores by config.Persistence.Kind ("kahaDB", "memory").
	Stores map[string]StoreFactory
}

// Options adjust how a config is run.
type Options struct {
	// Factories are required.
	Factories Factories
	Logger    *slog.Logger
	// AnyPort binds every connector to port 0 on its host (tests).
	AnyPort bool
	// Engine tweaks engine options before the engine starts (tests inject a
	// clock); may be nil.
	Engine func(*engine.Options)
}

// Broker is a running broker.
type Broker struct {
	cfg       *config.Config
	log       *slog.Logger
	store     engine.Store
	e         *engine.Engine
	listeners []named
}

type named struct {
	name string
	l    Listener
}

// ErrUnsupported is wrapped when a config asks for a transport or store
// that this build does not have.
var ErrUnsupported = errors.New("broker: not supported")

// Start runs cfg. On error everything started so far is stopped.
func Start(cfg *config.Config, o Options) (*Broker, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Broker{cfg: cfg, log: log}
	if err := b.start(o); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

func (b *Broker) start(o Options) (err error) {
	cfg, log := b.cfg, b.log
	kind := cfg.Persistence.Kind
	if !cfg.Persistent {
		kind = config.KindMemory
	}
	sf := o.Factories.Stores[kind]
	if sf == nil {
		return fmt.Errorf("%w: persistence adapter %q", ErrUnsupported, kind)
	}
	if b.store, err = sf(cfg, log); err != nil {
		return fmt.Errorf("open %s store: %w", kind, err)
	}
	warnNotHonoured(cfg, log)
	eo := engine.Options{
		BrokerName: cfg.BrokerName,
		Shards:     cfg.Shards,
		Store:      b.store,
		PolicyFor:  func(d message.Destination) engine.Policy { return Policy(cfg.PolicyFor(d)) },
		Logger:     log,
	}
	if o.Engine != nil {
		o.Engine(&eo)
	}
	if b.e, err = engine.New(eo); err != nil {
		return err
	}
	for _, t := range cfg.Transports {
		lf := o.Factories.Listeners[t.Scheme]
		if lf == nil {
			return fmt.Errorf("%w: transport connector %q (%s): Wharf does not serve %q yet", ErrUnsupported, t.Name, t.URI, t.Scheme)
		}
		port := t.Port
		if o.AnyPort {
			port = 0
		}
		addr := net.JoinHostPort(t.Host, strconv.Itoa(port))
		l, err := lf(b.e, t, addr, log.With("connector", t.Name))
		if err != nil {
			return fmt.Errorf("transport connector %q (%s): %w", t.Name, t.URI, err)
		}
		b.listeners = append(b.listeners, named{t.Name, l})
		log.Info("listening", "connector", t.Name, "scheme", t.Scheme, "addr", l.Addr().String())
	}
	log.Info("broker started", "broker", cfg.BrokerName, "id", b.e.BrokerID(), "store", kind)
	return nil
}

// Engine is the broker's engine.
func (b *Broker) Engine() *engine.Engine { return b.e }

// Store is the broker's store.
func (b *Broker) Store() engine.Store { return b.store }

// Config is the configuration the broker runs.
func (b *Broker) Config() *config.Config { return b.cfg }

// Addr returns the bound address of the named transport connector, or nil.
func (b *Broker) Addr(name string) net.Addr {
	for _, n := range b.listeners {
		if n.name == name {
			return n.l.Addr()
		}
	}
	return nil
}

// Addrs returns every connector's bound address by name.
func (b *Broker) Addrs() map[string]net.Addr {
	m := map[string]net.Addr{}
	for _, n := range b.listeners {
		m[n.name] = n.l.Addr()
	}
	return m
}

// Close stops the listeners (closing every connection), then the engine,
// then the store.
func (b *Broker) Close() error {
	var errs []error
	for i := len(b.listeners) - 1; i >= 0; i-- {
		errs = append(errs, b.listeners[i].l.Close())
	}
	b.listeners = nil
	if b.e != nil {
		errs = append(errs, b.e.Close())
		b.e = nil
	}
	if b.store != nil {
		errs = append(errs, b.store.Close())
		b.store = nil
	}
	err := errors.Join(errs...)
	if err == nil {
		b.log.Info("broker stopped")
	}
	return err
}

// Policy converts a policy entry to the engine's form.
func Policy(p *config.PolicyEntry) engine.Policy {
	ep := engine.DefaultPolicy()
	if p == nil {
		return ep
	}
	ep.ExpireMessagesPeriod = p.ExpireMessagesPeriod
	if dl := p.DeadLetter; dl != nil {
		switch dl.Kind {
		case config.DLQIndividual:
			ep.DeadLetter.Kind = engine.IndividualDLQ
		case config.DLQDiscarding:
			ep.DeadLetter.Kind = engine.DiscardDLQ
		default:
			ep.DeadLetter.Kind = engine.SharedDLQ
		}
		if dl.DeadLetterQueue != "" {
			ep.DeadLetter.Queue = dl.DeadLetterQueue
		}
		ep.DeadLetter.QueuePrefix, ep.DeadLetter.QueueSuffix = dl.QueuePrefix, dl.QueueSuffix
		ep.DeadLetter.TopicPrefix, ep.DeadLetter.TopicSuffix = dl.TopicPrefix, dl.TopicSuffix
		ep.DeadLetter.UseQueueForQueueMessages = dl.UseQueueForQueueMessages
		ep.DeadLetter.UseQueueForTopicMessages = dl.UseQueueForTopicMessages
		ep.DeadLetter.ProcessExpired = dl.ProcessExpired
		ep.DeadLetter.ProcessNonPersistent = dl.ProcessNonPersistent
		ep.DeadLetter.Expiration = dl.Expiration.Milliseconds()
	}
	return ep
}

// warnNotHonoured logs every setting the config parser accepts but this
// engine does not act on yet (usage limits and flow control are the
// destination-semantics issue's), so that nothing configured is ignored
// without a word.
func warnNotHonoured(cfg *config.Config, log *slog.Logger) {
	def := config.DefaultPolicyEntry()
	var names []string
	check := func(p *config.PolicyEntry) {
		if p == nil {
			return
		}
		if p.MemoryLimit != def.MemoryLimit {
			names = append(names, "memoryLimit")
		}
		if p.ProducerFlowControl != def.ProducerFlowControl {
			names = append(names, "producerFlowControl")
		}
		if p.PendingMessageLimit != def.PendingMessageLimit {
			names = append(names, "pendingMessageLimitStrategy")
		}
		if p.SendAdvisoryIfNoConsumers != def.SendAdvisoryIfNoConsumers {
			names = append(names, "sendAdvisoryIfNoConsumers")
		}
		if p.QueuePrefetch != def.QueuePrefetch || p.TopicPrefetch != def.TopicPrefetch ||
			p.DurableTopicPrefetch != def.DurableTopicPrefetch || p.QueueBrowserPrefetch != def.QueueBrowserPrefetch {
			names = append(names, "queuePrefetch/topicPrefetch/durableTopicPrefetch/queueBrowserPrefetch")
		}
		if p.AllConsumersExclusiveByDefault != def.AllConsumersExclusiveByDefault {
			names = append(names, "allConsumersExclusiveByDefault")
		}
		if p.CursorMemoryHighWaterMark != def.CursorMemoryHighWaterMark || p.StoreUsageHighWaterMark != def.StoreUsageHighWaterMark {
			names = append(names, "cursorMemoryHighWaterMark/storeUsageHighWaterMark")
		}
		if p.DeadLetter != nil && (p.DeadLetter.DestinationPerDurableSubscriber || !p.DeadLetter.EnableAudit) {
			names = append(names, "deadLetterStrategy destinationPerDurableSubscriber/enableAudit")
		}
	}
	for i := range cfg.Policies {
		check(&cfg.Policies[i])
	}
	check(cfg.DefaultPolicy)
	if cfg.SystemUsage.SendFailIfNoSpace || cfg.SystemUsage.SendFailIfNoSpaceAfterTimeout > 0 {
		names = append(names, "systemUsage sendFailIfNoSpace")
	}
	seen := map[string]bool{}
	sort.Strings(names)
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			log.Warn("setting accepted but not enforced yet", "setting", n)
		}
	}
	log.Info("usage limits recorded; producer flow control is not enforced yet",
		"memory_limit", cfg.SystemUsage.MemoryLimit, "store_limit", cfg.SystemUsage.StoreLimit, "temp_limit", cfg.SystemUsage.TempLimit)
}
