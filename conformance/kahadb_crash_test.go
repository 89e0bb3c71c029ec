package conformance

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
	"wharf/storage/kahadb/command"
)

// The crash test of issue 4 ("How it is checked") and the end-to-end
// torn-tail test: a real wharf process on a KahaDB directory with disk
// syncs on, killed with SIGKILL, restarted on the same directory.

// crashCycles is how many times TestConformanceKahaDBCrash kills wharf.
const crashCycles = 8

// crashProducers send concurrently, so that batches hold several records
// (group commit) and a kill can catch more than one send in flight.
const crashProducers = 3

const crashQueue = "kdb.crash"

// crashLedger records, per message key, what the producers know: acked
// (the broker answered the synchronous send) or in flight (sent, no answer
// before the kill).
type crashLedger struct {
	mu       sync.Mutex
	acked    map[string]bool
	inflight map[string]bool
	count    int       // acks in the current cycle
	reached  chan bool // closed when count reaches target
	target   int
}

func (l *crashLedger) start(key string) {
	l.mu.Lock()
	l.inflight[key] = true
	l.mu.Unlock()
}

func (l *crashLedger) ack(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.inflight, key)
	l.acked[key] = true
	l.count++
	if l.count == l.target {
		close(l.reached)
	}
}

// crashProduce sends persistent messages synchronously until a send fails
// (the broker was killed) and records each one in the ledger.
func crashProduce(ctx context.Context, addr string, cycle, id int, l *crashLedger) error {
	o := client.DefaultOptions()
	o.CloseTimeout = time.Second
	c, err := client.Dial(ctx, addr, o)
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := c.Session(false)
	if err != nil {
		return err
	}
	p, err := s.Producer(wire.NewQueue(crashQueue))
	if err != nil {
		return err
	}
	for n := 0; ; n++ {
		key := fmt.Sprintf("c%d-p%d-%d", cycle, id, n)
		m := client.NewTextMessage("crash " + key)
		if err := m.SetProperties(map[string]any{"key": key}); err != nil {
			return err
		}
		l.start(key)
		sctx, cancel := context.WithTimeout(ctx, kdbWait)
		err := p.Send(sctx, m, true)
		cancel()
		if err != nil {
			return nil // the broker went away: key stays in flight
		}
		l.ack(key)
	}
}

// runCrash is the crash test on the store of the wharf processes start
// runs (each on the same directory); seedEnv names the variable that
// replays a run's kill schedule.
func runCrash(t *testing.T, seedEnv string, startWharf func() *wharfProc) {
	rng := seededRand(t, seedEnv)
	l := &crashLedger{acked: map[string]bool{}, inflight: map[string]bool{}}
	start := time.Now()
	inflightAtKill := 0 // messages in flight at the kills so far
	for cycle := range crashCycles {
		w := startWharf()
		l.mu.Lock()
		target := 10 + rng.IntN(150)
		l.count, l.target, l.reached = 0, target, make(chan bool)
		reached := l.reached
		l.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		errs := make(chan error, crashProducers)
		for id := range crashProducers {
			go func() { errs <- crashProduce(ctx, w.openwire, cycle, id, l) }()
		}
		select {
		case <-reached:
		case err := <-errs:
			cancel()
			t.Fatalf("cycle %d: producer failed before the kill: %v", cycle, err)
		case <-ctx.Done():
			t.Fatalf("cycle %d: %d acknowledged sends not reached in time", cycle, target)
		}
		w.kill()
		// A producer still connecting when the kill lands (a small target
		// is reached before all three are up) fails with a reset: expected.
		// A failure before the kill was caught by the select above.
		for range crashProducers {
			if err := <-errs; err != nil {
				t.Logf("cycle %d: producer interrupted while connecting: %v", cycle, err)
			}
		}
		cancel()
		l.mu.Lock()
		t.Logf("cycle %d: killed after %d acknowledged sends, %d in flight", cycle, l.count, len(l.inflight)-inflightAtKill)
		inflightAtKill = len(l.inflight)
		l.mu.Unlock()
	}

	w := startWharf()
	c := dialOW(t, w.openwire, "")
	s := must(c.Session(false))(t)
	k := must(s.Consumer(wire.NewQueue(crashQueue), client.ConsumerOptions{}))(t)
	owSend(t, must(s.Producer(wire.NewQueue(crashQueue)))(t), markerMessage("end"))
	got := map[string]int{}
	var redelivered int
	for {
		m := receiveN(t, k, "drain", 1)[0]
		key := propKey(m)
		if key == "end" {
			break
		}
		got[key]++
		if m.RedeliveryCounter > 0 {
			redelivered++
		}
	}
	w.stop()

	var lost, dup, unknown []string
	inflightDelivered := 0
	for key := range l.acked {
		switch got[key] {
		case 0:
			lost = append(lost, key)
		case 1:
		default:
			dup = append(dup, fmt.Sprintf("%s×%d", key, got[key]))
		}
	}
	for key, n := range got {
		switch {
		case l.acked[key]:
		case l.inflight[key] && n == 1:
			inflightDelivered++
		case l.inflight[key]:
			dup = append(dup, fmt.Sprintf("%s×%d (in flight)", key, n))
		default:
			unknown = append(unknown, key)
		}
	}
	slices.Sort(lost)
	slices.Sort(dup)
	slices.Sort(unknown)
	t.Logf("%d kills in %v: %d sends acknowledged, all delivered: %v; %d in flight at a kill, %d of them delivered (once); %d redelivered-flagged",
		crashCycles, time.Since(start).Round(time.Millisecond), len(l.acked), len(lost) == 0, inflightAtKill, inflightDelivered, redelivered)
	if len(lost) > 0 {
		t.Errorf("%d acknowledged messages lost: %v", len(lost), head(lost, 20))
	}
	if len(dup) > 0 {
		t.Errorf("%d messages delivered more than once: %v", len(dup), head(dup, 20))
	}
	if len(unknown) > 0 {
		t.Errorf("%d messages delivered that were never sent: %v", len(unknown), head(unknown, 20))
	}
}

