package bench

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// soakSample is one reading of the broker during a soak.
type soakSample struct {
	at         time.Duration // since the sampler started
	rss        float64       // bytes
	goroutines int
	fds        int
	store      float64 // bytes under the data directory
	phase      string  // "load", "backlog" (the backlog's consumer away), "drain" (producers stopped), "drained"
}

// soakSampler reads the broker every interval from its own goroutine.
type soakSampler struct {
	w     *wharfChild
	root  string
	start time.Time

	mu      sync.Mutex
	phase   string
	samples []soakSample
	last    soakSample

	quit, done chan struct{}
}

// startSoakSampler takes a first sample, failing the test if the broker
// cannot be read, and samples every interval until stop.
func startSoakSampler(t *testing.T, w *wharfChild, root string, interval time.Duration) *soakSampler {
	t.Helper()
	s := &soakSampler{w: w, root: root, start: time.Now(), phase: "load", quit: make(chan struct{}), done: make(chan struct{})}
	if _, err := s.take(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-s.quit:
				return
			case <-tick.C:
				s.take()
			}
		}
	}()
	return s
}

// take reads the broker once and records the sample.
func (s *soakSampler) take() (soakSample, error) {
	pid := s.w.p.PID()
	smp := soakSample{at: time.Since(s.start)}
	ps, err := readProc(pid)
	if err != nil {
		return smp, fmt.Errorf("%w: %v", errSoakSample, err)
	}
	smp.rss = float64(ps.rssBytes)
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return smp, fmt.Errorf("%w: open files: %v", errSoakSample, err)
	}
	smp.fds = len(fds)
	m, err := s.w.metrics()
	if err != nil {
		return smp, fmt.Errorf("%w: %v", errSoakSample, err)
	}
	g, ok := m["go_goroutines"]
	if !ok {
		return smp, fmt.Errorf("%w: no go_goroutines on /metrics", errSoakSample)
	}
	smp.goroutines = int(g)
	st, err := storeBytes(s.root)
	if err != nil {
		return smp, fmt.Errorf("%w: store size: %v", errSoakSample, err)
	}
	smp.store = float64(st)
	s.mu.Lock()
	smp.phase = s.phase
	s.samples = append(s.samples, smp)
	s.last = smp
	s.mu.Unlock()
	return smp, nil
}

func (s *soakSampler) latest() soakSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// mark starts a new phase and samples at once, so that the plot shows
// where it began.
func (s *soakSampler) mark(phase string) {
	s.mu.Lock()
	s.phase = phase
	s.mu.Unlock()
	s.take()
}

// stop ends sampling and returns the samples in time order.
func (s *soakSampler) stop() []soakSample {
	close(s.quit)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}

// soakFit is the least-squares line through RSS over the second half of
// the load phase: slope in bytes per second, growth = slope × the half's
// length, the mean, and n samples; a and b place the line for the plot
// (rss = a + slope × seconds).
type soakFit struct {
	from, to       float64 // seconds
	a, slope       float64
	growth         float64
	meanRSS        float64
	n              int
	fromIdx, toIdx int
}

func fitSoakRSS(samples []soakSample) soakFit {
	var end time.Duration
	for _, s := range samples {
		if s.phase == "load" {
			end = s.at
		}
	}
	half := end / 2
	var xs, ys []float64
	var f soakFit
	for _, s := range samples {
		if s.phase == "load" && s.at >= half {
			xs = append(xs, s.at.Seconds())
			ys = append(ys, s.rss)
		}
	}
	f.n = len(xs)
	if f.n == 0 {
		return f
	}
	f.from, f.to = xs[0], xs[len(xs)-1]
	f.a, f.slope = leastSquares(xs, ys)
	f.growth = f.slope * (f.to - f.from)
	for _, y := range ys {
		f.meanRSS += y
	}
	f.meanRSS /= float64(f.n)
	return f
}

// leastSquares is the line y = a + b·x through the points.
func leastSquares(xs, ys []float64) (a, b float64) {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return sy / n, 0
	}
	b = (n*sxy - sx*sy) / d
	return (sy - b*sx) / n, b
}

func mib(b float64) float64 { return b / (1 << 20) }

func peakOf(samples []soakSample, f func(soakSample) float64) float64 {
	m := 0.0
	for _, s := range samples {
		m = max(m, f(s))
	}
	return m
}

