package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"wharf/bench"
	"wharf/cmd/wharf/wiring"
	"wharf/engine/brokertest"
	"wharf/engine/config"
)

func TestCompareMedianAndRatios(t *testing.T) {
	check := func(vs []float64, want float64) {
		t.Helper()
		if got := median(vs); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("median(%v) = %v, want %v", vs, got, want)
		}
	}
	check(nil, math.NaN())
	check([]float64{3}, 3)
	check([]float64{5, 1, 3}, 3)
	check([]float64{4, 1, 3, 2}, 2.5)

	// Rounds pair the subject with the reference run next to it; a failed
	// run takes its round out of the ratios, not the other rounds.
	samples := []Sample{
		{Round: 1, Broker: "a", Value: 200}, {Round: 1, Broker: "b", Value: 100},
		{Round: 2, Broker: "a", Value: 300}, {Round: 2, Broker: "b", Value: 100},
		{Round: 3, Broker: "a", Value: 100}, {Round: 3, Broker: "b", Value: 100},
		{Round: 4, Broker: "a", Value: 999}, {Round: 4, Broker: "b", Error: "connect refused"},
		{Round: 5, Broker: "a", Error: "lost"}, {Round: 5, Broker: "b", Value: 1},
	}
	c := compare(samples, "a", "b")
	if c.Rounds != 3 || c.Ratio != 2 || c.Min != 1 || c.Max != 3 {
		t.Errorf("compare = %+v, want 3 rounds, ratio 2 (median of 2, 3, 1), range 1–3", c)
	}
	if m := medianOf(samples, "a"); m != 250 {
		t.Errorf("median of a's valid runs = %v, want 250 (of 200, 300, 100, 999)", m)
	}
	if c := compare(samples, "a", "nobody"); c.Rounds != 0 || !math.IsNaN(c.Ratio) {
		t.Errorf("compare with no reference runs = %+v, want no rounds and NaN", c)
	}
}

func TestCompareLineup(t *testing.T) {
	withMQTT := &broker{name: nameWharf, urls: map[string]string{connOpenWire: "tcp://x", connMQTT: "mqtt://x"}}
	withoutMQTT := &broker{name: nameWharf, urls: map[string]string{connOpenWire: "tcp://x"}}
	amq := &broker{name: nameActiveMQ, urls: map[string]string{connOpenWire: "tcp://y", connMQTT: "mqtt://y"}}
	mosq := &broker{name: nameMosquitto, urls: map[string]string{connMQTT: "mqtt://z"}}
	rabbit := &broker{name: nameRabbitMQ, urls: map[string]string{connMQTT: "mqtt://r", connAMQP: "amqp://r"}}
	mqtt := scenario{ID: "m", conn: connMQTT, refs: []string{nameMosquitto, nameActiveMQ}}
	mqtt3 := scenario{ID: "m3", conn: connMQTT, refs: []string{nameMosquitto, nameActiveMQ, nameRabbitMQ}}
	ow := scenario{ID: "o", conn: connOpenWire, refs: []string{nameActiveMQ}}
	cases := []struct {
		name      string
		wharf     *broker
		sc        scenario
		order     []string
		pairs     [][2]string
		noteHasNA bool
	}{
		{"Wharf with MQTT against both references", withMQTT, mqtt,
			[]string{nameWharf, nameMosquitto, nameActiveMQ}, [][2]string{{nameWharf, nameMosquitto}, {nameWharf, nameActiveMQ}}, false},
		{"Wharf without MQTT: ActiveMQ against Mosquitto", withoutMQTT, mqtt,
			[]string{nameMosquitto, nameActiveMQ}, [][2]string{{nameActiveMQ, nameMosquitto}}, true},
		{"Wharf without MQTT, RabbitMQ too: ActiveMQ against Mosquitto and RabbitMQ", withoutMQTT, mqtt3,
			[]string{nameMosquitto, nameActiveMQ, nameRabbitMQ}, [][2]string{{nameActiveMQ, nameMosquitto}, {nameActiveMQ, nameRabbitMQ}}, true},
		{"OpenWire: Wharf then ActiveMQ", withoutMQTT, ow,
			[]string{nameWharf, nameActiveMQ}, [][2]string{{nameWharf, nameActiveMQ}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &runner{brokers: map[string]*broker{nameWharf: tc.wharf, nameActiveMQ: amq, nameMosquitto: mosq, nameRabbitMQ: rabbit}}
			order, pairs, note := r.lineup(tc.sc)
			if !slices.Equal(order, tc.order) || fmt.Sprint(pairs) != fmt.Sprint(tc.pairs) {
				t.Errorf("lineup = %v %v, want %v %v", order, pairs, tc.order, tc.pairs)
			}
			if got := strings.Contains(note, "wharf: n/a (no MQTT listener)"); got != tc.noteHasNA {
				t.Errorf("note %q; want the n/a note: %v", note, tc.noteHasNA)
			}
		})
	}
}

