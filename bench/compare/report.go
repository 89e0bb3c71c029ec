package main

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the outcome of a comparison, written as
// bench/compare/results/<date>.json.
type Report struct {
	Date    time.Time `json:"date"`
	Machine Machine   `json:"machine"`
	// Rounds is the number of complete rounds, RoundsPlanned the number
	// asked for (a time budget or Ctrl-C can stop it early).
	Rounds        int              `json:"rounds"`
	RoundsPlanned int              `json:"rounds_planned"`
	Scale         float64          `json:"scale"`
	Seconds       float64          `json:"elapsed_s"`
	Notes         []string         `json:"notes,omitempty"`
	Scenarios     []ScenarioReport `json:"scenarios"`
}

// ScenarioReport is one scenario's runs and their summary.
type ScenarioReport struct {
	ID             string `json:"id"`
	Title          string `json:"title"`
	Metric         string `json:"metric"`
	Unit           string `json:"unit"`
	HigherIsBetter bool   `json:"higher_is_better"`
	// Latency marks a latency row (open loop at a fixed rate): Medians
	// are p99s, MedianP50us the p50s beside them.
	Latency     bool             `json:"latency,omitempty"`
	MedianP50us map[string]maybe `json:"median_p50_us,omitempty"`
	// Target is what the ratio should reach (the near-the-limit rows).
	Target string `json:"target,omitempty"`
	// Brokers are the brokers that ran it, in the order they ran.
	Brokers     []string         `json:"brokers"`
	Medians     map[string]maybe `json:"medians"`
	MedianP99us map[string]maybe `json:"median_p99_us,omitempty"`
	// MedianCPUus is the broker's CPU time per delivery, in µs: what a
	// client that is itself the bottleneck cannot hide.
	MedianCPUus map[string]maybe   `json:"median_cpu_us_per_msg,omitempty"`
	Comparisons []ComparisonReport `json:"comparisons"`
	Notes       []string           `json:"notes,omitempty"`
	Samples     []Sample           `json:"samples"`
}

// ComparisonReport is a Comparison as JSON: NaN (no rounds) is null.
type ComparisonReport struct {
	Subject   string `json:"subject"`
	Reference string `json:"reference"`
	Ratio     maybe  `json:"ratio"`
	Min       maybe  `json:"ratio_min"`
	Max       maybe  `json:"ratio_max"`
	Rounds    int    `json:"rounds"`
}

// maybe is a number that may be missing (NaN), which JSON writes as null.
type maybe float64

// MarshalJSON writes NaN and infinities as null.
func (m maybe) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(m)) || math.IsInf(float64(m), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(m))
}

// UnmarshalJSON reads null back as NaN.
func (m *maybe) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*m = maybe(math.NaN())
		return nil
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*m = maybe(f)
	return err
}

// summarize builds a scenario's report from its samples.
func summarize(sc scenario, order []string, pairs [][2]string, note string, samples []Sample) ScenarioReport {
	sr := ScenarioReport{
		ID: sc.ID, Title: sc.Title, Metric: sc.metric.name, Unit: sc.metric.unit, HigherIsBetter: sc.metric.higherIsBetter,
		Brokers: order, Medians: map[string]maybe{}, Samples: samples,
		Latency: sc.metric.latency, Target: sc.target,
	}
	if sr.Samples == nil {
		sr.Samples = []Sample{}
	}
	if note != "" {
		sr.Notes = append(sr.Notes, note)
	}
	if sc.metric.higherIsBetter {
		sr.MedianP99us = map[string]maybe{}
		sr.MedianCPUus = map[string]maybe{}
	}
	if sr.Latency {
		sr.MedianP50us = map[string]maybe{}
	}
	if sr.Target != "" {
		sr.Notes = append(sr.Notes, "target "+sr.Target)
	}
	for _, b := range order {
		sr.Medians[b] = maybe(medianOf(samples, b))
		if sr.MedianP50us != nil {
			var p50 []float64
			for _, s := range samples {
				if s.Broker == b && s.valid() {
					p50 = append(p50, s.P50us)
				}
			}
			sr.MedianP50us[b] = maybe(median(p50))
		}
		if sr.MedianP99us != nil {
			var p99 []float64
			for _, s := range samples {
				if s.Broker == b && s.valid() && s.P99us > 0 { // the JMS client measures none
					p99 = append(p99, s.P99us)
				}
			}
			sr.MedianP99us[b] = maybe(median(p99))
			var cpu []float64
			for _, s := range samples {
				if s.Broker == b && s.valid() && s.Received > 0 && s.CPUSeconds > 0 {
					cpu = append(cpu, s.CPUSeconds*1e6/float64(s.Received))
				}
			}
			sr.MedianCPUus[b] = maybe(median(cpu))
		}
		sr.Notes = append(sr.Notes, problems(samples, b)...)
	}
	for _, p := range pairs {
		c := compare(samples, p[0], p[1])
		sr.Comparisons = append(sr.Comparisons, ComparisonReport{
			Subject: c.Subject, Reference: c.Reference, Ratio: maybe(c.Ratio), Min: maybe(c.Min), Max: maybe(c.Max), Rounds: c.Rounds,
		})
	}
	return sr
}

