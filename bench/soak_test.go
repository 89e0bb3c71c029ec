package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The soak (issue 17 item 5): a wharf process on KahaDB under a steady
// mixed load for WHARF_SOAK_DURATION (2m in `make test`; `make soak
// DURATION=1h`): queues over STOMP, OpenWire and AMQP with producers and
// consumers that reconnect every few seconds (connection churn), an MQTT
// persistent session (a durable subscription) that goes offline and
// comes back, STOMP messages scheduled with AMQ_SCHEDULED_DELAY, STOMP
// messages that expire unconsumed, and STOMP messages refused (NACK)
// until the redelivery limit dead-letters them; an OpenWire consumer
// empties ActiveMQ.DLQ. An OpenWire queue of 4 KiB messages loses its
// consumer for the load's last min(half, 5 minutes): its backlog pins
// the journal files written meanwhile, which the drain must free. The broker's RSS and open files (/proc/PID), its
// goroutines (go_goroutines on /metrics) and the size of its data
// directory are sampled every WHARF_SOAK_INTERVAL (10s; 2s for runs
// under 10 minutes) into soak.csv and plotted into soak.svg in
// WHARF_SOAK_OUT (a temporary directory when unset).
//
// Then the load drains: producers stop, the durable subscriber stays
// online, every message must arrive (at least once: churned consumers
// see redeliveries, which are counted) and every expired and refused one
// must reach the DLQ consumer. The run fails when:
//   - a message is lost (sent and never received, or never dead-lettered);
//   - RSS grows without bound: the least-squares line through the second
//     half of the steady load (before the backlog's consumer leaves, which
//     grows memory on purpose) rises by more than max(24 MiB, 10% of the
//     mean RSS) across that half (a 1h run: more than about 52 MiB/h);
//   - the data directory does not shrink back to within 3 MiB (three
//     1 MiB journal files: the one being written, the index and the
//     scheduler's store besides) of its size before the load, within a
//     minute of draining;
//   - goroutines or open files do not come back to within 25 goroutines
//     and 10 files of their values before the load once every client has
//     disconnected.

const (
	soakBodyBytes     = 1024
	soakRSSFloor      = 24 << 20 // bytes: the RSS growth always allowed over the second half
	soakRSSFraction   = 0.10     // of the mean RSS: the growth allowed when larger
	soakStoreSlack    = 3 << 20  // bytes above the store's size before the load: three journal files
	soakGoroutineSlak = 25
	soakFDSlack       = 10
	soakDrainTimeout  = 3 * time.Minute
	soakSettleTimeout = time.Minute
	soakScheduleMax   = 3000 // ms: scheduled messages are delayed 0..this
	soakBacklogBytes  = 4096
	soakBacklogWindow = 5 * time.Minute // the backlog's consumer is away for the load's last min(half, this)
)

// soakPolicies: expired messages are swept every second (so that they
// expire while unconsumed, not only at dispatch).
const soakPolicies = `destination_policy:
  - queue: SOAK.EXP
    expire_messages_period: 1s
`

// soakStream is one kind of traffic: what its producers sent and which
// sequence numbers its consumer has seen.
type soakStream struct {
	name string
	id   int // the stamp's producer field
	sent atomic.Int64

	mu    sync.Mutex
	seen  []uint64 // a bitset of sequence numbers received
	uniq  int64
	dupes int64
}

func (s *soakStream) receive(seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := int(seq / 64)
	for len(s.seen) <= w {
		s.seen = append(s.seen, 0)
	}
	if s.seen[w]&(1<<(seq%64)) != 0 {
		s.dupes++
		return
	}
	s.seen[w] |= 1 << (seq % 64)
	s.uniq++
}

func (s *soakStream) counts() (sent, uniq, dupes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent.Load(), s.uniq, s.dupes
}

type soakConfig struct {
	duration, interval time.Duration
	rate               float64 // messages per second of each main stream
	out                string
}

func soakConfigFromEnv(t *testing.T) soakConfig {
	c := soakConfig{duration: 2 * time.Minute, rate: 20}
	if v := os.Getenv("WHARF_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 30*time.Second {
			t.Fatalf("WHARF_SOAK_DURATION=%q: want a duration of at least 30s (%v)", v, err)
		}
		c.duration = d
	}
	c.interval = 10 * time.Second
	if c.duration < 10*time.Minute {
		c.interval = 2 * time.Second
	}
	if v := os.Getenv("WHARF_SOAK_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 100*time.Millisecond {
			t.Fatalf("WHARF_SOAK_INTERVAL=%q: want a duration of at least 100ms (%v)", v, err)
		}
		c.interval = d
	}
	if v := os.Getenv("WHARF_SOAK_RATE"); v != "" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r <= 0 || r > 10000 {
			t.Fatalf("WHARF_SOAK_RATE=%q: want messages per second per stream, 0 < rate <= 10000", v)
		}
		c.rate = r
	}
	c.out = os.Getenv("WHARF_SOAK_OUT")
	if c.out == "" {
		c.out = t.TempDir()
	} else if err := os.MkdirAll(c.out, 0o755); err != nil {
		t.Fatal(err)
	}
	return c
}

