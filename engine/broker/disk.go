package broker

import (
	"log/slog"
	"path/filepath"
	"syscall"
)

// warnUsageLimit logs, at start-up, a store or temp limit larger than the
// disk can hold: producers would then meet a full disk (write errors)
// before flow control holds them back. It is BrokerService.checkUsageLimit's
// check and words ("Store limit is N mb (current store usage is M mb). The
// data directory: D only has K mb of usable space."); name is "Store" or
// "Temporary Store", used the bytes the store holds now, which count as
// usable since they are already on the disk.
//
// DEVIATION: ActiveMQ (adjustUsageLimits, true by default) then lowers the
// limit to the usable space; Wharf keeps the configured limit and warns.
func warnUsageLimit(log *slog.Logger, name, dir string, limit, used int64) {
	if limit <= 0 {
		return
	}
	free, at, ok := usableSpace(dir)
	if !ok || limit <= free+used {
		return
	}
	const mb = 1 << 20
	log.Warn(name+" limit is larger than the usable space of the data directory: producers will meet a full disk before flow control",
		"dir", at, "limit_mb", limit/mb, "usage_mb", used/mb, "usable_mb", (free+used)/mb)
}

// usableSpace is the space an unprivileged process may still write on the
// file system of dir, or of its nearest existing parent (a store not yet
// created), which it returns too.
func usableSpace(dir string) (free int64, at string, ok bool) {
	at, err := filepath.Abs(dir)
	if err != nil {
		return 0, "", false
	}
	for {
		var st syscall.Statfs_t
		if syscall.Statfs(at, &st) == nil {
			return int64(st.Bavail) * int64(st.Bsize), at, true
		}
		parent := filepath.Dir(at)
		if parent == at {
			return 0, "", false
		}
		at = parent
	}
}
