package wire

import (
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

const fuzzMaxFrame = 1 << 20

func fuzzSeeds(f *testing.F, tight bool) {
	for _, tc := range goldenFrames {
		if tc.f.TightEncodingEnabled == tight {
			f.Add(tc.raw, int64(len(tc.raw)), uint8(tc.f.Version), tc.f.CacheEnabled)
		}
	}
	files, _ := filepath.Glob("testdata/frames/*.bin")
	for _, file := range files {
		ff, ok := parseFrameFileName(file)
		if !ok || ff.TightEncodingEnabled != tight {
			continue
		}
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data, int64(1), uint8(ff.Version), ff.CacheEnabled)
		}
	}
	for _, v := range []int{10, 11, 12} {
		ff := Format{Version: v, TightEncodingEnabled: tight, CacheEnabled: true, StackTraceEnabled: true}
		e := NewEncoder(ff)
		var b []byte
		for _, ds := range sampleCommands(v) {
			b, _ = e.Append(b, ds)
		}
		f.Add(b, int64(v), uint8(v), true)
	}
}

// fuzzDecode feeds data in random splits, checks limits and round-trips
// every decoded command: decode -> encode -> decode gives the same values.
func fuzzDecode(t *testing.T, data []byte, seed int64, version uint8, cache, tight bool) {
	v := int(version)
	if v < MinVersion || v > MaxVersion {
		v = v%MaxVersion + 1
	}
	f := Format{Version: v, TightEncodingEnabled: tight, CacheEnabled: cache,
		CacheSize: 64 + int(seed&0x3ff), StackTraceEnabled: seed&1 == 0}
	rng := rand.New(rand.NewSource(seed))
	d := NewDecoder(f, Limits{MaxFrameSize: fuzzMaxFrame})
	var got []DataStructure
	var err error
	for rest := data; len(rest) > 0 && err == nil; {
		n := min(1+rng.Intn(32), len(rest))
		d.Feed(rest[:n])
		rest = rest[n:]
		for {
			var ds DataStructure
			ds, err = d.Next()
			if err != nil || ds == nil {
				break
			}
			if m, ok := ds.(*Message); ok && len(m.Raw) > fuzzMaxFrame {
				t.Fatalf("decoded a %d-byte frame past the %d limit", len(m.Raw), fuzzMaxFrame)
			}
			got = append(got, clearRaw(ds))
		}
		if d.Buffered() > fuzzMaxFrame+4+32 {
			t.Fatalf("decoder buffered %d bytes past the frame limit", d.Buffered())
		}
	}
	if err != nil && errors.Is(err, errShortFrame) {
		t.Fatalf("internal error leaked: %v", err)
	}
	e := NewEncoder(f)
	var enc []byte
	var kept []DataStructure
	for _, ds := range got {
		b, err := e.Append(enc, ds)
		if err != nil {
			// Java also refuses to write what it can read in a few cases
			// (tight strings of 32767 bytes and more).
			if errors.Is(err, ErrStringTooLong) || errors.Is(err, ErrTooDeep) {
				continue
			}
			t.Fatalf("re-encode %s: %v", TypeName(ds.DataStructureType()), err)
		}
		enc = b
		kept = append(kept, ds)
	}
	d2 := NewDecoder(f, Limits{MaxFrameSize: 1 << 26})
	d2.Feed(enc)
	for i, want := range kept {
		ds, err := d2.Next()
		if err != nil || ds == nil {
			t.Fatalf("decode re-encoded %d (%s): %v", i, TypeName(want.DataStructureType()), err)
		}
		if !reflect.DeepEqual(clearRaw(ds), want) {
			t.Fatalf("round trip of %s changed it:\n got %#v\nwant %#v", TypeName(want.DataStructureType()), ds, want)
		}
	}
}

func FuzzOpenWireWireDecodeTight(f *testing.F) {
	fuzzSeeds(f, true)
	f.Fuzz(func(t *testing.T, data []byte, seed int64, version uint8, cache bool) {
		fuzzDecode(t, data, seed, version, cache, true)
	})
}

func FuzzOpenWireWireDecodeLoose(f *testing.F) {
	fuzzSeeds(f, false)
	f.Fuzz(func(t *testing.T, data []byte, seed int64, version uint8, cache bool) {
		fuzzDecode(t, data, seed, version, cache, false)
	})
}
