package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wharf/cmd/wharf/wiring"
	"wharf/engine/brokertest"
)

// TestWharfBenchHelpExplainsEveryFlag: every flag wharf bench accepts has
// a paragraph in --help, and the paragraph shows an example of it.
func TestWharfBenchHelpExplainsEveryFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run([]string{"bench", "--help"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	// A flag's paragraph runs from its "  --name" line to the next flag or
	// the next blank line.
	paragraphs := map[string]string{}
	var cur string
	for line := range strings.Lines(help) {
		switch {
		case strings.HasPrefix(line, "  --"):
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "  --"), " ")
			cur = strings.TrimSpace(name)
			paragraphs[cur] = line
		case strings.TrimSpace(line) == "":
			cur = ""
		case cur != "":
			paragraphs[cur] += line
		}
	}
	flags := map[string]bool{}
	newBenchFlags().fs.VisitAll(func(f *flag.Flag) {
		flags[f.Name] = true
		p, ok := paragraphs[f.Name]
		if !ok {
			t.Errorf("--help does not explain --%s", f.Name)
			return
		}
		if !strings.Contains(strings.ToLower(p), "e.g.") || !strings.Contains(p, "--"+f.Name) {
			t.Errorf("--help's paragraph on --%s has no example:\n%s", f.Name, p)
		}
	})
	for name := range paragraphs {
		if !flags[name] {
			t.Errorf("--help explains --%s, which wharf bench does not accept", name)
		}
	}
	for _, want := range []string{"mqtt://", "--qos", "--plot FILE.svg", "Mosquitto"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help does not mention %q", want)
		}
	}
}

// TestWharfBenchNoBroker: every protocol fails within a second, naming the
// URL, when nothing listens there.
func TestWharfBenchNoBroker(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for _, args := range [][]string{
		{"--url", "stomp://" + addr},
		{"--url", "tcp://" + addr},
		{"--url", "mqtt://" + addr, "--scenario", "topic"},
	} {
		var out, errOut bytes.Buffer
		start := time.Now()
		err := run(append([]string{"bench", "--count", "10"}, args...), &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), "cannot connect to the broker") || !strings.Contains(err.Error(), args[1]) {
			t.Errorf("%s: err %v, want one saying it cannot connect to %s", args[1], err, args[1])
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: failed after %v, want within a second", args[1], d)
		}
	}
}

// TestWharfBenchPlot: --plot writes an SVG of the run next to the JSON
// report, and a path that cannot be written fails before the run.
func TestWharfBenchPlot(t *testing.T) {
	b := brokertest.Start(t, wiring.Factories())
	url := "stomp://" + b.STOMPAddr()
	svg := filepath.Join(t.TempDir(), "run.svg")
	var out, errOut bytes.Buffer
	if err := run([]string{"bench", "--url", url, "--count", "200", "--json", "--plot", svg}, &out, &errOut); err != nil {
		t.Fatalf("bench: %v\n%s", err, errOut.String())
	}
	var res struct {
		Sent     int64 `json:"sent"`
		Timeline struct {
			Sent []int64 `json:"sent"`
		} `json:"timeline"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Sent != 200 || len(res.Timeline.Sent) == 0 {
		t.Fatalf("JSON %s: %v; want 200 sent and a timeline", out.String(), err)
	}
	doc, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(doc))
	ids := map[string]bool{}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", svg, err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			for _, a := range se.Attr {
				if a.Name.Local == "id" {
					ids[a.Value] = true
				}
			}
		}
	}
	if !ids["throughput"] || !ids["latency"] || !bytes.Contains(doc, []byte("sent 200, received 200")) {
		t.Errorf("%s lacks a chart or the run's counts: ids %v", svg, ids)
	}

	start := time.Now()
	err = run([]string{"bench", "--url", url, "--count", "100000", "--plot", filepath.Join(t.TempDir(), "no", "such", "dir", "x.svg")}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "--plot") {
		t.Errorf("unwritable --plot: %v, want an error naming --plot", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("unwritable --plot failed after %v, want before the run", d)
	}
}

func TestWharfBenchPlotNeedsSVG(t *testing.T) {
	var out, errOut bytes.Buffer
	err := runBench([]string{"--url", "stomp://127.0.0.1:1", "--plot", filepath.Join(t.TempDir(), "run.png")}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "SVG") {
		t.Fatalf("--plot run.png: %v, want an error saying the chart is SVG", err)
	}
}
