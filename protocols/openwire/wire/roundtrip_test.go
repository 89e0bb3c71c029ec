package wire

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strconv"
	"testing"
	"unsafe"
)

// clearRaw drops the decoder-set Raw so decoded values compare equal.
func clearRaw(ds DataStructure) DataStructure {
	if m, ok := ds.(*Message); ok {
		m.Raw = nil
	}
	return ds
}

func allFormats() []Format {
	var fs []Format
	for _, v := range []int{1, 2, 3, 6, 7, 9, 10, 11, 12} {
		for _, tight := range []bool{false, true} {
			for _, cache := range []bool{false, true} {
				for _, st := range []bool{false, true} {
					fs = append(fs, Format{Version: v, TightEncodingEnabled: tight, CacheEnabled: cache, StackTraceEnabled: st})
				}
			}
		}
	}
	fs = append(fs, Format{Version: 12, TightEncodingEnabled: true, CacheEnabled: true, StackTraceEnabled: true, SizePrefixDisabled: true},
		Format{Version: 11, SizePrefixDisabled: true, StackTraceEnabled: true})
	return fs
}

func formatName(f Format) string {
	s := fmt.Sprintf("v%d", f.Version)
	for _, o := range []struct {
		on   bool
		name string
	}{{f.TightEncodingEnabled, "tight"}, {!f.TightEncodingEnabled, "loose"}, {f.CacheEnabled, "cache"},
		{f.StackTraceEnabled, "stack"}, {f.SizePrefixDisabled, "noprefix"}} {
		if o.on {
			s += "-" + o.name
		}
	}
	return s
}

// TestOpenWireWireRoundTrip encodes every sample command in every format
// with one Encoder, decodes the stream in random splits with one Decoder,
// and requires equal values (v12 with stack traces: equal to the input;
// otherwise: a second round trip reproduces the first, bytes included).
func TestOpenWireWireRoundTrip(t *testing.T) {
	for _, f := range allFormats() {
		t.Run(formatName(f), func(t *testing.T) {
			cmds := sampleCommands(f.Version)
			stream := func(cmds []DataStructure) []byte {
				e := NewEncoder(f)
				var b []byte
				for _, ds := range cmds {
					var err error
					if b, err = e.Append(b, ds); err != nil {
						t.Fatalf("encode %s: %v", TypeName(ds.DataStructureType()), err)
					}
				}
				return b
			}
			first := stream(cmds)
			got, _ := decodeAll(t, first, f, rand.New(rand.NewSource(int64(f.Version))))
			if len(got) != len(cmds) {
				t.Fatalf("decoded %d commands, want %d", len(got), len(cmds))
			}
			for i := range got {
				clearRaw(got[i])
			}
			if f.Version == MaxVersion && f.StackTraceEnabled {
				for i := range cmds {
					if !reflect.DeepEqual(got[i], cmds[i]) {
						t.Errorf("command %d (%s):\n got %#v\nwant %#v", i, TypeName(cmds[i].DataStructureType()), got[i], cmds[i])
					}
				}
			}
			second := stream(got)
			if !bytes.Equal(first, second) {
				t.Fatalf("re-encoding the decoded commands changed the bytes")
			}
			again, _ := decodeAll(t, second, f, rand.New(rand.NewSource(7)))
			for i := range again {
				if !reflect.DeepEqual(clearRaw(again[i]), got[i]) {
					t.Errorf("command %d (%s) not stable across round trips", i, TypeName(got[i].DataStructureType()))
				}
			}
		})
	}
}

