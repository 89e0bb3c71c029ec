// Package broker assembles a running broker from a validated config: the
// store, the engine and one listener per transport connector. It is written
// against factories it is handed (a listener factory per URI scheme, a
// store factory per persistence kind), so it names no protocol or storage
// package; cmd/wharf and the test harness hand it the concrete ones.
package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"wharf/engine"
	"wharf/engine/config"
	"wharf/engine/message"
	"wharf/engine/selector"
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

// StoreFactory opens the store a config names. It gives up with an error
// wrapping ctx.Err() once ctx is done (a store waiting for its directory
// lock, for one).
type StoreFactory func(ctx context.Context, c *config.Config, log *slog.Logger) (engine.Store, error)

// TempFactory opens the temp store that non-persistent messages spill to
// (engine.TempSpace) in dir, creating dir and removing what an earlier run
// left there.
type TempFactory func(dir string, log *slog.Logger) (engine.TempSpace, error)

// Factories are the concrete parts a broker is built from.
type Factories struct {
	// Listeners by URI scheme ("stomp", "stomp+nio", "tcp", ...).
	Listeners map[string]ListenerFactory
	// Stores by config.Persistence.Kind ("kahaDB", "memory").
	Stores map[string]StoreFactory
	// Temp opens the temp store; nil spills nothing (non-persistent
	// messages then stay in memory and memory limits block producers).
	Temp TempFactory
	// Security builds the authentication and authorization plugins of
	// cfg.Security; nil (or a config that configures none) lets every
	// client do everything (engine.AllowAll).
	Security SecurityFactory
	// Network starts cfg.NetworkConnectors (package cluster); nil refuses
	// a config that has any.
	Network NetworkFactory
}

// Service is a running part of a broker that Close stops.
type Service interface {
	Close() error
}

// Advertised is a listening transport connector with a discoveryUri: the
// URI the broker advertises on its multicast group (package cluster).
type Advertised struct {
	URI       string
	Discovery config.Multicast
}

// NetworkFactory starts the network connectors of cfg on e, and the
// advertisements of the connectors with a discoveryUri, once the
// transport connectors listen. Their bridges connect in the background.
type NetworkFactory func(e *engine.Engine, cfg *config.Config, adverts []Advertised, log *slog.Logger) (Service, error)

// Security is a running security plugin: the engine's two hooks, and
// Close to stop what it runs (the JAAS plugin's file reload).
type Security interface {
	engine.Authenticator
	engine.Authorizer
	Close() error
}

// SecurityFactory builds the security plugin for cfg.Security.
type SecurityFactory func(cfg *config.Config, log *slog.Logger) (Security, error)

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
	// Version is logged when the broker has started; may be empty.
	Version string
	// Started, when set, is called with the running engine just before
	// "broker started" is logged (the web server's readiness), so that
	// whoever waits for that line finds everything it announces in place.
	Started func(*engine.Engine)
}

// Broker is a running broker.
type Broker struct {
	cfg       *config.Config
	log       *slog.Logger
	store     engine.Store
	e         *engine.Engine
	security  Security
	listeners []named
	network   Service
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
	return StartContext(context.Background(), cfg, o)
}

