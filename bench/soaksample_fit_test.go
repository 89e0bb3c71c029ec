package bench

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"testing"
	"time"
)

// TestSoakFit: the RSS line is fitted over the second half of the load
// phase only (the warm-up and the drain are left out), and its growth is
// the slope times that half's length.
func TestSoakFit(t *testing.T) {
	var samples []soakSample
	for i := 0; i <= 20; i++ {
		rss := 100.0 + 2*float64(i) // 2 bytes per second
		if i < 10 {
			rss = 50 // warm-up, ignored
		}
		samples = append(samples, soakSample{at: time.Duration(i) * time.Second, rss: rss, phase: "load"})
	}
	samples = append(samples, soakSample{at: 21 * time.Second, rss: 1e9, phase: "drain"}) // ignored
	f := fitSoakRSS(samples)
	if f.n != 11 || f.from != 10 || f.to != 20 {
		t.Fatalf("fit over %d samples from %vs to %vs, want 11 from 10s to 20s", f.n, f.from, f.to)
	}
	if math.Abs(f.slope-2) > 1e-9 || math.Abs(f.growth-20) > 1e-9 || math.Abs(f.a-100) > 1e-9 {
		t.Fatalf("fit: a %v, slope %v, growth %v; want 100, 2, 20", f.a, f.slope, f.growth)
	}
	if a, b := leastSquares([]float64{1, 1}, []float64{3, 5}); a != 4 || b != 0 {
		t.Fatalf("vertical points: a %v b %v, want the mean 4 and slope 0", a, b)
	}

	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	if err := writeSoakPlot(bw, samples, f, soakConfig{duration: 20 * time.Second, interval: time.Second, rate: 20}, true); err != nil {
		t.Fatal(err)
	}
	bw.Flush()
	d := xml.NewDecoder(&buf)
	polylines := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("soak plot is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			polylines++
		}
	}
	if polylines != 4 {
		t.Errorf("soak plot has %d series, want 4 (RSS, goroutines, open files, store)", polylines)
	}
}
