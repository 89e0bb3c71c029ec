package engine

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"wharf/engine/message"
)

// Scheduled delivery (<broker schedulerSupport="true">), as ActiveMQ's
// SchedulerBroker and JobSchedulerImpl do it (broker-behaviour.md §9).
//
// A message carrying AMQ_SCHEDULED_DELAY, _PERIOD or _CRON and no
// scheduledJobId is not delivered: send hands it to scheduled, which keeps
// it as a job of the shard that owns its destination. Jobs are shard state
// like destinations: a map by ID and a min-heap by due time, touched only by
// the shard loop. One time.AfterFunc is armed for the earliest due time; its
// callback only posts to the shard's mailbox, and the shard decides with its
// injected clock what is due, so tests drive firing with Engine.Tick. When a
// job fires, its message is re-sent through send with the AMQ_SCHEDULED_*
// properties removed and scheduledJobId set.
//
// Persistence. With a store, each job is stored (OpAddJob) in the batch of
// the send that made it, so the producer is acknowledged only once the job
// is durable; a firing writes the delivered message and the job's new state
// (OpAddJob again, or OpRemoveJob after the last firing) in one batch, so a
// crash neither loses nor repeats a firing. ActiveMQ stores every job in its
// JobSchedulerStore whatever the message's delivery mode; so does Wharf,
// except for jobs on temporary destinations, which cannot outlive their
// connection.
//
// DEVIATION: a message sent to a composite destination becomes one job per
// element (the connection splits composites before the shards see them);
// ActiveMQ's SchedulerBroker, outside its CompositeDestinationBroker, makes
// one job. Deliveries are the same; BROWSE lists one job per element.
//
// DEVIATION: jobSchedulerUsage (50 GB) is not enforced; producers of
// scheduled messages are held back only by the shard inbox.

// ScheduledMessage property names and values
// (org.apache.activemq.ScheduledMessage).
const (
	ScheduledDelay        = "AMQ_SCHEDULED_DELAY"  // long ms before the first delivery
	ScheduledPeriod       = "AMQ_SCHEDULED_PERIOD" // long ms between deliveries
	ScheduledRepeat       = "AMQ_SCHEDULED_REPEAT" // int: deliveries after the first
	ScheduledCron         = "AMQ_SCHEDULED_CRON"   // 5-field cron entry
	ScheduledJobID        = "scheduledJobId"       // set on every delivered copy
	SchedulerManagement   = "ActiveMQ.Scheduler.Management"
	SchedulerAction       = "AMQ_SCHEDULER_ACTION"
	SchedulerActionBrowse = "BROWSE"
	SchedulerActionRemove = "REMOVE"
	SchedulerActionAll    = "REMOVEALL"
	SchedulerStartTime    = "ACTION_START_TIME"
	SchedulerEndTime      = "ACTION_END_TIME"
)

// maxScheduledRepeat is SchedulerBroker.MAX_REPEAT_ALLOWED: a bigger
// AMQ_SCHEDULED_REPEAT is refused, so that a client cannot make the broker
// deliver without end by mistake (-1, forever, is allowed).
const maxScheduledRepeat = 1000

// ErrBadSchedule is returned to the producer of a message whose
// AMQ_SCHEDULED_* properties cannot be used (ActiveMQ answers with a
// MessageFormatException or the conversion's exception).
var ErrBadSchedule = errors.New("engine: invalid scheduled message")

// schedSeq numbers job ids and the ids of scheduled copies. Process-wide,
// as ActiveMQ's static LongSequenceGenerator in SchedulerBroker: ids must be
// unique across shards and across an in-process restart.
var schedSeq atomic.Int64

// scheduler is a shard's jobs. Owned by the shard loop; only the timer's
// callback runs elsewhere, and it touches nothing but the mailbox.
type scheduler struct {
	jobs     map[string]*job
	due      jobHeap
	seq      uint64      // insertion order, for jobs due at the same ms
	timer    *time.Timer // armed for the earliest due time
	armedFor int64       // ms the timer is set for; 0: not set
}

type job struct {
	Job
	cron  *cronEntry // parsed Job.Cron
	idx   int        // position in the heap; -1 when out of it
	order uint64
}

type jobHeap []*job

