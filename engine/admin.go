package engine

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"wharf/engine/message"
)

// This file is the operator's side of the engine: what ActiveMQ's JMX
// BrokerView and QueueView let an administrator read and do (create and
// purge destinations, browse, remove, move, copy and retry messages), for
// the HTTP API. Every operation on messages runs on the destination's
// shard as a typed command (admin_shard.go), like Stats and
// RemoveDestination, so it sees and changes the queue between two
// commands of its loop, never during one.
//
// The message operations act on the messages a queue holds that are not
// dispatched: a message in flight to a consumer belongs to that consumer
// until it acks or returns it, as QueueViewMBean.removeMessage says ("If
// the message has been dispatched, it cannot be deleted").

// ErrNoSuchDestination: an admin operation named a destination that does
// not exist. (It sits here rather than in errors.go while engine/ is being
// reorganised; it moves there with the rest.)
var ErrNoSuchDestination = errors.New("engine: no such destination")

// Errors of the operator's connection and scheduler commands.
var (
	// ErrNoSuchConnection: CloseConnection named no open connection.
	ErrNoSuchConnection = errors.New("engine: no such connection")
	// ErrNotClosable: the connection's protocol registered no way to end
	// it from the broker's side (Conn.SetCloser).
	ErrNotClosable = errors.New("engine: the connection cannot be closed by the broker")
	// ErrNoSuchJob: RemoveScheduledJob named no scheduled job.
	ErrNoSuchJob = errors.New("engine: no such scheduled job")
)

// ErrBadArgument: an admin operation was given a value it cannot take.
var ErrBadArgument = errors.New("engine: invalid argument")

// MessageFilter selects messages for an admin operation; nil selects
// every message. It runs on a shard goroutine and must not block.
type MessageFilter func(m *message.Message, redeliveries int32) bool

// QueuedMessage is one message a queue holds, as Browse reports it.
type QueuedMessage struct {
	Msg          *message.Message // shared with the queue: read it, never change it
	Redeliveries int32
	// InFlight: dispatched to a consumer and not yet acknowledged.
	InFlight bool
}

// AddDestination creates a queue or topic if it does not exist yet
// (BrokerViewMBean addQueue, addTopic). Temporary destinations, patterns
// and composites are refused. Safe from any goroutine.
func (e *Engine) AddDestination(d message.Destination) error {
	if err := adminDest(d); err != nil {
		return err
	}
	return e.request([]int{e.shardFor(d).idx}, func(*shard) command { return command{op: opAddDest, ctl: d} })
}

// Browse returns up to max (at least 1) of the messages queue d holds that
// pass filter, dispatched or not, in queue order (DestinationViewMBean
// browse). A spilled message is read back for it and left where it is.
// A queue that does not exist gives ErrNoSuchDestination.
func (e *Engine) Browse(d message.Destination, filter MessageFilter, max int) ([]QueuedMessage, error) {
	if err := adminQueue(d); err != nil {
		return nil, err
	}
	c := &adminBrowseCmd{dest: d, filter: filter, max: max}
	err := e.request([]int{e.shardFor(d).idx}, func(*shard) command { return command{op: opAdminBrowse, ctl: c} })
	out, found := c.out, c.found
	if err == nil && !found {
		err = fmt.Errorf("%w: %s", ErrNoSuchDestination, d)
	}
	return out, err
}

// PauseDispatch stops queue d handing messages to its consumers until
// ResumeDispatch (QueueViewMBean pause): sends are still accepted and
// kept, browsing and the other admin operations still work, and expiry
// sweeps are skipped, as in ActiveMQ's Queue.pauseDispatch. Not kept
// across a restart (nor is ActiveMQ's). A queue that does not exist
// gives ErrNoSuchDestination.
func (e *Engine) PauseDispatch(d message.Destination) error { return e.pauseDispatch(d, true) }

// ResumeDispatch lets a paused queue dispatch again (QueueViewMBean
// resume); resuming a queue that is not paused changes nothing.
func (e *Engine) ResumeDispatch(d message.Destination) error { return e.pauseDispatch(d, false) }

func (e *Engine) pauseDispatch(d message.Destination, pause bool) error {
	if err := adminQueue(d); err != nil {
		return err
	}
	c := &adminPauseCmd{dest: d, pause: pause}
	err := e.request([]int{e.shardFor(d).idx}, func(*shard) command { return command{op: opAdminPause, ctl: c} })
	if err == nil && !c.found {
		err = fmt.Errorf("%w: %s", ErrNoSuchDestination, d)
	}
	return err
}

