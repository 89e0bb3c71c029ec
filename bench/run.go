package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// RunOptions are the presentation side of a run.
type RunOptions struct {
	// Progress, if set, receives the live line, rewritten in place with
	// a carriage return, every ProgressInterval (0: a second). Point it
	// at a terminal only.
	Progress         io.Writer
	ProgressInterval time.Duration
}

// Run performs one run of cfg (validated) and returns its result. The
// errors of single sends, receives and connections are counted in the
// result; Run fails only when the run cannot start: no broker at the URL
// (ErrConnect, within Config.ConnectTimeout), a --broker-pid that cannot
// be read (ErrBrokerPID), or a consumer that cannot subscribe. Cancelling
// ctx ends the run early with what was measured so far.
func Run(ctx context.Context, cfg Config, o RunOptions) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t, err := cfg.target()
	if err != nil {
		return nil, err
	}
	var tc *tls.Config
	if t.TLS {
		if tc, err = cfg.clientTLS(); err != nil {
			return nil, err
		}
	}
	r := &run{cfg: cfg, target: t, dial: newDialer(t, &cfg, tc), clk: newMonoClock(), opts: o}
	r.res = &Result{
		Scenario: cfg.Scenario, Protocol: t.Protocol, URL: cfg.URL, StartedAt: time.Now(),
		Config: ResultConfig{
			Producers: cfg.Producers, Consumers: cfg.Consumers, SizeBytes: cfg.Size,
			Count: cfg.Count, DurationSeconds: cfg.Duration.Seconds(), Rate: cfg.Rate,
			Persistent: cfg.Persistent, Sync: cfg.SyncSends(), Ack: cfg.Ack,
			TxSize: cfg.TxSize, Prefetch: cfg.Prefetch,
		},
	}
	switch cfg.Scenario {
	case ScenarioTopic:
		r.res.Config.Subscribers, r.res.Config.Consumers = cfg.Subscribers, cfg.Subscribers
	case ScenarioConnections:
		r.res.Config = ResultConfig{Connections: cfg.Connections, HoldSeconds: cfg.Hold.Seconds()}
	}
	if t.Protocol == ProtocolMQTT {
		qos, clean := cfg.QoS, cfg.CleanSession
		r.res.Config.QoS, r.res.Config.CleanSession = &qos, &clean
	}
	// The first connection tells a missing broker from a slow one, and
	// fails the run within the connect timeout.
	probe, err := r.dial(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %w", ErrConnect, cfg.URL, err)
	}
	probe.close()
	var sp *sampler
	if cfg.BrokerPID > 0 {
		if sp, err = startSampler(cfg.BrokerPID); err != nil {
			return nil, err
		}
	}
	if cfg.Scenario == ScenarioConnections {
		err = r.connections(ctx)
	} else {
		err = r.messaging(ctx)
	}
	if sp != nil {
		r.res.Broker = sp.stop()
	}
	r.res.Interrupted = ctx.Err() != nil
	if err != nil {
		return nil, err
	}
	return r.res, nil
}

// run is the state of one Run, owned by its goroutine; the goroutines it
// starts share only the recorder and what they are handed.
type run struct {
	cfg    Config
	target Target
	dial   dialer
	clk    clock
	opts   RunOptions
	rec    *recorder
	res    *Result
}

// endpoint is a session with the subscription it consumes from, if any.
type endpoint struct {
	s   session
	sub subscription
}