// problems says what went wrong in a broker's runs: failures, and runs
// whose exactly-once check failed (their rate still counts: a broker that
// drops messages is not faster for it, and the note says so).
func problems(samples []Sample, b string) []string {
	var out []string
	failed, unclean, behind := 0, 0, 0
	var firstErr string
	var lost, dup, ooo, errs int64
	for _, s := range samples {
		if s.Broker != b {
			continue
		}
		if !s.valid() {
			failed++
			if firstErr == "" {
				firstErr = s.Error
			}
			continue
		}
		// An open-loop run whose sends fell behind their schedule: its
		// latency includes the wait, as it should, and the note says so.
		if s.TargetRate > 0 && s.SendRate < behindShare*s.TargetRate {
			behind++
		}
		if s.Lost+s.Duplicates+s.OutOfOrder+s.Errors > 0 {
			unclean++
			lost, dup, ooo, errs = lost+s.Lost, dup+s.Duplicates, ooo+s.OutOfOrder, errs+s.Errors
		}
	}
	if failed > 0 {
		first, _, _ := strings.Cut(firstErr, "\n")
		out = append(out, fmt.Sprintf("%s: %d run(s) failed (%s)", b, failed, first))
	}
	if behind > 0 {
		out = append(out, fmt.Sprintf("%s: %d run(s) sent below %.0f%% of the target rate", b, behind, behindShare*100))
	}
	if unclean > 0 {
		out = append(out, fmt.Sprintf("%s: %d run(s) not exactly-once: lost %d, duplicated %d, out of order %d, errors %d",
			b, unclean, lost, dup, ooo, errs))
	}
	return out
}

// behindShare is the share of an open-loop run's target rate below which
// its sends count as held back.
const behindShare = 0.95

// WriteJSON writes the report, indented.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the header and one line per comparison.
func (r *Report) WriteTable(w io.Writer) error {
	var buf strings.Builder
	r.writeTable(&buf)
	// Columns left empty would end lines in blanks.
	for line := range strings.Lines(buf.String()) {
		if _, err := io.WriteString(w, strings.TrimRight(line, " \n")+"\n"); err != nil {
			return err
		}
	}
	return nil
}

