package wire

import (
	"errors"
	"strings"
	"testing"
)

// TestSTOMPWireIdleResume: a decoder is Idle only between frames with
// nothing held back and no error; a decoder Resumed with a version and
// limits decodes under them, whatever it decoded before.
func TestSTOMPWireIdleResume(t *testing.T) {
	d := NewDecoder(Limits{})
	if !d.Idle() {
		t.Fatal("a new decoder is not Idle")
	}
	frames, _, err := d.Feed([]byte("CONNECT\naccept-version:1.2\nhost:h\n\n\x00SEND\ndestination:/queue/a\n\nfirst\x00"), nil)
	if err != nil || len(frames) != 1 {
		t.Fatalf("CONNECT: %v %+v", err, frames)
	}
	if d.Idle() {
		t.Fatal("Idle with the bytes after CONNECT held back")
	}
	d.SetVersion("1.2")
	if frames, _, err = d.Feed(nil, nil); err != nil || len(frames) != 1 || !d.Idle() {
		t.Fatalf("held SEND: %v %+v, idle %v", err, frames, d.Idle())
	}
	for _, part := range []string{"S", "SEND\nk:v", "SEND\nk:v\n\nbo"} {
		p := NewDecoder(Limits{})
		p.SetVersion("1.2")
		if _, _, err := p.Feed([]byte(part), nil); err != nil || p.Idle() {
			t.Fatalf("%q: err %v, Idle %v with a frame partly read", part, err, p.Idle())
		}
	}

	// A decoder from a pool takes the connection's version and limits.
	for _, tc := range []struct{ version, want string }{{"1.2", "v:w"}, {"1.0", `v\cw`}} {
		var r Decoder
		r.Resume(Limits{}, tc.version)
		frames, _, err := r.Feed([]byte("SEND\ndestination:/queue/a\nk:v\\cw\n\nx\x00"), nil)
		if err != nil || len(frames) != 1 {
			t.Fatalf("%s: %v %+v", tc.version, err, frames)
		}
		if v, _ := frames[0].Get("k"); v != tc.want || !r.Idle() {
			t.Fatalf("%s: header k %q, want %q; Idle %v", tc.version, v, tc.want, r.Idle())
		}
	}
	// Resume replaces the limits and clears an error.
	bad := NewDecoder(Limits{})
	if _, _, err := bad.Feed([]byte("SEND\nnocolon\n\n\x00"), nil); !errors.Is(err, ErrBadHeaderLine) || bad.Idle() {
		t.Fatalf("header line without a colon: err %v, Idle %v", err, bad.Idle())
	}
	bad.Resume(Limits{MaxHeaders: 1}, "1.2")
	if _, _, err := bad.Feed([]byte("SEND\na:1\nb:2\n\n\x00"), nil); !errors.Is(err, ErrTooManyHeaders) {
		t.Fatalf("two headers past a limit of one: %v", err)
	}
	bad.Resume(Limits{}, "1.2")
	frames, _, err = bad.Feed([]byte("SEND\n"+strings.Repeat("h:1\n", 3)+"\n\x00"), nil)
	if err != nil || len(frames) != 1 {
		t.Fatalf("after Resume: %v %+v", err, frames)
	}
}
