package wire

import (
	"bytes"
	"errors"
	"testing"
)

func TestOpenWireWireModifiedUTF8(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		javaB []byte // Java writeUTF bytes without the length
		units int
	}{
		{"empty", "", nil, 0},
		{"ascii", "abc", []byte("abc"), 3},
		{"nul is C0 80", "a\x00b", []byte{'a', 0xc0, 0x80, 'b'}, 3},
		{"two-byte", "\u00e9", []byte{0xc3, 0xa9}, 1},
		{"three-byte BMP", "\u4e16", []byte{0xe4, 0xb8, 0x96}, 1},
		{"emoji is a surrogate pair", "\U0001F600", []byte{0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80}, 2},
		{"max BMP", "\uffff", []byte{0xef, 0xbf, 0xbf}, 1},
		{"lone surrogate kept as WTF-8", "\xed\xa0\x80", []byte{0xed, 0xa0, 0x80}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := AppendModifiedUTF8(nil, tc.in)
			if !bytes.Equal(got, tc.javaB) {
				t.Fatalf("encode %q = %x, want %x", tc.in, got, tc.javaB)
			}
			if n := ModifiedUTF8Len(tc.in); n != len(tc.javaB) {
				t.Errorf("ModifiedUTF8Len = %d, want %d", n, len(tc.javaB))
			}
			if n := UTF16Len(tc.in); n != tc.units {
				t.Errorf("UTF16Len = %d, want %d", n, tc.units)
			}
			back, err := DecodeModifiedUTF8(tc.javaB)
			if err != nil || back != tc.in {
				t.Fatalf("decode = %q, %v; want %q", back, err, tc.in)
			}
		})
	}
	t.Run("invalid Go UTF-8 becomes U+FFFD", func(t *testing.T) {
		if got := AppendModifiedUTF8(nil, "a\xffb"); !bytes.Equal(got, []byte{'a', 0xef, 0xbf, 0xbd, 'b'}) {
			t.Fatalf("got %x", got)
		}
	})
	t.Run("raw NUL and overlong forms decode like Java", func(t *testing.T) {
		got, err := DecodeModifiedUTF8([]byte{0x00, 0xc1, 0x81})
		if err != nil || got != "\x00A" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	for _, bad := range [][]byte{
		{0x80},                   // stray continuation
		{0xc3},                   // truncated 2-byte
		{0xe4, 0xb8},             // truncated 3-byte
		{0xe4, 0x38, 0x96},       // bad continuation
		{0xf0, 0x9f, 0x98, 0x80}, // 4-byte UTF-8 is not modified UTF-8
		{0xff},
	} {
		if _, err := DecodeModifiedUTF8(bad); !errors.Is(err, ErrInvalidUTF8) {
			t.Errorf("DecodeModifiedUTF8(%x) err = %v, want ErrInvalidUTF8", bad, err)
		}
	}
}

func TestOpenWireWireBooleanStreamHeader(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 255, 256, 4000} {
		var w bitWriter
		for i := 0; i < n*8; i++ {
			w.write(i%3 == 0)
		}
		b := w.appendTo(nil)
		if len(b) != w.marshalledSize() {
			t.Fatalf("%d bytes: marshalledSize %d, wrote %d", n, w.marshalledSize(), len(b))
		}
		r, used, err := parseBits(b)
		if err != nil || used != len(b) {
			t.Fatalf("%d bytes: parse used %d of %d: %v", n, used, len(b), err)
		}
		for i := 0; i < n*8; i++ {
			if v, ok := r.read(); !ok || v != (i%3 == 0) {
				t.Fatalf("%d bytes: bit %d = %v,%v", n, i, v, ok)
			}
		}
		if _, ok := r.read(); ok {
			t.Fatalf("%d bytes: read past the end", n)
		}
	}
}
