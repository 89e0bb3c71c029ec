package guard

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

var errPanic = errors.New("handler panicked")

// lines records what was logged.
type lines []string

func (l *lines) LogError(msg string, args ...any) {
	*l = append(*l, fmt.Sprint(append([]any{msg}, args...)...))
}

func TestCall(t *testing.T) {
	var log lines
	ran := false
	if err := Call(&log, errPanic, "on_data", func() { ran = true }); err != nil || !ran || len(log) != 0 {
		t.Fatalf("a call that returned: err %v, ran %v, logged %q", err, ran, log)
	}
	err := Call(&log, errPanic, "on_close", func() { panic("boom") })
	if !errors.Is(err, errPanic) || err.Error() != "handler panicked in on_close: boom" {
		t.Fatalf("a call that panicked: err %v", err)
	}
	if len(log) != 1 || !strings.Contains(log[0], "handler panic, connection closed") || !strings.Contains(log[0], "guard_test.go") {
		t.Fatalf("a panic is logged once with its stack; logged %q", log)
	}
}

type handler interface{ OnData([]byte) error }

type session struct{}

func (*session) OnData([]byte) error { return nil }

func TestFactory(t *testing.T) {
	cases := []struct {
		name  string
		build func() handler
		ok    bool
		log   string
	}{
		{"session", func() handler { return &session{} }, true, ""},
		{"nil", func() handler { return nil }, false, "handler factory returned nil, connection refused"},
		{"panic", func() handler { panic("no") }, false, "handler panicked in handler_factory: no"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var log lines
			h, ok := Factory(&log, errPanic, tc.build)
			if ok != tc.ok || (h != nil) != tc.ok {
				t.Fatalf("Factory: %v, %v; want ok %v", h, ok, tc.ok)
			}
			if tc.log == "" && len(log) != 0 || tc.log != "" && (len(log) != 1 || !strings.Contains(log[0], tc.log)) {
				t.Fatalf("logged %q, want one line with %q", log, tc.log)
			}
		})
	}
}