func (r *Report) writeTable(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "Wharf against reference brokers, %d round(s) of A B A B; medians, ratio A/B per round: median (min–max)\n", r.Rounds)
	fmt.Fprintf(w, "machine   %d cores (%s), %s memory, Linux %s; load average %s at the start\n",
		m.Cores, m.CPU, fmtBytes(float64(m.MemBytes)), m.Kernel, m.LoadAvg)
	fmt.Fprintf(w, "disk      %.0f fsync/s, p50 %s, p99 %s (write+fsync 4 KiB, 1 s, %s in %s)\n",
		m.FsyncPerSec, fmtMicros(m.FsyncP50us), fmtMicros(m.FsyncP99us), m.DataFS, m.DataDir)
	fmt.Fprintf(w, "limits    RLIMIT_NOFILE %d; ephemeral ports %s (tcp_tw_reuse %s)\n", m.NoFile, m.PortRange, m.TWReuse)
	rabbit := ""
	if m.RabbitMQ != "" {
		rabbit = "; " + m.RabbitMQ
	}
	fmt.Fprintf(w, "software  %s (commit %s, %s); %s on %s; %s%s\n", m.Wharf, m.Commit, m.GoVersion, m.ActiveMQ, m.Java, m.Mosquitto, rabbit)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note      %s\n", n)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "scenario\tunit\tA median\tB median\tA/B\tmin–max\tlatency A / B\tCPU/msg A / B\tnotes\n")
	for _, s := range r.Scenarios {
		dir := "↑"
		if !s.HigherIsBetter {
			dir = "↓"
		}
		notes := strings.Join(s.Notes, "; ")
		if len(s.Comparisons) == 0 {
			fmt.Fprintf(tw, "%s\t%s %s\t\t\t\t\t\t\t%s\n", s.Title, s.Unit, dir, notes)
		}
		for _, c := range s.Comparisons {
			a, b := s.Medians[c.Subject], s.Medians[c.Reference]
			p99 := ""
			switch {
			case s.Latency:
				// The value columns are the p99s.
				p99 = "p50 " + fmtMicros(float64(s.MedianP50us[c.Subject])) + " / " + fmtMicros(float64(s.MedianP50us[c.Reference]))
			case s.MedianP99us != nil && c.Reference != nameDisk:
				p99 = "p99 " + fmtMicros(float64(s.MedianP99us[c.Subject])) + " / " + fmtMicros(float64(s.MedianP99us[c.Reference]))
			}
			cpu := ""
			if s.MedianCPUus != nil {
				cpu = fmtCPU(float64(s.MedianCPUus[c.Subject])) + " / " + fmtCPU(float64(s.MedianCPUus[c.Reference]))
			}
			fmt.Fprintf(tw, "%s\t%s %s\t%s %s\t%s %s\t%s\t%s\t%s\t%s\t%s\n", s.Title, s.Unit, dir,
				displayName(c.Subject), fmtValue(float64(a), s.Unit), displayName(c.Reference), fmtValue(float64(b), s.Unit),
				fmtRatio(float64(c.Ratio)), fmtRange(float64(c.Min), float64(c.Max)), p99, cpu, notes)
			notes = "" // once per scenario
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "\n↑ higher is better, ↓ lower is better; A/B > 1 means A has more of the unit. msg/s counts deliveries (10 per message in a fan-out 1→10).")
	fmt.Fprintln(w, "Latency rows send open loop at a fixed rate; latency is from each message's scheduled send time to its receipt (µs: the medians are p99s).")
	fmt.Fprintln(w, "Rows against \"disk fsync\" have no broker as reference: the disk's write+fsync of 4 KiB, measured in the same round next to Wharf's run (fsync/s, or its p99).")
	fmt.Fprintln(w, "CPU/msg is the broker's user+system CPU time per delivery (median over the rounds); the load generator runs on the same cores.")
}

// fmtCPU is a CPU time per delivery in µs; "–" when not measured.
func fmtCPU(us float64) string {
	if math.IsNaN(us) {
		return "–"
	}
	return fmt.Sprintf("%.1fµs", us)
}

func fmtRatio(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", v)
}

func fmtRange(lo, hi float64) string {
	if math.IsNaN(lo) {
		return ""
	}
	return fmt.Sprintf("%.2f–%.2f", lo, hi)
}

