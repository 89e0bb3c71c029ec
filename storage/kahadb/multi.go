package kahadb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb/journal"
)

// Filter is one <filteredKahaDB> of a MultiStore.
type Filter struct {
	// Dest is the destination pattern; the zero Destination is a catch-all
	// (ActiveMQ's matchAll: queue ">" and topic ">").
	Dest message.Destination
	// PerDestination gives each matching destination its own child store,
	// created when the destination is first stored.
	PerDestination bool
	// Options configure the filter's child stores. Options.Dir, when set,
	// replaces MultiOptions.Dir as the parent of the child directories.
	Options Options
}

// matches reports whether the filter stores d; a destination that is
// itself a pattern (a durable subscription on "news.>") is matched as a
// name.
func (f *Filter) matches(d message.Destination) bool {
	return f.Dest.IsZero() || f.Dest == d || f.Dest.Matches(d)
}

// MultiOptions configure a MultiStore: <mKahaDB>'s attributes and filters.
type MultiOptions struct {
	Dir string
	// Filters in order: the first that matches a destination stores it.
	Filters []Filter
	// LockRetry is how often the store retries the lock of Dir while
	// another broker holds it (10 s).
	LockRetry time.Duration
	Logger    *slog.Logger
}

// ErrNoFilter is returned for an operation on a destination no filter
// matches.
var ErrNoFilter = errors.New("kahadb: no mKahaDB filter matches the destination")

// jobsDir is the child that stores scheduled jobs when every filter is
// perDestination (jobs belong to no destination).
const jobsDir = "wharf-jobs"

// MultiStore is mKahaDB: one KahaDB store per filter (or per destination
// for a perDestination filter), each with its own options and its own
// shard-<i>-of-<n> layout. See the package documentation.
type MultiStore struct {
	opts MultiOptions
	log  *slog.Logger
	lock *journal.FileLock

	mu       sync.Mutex
	children map[string]*Store // by directory
	shards   []*multiShard
}

// OpenMulti takes the lock of o.Dir (waiting while another broker holds
// it) and opens the child store of every filter that is not perDestination.
func OpenMulti(ctx context.Context, o MultiOptions) (*MultiStore, error) {
	if len(o.Filters) == 0 {
		return nil, fmt.Errorf("%w: no filters configured", ErrNoFilter)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.LockRetry <= 0 {
		o.LockRetry = 10 * time.Second
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("kahadb: %w", err)
	}
	lock, err := journal.Lock(ctx, o.Dir, o.LockRetry, o.Logger)
	if err != nil {
		return nil, fmt.Errorf("kahadb: lock %s: %w", o.Dir, err)
	}
	m := &MultiStore{opts: o, log: o.Logger, lock: lock, children: map[string]*Store{}}
	for i := range o.Filters {
		f := &o.Filters[i]
		if f.PerDestination {
			continue
		}
		if f.Dest.IsZero() {
			if err := m.renameOldCatchAll(i); err != nil {
				m.Close()
				return nil, err
			}
		}
		if _, err := m.child(ctx, m.filterDir(i), f.Options); err != nil {
			m.Close()
			return nil, err
		}
	}
	return m, nil
}

// parent is the directory holding filter i's child directories.
func (m *MultiStore) parent(i int) string {
	if d := m.opts.Filters[i].Options.Dir; d != "" {
		return d
	}
	return m.opts.Dir
}

// filterDir is the child directory of filter i (not perDestination).
func (m *MultiStore) filterDir(i int) string {
	f := &m.opts.Filters[i]
	if f.Dest.IsZero() {
		return filepath.Join(m.parent(i), ChildName(message.Destination{}))
	}
	return filepath.Join(m.parent(i), ChildName(f.Dest))
}

// oldCatchAllChild is the name Wharf gave the catch-all child before it
// named it as ActiveMQ does: the file-system-safe form of
// "queue://>,topic://>".
var oldCatchAllChild = safeName("queue://>,topic://>")

// renameOldCatchAll moves the catch-all child of filter i written under
// its old Wharf name to the name ActiveMQ gives it, so that a store
// written by an earlier Wharf keeps its messages. When both directories
// exist it refuses rather than guess which holds the data.
func (m *MultiStore) renameOldCatchAll(i int) error {
	old := filepath.Join(m.parent(i), oldCatchAllChild)
	cur := m.filterDir(i)
	if _, err := os.Stat(old); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("kahadb: %w", err)
	}
	if _, err := os.Stat(cur); err == nil {
		return fmt.Errorf("kahadb: both %s (the catch-all child's old Wharf name) and %s (its ActiveMQ name) exist: keep the one holding the data and remove or move the other", old, cur)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("kahadb: %w", err)
	}
	if err := os.Rename(old, cur); err != nil {
		return fmt.Errorf("kahadb: rename the catch-all child: %w", err)
	}
	m.log.Info("catch-all child renamed to ActiveMQ's name", "from", old, "to", cur)
	return nil
}

