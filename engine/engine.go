package engine

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"wharf/engine/message"
)

// Options configure an Engine. The zero value of each field means its
// default.
type Options struct {
	// BrokerName names the broker (ActiveMQ's brokerName, "localhost").
	BrokerName string
	// Shards is the number of shard loops; 0 means GOMAXPROCS.
	Shards int
	// ConcurrentStoreAndDispatchQueues: a queue message consumed before its
	// write reaches a syncing store is not written at all; its add and
	// remove cancel out in the writer's batch (writer.go cancelConsumed).
	// ActiveMQ's KahaDB default is true.
	ConcurrentStoreAndDispatchQueues bool
	// InboxSize bounds each shard's inbox of commands from connections
	// (4096). A full inbox blocks the sender: that is back-pressure.
	InboxSize int
	// Store persists messages; nil keeps nothing (every message is treated
	// as non-persistent by the store, not by the protocols).
	Store Store
	// Authenticator and Authorizer are the security hooks; nil allows all.
	Authenticator Authenticator
	Authorizer    Authorizer
	// PolicyFor returns the policy of a destination when it is created; nil
	// gives DefaultPolicy to every destination.
	PolicyFor func(message.Destination) Policy
	// Now returns the time; nil is time.Now. Tests inject their own.
	Now func() time.Time
	// TickInterval is how often shards run their timers (expiry sweeps); 1 s.
	TickInterval time.Duration
	// OfflineDurableSubscriberTimeout removes durable subscriptions that
	// have had no consumer for that long; 0 keeps them forever (ActiveMQ
	// offlineDurableSubscriberTimeout -1). The check runs every
	// OfflineDurableSubscriberTaskSchedule (5 min).
	OfflineDurableSubscriberTimeout      time.Duration
	OfflineDurableSubscriberTaskSchedule time.Duration
	// Limits are the <systemUsage> limits and flow-control behaviour.
	Limits Limits
	// VirtualTopics are the virtual topic interceptors (none: virtual
	// topics off; the broker passes ActiveMQ's default one).
	VirtualTopics []VirtualTopic
	// CompositeFor returns the configured composite queue or topic that
	// intercepts sends to a destination, or nil; nil means none configured.
	CompositeFor func(message.Destination) *Composite
	// UseVirtualDestSubs (<broker useVirtualDestSubs>) advertises a
	// consumer on a queue a virtual destination forwards to as a consumer
	// of the virtual destination too (virtualsubs.go);
	// CompositesForwardingTo lists the composites that forward to a
	// destination (nil: none configured).
	UseVirtualDestSubs     bool
	CompositesForwardingTo func(message.Destination) []message.Destination
	// UseVirtualDestSubsOnCreation (<broker useVirtualDestSubsOnCreation>),
	// with UseVirtualDestSubs, advertises each queue a virtual destination
	// forwards to as a consumer of it from the queue's creation to its
	// removal, whether the queue has consumers or not (virtualsubs.go).
	UseVirtualDestSubsOnCreation bool
	// DisableAdvisories turns advisory messages off (<broker
	// advisorySupport="false">).
	DisableAdvisories bool
	// BrokerURL is reported in advisories' originBrokerURL property.
	BrokerURL string
	// SchedulerSupport turns on delayed and repeated delivery by the
	// AMQ_SCHEDULED_* properties (<broker schedulerSupport>, false).
	SchedulerSupport bool
	// Temp is where non-persistent messages spill when a destination's
	// memory passes its cursorMemoryHighWaterMark (tempstore.go); nil
	// spills nothing and memory limits hold producers back instead.
	Temp TempSpace
	// SlowStoreThreshold: a synced store write (a journal append and its
	// fsync) that takes longer is logged as "Slow KahaDB access", at most
	// once per 10 s. 0 means 500 ms; negative logs none.
	// DEVIATION: ActiveMQ 5.17 logs it only when the system property
	// org.apache.activemq.store.kahadb.LOG_SLOW_ACCESS_TIME is set (its
	// default is 0, off); its documentation suggests 500, and a disk that
	// slow is what an operator wants to hear of unasked.
	SlowStoreThreshold time.Duration
	// DisableStatistics turns off the timing and size statistics of each
	// destination (DestinationStats.EnqueueTime, MessageSize) and the
	// subscriptions' counters (SubCounters' EnqueueCounter ...): <broker
	// enableStatistics="false">. The destinations' counters (EnqueueCount
	// ...) are kept either way.
	DisableStatistics bool
	Logger            *slog.Logger
}