// StartContext is Start that gives up once ctx is done, in every phase:
// while the store waits for its directory lock, while it recovers (a
// journal replay), and between connectors. What was started is stopped and
// the error wraps ctx.Err(). ctx bounds only the start: cancelling it
// later does nothing.
func StartContext(ctx context.Context, cfg *config.Config, o Options) (*Broker, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Broker{cfg: cfg, log: log}
	if err := b.start(ctx, o); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

func (b *Broker) start(ctx context.Context, o Options) (err error) {
	cfg, log := b.cfg, b.log
	kind := cfg.Persistence.Kind
	if !cfg.Persistent {
		kind = config.KindMemory
	}
	sf := o.Factories.Stores[kind]
	if sf == nil {
		return fmt.Errorf("%w: persistence adapter %q", ErrUnsupported, kind)
	}
	// ActiveMQ's start-up lines (BrokerService.start), in its words: a
	// long recovery comes between these two and "broker started".
	starting := []any{"broker", cfg.BrokerName}
	if o.Version != "" {
		starting = append(starting, "version", o.Version)
	}
	log.Info("broker is starting", starting...)
	adapter := persistenceAdapter(cfg, kind)
	log.Info("Using Persistence Adapter", "adapter", adapter)
	// Not straight into b.store: a failed factory's typed nil (a nil
	// *kahadb.Store) would be a non-nil engine.Store for Close.
	st, err := sf(ctx, cfg, log)
	if err != nil {
		return fmt.Errorf("open %s store: %w", kind, err)
	}
	b.store = st
	warnNotHonoured(cfg, log)
	composites, err := composites(cfg)
	if err != nil {
		return err
	}
	eo := engine.Options{
		BrokerName:                           cfg.BrokerName,
		Shards:                               cfg.Shards,
		Store:                                b.store,
		ConcurrentStoreAndDispatchQueues:     concurrentStoreAndDispatch(cfg, kind),
		PolicyFor:                            func(d message.Destination) engine.Policy { return Policy(cfg.PolicyFor(d)) },
		Logger:                               log,
		Limits:                               limits(cfg, log),
		OfflineDurableSubscriberTimeout:      cfg.OfflineDurableSubscriberTimeout,
		OfflineDurableSubscriberTaskSchedule: cfg.OfflineDurableSubscriberTaskSchedule,
		DisableAdvisories:                    !cfg.AdvisorySupport,
		SchedulerSupport:                     cfg.SchedulerSupport,
		DisableStatistics:                    !cfg.EnableStatistics,
		CompositeFor:                         composites,
		UseVirtualDestSubs:                   cfg.UseVirtualDestSubs,
		UseVirtualDestSubsOnCreation:         cfg.UseVirtualDestSubsOnCreation,
		CompositesForwardingTo:               compositesForwardingTo(cfg),
	}
	if err := b.startSecurity(o.Factories.Security, &eo); err != nil {
		return err
	}
	if cfg.UseVirtualTopics || cfg.InterceptorsConfigured {
		for _, vt := range cfg.VirtualTopics {
			eo.VirtualTopics = append(eo.VirtualTopics, engine.VirtualTopic{
				Name: vt.Name, Prefix: vt.Prefix, Postfix: vt.Postfix, SelectorAware: vt.SelectorAware,
			})
		}
	}
	tempDir := ""
	if tf := o.Factories.Temp; tf != nil {
		// persistent="false" brokers spill too, as ActiveMQ's do to
		// tmp_storage.
		tempDir = cfg.TmpDataDirectory
		if tempDir == "" {
			tempDir = filepath.Join(cfg.DataDirectory, cfg.BrokerName, "tmp_storage")
		}
		if eo.Temp, err = tf(tempDir, log); err != nil {
			return fmt.Errorf("open temp store %s: %w", tempDir, err)
		}
		log.Info("PListStore started", "store", "PListStore:["+tempDir+"]")
	}
	if o.Engine != nil {
		o.Engine(&eo)
	}
	// Recovery: the shards open their stores (a KahaDB journal replay)
	// and rebuild their destinations. Timed for the start-up summary with
	// the wall clock, as an operator reads it.
	recoveryStart := time.Now()
	if b.e, err = engine.NewContext(ctx, eo); err != nil {
		return err
	}
	recoveryTook := time.Since(recoveryStart)
	u := b.e.Usage()
	if dir := storeDir(cfg, kind); dir != "" {
		warnUsageLimit(log, "Store", dir, u.StoreLimit, u.StoreUsed)
	}
	if tempDir != "" {
		warnUsageLimit(log, "Temporary Store", tempDir, u.TempLimit, u.TempUsed)
	}
	var connectors []string
	var adverts []Advertised
	for _, t := range cfg.Transports {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("start transport connector %q: %w", t.Name, err)
		}
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
		uri := t.Scheme + "://" + l.Addr().String()
		connectors = append(connectors, t.Name+"="+uri)
		if t.DiscoveryURI != "" {
			adverts = append(adverts, Advertised{URI: publishable(t.Scheme, l.Addr()), Discovery: t.Discovery})
		}
		// TransportServerThreadSupport's and TransportConnector's lines.
		log.Info("Listening for connections at", "connector", t.Name, "scheme", t.Scheme, "addr", l.Addr().String(), "uri", uri)
		log.Info("Connector started", "connector", t.Name)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("broker start: %w", err)
	}
	if len(cfg.NetworkConnectors) > 0 || len(adverts) > 0 {
		nf := o.Factories.Network
		if nf == nil {
			return fmt.Errorf("%w: network connectors", ErrUnsupported)
		}
		n, err := nf(b.e, cfg, adverts, log)
		if err != nil {
			return fmt.Errorf("network connectors: %w", err)
		}
		b.network = n
	}
	if open := b.openListeners(); len(open) > 0 && cfg.Security.Authentication == nil {
		// Every start, so that a trusted-network broker is never silent
		// about it (config.Config.TrustedNetwork).
		log.Warn("trusted network: listening on non-loopback addresses without authentication; anyone who can reach these ports can use the broker",
			"listeners", open)
	}
	attrs := []any{"broker", cfg.BrokerName, "id", b.e.BrokerID()}
	if o.Version != "" {
		attrs = append(attrs, "version", o.Version)
	}
	attrs = append(attrs, "shards", b.e.Shards(), "data_dir", cfg.DataDirectory, "store", kind)
	if dir := storeDir(cfg, kind); dir != "" {
		attrs = append(attrs, "store_dir", dir)
	}
	// The start-up summary: every connector, the store and what its
	// recovery found, on the line operators and scripts wait for.
	r := b.e.Recovered()
	attrs = append(attrs, "connectors", connectors, "adapter", adapter,
		"messages_recovered", r.Messages, "destinations", r.Destinations, "durable_subs", r.DurableSubs,
		"prepared_xa_transactions", r.PreparedTransactions, "scheduled_jobs", r.ScheduledJobs,
		"recovery_ms", recoveryTook.Milliseconds())
	if o.Started != nil {
		o.Started(b.e)
	}
	log.Info("broker started", attrs...)
	return nil
}

