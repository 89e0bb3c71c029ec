package engine

import (
	"context"
	"fmt"
	"slices"

	"wharf/engine/selector"
)

// recover rebuilds the shard's destinations and durable subscriptions from
// its store. It runs before the shard loop starts.
func (s *shard) recover(ctx context.Context) error {
	s.recovering = true
	defer func() { s.recovering = false }()
	subs, msgs, jobs, txs, stubs, retained, created := 0, 0, 0, 0, 0, 0, 0
	recoverAll := s.store.Recover
	if ld, ok := s.store.(MessageLoader); ok {
		// Pending messages stay in the store until dispatch, browsing or
		// expiry needs them (ActiveMQ's store cursor).
		s.loader = ld
		recoverAll = ld.RecoverStubs
	}
	items := 0
	err := recoverAll(func(it RecoveredItem) error {
		// A signal while a large store is recovered stops the start-up.
		if items++; items%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if it.Created {
			// Created as a first client would create it (its policy,
			// virtual-topic registration, wildcard subscribers, the
			// destination advisory AbstractRegion.start fires too).
			if keptDest(it.Dest) {
				created++
				s.dest(it.Dest, true)
			}
			return nil
		}
		if it.Sub != nil {
			subs++
			return s.recoverSub(*it.Sub)
		}
		if it.Tx != nil {
			// After the messages: the ones it acknowledged are held.
			txs++
			return s.recoverTx(it.Tx)
		}
		if it.Job != nil {
			// Without SchedulerSupport they are kept but do not fire, as
			// ActiveMQ leaves its scheduler store alone until the
			// scheduler is turned on again.
			jobs++
			return s.recoverJob(*it.Job)
		}
		if it.Msg == nil && (it.Ref.Len == 0 || s.loader == nil) {
			return fmt.Errorf("recovered item for %s seq %d has neither subscription nor message", it.Dest, it.Seq)
		}
		if it.Dest == RetainStore {
			if it.Msg == nil {
				m, err := s.loader.LoadMessage(it.Ref)
				if err != nil {
					return fmt.Errorf("retained message seq %d: %w", it.Seq, err)
				}
				m.RedeliveryCounter = it.Redeliveries
				it.Msg = m
			}
			retained++
			s.recoverRetained(it)
			return nil
		}
		msgs++
		if it.Msg == nil {
			stubs++
		}
		d := s.dest(it.Dest, true)
		if it.Seq >= d.nextSeq {
			d.nextSeq = it.Seq + 1
		}
		if it.Msg != nil {
			s.auditNote(d, it.Msg.ID)
		}
		if !it.Dest.Type.IsTopic() {
			e := s.recoveredEntry(&it, d)
			s.setStored(e)
			d.pending.pushBack(e)
			return nil
		}
		for _, k := range it.Subs {
			p := s.durables[k]
			if p == nil {
				return fmt.Errorf("message seq %d on %s is kept for durable subscription %s, which the store does not hold", it.Seq, it.Dest, k)
			}
			e := s.recoveredEntry(&it, d)
			if slices.Contains(it.Delivered, k) {
				// Handed to the subscription before the restart (and not
				// acknowledged): this delivery is a redelivery.
				e.redeliveries++
			}
			s.setStored(e)
			p.pending.pushBack(e)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := s.recoverAudit(); err != nil {
		return fmt.Errorf("producer audit: %w", err)
	}
	s.recovered = Recovery{Messages: msgs, Destinations: len(s.dests), DurableSubs: subs,
		PreparedTransactions: txs, ScheduledJobs: jobs, RetainedMessages: retained}
	if created+subs+msgs+jobs+txs+retained > 0 {
		s.log.Info("store recovered", "durable_subs", subs, "messages", msgs, "left_in_store", stubs, "destinations", len(s.dests), "scheduled_jobs", jobs, "prepared_xa_transactions", txs, "retained_messages", retained)
	}
	return nil
}

// Recovery is what the shards recovered from the store at start-up, for
// the broker's start-up summary.
type Recovery struct {
	Messages             int // pending messages, queue and durable-topic
	Destinations         int
	DurableSubs          int
	PreparedTransactions int // prepared XA transactions, in doubt
	ScheduledJobs        int
	RetainedMessages     int
}

// Recovered sums what every shard recovered from the store. Safe from any
// goroutine: the shards set it before their loops start and never again.
func (e *Engine) Recovered() Recovery {
	var r Recovery
	for _, s := range e.shards {
		x := s.recovered
		r.Messages += x.Messages
		r.Destinations += x.Destinations
		r.DurableSubs += x.DurableSubs
		r.PreparedTransactions += x.PreparedTransactions
		r.ScheduledJobs += x.ScheduledJobs
		r.RetainedMessages += x.RetainedMessages
	}
	return r
}

// recoveredEntry is the entry of a recovered pending message: a stub, in
// the store and not in memory, when the store handed one.
func (s *shard) recoveredEntry(it *RecoveredItem, d *destination) *entry {
	if it.Msg != nil {
		return s.newEntry(it.Seq, it.Msg, d)
	}
	e := s.allocEntry()
	*e = entry{seq: it.Seq, dest: d, redeliveries: it.Redeliveries, size: it.Size, prio: it.Priority, exp: it.Expiration, ref: it.Ref, in: s.now}
	return e
}

func (s *shard) recoverSub(ds DurableSub) error {
	var sel *selector.Selector
	if ds.Selector != "" {
		var err error
		// DEVIATION: whether a stored STOMP subscription compared strings
		// numerically is not stored; recovered selectors use JMS rules.
		sel, err = selector.Parse(ds.Selector)
		if err != nil {
			return fmt.Errorf("durable subscription %s: %w", ds.Key, err)
		}
	}
	p := &part{
		durable: &ds,
		spec:    SubSpec{Destination: ds.Destination, Selector: ds.Selector, NoLocal: ds.NoLocal, DurableName: ds.Key.Name},
		sel:     sel,
		// A restart counts as the start of the offline time.
		offlineSince: s.now,
	}
	s.durables[ds.Key] = p
	s.attachPattern(p)
	e := s.e
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.durables[ds.Key]
	if r == nil {
		r = &durableReg{sub: ds}
		e.durables[ds.Key] = r
	}
	r.shards = append(r.shards, s.idx)
	return nil
}
