package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Result is the outcome of one run; `wharf bench --json` prints it.
// Rates are in messages per second, latencies in microseconds.
type Result struct {
	Scenario    Scenario     `json:"scenario"`
	Protocol    Protocol     `json:"protocol"`
	URL         string       `json:"url"`
	Destination string       `json:"destination,omitempty"`
	Config      ResultConfig `json:"config"`
	StartedAt   time.Time    `json:"started_at"`

	// ElapsedSeconds runs from the first send to the end of the run (last
	// delivery, or the drain giving up); SendSeconds to the last send.
	ElapsedSeconds float64 `json:"elapsed_s"`
	SendSeconds    float64 `json:"send_s"`

	Sent int64 `json:"sent"`
	// Received counts every delivery, duplicates included; Expected is
	// Sent times the fan-out.
	// Rates are messages per second: sent over the send phase, received
	// from the first send to the last delivery.
	Received        int64   `json:"received"`
	Expected        int64   `json:"expected"`
	SendRate        float64 `json:"send_rate"`
	ReceiveRate     float64 `json:"receive_rate"`
	SendBytesPerSec float64 `json:"send_bytes_per_s"`
	RecvBytesPerSec float64 `json:"receive_bytes_per_s"`
	// Latency is in microseconds; LatencyMeasures says between which
	// two moments.
	Latency         Latency  `json:"latency_us"`
	LatencyMeasures string   `json:"latency_measures"`
	Errors          int64    `json:"errors"`
	ErrorSamples    []string `json:"error_samples,omitempty"`
	// Lost, Duplicates and OutOfOrder count per copy of the stream (a
	// topic message missing at two subscribers is lost twice); Foreign
	// counts deliveries without a bench stamp or from an unknown producer
	// (leftovers on a reused destination).
	Lost       int64 `json:"lost"`
	Duplicates int64 `json:"duplicates"`
	OutOfOrder int64 `json:"out_of_order"`
	Foreign    int64 `json:"foreign"`
	// OrderChecked is false for request/reply with several responders,
	// whose replies come in no defined order.
	OrderChecked bool `json:"order_checked"`

	// Interrupted is set when the run was cancelled (Ctrl-C) before it
	// ended by itself: messages in flight then count as lost.
	Interrupted bool `json:"interrupted,omitempty"`

	Connections *ConnectionStats `json:"connections,omitempty"`
	Broker      *BrokerStats     `json:"broker,omitempty"`

	// Timeline counts sends and deliveries (connections opened) per
	// second of the run.
	Timeline *Timeline `json:"timeline,omitempty"`
	// hist is the latency histogram, for the plot's percentile curve.
	hist *hdrhistogram.Histogram
}

// ResultConfig is the configuration a Result was measured with.
type ResultConfig struct {
	Producers       int     `json:"producers"`
	Consumers       int     `json:"consumers"`
	Subscribers     int     `json:"subscribers,omitempty"`
	SizeBytes       int     `json:"size_bytes"`
	Count           int64   `json:"count"`
	DurationSeconds float64 `json:"duration_s"`
	Rate            float64 `json:"rate"`
	Persistent      bool    `json:"persistent"`
	Sync            bool    `json:"sync"`
	Ack             AckMode `json:"ack"`
	TxSize          int     `json:"tx"`
	Prefetch        int     `json:"prefetch"`
	Connections     int     `json:"connections,omitempty"`
	HoldSeconds     float64 `json:"hold_s,omitempty"`
	// QoS and CleanSession are set for MQTT runs only.
	QoS          *int  `json:"qos,omitempty"`
	CleanSession *bool `json:"clean_session,omitempty"`
}

// Latency holds percentiles of a latency distribution, in microseconds.
type Latency struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99_9"`
	Max   float64 `json:"max"`
}