// storeDir is the directory of a KahaDB or mKahaDB store, "" for others.
func storeDir(cfg *config.Config, kind string) string {
	switch kind {
	case config.KindKahaDB:
		return cfg.Persistence.KahaDB.Directory
	case config.KindMKahaDB:
		return cfg.Persistence.MKahaDB.Directory
	case config.KindLSM:
		return cfg.Persistence.LSM.Directory
	}
	return ""
}

// persistenceAdapter names the store as ActiveMQ's adapters name
// themselves (their toString, which "Using Persistence Adapter" prints).
func persistenceAdapter(cfg *config.Config, kind string) string {
	switch kind {
	case config.KindKahaDB:
		return "KahaDBPersistenceAdapter[" + absPath(cfg.Persistence.KahaDB.Directory) + "]"
	case config.KindMKahaDB:
		return "MultiKahaDBPersistenceAdapter[" + absPath(cfg.Persistence.MKahaDB.Directory) + "]"
	case config.KindLSM:
		return "WharfLSMPersistenceAdapter[" + absPath(cfg.Persistence.LSM.Directory) + "]"
	case config.KindJDBC:
		return "JDBCPersistenceAdapter(" + cfg.Persistence.JDBC.Redacted() + ")"
	case config.KindMemory:
		return "MemoryPersistenceAdapter"
	}
	return kind
}

func absPath(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}

