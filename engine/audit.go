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
