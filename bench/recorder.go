package bench

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in nanoseconds from 1 ns to an hour with three
// significant digits (0.1% resolution at every magnitude): about 250 KiB.
const (
	histLowest  = 1
	histHighest = int64(time.Hour)
	histDigits  = 3
)

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, histDigits)
}

// maxErrorSamples is how many distinct error texts a run keeps for the
// report.
const maxErrorSamples = 5

// recorder collects what the run's goroutines observe. Its methods are
// safe from any goroutine. One mutex guards the histogram and checkers
// (see doc.go); the send counters are atomics because every producer
// bumps them and nobody needs them consistent with each other.
type recorder struct {
	clk clock

	sent    atomic.Int64
	sendErr atomic.Int64

	mu        sync.Mutex
	hist      *hdrhistogram.Histogram
	checkers  []*checker // one per copy of the stream
	received  int64      // every delivery, duplicates included
	unique    int64      // deliveries new to their copy
	firstRecv time.Duration
	lastRecv  time.Duration // time of the last delivery, for the idle drain
	errs      int64
	samples   []string
	tl        timeline // per-second counts, for --plot
	// want is the number of unique deliveries that completes the run,
	// known once sending has ended; -1 before.
	want int64
	done chan struct{} // closed when unique reaches want
}

func newRecorder(clk clock, copies, producers int, ordered bool) *recorder {
	r := &recorder{clk: clk, hist: newHistogram(), tl: newTimeline(), want: -1, done: make(chan struct{})}
	for range copies {
		r.checkers = append(r.checkers, newChecker(producers, ordered))
	}
	return r
}

// deliver records a message that consumer received at now: its latency
// from the stamp in body, and its arrival in the checker of stream (the
// copy of the message stream it belongs to, see checker).
func (r *recorder) deliver(stream, consumer int, body []byte) {
	now := r.clk.now()
	st, err := readStamp(body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.received++
	if r.received == 1 {
		r.firstRecv = now
	}
	r.lastRecv = now
	r.tl.add(seriesReceived, now, 1)
	if err != nil {
		r.checkers[stream].foreign++
		return
	}
	// A latency beyond the histogram's range is clamped rather than
	// lost: it is still the run's worst.
	r.hist.RecordValue(min(max(int64(now-st.sent), histLowest), histHighest))
	if r.checkers[stream].record(consumer, st.producer, st.seq) {
		r.unique++
		if r.unique == r.want {
			close(r.done)
		}
	}
}

// expect says how many unique deliveries end the run; called once, when
// sending has ended.
func (r *recorder) expect(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.want = n
	if r.unique >= n {
		close(r.done)
	}
}

// fail counts an error and keeps its text if it is a new one.
func (r *recorder) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs++
	if len(r.samples) >= maxErrorSamples {
		return
	}
	s := err.Error()
	for _, x := range r.samples {
		if x == s {
			return
		}
	}
	r.samples = append(r.samples, s)
}

// idleSince is the time of the last delivery (0 if none).
func (r *recorder) idleSince() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastRecv
}

// progress is a snapshot for the live line.
type progress struct {
	sent, received int64
	p99            time.Duration
}

func (r *recorder) progress() progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return progress{sent: r.sent.Load(), received: r.received, p99: time.Duration(r.hist.ValueAtQuantile(99))}
}