// openListeners names the listeners on non-loopback addresses as
// "name=addr" (the bound address). Validation lets them through only with
// TrustedNetwork.
func (b *Broker) openListeners() []string {
	var open []string
	for i, t := range b.cfg.Transports {
		if !t.Loopback() && i < len(b.listeners) {
			open = append(open, t.Name+"="+b.listeners[i].l.Addr().String())
		}
	}
	return open
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

// OpenConnections returns, by connector name, the connections open on
// each connector that counts them (the TCP and TLS ones: accepted and not
// yet closed, whether or not their handshake finished). Churn and
// slowloris tests wait on it to know the broker has closed every socket.
// Safe from any goroutine.
func (b *Broker) OpenConnections() map[string]int {
	m := map[string]int{}
	for _, n := range b.listeners {
		if c, ok := n.l.(interface{ Conns() int }); ok {
			m[n.name] = c.Conns()
		}
	}
	return m
}

// Close stops the listeners (closing every connection), then the engine,
// then the store.
func (b *Broker) Close() error {
	var errs []error
	if b.network != nil {
		// Bridges first: what they hold goes back to the queues while
		// the engine still runs.
		errs = append(errs, b.network.Close())
		b.network = nil
	}
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
	if b.security != nil {
		errs = append(errs, b.security.Close())
		b.security = nil
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
	ep.MaxPageSize = p.MaxPageSize
	ep.PrioritizedMessages = p.PrioritizedMessages
	ep.ReplayWhenNoConsumers, ep.ReplayDelay = p.ReplayWhenNoConsumers, p.ReplayDelay
	ep.QueuePrefetch, ep.TopicPrefetch = p.QueuePrefetch, p.TopicPrefetch
	ep.DurableTopicPrefetch, ep.QueueBrowserPrefetch = p.DurableTopicPrefetch, p.QueueBrowserPrefetch
	ep.PendingMessageLimit = p.PendingMessageLimit
	ep.MemoryLimit = p.MemoryLimit
	ep.CursorMemoryHighWaterMark = p.CursorMemoryHighWaterMark
	ep.VMCursor = p.PendingQueuePolicy == "vm"
	ep.ProducerFlowControl = p.ProducerFlowControl
	ep.EnableAudit, ep.MaxAuditDepth, ep.MaxProducersToAudit = p.EnableAudit, p.MaxAuditDepth, p.MaxProducersToAudit
	ep.BlockedProducerWarningInterval = p.BlockedProducerWarningInterval
	ep.AdvisoryForConsumed, ep.AdvisoryForDelivery = p.AdvisoryForConsumed, p.AdvisoryForDelivery
	ep.AdvisoryWhenFull, ep.AdvisoryForSlowConsumers = p.AdvisoryWhenFull, p.AdvisoryForSlowConsumers
	ep.AdvisoryForFastProducers = p.AdvisoryForFastProducers
	ep.AdvisoryForDiscardingMessages = p.AdvisoryForDiscardingMessages
	ep.SendAdvisoryIfNoConsumers = p.SendAdvisoryIfNoConsumers
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

// concurrentStoreAndDispatch is the store's concurrentStoreAndDispatchQueues:
// for mKahaDB, on when any child has it (the engine applies it per batch,
// not per child).
func concurrentStoreAndDispatch(cfg *config.Config, kind string) bool {
	switch kind {
	case config.KindKahaDB:
		return cfg.Persistence.KahaDB.ConcurrentStoreAndDispatchQueues
	case config.KindMKahaDB:
		for _, f := range cfg.Persistence.MKahaDB.Filters {
			if f.KahaDB.ConcurrentStoreAndDispatchQueues {
				return true
			}
		}
	}
	return false
}

// startSecurity builds the security plugin the config asks for and hands
// its hooks to the engine. A config with <plugins> security but a build
// without a security factory is refused: running it open would be the
// opposite of what the operator asked for.
func (b *Broker) startSecurity(sf SecurityFactory, eo *engine.Options) error {
	sec := b.cfg.Security
	configured := sec.Authentication != nil || sec.Authorization != nil
	if !configured {
		// engine.AllowAll: nothing to build, and the engine then skips
		// authorization altogether.
		b.logOpen()
		return nil
	}
	if sf == nil {
		return fmt.Errorf("%w: <plugins> security (this build has no security package)", ErrUnsupported)
	}
	s, err := sf(b.cfg, b.log.With("plugin", "security"))
	if err != nil {
		return fmt.Errorf("security: %w", err)
	}
	b.security = s
	eo.Authenticator, eo.Authorizer = s, s
	if sec.Authentication == nil {
		// Authorization alone: the plugin has said that it refuses every
		// operation; connectors stay on loopback all the same.
		b.log.Info("no authentication configured: connectors listen on loopback only")
	} else {
		b.log.Info("authentication configured", "plugin", sec.Authentication.Kind, "authorization", sec.Authorization != nil)
	}
	return nil
}

// logOpen says at start-up that no authentication is configured, and what
// keeps the broker safe meanwhile (secure by default, STYLE.md §8).
func (b *Broker) logOpen() {
	if b.cfg.TrustedNetwork {
		b.log.Warn("no authentication configured and the network is declared trusted: every client that can reach a connector may connect and do anything")
		return
	}
	b.log.Info("no authentication configured: every client may connect and do anything, so connectors listen on loopback only; add an authentication plugin to <plugins> to listen elsewhere")
}

// warnNotHonoured logs every setting the config parser accepts but this
// engine does not act on yet, so that nothing configured is ignored without
// a word.
func warnNotHonoured(cfg *config.Config, log *slog.Logger) {
	def := config.DefaultPolicyEntry()
	var names []string
	check := func(p *config.PolicyEntry) {
		if p == nil {
			return
		}
		if p.AllConsumersExclusiveByDefault != def.AllConsumersExclusiveByDefault {
			names = append(names, "allConsumersExclusiveByDefault")
		}
		if p.StoreUsageHighWaterMark != def.StoreUsageHighWaterMark {
			names = append(names, "storeUsageHighWaterMark")
		}
		if p.GCInactiveDestinations {
			names = append(names, "gcInactiveDestinations")
		}
		if p.PersistJMSRedelivered {
			names = append(names, "persistJMSRedelivered")
		}
		if p.DeadLetter != nil && (p.DeadLetter.DestinationPerDurableSubscriber || !p.DeadLetter.EnableAudit) {
			names = append(names, "deadLetterStrategy destinationPerDurableSubscriber/enableAudit")
		}
	}
	for i := range cfg.Policies {
		check(&cfg.Policies[i])
	}
	check(cfg.DefaultPolicy)
	// KahaDB attributes about ActiveMQ's page file (db.data), which Wharf
	// does not have (its index is in memory, checkpointed to its own
	// file), and about writing that Wharf always does one way.
	defKaha := config.Default().Persistence.KahaDB
	checkKaha := func(k *config.KahaDB) {
		if k.IndexCacheSize != defKaha.IndexCacheSize {
			names = append(names, "kahaDB indexCacheSize")
		}
		if k.IndexWriteBatchSize != defKaha.IndexWriteBatchSize {
			names = append(names, "kahaDB indexWriteBatchSize")
		}
		if k.JournalMaxWriteBatchSize != defKaha.JournalMaxWriteBatchSize {
			names = append(names, "kahaDB journalMaxWriteBatchSize")
		}
		if k.ConcurrentStoreAndDispatchTopics {
			names = append(names, "kahaDB concurrentStoreAndDispatchTopics")
		}
		if !k.ChecksumJournalFiles {
			names = append(names, "kahaDB checksumJournalFiles=false")
		}
	}
	switch cfg.Persistence.Kind {
	case config.KindKahaDB:
		checkKaha(&cfg.Persistence.KahaDB)
	case config.KindMKahaDB:
		for i := range cfg.Persistence.MKahaDB.Filters {
			checkKaha(&cfg.Persistence.MKahaDB.Filters[i].KahaDB)
		}
	}
	for _, vt := range cfg.VirtualTopics {
		if vt.SelectorAware || vt.Local || vt.ConcurrentSend || vt.TransactedSend || vt.DropOnResourceLimit {
			names = append(names, "virtualTopic selectorAware/local/concurrentSend/transactedSend/dropOnResourceLimit")
		}
	}
	seen := map[string]bool{}
	sort.Strings(names)
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			log.Warn("setting accepted but not enforced yet", "setting", n)
		}
	}
}

// limits turns <systemUsage> into the engine's limits. percentOfJvmHeap is
// read as a percentage of the machine's memory (Wharf has no JVM heap).
func limits(cfg *config.Config, log *slog.Logger) engine.Limits {
	u := cfg.SystemUsage
	l := engine.Limits{
		MemoryLimit:                   u.MemoryLimit,
		StoreLimit:                    u.StoreLimit,
		TempLimit:                     u.TempLimit,
		SendFailIfNoSpace:             u.SendFailIfNoSpace,
		SendFailIfNoSpaceAfterTimeout: u.SendFailIfNoSpaceAfterTimeout,
	}
	if u.MemoryPercentOfJVMHeap > 0 {
		if total := physicalMemory(); total > 0 {
			l.MemoryLimit = total * int64(u.MemoryPercentOfJVMHeap) / 100
		}
	}
	log.Info("usage limits", "memory_limit", l.MemoryLimit, "store_limit", l.StoreLimit, "temp_limit", l.TempLimit,
		"send_fail_if_no_space", l.SendFailIfNoSpace, "send_fail_after", l.SendFailIfNoSpaceAfterTimeout)
	return l
}

// physicalMemory is the machine's memory in bytes (Linux), or 0.
func physicalMemory() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}