func head(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "...")
	}
	return s
}

// --- torn tail ------------------------------------------------------------

// journalBatch is one batch of a journal file: the offset of its control
// record, the offset after its last record, and its records' payloads.
type journalBatch struct {
	off, end int64
	records  [][]byte
}

// readBatches walks a journal data file batch by batch, independently of
// storage/kahadb/journal (reference kahadb.md §2): a control record (28
// bytes: size, type 2, "WRITE BATCH", batchLen, checksum), then batchLen
// bytes of user records (int32 size, type 1, payload); the file ends at
// the EOF marker "-qMa4" or at zeros.
func readBatches(t *testing.T, path string) []journalBatch {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []journalBatch
	off := int64(0)
	for off+28 <= int64(len(b)) {
		if string(b[off:off+5]) == "-qMa4" || b[off+4] == 0 {
			break
		}
		if b[off+4] != 2 || string(b[off+5:off+16]) != "WRITE BATCH" {
			t.Fatalf("%s at %d: not a batch control record: % x", path, off, b[off:off+16])
		}
		n := int64(binary.BigEndian.Uint32(b[off+16:]))
		jb := journalBatch{off: off, end: off + 28 + n}
		if jb.end > int64(len(b)) {
			t.Fatalf("%s at %d: batch of %d bytes past the end of the file", path, off, n)
		}
		for r := off + 28; r < jb.end; {
			size := int64(binary.BigEndian.Uint32(b[r:]))
			if b[r+4] != 1 || size < 5 || r+size > jb.end {
				t.Fatalf("%s at %d: bad user record (size %d, type %d)", path, r, size, b[r+4])
			}
			jb.records = append(jb.records, b[r+5:r+size])
			r += size
		}
		out = append(out, jb)
		off = jb.end
	}
	return out
}

// addedKeys returns the "key" properties of the messages a batch adds.
func addedKeys(t *testing.T, jb journalBatch) []string {
	t.Helper()
	var keys []string
	for _, r := range jb.records {
		c, err := command.Decode(r)
		if err != nil {
			t.Fatalf("journal record: %v", err)
		}
		add, ok := c.(*command.AddMessage)
		if !ok {
			continue
		}
		ds, err := wire.Unmarshal(add.Message, wire.StoreFormat(), wire.DefaultLimits())
		if err != nil {
			t.Fatalf("stored message %s: %v", add.MessageID, err)
		}
		keys = append(keys, propKey(ds.(*wire.Message)))
	}
	return keys
}