func (h jobHeap) Len() int { return len(h) }
func (h jobHeap) Less(i, j int) bool {
	if h[i].Next != h[j].Next {
		return h[i].Next < h[j].Next
	}
	return h[i].order < h[j].order
}
func (h jobHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *jobHeap) Push(x any) {
	j := x.(*job)
	j.idx = len(*h)
	*h = append(*h, j)
}
func (h *jobHeap) Pop() any {
	old := *h
	n := len(old) - 1
	j := old[n]
	old[n] = nil
	j.idx = -1
	*h = old[:n]
	return j
}

// scheduled takes m into the scheduler when it carries AMQ_SCHEDULED_*
// properties and no scheduledJobId, or handles it when it is sent to
// ActiveMQ.Scheduler.Management; held reports that m is not to be
// delivered. err is for the producer: a schedule that cannot be used.
func (s *shard) scheduled(m *message.Message) (held bool, err error) {
	// SchedulerBroker.send: the management destination is matched by a
	// case-insensitive prefix of the physical name, any destination type.
	if n := len(SchedulerManagement); len(m.Destination.Name) >= n && strings.EqualFold(m.Destination.Name[:n], SchedulerManagement) {
		s.manageScheduler(m)
		return true, nil
	}
	if _, has := m.Props.Get(ScheduledJobID); has {
		return false, nil // a fired copy (or one forwarded by a network bridge)
	}
	cronV, hasCron := m.Props.Get(ScheduledCron)
	periodV, hasPeriod := m.Props.Get(ScheduledPeriod)
	delayV, hasDelay := m.Props.Get(ScheduledDelay)
	if !hasCron && !hasPeriod && !hasDelay {
		return false, nil
	}
	j := &job{Job: Job{Msg: m}}
	if hasCron {
		j.Cron = cronV.Text()
	}
	if hasPeriod {
		if j.Period, err = propLong(ScheduledPeriod, periodV); err != nil {
			return true, err
		}
	}
	if hasDelay {
		if j.Delay, err = propLong(ScheduledDelay, delayV); err != nil {
			return true, err
		}
	}
	if j.Repeat, err = scheduledRepeat(m); err != nil {
		return true, err
	}
	if j.Cron != "" {
		if j.cron, err = parseCron(j.Cron); err != nil {
			return true, err
		}
	}
	// JobSchedulerImpl.doSchedule: the start is rounded up to the next
	// 500 ms, so that jobs scheduled together fire together.
	j.Start = (s.now + 500) / 500 * 500
	j.Next = j.Start
	if j.cron != nil {
		if j.Next, err = j.cron.next(j.Start); err != nil {
			return true, err
		}
	}
	if j.Delay > 0 {
		j.Next = addMS(j.Next, j.Delay)
	} else {
		j.Next = addMS(j.Next, j.Period)
	}
	// The job id has the shape of a message id of the producer
	// (SchedulerBroker.doSchedule).
	j.ID = producerOf(m.ID) + ":" + strconv.FormatInt(schedSeq.Add(1), 10)
	s.addJob(j, true)
	if s.log.Enabled(context.Background(), slog.LevelDebug) {
		s.log.Debug("message scheduled", "dest", m.Destination.String(), "msg_id", m.ID, "job", j.ID, "due_ms", j.Next)
	}
	return true, nil
}

// producerOf is the producer id part of an ActiveMQ message id
// ("ID:host-1-2-3:1:1:7" -> "ID:host-1-2-3:1:1").
func producerOf(id string) string {
	if i := strings.LastIndexByte(id, ':'); i > 0 {
		return id[:i]
	}
	if id == "" {
		return "ID:scheduled"
	}
	return id
}

// propLong converts a property as TypeConversionSupport converts to Long:
// integers as they are, strings parsed (STOMP sends every header as one).
func propLong(name string, v message.Value) (int64, error) {
	switch {
	case v.IsInteger():
		return v.Int(), nil
	case v.Kind == message.String:
		n, err := strconv.ParseInt(v.Str(), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %s %q is not a long", ErrBadSchedule, name, v.Str())
		}
		return n, nil
	}
	return 0, fmt.Errorf("%w: %s is a %s, not a long", ErrBadSchedule, name, v.Kind)
}

