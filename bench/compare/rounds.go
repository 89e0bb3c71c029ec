package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"wharf/bench"
)

// Sample is one run of one scenario against one broker.
type Sample struct {
	Round  int    `json:"round"`
	Broker string `json:"broker"`
	// Value is the scenario's metric; meaningful only without Error.
	Value float64 `json:"value"`
	Error string  `json:"error,omitempty"`

	SendRate    float64 `json:"send_rate,omitempty"`
	ReceiveRate float64 `json:"receive_rate,omitempty"`
	P50us       float64 `json:"p50_us,omitempty"`
	P99us       float64 `json:"p99_us,omitempty"`
	Sent        int64   `json:"sent,omitempty"`
	Received    int64   `json:"received,omitempty"`
	Lost        int64   `json:"lost,omitempty"`
	Duplicates  int64   `json:"duplicates,omitempty"`
	OutOfOrder  int64   `json:"out_of_order,omitempty"`
	Errors      int64   `json:"errors,omitempty"`
	Opened      int64   `json:"opened,omitempty"`
	RSSStart    int64   `json:"rss_start_bytes,omitempty"`
	RSSMax      int64   `json:"rss_max_bytes,omitempty"`
	CPUSeconds  float64 `json:"broker_cpu_s,omitempty"`
	Seconds     float64 `json:"elapsed_s"`
}

// valid reports whether s has a value to compare.
func (s Sample) valid() bool { return s.Error == "" }

// runner runs the scenarios against the brokers, round after round.
type runner struct {
	// brokers are the long-lived brokers by name.
	brokers map[string]*broker
	// fresh starts a broker process of the given name for one run of a
	// fresh scenario; the runner stops it after the run.
	fresh  func(ctx context.Context, name string, round int) (*broker, error)
	rounds int
	// deadline, when set, ends the comparison after the round in
	// progress when the next one would not finish before it.
	deadline time.Time
	scale    float64
	log      io.Writer
	// ran records "scenario broker" for each run in order, for tests.
	ran []string
	// jmsCP is the classpath of the compiled JMS client benchmark, empty
	// when it could not be built (jmsErr says why).
	jmsCP, jmsErr string
}

// lineup is who runs sc, in order, and which pairs are compared: Wharf
// against each reference when Wharf has sc's connector; otherwise the
// first reference against the others, with the reason in note.
func (r *runner) lineup(sc scenario) (order []string, pairs [][2]string, note string) {
	// A fresh scenario starts its own processes, of the brokers that are
	// running with the connector it needs.
	has := func(name string) bool {
		b := r.brokers[name]
		return b != nil && b.urls[sc.conn] != "" && (!sc.fresh || r.fresh != nil)
	}
	var refs []string
	for _, ref := range sc.refs {
		if has(ref) {
			refs = append(refs, ref)
		}
	}
	if has(nameWharf) {
		order = append([]string{nameWharf}, refs...)
		for _, ref := range refs {
			pairs = append(pairs, [2]string{nameWharf, ref})
		}
		return order, pairs, ""
	}
	note = fmt.Sprintf("wharf: n/a (no %s listener)", connLabel(sc.conn))
	if len(refs) == 0 {
		return nil, nil, note
	}
	// The last reference (ActiveMQ) against the first (Mosquitto).
	subject := refs[len(refs)-1]
	for _, ref := range refs[:len(refs)-1] {
		pairs = append(pairs, [2]string{subject, ref})
	}
	return refs, pairs, note
}

func connLabel(conn string) string {
	switch conn {
	case connMQTT, connMQTTNIO:
		return "MQTT"
	case connSTOMP, connSTOMPNIO:
		return "STOMP"
	}
	return "OpenWire"
}

// run performs the rounds and returns the samples per scenario id, and
// how many rounds were completed.
func (r *runner) run(ctx context.Context, scs []scenario) (map[string][]Sample, int) {
	samples := map[string][]Sample{}
	var roundTime time.Duration
	done := 0
	for round := 1; round <= r.rounds && ctx.Err() == nil; round++ {
		if !r.deadline.IsZero() && round > 1 && time.Now().Add(roundTime).After(r.deadline) {
			fmt.Fprintf(r.log, "stopping after round %d: another round would end past the time budget\n", done)
			break
		}
		start := time.Now()
		for _, sc := range scs {
			order, _, _ := r.lineup(sc)
			for _, name := range order {
				if ctx.Err() != nil {
					break
				}
				s := r.measure(ctx, sc, name, round)
				samples[sc.ID] = append(samples[sc.ID], s)
				r.ran = append(r.ran, sc.ID+" "+name)
				fmt.Fprintf(r.log, "round %d  %-42s %-9s %s\n", round, sc.Title, name, describeSample(sc.metric, s))
			}
		}
		if ctx.Err() == nil {
			done = round
		}
		roundTime = time.Since(start)
	}
	return samples, done
}

