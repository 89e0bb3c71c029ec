package bench

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

// svgNode is an element of a parsed SVG document.
type svgNode struct {
	name     string
	attrs    map[string]string
	text     string
	children []*svgNode
}

// parseSVG parses doc with encoding/xml into a tree, failing the test if
// it is not well-formed XML with an <svg> root.
func parseSVG(t *testing.T, doc []byte) *svgNode {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	root := &svgNode{}
	stack := []*svgNode{root}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		top := stack[len(stack)-1]
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &svgNode{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				n.attrs[a.Name.Local] = a.Value
			}
			top.children = append(top.children, n)
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			top.text += string(tok)
		}
	}
	if len(root.children) != 1 || root.children[0].name != "svg" {
		t.Fatalf("root elements %v, want one <svg>", root.children)
	}
	return root.children[0]
}

// find returns the descendants of n (n included) that match.
func (n *svgNode) find(match func(*svgNode) bool) []*svgNode {
	var out []*svgNode
	if match(n) {
		out = append(out, n)
	}
	for _, c := range n.children {
		out = append(out, c.find(match)...)
	}
	return out
}

func (n *svgNode) byID(id string) *svgNode {
	if m := n.find(func(c *svgNode) bool { return c.attrs["id"] == id }); len(m) == 1 {
		return m[0]
	}
	return nil
}

// texts is all the text under n, one string per <text>.
func (n *svgNode) texts() string {
	var b strings.Builder
	for _, t := range n.find(func(c *svgNode) bool { return c.name == "text" || c.name == "title" }) {
		b.WriteString(t.text)
		b.WriteString("\n")
	}
	return b.String()
}

// points reads a polyline's points.
func points(t *testing.T, n *svgNode) [][2]float64 {
	t.Helper()
	var out [][2]float64
	for _, p := range strings.Fields(n.attrs["points"]) {
		x, y, ok := strings.Cut(p, ",")
		fx, err1 := strconv.ParseFloat(x, 64)
		fy, err2 := strconv.ParseFloat(y, 64)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("polyline %s: bad point %q", n.attrs["id"], p)
		}
		out = append(out, [2]float64{fx, fy})
	}
	return out
}

// TestBenchPlot runs a short open-loop run against an in-process Wharf
// and checks the SVG: well-formed XML, a throughput chart whose steps
// cover every second of the run and whose legend states the run's counts
// and rates, and a latency chart whose curve rises with the percentile and
// whose labels are the run's percentiles.
func TestBenchPlot(t *testing.T) {
	urls := benchURLs(t)
	cfg := DefaultConfig()
	cfg.URL = urls[ProtocolSTOMP]
	cfg.Scenario, cfg.Subscribers = ScenarioTopic, 2
	// 1.5 s at 1000 msg/s: two buckets of the timeline.
	cfg.Count, cfg.Rate = 1500, 1000
	res, err := Run(context.Background(), cfg, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var doc bytes.Buffer
	if err := res.WritePlot(&doc); err != nil {
		t.Fatal(err)
	}
	root := parseSVG(t, doc.Bytes())

	tp, lat := root.byID("throughput"), root.byID("latency")
	if tp == nil || lat == nil {
		t.Fatalf("want one group with id throughput and one with id latency:\n%s", doc.String())
	}
	// Throughput: one step (two points) per second of sending and of
	// receiving, and the counts and rates in the legend.
	tl := res.Timeline
	if tl == nil || len(tl.Sent) != 2 || tl.IntervalSeconds != 1 {
		t.Fatalf("timeline %+v: want two one-second buckets for 1.5 s of sending", tl)
	}
	var sentSum, recvSum int64
	for _, n := range tl.Sent {
		sentSum += n
	}
	for _, n := range tl.Received {
		recvSum += n
	}
	if sentSum != res.Sent || recvSum != res.Received {
		t.Errorf("timeline sums sent %d, received %d; want the run's %d and %d", sentSum, recvSum, res.Sent, res.Received)
	}
	// The first second of an open loop at 1000/s sends about 1000.
	if r := tl.SentSegments()[0].Rate; r < 800 || r > 1200 {
		t.Errorf("sent rate in the first second %.0f/s, want about 1000/s", r)
	}
	for id, segs := range map[string][]Segment{"sent-rate": tl.SentSegments(), "received-rate": tl.ReceivedSegments()} {
		pl := tp.byID(id)
		if pl == nil || pl.name != "polyline" {
			t.Fatalf("throughput chart lacks polyline %s", id)
		}
		if got := len(points(t, pl)); got != 2*len(segs) || len(segs) < 2 {
			t.Errorf("%s has %d points, want 2 for each of %d segments (at least 2)", id, got, len(segs))
		}
	}
	text := tp.texts()
	for _, want := range []string{
		fmt.Sprintf("sent %d, %s msg/s", res.Sent, fmtCount(res.SendRate)),
		fmt.Sprintf("received %d, %s msg/s", res.Received, fmtCount(res.ReceiveRate)),
		"seconds since the first send",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("throughput chart does not say %q; its text:\n%s", want, text)
		}
	}

	// Latency: the curve never falls as the percentile rises (SVG y
	// grows downwards), and the labels are the run's percentiles.
	curve := lat.byID("latency-curve")
	if curve == nil {
		t.Fatal("latency chart lacks the percentile curve")
	}
	pts := points(t, curve)
	if len(pts) < 100 {
		t.Fatalf("latency curve has %d points, want a curve", len(pts))
	}
	for i := 1; i < len(pts); i++ {
		if pts[i][0] < pts[i-1][0] || pts[i][1] > pts[i-1][1]+0.05 {
			t.Fatalf("latency curve goes back or down at point %d: %v after %v", i, pts[i], pts[i-1])
		}
	}
	text = lat.texts()
	l := res.Latency
	for _, want := range []string{
		"p50 " + fmtMicros(l.P50), "p99 " + fmtMicros(l.P99), "max " + fmtMicros(l.Max),
		fmt.Sprintf("%d samples", l.Count), "90%", "99%", "99.9%",
	} {
		if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
			t.Errorf("latency chart does not say %q; its text:\n%s", want, text)
		}
	}
	if !strings.Contains(root.texts(), fmt.Sprintf("sent %d, received %d", res.Sent, res.Received)) {
		t.Errorf("the plot's header does not state the run's counts:\n%s", root.texts())
	}
}