// PolicyChange is a change to a running destination's policy, what
// ActiveMQ's DestinationViewMBean setters change: a nil field is left as
// it is. Like a JMX change, it lasts until the destination is removed or
// the broker restarts; destinations created later take the configured
// policy.
type PolicyChange struct {
	MaxPageSize         *int
	ProducerFlowControl *bool
	MemoryLimit         *int64 // bytes; 0 shares the broker's
}

// String lists what the change sets, for the log.
func (c PolicyChange) String() string {
	var parts []string
	if c.MaxPageSize != nil {
		parts = append(parts, fmt.Sprintf("maxPageSize=%d", *c.MaxPageSize))
	}
	if c.ProducerFlowControl != nil {
		parts = append(parts, fmt.Sprintf("producerFlowControl=%t", *c.ProducerFlowControl))
	}
	if c.MemoryLimit != nil {
		parts = append(parts, fmt.Sprintf("memoryLimit=%d", *c.MemoryLimit))
	}
	return strings.Join(parts, " ")
}

// ChangePolicy changes the policy of destination d as it runs (the
// DestinationViewMBean setters). MaxPageSize must be positive and
// MemoryLimit not negative. A
// destination that does not exist gives ErrNoSuchDestination.
func (e *Engine) ChangePolicy(d message.Destination, c PolicyChange) error {
	if err := adminDest(d); err != nil {
		return err
	}
	switch {
	case c.MaxPageSize != nil && *c.MaxPageSize <= 0:
		return fmt.Errorf("%w: maxPageSize %d is not positive", ErrBadArgument, *c.MaxPageSize)
	case c.MemoryLimit != nil && *c.MemoryLimit < 0:
		return fmt.Errorf("%w: memoryLimit %d is negative", ErrBadArgument, *c.MemoryLimit)
	}
	x := &adminPolicyCmd{dest: d, change: c}
	err := e.request([]int{e.shardFor(d).idx}, func(*shard) command { return command{op: opAdminPolicy, ctl: x} })
	if err == nil && !x.found {
		err = fmt.Errorf("%w: %s", ErrNoSuchDestination, d)
	}
	return err
}

// Purge removes every message of queue d that is not in flight and
// returns how many (QueueViewMBean purge). Each counts as dequeued, as
// ActiveMQ's purge acknowledges what it removes.
func (e *Engine) Purge(d message.Destination) (int, error) {
	return e.RemoveMessages(d, nil, -1)
}

// RemoveMessages removes up to max (all when negative) undispatched
// messages of queue d that pass filter, and returns how many
// (removeMessage, removeMatchingMessages).
func (e *Engine) RemoveMessages(d message.Destination, filter MessageFilter, max int) (int, error) {
	if err := adminQueue(d); err != nil {
		return 0, err
	}
	c := &adminRemoveCmd{dest: d, filter: filter, max: max}
	err := e.request([]int{e.shardFor(d).idx}, func(*shard) command { return command{op: opAdminRemove, ctl: c} })
	n, found := c.n, c.found
	if err == nil && !found {
		err = fmt.Errorf("%w: %s", ErrNoSuchDestination, d)
	}
	return n, err
}

// MoveMessages moves up to max (all when negative) undispatched messages
// of queue d that pass filter to destination to, and returns how many
// (moveMessageTo, moveMatchingMessagesTo), AdminChunk per command of d's
// shard (relocate).
func (e *Engine) MoveMessages(d message.Destination, filter MessageFilter, to message.Destination, max int) (int, error) {
	if err := adminDest(to); err != nil {
		return 0, err
	}
	return e.relocate(d, filter, max, func(*message.Message) message.Destination { return to }, true)
}

// CopyMessages copies up to max (all when negative) undispatched messages
// of queue d that pass filter to destination to, leaving them on d, and
// returns how many (copyMessageTo, copyMatchingMessagesTo).
func (e *Engine) CopyMessages(d message.Destination, filter MessageFilter, to message.Destination, max int) (int, error) {
	if err := adminDest(to); err != nil {
		return 0, err
	}
	return e.relocate(d, filter, max, func(*message.Message) message.Destination { return to }, false)
}