// messaging runs the queue, topic and reqreply scenarios.
func (r *run) messaging(ctx context.Context) error {
	cfg := &r.cfg
	name := cfg.Destination
	if name == "" {
		name = fmt.Sprintf("wharf.bench.%s.%d.%d", cfg.Scenario, os.Getpid(), time.Now().UnixNano())
	}
	r.res.Destination = name
	target := dest{name: name, topic: cfg.Scenario == ScenarioTopic}
	transacted := cfg.TxSize > 0
	sub := subOptions{ack: cfg.Ack, prefetch: cfg.Prefetch}

	copies := 1
	if cfg.Scenario == ScenarioTopic {
		copies = cfg.Subscribers
	}
	// Replies from several responders come in no defined order; the
	// order of one producer's messages at one consumer is defined
	// (JMS 1.1 §4.4.10) and checked.
	ordered := cfg.Scenario != ScenarioReqReply || cfg.Consumers == 1
	r.rec = newRecorder(r.clk, copies, cfg.Producers, ordered)
	r.res.OrderChecked = ordered

	var all []session
	defer func() { closeAll(all) }()
	open := func(transacted bool, from *dest) (endpoint, error) {
		s, err := r.dial(ctx, transacted)
		if err != nil {
			return endpoint{}, fmt.Errorf("%w at %s: %w", ErrConnect, cfg.URL, err)
		}
		all = append(all, s)
		e := endpoint{s: s}
		if from != nil {
			if e.sub, err = s.subscribe(ctx, *from, sub); err != nil {
				return endpoint{}, fmt.Errorf("subscribe to %s: %w", from.name, err)
			}
		}
		return e, nil
	}

	// Consumers first, so that every message sent has somewhere to go
	// (a topic subscriber that is late misses messages).
	var consumers, responders, requesters []endpoint
	var replyTo []*dest
	switch cfg.Scenario {
	case ScenarioQueue, ScenarioTopic:
		n := cfg.Consumers
		if cfg.Scenario == ScenarioTopic {
			n = cfg.Subscribers
		}
		for range n {
			e, err := open(transacted, &target)
			if err != nil {
				return err
			}
			consumers = append(consumers, e)
		}
	case ScenarioReqReply:
		for range cfg.Consumers {
			e, err := open(transacted, &target)
			if err != nil {
				return err
			}
			responders = append(responders, e)
		}
		// Each requester gets its replies on its own queue, on a
		// connection of their own, so that the request loop does not
		// wait behind them.
		for i := range cfg.Producers {
			d := &dest{name: fmt.Sprintf("%s.reply.%d", name, i)}
			e, err := open(transacted, d)
			if err != nil {
				return err
			}
			consumers = append(consumers, e)
			replyTo = append(replyTo, d)
		}
	}
	for range cfg.Producers {
		e, err := open(transacted, nil)
		if err != nil {
			return err
		}
		requesters = append(requesters, e)
	}

	// Receivers run until every message arrived or the drain gives up;
	// senders stop at the count, the duration, or a stuck send's timeout.
	t0 := r.clk.now()
	sendEnd := t0 + cfg.Duration
	sendCtx, cancelSend := context.WithTimeout(ctx, cfg.Duration+cfg.Drain)
	defer cancelSend()
	recvCtx, cancelRecv := context.WithCancel(ctx)
	defer cancelRecv()

	var recvWG sync.WaitGroup
	// replied counts each requester's replies, for the closed loop.
	replied := make([]*replyGate, cfg.Producers)
	for i := range replied {
		replied[i] = &replyGate{wake: make(chan struct{}, 1)}
	}
	for i, e := range consumers {
		stream, idx := 0, i
		if cfg.Scenario == ScenarioTopic {
			stream, idx = i, 0
		}
		var gate *replyGate
		if cfg.Scenario == ScenarioReqReply {
			gate = replied[i]
		}
		recvWG.Go(func() {
			r.consume(recvCtx, e, cfg.TxSize, func(d delivery) {
				r.rec.deliver(stream, idx, d.body)
				if gate != nil {
					gate.add()
				}
			})
		})
	}
	for _, e := range responders {
		recvWG.Go(func() {
			// A responder's unit of work is one request and its reply:
			// transacted, it commits after each.
			r.consume(recvCtx, e, 1, func(d delivery) {
				rt := replyTarget(d, replyTo, r.target.Protocol == ProtocolMQTT)
				if rt == nil {
					r.rec.fail(errors.New("request without reply-to"))
					return
				}
				// The reply echoes the request: its stamp measures the
				// round trip.
				if err := e.s.send(recvCtx, *rt, d.body, nil, cfg.SyncSends()); err != nil && recvCtx.Err() == nil {
					r.rec.fail(fmt.Errorf("reply: %w", err))
				}
			})
		})
	}

	stopProgress := r.startProgress(ctx, t0)
	sent := make([]int64, cfg.Producers)
	var sendWG sync.WaitGroup
	for i, e := range requesters {
		share := int64(0)
		if cfg.Count > 0 {
			share = cfg.Count / int64(cfg.Producers)
			if int64(i) < cfg.Count%int64(cfg.Producers) {
				share++
			}
		}
		var sched *schedule
		if cfg.Rate > 0 {
			s := newSchedule(t0, cfg.Rate, cfg.Producers, i)
			sched = &s
		}
		var rt *dest
		var wait *replyGate
		if cfg.Scenario == ScenarioReqReply {
			rt = replyTo[i]
			if sched == nil {
				wait = replied[i]
			}
		}
		sendWG.Go(func() {
			sent[i] = r.produce(sendCtx, e.s, i, target, rt, sched, sendEnd, share, wait)
		})
	}
	sendWG.Wait()
	sendDone := r.clk.now()
	var total int64
	for _, n := range sent {
		total += n
	}
	expected := total * cfg.fanOut()
	r.rec.expect(expected)
	r.drain(ctx, sendDone)
	cancelRecv()
	recvWG.Wait()
	end := r.clk.now()
	stopProgress()

	rec := r.rec
	rec.mu.Lock()
	defer rec.mu.Unlock()
	res := r.res
	res.Sent, res.Received, res.Expected = total, rec.received, expected
	res.SendSeconds = (sendDone - t0).Seconds()
	res.ElapsedSeconds = (end - t0).Seconds()
	if res.SendSeconds > 0 {
		res.SendRate = float64(total) / res.SendSeconds
	}
	if span := (rec.lastRecv - t0).Seconds(); span > 0 && rec.received > 0 {
		res.ReceiveRate = float64(rec.received) / span
	}
	res.SendBytesPerSec = res.SendRate * float64(cfg.Size)
	res.RecvBytesPerSec = res.ReceiveRate * float64(cfg.Size)
	res.Latency = latencyOf(rec.hist)
	res.hist = rec.hist
	res.Timeline = rec.tl.result(sendDone-t0, end-t0)
	switch {
	case cfg.Scenario == ScenarioReqReply:
		res.LatencyMeasures = "round trip, request send to reply receipt"
	case cfg.Rate > 0:
		res.LatencyMeasures = "from the scheduled send time to receipt"
	default:
		res.LatencyMeasures = "from the start of the send to receipt"
	}
	if cfg.Rate > 0 && cfg.Scenario == ScenarioReqReply {
		res.LatencyMeasures = "round trip, from the scheduled request time to reply receipt"
	}
	for _, c := range rec.checkers {
		res.Lost += c.lost(sent)
		res.Duplicates += c.duplicates
		res.OutOfOrder += c.outOfOrder
		res.Foreign += c.foreign
	}
	res.Errors = rec.errs + rec.sendErr.Load()
	res.ErrorSamples = rec.samples
	return nil
}

