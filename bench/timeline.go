package bench

import "time"

// The two series of a run's timeline.
const (
	seriesSent     = 0 // messages sent; connections opened in the connections scenario
	seriesReceived = 1 // deliveries, duplicates included
)

// maxTimelineBuckets bounds a timeline's memory whatever the run's
// duration: an hour at one-second resolution, 56 KiB for both series.
const maxTimelineBuckets = 3600

// timeline counts events per interval of the run's clock, for --plot. The
// interval starts at a second; when the run outgrows maxTimelineBuckets
// of them it doubles and pairs of buckets merge, so memory stays bounded
// and the whole run stays in view. Not safe for concurrent use: the
// recorder's mutex guards it.
type timeline struct {
	width  time.Duration // bucket width, a power of two of seconds
	counts [2][]int64    // [series][bucket] events
}

func newTimeline() timeline { return timeline{width: time.Second} }

// add counts n events of series at time at (since the run's origin).
func (t *timeline) add(series int, at time.Duration, n int64) {
	if at < 0 {
		at = 0
	}
	i := int(at / t.width)
	for i >= maxTimelineBuckets {
		t.fold()
		i = int(at / t.width)
	}
	c := t.counts[series]
	for len(c) <= i {
		c = append(c, 0)
	}
	c[i] += n
	t.counts[series] = c
}

// fold doubles the bucket width, merging pairs of buckets.
func (t *timeline) fold() {
	for s, c := range t.counts {
		for i := range (len(c) + 1) / 2 {
			v := c[2*i]
			if 2*i+1 < len(c) {
				v += c[2*i+1]
			}
			c[i] = v
		}
		t.counts[s] = c[:(len(c)+1)/2]
	}
	t.width *= 2
}

// result copies the timeline into a Timeline; sendEnd and end are when
// sending and the run ended, since the origin.
func (t *timeline) result(sendEnd, end time.Duration) *Timeline {
	cp := func(c []int64) []int64 { return append([]int64{}, c...) }
	return &Timeline{
		IntervalSeconds: t.width.Seconds(),
		SendEndSeconds:  sendEnd.Seconds(),
		EndSeconds:      end.Seconds(),
		Sent:            cp(t.counts[seriesSent]),
		Received:        cp(t.counts[seriesReceived]),
	}
}

// tally counts one goroutine's events per second and hands each finished
// second to the recorder, so that a producer takes the recorder's lock
// once a second instead of once a message. Owned by its goroutine.
type tally struct {
	series int
	sec    int64 // the second being counted
	n      int64
}

func (t *tally) add(r *recorder, now time.Duration) {
	if s := int64(now / time.Second); s != t.sec {
		t.flush(r)
		t.sec = s
	}
	t.n++
}

// flush hands the current second's count over.
func (t *tally) flush(r *recorder) {
	if t.n == 0 {
		return
	}
	r.mu.Lock()
	r.tl.add(t.series, time.Duration(t.sec)*time.Second, t.n)
	r.mu.Unlock()
	t.n = 0
}

// Timeline is how many messages were sent and received in each interval
// of a run, from its start: the data of the throughput chart of --plot.
type Timeline struct {
	// IntervalSeconds is the width of each bucket: 1, or a power of two
	// for runs longer than an hour.
	IntervalSeconds float64 `json:"interval_s"`
	// SendEndSeconds and EndSeconds are when sending and the run ended;
	// the last bucket of each series may be partial.
	SendEndSeconds float64 `json:"send_end_s"`
	EndSeconds     float64 `json:"end_s"`
	// Sent and Received are counts per bucket (in the connections
	// scenario, Sent counts connections opened). Trailing empty buckets
	// are left out, so they may differ in length.
	Sent     []int64 `json:"sent"`
	Received []int64 `json:"received"`
}

// Segment is a stretch of time, in seconds from the start of the run, and
// the rate of a series over it in events per second.
type Segment struct {
	From, To, Rate float64
}

// SentSegments and ReceivedSegments are the series as rates per bucket.
func (t *Timeline) SentSegments() []Segment { return t.segments(t.Sent, t.SendEndSeconds) }

// ReceivedSegments: see SentSegments.
func (t *Timeline) ReceivedSegments() []Segment { return t.segments(t.Received, t.EndSeconds) }

// segments divides each count by its bucket's width. The bucket the
// series ended in counts only up to end, or, when that is less than a
// quarter of it, joins the bucket before: a few messages just before the
// end would otherwise show as a spike or a drop in rate.
func (t *Timeline) segments(c []int64, end float64) []Segment {
	w := t.IntervalSeconds
	var out []Segment
	for i, n := range c {
		from := float64(i) * w
		to := from + w
		if end < to {
			to = max(end, from)
			if last := len(out) - 1; to-from < w/4 && last >= 0 {
				p := &out[last]
				p.Rate = (p.Rate*(p.To-p.From) + float64(n)) / (to - p.From)
				p.To = to
				continue
			}
		}
		out = append(out, Segment{From: from, To: to, Rate: float64(n) / max(to-from, w/100)})
	}
	return out
}