// child opens (once) the child store in dir.
func (m *MultiStore) child(ctx context.Context, dir string, o Options) (*Store, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st := m.children[dir]; st != nil {
		return st, nil
	}
	o.Dir = dir
	if o.Logger == nil {
		o.Logger = m.log
	}
	o.Logger = o.Logger.With("child", filepath.Base(dir))
	st, err := Open(ctx, o)
	if err != nil {
		return nil, err
	}
	m.children[dir] = st
	return st, nil
}

// ChildName is the directory name ActiveMQ's MultiKahaDBPersistenceAdapter
// gives the child of filter (or destination) d: IOHelper.
// toFileSystemSafeName of its qualified name ("queue://orders.>" becomes
// "queue#3a#2f#2forders.#3e"); the catch-all (the zero Destination) is
// catchAllChild, "#210", the safe form of matchAll's name "!0". Names
// longer than 64 characters keep their last 64, as IOHelper's
// MaximumFileNameLength.
func ChildName(d message.Destination) string {
	if d.IsZero() {
		return catchAllChild
	}
	prefix := "queue://"
	switch d.Type {
	case message.Topic:
		prefix = "topic://"
	case message.TempQueue:
		prefix = "temp-queue://"
	case message.TempTopic:
		prefix = "temp-topic://"
	}
	return safeName(prefix + d.Name)
}

// safeName is IOHelper.toFileSystemSafeName(q) cut to its last 64
// characters, as MultiKahaDBPersistenceAdapter names a child directory.
func safeName(q string) string {
	var b strings.Builder
	for _, c := range q {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '_' || c == '-' || c == '.' || c == '#' {
			b.WriteRune(c)
			continue
		}
		b.WriteByte('#')
		b.WriteString(strconv.FormatInt(int64(c), 16))
	}
	s := b.String()
	if len(s) > maxChildName {
		s = s[len(s)-maxChildName:]
	}
	return s
}

// maxChildName is IOHelper's MaximumFileNameLength default.
const maxChildName = 64

// OpenShard opens shard index of count in every child store: the filters'
// (opened by OpenMulti), and the perDestination children found on disk,
// whose destinations are learned from what they recover.
func (m *MultiStore) OpenShard(index, count int) (engine.ShardStore, error) {
	return m.OpenShardContext(context.Background(), index, count)
}

// OpenShardContext is OpenShard that gives up when ctx is done, as
// Store.OpenShardContext does for each child (engine.ContextOpener).
func (m *MultiStore) OpenShardContext(ctx context.Context, index, count int) (engine.ShardStore, error) {
	ms := &multiShard{
		m: m, index: index, count: count,
		fixed: make([]*child, len(m.opts.Filters)),
		byDir: map[string]*child{},
		route: map[message.Destination]*child{},
		subs:  map[engine.SubKey]message.Destination{},
	}
	fail := func(err error) (engine.ShardStore, error) {
		ms.Close()
		return nil, err
	}
	jobs := -1
	for i := range m.opts.Filters {
		f := &m.opts.Filters[i]
		if f.PerDestination {
			continue
		}
		c, err := ms.open(ctx, m.filterDir(i), f.Options)
		if err != nil {
			return fail(err)
		}
		ms.fixed[i] = c
		if jobs < 0 || f.Dest.IsZero() && !m.opts.Filters[jobs].Dest.IsZero() {
			jobs = i
		}
	}
	if jobs >= 0 {
		ms.jobs = ms.fixed[jobs]
	} else {
		c, err := ms.open(ctx, filepath.Join(m.opts.Dir, jobsDir), m.opts.Filters[0].Options)
		if err != nil {
			return fail(err)
		}
		ms.jobs = c
	}
	if err := ms.discover(ctx); err != nil {
		return fail(err)
	}
	// Learn where each destination and subscription is stored, so that
	// later operations go to the child that holds them even if the
	// filters changed.
	for _, c := range ms.children {
		err := c.ss.RecoverStubs(func(it engine.RecoveredItem) error {
			switch {
			case it.Sub != nil:
				ms.subs[it.Sub.Key] = it.Sub.Destination
			case it.Created || it.Msg != nil || it.Ref.Len != 0:
				if _, ok := ms.route[it.Dest]; !ok {
					ms.route[it.Dest] = c
				}
			}
			return nil
		})
		if err != nil {
			return fail(err)
		}
	}
	m.mu.Lock()
	m.shards = append(m.shards, ms)
	m.mu.Unlock()
	return ms, nil
}

