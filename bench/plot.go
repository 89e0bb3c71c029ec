package bench

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
)

// The --plot chart: one standalone SVG with two panels, throughput over
// time (sent and received per second) and the latency distribution as a
// percentile curve with the x axis in "nines" (0%, 90%, 99%, 99.9%, ...;
// x = log10(1/(1-p)), as HdrHistogram's plotter draws it), so that the
// tail gets as much room as the median. Written by hand: the chart is a
// few lines, text and polylines.

// Geometry of the SVG, in user units (pixels).
const (
	plotWidth    = 900
	plotHeight   = 780
	plotLeft     = 95  // room for the y axis labels
	plotRight    = 30  // margin
	panelHeight  = 260 // height of each panel's plotting area
	throughputY  = 110 // top of the throughput panel's plotting area
	latencyY     = 470 // top of the latency panel's plotting area
	maxPlotNines = 6   // the latency axis stops at 99.9999%
)

// Colours of the series.
const (
	colourSent     = "#1f77b4"
	colourReceived = "#ff7f0e"
	colourLatency  = "#2ca02c"
)

// WritePlot writes r as an SVG document: throughput over time and the
// latency percentile curve. A Result read back from JSON has no histogram;
// its latency panel then says so.
func (r *Result) WritePlot(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := &svg{w: bw}
	p.printf(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	p.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		plotWidth, plotHeight, plotWidth, plotHeight)
	p.printf(`<title>%s</title>`+"\n", esc(r.headline()))
	p.printf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	p.text(plotLeft, 24, "start", `font-size="16" font-weight="bold"`, r.headline())
	p.text(plotLeft, 44, "start", "", r.settings())
	p.text(plotLeft, 62, "start", "", r.verdict())
	r.plotThroughput(p)
	r.plotLatency(p)
	p.printf("</svg>\n")
	if p.err != nil {
		return p.err
	}
	return bw.Flush()
}

func (r *Result) headline() string {
	return fmt.Sprintf("wharf bench %s over %s (%s)", r.Scenario, r.URL, r.Protocol)
}

// settings is the run's configuration in one line.
func (r *Result) settings() string {
	c := r.Config
	if r.Scenario == ScenarioConnections {
		return fmt.Sprintf("%d connections, held %s", c.Connections, fmtSeconds(c.HoldSeconds))
	}
	mode := "closed loop"
	if c.Rate > 0 {
		mode = fmt.Sprintf("open loop at %s msg/s", fmtCount(c.Rate))
	}
	who := plural(c.Producers, "producer") + ", " + plural(c.Consumers, "consumer")
	switch r.Scenario {
	case ScenarioTopic:
		who = plural(c.Producers, "publisher") + ", " + plural(c.Subscribers, "subscriber")
	case ScenarioReqReply:
		who = plural(c.Producers, "requester") + ", " + plural(c.Consumers, "responder")
	}
	s := fmt.Sprintf("%s, %d B, %s", who, c.SizeBytes, mode)
	if c.QoS != nil {
		s += fmt.Sprintf(", QoS %d", *c.QoS)
	} else if c.Persistent {
		s += ", persistent"
	}
	return s
}

// verdict is what the run counted.
func (r *Result) verdict() string {
	if cs := r.Connections; cs != nil {
		return fmt.Sprintf("%d opened, %d failed, %d dropped; %s to open all", cs.Opened, cs.Failed, cs.Dropped, fmtSeconds(cs.OpenSeconds))
	}
	return fmt.Sprintf("sent %d, received %d of %d expected; lost %d, duplicated %d, out of order %d; errors %d",
		r.Sent, r.Received, r.Expected, r.Lost, r.Duplicates, r.OutOfOrder, r.Errors)
}

