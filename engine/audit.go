package engine

import (
	"strconv"
	"strings"

	"wharf/engine/message"
)

// Producer audit: ActiveMQ's suppression of a persistent message a
// producer sends again with a producer sequence id it has already had
// stored. ActiveMQ's KahaDB records the last producer sequence id of every
// stored add (MessageDatabase.updateIndex: producerSequenceIdTracker) and
// TransportConnection.getProducerBrokerExchange asks the persistence
// adapter for it (getLastProducerSequenceId) when the connection is a
// failover client's reconnection (ConnectionInfo.failoverReconnect) or a
// network connection on a connector with auditNetworkProducers="true";
// ProducerBrokerExchange.canDispatch then answers such a send as done
// and drops it ("suppressing duplicate message send").
//
// Wharf keeps the audit in the shard that owns the destination: per
// destination, the highest producer sequence id stored per producer id,
// updated as each persistent message is accepted for the store, and
// recovered at start from the store (ProducerAuditor) and the messages it
// recovers. A Conn with SetProducerAudit(true) has its plain,
// non-transacted sends checked against it.
//
// DEPARTURE from ActiveMQ: its audit is one per store (broker-wide for a
// single KahaDB) and compares against the highest sequence id of the
// producer over every destination; Wharf's is per destination, so that a
// bridge forwarding two queues' messages of one producer in an order of
// its own never drops the lower-numbered one as a duplicate. Each
// destination tracks at most MaxAuditedProducers producers (ActiveMQ's
// ActiveMQMessageAuditNoSync tracks 64 per store, least recently used
// first out; Wharf drops an arbitrary one).

// MaxAuditedProducers is how many producers a destination's audit keeps:
// ActiveMQMessageAuditNoSync.MAXIMUM_PRODUCER_COUNT.
const MaxAuditedProducers = 64

// ProducerAuditor is implemented by a ShardStore that keeps the producer
// audit across restarts (ActiveMQ's KahaDB keeps it in its index). After
// Recover (or RecoverStubs) the engine calls ProducerAudit, which calls fn
// for each destination and producer id it knows with the highest producer
// sequence id of the producer's messages ever added to the destination.
// A store without it is audited from the messages it recovers, as
// ActiveMQ's JDBC store answers from the messages it holds
// (SELECT MAX(MSGID_SEQ)).
type ProducerAuditor interface {
	ProducerAudit(fn func(d message.Destination, producer string, seq int64)) error
}

