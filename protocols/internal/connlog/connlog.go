// Package connlog is a connection's logger: every line it writes carries
// the connection's id, its peer's address and its protocol, as
// base.With("conn", id, "remote", addr, "proto", proto) would add them,
// but nothing is formatted until a line is written.
//
// slog's own With formats its attributes at once into a buffer the new
// handler keeps (for the text and JSON handlers, a few hundred bytes), and a
// broker keeps one such logger per connection for as long as the
// connection lives, idle or not. Most connections never log a line above
// Debug; an idle connection's memory is issue 18's budget (a few KiB), so
// the attributes wait here, as what they are (an integer, the address the
// transport already holds, a constant), until a line needs them.
package connlog

import (
	"context"
	"log/slog"
	"net"
	"slices"
)

// New returns the logger of one connection over base.
func New(base *slog.Logger, id uint64, remote net.Addr, proto string) *slog.Logger {
	return slog.New(&handler{base: base.Handler(), id: id, remote: remote, proto: proto})
}

// handler adds the connection's attributes, then those With added since
// (extra), before the record's own, as slog's With would order them.
type handler struct {
	base   slog.Handler
	id     uint64
	remote net.Addr
	proto  string
	extra  []slog.Attr
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.base.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	out.AddAttrs(h.own()...)
	out.AddAttrs(h.extra...)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(a)
		return true
	})
	return h.base.Handle(ctx, out)
}

// own is the connection's attributes.
func (h *handler) own() []slog.Attr {
	remote := ""
	if h.remote != nil {
		remote = h.remote.String()
	}
	return []slog.Attr{slog.Uint64("conn", h.id), slog.String("remote", remote), slog.String("proto", h.proto)}
}

// WithAttrs keeps attrs for later too (a session adds its client id once
// the handshake names it).
func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	c := *h
	c.extra = append(slices.Clip(h.extra), attrs...)
	return &c
}

// WithGroup hands the attributes so far to base, formatted there: what
// follows belongs to the group, and the connection's attributes must not.
func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return h.base.WithAttrs(append(h.own(), h.extra...)).WithGroup(name)
}
