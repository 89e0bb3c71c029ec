package http

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// JournalMetrics are the KahaDB journal's histograms on /metrics: how long
// each fsync of a data file takes and how big each batch is. Its Batch and
// Synced methods are the store's journal observer
// (storage/kahadb/journal.Observer, handed to the store by the wiring);
// they are called on the shards' goroutines, once per batch and per
// fsync, and cost an atomic histogram update each.
type JournalMetrics struct {
	fsync, records, bytes prometheus.Histogram
}

// NewJournalMetrics makes the histograms, empty.
func NewJournalMetrics() *JournalMetrics {
	return &JournalMetrics{
		fsync: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "wharf_journal_fsync_duration_seconds",
			Help: "Time each fsync of a KahaDB journal data file took.",
			// 50 us (a fast NVMe) to 3.3 s (a disk in trouble).
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 17),
		}),
		records: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "wharf_journal_batch_records",
			Help:    "Records in each batch written to the KahaDB journal.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 13), // 1 to 4096
		}),
		bytes: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "wharf_journal_batch_bytes",
			Help:    "Bytes of each batch written to the KahaDB journal.",
			Buckets: prometheus.ExponentialBuckets(256, 4, 10), // 256 B to 64 MiB
		}),
	}
}

// Batch records a batch written (journal.Observer).
func (m *JournalMetrics) Batch(records, bytes int) {
	m.records.Observe(float64(records))
	m.bytes.Observe(float64(bytes))
}

// Synced records an fsync (journal.Observer).
func (m *JournalMetrics) Synced(d time.Duration) { m.fsync.Observe(d.Seconds()) }

// Describe is prometheus.Collector's.
func (m *JournalMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.fsync.Describe(ch)
	m.records.Describe(ch)
	m.bytes.Describe(ch)
}

// Collect is prometheus.Collector's.
func (m *JournalMetrics) Collect(ch chan<- prometheus.Metric) {
	m.fsync.Collect(ch)
	m.records.Collect(ch)
	m.bytes.Collect(ch)
}
