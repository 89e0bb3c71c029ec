package bench

import (
	"context"
	"time"
)

// clock is the run's time: a duration since the run's origin. Producers
// and consumers read the same clock, so a stamp written by one is
// comparable with a reading of the other.
type clock interface {
	// now is the time since the origin; safe from any goroutine.
	now() time.Duration
	// sleepUntil returns when now() >= t, or with ctx's error.
	sleepUntil(ctx context.Context, t time.Duration) error
}

// monoClock reads the monotonic system clock.
type monoClock struct{ origin time.Time }

func newMonoClock() monoClock { return monoClock{origin: time.Now()} }

func (c monoClock) now() time.Duration { return time.Since(c.origin) }

// spinBelow is how close to the due time a producer stops sleeping and
// sends: timers are not finer than this, and sending a little early does
// not change the measurement, which starts at the due time anyway.
const spinBelow = 50 * time.Microsecond

func (c monoClock) sleepUntil(ctx context.Context, t time.Duration) error {
	d := t - c.now()
	if d <= spinBelow {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// schedule is when each message of one producer is due in open loop.
// Latency is measured from the due time, not from the moment the send
// started: a producer held up by a slow broker sends its overdue messages
// late, back to back, and each of them is charged the wait since it was
// due. Measuring from the actual send would hide the stall, because a
// blocked producer sends nothing that could be measured slow
// (coordinated omission; Gil Tene, "How NOT to measure latency").
type schedule struct {
	start    time.Duration // due time of message 0
	interval float64       // nanoseconds between messages of this producer
}

// newSchedule spreads a total rate over producers: each sends at
// rate/producers, and producer i starts i/rate after the first so that the
// sends interleave instead of arriving in bursts of producers.
func newSchedule(start time.Duration, rate float64, producers, i int) schedule {
	return schedule{
		start:    start + time.Duration(float64(i)*1e9/rate),
		interval: float64(producers) * 1e9 / rate,
	}
}

// due is when message n (from 0) is due.
func (s schedule) due(n int64) time.Duration {
	return s.start + time.Duration(float64(n)*s.interval)
}

// pace runs one producer's send loop: it calls send for message n = 0, 1,
// ... until limit messages (0: no limit) were sent, send returns false,
// ctx ends, or the next message would start at or after end. With sched nil
// it is closed loop: each send starts when the previous one returned and is
// stamped with its actual start. With a schedule each send waits for its
// due time, or starts at once when overdue, and is stamped with the due
// time. It returns the number of calls to send.
func pace(ctx context.Context, clk clock, sched *schedule, end time.Duration, limit int64, send func(n int64, stamped time.Duration) bool) int64 {
	var n int64
	for (limit == 0 || n < limit) && ctx.Err() == nil {
		var at time.Duration
		if sched != nil {
			at = sched.due(n)
			if at >= end || clk.sleepUntil(ctx, at) != nil {
				break
			}
		} else if at = clk.now(); at >= end {
			break
		}
		n++
		if !send(n-1, at) {
			break
		}
	}
	return n
}
