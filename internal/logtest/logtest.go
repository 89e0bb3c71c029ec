// Package logtest captures what code logs through log/slog, so that a test
// can assert the lines an operator greps for: their message, level and
// attributes. Imported only from _test.go files.
package logtest

import (
	"context"
	"log/slog"
	"strings"
	"sync"
)

// Record is one captured log line: its message, level and attributes,
// groups flattened into dotted keys.
type Record struct {
	Msg   string
	Level slog.Level
	// Attrs are the attribute values resolved (slog.Value.Any): every
	// signed integer is an int64, every duration a time.Duration.
	Attrs map[string]any
}

// Log is the lines a Logger made by New has written. Safe from any
// goroutine.
type Log struct {
	mu   sync.Mutex
	recs []Record
}

// New returns a logger that keeps every line at level or above, and what
// it kept.
func New(level slog.Level) (*slog.Logger, *Log) {
	l := &Log{}
	return slog.New(&handler{log: l, level: level}), l
}

// All returns the lines kept so far, oldest first.
func (l *Log) All() []Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Record(nil), l.recs...)
}

// Find returns the lines whose message contains msg.
func (l *Log) Find(msg string) []Record {
	var out []Record
	for _, r := range l.All() {
		if strings.Contains(r.Msg, msg) {
			out = append(out, r)
		}
	}
	return out
}

// Messages returns the messages of the lines kept so far, oldest first.
func (l *Log) Messages() []string {
	var out []string
	for _, r := range l.All() {
		out = append(out, r.Msg)
	}
	return out
}

func (l *Log) add(r Record) {
	l.mu.Lock()
	l.recs = append(l.recs, r)
	l.mu.Unlock()
}

type handler struct {
	log    *Log
	level  slog.Level
	attrs  []slog.Attr // from WithAttrs, keys already prefixed
	prefix string      // from WithGroup: "group."
}

func (h *handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *handler) Handle(_ context.Context, r slog.Record) error {
	rec := Record{Msg: r.Message, Level: r.Level, Attrs: map[string]any{}}
	for _, a := range h.attrs {
		put(rec.Attrs, "", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		put(rec.Attrs, h.prefix, a)
		return true
	})
	h.log.add(rec)
	return nil
}

func put(m map[string]any, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		for _, g := range v.Group() {
			put(m, prefix+a.Key+".", g)
		}
		return
	}
	m[prefix+a.Key] = v.Any()
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr(nil), h.attrs...)
	for _, a := range as {
		c.attrs = append(c.attrs, slog.Attr{Key: h.prefix + a.Key, Value: a.Value})
	}
	return &c
}

func (h *handler) WithGroup(name string) slog.Handler {
	c := *h
	c.prefix = h.prefix + name + "."
	return &c
}
