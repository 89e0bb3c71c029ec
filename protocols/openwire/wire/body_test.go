package wire

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestOpenWireWirePrimitiveMap(t *testing.T) {
	in := map[string]any{
		"null": nil, "bool": true, "byte": int8(-2), "char": Char(0xD83D), "short": int16(-3), "int": int32(-4),
		"long": int64(math.MinInt64), "double": math.Inf(-1), "float": float32(0.25), "string": "s\x00\U0001F600",
		"big": strings.Repeat("\u00e9", 9000), "bytes": []byte{1, 2}, "map": map[string]any{"k": "v"},
		"list": []any{int32(1), "two", []any{}},
	}
	b, err := AppendPrimitiveMap(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := UnmarshalPrimitiveMap(b, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("got %#v", out)
	}
	// Tags as MarshallingSupport writes them.
	for k, tag := range map[string]byte{"string": PrimitiveString, "big": PrimitiveBigString} {
		v, _ := AppendPrimitive(nil, in[k])
		if v[0] != tag {
			t.Errorf("%s written with tag %d, want %d", k, v[0], tag)
		}
	}
	if v, _ := AppendPrimitive(nil, strings.Repeat("\U0001F600", 4096)); v[0] != PrimitiveBigString {
		t.Errorf("8192 UTF-16 units must use the big string tag")
	}
	if _, err := AppendPrimitive(nil, 3); !errors.Is(err, ErrUnsupportedPrimitive) {
		t.Errorf("int: err = %v", err)
	}
	nilMap, _ := AppendPrimitiveMap(nil, nil)
	if m, err := UnmarshalPrimitiveMap(nilMap, Limits{}); m != nil || err != nil {
		t.Errorf("nil map: %v, %v", m, err)
	}
	for name, bad := range map[string]struct {
		b   []byte
		err error
	}{
		"too many entries": {[]byte{0, 1, 0, 0}, ErrTooManyElements},
		"unknown tag":      {[]byte{0, 0, 0, 1, 0, 1, 'k', 99}, ErrUnknownPrimitiveType},
		"truncated":        {[]byte{0, 0, 0, 1, 0, 5, 'k'}, ErrTruncated},
		"negative list":    {[]byte{0, 0, 0, 1, 0, 1, 'k', 12, 0xff, 0xff, 0xff, 0xfe}, ErrNegativeLength},
	} {
		if _, err := UnmarshalPrimitiveMap(bad.b, Limits{MaxMapEntries: 100}); !errors.Is(err, bad.err) {
			t.Errorf("%s: err = %v, want %v", name, err, bad.err)
		}
	}
	deep := []byte{}
	for i := 0; i < 40; i++ {
		deep = append(deep, 0, 0, 0, 1, 0, 1, 'k', PrimitiveMap)
	}
	if _, err := UnmarshalPrimitiveMap(deep, Limits{}); !errors.Is(err, ErrTooDeep) {
		t.Errorf("deep map: err = %v", err)
	}
}

func TestOpenWireWireBodies(t *testing.T) {
	for _, compress := range []bool{false, true} {
		m := &Message{}
		m.SetText(emojiText, compress)
		if s, ok, err := m.Text(Limits{}); err != nil || !ok || s != emojiText {
			t.Errorf("compress=%v text %q %v %v", compress, s, ok, err)
		}
		m.SetBytes([]byte("payload"), compress)
		if b, err := m.Bytes(Limits{}); err != nil || string(b) != "payload" {
			t.Errorf("compress=%v bytes %q %v", compress, b, err)
		}
		if err := m.SetMap(map[string]any{"a": int32(1)}, compress); err != nil {
			t.Fatal(err)
		}
		if v, err := m.Map(Limits{}); err != nil || v["a"] != int32(1) {
			t.Errorf("compress=%v map %v %v", compress, v, err)
		}
		if err := m.SetStream([]any{"x", int64(2)}, compress); err != nil {
			t.Fatal(err)
		}
		if v, err := m.Stream(Limits{}); err != nil || !reflect.DeepEqual(v, []any{"x", int64(2)}) {
			t.Errorf("compress=%v stream %v %v", compress, v, err)
		}
	}
	t.Run("null text", func(t *testing.T) {
		m := &Message{Kind: TypeActiveMQTextMessage, Content: []byte{0xff, 0xff, 0xff, 0xff}}
		if _, ok, err := m.Text(Limits{}); ok || err != nil {
			t.Fatalf("ok=%v err=%v", ok, err)
		}
	})
	t.Run("compression bomb is refused", func(t *testing.T) {
		m := &Message{}
		m.SetText(strings.Repeat("a", 1<<20), true)
		if _, _, err := m.Text(Limits{MaxBodySize: 1 << 16}); !errors.Is(err, ErrBodyTooLarge) {
			t.Fatalf("err = %v", err)
		}
		m.SetBytes(make([]byte, 1<<20), true)
		if _, err := m.Bytes(Limits{MaxBodySize: 1 << 16}); !errors.Is(err, ErrBodyTooLarge) {
			t.Fatalf("bytes: err = %v", err)
		}
	})
	t.Run("wrong body type", func(t *testing.T) {
		m := &Message{Kind: TypeActiveMQBytesMessage}
		if _, _, err := m.Text(Limits{}); !errors.Is(err, ErrWrongBodyType) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("text length beyond body", func(t *testing.T) {
		m := &Message{Kind: TypeActiveMQTextMessage, Content: []byte{0, 0, 0, 9, 'a'}}
		if _, _, err := m.Text(Limits{}); !errors.Is(err, ErrCorruptBody) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestOpenWireWireRawKept: a decoded message keeps its frame, content and
// property bytes unchanged for forwarding and storage.
func TestOpenWireWireRawKept(t *testing.T) {
	m := sampleCommands(12)[sampleTextIndex].(*Message)
	f := StoreFormat()
	b, err := Marshal(m, f)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := Unmarshal(b, f, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got := ds.(*Message)
	if string(got.Raw) != string(b[4:]) || string(got.Content) != string(m.Content) ||
		string(got.MarshalledProperties) != string(m.MarshalledProperties) {
		t.Fatal("raw, content or properties bytes changed")
	}
}