// ConnectionStats is the outcome of the connections scenario.
type ConnectionStats struct {
	Requested int64 `json:"requested"`
	Opened    int64 `json:"opened"`
	Failed    int64 `json:"failed"`
	// Dropped counts connections that ended while held.
	Dropped int64 `json:"dropped"`
	// OpenSeconds is the time to open them all; CloseSeconds to close.
	OpenSeconds  float64 `json:"open_s"`
	CloseSeconds float64 `json:"close_s"`
	HoldSeconds  float64 `json:"hold_s"`
}

// OK reports whether the run was clean: not interrupted, no errors,
// nothing lost, duplicated, reordered or foreign.
func (r *Result) OK() bool {
	ok := !r.Interrupted && r.Errors == 0 && r.Lost == 0 && r.Duplicates == 0 && r.OutOfOrder == 0 && r.Foreign == 0
	if c := r.Connections; c != nil {
		ok = ok && c.Failed == 0 && c.Dropped == 0
	}
	return ok
}

func latencyOf(h *hdrhistogram.Histogram) Latency {
	us := func(ns int64) float64 { return math.Round(float64(ns)/100) / 10 }
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		Count: h.TotalCount(),
		Mean:  math.Round(h.Mean()/100) / 10,
		P50:   us(h.ValueAtQuantile(50)),
		P90:   us(h.ValueAtQuantile(90)),
		P99:   us(h.ValueAtQuantile(99)),
		P999:  us(h.ValueAtQuantile(99.9)),
		Max:   us(h.Max()),
	}
}

