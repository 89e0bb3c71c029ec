package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// connectParallel is how many connections the storm opens at once when no
// rate is given: enough to keep a broker's accept path busy without
// turning the test into one of the client's scheduler.
const connectParallel = 64

// connections runs the connection storm: open Config.Connections
// connections (at Config.Rate per second, or connectParallel at a time),
// hold them for Config.Hold, then close them. The latency histogram holds
// the time each connection took to open, handshake included.
func (r *run) connections(ctx context.Context) error {
	cfg := &r.cfg
	n := cfg.Connections
	r.rec = newRecorder(r.clk, 1, 1, false)
	cs := &ConnectionStats{Requested: int64(n)}
	conns := make([]session, n)
	var opened, failed atomic.Int64

	stop := r.startConnProgress(ctx, &opened, &failed)
	t0 := r.clk.now()
	var sched *schedule
	if cfg.Rate > 0 {
		s := newSchedule(t0, cfg.Rate, 1, 0)
		sched = &s
	}
	sem := make(chan struct{}, connectParallel)
	var wg sync.WaitGroup
	pace(ctx, r.clk, sched, t0+DefaultMaxDuration, int64(n), func(i int64, at time.Duration) bool {
		if sched == nil {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return false
			}
		}
		wg.Go(func() {
			if sched == nil {
				defer func() { <-sem }()
			}
			start := r.clk.now()
			if sched != nil {
				start = at // charged from when it was due
			}
			s, err := r.dial(ctx, false)
			took := r.clk.now() - start
			if err != nil {
				failed.Add(1)
				r.rec.fail(fmt.Errorf("connect: %w", err))
				return
			}
			conns[i] = s
			opened.Add(1)
			r.rec.mu.Lock()
			r.rec.hist.RecordValue(min(max(int64(took), histLowest), histHighest))
			r.rec.tl.add(seriesSent, r.clk.now(), 1)
			r.rec.mu.Unlock()
		})
		return true
	})
	wg.Wait()
	cs.OpenSeconds = (r.clk.now() - t0).Seconds()
	stop()
	cs.Opened, cs.Failed = opened.Load(), failed.Load()

	holdStart := r.clk.now()
	if err := r.clk.sleepUntil(ctx, holdStart+cfg.Hold); err != nil && ctx.Err() == nil {
		return err
	}
	cs.HoldSeconds = (r.clk.now() - holdStart).Seconds()
	var live []session
	for _, s := range conns {
		if s == nil {
			continue
		}
		if isDone(s) {
			cs.Dropped++
		}
		live = append(live, s)
	}
	closeStart := r.clk.now()
	closeAll(live)
	cs.CloseSeconds = (r.clk.now() - closeStart).Seconds()

	res := r.res
	res.Connections = cs
	res.ElapsedSeconds = (r.clk.now() - t0).Seconds()
	res.LatencyMeasures = "time to open a connection, handshake included"
	if sched != nil {
		res.LatencyMeasures += ", from when it was due"
	}
	r.rec.mu.Lock()
	defer r.rec.mu.Unlock()
	res.Latency = latencyOf(r.rec.hist)
	res.hist = r.rec.hist
	openEnd := time.Duration(cs.OpenSeconds * float64(time.Second))
	res.Timeline = r.rec.tl.result(openEnd, openEnd)
	res.Errors = r.rec.errs
	res.ErrorSamples = r.rec.samples
	return nil
}

func (r *run) startConnProgress(ctx context.Context, opened, failed *atomic.Int64) (stop func()) {
	w := r.opts.Progress
	if w == nil {
		return func() {}
	}
	interval := r.opts.ProgressInterval
	if interval <= 0 {
		interval = time.Second
	}
	quit, done := make(chan struct{}), make(chan struct{})
	t0 := r.clk.now()
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				fmt.Fprint(w, "\r\x1b[K")
				return
			case <-ctx.Done():
				fmt.Fprint(w, "\r\x1b[K")
				return
			case <-t.C:
				fmt.Fprintf(w, "\r\x1b[K%s  opened %d/%d  failed %d", (r.clk.now() - t0).Round(100*time.Millisecond),
					opened.Load(), r.cfg.Connections, failed.Load())
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}
