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
