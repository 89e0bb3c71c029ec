package main

import (
	"fmt"
	"html"
	"runtime"
	"strings"
	"time"
)

// table is the Markdown report: one line per workload, one column per
// broker (messages per second), the ratio of Wharf's JDBC store to
// ActiveMQ's on the same PostgreSQL, then every run's details.
func table(o options, rows []row, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# make bench-store, %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "%d CPUs (%s/%s), shared; one broker at a time; PostgreSQL: a private cluster (internal/pgtest) on the same machine. "+
		"Persistent messages over OpenWire, sent synchronously (each send waits for the broker's Response, given once stored); "+
		"send-only runs last %s each, send+consume runs are wharf bench's queue scenario (consumers = min(producers, 8), every message checked once); "+
		"the backlog is %d messages of 1 KiB. Whole run: %s.\n\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, o.send, o.backlog, took.Round(time.Second))
	b.WriteString("Messages per second (higher is better):\n\n")
	b.WriteString("| workload | " + strings.Join(brokers, " | ") + " | jdbc / activemq-jdbc |\n")
	b.WriteString("|---|" + strings.Repeat("---:|", len(brokers)+1) + "\n")
	for _, w := range workloadNames(rows) {
		fmt.Fprintf(&b, "| %s |", w)
		for _, br := range brokers {
			b.WriteString(" " + cell(rows, br, w) + " |")
		}
		j, a := find(rows, "jdbc", w), find(rows, "activemq-jdbc", w)
		if j != nil && a != nil && j.err == nil && a.err == nil && a.rate > 0 {
			fmt.Fprintf(&b, " %.2f |\n", j.rate/a.rate)
		} else {
			b.WriteString(" — |\n")
		}
	}
	b.WriteString("\nDetails:\n\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "- %s, %s: %.0f msg/s; %s", r.broker, r.workload, r.rate, r.extra)
		if r.err != nil {
			fmt.Fprintf(&b, "; error: %v", r.err)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func workloadNames(rows []row) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen[r.workload] {
			seen[r.workload] = true
			out = append(out, r.workload)
		}
	}
	return out
}

func find(rows []row, broker, workload string) *row {
	for i := range rows {
		if rows[i].broker == broker && rows[i].workload == workload {
			return &rows[i]
		}
	}
	return nil
}

func cell(rows []row, broker, workload string) string {
	r := find(rows, broker, workload)
	switch {
	case r == nil:
		return "—"
	case r.err != nil && r.rate == 0:
		return "failed"
	case r.err != nil:
		return fmt.Sprintf("%.0f (errors)", r.rate)
	}
	return fmt.Sprintf("%.0f", r.rate)
}

// plot is a bar chart: per workload, one bar per broker, as a fraction
// of the workload's best rate (the rate written at its end).
func plot(rows []row) string {
	ws := workloadNames(rows)
	colors := map[string]string{"kahadb": "#1f77b4", "lsm": "#2ca02c", "jdbc": "#ff7f0e", "activemq-jdbc": "#7f7f7f"}
	const left, barH, width = 330, 9, 420
	groupH := barH*len(brokers) + 8
	h := 40 + groupH*len(ws) + 30
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", left+width+140, h)
	fmt.Fprintf(&b, `<text x="10" y="18" font-size="13">make bench-store: messages/s per workload (bars relative to the best of each row)</text>`+"\n")
	for i, br := range brokers {
		fmt.Fprintf(&b, `<rect x="%d" y="26" width="10" height="10" fill="%s"/><text x="%d" y="35">%s</text>`+"\n", 10+i*120, colors[br], 24+i*120, br)
	}
	y := 44
	for _, w := range ws {
		best := 0.0
		for _, br := range brokers {
			if r := find(rows, br, w); r != nil {
				best = max(best, r.rate)
			}
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-6, y+groupH/2, html.EscapeString(w))
		for i, br := range brokers {
			r := find(rows, br, w)
			if r == nil || best == 0 {
				continue
			}
			if r.err != nil && r.rate == 0 {
				fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="9">%s failed</text>`+"\n", left+4, y+i*barH+barH-1, br)
				continue
			}
			bw := int(float64(width) * r.rate / best)
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/><text x="%d" y="%d" font-size="9">%.0f</text>`+"\n",
				left, y+i*barH, bw, barH-1, colors[br], left+bw+4, y+i*barH+barH-1, r.rate)
		}
		y += groupH
	}
	b.WriteString("</svg>\n")
	return b.String()
}