// SplitMessageID splits an ActiveMQ message id, "<producer id>:<producer
// sequence id>", into its producer id and sequence id. ok is false for an
// id without a numeric last part (a message id a client chose freely,
// AMQP's or MQTT's), which the audit leaves alone. It does not allocate.
func SplitMessageID(id string) (producer string, seq int64, ok bool) {
	i := strings.LastIndexByte(id, ':')
	if i <= 0 || i == len(id)-1 {
		return "", 0, false
	}
	for j := i + 1; j < len(id); j++ {
		if id[j] < '0' || id[j] > '9' {
			return "", 0, false
		}
	}
	n, err := strconv.ParseInt(id[i+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return id[:i], n, true
}

// SetProducerAudit turns the producer audit on for the connection's sends
// (a failover client's reconnection; a network bridge on a connector with
// auditNetworkProducers). Called from the connection's goroutine.
func (c *Conn) SetProducerAudit(on bool) { c.audit = on }

// auditNote records stored message m of d in d's audit. On the send path
// for persistent messages: no allocation but for a producer d has not seen.
func (s *shard) auditNote(d *destination, id string) {
	p, seq, ok := SplitMessageID(id)
	if !ok {
		return
	}
	s.auditSet(d, p, seq)
}

func (s *shard) auditSet(d *destination, p string, seq int64) {
	if last, ok := d.audit[p]; ok {
		if seq > last {
			d.audit[p] = seq
		}
		return
	}
	if d.audit == nil {
		d.audit = make(map[string]int64)
	}
	if len(d.audit) >= MaxAuditedProducers {
		for k := range d.audit {
			delete(d.audit, k)
			break
		}
	}
	// A copy: the id may be a slice of a larger block (Conn.NextMessageID).
	d.audit[strings.Clone(p)] = seq
}

// auditDuplicate tells whether m, sent on an audited connection, is a
// persistent message its producer already had stored on its destination
// (ProducerBrokerExchange.canDispatch), and logs it as ActiveMQ does.
func (s *shard) auditDuplicate(m *message.Message) bool {
	if !m.Persistent || s.store == nil || m.Destination.Type.IsTemp() {
		return false
	}
	d := s.dests[m.Destination]
	if d == nil || d.audit == nil {
		return false
	}
	p, seq, ok := SplitMessageID(m.ID)
	if !ok {
		return false
	}
	last, ok := d.audit[p]
	if !ok || seq > last {
		return false
	}
	s.log.Warn("suppressing duplicate message send", "msg_id", m.ID, "dest", m.Destination.String(),
		"producer_sequence_id", seq, "last_stored", last)
	return true
}

// recoverAudit loads the store's producer audit after recovery.
func (s *shard) recoverAudit() error {
	pa, ok := s.store.(ProducerAuditor)
	if !ok {
		return nil
	}
	return pa.ProducerAudit(func(dd message.Destination, p string, seq int64) {
		if d := s.dest(dd, false); d != nil {
			s.auditSet(d, p, seq)
		}
	})
}

// The cursor audit: ActiveMQ's queue cursor (AbstractStoreCursor.
// recoverMessage with the destination's ActiveMQMessageAudit, policy
// enableAudit, true by default) drops a message whose id it has already
// seen, "cursor got duplicate send", whoever sends it: a message a client
// sends twice is queued once while the broker runs, even after the first
// copy was consumed, as long as the id is within the last maxAuditDepth
// sequence ids of its producer (a BitArrayBin per producer, at most
// maxProducersToAudit producers). Wharf checks a client's persistent
// sends to a queue so (only those: a message the broker moves itself — a
// dead letter, a retry from a DLQ, a network replay — is not checked),
// and keeps nothing of it across a restart, as ActiveMQ.
//
// DEPARTURE: ActiveMQ's audit is an LRU of producers; Wharf drops an
// arbitrary producer when a queue tracks MaxProducersToAudit of them.

// auditWindow is a BitArrayBin: one bit per sequence id, in 64-bit words
// covering [first, first+64*len(words)); words is a ring whose word head
// holds first. An id below the window is not a duplicate (too old to
// tell), one above it moves the window up.
type auditWindow struct {
	first int64 // -1 until the first id
	head  int
	words []uint64
}

func newAuditWindow(depth int) *auditWindow {
	// BitArrayBin(windowSize): (windowSize+1)/64 + 1 words.
	return &auditWindow{first: -1, words: make([]uint64, (depth+1)/64+1)}
}

// slot is the word and bit of seq, moving the window up to it if need
// be; ok is false for an id below the window.
func (w *auditWindow) slot(seq int64, grow bool) (int, uint64, bool) {
	if seq < 0 {
		return 0, 0, false
	}
	if w.first < 0 {
		if !grow {
			return 0, 0, false
		}
		w.first = seq - seq%64
	}
	if seq < w.first {
		return 0, 0, false
	}
	n := int64(len(w.words))
	bin := (seq - w.first) / 64
	if bin >= n {
		if !grow {
			return 0, 0, false
		}
		over := bin - n + 1
		if over >= n {
			clear(w.words)
			w.head = 0
		} else {
			for range over {
				w.words[w.head] = 0
				w.head = (w.head + 1) % len(w.words)
			}
		}
		w.first += over * 64
		bin = n - 1
	}
	return (w.head + int(bin)) % len(w.words), 1 << (seq % 64), true
}

// testSet marks seq and tells whether it was marked already.
func (w *auditWindow) testSet(seq int64) bool {
	i, bit, ok := w.slot(seq, true)
	if !ok {
		return false
	}
	had := w.words[i]&bit != 0
	w.words[i] |= bit
	return had
}

// unset forgets seq (a send that failed after it was marked).
func (w *auditWindow) unset(seq int64) {
	if i, bit, ok := w.slot(seq, false); ok {
		w.words[i] &^= bit
	}
}

// cursorAudited reports whether m, a client's persistent send to a
// queue, is checked by the cursor audit of d (nil: not yet created).
func (s *shard) cursorAudited(d *destination, m *message.Message) bool {
	if d != nil {
		return d.policy.EnableAudit
	}
	return s.e.opts.PolicyFor(m.Destination).EnableAudit
}

// cursorMark marks m's id in d's cursor audit and tells whether it was
// marked already; w is the producer's window (nil when m's id is not
// ActiveMQ's).
func (s *shard) cursorMark(d *destination, m *message.Message) (w *auditWindow, seq int64, dup bool) {
	p, seq, ok := SplitMessageID(m.ID)
	if !ok {
		return nil, 0, false
	}
	w = d.window[p]
	if w == nil {
		if d.window == nil {
			d.window = make(map[string]*auditWindow)
		}
		if len(d.window) >= max(d.policy.MaxProducersToAudit, 1) {
			for k := range d.window {
				delete(d.window, k)
				break
			}
		}
		w = newAuditWindow(max(d.policy.MaxAuditDepth, 1))
		d.window[strings.Clone(p)] = w
	}
	return w, seq, w.testSet(seq)
}

// sendClient sends a client's message through the cursor audit: a
// duplicate is answered (nil) and dropped.
func (s *shard) sendClient(subj *Subject, m *message.Message) error {
	if !m.Persistent || s.store == nil || m.Destination.Type != message.Queue {
		return s.sendAs(subj, m) // the cheap tests first: the hot path
	}
	d := s.dests[m.Destination]
	if !s.cursorAudited(d, m) {
		return s.sendAs(subj, m)
	}
	var w *auditWindow
	var seq int64
	if d != nil {
		var dup bool
		if w, seq, dup = s.cursorMark(d, m); dup {
			s.log.Warn("cursor got duplicate send", "dest", m.Destination.String(), "msg_id", m.ID)
			return nil
		}
	}
	if err := s.sendAs(subj, m); err != nil {
		if w != nil {
			w.unset(seq)
		}
		return err
	}
	if d == nil {
		// The send created the queue: mark it now.
		if d = s.dests[m.Destination]; d != nil {
			s.cursorMark(d, m)
		}
	}
	return nil
}
