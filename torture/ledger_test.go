package torture

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// The bank-style checker. Every message body is a unique key. Producers
// say when a key is about to be sent (sending: it may be stored from then
// on) and when the broker confirmed it (sent: a receipt, a Response, a
// PUBACK/PUBCOMP, an accepted disposition, a committed transaction).
// Consumers say what they got (delivered, with the protocol's redelivered
// flag) and when the broker confirmed their acknowledgement (confirmed: a
// RECEIPT to an ACK, a Response to a MessageAck or a commit, the broker's
// settling disposition). A stream is one consumer's view of one
// destination: a queue's consumer or one durable subscription.
//
// What must hold:
//   - nothing is delivered that was never sent (its key announced);
//   - a key whose acknowledgement the broker confirmed on a stream is
//     never delivered on that stream again;
//   - every key whose send was confirmed ends up confirmed on each stream
//     of its destination that confirms acks (queues, OpenWire, STOMP and
//     AMQP durable subscriptions), and delivered at least once on the
//     others (MQTT subscriptions, whose PUBACK is never answered): lost = 0;
//   - the keys of one transaction (a local commit, an XA branch) are
//     delivered all or none;
//   - an XA input message is consumed by exactly one committed branch.
//
// Deliveries of a key seen before on the stream (whose ack was never
// confirmed) are duplicates: allowed, counted by protocol, with how many
// carried the redelivered flag (after a broker restart ActiveMQ does not
// set it unless persistJMSRedelivered is on).

type dest struct {
	name      string
	attempted map[string]bool
	acked     map[string]bool
	order     []string // acked keys, in order
	streams   []*stream
}

type stream struct {
	name, proto string
	d           *dest
	confirms    bool // acks are confirmed by the broker
	seen        map[string]int
	confirmed   map[string]map[string]bool // key → the broker message ids whose ack was confirmed
	copies      int                        // deliveries of a second stored copy of a key (a producer's resend)
	acking      map[string]bool            // an ack was sent (confirmed or not)
	unknown     []string                   // delivered before its send was announced
	copyKeys    []string                   // the first keys of copies
	deliveries  int
	dups        int
	dupsFlagged int
	firstFlag   int // first deliveries that carried the redelivered flag
}

type ledger struct {
	mu         sync.Mutex
	dests      map[string]*dest
	streams    map[string]*stream
	groups     [][]string          // dest|key of the keys sent in one transaction
	xa         map[string][]string // XA input key → the outputs of each branch that consumed it, in pairs
	xaGtid     map[string][]string // branch → its outputs
	xaRolled   []string            // branches whose rollback the broker confirmed
	xaOut      string              // the destination XA branches send to
	violations []string
	sendsAcked map[string]int // by protocol
	events     int            // confirmations (sends and acks) so far
	changed    chan struct{}  // closed and replaced on every event
}

func newLedger() *ledger {
	return &ledger{dests: map[string]*dest{}, streams: map[string]*stream{}, xa: map[string][]string{}, xaGtid: map[string][]string{},
		sendsAcked: map[string]int{}, changed: make(chan struct{})}
}

func (l *ledger) dest(name string) *dest {
	d := l.dests[name]
	if d == nil {
		d = &dest{name: name, attempted: map[string]bool{}, acked: map[string]bool{}}
		l.dests[name] = d
	}
	return d
}

// addStream declares a consumer of destination d; confirms says whether its
// acknowledgements are confirmed by the broker.
func (l *ledger) addStream(name, proto, d string, confirms bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &stream{name: name, proto: proto, d: l.dest(d), confirms: confirms, seen: map[string]int{}, confirmed: map[string]map[string]bool{}, acking: map[string]bool{}}
	s.d.streams = append(s.d.streams, s)
	l.streams[name] = s
}

func (l *ledger) bump() {
	l.events++
	close(l.changed)
	l.changed = make(chan struct{})
}

// wait returns a channel closed at the next event and the events so far.
func (l *ledger) wait() (<-chan struct{}, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed, l.events
}

func (l *ledger) violate(format string, args ...any) {
	if len(l.violations) < 200 {
		l.violations = append(l.violations, fmt.Sprintf(format, args...))
	}
}