// writeSoakFiles writes the samples as CSV and the plot as SVG.
func writeSoakFiles(csvPath, svgPath string, samples []soakSample, fit soakFit, cfg soakConfig, passed bool) error {
	f, err := os.Create(csvPath)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(f)
	cw.Write([]string{"seconds", "phase", "rss_bytes", "goroutines", "open_files", "store_bytes"})
	for _, s := range samples {
		cw.Write([]string{strconv.FormatFloat(s.at.Seconds(), 'f', 1, 64), s.phase, strconv.FormatFloat(s.rss, 'f', 0, 64),
			strconv.Itoa(s.goroutines), strconv.Itoa(s.fds), strconv.FormatFloat(s.store, 'f', 0, 64)})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	g, err := os.Create(svgPath)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(g)
	if err := writeSoakPlot(bw, samples, fit, cfg, passed); err != nil {
		g.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		g.Close()
		return err
	}
	return g.Close()
}

// The soak plot: four panels over time (RSS with its fitted line, goroutines,
// open files, store size), the backlog's start and the drain marked by
// dashed lines.
const (
	soakPanelHeight = 150
	soakPanelGap    = 70
	soakTop         = 90
	soakPlotHeight  = soakTop + 4*(soakPanelHeight+soakPanelGap)
)

func writeSoakPlot(w *bufio.Writer, samples []soakSample, fit soakFit, cfg soakConfig, passed bool) error {
	p := &svg{w: w}
	p.printf(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	p.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		plotWidth, soakPlotHeight, plotWidth, soakPlotHeight)
	title := fmt.Sprintf("wharf soak: %v of mixed load (STOMP, OpenWire, AMQP, MQTT) at %.0f msg/s per stream", cfg.duration, cfg.rate)
	p.printf(`<title>%s</title>`+"\n", esc(title))
	p.printf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	p.text(plotLeft, 24, "start", `font-size="16" font-weight="bold"`, title)
	verdict := "passed"
	if !passed {
		verdict = "FAILED"
	}
	p.text(plotLeft, 44, "start", "", fmt.Sprintf("sampled every %v; RSS fit over the steady load's second half: %.2f MiB/h (%.2f MiB across it); %s",
		cfg.interval, fit.slope*3600/(1<<20), fit.growth/(1<<20), verdict))
	p.text(plotLeft, 62, "start", "", "grey dashed line: the backlog queue's consumer leaves; red dashed line: producers stop and the load drains")
	if len(samples) == 0 {
		p.printf("</svg>\n")
		return p.err
	}
	xMax := samples[len(samples)-1].at.Seconds()
	backlogAt, drainAt := -1.0, -1.0
	for _, s := range samples {
		if s.phase == "backlog" && backlogAt < 0 {
			backlogAt = s.at.Seconds()
		}
		if s.phase != "load" && s.phase != "backlog" && drainAt < 0 {
			drainAt = s.at.Seconds()
		}
	}
	panels := []struct {
		title string
		unit  string
		v     func(soakSample) float64
	}{
		{"Resident set size (MiB)", "MiB", func(s soakSample) float64 { return mib(s.rss) }},
		{"Goroutines", "", func(s soakSample) float64 { return float64(s.goroutines) }},
		{"Open files", "", func(s soakSample) float64 { return float64(s.fds) }},
		{"Data directory size (MiB)", "MiB", func(s soakSample) float64 { return mib(s.store) }},
	}
	xs := niceScale(xMax)
	width := float64(plotWidth - plotLeft - plotRight)
	x := func(sec float64) float64 { return plotLeft + sec/xs.max*width }
	for i, pn := range panels {
		top := soakTop + i*(soakPanelHeight+soakPanelGap)
		ys := niceScale(peakOf(samples, pn.v) * 1.05)
		y := func(v float64) float64 { return float64(top+soakPanelHeight) - v/ys.max*soakPanelHeight }
		p.text(plotLeft, top-10, "start", `font-size="14" font-weight="bold"`, pn.title)
		p.printf(`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", plotLeft, top, plotWidth-plotLeft-plotRight, soakPanelHeight)
		for v := 0.0; v <= xs.max+xs.step/2; v += xs.step {
			p.printf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x(v), top, x(v), top+soakPanelHeight)
			p.text(int(x(v)), top+soakPanelHeight+16, "middle", "", fmtDuration(v))
		}
		for v := 0.0; v <= ys.max+ys.step/2; v += ys.step {
			p.printf(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", plotLeft, y(v), plotWidth-plotRight, y(v))
			p.text(plotLeft-6, int(y(v))+4, "end", "", trimFloat(v))
		}
		if backlogAt >= 0 {
			p.printf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#7f7f7f" stroke-dasharray="6 4"/>`+"\n", x(backlogAt), top, x(backlogAt), top+soakPanelHeight)
		}
		if drainAt >= 0 {
			p.printf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#d62728" stroke-dasharray="6 4"/>`+"\n", x(drainAt), top, x(drainAt), top+soakPanelHeight)
		}
		var pts strings.Builder
		for _, s := range samples {
			fmt.Fprintf(&pts, "%.1f,%.1f ", x(s.at.Seconds()), y(pn.v(s)))
		}
		p.printf(`<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", colourSent, strings.TrimSpace(pts.String()))
		if i == 0 && fit.n >= 2 {
			p.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n",
				x(fit.from), y(mib(fit.a+fit.slope*fit.from)), x(fit.to), y(mib(fit.a+fit.slope*fit.to)), colourReceived)
		}
	}
	p.printf("</svg>\n")
	return p.err
}

// fmtDuration labels a time axis tick: seconds, or minutes past 5 min.
func fmtDuration(sec float64) string {
	if sec >= 300 {
		return trimFloat(math.Round(sec/6)/10) + "m"
	}
	return trimFloat(sec) + "s"
}
