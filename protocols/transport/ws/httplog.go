package ws

import (
	"context"
	"log"
	"log/slog"
	"strings"
	"time"

	"wharf/protocols/internal/logthrottle"
)

// httpErrorLog is what http.Server's ErrorLog writes to: each line becomes
// one slog record with a constant message (STYLE §7), the net/http text
// in err, at most 20 lines per 10 s per listener, each counting those it
// held back. net/http logs a line per bad client (a malformed request, a
// panic in a handler, an Accept error and its retry), so a flood must not
// turn into a flood of log lines. TLS handshake failures never reach it on
// a Listen port: wssListener completes the handshakes and logs them.
type httpErrorLog struct {
	log   *slog.Logger
	now   func() time.Time
	burst logthrottle.Burst
}

func newHTTPErrorLog(logger *slog.Logger, now func() time.Time) *log.Logger {
	w := &httpErrorLog{log: logger, now: now, burst: logthrottle.Burst{Every: 10 * time.Second, Max: 20}}
	return log.New(w, "", 0)
}

// Write implements io.Writer; log.Logger calls it once per line. Safe
// from any goroutine.
func (w *httpErrorLog) Write(p []byte) (int, error) {
	ok, suppressed := w.burst.Allow(w.now())
	if !ok {
		return len(p), nil
	}
	text := strings.TrimSpace(string(p))
	level := slog.LevelWarn
	if strings.Contains(text, "panic serving") {
		// A bug of ours in a handler, with its stack.
		level = slog.LevelError
	}
	w.log.Log(context.Background(), level, "http server error", "component", "http", "err", text, "suppressed", suppressed)
	return len(p), nil
}