func (l *ledger) sending(d string, keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	dd := l.dest(d)
	for _, k := range keys {
		dd.attempted[k] = true
	}
}

// sent records confirmed sends by proto; more than one key is one
// transaction, delivered all or none.
func (l *ledger) sent(proto, d string, keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	dd := l.dest(d)
	for _, k := range keys {
		if !dd.attempted[k] {
			l.violate("%s: send of %s confirmed but never announced (test bug)", d, k)
		}
		if !dd.acked[k] {
			dd.acked[k] = true
			dd.order = append(dd.order, k)
			l.sendsAcked[proto]++
		}
	}
	if len(keys) > 1 {
		l.groupLocked(d, keys)
	}
	l.bump()
}

func (l *ledger) groupLocked(d string, keys []string) {
	g := make([]string, len(keys))
	for i, k := range keys {
		g[i] = d + "|" + k
	}
	l.groups = append(l.groups, g)
}

// delivered records a delivery of key on stream s; id is the broker's
// message id, which tells a redelivery from a second stored copy (a
// publisher that sent again what the broker had stored but not
// confirmed: MQTT's persistent session after a kill).
func (l *ledger) delivered(s, key, id string, redelivered bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.streams[s]
	st.deliveries++
	if !st.d.attempted[key] {
		// Checked at the end: the Java client's "SENDING" line may be
		// read after the broker delivered what it sent.
		st.unknown = append(st.unknown, key)
	}
	if ids := st.confirmed[key]; ids != nil {
		if ids[id] {
			l.violate("%s: delivered %q (message id %s) again after its acknowledgement was confirmed (redelivered=%v)", s, key, id, redelivered)
		} else {
			st.copies++
			if len(st.copyKeys) < 10 {
				st.copyKeys = append(st.copyKeys, key)
			}
		}
	}
	if st.seen[key] > 0 {
		st.dups++
		if redelivered {
			st.dupsFlagged++
		}
	} else if redelivered {
		st.firstFlag++
	}
	st.seen[key]++
}

// acking records that the acknowledgement of ds is about to be sent on
// stream s: from then on the broker may have applied it, so a kill before
// its confirmation may leave the message consumed or not.
func (l *ledger) acking(s string, ds ...delivery) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.streams[s]
	for _, d := range ds {
		st.acking[d.key] = true
	}
}

// settled: key, a confirmed send, is accounted for on stream s: its ack
// confirmed, or sent and perhaps applied by the broker before a kill;
// on a stream without confirmations (MQTT), delivered.
func (s *stream) settled(k string) bool {
	if !s.confirms {
		return s.seen[k] > 0
	}
	return s.confirmed[k] != nil || s.acking[k]
}

// delivery is a key and the broker's message id.
type delivery struct{ key, id string }

// confirmed records that the broker confirmed the acknowledgement of ds
// on stream s (more than one: one transaction).
func (l *ledger) confirmed(s string, ds ...delivery) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.streams[s]
	for _, d := range ds {
		if st.seen[d.key] == 0 {
			l.violate("%s: ack of %q confirmed but never delivered (test bug)", s, d.key)
		}
		if st.confirmed[d.key] == nil {
			st.confirmed[d.key] = map[string]bool{}
		}
		st.confirmed[d.key][d.id] = true
	}
	l.bump()
}

// xaBranch records that XA branch gtid consumed in and sends outs (to the
// XA output destination): announced before the branch's sends.
func (l *ledger) xaBranch(gtid, in string, outs ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.xa[in] = append(l.xa[in], outs...)
	l.xaGtid[gtid] = outs
	l.groupLocked(l.xaOut, outs)
}

// xaRolledBack records that the broker confirmed the rollback of branch
// gtid: none of its sends may ever be delivered.
func (l *ledger) xaRolledBack(gtid string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.xaRolled = append(l.xaRolled, gtid)
	l.bump()
}

// violateLocked records a broken rule found outside the ledger.
func (l *ledger) violateLocked(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.violate("%s", s)
}