// produce is one producer's loop; it returns how many messages it sent.
// A send that fails is counted as an error and its sequence number is
// used again, so that 1..n are the messages that left successfully.
// wait, when set, makes a closed-loop requester: the next request goes
// when the replies to all it sent (and committed) are in, or when none came
// for the drain time.
func (r *run) produce(ctx context.Context, s session, idx int, to dest, replyTo *dest, sched *schedule, end time.Duration, limit int64, wait *replyGate) int64 {
	cfg := &r.cfg
	body := newBody(cfg.Size)
	sync := cfg.SyncSends()
	var seq uint64
	perSec := tally{series: seriesSent}
	defer perSec.flush(r.rec)
	inTx := 0
	commit := func() {
		if err := s.commit(ctx); err != nil {
			r.rec.fail(fmt.Errorf("commit: %w", err))
		}
		inTx = 0
	}
	pace(ctx, r.clk, sched, end, limit, func(_ int64, at time.Duration) bool {
		putStamp(body, stamp{producer: idx, seq: seq + 1, sent: at})
		if err := s.send(ctx, to, body, replyTo, sync); err != nil {
			r.rec.sendErr.Add(1)
			if ctx.Err() == nil {
				r.rec.fail(fmt.Errorf("send: %w", err))
			}
			return !isDone(s)
		}
		seq++
		r.rec.sent.Add(1)
		perSec.add(r.rec, r.clk.now())
		if cfg.TxSize > 0 {
			if inTx++; inTx == cfg.TxSize {
				commit()
			}
		}
		if wait != nil && inTx == 0 {
			return wait.await(ctx, int64(seq), cfg.Drain, r.rec)
		}
		return true
	})
	if inTx > 0 {
		commit()
	}
	return int64(seq)
}