// WriteText writes r as the summary table.
func (r *Result) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	c := r.Config
	mode := "closed loop"
	if c.Rate > 0 {
		mode = fmt.Sprintf("open loop at %s msg/s", fmtCount(c.Rate))
	}
	dur := "non-persistent"
	if c.Persistent {
		dur = "persistent"
	}
	if c.QoS != nil {
		dur = fmt.Sprintf("QoS %d", *c.QoS)
		if c.CleanSession != nil && !*c.CleanSession {
			dur += ", persistent session"
		}
	}
	if c.Sync {
		dur += ", sync sends"
	}
	fmt.Fprintf(tw, "wharf bench %s over %s (%s)\n", r.Scenario, r.URL, r.Protocol)
	switch r.Scenario {
	case ScenarioConnections:
		fmt.Fprintf(tw, "  %d connections, held %s\n", c.Connections, fmtSeconds(c.HoldSeconds))
	default:
		who := plural(c.Producers, "producer") + ", " + plural(c.Consumers, "consumer")
		switch r.Scenario {
		case ScenarioTopic:
			who = plural(c.Producers, "publisher") + ", " + plural(c.Subscribers, "subscriber")
		case ScenarioReqReply:
			who = plural(c.Producers, "requester") + ", " + plural(c.Consumers, "responder")
		}
		ack := "ack " + string(c.Ack)
		if c.TxSize > 0 {
			ack = fmt.Sprintf("transacted, commit every %d", c.TxSize)
		}
		if c.Prefetch > 0 {
			ack += fmt.Sprintf(", prefetch %d", c.Prefetch)
		}
		fmt.Fprintf(tw, "  %s, %d B, %s, %s, %s\n", who, c.SizeBytes, dur, ack, mode)
		fmt.Fprintf(tw, "  destination %s\n\n", r.Destination)
		fmt.Fprintf(tw, "\tsent\treceived\t\n")
		fmt.Fprintf(tw, "messages\t%d\t%d\t(expected %d)\n", r.Sent, r.Received, r.Expected)
		fmt.Fprintf(tw, "rate (msg/s)\t%s\t%s\t\n", fmtCount(r.SendRate), fmtCount(r.ReceiveRate))
		fmt.Fprintf(tw, "throughput\t%s\t%s\t\n", fmtBytes(r.SendBytesPerSec)+"/s", fmtBytes(r.RecvBytesPerSec)+"/s")
		fmt.Fprintf(tw, "elapsed\t%s\t%s\t\n", fmtSeconds(r.SendSeconds), fmtSeconds(r.ElapsedSeconds))
	}
	if cs := r.Connections; cs != nil {
		fmt.Fprintf(tw, "\nconnections\t%d opened, %d failed, %d dropped while held\n", cs.Opened, cs.Failed, cs.Dropped)
		fmt.Fprintf(tw, "open all\t%s (%s/s)\n", fmtSeconds(cs.OpenSeconds), fmtCount(float64(cs.Opened)/math.Max(cs.OpenSeconds, 1e-9)))
		fmt.Fprintf(tw, "close all\t%s\n", fmtSeconds(cs.CloseSeconds))
		if b := r.Broker; b != nil && cs.Opened > 0 {
			fmt.Fprintf(tw, "broker memory\t%s per connection (RSS growth from start to max)\n",
				fmtBytes(float64(b.RSSMaxBytes-b.RSSStartBytes)/float64(cs.Opened)))
		}
	}
	l := r.Latency
	fmt.Fprintf(tw, "\nlatency\tp50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
		fmtMicros(l.P50), fmtMicros(l.P90), fmtMicros(l.P99), fmtMicros(l.P999), fmtMicros(l.Max))
	fmt.Fprintf(tw, "\t%s; %d samples, mean %s\n", r.LatencyMeasures, l.Count, fmtMicros(l.Mean))
	if r.Scenario != ScenarioConnections {
		check := "ok, every message exactly once"
		if r.OrderChecked {
			check += ", in order"
		} else {
			check += " (order not checked: replies from several responders)"
		}
		if r.Lost+r.Duplicates+r.OutOfOrder+r.Foreign > 0 {
			check = fmt.Sprintf("FAILED: %d lost, %d duplicated, %d out of order, %d foreign", r.Lost, r.Duplicates, r.OutOfOrder, r.Foreign)
		}
		fmt.Fprintf(tw, "exactly-once\t%s\n", check)
	}
	if r.Interrupted {
		fmt.Fprintf(tw, "interrupted\tthe run was cancelled before it ended by itself\n")
	}
	fmt.Fprintf(tw, "errors\t%d\n", r.Errors)
	for _, e := range r.ErrorSamples {
		fmt.Fprintf(tw, "\t%s\n", e)
	}
	if b := r.Broker; b != nil {
		fmt.Fprintf(tw, "broker\tpid %d: RSS %s at start, %s max, %s at end; CPU %.2f s (%.0f%% of a core), %d samples\n",
			b.PID, fmtBytes(float64(b.RSSStartBytes)), fmtBytes(float64(b.RSSMaxBytes)), fmtBytes(float64(b.RSSEndBytes)),
			b.CPUSeconds, b.CPUPercent, b.Samples)
	}
	return tw.Flush()
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func fmtCount(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func fmtBytes(v float64) string {
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%.2f GiB", v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f B", v)
}

// fmtMicros shows a latency in µs with the unit that suits it.
func fmtMicros(us float64) string {
	switch {
	case us >= 999.5e3:
		return fmt.Sprintf("%.2fs", us/1e6)
	case us >= 999.5:
		return fmt.Sprintf("%.2fms", us/1e3)
	}
	return fmt.Sprintf("%.0fµs", us)
}

func fmtSeconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}

// progressLine is the live line: what has happened so far and what
// remains. It fits an 80-column terminal.
func progressLine(p progress, elapsed, total time.Duration, count int64, prev progress, interval time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", elapsed.Round(100*time.Millisecond))
	switch {
	case count > 0:
		fmt.Fprintf(&b, "  sent %d/%d", p.sent, count)
	case total > 0:
		fmt.Fprintf(&b, "/%s  sent %d", total, p.sent)
	default:
		fmt.Fprintf(&b, "  sent %d", p.sent)
	}
	secs := interval.Seconds()
	fmt.Fprintf(&b, " (%s/s)  recv %d (%s/s)  p99 %s",
		fmtCount(float64(p.sent-prev.sent)/secs), p.received, fmtCount(float64(p.received-prev.received)/secs),
		p.p99.Round(time.Microsecond))
	return b.String()
}
