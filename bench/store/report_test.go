package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestBenchStoreTable: the report's table has a column per broker, the
// JDBC ratio where both JDBC rows ran, "failed" and "—" where a row
// failed or did not run, and the error in the details; the plot a bar
// per measured row.
func TestBenchStoreTable(t *testing.T) {
	rows := []row{
		{broker: "kahadb", workload: "w1", rate: 1000},
		{broker: "jdbc", workload: "w1", rate: 300},
		{broker: "activemq-jdbc", workload: "w1", rate: 150},
		{broker: "lsm", workload: "w1", err: errors.New("boom")},
		{broker: "jdbc", workload: "w2", rate: 10},
	}
	md := table(options{send: time.Second, backlog: 10}, rows, time.Minute)
	for _, want := range []string{
		"| workload | kahadb | lsm | jdbc | activemq-jdbc | jdbc / activemq-jdbc |",
		"| w1 | 1000 | failed | 300 | 150 | 2.00 |",
		"| w2 | — | — | 10 | — | — |",
		"lsm, w1: 0 msg/s; ; error: boom",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	svg := plot(rows)
	// A legend box per broker, a bar per measured row; the failed one
	// is a label.
	if !strings.HasPrefix(svg, "<svg") || strings.Count(svg, "<rect") != len(brokers)+4 || !strings.Contains(svg, "lsm failed") {
		t.Errorf("plot: %d bars and legend boxes, want %d, and lsm failed:\n%s", strings.Count(svg, "<rect"), len(brokers)+4, svg)
	}
}