// scheduledRepeat reads AMQ_SCHEDULED_REPEAT (0 when absent).
//
// DEVIATION: ActiveMQ converts it to Integer only from a String, Byte,
// Short or Integer and fails on a Long; Wharf takes any integer in range.
func scheduledRepeat(m *message.Message) (int32, error) {
	v, ok := m.Props.Get(ScheduledRepeat)
	if !ok {
		return 0, nil
	}
	n, err := propLong(ScheduledRepeat, v)
	if err != nil {
		return 0, err
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, fmt.Errorf("%w: %s %d is not an int", ErrBadSchedule, ScheduledRepeat, n)
	}
	if n > maxScheduledRepeat {
		// SchedulerBroker's MessageFormatException text.
		return 0, fmt.Errorf("%w: The scheduled repeat value is too large", ErrBadSchedule)
	}
	return int32(n), nil
}

// addJob puts j in the shard's scheduler, storing it when store is set (a
// new or rescheduled job; recovered jobs are stored already).
func (s *shard) addJob(j *job, store bool) {
	sc := s.sched
	if sc == nil {
		sc = &scheduler{jobs: map[string]*job{}}
		s.sched = sc
	}
	if old := sc.jobs[j.ID]; old != nil && old != j {
		s.dropJob(old, false)
	}
	sc.jobs[j.ID] = j
	j.order = sc.seq
	sc.seq++
	heap.Push(&sc.due, j)
	if store {
		s.storeJob(j)
	}
	s.armScheduler()
}

// storeJob writes j's current state, when the shard has a store.
func (s *shard) storeJob(j *job) {
	if s.store != nil && !j.Msg.Destination.Type.IsTemp() {
		cp := j.Job
		s.out.ops = append(s.out.ops, StoreOp{Kind: OpAddJob, Job: &cp})
	}
}

// dropJob takes j out of the scheduler, and out of the store when store is
// set.
func (s *shard) dropJob(j *job, store bool) {
	sc := s.sched
	if j.idx >= 0 {
		heap.Remove(&sc.due, j.idx)
	}
	if sc.jobs[j.ID] == j {
		delete(sc.jobs, j.ID)
	}
	if store && s.store != nil && !j.Msg.Destination.Type.IsTemp() {
		s.out.ops = append(s.out.ops, StoreOp{Kind: OpRemoveJob, JobID: j.ID})
	}
}

// armScheduler sets the timer for the earliest job. The timer's callback
// only posts to the mailbox; what is due is decided there, by the clock.
func (s *shard) armScheduler() {
	sc := s.sched
	if len(sc.due) == 0 || !s.e.opts.SchedulerSupport {
		if sc.timer != nil {
			sc.timer.Stop()
		}
		sc.armedFor = 0
		return
	}
	due := sc.due[0].Next
	if due == sc.armedFor {
		return // set for it already
	}
	sc.armedFor = due
	// At least 1 ms: a job due now (a period of 0) then fires on a later
	// turn, not in a loop that starves the shard. At most maxTimerWait: a
	// far-off job (a delay of years) is simply looked at again then.
	waitMS := min(max(due-s.e.now().UnixMilli(), 1), maxTimerWait.Milliseconds())
	wait := time.Duration(waitMS) * time.Millisecond
	if sc.timer != nil {
		sc.timer.Reset(wait)
		return
	}
	sc.timer = time.AfterFunc(wait, func() {
		select {
		case <-s.quit:
			return
		default:
		}
		s.mailbox(command{op: opSchedFire})
	})
}

// maxTimerWait bounds how long the scheduler timer is set for, so that the
// wait never overflows a time.Duration.
const maxTimerWait = time.Hour

// addMS adds d ms to t, saturating.
//
// DEVIATION: ActiveMQ's long addition wraps, so an AMQ_SCHEDULED_DELAY of
// Long.MAX_VALUE fires at once; in Wharf it means never.
func addMS(t, d int64) int64 {
	if d > 0 && t > math.MaxInt64-d {
		return math.MaxInt64
	}
	if d < 0 && t < math.MinInt64-d {
		return math.MinInt64
	}
	return t + d
}

// fireJobs fires every job due by the clock, then re-arms the timer. It
// runs from the timer and from tick (Engine.Tick).
func (s *shard) fireJobs() {
	sc := s.sched
	if sc == nil || !s.e.opts.SchedulerSupport {
		return
	}
	s.now = s.e.now().UnixMilli()
	now := s.now
	// Take the due ones first: a job rescheduled at now (period 0) fires on
	// the next turn, not again in this one.
	var due []*job
	for len(sc.due) > 0 && sc.due[0].Next <= now {
		due = append(due, heap.Pop(&sc.due).(*job))
	}
	for _, j := range due {
		s.runJob(j, now)
	}
	s.armScheduler()
}

