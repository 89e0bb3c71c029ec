package wire

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestOpenWireWireNegotiate(t *testing.T) {
	java := DefaultOptions()
	nms := Options{Version: 10, CacheSize: 0, TcpNoDelayEnabled: true, MaxInactivityDuration: 30 * time.Second,
		MaxInactivityDurationInitalDelay: 10 * time.Second}
	cpp := DefaultOptions()
	cpp.Version, cpp.CacheEnabled = 11, false
	small := DefaultOptions()
	small.CacheSize, small.MaxFrameSize, small.MaxInactivityDuration = 256, 1<<20, 0

	cases := []struct {
		name          string
		local, remote Options
		want          Format
	}{
		{"java to java", java, java, Format{Version: 12, TightEncodingEnabled: true, CacheEnabled: true, CacheSize: 1024,
			StackTraceEnabled: true, TcpNoDelayEnabled: true, MaxFrameSize: math.MaxInt64,
			MaxInactivityDuration: 30 * time.Second, MaxInactivityDurationInitalDelay: 10 * time.Second}},
		{"NMS forces v10 loose uncached", java, nms, Format{Version: 10, TcpNoDelayEnabled: true, MaxFrameSize: math.MaxInt64,
			MaxInactivityDuration: 30 * time.Second, MaxInactivityDurationInitalDelay: 10 * time.Second}},
		{"CPP tight uncached v11", java, cpp, Format{Version: 11, TightEncodingEnabled: true, StackTraceEnabled: true,
			TcpNoDelayEnabled: true, MaxFrameSize: math.MaxInt64,
			MaxInactivityDuration: 30 * time.Second, MaxInactivityDurationInitalDelay: 10 * time.Second}},
		{"smaller cache, frame, inactivity 0 disables", java, small, Format{Version: 12, TightEncodingEnabled: true,
			CacheEnabled: true, CacheSize: 256, StackTraceEnabled: true, TcpNoDelayEnabled: true, MaxFrameSize: 1 << 20,
			MaxInactivityDurationInitalDelay: 10 * time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Through the wire: each side reads the other's WireFormatInfo.
			wfi, err := NewWireFormatInfo(tc.remote)
			if err != nil {
				t.Fatal(err)
			}
			frame, err := NewEncoder(InitialFormat(12)).Append(nil, wfi)
			if err != nil {
				t.Fatal(err)
			}
			ds, err := Unmarshal(frame, InitialFormat(1), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			remote, err := ds.(*WireFormatInfo).Options()
			if err != nil {
				t.Fatal(err)
			}
			got, err := Negotiate(tc.local, remote)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
			back, _ := Negotiate(remote, tc.local)
			if back != got {
				t.Errorf("not symmetric: %+v", back)
			}
		})
	}
	t.Run("version <= 0 is ignored", func(t *testing.T) {
		o := DefaultOptions()
		o.Version = 0
		if f, err := Negotiate(DefaultOptions(), o); err != nil || f.Version != 12 {
			t.Fatalf("got %v, %v", f.Version, err)
		}
	})
	t.Run("older client gets its version", func(t *testing.T) {
		for v := 1; v <= 12; v++ {
			o := DefaultOptions()
			o.Version = v
			if f, err := Negotiate(DefaultOptions(), o); err != nil || f.Version != v {
				t.Fatalf("v%d: got %v, %v", v, f.Version, err)
			}
		}
	})
	t.Run("unsupported version", func(t *testing.T) {
		o := DefaultOptions()
		o.Version = 13
		l := DefaultOptions()
		l.Version = 13
		if _, err := Negotiate(l, o); !errors.Is(err, ErrUnsupportedVersion) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("bad magic", func(t *testing.T) {
		w, _ := NewWireFormatInfo(DefaultOptions())
		w.Magic[0] = 'X'
		if _, err := w.Options(); !errors.Is(err, ErrBadMagic) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("java property types", func(t *testing.T) {
		w, _ := NewWireFormatInfo(DefaultOptions())
		p, err := w.Properties()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p["CacheSize"].(int32); !ok {
			t.Errorf("CacheSize is %T, Java casts to Integer", p["CacheSize"])
		}
		for _, k := range []string{"MaxInactivityDuration", "MaxInactivityDurationInitalDelay", "MaxFrameSize"} {
			if _, ok := p[k].(int64); !ok {
				t.Errorf("%s is %T, Java casts to Long", k, p[k])
			}
		}
		if _, ok := p["TightEncodingEnabled"].(bool); !ok {
			t.Errorf("TightEncodingEnabled is %T", p["TightEncodingEnabled"])
		}
	})
}

// TestOpenWireWireFirstFrameLoose: whatever a side prefers, its first frame
// is a loose, size-prefixed WireFormatInfo (reference §3.1).
func TestOpenWireWireFirstFrameLoose(t *testing.T) {
	w, _ := NewWireFormatInfo(DefaultOptions())
	b, err := NewEncoder(InitialFormat(MaxVersion)).Append(nil, w)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{1, 'A', 'c', 't', 'i', 'v', 'e', 'M', 'Q', 0, 0, 0, 12, 1}
	if len(b) < 4+len(want) || string(b[4:4+len(want)]) != string(want) {
		t.Fatalf("first frame starts %x", b[:min(len(b), 20)])
	}
}
