package kahadb_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
	"wharf/storage/kahadb/journal"
)

// cpuTime is the process's user+system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkKahaDBSyncPath is the synchronous persistent send path of issue
// 18 without sockets: one producer sends a persistent 1 KiB message
// through the engine into KahaDB (disk syncs on) and waits for its
// completion before the next (path=engine); the same message's journal
// record appended with an fsync (path=journal); and a bare 1 KiB
// write+fsync (path=fsync), the floor, in the same run. CPU time per
// message (cpu-us/op, from getrusage: steady on a shared machine, unlike
// ns/op) shows what the engine and the store add to the fsync's own.
func BenchmarkKahaDBSyncPath(b *testing.B) {
	body := make([]byte, 1024)
	b.Run("path=fsync", func(b *testing.B) {
		f, err := os.Create(filepath.Join(b.TempDir(), "fsync"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		b.ReportAllocs()
		c0 := cpuTime(b)
		var off int64
		for b.Loop() {
			if _, err := f.WriteAt(body, off); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			off += int64(len(body))
		}
		b.ReportMetric(float64((cpuTime(b)-c0).Microseconds())/float64(b.N), "cpu-us/op")
	})
	b.Run("path=journal", func(b *testing.B) {
		j, err := journal.Open(journal.DefaultOptions(b.TempDir()))
		if err != nil {
			b.Fatal(err)
		}
		defer j.Close()
		recs := [][]byte{body}
		b.ReportAllocs()
		c0 := cpuTime(b)
		for b.Loop() {
			if _, err := j.Append(recs); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cpuTime(b)-c0).Microseconds())/float64(b.N), "cpu-us/op")
	})
	b.Run("path=engine", func(b *testing.B) {
		st, err := kahadb.Open(context.Background(), kahadb.Options{Dir: b.TempDir(), EnableJournalDiskSyncs: true})
		if err != nil {
			b.Fatal(err)
		}
		e, err := engine.New(engine.Options{Shards: 1, Store: st})
		if err != nil {
			b.Fatal(err)
		}
		defer func() { e.Close(); st.Close() }()
		c, err := e.Connect(engine.Credentials{})
		if err != nil {
			b.Fatal(err)
		}
		q := message.QueueDest("bench")
		var wg sync.WaitGroup
		done := waitAll{&wg}
		base := st.Stats()
		b.ReportAllocs()
		c0 := cpuTime(b)
		for b.Loop() {
			wg.Add(1)
			m := &message.Message{Destination: q, Body: body, BodyType: message.BytesBody, Persistent: true, Priority: 4}
			if err := c.Send(m, "", done, 1); err != nil {
				b.Fatal(err)
			}
			wg.Wait()
		}
		b.ReportMetric(float64((cpuTime(b)-c0).Microseconds())/float64(b.N), "cpu-us/op")
		if s := st.Stats(); s.Syncs > base.Syncs {
			b.ReportMetric(float64(b.N)/float64(s.Syncs-base.Syncs), "msgs/fsync")
		}
	})
}

// BenchmarkKahaDBApplyAdds is the store's own work per persistent send,
// without the disk's: batches of 64 adds of 1 KiB messages that did not
// come over OpenWire (converted and marshalled, as from STOMP, MQTT or
// AMQP), then their 64 removes, applied without an fsync (ApplyNoSync, the
// same encoding and journal write as Apply). One op is one message added
// and removed; allocs/op is what the encoding allocates per message,
// cpu-us/op the process's CPU time per message (steadier than ns/op on a
// shared machine).
func BenchmarkKahaDBApplyAdds(b *testing.B) {
	st, err := kahadb.Open(context.Background(), kahadb.Options{Dir: b.TempDir(), EnableJournalDiskSyncs: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	sh, err := st.OpenShard(0, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer sh.Close()
	ns, ok := sh.(engine.NoSyncApplier)
	if !ok {
		b.Fatal("the KahaDB shard store has no ApplyNoSync")
	}
	const batch = 64
	q := message.QueueDest("bench")
	body := make([]byte, 1024)
	adds := make([]engine.StoreOp, batch)
	removes := make([]engine.StoreOp, batch)
	var seq uint64
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	c0 := cpuTime(b)
	for n := 0; n < b.N; n += batch {
		k := min(batch, b.N-n)
		for i := range k {
			seq++
			m := &message.Message{ID: "ID:bench-1:1:1:" + strconv.FormatUint(seq, 10), Destination: q, Body: body,
				BodyType: message.BytesBody, Persistent: true, Priority: 4}
			adds[i] = engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: seq, Msg: m}
			removes[i] = engine.StoreOp{Kind: engine.OpRemove, Dest: q, Seq: seq}
		}
		if err := ns.ApplyNoSync(adds[:k]); err != nil {
			b.Fatal(err)
		}
		if err := ns.ApplyNoSync(removes[:k]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime(b)-c0).Microseconds())/float64(b.N), "cpu-us/op")
}
