package message

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestEncodedDecoded: the first use decodes for the caller alone; later
// uses, from any goroutine, share one more decode; copies of the Encoded
// share it too; an Encoded without a memo decodes every time.
func TestEncodedDecoded(t *testing.T) {
	var calls atomic.Int32
	decode := func(b []byte) any { calls.Add(1); return new(string) }
	e := NewEncoded("openwire", []byte{1})
	first, shared := e.Decoded(decode)
	if shared || calls.Load() != 1 {
		t.Fatalf("first use: shared %v after %d decodes, want false after 1", shared, calls.Load())
	}
	cp := e // a copy of the message shares the memo
	var wg sync.WaitGroup
	got := make([]any, 8)
	for i := range got {
		wg.Go(func() {
			v, sh := cp.Decoded(decode)
			if !sh {
				t.Errorf("use %d not shared", i+2)
			}
			got[i] = v
		})
	}
	wg.Wait()
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d decodes for 9 uses, want 2", n)
	}
	for i, v := range got {
		if v != got[0] || v == first {
			t.Fatalf("use %d got %p, want the one kept value %p (not the first use's %p)", i+2, v, got[0], first)
		}
	}
	raw := Encoded{Protocol: "openwire", Bytes: []byte{1}}
	raw.Decoded(decode)
	if _, sh := raw.Decoded(decode); sh || calls.Load() != 4 {
		t.Fatalf("without a memo: shared %v after %d decodes, want false after 4", sh, calls.Load())
	}
}

// TestEncodedKept: an Encoded made by NewKept shares its value from the
// first use without decoding, has no Bytes, and makes them on demand
// (Marshalled) from the value, afresh each time; a copy shares all that;
// the binary form (a spill) carries the made bytes.
func TestEncodedKept(t *testing.T) {
	v := new(string)
	*v = "frame"
	var encodes atomic.Int32
	e := NewKept("openwire", v, func(x any) []byte { encodes.Add(1); return []byte(*x.(*string)) })
	decode := func([]byte) any { t.Fatal("a kept value was decoded"); return nil }
	for i := range 2 {
		got, shared := e.Decoded(decode)
		if got != v || !shared {
			t.Fatalf("use %d: %p shared %v, want the kept %p shared", i+1, got, shared, v)
		}
	}
	if len(e.Bytes) != 0 || !e.Kept() {
		t.Fatalf("Bytes %q, Kept %v; want none and true", e.Bytes, e.Kept())
	}
	cp := e
	if b := cp.Marshalled(); string(b) != "frame" || encodes.Load() != 1 {
		t.Fatalf("Marshalled = %q after %d encodes, want frame after 1", b, encodes.Load())
	}
	if cp.Marshalled(); encodes.Load() != 2 {
		t.Fatalf("%d encodes for 2 calls, want 2 (nothing kept)", encodes.Load())
	}
	m := &Message{ID: "ID:x:1:1:1:1", Destination: QueueDest("q"), Original: e}
	bin, err := m.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalBinary(bin)
	if err != nil || back.Original.Protocol != "openwire" || string(back.Original.Bytes) != "frame" {
		t.Fatalf("spilled Original = %q %q (%v), want openwire frame", back.Original.Protocol, back.Original.Bytes, err)
	}
	for _, none := range []Encoded{{}, {Protocol: "openwire"}} {
		if none.Kept() || none.Marshalled() != nil {
			t.Errorf("%+v: Kept %v, Marshalled %q; want false, nil", none, none.Kept(), none.Marshalled())
		}
	}
	if b := NewEncoded("openwire", []byte{1, 2}); !b.Kept() || string(b.Marshalled()) != "\x01\x02" {
		t.Errorf("NewEncoded: Kept %v, Marshalled %x; want true, 0102", b.Kept(), b.Marshalled())
	}
}