// inProcess is an in-process Wharf posing as a broker of the comparison.
func inProcess(t *testing.T, name string) *broker {
	t.Helper()
	b := brokertest.Start(t, wiring.Factories())
	ow := b.Addr("openwire").String()
	br := &broker{
		name: name, pid: os.Getpid(), exited: make(chan struct{}), stop: func() error { return nil },
		urls: map[string]string{connOpenWire: "tcp://" + ow, connNIO: "tcp://" + ow, connSTOMP: "stomp://" + b.STOMPAddr()},
	}
	if a := b.AMQPAddr(); a != "" {
		br.urls[connAMQP] = "amqp://" + a
	}
	return br
}

// TestCompareLatencyDiskAndSelfRows runs, against in-process brokers, the
// new kinds of rows for one round each: a latency row at a fixed rate
// (with the disk as a second reference, at a share of its fsync rate), a
// near-the-limit row against the disk alone, and Wharf's AMQP against
// its own STOMP; and checks who ran, the disk's samples, the target
// rates, and how the table prints them.
func TestCompareLatencyDiskAndSelfRows(t *testing.T) {
	w := inProcess(t, nameWharf)
	if w.urls[connAMQP] == "" {
		t.Fatal("the in-process Wharf has no AMQP connector")
	}
	brokers := map[string]*broker{nameWharf: w, nameActiveMQ: inProcess(t, nameActiveMQ)}
	var log bytes.Buffer
	var freshStarts []string
	r := &runner{brokers: brokers, rounds: 1, log: &log, scale: 1, diskDir: t.TempDir(), fsyncPerSec: 400,
		missing: map[string]string{nameRabbitMQ: "not installed"},
		fresh: func(_ context.Context, name string, _ int, storeEvery bool) (*broker, error) {
			freshStarts = append(freshStarts, fmt.Sprintf("%s storeEvery=%v", name, storeEvery))
			return inProcess(t, name), nil
		}}
	latency := scenario{ID: "lat", Title: "latency, queue at a disk's share", conn: connSTOMP,
		refs: []string{nameActiveMQ, nameRabbitMQ, nameDisk}, metric: latencyP99, rateOfDisk: 0.5, rateFor: time.Second,
		set: func(c *bench.Config) { c.Size = 1024 }}
	limit := scenario{ID: "lim", Title: "near the limit: sync persistent", conn: connSTOMP, refs: []string{nameDisk}, metric: throughput,
		target: "Wharf/disk ≥ 0.95", fresh: true, storeEvery: true, set: func(c *bench.Config) {
			sync := true
			c.Persistent, c.Sync, c.Count, c.Duration = true, &sync, 1<<30, 500*time.Millisecond
		}}
	self := scenario{ID: "self", Title: "queue, AMQP vs STOMP", conn: connAMQP, refs: []string{nameWharfSTOMP}, metric: throughput,
		set: func(c *bench.Config) { c.Count = 300 }}
	scs := []scenario{latency, limit, self}

	order, _, note := r.lineup(latency)
	if !slices.Equal(order, []string{nameWharf, nameActiveMQ, nameDisk}) || !strings.Contains(note, "rabbitmq: not installed") {
		t.Errorf("latency lineup %v, note %q; want Wharf, ActiveMQ, the disk, and RabbitMQ's absence noted", order, note)
	}
	samples, done := r.run(context.Background(), scs)
	if done != 1 {
		t.Fatalf("%d rounds, want 1; log:\n%s", done, log.String())
	}
	want := []string{"lat wharf", "lat activemq", "lat disk", "lim wharf", "lim disk", "self wharf", "self wharf-stomp"}
	if !slices.Equal(r.ran, want) {
		t.Errorf("runs %v, want %v", r.ran, want)
	}
	// The near-the-limit row's Wharf is a fresh one that stores every
	// message; the disk needs no broker.
	if want := []string{"wharf storeEvery=true"}; !slices.Equal(freshStarts, want) {
		t.Errorf("fresh starts %v, want %v", freshStarts, want)
	}
	for _, s := range samples["lat"] {
		switch {
		case !s.valid():
			t.Errorf("latency sample %+v failed; log:\n%s", s, log.String())
		case s.Broker == nameDisk && (s.Value != s.P99us || s.P50us <= 0 || s.P99us < s.P50us):
			t.Errorf("disk's latency sample %+v: want its fsync p99 as the value, 0 < p50 <= p99", s)
		case s.Broker != nameDisk && (s.TargetRate != 200 || s.Value != s.P99us || s.Received != 200):
			t.Errorf("%s's latency sample %+v: want 200 messages at ½ of 400 fsync/s, the p99 as the value", s.Broker, s)
		}
	}
	for _, s := range samples["lim"] {
		if !s.valid() || s.Value <= 0 || (s.Broker == nameDisk && s.Value != s.ReceiveRate) {
			t.Errorf("near-the-limit sample %+v: want a rate (fsync/s for the disk)", s)
		}
	}
	for _, s := range samples["self"] {
		if !s.valid() || s.Received != 300 {
			t.Errorf("self sample %+v: want 300 received", s)
		}
	}

	rep := &Report{Rounds: 1, Machine: Machine{FsyncPerSec: 400, FsyncP50us: 1500, FsyncP99us: 4200}}
	for _, sc := range scs {
		order, pairs, note := r.lineup(sc)
		rep.Scenarios = append(rep.Scenarios, summarize(sc, order, pairs, note, samples[sc.ID]))
	}
	lat := rep.Scenarios[0]
	if !lat.Latency || lat.HigherIsBetter || len(lat.Comparisons) != 2 || lat.Comparisons[1].Reference != nameDisk {
		t.Errorf("latency report %+v: want a latency row, lower better, against ActiveMQ and the disk", lat)
	}
	if p := float64(lat.MedianP50us[nameWharf]); !(p > 0 && p <= float64(lat.Medians[nameWharf])) {
		t.Errorf("Wharf's median p50 %v, p99 %v; want 0 < p50 <= p99", p, lat.Medians[nameWharf])
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	tbl := table.String()
	for _, want := range []string{"p50 1.5ms, p99 4.2ms", "µs ↓", "p50 " + fmtMicros(float64(lat.MedianP50us[nameWharf])),
		"disk fsync", "target Wharf/disk ≥ 0.95", "Wharf STOMP", "rabbitmq: not installed"} {
		if !strings.Contains(tbl, want) {
			t.Errorf("table lacks %q:\n%s", want, tbl)
		}
	}
	// The disk's row has no p99 beside the fsync rate (its p99 is not a
	// message's).
	for line := range strings.Lines(tbl) {
		if strings.HasPrefix(line, "near the limit") && strings.Contains(line, "p99 ") {
			t.Errorf("near-the-limit row shows a p99: %s", line)
		}
	}
}

// TestCompareBehindTarget: an open-loop run that sent below its target
// rate gets a note; one at its rate does not.
func TestCompareBehindTarget(t *testing.T) {
	ss := []Sample{
		{Round: 1, Broker: nameWharf, Value: 900, SendRate: 9990, TargetRate: 10000},
		{Round: 1, Broker: nameActiveMQ, Value: 5000, SendRate: 7000, TargetRate: 10000},
	}
	sc := scenario{ID: "l", Title: "latency", metric: latencyP99}
	sr := summarize(sc, []string{nameWharf, nameActiveMQ}, [][2]string{{nameWharf, nameActiveMQ}}, "", ss)
	notes := strings.Join(sr.Notes, "; ")
	if !strings.Contains(notes, "activemq: 1 run(s) sent below 95% of the target rate") || strings.Contains(notes, "wharf:") {
		t.Errorf("notes %q: want ActiveMQ's shortfall and nothing about Wharf", notes)
	}
	if c := sr.Comparisons[0]; float64(c.Ratio) != 900.0/5000 {
		t.Errorf("latency ratio %v, want 0.18 (p99 Wharf/ActiveMQ)", c.Ratio)
	}
}

// TestCompareRounds runs two message scenarios and a fresh-broker one for
// two rounds against two in-process brokers and checks the alternation
// (A B per scenario, round after round), the statistics and the three
// outputs: the table, the JSON and the SVG.
func TestCompareRounds(t *testing.T) {
	brokers := map[string]*broker{nameWharf: inProcess(t, nameWharf), nameActiveMQ: inProcess(t, nameActiveMQ)}
	var freshStarts []string
	var log bytes.Buffer
	r := &runner{
		brokers: brokers, rounds: 2, log: &log, scale: 1,
		fresh: func(_ context.Context, name string, round int, _ bool) (*broker, error) {
			freshStarts = append(freshStarts, fmt.Sprintf("%s/%d", name, round))
			return inProcess(t, name), nil
		},
	}
	amq := []string{nameActiveMQ}
	scs := []scenario{
		{ID: "q", Title: "queue over STOMP", conn: connSTOMP, refs: amq, metric: throughput,
			set: func(c *bench.Config) { c.Count = 300 }},
		{ID: "t", Title: "topic over OpenWire", conn: connOpenWire, refs: amq, metric: throughput,
			set: func(c *bench.Config) { c.Scenario, c.Subscribers, c.Count = bench.ScenarioTopic, 3, 200 }},
		// The RSS growth of 20 connections in this process could be 0: a
		// stand-in metric with the same unit and direction.
		{ID: "c", Title: "idle connections", conn: connNIO, refs: amq, metric: openedMetric, fresh: true,
			set: func(c *bench.Config) {
				c.Scenario, c.Connections, c.Hold = bench.ScenarioConnections, 20, time.Millisecond
			}},
	}
	samples, done := r.run(context.Background(), scs)
	if done != 2 {
		t.Fatalf("%d rounds done, want 2; log:\n%s", done, log.String())
	}
	want := []string{"q wharf", "q activemq", "t wharf", "t activemq", "c wharf", "c activemq",
		"q wharf", "q activemq", "t wharf", "t activemq", "c wharf", "c activemq"}
	if !slices.Equal(r.ran, want) {
		t.Errorf("runs in order %v, want %v", r.ran, want)
	}
	if want := []string{"wharf/1", "activemq/1", "wharf/2", "activemq/2"}; !slices.Equal(freshStarts, want) {
		t.Errorf("fresh brokers started %v, want %v", freshStarts, want)
	}
	rep := &Report{Date: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Rounds: done, RoundsPlanned: 2, Scale: 1,
		Machine: Machine{Cores: 2, FsyncPerSec: 123, DataFS: "ext4"}}
	for _, sc := range scs {
		ss := samples[sc.ID]
		if len(ss) != 4 {
			t.Fatalf("%s: %d samples, want 4", sc.ID, len(ss))
		}
		for _, s := range ss {
			if !s.valid() || s.Value <= 0 && sc.metric.higherIsBetter {
				t.Errorf("%s: sample %+v, want a valid positive value", sc.ID, s)
			}
			if sc.ID == "t" && s.Received != 3*s.Sent {
				t.Errorf("topic sample received %d of %d sent to 3 subscribers", s.Received, s.Sent)
			}
		}
		order, pairs, note := r.lineup(sc)
		sr := summarize(sc, order, pairs, note, ss)
		if len(sr.Comparisons) != 1 || sr.Comparisons[0].Rounds != 2 {
			t.Fatalf("%s: comparisons %+v, want one over 2 rounds", sc.ID, sr.Comparisons)
		}
		c := sr.Comparisons[0]
		if c.Min > c.Ratio || c.Ratio > c.Max {
			t.Errorf("%s: ratio %v outside its range %v–%v", sc.ID, c.Ratio, c.Min, c.Max)
		}
		rep.Scenarios = append(rep.Scenarios, sr)
	}

	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"queue over STOMP", "topic over OpenWire", "idle connections", "msg/s ↑", "B/conn ↓",
		"Wharf ", "ActiveMQ ", "123 fsync/s", fmtRatio(float64(rep.Scenarios[0].Comparisons[0].Ratio))} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}

	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("the JSON does not read back: %v", err)
	}
	if len(back.Scenarios) != 3 || len(back.Scenarios[1].Samples) != 4 || back.Scenarios[0].Medians[nameWharf] != rep.Scenarios[0].Medians[nameWharf] {
		t.Errorf("JSON round trip lost data: %+v", back.Scenarios)
	}

	var svg bytes.Buffer
	if err := rep.WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	bars := checkSVG(t, svg.Bytes())
	if len(bars) != 3 {
		t.Errorf("%d bars, want one per comparison (3)", len(bars))
	}
	for i, b := range bars {
		if got, want := b, float64(rep.Scenarios[i].Comparisons[0].Ratio); math.Abs(got-want) > 1e-3 {
			t.Errorf("bar %d ratio %v, want %v", i, got, want)
		}
	}
}

