package engine

import (
	"errors"
	"log/slog"
	"testing"

	"wharf/engine/message"
	"wharf/internal/logtest"
)

// TestDeadLetterDroppedRateLimited: a DLQ that refuses dead letters is
// logged once, then at most once per slowLogEvery with the count of the
// refusals the line stands for.
func TestDeadLetterDroppedRateLimited(t *testing.T) {
	lg, logs := logtest.New(slog.LevelInfo)
	s := &shard{log: lg, now: 1_700_000_000_000}
	dlq := message.QueueDest("ActiveMQ.DLQ")
	refused := errors.New("store full")
	m := &message.Message{ID: "ID:m"}
	for range 1000 {
		s.warnDropped(dlq, m, refused)
		s.now++ // 1000 refusals within one second
	}
	recs := logs.Find("dead letter dropped")
	if len(recs) != 1 {
		t.Fatalf("%d lines for 1000 refusals within a second, want 1", len(recs))
	}
	if r := recs[0]; r.Level != slog.LevelWarn || r.Attrs["dest"] != "queue://ActiveMQ.DLQ" || r.Attrs["dropped_not_logged"] != int64(0) {
		t.Errorf("first line %v %v", r.Level, r.Attrs)
	}
	s.now += slowLogEvery.Milliseconds()
	s.warnDropped(dlq, m, refused)
	recs = logs.Find("dead letter dropped")
	if len(recs) != 2 {
		t.Fatalf("%d lines after the interval, want 2", len(recs))
	}
	if got := recs[1].Attrs["dropped_not_logged"]; got != int64(999) {
		t.Errorf("second line says %v dropped and not logged, want 999", got)
	}
}
