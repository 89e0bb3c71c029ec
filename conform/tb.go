package conform

// TB is what this package's protocol clients (the byte-level STOMP, MQTT,
// AMQP and OpenWire ones, and the Paho helpers) need of the test that
// drives them. *T satisfies it, and so does *testing.T: the tests of
// conformance/ that need Wharf's internals (restarts, stores, counters)
// use the same clients as the cases instead of copies of them.
//
// Given a *T, a client also records what it sends and receives as the
// case's observations and logs in with the target's credentials; given
// anything else it does neither.
type TB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Skipf(format string, args ...any)
	Logf(format string, args ...any)
	Cleanup(func())
}

var _ TB = (*T)(nil)

// observe records an observation when tb is a case's T.
func observe(tb TB, kind, format string, args ...any) {
	if t, ok := tb.(*T); ok {
		t.Observe(kind, format, args...)
	}
}

// credentials are the target's user and password when tb is a case's T,
// none otherwise.
func credentials(tb TB) (user, password string) {
	if t, ok := tb.(*T); ok {
		return t.User(), t.Password()
	}
	return "", ""
}

// stompHost is the host Header of STOMP CONNECT: the target's when tb is
// a case's T, "localhost" otherwise.
func stompHost(tb TB) string {
	if t, ok := tb.(*T); ok {
		return t.STOMPHost()
	}
	return "localhost"
}

// isWharf reports whether tb is a case's T against Wharf, or a test of
// Wharf's own (anything but a T).
func isWharf(tb TB) bool {
	if t, ok := tb.(*T); ok {
		return t.Wharf()
	}
	return true
}
