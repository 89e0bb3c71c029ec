package jolokia

import (
	"sort"

	"wharf/engine"
	"wharf/engine/message"
)

// mbean is one managed bean as JMX describes it: a name, a Java class for
// list, attributes and operations. Values are JSON-ready already (numbers,
// strings, bools, maps and slices of them), in Jolokia's rendering.
type mbean struct {
	name  objectName
	class string
	desc  string
	attrs []attribute
	// ops builds the operations, nil when there are none: only exec and
	// list need them, and a queue has many.
	ops func() []operation
	// setters are the writable attributes' setters, by name, given the
	// value converted to the attribute's type (int64 or bool); the
	// others are read-only.
	setters map[string]func(v any) error
}

func (b *mbean) operations() []operation {
	if b.ops == nil {
		return nil
	}
	return b.ops()
}

type attribute struct {
	name string
	typ  string // Java type, for list ("long", "java.lang.String")
	desc string
	get  func() any
}

type operation struct {
	name string
	desc string
	ret  string // Java return type
	args []argInfo
	// changes: it changes the broker (what a browse does not), which
	// the log records, and which makes the request's snapshot stale.
	changes bool
	run     func(args []any) (any, error)
}

type argInfo struct{ name, typ, desc string }

func (b *mbean) attr(name string) *attribute {
	for i := range b.attrs {
		if b.attrs[i].name == name {
			return &b.attrs[i]
		}
	}
	return nil
}

// signature is "name(type,type)", the form Jolokia accepts to pick one
// of several overloaded operations.
func (o *operation) signature() string {
	s := o.name + "("
	for i, a := range o.args {
		if i > 0 {
			s += ","
		}
		s += a.typ
	}
	return s + ")"
}

// objectNameValue is how Jolokia renders an ObjectName value.
func objectNameValue(on objectName) map[string]any {
	return map[string]any{"objectName": on.canonical()}
}

func objectNameList(ns []objectName) []any {
	out := make([]any, len(ns))
	for i, n := range ns {
		out[i] = objectNameValue(n)
	}
	return out
}

// snapshot is the view of the broker one HTTP request works on: the
// destination counters are read once, the first time an attribute needs
// them, so that a wildcard read of every queue costs one pass over the
// shards, not one per queue. A snapshot belongs to the goroutine serving
// its request; an operation that changes the broker drops what it read
// (reset), so that the next request of a bulk sees the change.
type snapshot struct {
	h *Handler

	stats    map[message.Destination]engine.DestinationStats // nil until read
	one      map[message.Destination]engine.DestinationStats // read one by one (lookup)
	durables []engine.DurableSubInfo
	conns    []engine.ConnectionInfo
	cons     []engine.ConsumerInfo // non-durable ones
	prods    []engine.ProducerInfo
	read     struct{ durables, conns, cons, prods, network bool }
	network  []engine.NetworkConnectorInfo
	// durableCounts: each durable subscription's sizes and counters, read
	// on first use (durableCounters).
	durableCounts map[engine.SubKey]engine.SubCounters
}

func (s *snapshot) reset() { *s = snapshot{h: s.h} }

func (s *snapshot) allStats() map[message.Destination]engine.DestinationStats {
	if s.stats == nil {
		all := s.h.e.AllStats()
		s.stats = make(map[message.Destination]engine.DestinationStats, len(all))
		for _, d := range all {
			s.stats[d.Destination] = d.Stats
		}
	}
	return s.stats
}

// destStats reads one destination's counters: from the pass over every
// destination if one was made, else from its shard alone.
func (s *snapshot) destStats(d message.Destination) engine.DestinationStats {
	if s.stats != nil {
		return s.stats[d]
	}
	st, ok := s.one[d]
	if !ok {
		st = s.h.e.Stats(d)
		if s.one == nil {
			s.one = map[message.Destination]engine.DestinationStats{}
		}
		s.one[d] = st
	}
	return st
}

func (s *snapshot) durableSubs() []engine.DurableSubInfo {
	if !s.read.durables {
		s.read.durables = true
		s.durables = s.h.e.DurableSubsInfo()
		sort.Slice(s.durables, func(i, j int) bool {
			return s.durables[i].Key.String() < s.durables[j].Key.String()
		})
	}
	return s.durables
}

// durableCounters returns what durable subscription k holds and counts,
// reading every durable subscription's in one pass over the shards the
// first time.
func (s *snapshot) durableCounters(k engine.SubKey) engine.SubCounters {
	if s.durableCounts == nil {
		all := s.h.e.DurableSubsStats()
		s.durableCounts = make(map[engine.SubKey]engine.SubCounters, len(all))
		for _, d := range all {
			s.durableCounts[d.Key] = d.SubCounters
		}
	}
	return s.durableCounts[k]
}