// RetryMessages sends up to max (all when negative) undispatched messages
// of queue d that pass filter back to the destination they were
// dead-lettered from (their OriginalDestination), and returns how many
// (retryMessages, retryMessage; with a positive max and no filter, Wharf's
// retryMessages(int), which lets a client replay a large DLQ in parts and
// see its progress). A message that names no original destination stays
// where it is. Like a move, it goes AdminChunk messages per command of
// d's shard.
func (e *Engine) RetryMessages(d message.Destination, filter MessageFilter, max int) (int, error) {
	withOrigin := func(m *message.Message, r int32) bool {
		return adminDest(m.OriginalDestination) == nil && (filter == nil || filter(m, r))
	}
	return e.relocate(d, withOrigin, max, func(m *message.Message) message.Destination { return m.OriginalDestination }, true)
}

// AdminChunk is how many messages a move or retry (MoveMessages,
// RetryMessages) handles in one command of the queue's shard: a larger
// one goes in chunks of AdminChunk, so that the shard serves its other
// clients between two chunks rather than waiting for the whole move.
const AdminChunk = 1000

// relocate sends copies of up to max undispatched messages of queue d
// that pass filter to the destination target names for each and, when
// remove is set, takes the originals off d. Persist before you promise:
// the originals are removed only after every copy's shard has written
// it, so a crash in between leaves a duplicate, never a loss. A message
// dispatched meanwhile stays on d (and is copied all the same).
//
// A move (remove set) goes in chunks of AdminChunk messages, each copied,
// written and removed before the next is read: at most as many messages
// as d held when it began, so that messages arriving meanwhile (or moved
// back onto d itself) do not keep it going. It stops early after a chunk
// one of whose copies was refused, which would only be refused again.
func (e *Engine) relocate(d message.Destination, filter MessageFilter, max int, target func(*message.Message) message.Destination, remove bool) (int, error) {
	if err := adminQueue(d); err != nil {
		return 0, err
	}
	if !remove {
		n, _, _, err := e.relocateChunk(d, filter, max, target, false, nil)
		return n, err
	}
	var skip map[uint64]bool
	if filter != nil {
		skip = map[uint64]bool{}
	}
	moved, tried, queued := 0, 0, -1
	for {
		chunk := AdminChunk
		if max >= 0 {
			chunk = min(chunk, max-tried)
		}
		if queued >= 0 {
			chunk = min(chunk, queued-tried)
		}
		if chunk <= 0 {
			return moved, nil
		}
		n, copies, q, err := e.relocateChunk(d, filter, chunk, target, true, skip)
		moved += n
		tried += copies
		if queued < 0 {
			queued = q
		}
		if err != nil || copies < chunk || n < copies {
			return moved, err
		}
	}
}

// relocateChunk is one command's worth of relocate: it copies up to max
// messages and returns how many copies went, how many it made, and how
// many undispatched messages d held.
func (e *Engine) relocateChunk(d message.Destination, filter MessageFilter, max int, target func(*message.Message) message.Destination, remove bool, skip map[uint64]bool) (sent, made, queued int, err error) {
	c := &adminCopyCmd{dest: d, filter: filter, max: max, target: target, skip: skip}
	err = e.request([]int{e.shardFor(d).idx}, func(*shard) command { return command{op: opAdminCopy, ctl: c} })
	copies, found := c.copies, c.found
	if err == nil && !found {
		err = fmt.Errorf("%w: %s", ErrNoSuchDestination, d)
	}
	if err != nil || len(copies) == 0 {
		return 0, 0, c.queued, err
	}
	byShard := map[int][]*message.Message{}
	for _, c := range copies {
		i := e.shardFor(c.Destination).idx
		byShard[i] = append(byShard[i], c)
	}
	// Told once each shard's batch with the copies is written
	// (opAdminSend completes after the sync). A copy a shard refused
	// keeps its original where it is: a move never loses a message.
	sends := make(map[int]*adminSendCmd, len(byShard))
	for i, cs := range byShard {
		sends[i] = &adminSendCmd{msgs: cs}
	}
	if err := e.request(slices.Collect(maps.Keys(byShard)), func(s *shard) command {
		return command{op: opAdminSend, ctl: sends[s.idx]}
	}); err != nil {
		return 0, len(copies), c.queued, err
	}
	sent = len(copies)
	for _, sc := range sends {
		sent -= len(sc.failed)
	}
	if !remove {
		return sent, len(copies), c.queued, nil
	}
	ids := make(map[string]int, len(copies))
	for _, c := range copies {
		ids[c.ID]++
	}
	for _, sc := range sends {
		for _, id := range sc.failed {
			ids[id]--
		}
	}
	rm := &adminRemoveCmd{dest: d, ids: ids, left: sent, max: -1}
	err = e.request([]int{e.shardFor(d).idx}, func(*shard) command { return command{op: opAdminRemove, ctl: rm} })
	return sent, len(copies), c.queued, err
}