// lastJournalFile is the path of the highest-numbered db-N.log in dir.
func lastJournalFile(t *testing.T, dir string) string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "db-*.log"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no journal file in %s (%v)", dir, err)
	}
	id := func(p string) int {
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "db-"), ".log"))
		return n
	}
	return slices.MaxFunc(paths, func(a, b string) int { return id(a) - id(b) })
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// TestConformanceKahaDBTornTail: after a clean stop the last batch of the
// journal is damaged (cut inside its control record, in its middle, one
// byte short, or one byte flipped); wharf restarts on the directory, keeps
// every message of the earlier batches, drops the damaged batch's, says so
// in its log, and goes on working: new messages are stored and survive
// another restart.
func TestConformanceKahaDBTornTail(t *testing.T) {
	pristine := filepath.Join(t.TempDir(), "kahadb")
	w := startWharf(t, pristine)
	c := dialOW(t, w.openwire, "")
	s := must(c.Session(false))(t)
	q := wire.NewQueue("kdb.torn")
	p := must(s.Producer(q))(t)
	var sent []*wire.Message
	for i := range 5 {
		m := richMessage(fmt.Sprintf("a%d", i), i)
		owSend(t, p, m)
		sent = append(sent, m)
	}
	// The last batch: a transaction's three messages, committed together.
	ts := must(c.Session(true))(t)
	tp := must(ts.Producer(q))(t)
	for i := range 3 {
		m := richMessage(fmt.Sprintf("b%d", i), i)
		owSend(t, tp, m)
		sent = append(sent, m)
	}
	if err := ts.Commit(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	w.stop()

	file := lastJournalFile(t, pristine)
	batches := readBatches(t, file)
	if len(batches) == 0 {
		t.Fatalf("%s holds no batch", file)
	}
	last := batches[len(batches)-1]
	torn := addedKeys(t, last)
	if len(torn) == 0 {
		t.Fatalf("the last batch of %s (offset %d) adds no message; batches: %d", file, last.off, len(batches))
	}
	var want []*wire.Message
	for _, m := range sent {
		if !slices.Contains(torn, propKey(m)) {
			want = append(want, m)
		}
	}
	t.Logf("last batch of %s: offset %d, %d bytes, adds %v", filepath.Base(file), last.off, last.end-last.off, torn)

	type damage struct {
		name string
		do   func(path string) error
	}
	cut := func(at int64) func(string) error {
		return func(path string) error { return os.Truncate(path, at) }
	}
	for _, d := range []damage{
		{"cut in the control record", cut(last.off + 10)},
		{"cut in the middle", cut(last.off + (last.end-last.off)/2)},
		{"last byte missing", cut(last.end - 1)},
		{"flipped byte", func(path string) error {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			at := last.off + 28 + (last.end-last.off-28)/2
			var b [1]byte
			if _, err := f.ReadAt(b[:], at); err != nil {
				return err
			}
			b[0] ^= 0x40
			_, err = f.WriteAt(b[:], at)
			return err
		}},
	} {
		t.Run(d.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "kahadb")
			copyDir(t, pristine, dir)
			if err := d.do(filepath.Join(dir, filepath.Base(file))); err != nil {
				t.Fatal(err)
			}
			w := startWharf(t, dir)
			dropped := w.logged("journal tail dropped")
			if len(dropped) == 0 {
				t.Errorf("wharf did not log the dropped tail; log:\n%s", w.log.tail(30))
			} else if off, _ := dropped[0]["offset"].(float64); int64(off) != last.off {
				t.Errorf("wharf dropped the tail at offset %v, want %d (the damaged batch): %v", dropped[0]["offset"], last.off, dropped[0])
			} else {
				t.Logf("wharf: journal tail dropped: file=%v offset=%v bytes=%v reason=%q",
					dropped[0]["file"], dropped[0]["offset"], dropped[0]["bytes"], dropped[0]["reason"])
			}
			c := dialOW(t, w.openwire, "")
			s := must(c.Session(false))(t)
			k := must(s.Consumer(q, client.ConsumerOptions{AckMode: client.AckIndividual}))(t)
			got := receiveN(t, k, "recovered", len(want))
			checkMessages(t, "after the torn tail", got, want)
			// Still working: a new message is stored, goes after the
			// recovered ones, and is there after another restart.
			p := must(s.Producer(q))(t)
			owSend(t, p, markerMessage("after"))
			if m := receiveN(t, k, "new message", 1)[0]; propKey(m) != "after" {
				t.Fatalf("after the recovered messages got %q, want the new one", propKey(m))
			}
			for _, m := range got {
				if err := k.Ack(m); err != nil {
					t.Fatal(err)
				}
			}
			owSend(t, must(s.Producer(wire.NewQueue("kdb.torn.barrier")))(t), markerMessage("barrier"))
			c.Close()
			w.stop()

			w = startWharf(t, dir)
			if recs := w.logged("journal tail dropped"); len(recs) > 0 {
				t.Errorf("second restart dropped a tail again: %v", recs[0])
			}
			c = dialOW(t, w.openwire, "")
			s = must(c.Session(false))(t)
			k = must(s.Consumer(q, client.ConsumerOptions{}))(t)
			if m := receiveN(t, k, "after restart", 1)[0]; propKey(m) != "after" {
				t.Errorf("after the second restart got %q first, want the unacknowledged new message", propKey(m))
			}
			expectMarkerNext(t, must(s.Producer(q))(t), k, "second restart")
			w.stop()
		})
	}
	if len(want)+len(torn) != len(sent) {
		t.Errorf("torn batch keys %v are not all sent messages", torn)
	}
}

// seededRand is the random source of a kill test: seeded from the clock,
// or from the environment variable env to replay a failing run; the seed
// is logged either way.
func seededRand(t *testing.T, env string) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(env); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", env, s, err)
		}
	}
	t.Logf("seed %d (%s to repeat)", seed, env)
	return rand.New(rand.NewPCG(seed, seed))
}