// replyTarget is where the reply to request d goes: its reply-to, or,
// with byStamp for a protocol without one (MQTT 3.1.1 has no message
// headers), the fixed reply topic of the requester whose index the stamp
// carries. nil is a request a STOMP or OpenWire broker lost the reply-to of.
func replyTarget(d delivery, replyTo []*dest, byStamp bool) *dest {
	if d.replyTo != nil || !byStamp {
		return d.replyTo
	}
	st, err := readStamp(d.body)
	if err != nil || st.producer < 0 || st.producer >= len(replyTo) {
		return nil
	}
	return replyTo[st.producer]
}

// replyGate counts the replies a requester received; its own goroutine
// waits on it, the reply consumer's adds to it.
type replyGate struct {
	n    atomic.Int64
	wake chan struct{} // capacity 1: a pending wake-up
}

func (g *replyGate) add() {
	g.n.Add(1)
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// await waits until n replies are in. A reply lost for the idle time is
// counted as an error and the requester goes on; ctx ending stops it.
func (g *replyGate) await(ctx context.Context, n int64, idle time.Duration, rec *recorder) bool {
	t := time.NewTimer(idle)
	defer t.Stop()
	for g.n.Load() < n {
		select {
		case <-g.wake:
			t.Reset(idle)
		case <-ctx.Done():
			return false
		case <-t.C:
			rec.fail(errors.New("no reply within the drain time"))
			return true
		}
	}
	return true
}

// consume is one consumer's loop: each message goes to handle, then is
// acknowledged as the run asks, until ctx ends or the connection does.
// txSize > 0 commits every txSize messages in a transacted session.
func (r *run) consume(ctx context.Context, e endpoint, txSize int, handle func(delivery)) {
	cfg := &r.cfg
	if cfg.TxSize == 0 {
		txSize = 0
	}
	inTx := 0
	defer func() {
		if inTx > 0 {
			// What was received counts; commit it so the broker does
			// not redeliver it to the next run.
			cctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
			e.s.commit(cctx)
			cancel()
		}
	}()
	for {
		d, err := e.sub.receive(ctx)
		if err != nil {
			if ctx.Err() == nil {
				r.rec.fail(fmt.Errorf("receive: %w", err))
			}
			return
		}
		handle(d)
		if txSize > 0 || cfg.Ack != AckAuto {
			if err := e.sub.ack(d); err != nil && ctx.Err() == nil {
				r.rec.fail(fmt.Errorf("ack: %w", err))
			}
		}
		if txSize > 0 {
			if inTx++; inTx == txSize {
				inTx = 0
				if err := e.s.commit(ctx); err != nil && ctx.Err() == nil {
					r.rec.fail(fmt.Errorf("commit: %w", err))
				}
			}
		}
	}
}

// drain waits until every expected message arrived, or nothing arrived
// for the drain time, or ctx ends.
func (r *run) drain(ctx context.Context, sendDone time.Duration) {
	tick := time.NewTicker(min(r.cfg.Drain/10, 50*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-r.rec.done:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
			if r.clk.now()-max(r.rec.idleSince(), sendDone) >= r.cfg.Drain {
				return
			}
		}
	}
}

// startProgress writes the live line until the returned stop is called,
// which clears it.
func (r *run) startProgress(ctx context.Context, t0 time.Duration) (stop func()) {
	w := r.opts.Progress
	if w == nil {
		return func() {}
	}
	interval := r.opts.ProgressInterval
	if interval <= 0 {
		interval = time.Second
	}
	quit, done := make(chan struct{}), make(chan struct{})
	total := r.cfg.Duration
	if r.cfg.Count > 0 && total == DefaultMaxDuration {
		total = 0
	}
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		var prev progress
		for {
			select {
			case <-quit:
				fmt.Fprint(w, "\r\x1b[K")
				return
			case <-ctx.Done():
				fmt.Fprint(w, "\r\x1b[K")
				return
			case <-t.C:
				p := r.progressNow()
				fmt.Fprintf(w, "\r\x1b[K%s", progressLine(p, r.clk.now()-t0, total, r.cfg.Count, prev, interval))
				prev = p
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

func (r *run) progressNow() progress {
	if r.rec != nil {
		return r.rec.progress()
	}
	return progress{}
}

// isDone reports whether s's connection has ended.
func isDone(s session) bool {
	select {
	case <-s.done():
		return true
	default:
		return false
	}
}

// closeAll closes sessions in parallel: an OpenWire close waits for the
// broker's answer, and a run may have hundreds.
func closeAll(all []session) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for _, s := range all {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			s.close()
		})
	}
	wg.Wait()
}
