package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
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
	// TargetRate is an open-loop run's send rate, msg/s; SendRate falls
	// short of it when the broker held the sender back.
	TargetRate float64 `json:"target_rate,omitempty"`
	Seconds    float64 `json:"elapsed_s"`
}

// valid reports whether s has a value to compare.
func (s Sample) valid() bool { return s.Error == "" }

// runner runs the scenarios against the brokers, round after round.
type runner struct {
	// brokers are the long-lived brokers by name.
	brokers map[string]*broker
	// fresh starts a broker process of the given name for one run of a
	// fresh scenario; the runner stops it after the run.
	// storeEvery starts it with concurrentStoreAndDispatchQueues off
	// (scenario.storeEvery).
	fresh  func(ctx context.Context, name string, round int, storeEvery bool) (*broker, error)
	rounds int
	// deadline, when set, ends the comparison after the round in
	// progress when the next one would not finish before it.
	deadline time.Time
	scale    float64
	log      io.Writer
	// ran records "scenario broker" for each run in order, for tests.
	ran []string
	// diskDir is where the disk's runs (nameDisk) write and fsync; empty
	// leaves the disk out. fsyncPerSec is the rate measured at the start,
	// for the scenarios that send at a share of it.
	diskDir     string
	fsyncPerSec float64
	// missing says why a reference broker is not running (not
	// installed, failed to start), for the notes of its rows.
	missing map[string]string
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
		if name == nameDisk {
			return r.diskDir != ""
		}
		b, conn := r.target(name, sc.conn)
		return b != nil && b.urls[conn] != "" && (!sc.fresh || r.fresh != nil)
	}
	var refs, notes []string
	for _, ref := range sc.refs {
		if has(ref) {
			refs = append(refs, ref)
		} else if why := r.missing[ref]; why != "" {
			notes = append(notes, ref+": "+why)
		}
	}
	if has(nameWharf) {
		order = append([]string{nameWharf}, refs...)
		for _, ref := range refs {
			pairs = append(pairs, [2]string{nameWharf, ref})
		}
		return order, pairs, strings.Join(notes, "; ")
	}
	note = strings.Join(append([]string{fmt.Sprintf("wharf: n/a (no %s listener)", connLabel(sc.conn))}, notes...), "; ")
	if len(refs) == 0 {
		return nil, nil, note
	}
	// ActiveMQ, the broker Wharf reimplements, against the others (the
	// last reference when ActiveMQ is not among them).
	subject := refs[len(refs)-1]
	if slices.Contains(refs, nameActiveMQ) {
		subject = nameActiveMQ
	}
	for _, ref := range refs {
		if ref != subject {
			pairs = append(pairs, [2]string{subject, ref})
		}
	}
	return refs, pairs, note
}

// target is the broker process and connector a run of the broker called
// name uses: nameWharfSTOMP is Wharf's own process over STOMP.
func (r *runner) target(name, conn string) (*broker, string) {
	if name == nameWharfSTOMP {
		return r.brokers[nameWharf], connSTOMP
	}
	return r.brokers[name], conn
}

func connLabel(conn string) string {
	switch conn {
	case connAMQP:
		return "AMQP"
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
	if name == nameDisk {
		return r.measureDisk(sc, s)
	}
	b, conn := r.target(name, sc.conn)
	if sc.fresh {
		fb, err := r.fresh(ctx, name, round, sc.storeEvery)
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
	cfg := sc.config(b.urls[conn], b.pid, r.scale, r.fsyncPerSec)
	brokerSettings(name, &cfg)
	s.TargetRate = cfg.Rate
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

// diskProbeTime is how long the disk's run in a round writes and syncs.
const diskProbeTime = time.Second

// measureDisk is the disk's run next to Wharf's: write+fsync of 4 KiB in
// the data directory's file system for diskProbeTime. Its value is in
// the scenario's metric: operations per second for a throughput row, the
// 99th percentile of their times for a latency row.
func (r *runner) measureDisk(sc scenario, s Sample) Sample {
	p, err := fsyncRate(r.diskDir, diskProbeTime)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	s.Seconds, s.SendRate, s.ReceiveRate = diskProbeTime.Seconds(), p.PerSec, p.PerSec
	s.P50us, s.P99us = micros(p.P50), micros(p.P99)
	s.Value = p.PerSec
	if sc.metric.latency {
		s.Value = s.P99us
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
	if s.Broker == nameDisk {
		return fmt.Sprintf("%.0f fsync/s  p50 %s  p99 %s", s.ReceiveRate, fmtMicros(s.P50us), fmtMicros(s.P99us))
	}
	var out string
	if m.latency {
		out = fmt.Sprintf("p50 %s  p99 %s  sent at %.0f msg/s (target %.0f)  sent %d received %d",
			fmtMicros(s.P50us), fmtMicros(s.P99us), s.SendRate, s.TargetRate, s.Sent, s.Received)
	} else {
		out = fmt.Sprintf("%s %s  p99 %s  sent %d received %d", fmtValue(s.Value, m.unit), m.unit, fmtMicros(s.P99us), s.Sent, s.Received)
	}
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