// backlog is how many confirmed sends of d its slowest stream has not
// yet seen: producers hold back above a bound, so that the consumers keep
// up and the final drain is short.
func (l *ledger) backlog(d string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	dd := l.dest(d)
	worst := 0
	for _, s := range dd.streams {
		n := 0
		for _, k := range dd.order[max(0, len(dd.order)-2000):] {
			if s.seen[k] == 0 {
				n++
			}
		}
		worst = max(worst, n)
	}
	return worst
}

// missing counts, per stream, the confirmed sends not yet confirmed (or,
// for MQTT streams, not yet delivered): zero on every stream ends the
// final drain.
func (l *ledger) missing() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for name, s := range l.streams {
		for _, k := range s.d.order {
			if !s.settled(k) {
				out[name]++
			}
		}
	}
	return out
}

// report is the verdict: the totals, and every broken rule.
type report struct {
	sendsAcked             map[string]int
	deliveries, lost       int
	dups, dupsFlagged      map[string]int // by protocol of the consumer
	copies                 map[string]int // second stored copies delivered, by stream
	copyKeys               []string
	redeliveredFirst       int
	lostKeys, bad          []string
	xaBranches, xaCommited int
	xaRolledBack           int
}

func (l *ledger) verdict() report {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := report{sendsAcked: l.sendsAcked, dups: map[string]int{}, dupsFlagged: map[string]int{}, copies: map[string]int{}}
	r.bad = append(r.bad, l.violations...)
	names := make([]string, 0, len(l.streams))
	for n := range l.streams {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := l.streams[n]
		r.deliveries += s.deliveries
		r.dups[s.proto] += s.dups
		r.dupsFlagged[s.proto] += s.dupsFlagged
		if s.copies > 0 {
			r.copies[n] += s.copies
			r.copyKeys = append(r.copyKeys, s.copyKeys...)
		}
		r.redeliveredFirst += s.firstFlag
		for _, k := range s.unknown {
			if !s.d.attempted[k] {
				r.bad = append(r.bad, fmt.Sprintf("%s: delivered %q, which was never sent to %s", n, k, s.d.name))
			}
		}
		for _, k := range s.d.order {
			if !s.settled(k) {
				r.lost++
				if len(r.lostKeys) < 40 {
					r.lostKeys = append(r.lostKeys, fmt.Sprintf("%s:%s(seen %d)", n, k, s.seen[k]))
				}
			}
		}
	}
	// All or none: a transaction's keys, on every stream of their
	// destination.
	for _, g := range l.groups {
		for _, s := range l.streams {
			var got, not []string
			for _, dk := range g {
				d, k, _ := strings.Cut(dk, "|")
				if s.d.name != d {
					continue
				}
				if s.seen[k] > 0 {
					got = append(got, k)
				} else {
					not = append(not, k)
				}
			}
			if len(got) > 0 && len(not) > 0 {
				r.bad = append(r.bad, fmt.Sprintf("%s: transaction delivered in part: got %v, never %v", s.name, got, not))
			}
		}
	}
	// XA: each input consumed by exactly one committed branch (whose
	// outputs were delivered), if its send was confirmed.
	if out := l.dests[l.xaOut]; out != nil {
		for in, outs := range l.xa {
			r.xaBranches += len(outs) / 2
			committed := 0
			for i := 0; i+1 < len(outs); i += 2 {
				for _, s := range out.streams {
					if s.seen[outs[i]] > 0 {
						committed++
						break
					}
				}
			}
			r.xaCommited += committed
			if committed > 1 {
				r.bad = append(r.bad, fmt.Sprintf("XA input %s consumed by %d committed branches", in, committed))
			}
		}
		for _, g := range l.xaRolled {
			for _, k := range l.xaGtid[g] {
				for _, s := range out.streams {
					if s.seen[k] > 0 {
						r.bad = append(r.bad, fmt.Sprintf("%s: %s delivered, sent by XA branch %s whose rollback was confirmed", s.name, k, g))
					}
				}
			}
		}
		r.xaRolledBack = len(l.xaRolled)
	}
	slices.Sort(r.bad)
	return r
}
