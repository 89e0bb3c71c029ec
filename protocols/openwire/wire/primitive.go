package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
)

// Primitive maps and values (MarshallingSupport): message properties,
// MapMessage and StreamMessage bodies, and WireFormatInfo options.
//
// Go value types per type tag:
//
//	0 null nil          5 int    int32      10 byte[]     []byte
//	1 boolean bool      6 long   int64      11 map        map[string]any
//	2 byte   int8       7 double float64    12 list       []any
//	3 char   Char       8 float  float32    9/13 string   string
//	4 short  int16
//
// Strings shorter than 8191 UTF-16 units use tag 9 (u16 length), longer ones
// tag 13 (int32 length), as MarshallingSupport.marshalString.

// Primitive type tags.
const (
	PrimitiveNull      byte = 0
	PrimitiveBoolean   byte = 1
	PrimitiveByte      byte = 2
	PrimitiveChar      byte = 3
	PrimitiveShort     byte = 4
	PrimitiveInt       byte = 5
	PrimitiveLong      byte = 6
	PrimitiveDouble    byte = 7
	PrimitiveFloat     byte = 8
	PrimitiveString    byte = 9
	PrimitiveByteArray byte = 10
	PrimitiveMap       byte = 11
	PrimitiveList      byte = 12
	PrimitiveBigString byte = 13
)

// bigStringUnits is Short.MAX_VALUE / 4: strings with at least this many
// UTF-16 units use the big-string form.
const bigStringUnits = 1<<15/4 - 1

// Char is a Java char value (tag 3), a UTF-16 code unit.
type Char uint16

// AppendUTF appends s as Java DataOutput.writeUTF: u16 byte length and
// modified UTF-8.
func AppendUTF(dst []byte, s string) ([]byte, error) {
	n := ModifiedUTF8Len(s)
	if n > 0xFFFF {
		return dst, ErrStringTooLong
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(n))
	return AppendModifiedUTF8(dst, s), nil
}

// AppendUTF8 appends s as MarshallingSupport.writeUTF8: int32 byte length
// and modified UTF-8 (the TextMessage body and tag-13 form).
func AppendUTF8(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(ModifiedUTF8Len(s)))
	return AppendModifiedUTF8(dst, s)
}

// AppendPrimitiveMap appends a primitive map: int32 count (-1 for a nil
// map), then key (writeUTF) and tagged value per entry. Keys are written in
// sorted order so output is deterministic.
func AppendPrimitiveMap(dst []byte, m map[string]any) ([]byte, error) {
	return appendMap(dst, m, 0)
}

func appendMap(dst []byte, m map[string]any, depth int) ([]byte, error) {
	if m == nil {
		return binary.BigEndian.AppendUint32(dst, 0xFFFFFFFF), nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(keys)))
	var err error
	for _, k := range keys {
		if dst, err = AppendUTF(dst, k); err != nil {
			return dst, fmt.Errorf("key %.32q: %w", k, err)
		}
		if dst, err = appendPrimitive(dst, m[k], depth); err != nil {
			return dst, fmt.Errorf("key %.32q: %w", k, err)
		}
	}
	return dst, nil
}

// AppendPrimitive appends one tagged value.
func AppendPrimitive(dst []byte, v any) ([]byte, error) { return appendPrimitive(dst, v, 0) }

func appendPrimitive(dst []byte, v any, depth int) ([]byte, error) {
	if depth > maxEncodeDepth {
		return dst, ErrTooDeep
	}
	be := binary.BigEndian
	switch x := v.(type) {
	case nil:
		return append(dst, PrimitiveNull), nil
	case bool:
		b := byte(0)
		if x {
			b = 1
		}
		return append(dst, PrimitiveBoolean, b), nil
	case int8:
		return append(dst, PrimitiveByte, byte(x)), nil
	case Char:
		return be.AppendUint16(append(dst, PrimitiveChar), uint16(x)), nil
	case int16:
		return be.AppendUint16(append(dst, PrimitiveShort), uint16(x)), nil
	case int32:
		return be.AppendUint32(append(dst, PrimitiveInt), uint32(x)), nil
	case int64:
		return be.AppendUint64(append(dst, PrimitiveLong), uint64(x)), nil
	case float64:
		return be.AppendUint64(append(dst, PrimitiveDouble), math.Float64bits(x)), nil
	case float32:
		return be.AppendUint32(append(dst, PrimitiveFloat), math.Float32bits(x)), nil
	case string:
		if UTF16Len(x) < bigStringUnits {
			return AppendUTF(append(dst, PrimitiveString), x)
		}
		return AppendUTF8(append(dst, PrimitiveBigString), x), nil
	case []byte:
		if int64(len(x)) > math.MaxInt32 {
			return dst, ErrBodyTooLarge
		}
		dst = be.AppendUint32(append(dst, PrimitiveByteArray), uint32(len(x)))
		return append(dst, x...), nil
	case map[string]any:
		if x == nil {
			return append(dst, PrimitiveNull), nil
		}
		return appendMap(append(dst, PrimitiveMap), x, depth+1)
	case []any:
		if x == nil {
			return append(dst, PrimitiveNull), nil
		}
		dst = be.AppendUint32(append(dst, PrimitiveList), uint32(len(x)))
		var err error
		for _, e := range x {
			if dst, err = appendPrimitive(dst, e, depth+1); err != nil {
				return dst, err
			}
		}
		return dst, nil
	}
	return dst, fmt.Errorf("%w: %T", ErrUnsupportedPrimitive, v)
}