func (s *snapshot) connections() []engine.ConnectionInfo {
	if !s.read.conns {
		s.read.conns = true
		s.conns = s.h.e.Connections()
		sort.Slice(s.conns, func(i, j int) bool { return s.conns[i].ID < s.conns[j].ID })
	}
	return s.conns
}

// consumers are the open non-durable consumers, sorted by id.
func (s *snapshot) consumers() []engine.ConsumerInfo {
	if !s.read.cons {
		s.read.cons = true
		for _, c := range s.h.e.Consumers() {
			if c.DurableName == "" {
				s.cons = append(s.cons, c)
			}
		}
		sort.Slice(s.cons, func(i, j int) bool { return s.cons[i].ID < s.cons[j].ID })
	}
	return s.cons
}

// producers are the registered producers, sorted by id.
func (s *snapshot) producers() []engine.ProducerInfo {
	if !s.read.prods {
		s.read.prods = true
		s.prods = s.h.e.Producers()
		sort.Slice(s.prods, func(i, j int) bool { return s.prods[i].ID < s.prods[j].ID })
	}
	return s.prods
}

// destinations are the destinations shown as MBeans, sorted by kind
// (Queue, Topic, TempQueue, TempTopic) and name.
func (s *snapshot) destinations() []message.Destination {
	var out []message.Destination
	for d := range s.allStats() {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Type != out[j].Type {
			return out[i].Type < out[j].Type
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// candidate is an MBean's name and how to build the bean: a request
// builds only the beans its name or pattern matches.
type candidate struct {
	name  objectName
	build func() *mbean
}

// candidates names every MBean the broker has now.
func (s *snapshot) candidates() []candidate {
	h := s.h
	out := []candidate{
		{h.brokerName(), s.brokerBean},
		{h.under("service", "Health"), s.healthBean},
	}
	if p := h.opts.PersistenceAdapter; p != nil {
		out = append(out, candidate{h.persistenceAdapterName(p), func() *mbean { return s.persistenceAdapterBean(p) }})
	}
	for _, c := range h.opts.Connectors {
		out = append(out, candidate{h.connectorName(c), func() *mbean { return s.connectorBean(c) }})
	}
	out = append(out, s.networkCandidates()...)
	for _, d := range s.destinations() {
		out = append(out, candidate{h.destinationName(d), func() *mbean { return s.destinationBean(d) }})
	}
	for _, ds := range s.durableSubs() {
		out = append(out, candidate{h.durableName(ds.DurableSub), func() *mbean { return s.durableBean(ds) }})
	}
	for _, c := range s.consumers() {
		out = append(out, candidate{h.consumerName(c), func() *mbean { return s.consumerBean(c) }})
	}
	for _, p := range s.producers() {
		out = append(out, candidate{h.producerName(p), func() *mbean { return s.producerBean(p) }})
	}
	for _, c := range s.connections() {
		for _, view := range connectionViews(c) {
			name := h.connectionName(c, view)
			out = append(out, candidate{name, func() *mbean { return s.connectionBean(c, name) }})
		}
	}
	return out
}

// all builds every MBean the broker has now.
func (s *snapshot) all() []*mbean {
	cs := s.candidates()
	out := make([]*mbean, len(cs))
	for i, c := range cs {
		out[i] = c.build()
	}
	return out
}

// find returns the MBeans that name (a name or a pattern) matches.
func (s *snapshot) find(on objectName) []*mbean {
	if b, ok := s.lookup(on); ok {
		if b == nil {
			return nil
		}
		return []*mbean{b}
	}
	var out []*mbean
	for _, c := range s.candidates() {
		if on.matches(c.name) {
			out = append(out, c.build())
		}
	}
	return out
}

// lookup finds the queue or topic bean a plain name names without
// listing every destination: what a poller reading one queue at a time
// asks for. ok is false when the name is not a destination's or its
// value is not a name as written (ActiveMQ's encoding is lossy): find
// then searches them all.
func (s *snapshot) lookup(on objectName) (b *mbean, ok bool) {
	kind, _ := on.get("destinationType")
	name, _ := on.get("destinationName")
	if on.isPattern() || len(on.props) != 4 || name == "" || encodePart(name) != name {
		return nil, false
	}
	var d message.Destination
	switch kind {
	case "Queue":
		d = message.QueueDest(name)
	case "Topic":
		d = message.TopicDest(name)
	default:
		return nil, false
	}
	if !s.destStats(d).Exists {
		return nil, false // a destination whose name encodes to this one may exist
	}
	if !on.matches(s.h.destinationName(d)) {
		return nil, true
	}
	return s.destinationBean(d), true
}