// discover opens the perDestination children left on disk (directories
// named queue#... or topic#... that are no filter's own).
func (ms *multiShard) discover(ctx context.Context) error {
	m := ms.m
	seenParent := map[string]bool{}
	for i := range m.opts.Filters {
		if !m.opts.Filters[i].PerDestination {
			continue
		}
		parent := m.parent(i)
		if seenParent[parent] {
			continue
		}
		seenParent[parent] = true
		entries, err := os.ReadDir(parent)
		if err != nil {
			return fmt.Errorf("kahadb: %w", err)
		}
		for _, e := range entries {
			name := e.Name()
			dir := filepath.Join(parent, name)
			if !e.IsDir() || ms.byDir[dir] != nil ||
				!(strings.HasPrefix(name, "queue#") || strings.HasPrefix(name, "topic#")) {
				continue
			}
			if _, err := ms.open(ctx, dir, m.optionsForDir(name, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// optionsForDir picks the options of a perDestination child found on
// disk: those of the first filter matching the destination its name
// spells, else those of perDestination filter def.
func (m *MultiStore) optionsForDir(name string, def int) Options {
	if d, ok := destFromChildName(name); ok {
		for i := range m.opts.Filters {
			if f := &m.opts.Filters[i]; f.PerDestination && f.matches(d) {
				return f.Options
			}
		}
	}
	return m.opts.Filters[def].Options
}

// destFromChildName reverses ChildName for names that were not shortened.
func destFromChildName(name string) (message.Destination, bool) {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		if name[i] != '#' || i+2 >= len(name) {
			b.WriteByte(name[i])
			continue
		}
		n, err := strconv.ParseUint(name[i+1:i+3], 16, 8)
		if err != nil {
			b.WriteByte(name[i])
			continue
		}
		b.WriteByte(byte(n))
		i += 2
	}
	q := b.String()
	for _, p := range []struct {
		prefix string
		t      message.DestType
	}{{"queue://", message.Queue}, {"topic://", message.Topic}} {
		if n, ok := strings.CutPrefix(q, p.prefix); ok && n != "" && !strings.Contains(n, "://") {
			return message.Destination{Type: p.t, Name: n}, true
		}
	}
	return message.Destination{}, false
}

// Close closes every shard and child store and releases the lock.
func (m *MultiStore) Close() error {
	m.mu.Lock()
	shards := m.shards
	m.shards = nil
	m.mu.Unlock()
	var errs []error
	for _, ms := range shards {
		errs = append(errs, ms.Close())
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for dir, st := range m.children {
		errs = append(errs, st.Close())
		delete(m.children, dir)
	}
	if m.lock != nil {
		errs = append(errs, m.lock.Unlock())
		m.lock = nil
	}
	return errors.Join(errs...)
}

// Children lists the open child directories, for operators and tests.
func (m *MultiStore) Children() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.children))
	for dir := range m.children {
		out = append(out, dir)
	}
	return out
}

// child is one child store's shard, as a multiShard uses it.
type child struct {
	dir string
	ss  *shardStore
	ops []engine.StoreOp // this Apply's part
}

// multiShard routes one engine shard's operations to its child shards.
// Used by the shard's goroutine only.
type multiShard struct {
	m            *MultiStore
	index, count int

	children []*child          // every open child, in open order
	byDir    map[string]*child // the same, by directory
	fixed    []*child          // per filter; nil for perDestination
	jobs     *child            // where scheduled jobs go
	route    map[message.Destination]*child
	subs     map[engine.SubKey]message.Destination // durable subscriptions and their topic
	closed   bool
	// loaders are the children as RecoverStubs numbered them in its
	// references (StoreRef.Part): a copy, which LoadMessage reads while
	// the writer may be opening new children.
	loaders []*shardStore
}

// open opens this shard of the child store in dir; ctx bounds the
// replay of its journal.
func (ms *multiShard) open(ctx context.Context, dir string, o Options) (*child, error) {
	if c := ms.byDir[dir]; c != nil {
		return c, nil
	}
	st, err := ms.m.child(ctx, dir, o)
	if err != nil {
		return nil, err
	}
	ss, err := st.OpenShardContext(ctx, ms.index, ms.count)
	if err != nil {
		return nil, fmt.Errorf("kahadb: mKahaDB child %s: %w", filepath.Base(dir), err)
	}
	c := &child{dir: dir, ss: ss.(*shardStore)}
	ms.children = append(ms.children, c)
	ms.byDir[dir] = c
	return c, nil
}

// target is the child that stores destination d: the one that already
// holds it, else the first matching filter's.
func (ms *multiShard) target(d message.Destination) (*child, error) {
	if c := ms.route[d]; c != nil {
		return c, nil
	}
	m := ms.m
	for i := range m.opts.Filters {
		f := &m.opts.Filters[i]
		if !f.matches(d) {
			continue
		}
		c := ms.fixed[i]
		if f.PerDestination {
			var err error
			c, err = ms.open(context.Background(), filepath.Join(m.parent(i), ChildName(d)), f.Options)
			if err != nil {
				return nil, err
			}
		}
		ms.route[d] = c
		return c, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrNoFilter, d)
}

// Apply splits ops by child, keeping their order within each child, and
// applies each child's part as one batch. See the package documentation
// for what is atomic.
func (ms *multiShard) Apply(ops []engine.StoreOp) error {
	return ms.apply(ops, true)
}

// ApplyNoSync is Apply without the children's fsyncs (engine.NoSyncApplier).
func (ms *multiShard) ApplyNoSync(ops []engine.StoreOp) error {
	return ms.apply(ops, false)
}

func (ms *multiShard) apply(ops []engine.StoreOp, sync bool) error {
	if ms.closed {
		return errors.New("kahadb: shard store is closed")
	}
	for _, c := range ms.children {
		c.ops = c.ops[:0]
	}
	send := func(c *child, op engine.StoreOp) { c.ops = append(c.ops, op) }
	var removedDests []message.Destination
	for i := range ops {
		op := ops[i]
		switch op.Kind {
		case engine.OpAddJob, engine.OpRemoveJob:
			send(ms.jobs, op)
		case engine.OpPrepare:
			// Each child logs its share under the same XID, as mKahaDB's
			// children do; a transaction with nothing stored is logged by
			// the jobs child, so that it is still known after a restart.
			if err := ms.splitPrepare(op.Tx, send); err != nil {
				return err
			}
		case engine.OpCommit, engine.OpRollback:
			for _, c := range ms.children {
				send(c, op)
			}
		case engine.OpRemoveSub:
			// The subscription's record is in its topic's child, its
			// references on the topics it matched may be in any.
			for _, c := range ms.children {
				send(c, op)
			}
			delete(ms.subs, op.Sub.Key)
		case engine.OpAddSub:
			d := op.Sub.Destination
			if d.IsZero() {
				d = op.Dest
			}
			c, err := ms.target(d)
			if err != nil {
				return err
			}
			send(c, op)
			ms.subs[op.Sub.Key] = op.Sub.Destination
		default:
			c, err := ms.target(op.Dest)
			if err != nil {
				if op.Kind == engine.OpAddDest && errors.Is(err, ErrNoFilter) {
					// DEVIATION: ActiveMQ's mKahaDB refuses to create a
					// destination no filter takes ("No matching persistence
					// adapter"); Wharf creates it and keeps nothing of it
					// until a message for it fails as ActiveMQ's would.
					continue
				}
				return err
			}
			send(c, op)
			if op.Kind != engine.OpRemoveDest {
				continue
			}
			removedDests = append(removedDests, op.Dest)
			if !op.Dest.Type.IsTopic() {
				continue
			}
			// Removing a topic removes its durable subscriptions, whose
			// references may be in other children.
			for k, d := range ms.subs {
				if d != op.Dest {
					continue
				}
				for _, o := range ms.children {
					if o != c {
						send(o, engine.StoreOp{Kind: engine.OpRemoveSub, Sub: engine.DurableSub{Key: k, Destination: d}})
					}
				}
				delete(ms.subs, k)
			}
		}
	}
	if err := ms.checkDuplicates(ops); err != nil {
		return err
	}
	applied := 0
	for _, c := range ms.children {
		if len(c.ops) == 0 {
			continue
		}
		if err := c.ss.apply(c.ops, sync); err != nil {
			if applied > 0 {
				return fmt.Errorf("kahadb: mKahaDB child %s (after %d other children applied their part): %w", filepath.Base(c.dir), applied, err)
			}
			return fmt.Errorf("kahadb: mKahaDB child %s: %w", filepath.Base(c.dir), err)
		}
		applied++
		clear(c.ops)
	}
	for _, d := range removedDests {
		delete(ms.route, d)
	}
	return nil
}

// splitPrepare sends each child its share of t.
func (ms *multiShard) splitPrepare(t *engine.PreparedTx, send func(*child, engine.StoreOp)) error {
	key := t.XID.String()
	shares := map[*child]*engine.PreparedTx{}
	var order []*child
	get := func(d message.Destination) (*engine.PreparedTx, error) {
		c, err := ms.target(d)
		if err != nil {
			return nil, err
		}
		sh := shares[c]
		if sh == nil {
			if c.ss.prepared[key] != nil {
				return nil, fmt.Errorf("kahadb: mKahaDB child %s: transaction %s is already prepared", filepath.Base(c.dir), key)
			}
			sh = &engine.PreparedTx{XID: t.XID}
			shares[c] = sh
			order = append(order, c)
		}
		return sh, nil
	}
	for _, m := range t.Adds {
		sh, err := get(m.Destination)
		if err != nil {
			return err
		}
		sh.Adds = append(sh.Adds, m)
	}
	for _, a := range t.Acks {
		sh, err := get(a.Dest)
		if err != nil {
			return err
		}
		sh.Acks = append(sh.Acks, a)
	}
	if len(order) == 0 {
		if ms.jobs.ss.prepared[key] != nil {
			return fmt.Errorf("kahadb: transaction %s is already prepared", key)
		}
		shares[ms.jobs] = &engine.PreparedTx{XID: t.XID}
		order = append(order, ms.jobs)
	}
	for _, c := range order {
		send(c, engine.StoreOp{Kind: engine.OpPrepare, Tx: shares[c]})
	}
	return nil
}

// checkDuplicates refuses, before any child writes, a batch holding an
// OpAdd of a (destination, seq) that is stored or added earlier in the
// batch: the one failure a child's Apply detects before writing, checked
// here so that it fails the whole batch and not only one child's part.
// It is conservative: where a batch's acks or subscription removals may
// have dropped a message it leaves the decision to the child.
func (ms *multiShard) checkDuplicates(ops []engine.StoreOp) error {
	const (
		present = iota + 1
		absent
		unknown
	)
	var state map[msgKey]int
	cleared := map[message.Destination]bool{}
	subRemoved := false
	for i := range ops {
		op := &ops[i]
		k := msgKey{op.Dest, op.Seq}
		switch op.Kind {
		case engine.OpAdd:
			if state == nil {
				state = map[msgKey]int{}
			}
			st := state[k]
			if st == 0 && !cleared[op.Dest] && !(subRemoved && op.Dest.Type.IsTopic()) {
				if c := ms.route[op.Dest]; c != nil {
					if _, ok := c.ss.msgs[k]; ok {
						st = present
					}
				}
			}
			if st == present {
				return fmt.Errorf("kahadb: op %d: %w", i, errDuplicateAdd(op))
			}
			if !op.Dest.Type.IsTopic() || len(op.Subs) > 0 {
				state[k] = present
			}
		case engine.OpRemove:
			if state != nil {
				state[k] = absent
			} else {
				state = map[msgKey]int{k: absent}
			}
		case engine.OpAck:
			if state == nil {
				state = map[msgKey]int{}
			}
			if state[k] != absent {
				state[k] = unknown
			}
		case engine.OpRemoveSub:
			subRemoved = true
		case engine.OpRemoveDest:
			cleared[op.Dest] = true
			for sk := range state {
				if sk.dest == op.Dest {
					state[sk] = absent
				}
			}
			if op.Dest.Type.IsTopic() {
				subRemoved = true
			}
		}
	}
	return nil
}

func errDuplicateAdd(op *engine.StoreOp) error {
	return fmt.Errorf("duplicate add of %s seq %d", op.Dest, op.Seq)
}

// Recover yields every child's destinations, then every child's
// subscriptions, then every child's messages, then the scheduled jobs, as
// engine.ShardStore requires.
func (ms *multiShard) Recover(fn func(engine.RecoveredItem) error) error {
	return ms.recover(fn, false)
}

// RecoverStubs is Recover with the pending messages as stubs
// (engine.MessageLoader); their references name the child.
func (ms *multiShard) RecoverStubs(fn func(engine.RecoveredItem) error) error {
	ms.loaders = make([]*shardStore, len(ms.children))
	for i, c := range ms.children {
		ms.loaders[i] = c.ss
	}
	return ms.recover(fn, true)
}

// LoadMessage reads a stub's message from the child its reference names
// (engine.MessageLoader).
func (ms *multiShard) LoadMessage(ref engine.StoreRef) (*message.Message, error) {
	if int(ref.Part) >= len(ms.loaders) {
		return nil, fmt.Errorf("kahadb: load message: no mKahaDB child %d", ref.Part)
	}
	return ms.loaders[ref.Part].LoadMessage(ref)
}

func (ms *multiShard) recover(fn func(engine.RecoveredItem) error, stubs bool) error {
	if ms.closed {
		return errors.New("kahadb: shard store is closed")
	}
	// Each child yields its destinations first, then its subscriptions
	// (memory's order): the first passes stop at the first item past them.
	errDone := errors.New("done")
	for _, c := range ms.children {
		err := c.ss.idx.Recover(func(it engine.RecoveredItem) error {
			if !it.Created {
				return errDone
			}
			return fn(it)
		})
		if err != nil && !errors.Is(err, errDone) {
			return err
		}
	}
	for _, c := range ms.children {
		err := c.ss.idx.Recover(func(it engine.RecoveredItem) error {
			if it.Created {
				return nil
			}
			if it.Sub == nil {
				return errDone
			}
			return fn(it)
		})
		if err != nil && !errors.Is(err, errDone) {
			return err
		}
	}
	var jobs []engine.RecoveredItem
	// A transaction's shares in several children are yielded as one,
	// after every message.
	var txs []*engine.PreparedTx
	byXID := map[string]*engine.PreparedTx{}
	for i, c := range ms.children {
		err := c.ss.recoverItems(func(it engine.RecoveredItem) error {
			switch {
			case it.Created, it.Sub != nil:
				return nil
			case it.Job != nil:
				jobs = append(jobs, it)
				return nil
			case it.Tx != nil:
				k := it.Tx.XID.String()
				if t := byXID[k]; t != nil {
					t.Adds = append(t.Adds, it.Tx.Adds...)
					t.Acks = append(t.Acks, it.Tx.Acks...)
					return nil
				}
				t := *it.Tx
				byXID[k] = &t
				txs = append(txs, &t)
				return nil
			}
			return fn(it)
		}, uint32(i), stubs)
		if err != nil {
			return err
		}
	}
	for _, t := range txs {
		if err := fn(engine.RecoveredItem{Tx: t}); err != nil {
			return err
		}
	}
	for _, it := range jobs {
		if err := fn(it); err != nil {
			return err
		}
	}
	return nil
}

// Housekeep runs each open child's timed work (engine.Housekeeper).
func (ms *multiShard) Housekeep() error {
	if ms.closed {
		return nil
	}
	var errs []error
	for _, c := range ms.children {
		if err := c.ss.Housekeep(); err != nil {
			errs = append(errs, fmt.Errorf("kahadb: mKahaDB child %s: %w", filepath.Base(c.dir), err))
		}
	}
	return errors.Join(errs...)
}

// Syncs reports whether any child fsyncs its batches.
func (ms *multiShard) Syncs() bool {
	for _, c := range ms.children {
		if c.ss.Syncs() {
			return true
		}
	}
	for i := range ms.m.opts.Filters {
		if ms.m.opts.Filters[i].Options.EnableJournalDiskSyncs {
			return true // a perDestination child not opened yet
		}
	}
	return false
}

// Close closes the shard in every child.
func (ms *multiShard) Close() error {
	if ms.closed {
		return nil
	}
	ms.closed = true
	var errs []error
	for _, c := range ms.children {
		errs = append(errs, c.ss.Close())
	}
	return errors.Join(errs...)
}