// Engine is a running set of shards. Its exported methods are safe from any
// goroutine.
type Engine struct {
	opts Options
	log  *slog.Logger
	// openAuthz: the Authorizer is AllowAll, so Conn.authorize skips its
	// cache (the default broker pays nothing for authorization).
	openAuthz bool
	shards    []*shard
	brokerID  string
	now       func() time.Time

	connSeq atomic.Uint64
	subSeq  atomic.Uint64

	// Broker-wide usage in bytes, summed by the shards (atomics: the one
	// figure every shard must see; never a lock).
	memUsed, storeUsed, tempUsed atomic.Int64
	// The broker-wide limits in force: Options.Limits', changed as the
	// broker runs by SetLimits (BrokerViewMBean setMemoryLimit ...).
	memLimit, storeLimit, tempLimit atomic.Int64
	// blockedShards counts shards holding parked producer sends.
	blockedShards atomic.Int64
	// handshakeTimeouts counts, by protocol, the connections closed because
	// their handshake did not finish within the connect timeout
	// (CountHandshakeTimeout).
	handshakeTimeouts sync.Map // string → *atomic.Int64

	// vdQueues holds the virtual destination demand of
	// UseVirtualDestSubsOnCreation: the consumer id advertised for each
	// (virtual destination, queue) pair (virtualsubs.go).
	vdMu     sync.Mutex
	vdQueues map[vdPair]string
	vdSeq    atomic.Uint64

	// vtQueues maps a virtual topic to its existing consumer queues.
	vtMu     sync.Mutex
	vtQueues map[string]map[message.Destination]struct{}

	shares shares // shared subscriptions' copies (shared.go)

	network networkState // the network connectors' view and peer brokers (network.go)

	// mu guards the connection and durable-subscription registries. They are
	// broker-wide bookkeeping read at connect and subscribe time, never on
	// the message path, and not destination state, which only shards touch.
	mu        sync.Mutex
	clientIDs map[string]*Conn
	durables  map[SubKey]*durableReg
	// For advisories and their replay: every connection, consumer and
	// registered producer.
	conns     map[*Conn]struct{}
	prepared  map[string]*tx // prepared (XA) transactions, by id
	consumers map[*Subscription]struct{}
	producers map[*Producer]struct{}
	advSeq    atomic.Uint64
	closed    bool

	stopTick chan struct{}
	wg       sync.WaitGroup
}

// durableReg is the broker-wide record of a durable subscription: where its
// parts live and who is consuming from it now.
type durableReg struct {
	sub    DurableSub
	shards []int
	active *Subscription
}

var hostname = func() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "wharf"
	}
	return h
}()

// New recovers the store and starts the shards.
func New(o Options) (*Engine, error) { return NewContext(context.Background(), o) }

// NewContext is New that gives up when ctx is done: it checks ctx before
// each shard's store is opened and while the shard recovers, and opens
// shard stores through ContextOpener when the store has it (a journal
// replay), so a signal during a long start-up stops it. What was opened is
// closed and the error wraps ctx.Err().
func NewContext(ctx context.Context, o Options) (*Engine, error) {
	e, err := newEngine(ctx, o)
	if err != nil {
		return nil, err
	}
	e.start()
	return e, nil
}