// composites builds the engine's view of the configured composite queues
// and topics, their selectors compiled once.
func composites(cfg *config.Config) (func(message.Destination) *engine.Composite, error) {
	if len(cfg.Composites) == 0 {
		return nil, nil
	}
	built := map[*config.Composite]*engine.Composite{}
	for i := range cfg.Composites {
		c := &cfg.Composites[i]
		ec := &engine.Composite{ForwardOnly: c.ForwardOnly}
		for _, f := range c.ForwardTo {
			ef := engine.Forward{Destination: f.Destination}
			if f.Selector != "" {
				sel, err := selector.Parse(f.Selector)
				if err != nil {
					return nil, fmt.Errorf("composite %s forward to %s: %w", c.Destination, f.Destination, err)
				}
				ef.Selector = sel
			}
			ec.Forwards = append(ec.Forwards, ef)
		}
		built[c] = ec
	}
	return func(d message.Destination) *engine.Composite {
		if c := cfg.CompositeFor(d); c != nil {
			return built[c]
		}
		return nil
	}, nil
}

// publishable is the URI a connector listening at a advertises: its
// address, or the host's name for a wildcard address (as ActiveMQ's
// TransportConnector.getPublishableConnectString does).
func publishable(scheme string, a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return scheme + "://" + a.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil && h != "" {
			host = h
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// compositesForwardingTo lists, for a destination, the composites that
// forward to it (DestinationFilterVirtualDestinationMatcher), for the
// virtual destination consumer advisories of useVirtualDestSubs; nil
// without composites.
func compositesForwardingTo(cfg *config.Config) func(message.Destination) []message.Destination {
	if len(cfg.Composites) == 0 {
		return nil
	}
	return func(d message.Destination) []message.Destination {
		var out []message.Destination
		for i := range cfg.Composites {
			for _, f := range cfg.Composites[i].ForwardTo {
				if f.Destination.Matches(d) {
					out = append(out, cfg.Composites[i].Destination)
					break
				}
			}
		}
		return out
	}
}