// resendCopy is the copy of m that a move, copy or retry sends to d, as
// ActiveMQ's BrokerSupport.resend makes it: same message id,
// OriginalDestination the queue it came from, redelivery count reset.
func resendCopy(m *message.Message, d message.Destination) *message.Message {
	// Clone leaves the sender's encoded form behind: the headers change,
	// so the protocols encode the copy afresh.
	c := m.Clone()
	c.OriginalDestination = m.Destination
	c.Destination = d
	c.RedeliveryCounter = 0
	return c
}

// adminDest checks that d names one plain queue or topic.
func adminDest(d message.Destination) error {
	if d.Name == "" || d.Type.IsTemp() || d.IsWildcard() || d.IsComposite() {
		return fmt.Errorf("%w: %q is not a queue or topic name", ErrBadDestination, d.String())
	}
	return nil
}

// adminQueue checks that d names one plain queue: the message operations
// are QueueViewMBean's.
func adminQueue(d message.Destination) error {
	if err := adminDest(d); err != nil {
		return err
	}
	if d.Type != message.Queue {
		return fmt.Errorf("%w: %s is not a queue", ErrBadDestination, d)
	}
	return nil
}

// ProducerCount is the number of registered producers sending to d
// (DestinationViewMBean ProducerCount). Only OpenWire registers its
// producers; STOMP, MQTT and AMQP producers are anonymous and not
// counted. Safe from any goroutine.
func (e *Engine) ProducerCount(d message.Destination) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.countProducersLocked(d)
}

// ConnectionInfo describes a client connection for an operator
// (ConnectionViewMBean).
type ConnectionInfo struct {
	ID       string // ActiveMQ style connection id
	ClientID string
	User     string
	Remote   string // the client's address, "" when unknown
	Protocol string // the connector's protocol ("openwire", "stomp"...)
	// Producers is the number of producers it registered.
	Producers int
}

// Connections lists the open client connections, in no particular order.
// Safe from any goroutine.
func (e *Engine) Connections() []ConnectionInfo {
	e.mu.Lock()
	defer e.mu.Unlock()
	producers := map[*Conn]int{}
	for p := range e.producers {
		producers[p.conn]++
	}
	out := make([]ConnectionInfo, 0, len(e.conns))
	for c := range e.conns {
		ci := ConnectionInfo{ID: c.id, ClientID: c.clientID, User: c.user, Protocol: c.protocol, Producers: producers[c]}
		if c.remote != nil {
			ci.Remote = c.remote.String()
		}
		out = append(out, ci)
	}
	return out
}

// DurableSubInfo is a durable subscription with whether a consumer is
// attached to it now (BrokerViewMBean DurableTopicSubscribers and
// InactiveDurableTopicSubscribers).
type DurableSubInfo struct {
	DurableSub
	Active bool
}

// DurableSubsInfo returns every durable subscription, active or not, in
// no particular order. Safe from any goroutine.
func (e *Engine) DurableSubsInfo() []DurableSubInfo {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]DurableSubInfo, 0, len(e.durables))
	for _, r := range e.durables {
		out = append(out, DurableSubInfo{DurableSub: r.sub, Active: r.active != nil})
	}
	return out
}

// ConsumerInfo describes an open consumer for an operator
// (SubscriptionViewMBean).
type ConsumerInfo struct {
	ID           string // ActiveMQ style consumer id ("<connection id>:1:<n>")
	ConnectionID string
	ClientID     string
	User         string
	Destination  message.Destination // as subscribed: may be a pattern
	Selector     string
	DurableName  string // "" for a non-durable consumer
	Prefetch     int
	NoLocal      bool
	Exclusive    bool
	Browser      bool
	Retroactive  bool
	Priority     int8
	// SubCounters: what it holds (Dispatched: delivered, not yet
	// acknowledged) and its counters.
	SubCounters
}