// primReader decodes MarshallingSupport data with limits.
type primReader struct {
	b   []byte
	pos int
	lim Limits
}

func (r *primReader) take(n int) ([]byte, error) {
	if n < 0 {
		return nil, ErrNegativeLength
	}
	if len(r.b)-r.pos < n {
		return nil, ErrTruncated
	}
	b := r.b[r.pos : r.pos+n : r.pos+n]
	r.pos += n
	return b, nil
}

func (r *primReader) u16() (uint16, error) {
	b, err := r.take(2)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint16(b), nil
}

func (r *primReader) u32() (uint32, error) {
	b, err := r.take(4)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(b), nil
}

func (r *primReader) utf(n int) (string, error) {
	b, err := r.take(n)
	if err != nil {
		return "", err
	}
	return DecodeModifiedUTF8(b)
}

func (r *primReader) readMap(depth int) (map[string]any, error) {
	if depth > r.lim.MaxNestingDepth {
		return nil, ErrTooDeep
	}
	n32, err := r.u32()
	if err != nil {
		return nil, err
	}
	n := int(int32(n32))
	if n < 0 {
		return nil, nil
	}
	if n > r.lim.MaxMapEntries {
		return nil, fmt.Errorf("%w: map of %d entries", ErrTooManyElements, n)
	}
	if n*3 > len(r.b)-r.pos { // u16 key length and a tag at least
		return nil, ErrTruncated
	}
	m := make(map[string]any, n)
	for i := 0; i < n; i++ {
		kl, err := r.u16()
		if err != nil {
			return nil, err
		}
		k, err := r.utf(int(kl))
		if err != nil {
			return nil, err
		}
		v, err := r.readValue(depth)
		if err != nil {
			return nil, fmt.Errorf("key %.32q: %w", k, err)
		}
		m[k] = v
	}
	return m, nil
}

func (r *primReader) readValue(depth int) (any, error) {
	tb, err := r.take(1)
	if err != nil {
		return nil, err
	}
	fixed := func(n int) []byte {
		b, e := r.take(n)
		err = e
		return b
	}
	switch t := tb[0]; t {
	case PrimitiveNull:
		return nil, nil
	case PrimitiveBoolean:
		if b := fixed(1); b != nil {
			return b[0] != 0, nil
		}
	case PrimitiveByte:
		if b := fixed(1); b != nil {
			return int8(b[0]), nil
		}
	case PrimitiveChar:
		if b := fixed(2); b != nil {
			return Char(binary.BigEndian.Uint16(b)), nil
		}
	case PrimitiveShort:
		if b := fixed(2); b != nil {
			return int16(binary.BigEndian.Uint16(b)), nil
		}
	case PrimitiveInt:
		if b := fixed(4); b != nil {
			return int32(binary.BigEndian.Uint32(b)), nil
		}
	case PrimitiveLong:
		if b := fixed(8); b != nil {
			return int64(binary.BigEndian.Uint64(b)), nil
		}
	case PrimitiveDouble:
		if b := fixed(8); b != nil {
			return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
		}
	case PrimitiveFloat:
		if b := fixed(4); b != nil {
			return math.Float32frombits(binary.BigEndian.Uint32(b)), nil
		}
	case PrimitiveString:
		n, err := r.u16()
		if err != nil {
			return nil, err
		}
		return r.utf(int(n))
	case PrimitiveBigString:
		n, err := r.u32()
		if err != nil {
			return nil, err
		}
		return r.utf(int(int32(n)))
	case PrimitiveByteArray:
		n, err := r.u32()
		if err != nil {
			return nil, err
		}
		b, err := r.take(int(int32(n)))
		if err != nil {
			return nil, err
		}
		return append([]byte{}, b...), nil
	case PrimitiveMap:
		m, err := r.readMap(depth + 1)
		if err != nil {
			return nil, err
		}
		if m == nil {
			return nil, nil
		}
		return m, nil
	case PrimitiveList:
		if depth+1 > r.lim.MaxNestingDepth {
			return nil, ErrTooDeep
		}
		n32, err := r.u32()
		if err != nil {
			return nil, err
		}
		n := int(int32(n32))
		if n < 0 {
			return nil, ErrNegativeLength
		}
		if n > r.lim.MaxMapEntries {
			return nil, fmt.Errorf("%w: list of %d elements", ErrTooManyElements, n)
		}
		if n > len(r.b)-r.pos {
			return nil, ErrTruncated
		}
		l := make([]any, n)
		for i := range l {
			if l[i], err = r.readValue(depth + 1); err != nil {
				return nil, err
			}
		}
		return l, nil
	default:
		return nil, fmt.Errorf("%w: %d", ErrUnknownPrimitiveType, t)
	}
	return nil, err
}

// UnmarshalPrimitiveMap decodes a primitive map; a count of -1 is a nil map.
// Trailing bytes are ignored, as MarshallingSupport does.
func UnmarshalPrimitiveMap(b []byte, lim Limits) (map[string]any, error) {
	r := primReader{b: b, lim: lim.withDefaults()}
	return r.readMap(0)
}

// UnmarshalPrimitive decodes one tagged value and returns the bytes it used.
func UnmarshalPrimitive(b []byte, lim Limits) (any, int, error) {
	r := primReader{b: b, lim: lim.withDefaults()}
	v, err := r.readValue(0)
	return v, r.pos, err
}