// fmtValue shows a metric value in its unit.
func fmtValue(v float64, unit string) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case unit == "B/conn":
		return fmtBytes(v)
	case unit == "µs":
		return fmtMicros(v)
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func fmtBytes(v float64) string {
	switch {
	case math.Abs(v) >= 1<<30:
		return fmt.Sprintf("%.1f GiB", v/(1<<30))
	case math.Abs(v) >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case math.Abs(v) >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f B", v)
}

func fmtMicros(us float64) string {
	switch {
	case math.IsNaN(us):
		return "n/a"
	case us >= 1e6:
		return fmt.Sprintf("%.2fs", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%.1fms", us/1e3)
	}
	return fmt.Sprintf("%.0fµs", us)
}

// Geometry of the bar chart.
const (
	chartWidth  = 1100
	chartLabelW = 480 // room for the row labels
	chartRight  = 70
	chartTop    = 70
	chartRowH   = 26
)

// WriteSVG draws the ratios as horizontal bars on a log scale around 1,
// with the min–max of the rounds as whiskers: green where A is better
// (higher throughput, lower memory), red where it is worse.
func (r *Report) WriteSVG(w io.Writer) error {
	type row struct {
		label          string
		ratio, lo, hi  float64
		better         bool
		direction      string
		subject, other string
	}
	var rows []row
	lo, hi := 0.5, 2.0
	for _, s := range r.Scenarios {
		for _, c := range s.Comparisons {
			rw := row{label: s.Title, ratio: float64(c.Ratio), lo: float64(c.Min), hi: float64(c.Max),
				subject: displayName(c.Subject), other: displayName(c.Reference)}
			rw.direction = "↑"
			if !s.HigherIsBetter {
				rw.direction = "↓"
			}
			if !math.IsNaN(rw.ratio) {
				rw.better = (rw.ratio >= 1) == s.HigherIsBetter
				lo, hi = math.Min(lo, rw.lo), math.Max(hi, rw.hi)
			}
			rows = append(rows, rw)
		}
	}
	// Powers of two around the data.
	lo = math.Pow(2, math.Floor(math.Log2(math.Max(lo, 1.0/1024))))
	hi = math.Pow(2, math.Ceil(math.Log2(math.Min(hi, 1024))))
	height := chartTop + len(rows)*chartRowH + 60
	x := func(v float64) float64 {
		v = math.Min(math.Max(v, lo), hi)
		return chartLabelW + (math.Log2(v)-math.Log2(lo))/(math.Log2(hi)-math.Log2(lo))*(chartWidth-chartLabelW-chartRight)
	}
	bw := bufio.NewWriter(w)
	var err error
	pf := func(format string, a ...any) {
		if err == nil {
			_, err = fmt.Fprintf(bw, format, a...)
		}
	}
	text := func(x, y float64, anchor, attrs, s string) {
		pf(`<text x="%.1f" y="%.1f" text-anchor="%s" %s>%s</text>`+"\n", x, y, anchor, attrs, escape(s))
	}
	pf(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	pf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartWidth, height, chartWidth, height)
	pf(`<title>Wharf bench-compare %s</title>`+"\n", r.Date.Format("2006-01-02"))
	pf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	m := r.Machine
	text(10, 22, "start", `font-size="15" font-weight="bold"`,
		fmt.Sprintf("A/B per scenario, median of %d round(s), whiskers min–max (log scale)", r.Rounds))
	text(10, 40, "start", "", fmt.Sprintf("%s, %d cores, %s, %.0f fsync/s, load %s; %s, %s, %s",
		r.Date.Format("2006-01-02"), m.Cores, fmtBytes(float64(m.MemBytes)), m.FsyncPerSec, m.LoadAvg, m.Wharf, m.ActiveMQ, m.Mosquitto))
	pf(`<g id="ratios">` + "\n")
	for v := lo; v <= hi*1.001; v *= 2 {
		stroke := "#ddd"
		if v == 1 {
			stroke = "#333"
		}
		pf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`+"\n", x(v), chartTop-8, x(v), chartTop+len(rows)*chartRowH, stroke)
		text(x(v), float64(chartTop+len(rows)*chartRowH+16), "middle", "", trimRatio(v))
	}
	text((chartLabelW+chartWidth-chartRight)/2, float64(chartTop+len(rows)*chartRowH+36), "middle", "",
		"A/B (1 = the same; each step doubles). ↑ higher is better, ↓ lower is better; green: A better")
	for i, rw := range rows {
		y := float64(chartTop + i*chartRowH)
		text(chartLabelW-8, y+13, "end", "", fmt.Sprintf("%s: %s/%s %s", rw.label, rw.subject, rw.other, rw.direction))
		if math.IsNaN(rw.ratio) {
			text(x(1)+6, y+13, "start", "", "n/a")
			continue
		}
		colour := "#d62728"
		if rw.better {
			colour = "#2ca02c"
		}
		x0, x1 := math.Min(x(1), x(rw.ratio)), math.Max(x(1), x(rw.ratio))
		pf(`<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s" data-ratio="%.4f"/>`+"\n",
			x0, y+3, math.Max(x1-x0, 1), chartRowH-8, colour, rw.ratio)
		pf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", x(rw.lo), y+chartRowH/2-1, x(rw.hi), y+chartRowH/2-1)
		text(math.Max(x1, x(rw.hi))+6, y+13, "start", "", fmtRatio(rw.ratio))
	}
	pf("</g>\n</svg>\n")
	if err != nil {
		return err
	}
	return bw.Flush()
}

func trimRatio(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
}

func escape(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