// soak is one run: the broker, the streams and the workers.
type soak struct {
	t   *testing.T
	w   *wharfChild
	cfg soakConfig

	stomp, ow, amqpQ, durable, sched, exp, poison, backlog *soakStream
	dlq                                                    atomic.Int64 // DLQ deliveries, by stream below
	dlqExp, dlqPoison                                      *soakStream

	draining atomic.Bool // producers stopped: the durable subscriber stays online
	errMu    sync.Mutex
	errs     []string // worker errors other than churn's own closes
	nErrs    int
}

func (k *soak) fail(format string, a ...any) {
	k.errMu.Lock()
	defer k.errMu.Unlock()
	k.nErrs++
	if len(k.errs) < 20 {
		k.errs = append(k.errs, fmt.Sprintf(format, a...))
	}
}

func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("a soak of minutes (-short)")
	}
	cfg := soakConfigFromEnv(t)
	w := startWharfChild(t, soakPolicies)
	k := &soak{t: t, w: w, cfg: cfg}
	mk := func(name string, id int) *soakStream { return &soakStream{name: name, id: id} }
	k.stomp, k.ow, k.amqpQ, k.durable = mk("STOMP queue", 1), mk("OpenWire queue", 2), mk("AMQP queue", 3), mk("MQTT durable", 4)
	k.sched, k.exp, k.poison = mk("scheduled", 5), mk("expiring", 6), mk("refused", 7)
	k.dlqExp, k.dlqPoison = mk("DLQ expired", 6), mk("DLQ refused", 7)
	k.backlog = mk("backlog", 8)

	root := filepath.Dir(w.store)
	smp := startSoakSampler(t, w, root, cfg.interval)
	base := smp.latest()

	load, endLoad := context.WithCancel(context.Background())
	consume, endConsume := context.WithCancel(context.Background())
	defer endLoad()
	defer endConsume()
	var producers, consumers sync.WaitGroup
	run := func(wg *sync.WaitGroup, f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }

	stompT, owT, amqpT, mqttT := w.target("stomp"), w.target("openwire"), w.target("amqp"), w.target("mqtt")
	dialS := func(ctx context.Context) (session, error) {
		return dialSTOMP(ctx, stompT, nil, 10*time.Second, true, false)
	}
	dialO := func(ctx context.Context) (session, error) {
		return dialOpenWire(ctx, owT, nil, 10*time.Second, true, false)
	}
	dialA := func(ctx context.Context) (session, error) {
		return dialAMQP(ctx, amqpT, amqpOptions{timeout: 10 * time.Second, persistent: true})
	}
	dialM := func(id string) func(ctx context.Context) (session, error) {
		return func(ctx context.Context) (session, error) {
			return dialMQTT(ctx, mqttT, mqttOptions{timeout: 10 * time.Second, qos: 1, clientID: id, manualAck: true})
		}
	}
	q := func(n string) dest { return dest{name: n} }

	// The durable subscription exists before anything is published to it.
	durableSub := newSoakDurable(k, dialM("soak-durable"))
	if err := durableSub.connect(consume); err != nil {
		t.Fatal(err)
	}
	run(&consumers, func() { durableSub.loop(consume) })

	r := cfg.rate
	plain := func(s session, to dest, body []byte) error { return s.send(load, to, body, nil, false) }
	run(&producers, func() { k.produce(load, k.stomp, dialS, q("SOAK.STOMP"), r, 10*time.Second, plain) })
	run(&producers, func() { k.produce(load, k.ow, dialO, q("SOAK.OW"), r, 11*time.Second, plain) })
	run(&producers, func() { k.produce(load, k.amqpQ, dialA, q("SOAK.AMQP"), r, 12*time.Second, plain) })
	run(&producers, func() {
		k.produce(load, k.durable, dialM(""), dest{name: "SOAK/DURABLE", topic: true}, r, 13*time.Second, plain)
	})
	run(&producers, func() {
		k.produce(load, k.sched, dialS, q("SOAK.SCHED"), r/2, 10*time.Second, func(s session, to dest, body []byte) error {
			return s.(*stompSession).sendHeaders(load, to, body, nil, false, "AMQ_SCHEDULED_DELAY:"+strconv.Itoa(rand.IntN(soakScheduleMax)))
		})
	})
	run(&producers, func() {
		k.produce(load, k.exp, dialS, q("SOAK.EXP"), r/2, 10*time.Second, func(s session, to dest, body []byte) error {
			exp := time.Now().Add(300 * time.Millisecond).UnixMilli()
			return s.(*stompSession).sendHeaders(load, to, body, nil, false, "expires:"+strconv.FormatInt(exp, 10))
		})
	})
	run(&producers, func() { k.produce(load, k.poison, dialS, q("SOAK.POISON"), r/10, 10*time.Second, plain) })
	run(&producers, func() {
		k.produceSized(load, k.backlog, dialO, q("SOAK.BACKLOG"), r/2, 10*time.Second, soakBacklogBytes, plain)
	})

	ack := func(sub subscription, d delivery) error { return sub.ack(d) }
	run(&consumers, func() { k.consume(consume, k.stomp, dialS, q("SOAK.STOMP"), 7*time.Second, ack) })
	run(&consumers, func() { k.consume(consume, k.ow, dialO, q("SOAK.OW"), 8*time.Second, ack) })
	run(&consumers, func() { k.consume(consume, k.amqpQ, dialA, q("SOAK.AMQP"), 9*time.Second, ack) })
	run(&consumers, func() { k.consume(consume, k.sched, dialS, q("SOAK.SCHED"), 15*time.Second, ack) })
	// The backlog's consumer leaves for the load's last stretch and
	// comes back when the load drains: the store grows, then must shrink.
	drainStarts := make(chan struct{})
	offline := min(cfg.duration/2, soakBacklogWindow)
	run(&consumers, func() {
		before, cancel := context.WithTimeout(consume, cfg.duration-offline)
		defer cancel()
		k.consume(before, k.backlog, dialO, q("SOAK.BACKLOG"), 9*time.Second, ack)
		smp.mark("backlog")
		select {
		case <-drainStarts:
		case <-consume.Done():
		}
		k.consume(consume, k.backlog, dialO, q("SOAK.BACKLOG"), time.Hour, ack)
	})
	run(&consumers, func() {
		k.consume(consume, nil, dialS, q("SOAK.POISON"), 15*time.Second, func(sub subscription, d delivery) error {
			return sub.(*stompSub).nack(d)
		})
	})
	run(&consumers, func() {
		k.consume(consume, nil, dialO, q("ActiveMQ.DLQ"), 17*time.Second, func(sub subscription, d delivery) error {
			k.dlq.Add(1)
			st, _ := readStamp(d.body)
			switch st.producer {
			case k.exp.id:
				k.dlqExp.receive(st.seq)
			case k.poison.id:
				k.dlqPoison.receive(st.seq)
			default:
				k.fail("DLQ: a message of stream %d", st.producer)
			}
			return sub.ack(d)
		})
	})

	t.Logf("soak: %v at %.0f msg/s per main stream, sampling every %v; output in %s", cfg.duration, r, cfg.interval, cfg.out)
	loadTimer := time.NewTimer(cfg.duration)
	<-loadTimer.C
	smp.mark("drain")
	endLoad()
	producers.Wait()
	k.draining.Store(true)
	close(drainStarts)

	// Drain: every stream complete, or the deadline.
	type pair struct{ sent, got *soakStream }
	pairs := []pair{{k.stomp, k.stomp}, {k.ow, k.ow}, {k.amqpQ, k.amqpQ}, {k.durable, k.durable}, {k.sched, k.sched}, {k.exp, k.dlqExp}, {k.poison, k.dlqPoison}, {k.backlog, k.backlog}}
	complete := func() bool {
		for _, p := range pairs {
			_, u, _ := p.got.counts()
			if u < p.sent.sent.Load() {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(soakDrainTimeout)
	tick := time.NewTicker(200 * time.Millisecond)
	for !complete() && time.Now().Before(deadline) {
		<-tick.C
	}
	tick.Stop()
	endConsume()
	consumers.Wait()
	smp.mark("drained")

	// Settle: clients gone, store back down, goroutines and files back.
	settled := k.waitSettled(smp, base)
	samples := smp.stop()

	var report strings.Builder
	for _, p := range pairs {
		s, _, _ := p.sent.counts()
		_, u, d := p.got.counts()
		fmt.Fprintf(&report, "  %-15s sent %7d  received %7d  duplicates %5d  lost %d\n", p.sent.name, s, u, d, max(0, s-u))
		if u < s {
			t.Errorf("%s: %d sent, %d received after draining %v: %d lost", p.sent.name, s, u, soakDrainTimeout, s-u)
		}
		if u > s {
			t.Errorf("%s: %d received, only %d sent", p.sent.name, u, s)
		}
	}
	fit := fitSoakRSS(samples)
	allowed := max(soakRSSFloor, soakRSSFraction*fit.meanRSS)
	fmt.Fprintf(&report, "  RSS %.1f MiB before the load, %.1f MiB peak, %.1f MiB at the end; second half of the load: slope %.2f MiB/h, growth %.2f MiB (allowed %.1f MiB)\n",
		mib(base.rss), mib(peakOf(samples, func(s soakSample) float64 { return s.rss })), mib(samples[len(samples)-1].rss), fit.slope*3600/(1<<20), fit.growth/(1<<20), allowed/(1<<20))
	fmt.Fprintf(&report, "  store %.2f MiB before the load, %.2f MiB peak, %.2f MiB after draining; goroutines %d -> %d, open files %d -> %d\n",
		mib(base.store), mib(peakOf(samples, func(s soakSample) float64 { return s.store })), mib(settled.store), base.goroutines, settled.goroutines, base.fds, settled.fds)
	k.errMu.Lock()
	fmt.Fprintf(&report, "  client errors %d (reconnected), DLQ deliveries %d\n", k.nErrs, k.dlq.Load())
	errs := k.errs
	k.errMu.Unlock()
	if len(errs) > 0 {
		fmt.Fprintf(&report, "  first errors: %q\n", errs)
	}
	if fit.n >= 3 && fit.growth > allowed {
		t.Errorf("RSS grows without bound: %.1f MiB across the second half of the load (%.1f MiB/h), above %.1f MiB", fit.growth/(1<<20), fit.slope*3600/(1<<20), allowed/(1<<20))
	}
	if settled.store > base.store+soakStoreSlack {
		t.Errorf("store %.2f MiB %v after draining, started at %.2f MiB: did not shrink back to within %d MiB", mib(settled.store), soakSettleTimeout, mib(base.store), soakStoreSlack>>20)
	}
	if settled.goroutines > base.goroutines+soakGoroutineSlak {
		t.Errorf("goroutines %d after every client left, %d before the load", settled.goroutines, base.goroutines)
	}
	if settled.fds > base.fds+soakFDSlack {
		t.Errorf("open files %d after every client left, %d before the load", settled.fds, base.fds)
	}
	csvPath, svgPath := filepath.Join(cfg.out, "soak.csv"), filepath.Join(cfg.out, "soak.svg")
	if err := writeSoakFiles(csvPath, svgPath, samples, fit, cfg, !t.Failed()); err != nil {
		t.Error(err)
	}
	t.Logf("soak of %v:\n%s  samples %s, plot %s", cfg.duration, report.String(), csvPath, svgPath)
	fmt.Printf("soak of %v:\n%s  samples %s, plot %s\n", cfg.duration, report.String(), csvPath, svgPath)
}

// waitSettled waits, up to soakSettleTimeout, until the broker has no
// client connections, its store is back within soakStoreSlack of base
// and its goroutines and files within their slack; it returns the last
// sample either way.
func (k *soak) waitSettled(smp *soakSampler, base soakSample) soakSample {
	deadline := time.Now().Add(soakSettleTimeout)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		s, err := smp.take()
		if err == nil {
			conns := 0.0
			if m, err := k.w.metrics(); err == nil {
				for name, v := range m {
					if strings.HasPrefix(name, "wharf_connections{") {
						conns += v
					}
				}
			}
			if conns == 0 && s.store <= base.store+soakStoreSlack &&
				s.goroutines <= base.goroutines+soakGoroutineSlak && s.fds <= base.fds+soakFDSlack {
				return s
			}
		}
		if time.Now().After(deadline) {
			return s
		}
		<-tick.C
	}
}

// produce sends to to at rate per second over connections that live
// churn each, until ctx ends. Sequence numbers continue across
// connections; a send that failed is sent again on the next connection
// (a duplicate at most, never a gap).
func (k *soak) produce(ctx context.Context, st *soakStream, dial func(context.Context) (session, error), to dest, rate float64, churn time.Duration,
	send func(session, dest, []byte) error) {
	k.produceSized(ctx, st, dial, to, rate, churn, soakBodyBytes, send)
}

// produceSized is produce with bodies of size bytes.
func (k *soak) produceSized(ctx context.Context, st *soakStream, dial func(context.Context) (session, error), to dest, rate float64, churn time.Duration,
	size int, send func(session, dest, []byte) error) {
	body := newBody(size)
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	seq := uint64(0)
	for ctx.Err() == nil {
		s, err := dial(ctx)
		if err != nil {
			if ctx.Err() == nil {
				k.fail("%s producer: %v", st.name, err)
				retryPause(ctx)
			}
			continue
		}
		until := time.Now().Add(churn)
		for ctx.Err() == nil && time.Now().Before(until) {
			select {
			case <-tick.C:
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				break
			}
			putStamp(body, stamp{producer: st.id, seq: seq + 1})
			if err := send(s, to, body); err != nil {
				if ctx.Err() == nil {
					k.fail("%s producer: %v", st.name, err)
				}
				break
			}
			seq++
			st.sent.Store(int64(seq))
		}
		// An orderly close: asynchronous sends are confirmed or fail.
		if err := s.close(); err != nil && ctx.Err() == nil {
			k.fail("%s producer close: %v", st.name, err)
		}
	}
}

// consume receives from from over connections that live churn each,
// until ctx ends, and settles each delivery with settle; st, when set,
// records the sequence numbers.
func (k *soak) consume(ctx context.Context, st *soakStream, dial func(context.Context) (session, error), from dest, churn time.Duration,
	settle func(subscription, delivery) error) {
	name := from.name
	for ctx.Err() == nil {
		s, err := dial(ctx)
		if err != nil {
			if ctx.Err() == nil {
				k.fail("%s consumer: %v", name, err)
				retryPause(ctx)
			}
			continue
		}
		sub, err := s.subscribe(ctx, from, subOptions{ack: AckIndividual, prefetch: 100})
		if err != nil {
			if ctx.Err() == nil {
				k.fail("%s subscribe: %v", name, err)
			}
			s.close()
			retryPause(ctx)
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, churn)
		for {
			d, err := sub.receive(cctx)
			if err != nil {
				if cctx.Err() == nil {
					k.fail("%s consumer: %v", name, err)
				}
				break
			}
			if st != nil {
				if p, err := readStamp(d.body); err == nil && p.producer == st.id {
					st.receive(p.seq)
				} else {
					k.fail("%s: a foreign message (%v)", name, err)
				}
			}
			if err := settle(sub, d); err != nil {
				k.fail("%s settle: %v", name, err)
				break
			}
		}
		cancel()
		s.close()
	}
}

// retryPause waits a little before reconnecting after an error, or
// until ctx ends.
func retryPause(ctx context.Context) {
	t := time.NewTimer(200 * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// soakDurable is the MQTT persistent session: online for a while,
// offline for a while (its messages kept by the broker), back.
type soakDurable struct {
	k    *soak
	dial func(context.Context) (session, error)
	s    session
	sub  subscription
}

func newSoakDurable(k *soak, dial func(context.Context) (session, error)) *soakDurable {
	return &soakDurable{k: k, dial: dial}
}

func (d *soakDurable) connect(ctx context.Context) error {
	s, err := d.dial(ctx)
	if err != nil {
		return err
	}
	sub, err := s.subscribe(ctx, dest{name: "SOAK/DURABLE", topic: true}, subOptions{ack: AckIndividual})
	if err != nil {
		s.close()
		return err
	}
	d.s, d.sub = s, sub
	return nil
}

const (
	soakDurableOnline  = 10 * time.Second
	soakDurableOffline = 8 * time.Second
)

func (d *soakDurable) loop(ctx context.Context) {
	k := d.k
	for ctx.Err() == nil {
		if d.s == nil {
			if err := d.connect(ctx); err != nil {
				if ctx.Err() == nil {
					k.fail("MQTT durable subscriber: %v", err)
					retryPause(ctx)
				}
				continue
			}
		}
		online, cancel := context.WithTimeout(ctx, soakDurableOnline)
		for {
			m, err := d.sub.receive(online)
			if err != nil {
				if online.Err() == nil {
					k.fail("MQTT durable subscriber: %v", err)
				}
				break
			}
			if p, err := readStamp(m.body); err == nil && p.producer == k.durable.id {
				k.durable.receive(p.seq)
			}
			d.sub.ack(m)
		}
		cancel()
		if k.draining.Load() && ctx.Err() == nil {
			continue // stays online until the run ends
		}
		d.s.close()
		d.s, d.sub = nil, nil
		off := time.NewTimer(soakDurableOffline)
		select {
		case <-off.C:
		case <-ctx.Done():
		}
		off.Stop()
	}
	if d.s != nil {
		d.s.close()
	}
}

var errSoakSample = errors.New("soak: cannot sample the broker")