// runJob is one firing, as JobSchedulerImpl.mainLoop does it.
func (s *shard) runJob(j *job, now int64) {
	repeat := j.Repeat
	next := now
	if j.cron != nil {
		var err error
		if next, err = j.cron.next(now); err != nil {
			s.log.Warn("scheduled job removed", "job", j.ID, "dest", j.Msg.Destination.String(), "err", err)
			s.dropJob(j, true)
			return
		}
	} else if repeat != 0 {
		next = addMS(now, j.Period)
	}
	if j.cron == nil {
		s.deliverJob(j, now)
		if repeat == 0 {
			s.dropJob(j, true)
			return
		}
		if j.Repeat > 0 {
			j.Repeat--
		}
		s.reschedule(j, next)
		return
	}
	if repeat == 0 {
		s.deliverJob(j, now) // a plain cron entry: one delivery per firing
	}
	if next <= now {
		s.dropJob(j, true)
		return
	}
	s.reschedule(j, next)
	if repeat != 0 {
		// A cron entry with a repeat starts, at each firing, a separate
		// job of delay/period/repeat; the cron job itself delivers nothing.
		sub := &job{Job: Job{
			ID:     s.e.brokerID + "-0:" + strconv.FormatInt(schedSeq.Add(1), 10),
			Msg:    j.Msg,
			Delay:  j.Delay,
			Period: j.Period,
			Repeat: j.Repeat,
		}}
		sub.Start = (now + 500) / 500 * 500
		sub.Next = sub.Start
		if sub.Delay > 0 {
			sub.Next = addMS(sub.Next, sub.Delay)
		} else {
			sub.Next = addMS(sub.Next, sub.Period)
		}
		s.addJob(sub, true)
	}
}

func (s *shard) reschedule(j *job, next int64) {
	j.Next = next
	j.order = s.sched.seq
	s.sched.seq++
	heap.Push(&s.sched.due, j)
	s.storeJob(j)
}

// deliverJob sends the job's message to its destination, as
// SchedulerBroker.scheduledJob prepares it.
func (s *shard) deliverJob(j *job, now int64) {
	m := j.Msg.Clone()
	repeat, _ := scheduledRepeat(m) // checked when scheduled
	cron, hasCron := m.Props.Get(ScheduledCron)
	if repeat != 0 || hasCron && cron.Text() != "" {
		// The original may be delivered many times: each copy gets an id
		// of the broker's own scheduler producer.
		m.ID = s.e.brokerID + "-0:1:0:0:" + strconv.FormatInt(schedSeq.Add(1), 10)
	}
	m.Props.Set(ScheduledJobID, message.StringValue(j.ID))
	// Removed, so that a copy crossing a network bridge is not scheduled
	// again.
	m.Props.Delete(ScheduledPeriod)
	m.Props.Delete(ScheduledDelay)
	m.Props.Delete(ScheduledRepeat)
	m.Props.Delete(ScheduledCron)
	shiftExpiration(m, now)
	if err := s.send(m); err != nil {
		s.log.Warn("scheduled message dropped", "job", j.ID, "dest", m.Destination.String(), "msg_id", m.ID, "err", err)
	}
}

// shiftExpiration makes the message's time to live count from now, as
// SchedulerBroker.scheduledJob does: only a message with a timestamp and an
// expiration is changed, and only forwards.
func shiftExpiration(m *message.Message, now int64) {
	if m.Timestamp <= 0 || m.Expiration <= 0 {
		return
	}
	ttl := m.Expiration - m.Timestamp
	exp := ttl + now
	if exp > m.Expiration {
		if ttl > 0 {
			m.Expiration = exp
		}
		m.Timestamp = now
	}
}

// recoverJob re-arms a job read from the store.
func (s *shard) recoverJob(sj Job) error {
	if sj.ID == "" || sj.Msg == nil {
		return fmt.Errorf("recovered scheduled job %q has no id or no message", sj.ID)
	}
	j := &job{Job: sj, idx: -1}
	if j.Cron != "" {
		var err error
		if j.cron, err = parseCron(j.Cron); err != nil {
			return fmt.Errorf("scheduled job %s: %w", j.ID, err)
		}
	}
	// Later ids must not repeat recovered ones.
	if i := strings.LastIndexByte(j.ID, ':'); i >= 0 {
		if n, err := strconv.ParseInt(j.ID[i+1:], 10, 64); err == nil {
			for {
				cur := schedSeq.Load()
				if cur >= n || schedSeq.CompareAndSwap(cur, n) {
					break
				}
			}
		}
	}
	s.addJob(j, false)
	return nil
}

