package transport

import (
	"context"
	"fmt"
	"log/slog"
)

// gnetLogger adapts slog to gnet's logging.Logger so gnet's own messages go
// to the broker's log instead of gnet's default zap logger on stdout.
//
// gnet keeps one process-wide default logger and each engine start replaces
// it with the logger passed in options, so gnet messages that are not tied to
// an engine may appear under whichever listener started last. Only the
// component attribute is therefore added, never a listener address.
type gnetLogger struct{ l *slog.Logger }

func (g gnetLogger) log(level slog.Level, format string, args []any) {
	if !g.l.Enabled(context.Background(), level) {
		return
	}
	// gnet's text goes in "detail": a "msg" attribute would be a second
	// msg key in JSON logs, next to slog's own.
	g.l.Log(context.Background(), level, "gnet", "detail", fmt.Sprintf(format, args...))
}

// Debugf logs at debug level.
func (g gnetLogger) Debugf(format string, args ...any) { g.log(slog.LevelDebug, format, args) }

// Infof logs at debug level: gnet's informational lines (event-loop start)
// duplicate our own lifecycle logs.
func (g gnetLogger) Infof(format string, args ...any) { g.log(slog.LevelDebug, format, args) }

// Warnf logs at warn level.
func (g gnetLogger) Warnf(format string, args ...any) { g.log(slog.LevelWarn, format, args) }

// Errorf logs at error level.
func (g gnetLogger) Errorf(format string, args ...any) { g.log(slog.LevelError, format, args) }

// Fatalf logs at error level. It does not exit: a library must not end the
// process (gnet calls it only for kqueue wake-up pipe failures).
func (g gnetLogger) Fatalf(format string, args ...any) { g.log(slog.LevelError, format, args) }
