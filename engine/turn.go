package engine

// The shard as a step function, in the spirit of etcd raft's Ready: step
// applies one turn's commands to the shard's state and returns what the
// turn produced, a batch; the run loop then executes the batch (execute).
// step performs no I/O of its own but one, the deliveries (see batch), so
// scenario tests (scenario_test.go) drive it command by command and read
// what each turn did.

// batch is one turn's output.
//
// Persistence ordering, which execute honours:
//   - Deliveries go out during the turn, before the turn's store write, as
//     ActiveMQ's concurrentStoreAndDispatchQueues does: a consumer may hold
//     a persistent message before the disk does, and its ack simply
//     follows the add in the same or a later batch (the writer cancels the
//     pair when both meet before the write: writer.go cancelConsumed).
//   - forwards (commands for other shards, or this one's next turn) are
//     posted first, so that what a turn sends on (a dead-letter copy, a
//     credit kick) is queued before anyone hears the turn is over.
//   - replies (answers to control commands: subscribe, close, stats,
//     tick, ...) do not wait for the disk: they are released once the
//     batch is handed to the writer, or, with a store that does not sync,
//     once it is applied (and the store's housekeeping, which Engine.Tick
//     waits for, has run).
//   - comps are released only after the Apply that holds ops has
//     returned, with its error: a persistent send's producer, a confirmed
//     ack (Conn.AckDurable), a commit and an XA prepare are told only
//     once their records are as durable as the store makes them. A batch
//     with a completion is written with a synced Apply; one without (only
//     unconfirmed acks) may be written without a sync (NoSyncApplier).
//
// Deliveries are made inline, not gathered here and handed out by
// execute: a sink's Deliver is the protocol's encoder and socket write,
// and holding up to maxBatch deliveries until the end of the turn would
// add that turn's length to every delivery's latency and make a consumer
// wait for producers' commands it has nothing to do with. They are
// recorded in deliveries only when record is set (scenario tests), which
// costs the run loop one branch per delivery.
type batch struct {
	ops      []StoreOp
	comps    []completion
	replies  []completion
	forwards []forward
	// housekeep: the tick asks for the store's timed work (Housekeeper),
	// run with the batch on the goroutine that applies it.
	housekeep bool

	record     bool
	deliveries []Delivery
}

// forward is a command for a shard's mailbox, posted when the turn's
// batch is executed.
type forward struct {
	to  *shard
	cmd command
}

// forwardTo queues c for shard to (this one included: then it runs on a
// later turn).
func (s *shard) forwardTo(to *shard, c command) {
	s.out.forwards = append(s.out.forwards, forward{to, c})
}

// complete queues a completion to release once the turn's store
// operations are durable.
func (s *shard) complete(op cmdOp, comp Completion, token uint64, err error) {
	if comp != nil {
		s.out.comps = append(s.out.comps, completion{op, comp, token, err})
	}
}

// reply queues the answer to a control command, released when the
// turn's batch is executed, without waiting for a sync: what the command
// did needs no store write to be true.
func (s *shard) reply(c command, err error) {
	if c.comp != nil {
		s.out.replies = append(s.out.replies, completion{c.op, c.comp, c.token, err})
	}
}

// step applies one turn: the commands in order at time now (ms), then
// the end-of-turn work (endTurn). The batch it returns belongs to the
// shard and is valid until execute.
func (s *shard) step(now int64, cmds []command) *batch {
	s.now = now
	for i := range cmds {
		s.handle(cmds[i])
		cmds[i] = command{}
	}
	return s.endTurn()
}

// endTurn ends a turn: parked producers are let in where room was made,
// and the delivery marks the turn raised join its store operations.
func (s *shard) endTurn() *batch {
	s.admitParked()
	return s.finish()
}

// finish adds the delivery marks the turn raised to its store operations.
func (s *shard) finish() *batch {
	if len(s.marked) > 0 {
		s.queueMarks()
	}
	return &s.out
}

// post puts a command in the inbox, waiting while it is full.
func (s *shard) post(c command) error {
	select {
	case s.inbox <- c:
		return nil
	case <-s.quit:
		return ErrClosed
	}
}

// mailbox queues a command without waiting. Safe from any goroutine.
func (s *shard) mailbox(c command) {
	s.mu.Lock()
	s.mail = append(s.mail, c)
	s.mu.Unlock()
	select {
	case s.mailSig <- struct{}{}:
	default:
	}
}

// takeMail appends the mailbox's commands to cmds and empties it.
func (s *shard) takeMail(cmds []command) []command {
	s.mu.Lock()
	cmds = append(cmds, s.mail...)
	clear(s.mail)
	s.mail = s.mail[:0]
	s.mu.Unlock()
	return cmds
}

