package wire

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

var fuzzVersions = [...]string{V10, V11, V12}

// fuzzLimits picks, from sel, either ActiveMQ's limits or small ones that the
// fuzzer can cross with short inputs.
func fuzzLimits(sel uint8) Limits {
	switch (sel / 3) % 3 {
	case 1:
		return Limits{MaxCommandBytes: 16, MaxHeaderLineBytes: 32, MaxHeaders: 4, MaxBodyBytes: 64}
	case 2:
		return Limits{MaxCommandBytes: 16, MaxHeaderLineBytes: 32, MaxHeaders: 4, MaxBodyBytes: 64, MaxFrameBytes: 96}
	}
	return DefaultLimits()
}

// FuzzSTOMPWireDecode checks, for any input, version and split: decoding
// never panics; a split stream decodes exactly as the whole stream; decoded
// sizes respect the limits; and decode -> encode -> decode is the identity.
func FuzzSTOMPWireDecode(f *testing.F) {
	for i, tc := range goldenCases() {
		sel := uint8(0)
		for j, v := range fuzzVersions {
			if v == tc.version {
				sel = uint8(j)
			}
		}
		f.Add([]byte(tc.raw), sel, uint64(i))
		f.Add([]byte(tc.raw), sel+3, uint64(i)*7919)
	}
	f.Fuzz(func(t *testing.T, raw []byte, sel uint8, seed uint64) {
		lim := fuzzLimits(sel)
		tc := goldenCase{version: fuzzVersions[sel%3], limits: &lim}

		whole, wholeBeats, wholeErr := decodeChunks(tc, [][]byte{raw})

		rng := rand.New(rand.NewPCG(seed, uint64(len(raw))))
		var chunks [][]byte
		for rest := raw; len(rest) > 0; {
			n := 1 + rng.IntN(min(len(rest), 1+rng.IntN(32)))
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		split, splitBeats, splitErr := decodeChunks(tc, chunks)
		if !reflect.DeepEqual(split, whole) || splitBeats != wholeBeats || fmt.Sprint(splitErr) != fmt.Sprint(wholeErr) {
			t.Fatalf("split input differs:\n split %s beats %d err %v\n whole %s beats %d err %v",
				dump(split), splitBeats, splitErr, dump(whole), wholeBeats, wholeErr)
		}

		for _, fr := range whole {
			if len(fr.Command) == 0 || len(fr.Command) > lim.MaxCommandBytes {
				t.Fatalf("command %q outside 1..%d bytes", fr.Command, lim.MaxCommandBytes)
			}
			if len(fr.Headers) > lim.MaxHeaders {
				t.Fatalf("%d headers, limit %d", len(fr.Headers), lim.MaxHeaders)
			}
			for _, h := range fr.Headers {
				if len(h.Name)+len(h.Value) > lim.MaxHeaderLineBytes {
					t.Fatalf("header %q of %d bytes, limit %d", h.Name, len(h.Name)+len(h.Value), lim.MaxHeaderLineBytes)
				}
			}
			if len(fr.Body) > lim.MaxBodyBytes {
				t.Fatalf("body of %d bytes, limit %d", len(fr.Body), lim.MaxBodyBytes)
			}
			if fr.Body != nil && len(fr.Body) == 0 {
				t.Fatal("empty body is not nil")
			}

			// Re-encoding may lengthen header lines (a raw colon in a
			// value comes back escaped), so re-decode with room to spare.
			enc := AppendFrame(nil, &fr, tc.version)
			d := NewDecoder(Limits{MaxHeaderLineBytes: 1 << 20, MaxCommandBytes: 1 << 20})
			d.SetVersion(tc.version)
			again, _, err := d.Feed(enc, nil)
			if err != nil {
				t.Fatalf("re-decoding %q under %s: %v", enc, tc.version, err)
			}
			if len(again) != 1 || !reflect.DeepEqual(again[0], fr) {
				t.Fatalf("round trip under %s of %q:\n got %s\nwant %s", tc.version, enc, dump(again), dump([]Frame{fr}))
			}
		}
	})
}