func (r *Result) plotThroughput(p *svg) {
	p.printf(`<g id="throughput">` + "\n")
	defer p.printf("</g>\n")
	title := "Throughput: messages sent and received per second"
	sentName, recvName := "sent", "received"
	if r.Scenario == ScenarioConnections {
		title, sentName = "Connections opened per second", "opened"
	}
	p.text(plotLeft, throughputY-14, "start", `font-size="14" font-weight="bold"`, title)
	tl := r.Timeline
	if tl == nil || (len(tl.Sent) == 0 && len(tl.Received) == 0) {
		p.frame(throughputY)
		p.text(plotWidth/2, throughputY+panelHeight/2, "middle", "", "no messages")
		return
	}
	sent, recv := tl.SentSegments(), tl.ReceivedSegments()
	if r.Scenario == ScenarioConnections {
		recv = nil
	}
	xMax := max(tl.EndSeconds, 1e-3)
	yMax := 0.0
	for _, g := range append(append([]Segment{}, sent...), recv...) {
		xMax, yMax = max(xMax, g.To), max(yMax, g.Rate)
	}
	xs := niceScale(xMax)
	ys := niceScale(yMax)
	p.frame(throughputY)
	p.xTicks(throughputY, xs, func(v float64) string { return trimFloat(v) + "s" })
	p.yTicks(throughputY, ys, func(v float64) string { return fmtCount(v) })
	p.text(plotLeft+(plotWidth-plotLeft-plotRight)/2, throughputY+panelHeight+36, "middle", "", "seconds since the first send")
	p.text(16, throughputY+panelHeight/2, "middle", fmt.Sprintf(`transform="rotate(-90 16 %d)"`, throughputY+panelHeight/2), "per second")
	x := func(s float64) float64 { return plotLeft + s/xs.max*float64(plotWidth-plotLeft-plotRight) }
	y := func(v float64) float64 { return throughputY + panelHeight - v/ys.max*panelHeight }
	step := func(id, colour string, segs []Segment) {
		if len(segs) == 0 {
			return
		}
		var pts strings.Builder
		for _, g := range segs {
			fmt.Fprintf(&pts, "%.1f,%.1f %.1f,%.1f ", x(g.From), y(g.Rate), x(g.To), y(g.Rate))
		}
		p.printf(`<polyline id="%s" fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", id, colour, strings.TrimSpace(pts.String()))
	}
	step("sent-rate", colourSent, sent)
	step("received-rate", colourReceived, recv)

	// The legend states the run's totals and rates.
	ly := throughputY + 14
	legend := func(colour, s string) {
		p.printf(`<rect x="%d" y="%d" width="14" height="4" fill="%s"/>`+"\n", plotWidth-plotRight-330, ly-5, colour)
		p.text(plotWidth-plotRight-310, ly, "start", "", s)
		ly += 16
	}
	if r.Scenario == ScenarioConnections {
		cs := r.Connections
		legend(colourSent, fmt.Sprintf("opened %d, peak %s/s", cs.Opened, fmtCount(peak(sent))))
		return
	}
	legend(colourSent, fmt.Sprintf("%s %d, %s msg/s, peak %s/s", sentName, r.Sent, fmtCount(r.SendRate), fmtCount(peak(sent))))
	legend(colourReceived, fmt.Sprintf("%s %d, %s msg/s, peak %s/s", recvName, r.Received, fmtCount(r.ReceiveRate), fmtCount(peak(recv))))
}

func (r *Result) plotLatency(p *svg) {
	p.printf(`<g id="latency">` + "\n")
	defer p.printf("</g>\n")
	p.text(plotLeft, latencyY-14, "start", `font-size="14" font-weight="bold"`, "Latency by percentile ("+r.LatencyMeasures+")")
	h := r.hist
	if h == nil || h.TotalCount() == 0 {
		p.frame(latencyY)
		p.text(plotWidth/2, latencyY+panelHeight/2, "middle", "", "no latency samples")
		return
	}
	// With n samples the highest percentile that means anything is
	// 1 - 1/n: log10(n) nines.
	topNines := min(math.Log10(float64(h.TotalCount())), maxPlotNines)
	axisNines := math.Max(1, math.Ceil(topNines))
	maxUS := float64(h.Max()) / 1e3
	ys := niceScale(maxUS)
	p.frame(latencyY)
	for n := 0; n <= int(axisNines); n++ {
		px := plotLeft + float64(n)/axisNines*float64(plotWidth-plotLeft-plotRight)
		p.printf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", px, latencyY, px, latencyY+panelHeight)
		p.text(int(px), latencyY+panelHeight+16, "middle", "", ninesLabel(n))
	}
	p.yTicks(latencyY, ys, axisMicros)
	p.text(plotLeft+(plotWidth-plotLeft-plotRight)/2, latencyY+panelHeight+36, "middle", "", "percentile (log scale: each step is one more nine)")
	p.text(16, latencyY+panelHeight/2, "middle", fmt.Sprintf(`transform="rotate(-90 16 %d)"`, latencyY+panelHeight/2), "latency")
	x := func(nines float64) float64 {
		return plotLeft + nines/axisNines*float64(plotWidth-plotLeft-plotRight)
	}
	y := func(us float64) float64 { return latencyY + panelHeight - us/ys.max*panelHeight }
	quantile := func(nines float64) float64 {
		return float64(h.ValueAtQuantile(100*(1-math.Pow(10, -nines)))) / 1e3
	}
	var pts strings.Builder
	const steps = 400
	for i := 0; i <= steps; i++ {
		n := topNines * float64(i) / steps
		fmt.Fprintf(&pts, "%.1f,%.1f ", x(n), y(quantile(n)))
	}
	fmt.Fprintf(&pts, "%.1f,%.1f", x(topNines), y(maxUS))
	p.printf(`<polyline id="latency-curve" fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", colourLatency, pts.String())

	// The reported percentiles, marked on the curve and listed.
	l := r.Latency
	marks := []struct {
		name  string
		nines float64
		us    float64
	}{
		{"p50", math.Log10(2), l.P50}, {"p90", 1, l.P90}, {"p99", 2, l.P99}, {"p99.9", 3, l.P999}, {"max", topNines, l.Max},
	}
	ly := latencyY + 14
	for _, m := range marks {
		if m.nines > topNines {
			continue
		}
		p.printf(`<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x(m.nines), y(m.us), colourLatency)
		p.text(plotLeft+10, ly, "start", "", fmt.Sprintf("%-5s %s", m.name, fmtMicros(m.us)))
		ly += 16
	}
	p.text(plotLeft+10, ly, "start", "", fmt.Sprintf("%d samples, mean %s", l.Count, fmtMicros(l.Mean)))
}

// svg writes SVG elements, keeping the first write error.
type svg struct {
	w   io.Writer
	err error
}

func (p *svg) printf(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, a...)
	}
}

// text writes a text element; attrs are extra attributes, s is escaped.
func (p *svg) text(x, y int, anchor, attrs, s string) {
	p.printf(`<text x="%d" y="%d" text-anchor="%s" %s>%s</text>`+"\n", x, y, anchor, attrs, esc(s))
}

// frame draws a panel's axes box at top.
func (p *svg) frame(top int) {
	p.printf(`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n",
		plotLeft, top, plotWidth-plotLeft-plotRight, panelHeight)
}

func (p *svg) xTicks(top int, s scale, label func(float64) string) {
	for v := 0.0; v <= s.max+s.step/2; v += s.step {
		px := plotLeft + v/s.max*float64(plotWidth-plotLeft-plotRight)
		p.printf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", px, top, px, top+panelHeight)
		p.text(int(px), top+panelHeight+16, "middle", "", label(v))
	}
}

func (p *svg) yTicks(top int, s scale, label func(float64) string) {
	for v := 0.0; v <= s.max+s.step/2; v += s.step {
		py := float64(top+panelHeight) - v/s.max*panelHeight
		p.printf(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", plotLeft, py, plotWidth-plotRight, py)
		p.text(plotLeft-6, int(py)+4, "end", "", label(v))
	}
}

// scale is an axis from 0 to max in steps of step.
type scale struct{ max, step float64 }

// niceScale picks an axis from 0 that covers v in 4 to 10 steps of 1, 2
// or 5 times a power of ten.
func niceScale(v float64) scale {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return scale{max: 1, step: 0.2}
	}
	mag := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{0.1, 0.2, 0.5, 1, 2, 5, 10} {
		step := m * mag
		if n := math.Ceil(v / step); n <= 10 {
			return scale{max: n * step, step: step}
		}
	}
	return scale{max: math.Ceil(v/mag) * mag, step: mag}
}

// ninesLabel is the percentile with n nines: 0%, 90%, 99%, 99.9%, ...
func ninesLabel(n int) string {
	switch n {
	case 0:
		return "0%"
	case 1:
		return "90%"
	case 2:
		return "99%"
	}
	return "99." + strings.Repeat("9", n-2) + "%"
}

// axisMicros labels a latency axis tick: the unit that suits the value,
// without trailing zeros (2.5ms, 800ms, 1.2s).
func axisMicros(us float64) string {
	switch {
	case us >= 1e6:
		return trimFloat(us/1e6) + "s"
	case us >= 1e3:
		return trimFloat(us/1e3) + "ms"
	}
	return trimFloat(us) + "µs"
}

func trimFloat(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

// peak is the highest rate of segs.
func peak(segs []Segment) float64 {
	m := 0.0
	for _, g := range segs {
		m = max(m, g.Rate)
	}
	return m
}

// esc escapes s for XML character data and attribute values.
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
