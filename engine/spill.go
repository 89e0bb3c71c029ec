package engine

import (
	"wharf/engine/message"
)

// Spilling non-persistent messages to the temp store, as ActiveMQ's
// FilePendingMessageCursor does for queues and topic subscriptions: while a
// destination's memory usage is past cursorMemoryHighWaterMark of its limit
// (the destination's memoryLimit, or the broker's memoryUsage), a new
// non-persistent message that has to wait is written to the shard's temp
// store and only a stub stays in memory: its entry, with msg nil, the
// priority and expiration that ordering and sweeps need, and tmp, where the
// record is. The stub keeps its place in the pending deque, so a spilled
// message neither overtakes nor is overtaken. It is read back (load) when
// dispatch reaches it; browsing and expiry read it without loading it
// (peek). Memory usage counts what is in memory; the temp usage counts the
// temp store's live records.
//
// Never spilled: persistent messages (the store holds them), messages of
// temporary destinations (ActiveMQ gives them a VM cursor) and of queues
// whose policy asks for the VM cursor (Policy.VMCursor), and messages
// handed straight to a consumer. Messages put back by a consumer (nack,
// close, rollback) stay in memory: they go to the front of the queue, to be
// dispatched next, as ActiveMQ's redeliveredWaitingDispatch list keeps them.

// DEVIATION: the temp usage counts the bytes of live records, not the temp
// store's files (ActiveMQ counts its PList journal files, dead records
// included until they are cleaned up); a segment is deleted as soon as its
// last record is consumed, so the two stay close. And ActiveMQ writes a
// non-persistent message to the temp store whenever its cursor is past the
// mark; Wharf does so only for a message that has to wait (see spillNew's
// callers), which is the same for a backlog but saves a write and a read
// for a message a consumer takes at once.

// spillable reports whether m, on d, may go to the temp store.
func (s *shard) spillable(d *destination, m *message.Message) bool {
	return !m.Persistent && !s.tempBroken && !d.d.Type.IsTemp() && !d.policy.VMCursor
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
	lim := s.e.opts.Limits.MemoryLimit
	return lim > 0 && s.e.memUsed.Load()*100 >= lim*hwm
}

// tempFull reports whether the temp usage has reached its limit.
func (s *shard) tempFull() bool {
	lim := s.e.opts.Limits.TempLimit
	return lim > 0 && s.e.tempUsed.Load() >= lim
}

// spillNew spills a new entry when its destination is past the high-water
// mark. enc is the message's encoding when an earlier entry of the same
// message was spilled (topic fan-out encodes once); the encoding is
// returned for the next one, nil when there is none.
func (s *shard) spillNew(e *entry, enc []byte) []byte {
	d := e.dest
	if !s.spillable(d, e.msg) || !s.overHighWater(d) || s.tempFull() {
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
			s.log.Error("temp store unavailable: non-persistent messages stay in memory", "err", err)
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
	d.temp += int64(ref.Len)
	s.e.tempUsed.Add(int64(ref.Len))
	return enc
}

// spillDone gives an encoding buffer back for the next spill.
func (s *shard) spillDone(enc []byte) {
	if enc != nil && cap(enc) <= 1<<20 {
		s.spillBuf = enc[:0]
	}
}

// read decodes a spilled entry's message.
func (s *shard) read(e *entry) (*message.Message, error) {
	rec, err := s.temp.Get(e.tmp)
	if err != nil {
		return nil, err
	}
	return message.UnmarshalBinary(rec)
}

// load brings a spilled entry's message back into memory and frees its
// record. It returns false when the record cannot be read: the message is
// lost, the caller drops the entry (lost).
func (s *shard) load(e *entry) bool {
	m, err := s.read(e)
	s.releaseTemp(e)
	if err != nil {
		s.log.Error("spilled message lost: temp store read failed", "dest", e.dest.d.String(), "err", err)
		return false
	}
	e.msg = m
	e.dest.mem += e.size
	s.e.memUsed.Add(e.size)
	return true
}

// peek reads a spilled entry's message without loading it (browse, expiry,
// advisories); nil when it cannot be read, which is logged.
func (s *shard) peek(e *entry) *message.Message {
	m, err := s.read(e)
	if err != nil {
		s.log.Error("spilled message unreadable: temp store read failed", "dest", e.dest.d.String(), "err", err)
		return nil
	}
	return m
}

// msgOf is e's message, read from the temp store when it is spilled; nil
// when it cannot be read.
func (s *shard) msgOf(e *entry) *message.Message {
	if e.msg != nil {
		return e.msg
	}
	return s.peek(e)
}

// releaseTemp frees a spilled entry's record (freeEntry, load).
func (s *shard) releaseTemp(e *entry) {
	if e.tmp.Len == 0 {
		return // already released (a load that failed)
	}
	s.temp.Release(e.tmp)
	n := int64(e.tmp.Len)
	if d := e.dest; d != nil {
		d.temp -= n
	}
	s.e.tempUsed.Add(-n)
	e.tmp = TempRef{}
	s.freed = true
}

// lost drops an entry whose spilled message could not be read back.
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
