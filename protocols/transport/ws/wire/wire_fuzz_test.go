package wire

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unicode/utf8"
)

// fuzzEvent is one decoded message or control frame.
type fuzzEvent struct {
	op      Opcode
	payload []byte
}

// fuzzDecode decodes chunks in order and gathers whole messages.
func fuzzDecode(t *testing.T, lim Limits, chunks [][]byte) ([]fuzzEvent, error) {
	d := NewDecoder(lim)
	var out []fuzzEvent
	var msg []byte
	for _, c := range chunks {
		c = slices.Clone(c) // Next unmasks in place
		for len(c) > 0 {
			n, ev, ok, err := d.Next(c)
			if n < 0 || n > len(c) || (n == 0 && !ok && err == nil) {
				t.Fatalf("Next used %d of %d bytes (ok %v, err %v)", n, len(c), ok, err)
			}
			c = c[n:]
			if err != nil {
				return out, err
			}
			if !ok {
				continue
			}
			if ev.Opcode.IsControl() {
				if len(ev.Payload) > MaxControlPayload {
					t.Fatalf("%s payload of %d bytes", ev.Opcode, len(ev.Payload))
				}
				out = append(out, fuzzEvent{ev.Opcode, slices.Clone(ev.Payload)})
				continue
			}
			msg = append(msg, ev.Payload...)
			limit := lim.MaxBinaryMessageBytes
			if ev.Opcode == OpText {
				limit = lim.MaxTextMessageBytes
			}
			if limit > 0 && int64(len(msg)) > limit {
				t.Fatalf("%s message of %d bytes passed, limit %d", ev.Opcode, len(msg), limit)
			}
			if ev.Final {
				if ev.Opcode == OpText && !utf8.Valid(msg) {
					t.Fatalf("invalid UTF-8 text passed: %q", msg)
				}
				out = append(out, fuzzEvent{ev.Opcode, slices.Clone(msg)})
				msg = msg[:0]
			}
		}
	}
	return out, nil
}

func fuzzLimits(sel uint8) Limits {
	switch sel % 3 {
	case 0:
		return Limits{}
	case 1:
		return Limits{MaxTextMessageBytes: 16, MaxBinaryMessageBytes: 300}
	}
	return Limits{MaxTextMessageBytes: 70000, MaxBinaryMessageBytes: 3}
}

// FuzzWSWireDecode feeds client frames in random splits: the events and the
// error must not depend on the splits, decoded sizes respect the limits,
// text is valid UTF-8, and what decodes re-encodes to the same events.
func FuzzWSWireDecode(f *testing.F) {
	for i, tc := range golden {
		f.Add(tc.in, uint8(i), uint64(i))
	}
	f.Fuzz(func(t *testing.T, raw []byte, sel uint8, seed uint64) {
		lim := fuzzLimits(sel)
		whole, wholeErr := fuzzDecode(t, lim, [][]byte{raw})

		rng := rand.New(rand.NewPCG(seed, uint64(len(raw))))
		var chunks [][]byte
		for rest := raw; len(rest) > 0; {
			n := 1 + rng.IntN(min(len(rest), 1+rng.IntN(32)))
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		split, splitErr := fuzzDecode(t, lim, chunks)
		if fmt.Sprint(whole) != fmt.Sprint(split) || fmt.Sprint(wholeErr) != fmt.Sprint(splitErr) {
			t.Fatalf("split input differs:\n split %v err %v\n whole %v err %v", split, splitErr, whole, wholeErr)
		}

		// Round trip: each event as one masked frame decodes to itself.
		var again []byte
		key := [4]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24)}
		for _, ev := range whole {
			again = append(again, clientFrame(true, ev.op, key, ev.payload)...)
		}
		back, err := fuzzDecode(t, lim, [][]byte{again})
		if err != nil || fmt.Sprint(back) != fmt.Sprint(whole) {
			t.Fatalf("round trip: %v err %v, want %v", back, err, whole)
		}
	})
}

// FuzzWSWireUTF8 checks the chunked UTF-8 check against utf8.Valid on the
// whole text, for random splits.
func FuzzWSWireUTF8(f *testing.F) {
	for _, s := range []string{"", "a", "€", "\xe2\x82", "a\xffb", "\xf0\x9f\x98\x80x", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80"} {
		f.Add([]byte(s), uint64(len(s)))
	}
	f.Fuzz(func(t *testing.T, raw []byte, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var s utf8Stream
		ok := true
		for rest := raw; ; {
			n := 0
			if len(rest) > 0 {
				n = rng.IntN(len(rest) + 1)
			}
			final := n == len(rest)
			if !s.valid(rest[:n], final) {
				ok = false
				break
			}
			rest = rest[n:]
			if final {
				break
			}
		}
		if want := utf8.Valid(raw); ok != want {
			t.Fatalf("chunked check of %q = %v, utf8.Valid = %v", raw, ok, want)
		}
	})
}

func TestWSWireUTF8Splits(t *testing.T) {
	// Every split point of a text with 1-4 byte characters.
	text := []byte("a€\U0001F600ß\u0800z")
	for i := 0; i <= len(text); i++ {
		for j := i; j <= len(text); j++ {
			var s utf8Stream
			if !s.valid(text[:i], false) || !s.valid(text[i:j], false) || !s.valid(text[j:], true) {
				t.Fatalf("split at %d,%d refused", i, j)
			}
		}
	}
	var s utf8Stream
	if s.valid(bytes.Repeat([]byte{0xe2}, 1), false) && s.valid(nil, true) {
		t.Fatal("text ending inside a character passed")
	}
}
