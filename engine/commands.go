package engine

import (
	"strconv"
	"sync"

	"wharf/engine/message"
)

// Commands. Everything that reaches a shard's state is a command posted to
// its inbox (connections, in order with their other commands) or its
// mailbox (other shards, timers): an op and its payload, never a closure
// (but opTestFn, which only tests post), so that a turn can be logged,
// replayed and scripted (scenario_test.go). The hot ops (opSend,
// opForward, opAck, opNack, opKick) carry their payload in the command's
// own fields and post without allocating; the rare control ops point ctl
// at a small struct of their own, which also carries what the shard
// answers. Replies go back through the command's Completion: when the turn
// ends, without waiting for the disk, for a control op (shard.reply); once
// the turn's store batch is durable for a send, an ack and the transaction
// ops (shard.complete). A caller waiting on several shards hands each the
// same waiter (Engine.request).

// Completion is told when a command is done: for a send, once the message is
// as durable as the store makes it. Complete is called from a shard
// goroutine and must not block. Protocols implement it once per connection
// and tell operations apart by token, so completing costs no allocation.
type Completion interface {
	Complete(token uint64, err error)
}

type cmdOp uint8

const (
	// The hot ops: payload in the command's fields.
	opSend    cmdOp = iota + 1 // msg from a connection (subj; flag: admin granted); comp once durable
	opForward                  // msg from another shard or the broker (DLQ moves, forwards, advisories; sub: the one target)
	opAck                      // sub, id, flag = cumulative; comp told once durable
	opNack                     // sub, id, nack, cause; comp told once durable
	opKick                     // sub got credit
	opTick                     // timers; comp, when set, told once they ran (Engine.Tick)

	// Connections and subscriptions (conn_shard.go).
	opSubscribe       // ctl *subscribeCmd: attach a subscription's part
	opCloseSub        // sub: detach its part, redeliver what it held
	opRemoveDurable   // ctl SubKey: destroy a durable subscription's part
	opBrowse          // sub: snapshot the queues it browses
	opCountRedelivery // sub, id: the client redelivers it itself
	opCreateTemp      // ctl *tempCmd: create a connection's temporary destination
	opCheckCreate     // ctl *checkCreateCmd: do these exist, may subj create them
	opRemoveDest      // ctl *removeDestCmd: delete a destination (admin checked when subj is set)

	// Transactions (tx_shard.go).
	opTxMark     // sub, id, flag = cumulative, ctl *tx: acked inside t (deliveredMark: DELIVERED)
	opTxCommit   // ctl *txCommitCmd: apply a local transaction's share; comp once durable
	opTxRollback // ctl *txSubsCmd: redeliver what t acknowledged
	opTxRestore  // ctl *txSubsCmd: make t's acks unacknowledged again, kept by their consumers
	opXAPrepare  // ctl *xaCmd: log and hold a prepared share; comp once durable
	opXACommit   // ctl *xaCmd: commit a prepared share; comp once durable
	opXARollback // ctl *xaCmd: roll a prepared share back; comp once durable

	// Reads.
	opStats        // ctl *statsCmd
	opDestinations // ctl *destinationsCmd
	opRetained     // ctl *retainedCmd
	opJobCount     // ctl *jobCountCmd
	opSnapshot     // ctl *snapshotCmd: every destination's counters (AllStats)

	// The operator's (admin.go, admin_shard.go).
	opAddDest       // ctl message.Destination: create it
	opAdminBrowse   // ctl *adminBrowseCmd
	opAdminRemove   // ctl *adminRemoveCmd: drop undispatched messages
	opAdminCopy     // ctl *adminCopyCmd: copies of undispatched messages, for a move, copy or retry
	opAdminSend     // ctl *adminSendCmd: send the copies; comp once durable
	opInflight      // ctl *inflightCmd: deliveries in flight per subscription
	opDurableCounts // ctl *durableCountsCmd: pending and in flight per durable subscription
	opJobList       // ctl *jobListCmd: the scheduled jobs
	opJobRemove     // ctl *jobRemoveCmd: remove a scheduled job; comp once durable
	opAdminPause    // ctl *adminPauseCmd: pause or resume a queue's dispatch
	opAdminPolicy   // ctl *adminPolicyCmd: change a destination's policy

	// Between shards and from timers.
	opRetryBlocked // another shard freed memory: let parked sends in
	opSchedFire    // the scheduler's timer went off
	opSchedRemove  // ctl *schedRemoveCmd: ActiveMQ.Scheduler.Management REMOVE, REMOVEALL
	opSchedBrowse  // ctl *schedBrowseCmd: add this shard's jobs to a BROWSE
	opSchedReply   // ctl *schedBrowseCmd: every shard answered; send the BROWSE reply
	opBarrier      // nothing: comp is told once what was posted before is handled

	opTestFn // ctl func(*shard): tests only (runForTest)
)