// openedMetric counts the connections opened, as memory is counted:
// lower is better.
var openedMetric = metric{name: "connections", unit: "B/conn", of: func(r *bench.Result) (float64, bool) {
	if r.Connections == nil {
		return 0, false
	}
	return float64(r.Connections.Opened), r.Connections.Opened > 0
}}

// checkSVG parses doc with encoding/xml and returns the data-ratio of its
// bars.
func checkSVG(t *testing.T, doc []byte) []float64 {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	var ratios []float64
	sawSVG := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v\n%s", err, doc)
		}
		if se, ok := tok.(xml.StartElement); ok {
			sawSVG = sawSVG || se.Name.Local == "svg"
			for _, a := range se.Attr {
				if a.Name.Local == "data-ratio" {
					v, err := strconv.ParseFloat(a.Value, 64)
					if err != nil {
						t.Fatalf("data-ratio %q", a.Value)
					}
					ratios = append(ratios, v)
				}
			}
		}
	}
	if !sawSVG {
		t.Fatal("no <svg> element")
	}
	return ratios
}

// TestCompareNAInReport: a comparison without rounds (a broker that never
// ran) is null in the JSON and n/a in the table, not a NaN that breaks
// either.
func TestCompareNAInReport(t *testing.T) {
	sc := scenario{ID: "m", Title: "MQTT fan-out", metric: throughput}
	sr := summarize(sc, []string{nameMosquitto, nameActiveMQ}, [][2]string{{nameActiveMQ, nameMosquitto}}, "wharf: n/a (no MQTT listener)",
		[]Sample{{Round: 1, Broker: nameMosquitto, Value: 10}, {Round: 1, Broker: nameActiveMQ, Error: "refused"}})
	rep := &Report{Scenarios: []ScenarioReport{sr}}
	var js, table, svg bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"ratio": null`) {
		t.Errorf("JSON without a ratio:\n%s", js.String())
	}
	rep.WriteTable(&table)
	for _, want := range []string{"n/a", "wharf: n/a (no MQTT listener)", "activemq: 1 run(s) failed (refused)"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if err := rep.WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	if bars := checkSVG(t, svg.Bytes()); len(bars) != 0 {
		t.Errorf("bars %v for a comparison without rounds, want none", bars)
	}
}

// TestCompareBrokerConfig: the shared activemq.xml loads in Wharf, with
// and without its MQTT connector, and as ActiveMQ's copy without the AMQP
// one, with a disk sync per persistent send and every connector on
// loopback.
func TestCompareBrokerConfig(t *testing.T) {
	xmlText, err := os.ReadFile("activemq.xml")
	if err != nil {
		t.Fatal(err)
	}
	bp := brokerPorts{openwire: 1001, nio: 1002, stomp: 1003, mqtt: 1004, stompNIO: 1005, mqttNIO: 1006, amqp: 1007}
	vars := map[string]string{}
	for _, p := range bp.props(t.TempDir()) {
		k, v, _ := strings.Cut(p, "=")
		vars[k] = v
	}
	for _, tc := range []struct {
		name    string
		text    string
		schemes []string
	}{
		{"as Wharf loads it", string(xmlText), []string{"tcp", "nio", "stomp", "mqtt", "stomp+nio", "mqtt+nio", "amqp"}},
		{"as ActiveMQ loads it", withoutConnectors(string(xmlText), "amqp"), []string{"tcp", "nio", "stomp", "mqtt", "stomp+nio", "mqtt+nio"}},
		{"without MQTT", withoutMQTT(string(xmlText)), []string{"tcp", "nio", "stomp", "stomp+nio", "amqp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "activemq.xml")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.LoadFile(path, vars)
			if err != nil {
				t.Fatal(err)
			}
			var schemes []string
			for _, tr := range cfg.Transports {
				schemes = append(schemes, tr.Scheme)
				if tr.Host != "127.0.0.1" {
					t.Errorf("connector %s on %q, want loopback", tr.Name, tr.Host)
				}
			}
			if !slices.Equal(schemes, tc.schemes) {
				t.Errorf("connectors %v, want %v", schemes, tc.schemes)
			}
			if kd := cfg.Persistence.KahaDB; cfg.Persistence.Kind != config.KindKahaDB || kd.JournalDiskSyncStrategy != config.SyncAlways {
				t.Errorf("store %q with sync strategy %q, want KahaDB syncing always", cfg.Persistence.Kind, kd.JournalDiskSyncStrategy)
			}
			if !cfg.Persistence.KahaDB.ConcurrentStoreAndDispatchQueues {
				t.Errorf("concurrentStoreAndDispatchQueues off, want ActiveMQ's default (on)")
			}
			// The near-the-limit rows' Wharf stores every message.
			if err := os.WriteFile(path, []byte(storingEvery(tc.text)), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err = config.LoadFile(path, vars)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Persistence.KahaDB.ConcurrentStoreAndDispatchQueues {
				t.Errorf("storing every message: concurrentStoreAndDispatchQueues on, want off")
			}
		})
	}
}

// TestCompareRender: a saved report prints the same table again and gets
// its chart redrawn next to it.
func TestCompareRender(t *testing.T) {
	sc := scenario{ID: "q", Title: "queue", metric: throughput}
	rep := &Report{Rounds: 2, Machine: Machine{Cores: 2, FsyncPerSec: 42}, Scenarios: []ScenarioReport{
		summarize(sc, []string{nameWharf, nameActiveMQ}, [][2]string{{nameWharf, nameActiveMQ}}, "", []Sample{
			{Round: 1, Broker: nameWharf, Value: 300, P99us: 1500}, {Round: 1, Broker: nameActiveMQ, Value: 100, P99us: 900},
			{Round: 2, Broker: nameWharf, Value: 200, P99us: 1700}, {Round: 2, Broker: nameActiveMQ, Value: 100, P99us: 800},
		}),
	}}
	var want bytes.Buffer
	rep.WriteTable(&want)
	if !strings.Contains(want.String(), "Wharf 250") || !strings.Contains(want.String(), "2.50  2.00–3.00") {
		t.Errorf("table does not show the median 250 and the ratio 2.50 (2.00–3.00):\n%s", want.String())
	}
	for line := range strings.Lines(want.String()) {
		if strings.HasSuffix(strings.TrimSuffix(line, "\n"), " ") {
			t.Errorf("line ends in blanks: %q", line)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "2026-01-02.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var got bytes.Buffer
	if err := render(path, &got); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("rendered table:\n%s\nwant the original:\n%s", got.String(), want.String())
	}
	svg, err := os.ReadFile(filepath.Join(dir, "2026-01-02.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if bars := checkSVG(t, svg); len(bars) != 1 || bars[0] != 2.5 {
		t.Errorf("redrawn chart bars %v, want [2.5]", bars)
	}
}

// TestCompareFsyncRate: the disk sync test gives a rate and percentiles
// of the write+fsync times consistent with it (the median is at most the
// 99th percentile, and at most the time a whole second's worth of
// operations leaves each).
func TestCompareFsyncRate(t *testing.T) {
	p, err := fsyncRate(t.TempDir(), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if p.PerSec <= 0 || p.N < 1 || p.P50 <= 0 || p.P99 < p.P50 {
		t.Errorf("fsync probe %+v, want a positive rate and 0 < p50 <= p99", p)
	}
	if mean := time.Duration(float64(time.Second) / p.PerSec); p.P50 > 2*mean+time.Millisecond {
		t.Errorf("fsync p50 %v is far above the mean time %v of %.0f/s", p.P50, mean, p.PerSec)
	}
}

// TestComparePercentile: nearest rank, on unsorted input, which it leaves
// alone.
func TestComparePercentile(t *testing.T) {
	var ts []time.Duration
	for i := 100; i >= 1; i-- {
		ts = append(ts, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}, {0, time.Millisecond}} {
		if got := percentile(ts, c.q); got != c.want {
			t.Errorf("percentile(1..100 ms, %v) = %v, want %v", c.q, got, c.want)
		}
	}
	if ts[0] != 100*time.Millisecond {
		t.Errorf("percentile sorted its input in place")
	}
	if got := percentile([]time.Duration{7}, 0.99); got != 7 {
		t.Errorf("percentile of one = %v, want it", got)
	}
	if got := percentile(nil, 0.5); got != 0 {
		t.Errorf("percentile of none = %v, want 0", got)
	}
}

// TestCompareScenariosBounded: every scenario of the real comparison
// stops by count and by time, and validates; a JMS-client scenario has a
// count (JmsBench stops at it, or after jmsTimeout).
func TestCompareScenariosBounded(t *testing.T) {
	for _, sc := range scenarios() {
		if sc.jms != nil {
			if sc.jms.count <= 0 || sc.jms.size < 1 || (sc.jms.topic && sc.jms.subs < 1) || sc.conn != connOpenWire {
				t.Errorf("%s: JMS run %+v over %s; want a count, a size, subscribers for a topic, OpenWire", sc.ID, *sc.jms, sc.conn)
			}
			continue
		}
		cfg := sc.config("tcp://127.0.0.1:1", 0, 1, 300)
		switch sc.conn {
		case connAMQP:
			cfg.URL = "amqp://127.0.0.1:1"
		case connMQTT, connMQTTNIO:
			cfg.URL = "mqtt://127.0.0.1:1"
		case connSTOMP, connSTOMPNIO:
			cfg.URL = "stomp://127.0.0.1:1"
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s: %v", sc.ID, err)
		}
		if cfg.Scenario != bench.ScenarioConnections && (cfg.Count == 0 || cfg.Duration <= 0 || cfg.Duration > 10*time.Second) {
			t.Errorf("%s: count %d, duration %s; want both, the duration at most 10s", sc.ID, cfg.Count, cfg.Duration)
		}
	}
}

// TestCompareAMQPvsSTOMPSameGuarantee: the AMQP-vs-STOMP row runs AMQP
// presettled and STOMP ack:auto without receipts (at-most-once both), and
// the same scenario against RabbitMQ's AMQP stays unsettled.
func TestCompareAMQPvsSTOMPSameGuarantee(t *testing.T) {
	var found bool
	for _, sc := range scenarios() {
		if sc.ID != "queue-1k-amqp-vs-stomp" {
			if sc.conn == connAMQP && sc.config("amqp://127.0.0.1:1", 0, 1, 300).Settle != bench.SettleUnsettled {
				t.Errorf("%s: AMQP settle mode %q, want unsettled", sc.ID, sc.config("amqp://127.0.0.1:1", 0, 1, 300).Settle)
			}
			continue
		}
		found = true
		amqp := sc.config("amqp://127.0.0.1:1", 0, 1, 300)
		stomp := sc.config("stomp://127.0.0.1:1", 0, 1, 300)
		if amqp.Settle != bench.SettlePresettled || amqp.Ack != bench.AckAuto {
			t.Errorf("AMQP side: settle %q ack %q, want presettled, auto", amqp.Settle, amqp.Ack)
		}
		if stomp.Settle != bench.SettleUnsettled || stomp.Ack != bench.AckAuto || stomp.SyncSends() {
			t.Errorf("STOMP side: settle %q ack %q sync %v, want unsettled (no mode), auto, asynchronous", stomp.Settle, stomp.Ack, stomp.SyncSends())
		}
		for _, c := range []bench.Config{amqp, stomp} {
			if err := c.Validate(); err != nil {
				t.Errorf("%s: %v", c.URL, err)
			}
		}
		if amqp.Count != stomp.Count || amqp.Size != stomp.Size || amqp.Producers != stomp.Producers || amqp.Consumers != stomp.Consumers {
			t.Errorf("the two sides differ in load: %+v vs %+v", amqp, stomp)
		}
	}
	if !found {
		t.Fatal("no queue-1k-amqp-vs-stomp row")
	}
}

// TestCompareJMSResultLine: JmsBench's result line gives the rate and the
// seconds; its failure line gives nothing.
func TestCompareJMSResultLine(t *testing.T) {
	m := jmsResult.FindStringSubmatch("RESULT topic nonpersistent 20000 x 1024 B, 1 producer(s), 10 receiver(s): 41234 msgs/s received (4.85 s)")
	if m == nil || m[1] != "41234" || m[2] != "4.85" {
		t.Fatalf("result line parsed as %q", m)
	}
	// JmsBench's arguments: the pairs go last, 1 unless set.
	got := jmsRun{persistent: true, size: 1024, pairs: 4}.args("tcp://h:1", 4000)
	if want := []string{"tcp://h:1", "queue", "persistent", "4000", "1024", "0", "4"}; !slices.Equal(got, want) {
		t.Errorf("JmsBench arguments %q, want %q", got, want)
	}
	got = jmsRun{topic: true, size: 100, subs: 10}.args("tcp://h:1", 5)
	if want := []string{"tcp://h:1", "topic", "nonpersistent", "5", "100", "10", "1"}; !slices.Equal(got, want) {
		t.Errorf("JmsBench arguments %q, want %q", got, want)
	}
	if m := jmsResult.FindStringSubmatch("FAILED received 10 of 20"); m != nil {
		t.Fatalf("failure line parsed as %q", m)
	}
}

// TestCompareCPUSeconds reads this process's CPU time, which only grows.
func TestCompareCPUSeconds(t *testing.T) {
	a, err := cpuSeconds(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(30 * time.Millisecond); time.Now().Before(end); {
	}
	b, err := cpuSeconds(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if a < 0 || b < a {
		t.Fatalf("CPU seconds %v then %v", a, b)
	}
	if _, err := cpuSeconds(-1); err == nil {
		t.Fatal("cpuSeconds(-1) succeeded")
	}
}
