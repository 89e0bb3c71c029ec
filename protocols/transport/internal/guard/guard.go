// Package guard runs a session's code for a connection so that a panic in
// it cuts that connection only, as transport.Handler promises: the panic is
// recovered, logged once with the connection's identity and the stack, and
// returned as an error wrapping transport.ErrHandlerPanic, which the
// connection is then closed with. Both connection types call sessions
// through it: the gnet one of package transport and streamconn's (TLS,
// WebSocket). It cannot import package transport (transport imports it),
// so the sentinel comes in as an argument.
package guard

import (
	"fmt"
	"runtime/debug"
)

// Logger writes an error line that names the connection.
type Logger interface {
	LogError(msg string, args ...any)
}

// Call runs fn and returns nil, or, when fn panics, an error wrapping
// sentinel that names where ("on_data", "on_close", "write_notify") and
// the panic value, logged with the stack.
func Call(l Logger, sentinel error, where string, fn func()) (perr error) {
	defer func() {
		if r := recover(); r != nil {
			perr = panicked(l, sentinel, where, r)
		}
	}()
	fn()
	return nil
}

// Factory runs a HandlerFactory: ok is false, and the connection is
// refused, when it panics or returns nil (both logged).
func Factory[H comparable](l Logger, sentinel error, build func() H) (h H, ok bool) {
	var none H
	defer func() {
		if r := recover(); r != nil {
			_ = panicked(l, sentinel, "handler_factory", r)
			h, ok = none, false
		}
	}()
	h = build()
	if h == none {
		l.LogError("handler factory returned nil, connection refused")
		return none, false
	}
	return h, true
}

// panicked logs a recovered panic and returns the error the connection is
// cut with (STYLE §6).
func panicked(l Logger, sentinel error, where string, r any) error {
	err := fmt.Errorf("%w in %s: %v", sentinel, where, r)
	l.LogError("handler panic, connection closed", "where", where, "err", err, "stack", string(debug.Stack()))
	return err
}