var opNames = [...]string{
	opSend: "send", opForward: "forward", opAck: "ack", opNack: "nack", opKick: "kick", opTick: "tick",
	opSubscribe: "subscribe", opCloseSub: "close-sub", opRemoveDurable: "remove-durable", opBrowse: "browse",
	opCountRedelivery: "count-redelivery", opCreateTemp: "create-temp", opCheckCreate: "check-create",
	opRemoveDest: "remove-dest", opTxMark: "tx-mark", opTxCommit: "tx-commit", opTxRollback: "tx-rollback",
	opTxRestore: "tx-restore", opXAPrepare: "xa-prepare", opXACommit: "xa-commit", opXARollback: "xa-rollback",
	opStats: "stats", opDestinations: "destinations", opRetained: "retained", opJobCount: "job-count",
	opSnapshot: "snapshot", opAddDest: "add-dest", opAdminBrowse: "admin-browse", opAdminRemove: "admin-remove",
	opAdminCopy: "admin-copy", opAdminSend: "admin-send", opInflight: "inflight", opDurableCounts: "durable-counts",
	opJobList: "job-list", opJobRemove: "job-remove", opAdminPause: "admin-pause", opAdminPolicy: "admin-policy",
	opRetryBlocked: "retry-blocked", opSchedFire: "sched-fire", opSchedRemove: "sched-remove",
	opSchedBrowse: "sched-browse", opSchedReply: "sched-reply", opBarrier: "barrier", opTestFn: "test-fn",
}

// String names the op, for logs and scenario output.
func (o cmdOp) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// command is what connections and other shards post to a shard. It is a
// value type so that posting it allocates nothing.
type command struct {
	op    cmdOp
	flag  bool
	audit bool // opSend: check the producer audit (audit.go)
	nack  NackKind
	msg   *message.Message
	sub   *Subscription
	id    uint64
	cause string
	comp  Completion
	token uint64
	// ctl is a control op's payload (see the op list); nil for the hot ops.
	ctl any
	// subj is who sends (opSend, and opForward copies of a client's send
	// to a configured composite's forwards), for the admin check on
	// creation; nil for the broker's own messages, which are never checked.
	subj *Subject
}

// completion is a Completion to tell, with what to tell it; op is the
// command it answers (for logs and scenario output).
type completion struct {
	op    cmdOp
	comp  Completion
	token uint64
	err   error
}

// subscribeCmd attaches sub's part on a shard. durable is the stored
// subscription of a durable one (storeSub: write it, it is new or
// changed); checkTemp refuses a temporary destination that is gone;
// checkCreate asks whether the subscriber may create a plain destination.
type subscribeCmd struct {
	sub         *Subscription
	durable     *DurableSub
	storeSub    bool
	checkTemp   bool
	checkCreate bool
}

// tempCmd creates temporary destination dest owned by connection owner.
type tempCmd struct {
	dest  message.Destination
	owner string
}

// checkCreateCmd asks a shard about the destinations of ask it owns:
// whether each exists, and if not whether subj may create it (errs).
type checkCreateCmd struct {
	subj   *Subject
	ask    []message.Destination
	exists []bool
	errs   []error
}

// removeDestCmd deletes dest. With subj set, admin on it is asked first
// (only if it exists) and a refusal is left in denied.
type removeDestCmd struct {
	dest   message.Destination
	subj   *Subject
	check  bool
	denied error
}

// txCommitCmd is one shard's share of a local transaction; sendErr is the
// first send the shard refused.
type txCommitCmd struct {
	share   *txShare
	subj    *Subject
	sendErr error
}

// txSubsCmd names the subscriptions whose deliveries t acknowledged.
type txSubsCmd struct {
	t    *tx
	subs []*Subscription
}