// Consumers lists the open consumers, in no particular order: those the
// broker registers for its advisories, which is every consumer but those
// of advisory topics, and none when advisories are off
// (<broker advisorySupport="false">). Safe from any goroutine.
func (e *Engine) Consumers() []ConsumerInfo {
	e.mu.Lock()
	subs := make([]*Subscription, 0, len(e.consumers))
	for s := range e.consumers {
		subs = append(subs, s)
	}
	e.mu.Unlock()
	// Counted after e.mu is released: a shard may take e.mu itself.
	counts := make([]*inflightCmd, len(e.shards))
	e.request(nil, func(s *shard) command {
		counts[s.idx] = &inflightCmd{n: map[*Subscription]SubCounters{}}
		return command{op: opInflight, ctl: counts[s.idx]}
	})
	all := map[*Subscription]SubCounters{}
	for _, c := range counts {
		for sub, n := range c.n {
			all[sub] = all[sub].plus(n)
		}
	}
	out := make([]ConsumerInfo, len(subs))
	for i, s := range subs {
		sp := s.spec
		out[i] = ConsumerInfo{
			ID: s.consumerID(), ConnectionID: s.conn.id, ClientID: s.conn.clientID, User: s.conn.user,
			Destination: sp.Destination, Selector: sp.Selector, DurableName: sp.DurableName, Prefetch: s.Prefetch(),
			NoLocal: sp.NoLocal, Exclusive: sp.Exclusive, Browser: sp.Browser, Retroactive: sp.Retroactive,
			Priority: sp.Priority, SubCounters: all[s],
		}
	}
	return out
}

// ProducerInfo describes a registered producer (ProducerViewMBean).
type ProducerInfo struct {
	ID           string
	ConnectionID string
	ClientID     string
	User         string
	Destination  message.Destination // zero for an anonymous producer
}

// Producers lists the registered producers, in no particular order: only
// OpenWire registers its producers; STOMP, MQTT and AMQP producers are
// anonymous. Safe from any goroutine.
func (e *Engine) Producers() []ProducerInfo {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]ProducerInfo, 0, len(e.producers))
	for p := range e.producers {
		out = append(out, ProducerInfo{ID: p.ID, ConnectionID: p.conn.id, ClientID: p.conn.clientID, User: p.conn.user, Destination: p.Destination})
	}
	return out
}

// SetCloser registers how the broker ends this connection when an
// operator asks (CloseConnection, ConnectionViewMBean stop): f closes the
// protocol's transport, after which the session closes the Conn as it
// does when a client goes. f is called at most once, from any goroutine,
// and must not block. Safe from any goroutine.
func (c *Conn) SetCloser(f func()) {
	c.e.mu.Lock()
	c.closer = f
	c.e.mu.Unlock()
}

// CloseConnection ends the open connection whose id (ConnectionInfo.ID)
// is id, through the closer its protocol registered, and returns without
// waiting for the session to wind down. It fails with ErrNoSuchConnection
// when none is open under that id, ErrNotClosable when its protocol
// registered no closer. Safe from any goroutine.
func (e *Engine) CloseConnection(id string) error {
	e.mu.Lock()
	var f func()
	found := false
	for c := range e.conns {
		if c.id == id {
			found, f = true, c.closer
			c.closer = nil
			break
		}
	}
	e.mu.Unlock()
	switch {
	case !found:
		return fmt.Errorf("%w: %q", ErrNoSuchConnection, id)
	case f == nil:
		return fmt.Errorf("%w: %q", ErrNotClosable, id)
	}
	f()
	return nil
}

// ScheduledJobList returns every scheduled job of every shard, due first
// first (the job scheduler's getAllJobs). The messages are shared with
// the scheduler: read them, never change them. Safe from any goroutine.
func (e *Engine) ScheduledJobList() []Job {
	xs := make([]jobListCmd, len(e.shards))
	e.request(nil, func(s *shard) command { return command{op: opJobList, ctl: &xs[s.idx]} })
	var out []Job
	for i := range xs {
		out = append(out, xs[i].out...)
	}
	slices.SortStableFunc(out, func(a, b Job) int {
		if a.Next != b.Next {
			return cmp.Compare(a.Next, b.Next)
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// RemoveScheduledJob removes scheduled job id (JobSchedulerViewMBean
// removeJob) and returns once the removal is stored; ErrNoSuchJob when no
// shard holds it. Safe from any goroutine.
func (e *Engine) RemoveScheduledJob(id string) error {
	xs := make([]jobRemoveCmd, len(e.shards))
	if err := e.request(nil, func(s *shard) command {
		xs[s.idx].id = id
		return command{op: opJobRemove, ctl: &xs[s.idx]}
	}); err != nil {
		return err
	}
	for i := range xs {
		if xs[i].removed {
			return nil
		}
	}
	return fmt.Errorf("%w: %q", ErrNoSuchJob, id)
}
