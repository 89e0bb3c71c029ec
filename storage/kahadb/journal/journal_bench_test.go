package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkKahaDBJournalAppend appends 1 KiB records in batches of 1 and 64,
// with and without fsync per batch, ActiveMQ's defaults otherwise (32 MiB
// preallocated files, checksums). One op is one record.
func BenchmarkKahaDBJournalAppend(b *testing.B) {
	const size = 1 << 10
	for _, sync := range []bool{false, true} {
		for _, batch := range []int{1, 64} {
			b.Run(fmt.Sprintf("size=1KiB/batch=%d/sync=%v", batch, sync), func(b *testing.B) {
				o := DefaultOptions(b.TempDir())
				o.Sync = sync
				j, err := Open(o)
				if err != nil {
					b.Fatal(err)
				}
				defer j.Close()
				recs := make([][]byte, batch)
				for i := range recs {
					recs[i] = payload(i, size)
				}
				base := j.Stats()
				b.SetBytes(size)
				b.ReportAllocs()
				b.ResetTimer()
				for n := 0; n < b.N; n += batch {
					if _, err := j.Append(recs[:min(batch, b.N-n)]); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				s := j.Stats()
				if syncs := s.Syncs - base.Syncs; syncs > 0 {
					b.ReportMetric(float64(s.Records-base.Records)/float64(syncs), "records/fsync")
				}
			})
		}
	}
}

// BenchmarkKahaDBJournalDiskFsync measures the disk under the benchmark: one
// 1 KiB write and one fsync per op, the floor of Append with Sync.
func BenchmarkKahaDBJournalDiskFsync(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "fsync"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<10)
	b.ReportAllocs()
	var off int64
	for b.Loop() {
		if _, err := f.WriteAt(buf, off); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		off += int64(len(buf))
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "fsyncs/s")
}
