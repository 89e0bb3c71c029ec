package bench

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestBenchCheckerCounts(t *testing.T) {
	type delivery struct {
		consumer, producer int
		seq                uint64
	}
	cases := []struct {
		name                              string
		sent                              []int64
		got                               []delivery
		lost, duplicates, outOfOrder, bad int64
	}{
		{
			name: "everything once in order",
			sent: []int64{3, 2},
			got:  []delivery{{0, 0, 1}, {0, 1, 1}, {0, 0, 2}, {0, 1, 2}, {0, 0, 3}},
		},
		{
			name: "a lost message in the middle and one at the end",
			sent: []int64{5},
			got:  []delivery{{0, 0, 1}, {0, 0, 2}, {0, 0, 4}},
			lost: 2,
		},
		{
			name:       "a redelivery is a duplicate and out of order",
			sent:       []int64{3},
			got:        []delivery{{0, 0, 1}, {0, 0, 2}, {0, 0, 3}, {0, 0, 2}},
			duplicates: 1, outOfOrder: 1,
		},
		{
			name:       "two consumers of a queue both getting one message",
			sent:       []int64{2},
			got:        []delivery{{0, 0, 1}, {1, 0, 1}, {1, 0, 2}},
			duplicates: 1,
		},
		{
			name: "consumers of a queue interleave without reordering",
			sent: []int64{4},
			got:  []delivery{{1, 0, 2}, {0, 0, 1}, {0, 0, 3}, {1, 0, 4}},
		},
		{
			name:       "reordering within one consumer",
			sent:       []int64{3},
			got:        []delivery{{0, 0, 2}, {0, 0, 1}, {0, 0, 3}},
			outOfOrder: 1,
		},
		{
			name: "unknown producer and sequence 0 are foreign",
			sent: []int64{1},
			got:  []delivery{{0, 0, 1}, {0, 7, 1}, {0, 0, 0}},
			bad:  2,
		},
		{
			name: "a sequence number beyond the sent count does not make up for a lost one",
			sent: []int64{1},
			got:  []delivery{{0, 0, 2}},
			lost: 1,
		},
		{
			name: "sequence numbers across bitset words",
			sent: []int64{200},
			got: func() []delivery {
				var ds []delivery
				for s := uint64(1); s <= 200; s++ {
					if s != 64 && s != 65 && s != 200 {
						ds = append(ds, delivery{0, 0, s})
					}
				}
				return ds
			}(),
			lost: 3,
		},
	}
	t.Run("order unchecked", func(t *testing.T) {
		c := newChecker(1, false)
		c.record(0, 0, 2)
		c.record(0, 0, 1)
		if c.outOfOrder != 0 || c.lost([]int64{2}) != 0 {
			t.Errorf("out of order %d, lost %d; want 0, 0", c.outOfOrder, c.lost([]int64{2}))
		}
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newChecker(len(tc.sent), true)
			for _, d := range tc.got {
				c.record(d.consumer, d.producer, d.seq)
			}
			if got := c.lost(tc.sent); got != tc.lost {
				t.Errorf("lost = %d, want %d", got, tc.lost)
			}
			if c.duplicates != tc.duplicates {
				t.Errorf("duplicates = %d, want %d", c.duplicates, tc.duplicates)
			}
			if c.outOfOrder != tc.outOfOrder {
				t.Errorf("out of order = %d, want %d", c.outOfOrder, tc.outOfOrder)
			}
			if c.foreign != tc.bad {
				t.Errorf("foreign = %d, want %d", c.foreign, tc.bad)
			}
		})
	}
}

func TestBenchStampRoundTrip(t *testing.T) {
	b := newBody(100)
	want := stamp{producer: 3, seq: 1 << 40, sent: 1234567 * time.Microsecond}
	putStamp(b, want)
	got, err := readStamp(b)
	if err != nil || got != want {
		t.Fatalf("readStamp = %+v, %v; want %+v", got, err, want)
	}
	if _, err := readStamp([]byte("hello, this is not a bench message")); err == nil {
		t.Fatal("readStamp accepted a foreign body")
	}
}

// fakeClock is a clock that moves only when told: sleepUntil jumps to the
// wake-up time, a send advances it by its service time.
type fakeClock struct{ t time.Duration }

func (c *fakeClock) now() time.Duration { return c.t }

func (c *fakeClock) sleepUntil(ctx context.Context, t time.Duration) error {
	c.t = max(c.t, t)
	return ctx.Err()
}