// measure runs sc once against the broker called name.
func (r *runner) measure(ctx context.Context, sc scenario, name string, round int) Sample {
	s := Sample{Round: round, Broker: name}
	b := r.brokers[name]
	if sc.fresh {
		fb, err := r.fresh(ctx, name, round)
		if err != nil {
			s.Error = err.Error()
			return s
		}
		defer fb.stop()
		b = fb
	}
	if b == nil || !b.alive() {
		s.Error = name + " is not running"
		return s
	}
	if sc.jms != nil {
		return r.measureJMS(ctx, *sc.jms, b, s)
	}
	cfg := sc.config(b.urls[sc.conn], b.pid, r.scale)
	res, err := bench.Run(ctx, cfg, bench.RunOptions{})
	if err != nil {
		s.Error = err.Error()
		return s
	}
	s.Seconds = res.ElapsedSeconds
	s.SendRate, s.ReceiveRate = res.SendRate, res.ReceiveRate
	s.P50us, s.P99us = res.Latency.P50, res.Latency.P99
	s.Sent, s.Received, s.Lost, s.Duplicates, s.OutOfOrder, s.Errors = res.Sent, res.Received, res.Lost, res.Duplicates, res.OutOfOrder, res.Errors
	if c := res.Connections; c != nil {
		s.Opened, s.Sent = c.Opened, 0
	}
	if br := res.Broker; br != nil {
		s.RSSStart, s.RSSMax, s.CPUSeconds = br.RSSStartBytes, br.RSSMaxBytes, br.CPUSeconds
	}
	v, ok := sc.metric.of(res)
	switch {
	case res.Interrupted:
		s.Error = "interrupted"
	case !ok:
		s.Error = "no " + sc.metric.name + " measured"
	default:
		s.Value = v
	}
	return s
}

// describeSample is a run's progress line.
func describeSample(m metric, s Sample) string {
	if !s.valid() {
		return "FAILED: " + s.Error
	}
	if s.Opened > 0 {
		return fmt.Sprintf("%s per connection (%d opened)", fmtValue(s.Value, m.unit), s.Opened)
	}
	out := fmt.Sprintf("%s %s", fmtValue(s.Value, m.unit), m.unit)
	out += fmt.Sprintf("  p99 %s  sent %d received %d", fmtMicros(s.P99us), s.Sent, s.Received)
	if bad := s.Lost + s.Duplicates + s.OutOfOrder + s.Errors; bad > 0 {
		out += fmt.Sprintf("  (lost %d, duplicated %d, out of order %d, errors %d)", s.Lost, s.Duplicates, s.OutOfOrder, s.Errors)
	}
	return out
}

// Comparison is one broker's figures against another's in one scenario.
type Comparison struct {
	Subject   string `json:"subject"`
	Reference string `json:"reference"`
	// Ratio is the median of the per-round ratios subject/reference;
	// Min and Max are their range. Rounds counts the rounds in which
	// both had a value.
	Ratio  float64 `json:"ratio"`
	Min    float64 `json:"ratio_min"`
	Max    float64 `json:"ratio_max"`
	Rounds int     `json:"rounds"`
}

// compare pairs subject's and reference's samples by round: the two ran
// one after the other, under the same conditions on the machine.
func compare(samples []Sample, subject, reference string) Comparison {
	c := Comparison{Subject: subject, Reference: reference}
	byRound := map[int]Sample{}
	for _, s := range samples {
		if s.Broker == reference && s.valid() {
			byRound[s.Round] = s
		}
	}
	var ratios []float64
	for _, s := range samples {
		ref, ok := byRound[s.Round]
		if s.Broker != subject || !s.valid() || !ok || ref.Value <= 0 {
			continue
		}
		ratios = append(ratios, s.Value/ref.Value)
	}
	c.Rounds = len(ratios)
	if len(ratios) == 0 {
		c.Ratio, c.Min, c.Max = math.NaN(), math.NaN(), math.NaN()
		return c
	}
	c.Ratio = median(ratios)
	c.Min, c.Max = slices.Min(ratios), slices.Max(ratios)
	return c
}

// medianOf is the median value of a broker's valid samples, NaN if none.
func medianOf(samples []Sample, name string) float64 {
	var vs []float64
	for _, s := range samples {
		if s.Broker == name && s.valid() {
			vs = append(vs, s.Value)
		}
	}
	return median(vs)
}

// median of vs; the mean of the middle two for an even count; NaN for
// none.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
