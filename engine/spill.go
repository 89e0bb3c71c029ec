package engine

import (
	"wharf/engine/message"
)

// Paging messages out of memory, as ActiveMQ's pending-message cursors
// do: the FilePendingMessageCursor for non-persistent messages, the store
// cursor (StoreQueueCursor, QueueStorePrefetch, the durable subscriber's
// cursor) for persistent ones. While a destination's memory usage is past
// cursorMemoryHighWaterMark of its limit (the destination's memoryLimit,
// or the broker's memoryUsage), a new message that has to wait is written
// to the shard's temp store and only a stub stays in memory: its entry,
// with msg nil, the priority and expiration that ordering and sweeps need,
// and tmp, where the record is. The stub keeps its place in the pending
// deque, so a paged-out message neither overtakes nor is overtaken. It is
// read back (load) when dispatch reaches it; browsing, expiry, the DLQ and
// advisories read it without loading it (peek).
//
// A persistent message pending at start-up stays in the store when the
// store can hand stubs (MessageLoader.RecoverStubs, KahaDB): its entry
// holds ref, where the store keeps it, and is loaded from the store the
// same way. A persistent message paged out at run time goes to the temp
// store like a non-persistent one: its journal record may not be written
// yet, and the shard must never read the journal before the writer wrote
// it.
//
// Where the body lives: e.msg (in memory, counted in the memory usage),
// else e.tmp (temp store), else e.ref (the store). Memory usage counts
// loaded bodies only; the temp usage counts the temp store's live records
// of non-persistent messages; the store usage counts every stored entry,
// wherever its body is.
//
// Never paged out: messages of temporary destinations (ActiveMQ gives them
// a VM cursor) and of queues whose policy asks for the VM cursor
// (Policy.VMCursor), and messages handed straight to a consumer. Messages
// put back by a consumer (nack, close, rollback) stay in memory: they go
// to the front of the queue, to be dispatched next, as ActiveMQ's
// redeliveredWaitingDispatch list keeps them. Producer flow control follows
// (flowcontrol.go room): a send that can be paged out meets the temp
// limit (non-persistent) or the store limit (persistent), not the memory
// limit.

// DEVIATION: the temp usage counts the bytes of live records, not the temp
// store's files (ActiveMQ counts its PList journal files, dead records
// included until they are cleaned up); a segment is deleted as soon as its
// last record is consumed, so the two stay close. And ActiveMQ writes a
// non-persistent message to the temp store whenever its cursor is past the
// mark; Wharf does so only for a message that has to wait (see spillNew's
// callers), which is the same for a backlog but saves a write and a read
// for a message a consumer takes at once.
//
// DEVIATION: a persistent message paged out at run time is written to the
// temp store too (not counted in the temp usage: the store usage holds
// it); ActiveMQ's store cursor drops it from memory and reads it back from
// the journal. A second copy on disk, in exchange for never reading a
// journal record the writer goroutine may not have written yet.

// spillable reports whether m, on d, may be paged out to the temp store.
func (s *shard) spillable(d *destination, m *message.Message) bool {
	return !s.tempBroken && !d.d.Type.IsTemp() && !d.policy.VMCursor
}

// overHighWater reports whether d's memory, or the broker's, is past the
// cursor memory high-water mark.
func (s *shard) overHighWater(d *destination) bool {
	hwm := int64(d.policy.CursorMemoryHighWaterMark)
	if hwm <= 0 {
		hwm = 70
	}
	if lim := d.policy.MemoryLimit; lim > 0 && d.mem*100 >= lim*hwm {
		return true
	}
	lim := s.e.memLimit.Load()
	return lim > 0 && s.e.memUsed.Load()*100 >= lim*hwm
}

// tempFull reports whether the temp usage has reached its limit.
func (s *shard) tempFull() bool {
	lim := s.e.tempLimit.Load()
	return lim > 0 && s.e.tempUsed.Load() >= lim
}