// xaCmd is one shard's part of a prepare, commit or rollback of prepared
// transaction t: for a prepare, the subscriptions whose acks it holds and
// the shard's share; for a commit, the sends the shard applies.
type xaCmd struct {
	t     *tx
	subs  []*Subscription
	share *txShare
	sends []*message.Message
}

// statsCmd reads dest's counters into st.
type statsCmd struct {
	dest message.Destination
	st   DestinationStats
}

// destinationsCmd lists a shard's destinations into out.
type destinationsCmd struct{ out []message.Destination }

// retainedCmd reads topic dest's retained message into m.
type retainedCmd struct {
	dest message.Destination
	m    *message.Message
}

// jobCountCmd counts a shard's scheduled jobs into n.
type jobCountCmd struct{ n int }

// waiter is the Completion a caller blocks on until every shard it posted
// to has replied; the first error wins.
type waiter struct {
	wg  sync.WaitGroup
	mu  sync.Mutex
	err error
}

func (w *waiter) Complete(_ uint64, err error) {
	if err != nil {
		w.mu.Lock()
		if w.err == nil {
			w.err = err
		}
		w.mu.Unlock()
	}
	w.wg.Done()
}

// request posts the command mk makes for each listed shard (all when idx
// is nil) to its inbox, and waits for every reply: through the inbox, not
// the mailbox, so that a connection's control operation is applied after
// the sends and acks it posted before. mk runs on the caller's goroutine;
// what a shard answers is in the payload it was given, read after request
// returns.
func (e *Engine) request(idx []int, mk func(s *shard) command) error {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return ErrClosed
	}
	w := &waiter{}
	ask := func(s *shard) {
		c := mk(s)
		c.comp = w
		w.wg.Add(1)
		if err := s.post(c); err != nil {
			w.Complete(0, err)
		}
	}
	if idx == nil {
		for _, s := range e.shards {
			ask(s)
		}
	} else {
		for _, i := range idx {
			ask(e.shards[i])
		}
	}
	w.wg.Wait()
	return w.err
}