// TestOpenWireWireCacheReuse checks that repeated ids become cache
// references and that a later frame resolves them.
func TestOpenWireWireCacheReuse(t *testing.T) {
	for _, tight := range []bool{false, true} {
		f := Format{Version: 12, TightEncodingEnabled: tight, CacheEnabled: true, CacheSize: 1024}
		e := NewEncoder(f)
		conn := &ConnectionId{Value: "ID:c"}
		first, err := e.Append(nil, &ConnectionInfo{ConnectionId: conn})
		if err != nil {
			t.Fatal(err)
		}
		second, err := e.Append(nil, &ConnectionInfo{ConnectionId: &ConnectionId{Value: "ID:c"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(second) >= len(first) {
			t.Errorf("tight=%v: cached reference not shorter: %d >= %d", tight, len(second), len(first))
		}
		d := NewDecoder(f, Limits{})
		d.Feed(append(first, second...))
		a, _ := d.Next()
		b, err := d.Next()
		if err != nil {
			t.Fatal(err)
		}
		ca, cb := a.(*ConnectionInfo).ConnectionId, b.(*ConnectionInfo).ConnectionId
		if cb == nil || *cb != *conn || ca == cb {
			t.Errorf("tight=%v: reference resolved to %v (shared pointer %v)", tight, cb, ca == cb)
		}
	}
}

// TestOpenWireWireEncodeErrorRollsBackCache: a failed encode must not leave
// cache entries the peer never saw.
func TestOpenWireWireEncodeErrorRollsBackCache(t *testing.T) {
	f := Format{Version: 12, TightEncodingEnabled: true, CacheEnabled: true}
	e := NewEncoder(f)
	huge := make([]byte, 40000)
	for i := range huge {
		huge[i] = 'a'
	}
	bad := &ConsumerInfo{ConsumerId: &ConsumerId{ConnectionId: "c"}, Destination: NewQueue("q"), Selector: string(huge)}
	if _, err := e.Append(nil, bad); err == nil {
		t.Fatal("encoding a 40000-byte tight string succeeded")
	}
	ok, err := e.Append(nil, &ConsumerInfo{ConsumerId: &ConsumerId{ConnectionId: "c"}, Destination: NewQueue("q")})
	if err != nil {
		t.Fatal(err)
	}
	d := NewDecoder(f, Limits{})
	d.Feed(ok)
	ds, err := d.Next()
	if err != nil {
		t.Fatal(err)
	}
	if ci := ds.(*ConsumerInfo); ci.ConsumerId == nil || ci.Destination == nil || ci.Destination.PhysicalName != "q" {
		t.Errorf("decoded %+v after rollback", ci)
	}
}

// TestOpenWireWireCacheGrows: both caches hold only the slots used so
// far, not the negotiated size, and still encode, evict and resolve as a
// full-size cache does once the writer has wrapped round it several times.
func TestOpenWireWireCacheGrows(t *testing.T) {
	const size = 1024
	for _, tight := range []bool{false, true} {
		f := Format{Version: 12, TightEncodingEnabled: tight, CacheEnabled: true, CacheSize: size}
		e := NewEncoder(f)
		d := NewDecoder(f, Limits{})
		for i := range 3 * size {
			// A new connection id each frame, and one repeated (a
			// reference once cached).
			sent := &ConsumerInfo{ConsumerId: &ConsumerId{ConnectionId: "ID:c" + strconv.Itoa(i), SessionId: 1, Value: 1}, Destination: NewQueue("q")}
			b, err := e.Append(nil, sent)
			if err != nil {
				t.Fatal(err)
			}
			d.Feed(b)
			ds, err := d.Next()
			if err != nil {
				t.Fatalf("tight=%v frame %d: %v", tight, i, err)
			}
			got := ds.(*ConsumerInfo)
			if *got.ConsumerId != *sent.ConsumerId || got.Destination == nil || got.Destination.PhysicalName != "q" {
				t.Fatalf("tight=%v frame %d: decoded %+v %+v", tight, i, got.ConsumerId, got.Destination)
			}
			if i == 0 && (len(e.wc.slots) > 16 || len(d.rc.slots) > 16) {
				t.Fatalf("tight=%v: after one frame the caches hold %d and %d slots, want a few", tight, len(e.wc.slots), len(d.rc.slots))
			}
		}
		if len(e.wc.slots) > size || len(d.rc.slots) > size || len(e.wc.slots) < size-marshalCacheFreeSpace {
			t.Fatalf("tight=%v: after %d frames the caches hold %d and %d slots, want at most %d", tight, 3*size, len(e.wc.slots), len(d.rc.slots), size)
		}
	}
	// A peer may name any slot below the size first; one it never set
	// reads as null, one past the size is refused.
	u := newUnmarshalCache(size)
	if err := u.set(size-1, &ConnectionId{Value: "last"}); err != nil {
		t.Fatal(err)
	}
	if v, err := u.get(size - 1); err != nil || v.(*ConnectionId).Value != "last" {
		t.Fatalf("slot %d: %v %v", size-1, v, err)
	}
	if v, err := u.get(3); err != nil || v != nil {
		t.Fatalf("unset slot 3: %v %v, want nil", v, err)
	}
	u2 := newUnmarshalCache(16)
	if v, err := u2.get(5); err != nil || v != nil {
		t.Fatalf("unset slot 5 of an empty cache: %v %v, want nil", v, err)
	}
	if err := u2.set(16, &ConnectionId{}); err == nil {
		t.Fatal("slot 16 of a 16-slot cache accepted")
	}
}

// TestOpenWireWireSmallCache: caches smaller than Java's 100 free slots, and
// frames with more cached objects than slots, still encode and decode.
func TestOpenWireWireSmallCache(t *testing.T) {
	for _, size := range []int{1, 16, 99, 150} {
		for _, tight := range []bool{false, true} {
			f := Format{Version: 12, TightEncodingEnabled: tight, CacheEnabled: true, CacheSize: size, StackTraceEnabled: true}
			var cmds []DataStructure
			for i := 0; i < 3; i++ {
				cmds = append(cmds, sampleCommands(12)...)
			}
			e := NewEncoder(f)
			var b []byte
			for _, ds := range cmds {
				var err error
				if b, err = e.Append(b, ds); err != nil {
					t.Fatal(err)
				}
			}
			got, _ := decodeAll(t, b, f, rand.New(rand.NewSource(3)))
			for i := range got {
				if !reflect.DeepEqual(clearRaw(got[i]), cmds[i]) {
					t.Fatalf("size %d tight=%v: command %d (%s) differs", size, tight, i, TypeName(cmds[i].DataStructureType()))
				}
			}
		}
	}
}

// TestUnmarshalShared: a StoreFormat frame decodes as Unmarshal decodes it,
// with its byte slices inside the frame itself, and a frame that is short,
// long or mis-sized is refused as Unmarshal refuses it.
func TestUnmarshalShared(t *testing.T) {
	f := StoreFormat()
	frame, err := Marshal(benchMessage(), f)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Unmarshal(frame, f, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalShared(frame, f, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("UnmarshalShared\n got %+v\nwant %+v", got, want)
	}
	m := got.(*Message)
	inFrame := func(b []byte) bool {
		if len(b) == 0 {
			return false
		}
		lo, hi := uintptr(unsafe.Pointer(&frame[0])), uintptr(unsafe.Pointer(&frame[len(frame)-1]))
		p := uintptr(unsafe.Pointer(&b[0]))
		return p >= lo && p+uintptr(len(b)-1) <= hi
	}
	if !inFrame(m.Content) || !inFrame(m.MarshalledProperties) || !inFrame(m.Raw) {
		t.Error("Content, MarshalledProperties and Raw do not alias the frame")
	}
	if w := want.(*Message); inFrame(w.Content) {
		t.Error("Unmarshal's Content aliases the frame; the test cannot tell copies from aliases")
	}

	for _, tc := range []struct {
		name  string
		frame []byte
		want  error
	}{
		{"no size", frame[:3], ErrTruncated},
		{"short", frame[:len(frame)-1], ErrTruncated},
		{"trailing", append(append([]byte(nil), frame...), 0), ErrTrailingBytes},
		{"size 0", []byte{0, 0, 0, 0}, ErrMalformedFrame},
		{"too large", frame, ErrFrameTooLarge},
	} {
		lim := Limits{}
		if tc.name == "too large" {
			lim.MaxFrameSize = 16
		}
		if _, err := UnmarshalShared(tc.frame, f, lim); !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
		if _, err := Unmarshal(tc.frame, f, lim); !errors.Is(err, tc.want) {
			t.Errorf("%s: Unmarshal's err %v, want %v (the two must agree)", tc.name, err, tc.want)
		}
	}
}