// handleMail applies what is in the mailbox: the mailbox's slice is
// swapped for the spare one, so that other shards can post meanwhile.
func (s *shard) handleMail() {
	s.mu.Lock()
	mail := s.mail
	s.mail = s.spare[:0]
	s.mu.Unlock()
	for i := range mail {
		s.handle(mail[i])
		mail[i] = command{}
	}
	s.spare = mail[:0]
}

// gather appends to cmds what is waiting in the inbox and the mailbox,
// without waiting, until it holds maxBatch commands (scenario tests).
func (s *shard) gather(cmds []command) []command {
	for len(cmds) < maxBatch {
		select {
		case c := <-s.inbox:
			cmds = append(cmds, c)
		case <-s.mailSig:
			cmds = s.takeMail(cmds)
		default:
			return cmds
		}
	}
	return cmds
}

// run is the shard's goroutine: it waits for a command, and makes a turn
// of it and of whatever else is waiting (up to maxBatch), then executes
// the turn's batch. It is step without the slice: a command is applied
// as it is taken from the inbox rather than gathered first, which spares
// a copy of each command and lets the first deliveries of a turn go out
// while its later commands are still arriving.
func (s *shard) run() {
	defer s.e.wg.Done()
	s.execute(&s.out) // what recovery produced (advisories for other shards)
	for {
		select {
		case c := <-s.inbox:
			s.now = s.e.now().UnixMilli()
			s.handle(c)
		case <-s.mailSig:
			s.now = s.e.now().UnixMilli()
			s.handleMail()
		case <-s.quit:
			s.stop()
			return
		}
	turn:
		for i := 0; i < maxBatch; i++ {
			select {
			case c := <-s.inbox:
				s.handle(c)
			case <-s.mailSig:
				s.handleMail()
			default:
				break turn
			}
		}
		s.execute(s.endTurn())
	}
}

// stop is the last turn: what is still queued is applied, parked sends
// fail, and the batch is written before the shard's temp store closes.
func (s *shard) stop() {
	var cmds []command
	for {
		select {
		case c := <-s.inbox:
			cmds = append(cmds, c)
			continue
		default:
		}
		break
	}
	cmds = s.takeMail(cmds)
	for i := range cmds {
		s.handle(cmds[i])
	}
	for d := range s.blocked {
		for _, p := range d.blocked {
			s.complete(opSend, p.comp, p.token, ErrClosed)
		}
	}
	s.execute(s.finish())
	s.closeTemp()
}

// execute carries a turn's batch out in the order its doc comment states:
// forwards, then the store operations with one Apply (group commit; with a
// syncing store, handed to the writer, which applies them on its
// goroutine) and the completions that waited for them, then the replies.
func (s *shard) execute(b *batch) {
	for i := range b.forwards {
		f := &b.forwards[i]
		f.to.mailbox(f.cmd)
	}
	clear(b.forwards)
	b.forwards = b.forwards[:0]
	clear(b.deliveries)
	b.deliveries = b.deliveries[:0]
	s.write(b)
	for i := range b.replies {
		c := &b.replies[i]
		c.comp.Complete(c.token, c.err)
	}
	clear(b.replies)
	b.replies = b.replies[:0]
}

// write hands the batch's store operations and completions to the writer,
// or, with a store that does not sync, applies them and releases the
// completions itself.
func (s *shard) write(b *batch) {
	housekeep := b.housekeep
	b.housekeep = false
	if s.writer != nil {
		if len(b.ops) == 0 && len(b.comps) == 0 && !housekeep {
			return
		}
		// The batch now belongs to the writer; the next turn starts fresh
		// slices (one allocation per turn, not per message).
		s.writer.in <- writeBatch{ops: b.ops, comps: b.comps, housekeep: housekeep}
		b.ops, b.comps = nil, nil
		return
	}
	var storeErr error
	if len(b.ops) > 0 {
		if s.store != nil {
			storeErr = s.store.Apply(b.ops)
			if storeErr != nil {
				s.log.Error("store write failed", "ops", len(b.ops), "err", storeErr)
			}
		}
		clear(b.ops)
		b.ops = b.ops[:0]
	}
	if housekeep {
		if h, ok := s.store.(Housekeeper); ok {
			if err := h.Housekeep(); err != nil {
				s.log.Error("store housekeeping failed", "err", err)
			}
		}
	}
	for i := range b.comps {
		c := &b.comps[i]
		err := c.err
		if err == nil {
			err = storeErr
		}
		c.comp.Complete(c.token, err)
	}
	clear(b.comps)
	b.comps = b.comps[:0]
}
