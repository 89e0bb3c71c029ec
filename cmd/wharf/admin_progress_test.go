package main

import (
	"bytes"
	"os"
	"testing"
)

// TestAdminProgress: the progress line rewrites itself in place and is
// cleared at the end; on stderr that is not a terminal (a pipe, as under
// a script) nothing is written.
func TestAdminProgress(t *testing.T) {
	var buf bytes.Buffer
	p := &progress{w: &buf}
	p.update("purging %d/%d queues: %s", 1, 2, "a")
	p.update("purging %d/%d queues: %s", 2, 2, "b")
	p.done()
	if got, want := buf.String(), "\r\033[Kpurging 1/2 queues: a\r\033[Kpurging 2/2 queues: b\r\033[K"; got != want {
		t.Errorf("progress wrote %q, want %q", got, want)
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	q := newProgress(w)
	q.update("replaying %s: %d messages", "ActiveMQ.DLQ", 1)
	q.done()
	w.Close()
	var got bytes.Buffer
	got.ReadFrom(r)
	if got.Len() != 0 {
		t.Errorf("progress on a pipe wrote %q, want nothing", got.String())
	}
}