// TestBenchPlotWithoutSamples: a result without messages or histogram
// (a connection storm that opened nothing, a result read back from JSON)
// still plots, saying so.
func TestBenchPlotWithoutSamples(t *testing.T) {
	res := &Result{Scenario: ScenarioQueue, Protocol: ProtocolSTOMP, URL: "stomp://x:1?a=1&b=<2>"}
	var doc bytes.Buffer
	if err := res.WritePlot(&doc); err != nil {
		t.Fatal(err)
	}
	root := parseSVG(t, doc.Bytes())
	if !strings.Contains(root.byID("throughput").texts(), "no messages") ||
		!strings.Contains(root.byID("latency").texts(), "no latency samples") {
		t.Errorf("empty charts do not say they are empty:\n%s", doc.String())
	}
	if !strings.Contains(root.texts(), "stomp://x:1?a=1&b=<2>") {
		t.Errorf("the URL did not survive escaping:\n%s", root.texts())
	}
}

// TestBenchTimelineBounded: a run longer than maxTimelineBuckets seconds
// folds its buckets instead of growing, and keeps every count.
func TestBenchTimelineBounded(t *testing.T) {
	tl := newTimeline()
	const hours = 5
	var want int64
	for s := range int64(hours * 3600) {
		tl.add(seriesSent, time.Duration(s)*time.Second+time.Millisecond, s%7)
		want += s % 7
	}
	tl.add(seriesReceived, 3*time.Second, 1)
	if n := len(tl.counts[seriesSent]); n > maxTimelineBuckets {
		t.Errorf("%d buckets after %d hours, want at most %d", n, hours, maxTimelineBuckets)
	}
	if tl.width != 8*time.Second {
		t.Errorf("bucket width %s after %d hours, want 8s (1s doubled until 3600 buckets cover the run)", tl.width, hours)
	}
	var got int64
	for _, n := range tl.counts[seriesSent] {
		got += n
	}
	if got != want || tl.counts[seriesReceived][0] != 1 {
		t.Errorf("sum of counts %d, received[0] %d; want %d and 1", got, tl.counts[seriesReceived][0], want)
	}
	// Rates divide by the bucket width, and by the covered part of the
	// last bucket; a last bucket covered less than a quarter joins the
	// one before.
	check := func(end time.Duration, want []Segment) {
		t.Helper()
		tl := &timeline{width: time.Second, counts: [2][]int64{{10, 10}, nil}}
		got := tl.result(end, end).SentSegments()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("10 and 10 in buckets of 1s ending at %s: segments %v, want %v", end, got, want)
		}
	}
	check(1500*time.Millisecond, []Segment{{0, 1, 10}, {1, 1.5, 20}})
	check(1200*time.Millisecond, []Segment{{0, 1.2, 20 / 1.2}})
	check(2*time.Second, []Segment{{0, 1, 10}, {1, 2, 10}})
}
