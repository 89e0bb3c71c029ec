package journal

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	activeMQLib  = "/usr/share/activemq/lib"
	activeMQHint = "apt-get install -y default-jdk-headless activemq (Debian's ActiveMQ 5.17 and a JDK for the single-file source launcher)"
)

// runKahaGen runs testdata/KahaGen.java against an embedded ActiveMQ 5.17
// with its KahaDB store in kaha and returns its standard output.
func runKahaGen(t *testing.T, mode, kaha string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", "-cp", activeMQLib+"/*", "testdata/KahaGen.java", mode, kaha, t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("KahaGen %s: %v\nstdout:\n%s\nstderr:\n%s", mode, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// TestKahaDBJournalActiveMQCompat checks the journal against a real ActiveMQ
// 5.17: Wharf replays a journal ActiveMQ wrote; re-appending ActiveMQ's
// batches reproduces its db-1.log byte for byte (preallocation included);
// and ActiveMQ recovers a journal Wharf wrote with its own batching (no
// db.data), appending after Wharf's last batch.
func TestKahaDBJournalActiveMQCompat(t *testing.T) {
	if testing.Short() {
		t.Skip("starts ActiveMQ three times")
	}
	if _, err := exec.LookPath("javac"); err != nil {
		t.Skip("no JDK: " + activeMQHint)
	}
	if _, err := os.Stat(filepath.Join(activeMQLib, "activemq-kahadb-store.jar")); err != nil {
		t.Skip("no ActiveMQ: " + activeMQHint)
	}
	amqDir := filepath.Join(t.TempDir(), "kahadb")
	runKahaGen(t, "write", amqDir)

	// 1. Wharf reads ActiveMQ's journal.
	lb := &logBuffer{}
	o := DefaultOptions(amqDir)
	o.Logger = lb.logger()
	j := mustOpen(t, o)
	if got := j.Files(); !slices.Equal(got, []int{1}) {
		t.Fatalf("ActiveMQ journal files %v, want [1]", got)
	}
	recs := replayAll(t, j, Location{})
	types := map[byte]int{}
	for _, r := range recs {
		// payload = KahaEntryType byte, varint length, protobuf message
		// (kahadb.md §3).
		if len(r.payload) < 2 || r.payload[0] > 16 {
			t.Fatalf("record at %v: type %d, want a KahaEntryType 0-16", r.loc, r.payload[0])
		}
		n, w := binary.Uvarint(r.payload[1:])
		if w <= 0 || 1+w+int(n) != len(r.payload) {
			t.Fatalf("record at %v: framed length %d (%d bytes) in a %d-byte payload", r.loc, n, w, len(r.payload))
		}
		types[r.payload[0]]++
		if p, err := j.Read(r.loc); err != nil || !bytes.Equal(p, r.payload) {
			t.Fatalf("Read(%v) = %x, %v", r.loc, p, err)
		}
	}
	// 12 adds, 2 acks, 1 commit, at least one trace; the rest is ActiveMQ's
	// own bookkeeping (producer audit, ack file map).
	if types[0] < 1 || types[1] != 12 || types[2] != 2 || types[4] != 1 {
		t.Fatalf("record types %v: want trace(0) >= 1, add(1) = 12, remove(2) = 2, commit(4) = 1", types)
	}
	if s := lb.String(); strings.Contains(s, "dropped") || strings.Contains(s, "skipped") {
		t.Fatalf("ActiveMQ's journal reported as damaged:\n%s", s)
	}
	t.Logf("ActiveMQ journal: %d records, types %v, append position %v", len(recs), types, j.Head())
	mustClose(t, j)

	// 2. The same batches appended by Wharf, with ActiveMQ's defaults, give
	// the same file.
	amqData, err := os.ReadFile(filepath.Join(amqDir, fileName(1)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(amqDir, fileName(1)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var batches [][][]byte
	sc := newScanner(f, int64(len(amqData)))
	for {
		b, ok := sc.next()
		if !ok {
			break
		}
		var rs [][]byte
		eachRecord(b.body, func(_ int64, _ int32, p []byte) error {
			rs = append(rs, bytes.Clone(p))
			return nil
		})
		batches = append(batches, rs)
	}
	copyDir := t.TempDir()
	w := mustOpen(t, DefaultOptions(copyDir))
	for _, b := range batches {
		mustAppend(t, w, b...)
	}
	mustClose(t, w)
	wharfData, err := os.ReadFile(filepath.Join(copyDir, fileName(1)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(wharfData, amqData) {
		i := 0
		for i < min(len(wharfData), len(amqData)) && wharfData[i] == amqData[i] {
			i++
		}
		t.Fatalf("Wharf's db-1.log (%d bytes) differs from ActiveMQ's (%d bytes) from offset %d", len(wharfData), len(amqData), i)
	}
	t.Logf("%d batches re-appended: db-1.log identical to ActiveMQ's (%d bytes)", len(batches), len(amqData))

	// 3. ActiveMQ recovers a journal Wharf wrote with other batching (one
	// record per batch, then pairs), not preallocated, with no db.data.
	wharfDir := filepath.Join(t.TempDir(), "kahadb")
	wo := DefaultOptions(wharfDir)
	wo.Preallocate = false
	w = mustOpen(t, wo)
	var mine []rec
	for i := 0; i < len(recs); {
		k := 1 + i%2
		k = min(k, len(recs)-i)
		var b [][]byte
		for _, r := range recs[i : i+k] {
			b = append(b, r.payload)
		}
		locs := mustAppend(t, w, b...)
		for n, l := range locs {
			mine = append(mine, rec{l, b[n]})
		}
		i += k
	}
	mustClose(t, w)
	out := runKahaGen(t, "count", wharfDir)
	var bodies []string
	for _, line := range strings.Split(out, "\n") {
		if b, ok := strings.CutPrefix(line, "BODY "); ok {
			bodies = append(bodies, b)
		}
	}
	want := []string{"message 2", "message 3", "message 4", "message 5", "message 6", "message 7", "message 8", "message 9", "tx 0", "tx 1"}
	if !slices.Equal(bodies, want) || !strings.Contains(out, "COUNT 10") {
		t.Fatalf("ActiveMQ recovered from Wharf's journal:\n%s\nwant bodies %q", out, want)
	}
	// ActiveMQ appended its own records after Wharf's last batch, and ours
	// are intact.
	o.Dir = wharfDir
	j = mustOpen(t, o)
	defer mustClose(t, j)
	after := replayAll(t, j, Location{})
	if len(after) <= len(mine) {
		t.Fatalf("ActiveMQ appended nothing: %d records, Wharf wrote %d", len(after), len(mine))
	}
	checkRecords(t, after[:len(mine)], mine)
	t.Logf("ActiveMQ recovered Wharf's journal (%d records) and appended %d records at %v", len(mine), len(after)-len(mine), after[len(mine)].loc)
}