// spillNew spills a new entry when its destination is past the high-water
// mark. enc is the message's encoding when an earlier entry of the same
// message was spilled (topic fan-out encodes once); the encoding is
// returned for the next one, nil when there is none.
func (s *shard) spillNew(e *entry, enc []byte) []byte {
	d := e.dest
	if !s.spillable(d, e.msg) || !s.overHighWater(d) || !e.stored && s.tempFull() {
		return enc
	}
	if enc == nil {
		// Taken, not borrowed: a send nested in this one (an advisory)
		// may spill too.
		buf := s.spillBuf
		s.spillBuf = nil
		var err error
		if enc, err = e.msg.AppendBinary(buf[:0]); err != nil {
			s.log.Warn("message kept in memory: cannot encode it for the temp store", "dest", d.d.String(), "msg_id", e.msg.ID, "err", err)
			return nil
		}
	}
	if s.temp == nil {
		t, err := s.e.opts.Temp.OpenShard(s.idx)
		if err != nil {
			s.tempBroken = true
			s.log.Error("temp store unavailable: messages stay in memory", "err", err)
			return enc
		}
		s.temp = t
	}
	ref, err := s.temp.Put(enc)
	if err != nil {
		if s.now-s.lastSpillWarn >= 30_000 {
			s.lastSpillWarn = s.now
			s.log.Error("temp store write failed: message kept in memory", "dest", d.d.String(), "err", err)
		}
		return enc
	}
	e.msg = nil
	e.tmp = ref
	d.mem -= e.size
	s.e.memUsed.Add(-e.size)
	if !e.stored {
		d.temp += int64(ref.Len)
		s.e.tempUsed.Add(int64(ref.Len))
	}
	return enc
}

// spillDone gives an encoding buffer back for the next spill.
func (s *shard) spillDone(enc []byte) {
	if enc != nil && cap(enc) <= 1<<20 {
		s.spillBuf = enc[:0]
	}
}

// read decodes a paged-out entry's message, from the temp store or the
// store.
func (s *shard) read(e *entry) (*message.Message, error) {
	if e.tmp.Len == 0 {
		m, err := s.loader.LoadMessage(e.ref)
		if err != nil {
			return nil, err
		}
		// The stub's counter is the stored one, as Recover sets it.
		m.RedeliveryCounter = e.redeliveries
		return m, nil
	}
	rec, err := s.temp.Get(e.tmp)
	if err != nil {
		return nil, err
	}
	return message.UnmarshalBinary(rec)
}

// whereOut names where a paged-out entry's message is, for logs.
func whereOut(e *entry) string {
	if e.tmp.Len == 0 {
		return "store"
	}
	return "temp store"
}

// load brings a paged-out entry's message back into memory and frees its
// temp record (a store keeps its own until the message is removed). It
// returns false when the message cannot be read: the caller drops the
// entry (lost); a message of the store then stays there, to come back at
// the next start.
func (s *shard) load(e *entry) bool {
	m, err := s.read(e)
	if err != nil {
		kept := "no: a non-persistent message is gone"
		if e.stored {
			kept = "yes: the store keeps it, it comes back at the next start"
		}
		s.log.Error("paged-out message taken out of dispatch: read failed", "from", whereOut(e), "dest", e.dest.d.String(), "seq", e.seq,
			"still_stored", kept, "err", err)
	}
	s.releaseTemp(e)
	e.ref = StoreRef{}
	if err != nil {
		return false
	}
	e.msg = m
	e.dest.mem += e.size
	s.e.memUsed.Add(e.size)
	return true
}

// peek reads a paged-out entry's message without loading it (browse,
// expiry, advisories); nil when it cannot be read, which is logged.
func (s *shard) peek(e *entry) *message.Message {
	m, err := s.read(e)
	if err != nil {
		s.log.Error("paged-out message unreadable", "from", whereOut(e), "dest", e.dest.d.String(), "seq", e.seq, "err", err)
		return nil
	}
	return m
}

// msgOf is e's message, read from where it is paged out to when it is not
// in memory; nil when it cannot be read.
func (s *shard) msgOf(e *entry) *message.Message {
	if e.msg != nil {
		return e.msg
	}
	return s.peek(e)
}

// releaseTemp frees a spilled entry's record (freeEntry, load).
func (s *shard) releaseTemp(e *entry) {
	if e.tmp.Len == 0 {
		return // not in the temp store, or already released
	}
	s.temp.Release(e.tmp)
	if n := int64(e.tmp.Len); !e.stored {
		if d := e.dest; d != nil {
			d.temp -= n
		}
		s.e.tempUsed.Add(-n)
	}
	e.tmp = TempRef{}
	s.freed = true
}

// lost drops an entry whose paged-out message could not be read back.
func (s *shard) lost(e *entry) {
	e.dest.discarded++
	s.freeEntry(e)
}

// closeTemp closes the shard's temp store (deleting its files) when the
// shard stops.
func (s *shard) closeTemp() {
	if s.temp != nil {
		if err := s.temp.Close(); err != nil {
			s.log.Warn("temp store close failed", "err", err)
		}
		s.temp = nil
	}
}