// handle applies one command.
func (s *shard) handle(c command) {
	switch c.op {
	case opSend:
		// Refused before anything changes: no destination, no advisory,
		// nothing stored.
		var err error
		if !c.flag { // flag: admin already granted to the sender
			err = s.mayCreate(c.subj, c.msg.Destination)
		}
		if err == nil {
			if c.audit && s.auditDuplicate(c.msg) {
				// Answered as stored, as ActiveMQ answers a suppressed
				// duplicate: the client's first send was.
				s.complete(c.op, c.comp, c.token, nil)
				return
			}
			if s.admit(c) {
				return // parked until there is room
			}
			err = s.sendClient(c.subj, c.msg)
		}
		s.complete(c.op, c.comp, c.token, err)
	case opForward:
		err := s.mayCreate(c.subj, c.msg.Destination)
		if err == nil {
			s.subj = c.subj // taken by sendTo
			err = s.sendTo(c.msg, c.sub)
		}
		if err != nil {
			s.log.Warn("forwarded message dropped", "dest", c.msg.Destination.String(), "msg_id", c.msg.ID, "err", err)
		}
	case opAck:
		s.ack(c.sub, c.id, c.flag)
		// Told after the Apply of this turn's batch, which a completion
		// makes a synced one (writer.write): a confirmed ack is on disk first.
		s.complete(c.op, c.comp, c.token, nil)
	case opNack:
		s.nack(c.sub, c.id, c.nack, c.cause)
		s.complete(c.op, c.comp, c.token, nil)
	case opKick:
		if p := s.parts[c.sub]; p != nil {
			s.dispatchPart(p)
		}
	case opTick:
		s.now = s.e.now().UnixMilli() // the turn may have read the clock before it moved
		s.tick()
		s.reply(c, nil)

	case opSubscribe:
		s.reply(c, s.subscribe(c.ctl.(*subscribeCmd)))
	case opCloseSub:
		s.closePart(c.sub)
		s.reply(c, nil)
	case opRemoveDurable:
		s.removeDurable(c.ctl.(SubKey))
		s.reply(c, nil)
	case opBrowse:
		s.browse(c.sub)
	case opCountRedelivery:
		s.countRedelivery(c.sub, c.id)
	case opCreateTemp:
		t := c.ctl.(*tempCmd)
		s.dest(t.dest, true).owner = t.owner
		s.reply(c, nil)
	case opCheckCreate:
		s.checkCreate(c.ctl.(*checkCreateCmd))
		s.reply(c, nil)
	case opRemoveDest:
		s.removeDestCmd(c.ctl.(*removeDestCmd))
		s.reply(c, nil)

	case opTxMark:
		s.txMark(c.sub, c.id, c.flag, c.ctl.(*tx))
	case opTxCommit:
		s.txCommit(c.ctl.(*txCommitCmd))
		s.complete(c.op, c.comp, c.token, nil)
	case opTxRollback:
		x := c.ctl.(*txSubsCmd)
		for _, sub := range x.subs {
			s.txRollback(sub, x.t)
		}
		s.reply(c, nil)
	case opTxRestore:
		x := c.ctl.(*txSubsCmd)
		for _, sub := range x.subs {
			s.txRestore(sub, x.t)
		}
		s.reply(c, nil)
	case opXAPrepare:
		s.xaPrepare(c.ctl.(*xaCmd))
		s.complete(c.op, c.comp, c.token, nil)
	case opXACommit:
		s.xaCommit(c.ctl.(*xaCmd))
		s.complete(c.op, c.comp, c.token, nil)
	case opXARollback:
		s.xaRollback(c.ctl.(*xaCmd))
		s.complete(c.op, c.comp, c.token, nil)

	case opStats:
		s.stats(c.ctl.(*statsCmd))
		s.reply(c, nil)
	case opDestinations:
		x := c.ctl.(*destinationsCmd)
		for d := range s.dests {
			x.out = append(x.out, d)
		}
		s.reply(c, nil)
	case opRetained:
		x := c.ctl.(*retainedCmd)
		if d := s.dests[x.dest]; d != nil {
			x.m = d.retained
		}
		s.reply(c, nil)
	case opJobCount:
		if s.sched != nil {
			c.ctl.(*jobCountCmd).n = len(s.sched.jobs)
		}
		s.reply(c, nil)

	case opRetryBlocked:
		s.retryBlocked()
	case opSchedFire:
		if s.sched != nil {
			s.sched.armedFor = 0 // spent (or a stale callback: re-armed by fireJobs)
		}
		s.fireJobs()
	case opSchedRemove:
		s.schedRemove(c.ctl.(*schedRemoveCmd))
	case opSchedBrowse:
		s.schedBrowse(c.ctl.(*schedBrowseCmd))
	case opSchedReply:
		x := c.ctl.(*schedBrowseCmd)
		s.sendBrowsed(x.replyTo, x.jobs())
	case opSnapshot:
		s.snapshot(c.ctl.(*snapshotCmd))
		s.reply(c, nil)
	case opAddDest:
		s.dest(c.ctl.(message.Destination), true)
		s.reply(c, nil)
	case opAdminBrowse:
		s.adminBrowse(c.ctl.(*adminBrowseCmd))
		s.reply(c, nil)
	case opAdminRemove:
		s.adminRemove(c.ctl.(*adminRemoveCmd))
		s.reply(c, nil)
	case opAdminPause:
		s.adminPause(c.ctl.(*adminPauseCmd))
		s.reply(c, nil)
	case opAdminPolicy:
		s.adminPolicy(c.ctl.(*adminPolicyCmd))
		s.reply(c, nil)
	case opAdminCopy:
		s.adminCopy(c.ctl.(*adminCopyCmd))
		s.reply(c, nil)
	case opAdminSend:
		s.adminSend(c.ctl.(*adminSendCmd))
		s.complete(c.op, c.comp, c.token, nil) // once the turn's batch is written
	case opInflight:
		n := c.ctl.(*inflightCmd).n
		for sub, p := range s.parts {
			n[sub] = n[sub].plus(p.counts())
		}
		s.reply(c, nil)

	case opDurableCounts:
		s.durableCounts(c.ctl.(*durableCountsCmd))
		s.reply(c, nil)
	case opJobList:
		s.jobList(c.ctl.(*jobListCmd))
		s.reply(c, nil)
	case opJobRemove:
		s.jobRemove(c.ctl.(*jobRemoveCmd))
		s.complete(c.op, c.comp, c.token, nil) // once the removal is written

	case opBarrier:
		s.reply(c, nil)

	case opTestFn:
		c.ctl.(func(*shard))(s)
		s.reply(c, nil)
	default:
		panic("engine: shard got unknown command " + c.op.String())
	}
}