// newEngine builds the engine and recovers its shards' stores, without
// starting anything: scenario tests step its shards themselves.
func newEngine(ctx context.Context, o Options) (*Engine, error) {
	if o.Shards <= 0 {
		o.Shards = runtime.GOMAXPROCS(0)
	}
	if o.Shards > 256 {
		return nil, fmt.Errorf("engine: %d shards requested, at most 256 are supported", o.Shards)
	}
	if o.InboxSize <= 0 {
		o.InboxSize = 4096
	}
	if o.BrokerName == "" {
		o.BrokerName = "localhost"
	}
	if o.Authenticator == nil {
		o.Authenticator = AllowAll{}
	}
	if o.Authorizer == nil {
		o.Authorizer = AllowAll{}
	}
	if o.PolicyFor == nil {
		o.PolicyFor = func(message.Destination) Policy { return DefaultPolicy() }
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.TickInterval <= 0 {
		o.TickInterval = time.Second
	}
	if o.OfflineDurableSubscriberTaskSchedule <= 0 {
		o.OfflineDurableSubscriberTaskSchedule = 5 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.SlowStoreThreshold == 0 {
		o.SlowStoreThreshold = 500 * time.Millisecond
	}
	_, openAuthz := o.Authorizer.(AllowAll)
	e := &Engine{
		opts:      o,
		log:       o.Logger,
		openAuthz: openAuthz,
		now:       o.Now,
		clientIDs: map[string]*Conn{},
		durables:  map[SubKey]*durableReg{},
		conns:     map[*Conn]struct{}{},
		prepared:  map[string]*tx{},
		consumers: map[*Subscription]struct{}{},
		producers: map[*Producer]struct{}{},
		vtQueues:  map[string]map[message.Destination]struct{}{},
		stopTick:  make(chan struct{}),
	}
	e.memLimit.Store(o.Limits.MemoryLimit)
	e.storeLimit.Store(o.Limits.StoreLimit)
	e.tempLimit.Store(o.Limits.TempLimit)
	// ActiveMQ's ids look like ID:<host>-<port>-<start ms>-<n>:<seq>; ours
	// keep that shape so that tools parsing them are not surprised.
	e.brokerID = "ID:" + hostname + "-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(o.Now().UnixMilli(), 10)
	e.shards = make([]*shard, o.Shards)
	for i := range e.shards {
		e.shards[i] = newShard(e, i)
	}
	for i, s := range e.shards {
		if o.Store != nil {
			var st ShardStore
			err := ctx.Err()
			switch co, ok := o.Store.(ContextOpener); {
			case err != nil:
			case ok:
				st, err = co.OpenShardContext(ctx, i, o.Shards)
			default:
				st, err = o.Store.OpenShard(i, o.Shards)
			}
			if err != nil {
				e.closeStores()
				return nil, fmt.Errorf("engine: open store of shard %d: %w", i, err)
			}
			s.store = st
			if err := s.recover(ctx); err != nil {
				e.closeStores()
				return nil, fmt.Errorf("engine: recover shard %d: %w", i, err)
			}
		}
	}
	return e, nil
}

// start starts the shards' writers and loops, and the ticker.
func (e *Engine) start() {
	for _, s := range e.shards {
		if sy, ok := s.store.(Syncer); ok && sy.Syncs() {
			s.writer = newWriter(s.store, s.log, e.opts.ConcurrentStoreAndDispatchQueues, realClock{}, 4)
			s.writer.slow = max(e.opts.SlowStoreThreshold, 0)
			go s.writer.run()
		}
		e.wg.Add(1)
		go s.run()
	}
	e.wg.Add(1)
	go e.ticker()
}

func (e *Engine) closeStores() {
	for _, s := range e.shards {
		if s.store != nil {
			s.store.Close()
		}
	}
}

// Shards is the number of shards the engine runs. Safe from any goroutine.
func (e *Engine) Shards() int { return len(e.shards) }

// BrokerID is the broker's id, ActiveMQ style ("ID:host-pid-start").
func (e *Engine) BrokerID() string { return e.brokerID }

// BrokerName is the configured broker name.
func (e *Engine) BrokerName() string { return e.opts.BrokerName }

// Close stops the shards after they finish what they were given and closes
// the store. Connections should be closed first; commands posted after Close
// fail with ErrClosed.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	close(e.stopTick)
	for _, s := range e.shards {
		close(s.quit)
	}
	e.wg.Wait()
	for _, s := range e.shards {
		if s.writer != nil {
			s.writer.stop()
		}
	}
	var first error
	for _, s := range e.shards {
		if s.store != nil {
			if err := s.store.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

func (e *Engine) ticker() {
	defer e.wg.Done()
	t := time.NewTicker(e.opts.TickInterval)
	defer t.Stop()
	for {
		select {
		case <-e.stopTick:
			return
		case <-t.C:
			for _, s := range e.shards {
				s.mailbox(command{op: opTick})
			}
		}
	}
}

// Tick runs every shard's timers now (expiry sweeps) and returns when they
// have run. Tests use it with an injected clock instead of waiting.
func (e *Engine) Tick() {
	w := &waiter{}
	for _, s := range e.shards {
		w.wg.Add(1)
		s.mailbox(command{op: opTick, comp: w})
	}
	w.wg.Wait()
}

// shardFor pins a destination to a shard by a hash of its kind and name.
func (e *Engine) shardFor(d message.Destination) *shard {
	return e.shards[ShardIndex(d, len(e.shards))]
}

// ShardIndex is the shard of count that holds destination d: a hash of
// its kind and name. A store that holds destinations it did not get
// from the engine (rows another broker wrote) places them with it.
func ShardIndex(d message.Destination, count int) int {
	if count <= 1 {
		return 0
	}
	// FNV-1a, not a seeded hash: the placement must be the same after a
	// restart, because each shard recovers its own store.
	h := uint64(14695981039346656037)
	h = (h ^ uint64(d.Type)) * 1099511628211
	for i := 0; i < len(d.Name); i++ {
		h = (h ^ uint64(d.Name[i])) * 1099511628211
	}
	return int(h % uint64(count))
}

// DestinationStats are a destination's counters, as ActiveMQ's
// DestinationViewMBean names them.
type DestinationStats struct {
	Exists        bool
	QueueSize     int64 // pending + in flight (queues)
	EnqueueCount  int64
	DequeueCount  int64
	DispatchCount int64
	InFlightCount int64
	ExpiredCount  int64
	ConsumerCount int64
	// MemoryUsage is the bytes of messages held; MemoryLimit the
	// destination's own limit (0: it shares the broker's);
	// MemoryPercentUsage as ActiveMQ computes it against the limit in force.
	MemoryUsage        int64
	MemoryLimit        int64
	MemoryPercentUsage int
	// TempUsage is the bytes of its messages spilled to the temp store.
	TempUsage int64
	// BlockedSends counts producer sends flow control held back, and
	// BlockedNow those still waiting.
	BlockedSends int64
	BlockedNow   int
	// DiscardedCount counts messages dropped for slow topic subscribers.
	DiscardedCount int64
	// EnqueueTime is, in ms, how long each dispatched message waited
	// between entering the destination and being handed to a consumer (a
	// redelivery counts again, from the same start), as ActiveMQ's
	// DestinationStatistics.processTime, which RegionBroker.preProcessDispatch
	// feeds: AverageEnqueueTime, MinEnqueueTime, MaxEnqueueTime.
	EnqueueTime Statistic
	// MessageSize is the size (message.Size) of each message sent to the
	// destination: AverageMessageSize, MinMessageSize, MaxMessageSize.
	MessageSize Statistic
	// Paused: the queue's dispatch is paused (Engine.PauseDispatch).
	Paused bool
	// Policy is what of the policy in force the DestinationViewMBean
	// shows and ChangePolicy changes (MemoryLimit is above).
	Policy PolicyView
}

// PolicyView is part of a destination's policy in force.
type PolicyView struct {
	MaxPageSize         int
	ProducerFlowControl bool
}

// StatisticsEnabled reports whether the timing and size statistics are
// kept (not Options.DisableStatistics): BrokerView's StatisticsEnabled.
func (e *Engine) StatisticsEnabled() bool { return !e.opts.DisableStatistics }

// Stats reads a destination's counters from its shard.
func (e *Engine) Stats(d message.Destination) DestinationStats {
	x := &statsCmd{dest: d}
	e.request([]int{e.shardFor(d).idx}, func(*shard) command { return command{op: opStats, ctl: x} })
	return x.st
}

// Destinations lists every destination that exists now.
func (e *Engine) Destinations() []message.Destination {
	xs := make([]destinationsCmd, len(e.shards))
	e.request(nil, func(s *shard) command { return command{op: opDestinations, ctl: &xs[s.idx]} })
	var out []message.Destination
	for i := range xs {
		out = append(out, xs[i].out...)
	}
	return out
}

// RemoveDestination deletes a destination and everything stored for it.
func (e *Engine) RemoveDestination(d message.Destination) error {
	return e.request([]int{e.shardFor(d).idx}, func(*shard) command {
		return command{op: opRemoveDest, ctl: &removeDestCmd{dest: d}}
	})
}