// manageScheduler applies an ActiveMQ.Scheduler.Management request
// (SchedulerBroker.send). The jobs live in every shard, so the request is
// posted to each; BROWSE gathers them back here, to send them in due order.
func (s *shard) manageScheduler(m *message.Message) {
	av, ok := m.Props.Get(SchedulerAction)
	if !ok || av.Kind != message.String {
		return
	}
	action := av.Str()
	start, end := int64(0), int64(math.MaxInt64)
	sv, hasStart := m.Props.Get(SchedulerStartTime)
	ev, hasEnd := m.Props.Get(SchedulerEndTime)
	ranged := hasStart && hasEnd
	if ranged {
		var err1, err2 error
		start, err1 = propLong(SchedulerStartTime, sv)
		end, err2 = propLong(SchedulerEndTime, ev)
		if err := errors.Join(err1, err2); err != nil {
			s.log.Warn("scheduler management request ignored", "action", action, "err", err)
			return
		}
	}
	if action == SchedulerActionBrowse && !m.ReplyTo.IsZero() {
		s.browseJobs(m.ReplyTo, start, end)
	}
	idv, hasID := m.Props.Get(ScheduledJobID)
	switch {
	case hasID && action == SchedulerActionRemove:
		s.toAllShards(command{op: opSchedRemove, ctl: &schedRemoveCmd{id: idv.Text()}})
	case action == SchedulerActionAll:
		s.toAllShards(command{op: opSchedRemove, ctl: &schedRemoveCmd{start: start, end: end}})
	}
}

// schedRemoveCmd removes job id, or when id is "" every job due in
// [start, end].
type schedRemoveCmd struct {
	id         string
	start, end int64
}

// schedRemove applies a REMOVE or REMOVEALL to this shard's jobs.
func (s *shard) schedRemove(x *schedRemoveCmd) {
	sc := s.sched
	if sc == nil {
		return
	}
	if x.id != "" {
		if j := sc.jobs[x.id]; j != nil {
			s.dropJob(j, true)
			s.armScheduler()
		}
		return
	}
	s.removeJobs(x.start, x.end)
}

// removeJobs removes the jobs due in [start, end].
func (s *shard) removeJobs(start, end int64) {
	sc := s.sched
	if sc == nil {
		return
	}
	for _, j := range sc.jobs {
		if start <= j.Next && j.Next <= end {
			s.dropJob(j, true)
		}
	}
	s.armScheduler()
}

// toAllShards forwards c to every shard, this one included (through its
// mailbox, on a later turn), without waiting.
func (s *shard) toAllShards(c command) {
	for _, o := range s.e.shards {
		s.forwardTo(o, c)
	}
}

// schedBrowseCmd gathers a BROWSE: each shard adds the jobs due in
// [start, end] to found (its own slot) and counts itself off left; the
// last one hands the command back to origin (opSchedReply), which sends
// them to replyTo.
type schedBrowseCmd struct {
	replyTo    message.Destination
	start, end int64
	origin     *shard
	found      [][]Job
	left       atomic.Int32
}

// jobs is every shard's answer, once all have given it.
func (x *schedBrowseCmd) jobs() []Job { return slices.Concat(x.found...) }

// browseJobs sends a copy of each job due in [start, end], of every shard,
// to replyTo, in due order, as SchedulerBroker.sendScheduledJob makes them.
func (s *shard) browseJobs(replyTo message.Destination, start, end int64) {
	x := &schedBrowseCmd{replyTo: replyTo, start: start, end: end, origin: s, found: make([][]Job, len(s.e.shards))}
	x.left.Store(int32(len(s.e.shards)))
	s.toAllShards(command{op: opSchedBrowse, ctl: x})
}

