package broker

import (
	"log/slog"
	"path/filepath"
	"testing"

	"wharf/internal/logtest"
)

// TestBrokerWarnUsageLimit: a store limit larger than the disk's usable
// space is logged in BrokerService.checkUsageLimit's words, on the nearest
// existing directory of a store not yet created; one that fits is not.
func TestBrokerWarnUsageLimit(t *testing.T) {
	dir := t.TempDir()
	free, _, ok := usableSpace(dir)
	if !ok || free <= 0 {
		t.Fatalf("usableSpace(%s) = %d, %v", dir, free, ok)
	}
	lg, logs := logtest.New(slog.LevelInfo)
	notYet := filepath.Join(dir, "not", "created")
	warnUsageLimit(lg, "Store", notYet, free+1<<40, 1<<20)
	warnUsageLimit(lg, "Temporary Store", dir, 1<<20, 0) // fits
	warnUsageLimit(lg, "Temporary Store", dir, 0, 0)     // unlimited
	recs := logs.All()
	if len(recs) != 1 {
		t.Fatalf("%d lines %q, want one for the store", len(recs), logs.Messages())
	}
	r := recs[0]
	if r.Level != slog.LevelWarn || len(logs.Find("Store limit is")) != 1 || r.Attrs["dir"] != dir ||
		r.Attrs["limit_mb"] != (free+1<<40)>>20 || r.Attrs["usage_mb"] != int64(1) || r.Attrs["usable_mb"].(int64) <= 0 {
		t.Errorf("usage limit warning %v %q %v; want Warn, \"Store limit is\", dir %s", r.Level, r.Msg, r.Attrs, dir)
	}
}