// TestBenchOpenLoopLatency: a broker that stalls one send for 10 ms while
// the schedule asks for a message every millisecond. Open loop charges
// the stall to every message that was due during it (measured from its
// due time, not from when it finally went out); closed loop sees one slow
// message only, which is the coordinated omission the open loop avoids.
func TestBenchOpenLoopLatency(t *testing.T) {
	const (
		n     = 20
		stall = 10 * time.Millisecond
		slow  = 5 // the message whose send stalls
	)
	run := func(open bool) (*recorder, []stamp, []time.Duration) {
		clk := &fakeClock{}
		rec := newRecorder(clk, 1, 1, true)
		var sched *schedule
		if open {
			s := newSchedule(0, 1000, 1, 0) // 1000 msg/s: one per ms
			sched = &s
		}
		var stamps []stamp
		var starts []time.Duration
		body := newBody(stampBytes)
		sent := pace(context.Background(), clk, sched, time.Hour, n, func(i int64, at time.Duration) bool {
			starts = append(starts, clk.now())
			putStamp(body, stamp{producer: 0, seq: uint64(i + 1), sent: at})
			st, _ := readStamp(body)
			stamps = append(stamps, st)
			if i == slow {
				clk.t += stall // the send blocks
			}
			rec.deliver(0, 0, body) // delivered as the send returns
			return true
		})
		if sent != n {
			t.Fatalf("pace sent %d, want %d", sent, n)
		}
		return rec, stamps, starts
	}

	rec, stamps, starts := run(true)
	for i, st := range stamps {
		due := time.Duration(i) * time.Millisecond
		if st.sent != due {
			t.Errorf("open loop: message %d stamped %v, want its due time %v", i, st.sent, due)
		}
	}
	// Messages 6..14 were due during the stall and went out at 15 ms,
	// back to back, without waiting for their slots.
	for i := slow + 1; i < slow+10; i++ {
		if want := slow*time.Millisecond + stall; starts[i] != want {
			t.Errorf("open loop: message %d started at %v, want %v (at once, overdue)", i, starts[i], want)
		}
	}
	if got := time.Duration(rec.hist.Max()); got < stall-time.Microsecond || got > stall+stall/100 {
		t.Errorf("open loop: max latency %v, want %v", got, stall)
	}
	// 10 of 20 messages (5..14) saw 1..10 ms: p75 is in the stall.
	if p75 := time.Duration(rec.hist.ValueAtQuantile(75)); p75 < 4*time.Millisecond {
		t.Errorf("open loop: p75 %v, want the messages queued behind the stall counted (>= 4ms)", p75)
	}
	if rec.checkers[0].lost([]int64{n}) != 0 || rec.unique != n {
		t.Errorf("open loop: %d unique deliveries, want %d", rec.unique, n)
	}

	rec, stamps, starts = run(false)
	for i, st := range stamps {
		if st.sent != starts[i] {
			t.Errorf("closed loop: message %d stamped %v, want its actual start %v", i, st.sent, starts[i])
		}
	}
	if p75 := time.Duration(rec.hist.ValueAtQuantile(75)); p75 > time.Microsecond {
		t.Errorf("closed loop: p75 %v, want ~0: only the stalled message is slow", p75)
	}
	if got := time.Duration(rec.hist.Max()); got < stall-time.Microsecond || got > stall+stall/100 {
		t.Errorf("closed loop: max latency %v, want %v", got, stall)
	}
}

func TestBenchScheduleSpreadsProducers(t *testing.T) {
	// 3 producers sharing 1000 msg/s: each sends every 3 ms, offset by
	// 1 ms from the previous one, so together one message per ms.
	var dues []time.Duration
	for p := range 3 {
		s := newSchedule(time.Second, 1000, 3, p)
		for n := range int64(2) {
			dues = append(dues, s.due(n)-time.Second)
		}
	}
	want := []time.Duration{0, 3 * time.Millisecond, 1 * time.Millisecond, 4 * time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond}
	for i := range want {
		if dues[i] != want[i] {
			t.Fatalf("due times %v, want %v", dues, want)
		}
	}
}

func TestBenchConfigValidate(t *testing.T) {
	c := DefaultConfig()
	c.Count = 100
	if err := c.Validate(); err != nil {
		t.Fatalf("default config with a count: %v", err)
	}
	if c.Duration != DefaultMaxDuration {
		t.Errorf("count-only run: duration %v, want the cap %v", c.Duration, DefaultMaxDuration)
	}
	c = DefaultConfig()
	c.URL, c.Size, c.Ack = "xmpp://x:1", 10, "sometimes"
	err := c.Validate()
	if err == nil {
		t.Fatal("bad config accepted")
	}
	for _, want := range []string{"xmpp", "--size 10", `--ack "sometimes"`, "--count or --duration"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	for _, tc := range []struct {
		url  string
		want Protocol
	}{{"stomp://127.0.0.1:61613", ProtocolSTOMP}, {"tcp://localhost:61616", ProtocolOpenWire}, {"nio://u:p@h:1", ProtocolOpenWire}} {
		tg, err := ParseURL(tc.url)
		if err != nil || tg.Protocol != tc.want {
			t.Errorf("ParseURL(%q) = %+v, %v; want %s", tc.url, tg, err, tc.want)
		}
	}
	if tg, _ := ParseURL("nio://u:p@h:1"); tg.User != "u" || tg.Password != "p" || tg.Addr != "h:1" {
		t.Errorf("credentials: %+v", tg)
	}
	if _, err := ParseURL("tcp://nohost"); err == nil {
		t.Error("URL without port accepted")
	}
}