// schedBrowse adds this shard's share to a BROWSE (opSchedBrowse).
func (s *shard) schedBrowse(x *schedBrowseCmd) {
	if sc := s.sched; sc != nil {
		for _, j := range sc.jobs {
			if x.start <= j.Next && j.Next <= x.end {
				x.found[s.idx] = append(x.found[s.idx], j.Job)
			}
		}
	}
	if x.left.Add(-1) > 0 {
		return
	}
	// The last shard: every slot is written (the atomic orders it).
	s.forwardTo(x.origin, command{op: opSchedReply, ctl: x})
}

func (s *shard) sendBrowsed(replyTo message.Destination, jobs []Job) {
	slices.SortStableFunc(jobs, func(a, b Job) int {
		switch {
		case a.Next < b.Next:
			return -1
		case a.Next > b.Next:
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	for i := range jobs {
		m := jobs[i].Msg.Clone()
		m.Persistent = false
		m.Type = "Advisory" // AdvisorySupport.ADIVSORY_MESSAGE_TYPE
		m.ID = s.e.brokerID + "-0:1:0:0:" + strconv.FormatInt(schedSeq.Add(1), 10)
		m.OriginalDestination = m.Destination
		m.Destination = replyTo
		m.Props.Set(ScheduledJobID, message.StringValue(jobs[i].ID))
		if ts := s.e.shardFor(replyTo); ts != s {
			s.forwardTo(ts, command{op: opForward, msg: m})
		} else if err := s.send(m); err != nil {
			s.log.Warn("scheduled job browse reply dropped", "dest", replyTo.String(), "job", jobs[i].ID, "err", err)
		}
	}
}

// ScheduledJobs returns the number of jobs the scheduler holds. Safe from
// any goroutine.
func (e *Engine) ScheduledJobs() int {
	xs := make([]jobCountCmd, len(e.shards))
	e.request(nil, func(s *shard) command { return command{op: opJobCount, ctl: &xs[s.idx]} })
	n := 0
	for i := range xs {
		n += xs[i].n
	}
	return n
}

// cronEntry is a parsed 5-field cron entry, as ActiveMQ's CronParser reads
// it: each field's accepted values, sorted.
type cronEntry struct {
	text                                         string
	minutes, hours, dayOfMonth, month, dayOfWeek cronField
}

type cronField struct {
	name       string
	start, end int   // the range CronParser gives the field (end inclusive)
	values     []int // sorted
}

// The fields as CronParser.buildCronEntries bounds them. Its ends are one
// past the real last minute, hour and day; values there never match a
// calendar field and only make getNext roll over.
var cronFields = [5]struct {
	name       string
	start, end int
}{{"Minutes", 0, 60}, {"Hours", 0, 24}, {"DayOfMonth", 1, 32}, {"Month", 1, 12}, {"DayOfWeek", 0, 6}}

// parseCron parses a cron entry. "*" and "?" are every value; "a-b" a
// range; "x/n" the values of x divisible by n; "a,b,..." a list of any of
// these.
//
// DEVIATION: CronParser accepts values outside a field's range and empty
// ranges (and then computes nonsense or fails at the first firing); Wharf
// refuses them when the message is sent.
func parseCron(s string) (*cronEntry, error) {
	toks := strings.Fields(s)
	if len(toks) != 5 {
		return nil, fmt.Errorf("%w: Not a valid cron entry - wrong number of tokens(%d): %s", ErrBadSchedule, len(toks), s)
	}
	var fs [5]cronField
	for i, tok := range toks {
		f := cronField{name: cronFields[i].name, start: cronFields[i].start, end: cronFields[i].end}
		vals, err := cronValues(tok, f.start, f.end, 0)
		if err != nil {
			return nil, fmt.Errorf("%w: cron entry %q: %s %q: %v", ErrBadSchedule, s, f.name, tok, err)
		}
		slices.Sort(vals)
		f.values = slices.Compact(vals)
		if len(f.values) == 0 {
			return nil, fmt.Errorf("%w: cron entry %q: %s %q matches nothing", ErrBadSchedule, s, f.name, tok)
		}
		fs[i] = f
	}
	return &cronEntry{s, fs[0], fs[1], fs[2], fs[3], fs[4]}, nil
}

// cronValues is CronParser.calculateValues, with every number checked
// against the field's range before anything is built from it.
func cronValues(tok string, start, end, depth int) ([]int, error) {
	if depth > 2 {
		return nil, errors.New("nested too deep")
	}
	num := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", s)
		}
		if n < start || n > end {
			return 0, fmt.Errorf("%d is outside %d-%d", n, start, end)
		}
		return n, nil
	}
	var out []int
	switch {
	case tok == "*" || tok == "?":
		for i := start; i <= end; i++ {
			out = append(out, i)
		}
	case strings.IndexByte(tok, '/') >= 0:
		i := strings.IndexByte(tok, '/')
		d, err := strconv.Atoi(tok[i+1:])
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("step %q is not a positive number", tok[i+1:])
		}
		all, err := cronValues(tok[:i], start, end, depth+1)
		if err != nil {
			return nil, err
		}
		for _, v := range all {
			if v%d == 0 { // CronParser: divisible, not counted from the start
				out = append(out, v)
			}
		}
	case strings.IndexByte(tok, ',') >= 0:
		for _, part := range strings.Split(tok, ",") {
			vs, err := cronValues(part, start, end, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, vs...)
		}
	case strings.IndexByte(tok, '-') >= 0:
		i := strings.IndexByte(tok, '-')
		a, err := num(tok[:i])
		if err != nil {
			return nil, err
		}
		b, err := num(tok[i+1:])
		if err != nil {
			return nil, err
		}
		for v := a; v <= b; v++ {
			out = append(out, v)
		}
	default:
		n, err := num(tok)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func (f *cronField) has(v int) bool {
	_, ok := slices.BinarySearch(f.values, v)
	return ok
}

// nextStep is CronParser.getNext: how far to add to reach the field's next
// value after current, wrapping around.
func (f *cronField) nextStep(current int, t time.Time) int {
	for _, v := range f.values {
		if v > current {
			return v - current
		}
	}
	end := f.end
	if f.name == "DayOfMonth" {
		end = daysIn(t) + 1
	}
	r := end + f.values[0] - f.start - current
	if f.name == "DayOfWeek" || f.name == "Month" {
		r++ // one- versus zero-based
	}
	return r
}

func daysIn(t time.Time) int {
	return time.Date(t.Year(), t.Month()+1, 0, 0, 0, 0, 0, t.Location()).Day()
}

// next is CronParser.getNextScheduledTime: the first time after now (ms)
// the entry matches, in the local time zone (the JVM's default, in
// ActiveMQ). As there, the result keeps now's milliseconds.
func (c *cronEntry) next(now int64) (int64, error) {
	if c.text == "* * * * *" { // CronParser's shortcut: the top of the next minute
		return (now + 60000) / 60000 * 60000, nil
	}
	t := time.UnixMilli(now)
	// Top of the next minute, keeping the milliseconds (Calendar.set(SECOND, 0)).
	t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), 0, t.Nanosecond(), t.Location()).Add(time.Minute)
	ms := t.Nanosecond()
	startOfDay := func(t time.Time) time.Time {
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, ms, t.Location())
	}
	minute := func() {
		if m := t.Minute(); !c.minutes.has(m) {
			t = t.Add(time.Duration(c.minutes.nextStep(m, t)) * time.Minute)
		}
	}
	hour := func() {
		if h := t.Hour(); !c.hours.has(h) {
			t = t.Add(time.Duration(c.hours.nextStep(h, t)) * time.Hour)
		}
	}
	day := func() {
		dow, dom := int(t.Weekday()), t.Day()
		if c.dayOfWeek.has(dow) && c.dayOfMonth.has(dom) {
			return
		}
		byWeek, byMonth := math.MaxInt, math.MaxInt
		if !c.dayOfWeek.has(dow) {
			byWeek = c.dayOfWeek.nextStep(dow, t)
		}
		if !c.dayOfMonth.has(dom) {
			byMonth = c.dayOfMonth.nextStep(dom, t)
		}
		// Then from the start of that day, so that the hour and minute
		// fields pick its first matching time.
		t = startOfDay(time.Date(t.Year(), t.Month(), t.Day()+min(byWeek, byMonth), 12, 0, 0, 0, t.Location()))
	}
	month := func() {
		if mo := int(t.Month()); !c.month.has(mo) {
			n := c.month.nextStep(mo, t)
			t = time.Date(t.Year(), t.Month()+time.Month(n), 1, 0, 0, 0, ms, t.Location())
		}
	}
	minute()
	hour()
	day()
	month()
	day()
	hour()
	minute()
	r := t.UnixMilli()
	if r <= now {
		return 0, fmt.Errorf("%w: Unable to compute next scheduled execution time", ErrBadSchedule)
	}
	return r, nil
}
