package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"
)

// Format codes (AMQP 1.0 §1.6 and the encoding table of amqp.xml).
const (
	codeDescribed  = 0x00
	codeNull       = 0x40
	codeTrue       = 0x41
	codeFalse      = 0x42
	codeUint0      = 0x43
	codeUlong0     = 0x44
	codeList0      = 0x45
	codeUbyte      = 0x50
	codeByte       = 0x51
	codeSmallUint  = 0x52
	codeSmallUlong = 0x53
	codeSmallInt   = 0x54
	codeSmallLong  = 0x55
	codeBool       = 0x56
	codeUshort     = 0x60
	codeShort      = 0x61
	codeUint       = 0x70
	codeInt        = 0x71
	codeFloat      = 0x72
	codeChar       = 0x73
	codeDecimal32  = 0x74
	codeUlong      = 0x80
	codeLong       = 0x81
	codeDouble     = 0x82
	codeTimestamp  = 0x83
	codeDecimal64  = 0x84
	codeDecimal128 = 0x94
	codeUUID       = 0x98
	codeVbin8      = 0xa0
	codeStr8       = 0xa1
	codeSym8       = 0xa3
	codeVbin32     = 0xb0
	codeStr32      = 0xb1
	codeSym32      = 0xb3
	codeList8      = 0xc0
	codeMap8       = 0xc1
	codeList32     = 0xd0
	codeMap32      = 0xd1
	codeArray8     = 0xe0
	codeArray32    = 0xf0
)

// typeOfCode returns the type a constructor encodes, or 0 if the code is
// not a primitive constructor.
func typeOfCode(c byte) Type {
	switch c {
	case codeNull:
		return TypeNull
	case codeTrue, codeFalse, codeBool:
		return TypeBoolean
	case codeUbyte:
		return TypeUbyte
	case codeUshort:
		return TypeUshort
	case codeUint, codeSmallUint, codeUint0:
		return TypeUint
	case codeUlong, codeSmallUlong, codeUlong0:
		return TypeUlong
	case codeByte:
		return TypeByte
	case codeShort:
		return TypeShort
	case codeInt, codeSmallInt:
		return TypeInt
	case codeLong, codeSmallLong:
		return TypeLong
	case codeFloat:
		return TypeFloat
	case codeDouble:
		return TypeDouble
	case codeDecimal32:
		return TypeDecimal32
	case codeDecimal64:
		return TypeDecimal64
	case codeDecimal128:
		return TypeDecimal128
	case codeChar:
		return TypeChar
	case codeTimestamp:
		return TypeTimestamp
	case codeUUID:
		return TypeUUID
	case codeVbin8, codeVbin32:
		return TypeBinary
	case codeStr8, codeStr32:
		return TypeString
	case codeSym8, codeSym32:
		return TypeSymbol
	case codeList0, codeList8, codeList32:
		return TypeList
	case codeMap8, codeMap32:
		return TypeMap
	case codeArray8, codeArray32:
		return TypeArray
	}
	return 0
}

// minWidth is the fewest bytes one value takes after the constructor code
// c; used to check an array's count against its size before allocating.
func minWidth(c byte) int {
	switch c {
	case codeNull, codeTrue, codeFalse, codeUint0, codeUlong0, codeList0:
		return 0
	case codeUbyte, codeByte, codeSmallUint, codeSmallUlong, codeSmallInt, codeSmallLong, codeBool,
		codeVbin8, codeStr8, codeSym8:
		return 1
	case codeUshort, codeShort, codeList8, codeMap8:
		return 2
	case codeArray8:
		return 3 // size, count, element constructor
	case codeUint, codeInt, codeFloat, codeChar, codeDecimal32, codeVbin32, codeStr32, codeSym32:
		return 4
	case codeUlong, codeLong, codeDouble, codeTimestamp, codeDecimal64, codeList32, codeMap32:
		return 8
	case codeArray32:
		return 9
	case codeDecimal128, codeUUID:
		return 16
	}
	return 1
}

// reader decodes values from b. Compound values narrow b to their own end
// while their contents are read, so a nested length is never checked
// against bytes that belong to a sibling.
type reader struct {
	b        []byte
	i        int
	depth    int // current nesting: described values, lists, maps, arrays
	maxDepth int
	maxCount int
	zeroLeft int  // zero-width array elements still allowed (see Limits)
	alias    bool // binary values may alias b instead of being copied
	// arena, when not nil, provides the top-level transfer or disposition
	// (Decoder.ReuseBodies).
	arena *bodyArena
}

func newReader(b []byte, l *Limits, alias bool) reader {
	return reader{b: b, maxDepth: l.MaxNesting, maxCount: l.MaxContainerCount, zeroLeft: l.MaxContainerCount, alias: alias}
}

func (r *reader) malformed(format string, args ...any) *Error {
	return newError(ErrCondDecodeError, ErrMalformed, format, args...)
}

func (r *reader) truncated(what string) *Error {
	return r.malformed("%s at offset %d runs past the end of its container", what, r.i)
}

// enter counts one level of nesting; leave must follow.
func (r *reader) enter() error {
	r.depth++
	if r.depth > r.maxDepth {
		return newError(ErrCondDecodeError, ErrNestingTooDeep, "values nested more than %d deep", r.maxDepth)
	}
	return nil
}

func (r *reader) leave() { r.depth-- }

func (r *reader) left() int { return len(r.b) - r.i }

func (r *reader) byte1() (byte, error) {
	if r.i >= len(r.b) {
		return 0, r.truncated("value")
	}
	c := r.b[r.i]
	r.i++
	return c, nil
}

func (r *reader) next(n int, what string) ([]byte, error) {
	if n > len(r.b)-r.i || n < 0 {
		return nil, r.truncated(what)
	}
	s := r.b[r.i : r.i+n]
	r.i += n
	return s, nil
}

func (r *reader) u16() (uint16, error) {
	s, err := r.next(2, "ushort")
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint16(s), nil
}

func (r *reader) u32(what string) (uint32, error) {
	s, err := r.next(4, what)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(s), nil
}

func (r *reader) u64(what string) (uint64, error) {
	s, err := r.next(8, what)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint64(s), nil
}

// value decodes one value with its constructor.
func (r *reader) value() (any, error) {
	c, err := r.byte1()
	if err != nil {
		return nil, err
	}
	if c == codeDescribed {
		return r.described()
	}
	return r.primitive(c)
}

// described decodes a described value after its 0x00.
func (r *reader) described() (any, error) {
	if err := r.enter(); err != nil {
		return nil, err
	}
	defer r.leave()
	d, err := r.descriptor()
	if err != nil {
		return nil, err
	}
	v, err := r.value()
	if err != nil {
		return nil, err
	}
	return Described{Descriptor: d, Value: v}, nil
}

// descriptor reads a descriptor: a ulong code or a symbol.
//
// AMQP 1.0 §1.5 allows any value as a descriptor but reserves everything
// other than symbolic and numeric descriptors; every real peer uses those
// two, so anything else is refused.
func (r *reader) descriptor() (any, error) {
	at := r.i
	c, err := r.byte1()
	if err != nil {
		return nil, err
	}
	switch c {
	case codeUlong0, codeSmallUlong, codeUlong:
		return r.ulongOf(c)
	case codeSym8, codeSym32:
		return r.symbolOf(c)
	}
	return nil, r.malformed("descriptor at offset %d has constructor 0x%02x; want ulong or symbol", at, c)
}

// primitive decodes the value after constructor c (which is not 0x00).
func (r *reader) primitive(c byte) (any, error) {
	switch c {
	case codeNull:
		return nil, nil
	case codeTrue, codeFalse, codeBool:
		return r.boolOf(c)
	case codeUbyte:
		s, err := r.next(1, "ubyte")
		if err != nil {
			return nil, err
		}
		return s[0], nil
	case codeUshort:
		return r.u16()
	case codeUint, codeSmallUint, codeUint0:
		return r.uintOf(c)
	case codeUlong, codeSmallUlong, codeUlong0:
		return r.ulongOf(c)
	case codeByte:
		s, err := r.next(1, "byte")
		if err != nil {
			return nil, err
		}
		return int8(s[0]), nil
	case codeShort:
		v, err := r.u16()
		return int16(v), err
	case codeInt, codeSmallInt:
		if c == codeSmallInt {
			s, err := r.next(1, "smallint")
			if err != nil {
				return nil, err
			}
			return int32(int8(s[0])), nil
		}
		v, err := r.u32("int")
		return int32(v), err
	case codeLong, codeSmallLong:
		if c == codeSmallLong {
			s, err := r.next(1, "smalllong")
			if err != nil {
				return nil, err
			}
			return int64(int8(s[0])), nil
		}
		v, err := r.u64("long")
		return int64(v), err
	case codeFloat:
		v, err := r.u32("float")
		return math.Float32frombits(v), err
	case codeDouble:
		v, err := r.u64("double")
		return math.Float64frombits(v), err
	case codeDecimal32:
		s, err := r.next(4, "decimal32")
		if err != nil {
			return nil, err
		}
		return Decimal32(s), nil
	case codeDecimal64:
		s, err := r.next(8, "decimal64")
		if err != nil {
			return nil, err
		}
		return Decimal64(s), nil
	case codeDecimal128:
		s, err := r.next(16, "decimal128")
		if err != nil {
			return nil, err
		}
		return Decimal128(s), nil
	case codeChar:
		at := r.i
		v, err := r.u32("char")
		if err != nil {
			return nil, err
		}
		// §1.6.16: a char is a Unicode code point; surrogates and values
		// past U+10FFFF are not (Proton-J does not check).
		if !utf8.ValidRune(rune(v)) || v > utf8.MaxRune {
			return nil, r.malformed("char 0x%x at offset %d is not a Unicode scalar value", v, at)
		}
		return Char(v), nil
	case codeTimestamp:
		v, err := r.u64("timestamp")
		return Timestamp(v), err
	case codeUUID:
		s, err := r.next(16, "uuid")
		if err != nil {
			return nil, err
		}
		return UUID(s), nil
	case codeVbin8, codeVbin32:
		return r.binaryOf(c)
	case codeStr8, codeStr32:
		return r.stringOf(c)
	case codeSym8, codeSym32:
		return r.symbolOf(c)
	case codeList0, codeList8, codeList32:
		return r.listOf(c)
	case codeMap8, codeMap32:
		return r.mapOf(c, nil)
	case codeArray8, codeArray32:
		return r.arrayOf(c)
	}
	return nil, r.malformed("unknown constructor 0x%02x at offset %d", c, r.i-1)
}

func (r *reader) boolOf(c byte) (bool, error) {
	switch c {
	case codeTrue:
		return true, nil
	case codeFalse:
		return false, nil
	}
	at := r.i
	s, err := r.next(1, "boolean")
	if err != nil {
		return false, err
	}
	// AMQP 1.0 §1.6.2: 0x00 is false and 0x01 is true; nothing else is.
	// DEVIATION: Proton-J (so ActiveMQ) reads any non-zero byte as true.
	// No client writes other bytes, and refusing them keeps decoding
	// one-to-one.
	switch s[0] {
	case 0:
		return false, nil
	case 1:
		return true, nil
	}
	return false, r.malformed("boolean byte 0x%02x at offset %d is neither 0x00 nor 0x01", s[0], at)
}

func (r *reader) uintOf(c byte) (uint32, error) {
	switch c {
	case codeUint0:
		return 0, nil
	case codeSmallUint:
		s, err := r.next(1, "smalluint")
		if err != nil {
			return 0, err
		}
		return uint32(s[0]), nil
	}
	return r.u32("uint")
}

func (r *reader) ulongOf(c byte) (uint64, error) {
	switch c {
	case codeUlong0:
		return 0, nil
	case codeSmallUlong:
		s, err := r.next(1, "smallulong")
		if err != nil {
			return 0, err
		}
		return uint64(s[0]), nil
	}
	return r.u64("ulong")
}

// varBytes reads the length and bytes of a variable-width value.
func (r *reader) varBytes(c byte, what string) ([]byte, error) {
	var n int
	if c&0xf0 == 0xa0 {
		s, err := r.next(1, what)
		if err != nil {
			return nil, err
		}
		n = int(s[0])
	} else {
		v, err := r.u32(what)
		if err != nil {
			return nil, err
		}
		if int64(v) > int64(r.left()) {
			return nil, r.truncated(what)
		}
		n = int(v)
	}
	return r.next(n, what)
}

func (r *reader) binaryOf(c byte) ([]byte, error) {
	s, err := r.varBytes(c, "binary")
	if err != nil {
		return nil, err
	}
	if r.alias {
		return s[:len(s):len(s)], nil
	}
	return append(make([]byte, 0, len(s)), s...), nil
}

func (r *reader) stringOf(c byte) (string, error) {
	at := r.i
	s, err := r.varBytes(c, "string")
	if err != nil {
		return "", err
	}
	// AMQP 1.0 §1.6.20: strings are UTF-8; anything else cannot be decoded.
	// DEVIATION: Proton-J replaces malformed sequences with U+FFFD and
	// carries on; a broker that silently rewrites a string (a property
	// used by a selector, an address) is worse than one that says why it
	// refuses the frame.
	if !utf8.Valid(s) {
		return "", r.malformed("string at offset %d is not valid UTF-8", at)
	}
	return string(s), nil
}

func (r *reader) symbolOf(c byte) (Symbol, error) {
	at := r.i
	s, err := r.varBytes(c, "symbol")
	if err != nil {
		return "", err
	}
	// AMQP 1.0 §1.6.21: symbols are ASCII. DEVIATION: Proton-J replaces
	// non-ASCII bytes; see stringOf.
	for _, b := range s {
		if b >= 0x80 {
			return "", r.malformed("symbol at offset %d has the non-ASCII byte 0x%02x", at, b)
		}
	}
	return Symbol(s), nil
}

// compound reads the size and count of a list, map or array after its
// constructor, checks them against the bytes present and the limits, and
// narrows r.b to the compound's end. It returns the count and the b to
// restore. minElem is the fewest bytes one element takes (0 for arrays,
// which check their element width themselves).
func (r *reader) compound(c byte, what string, minElem int) (count int, saved []byte, err error) {
	at := r.i - 1
	var size, n uint64
	wide := c&0xf0 == 0xd0 || c == codeArray32
	if wide {
		s, err := r.next(8, what)
		if err != nil {
			return 0, nil, err
		}
		size, n = uint64(binary.BigEndian.Uint32(s)), uint64(binary.BigEndian.Uint32(s[4:]))
		if size < 4 {
			return 0, nil, r.malformed("%s at offset %d has size %d, too small for its count", what, at, size)
		}
		size -= 4
	} else {
		s, err := r.next(2, what)
		if err != nil {
			return 0, nil, err
		}
		size, n = uint64(s[0]), uint64(s[1])
		if size < 1 {
			return 0, nil, r.malformed("%s at offset %d has size 0, too small for its count", what, at)
		}
		size--
	}
	if size > uint64(r.left()) {
		return 0, nil, r.malformed("%s at offset %d has size %d but only %d bytes follow", what, at, size, r.left())
	}
	if n > uint64(r.maxCount) {
		return 0, nil, newError(ErrCondDecodeError, ErrTooManyElements,
			"%s at offset %d has %d elements; the limit is %d", what, at, n, r.maxCount)
	}
	if minElem > 0 && n*uint64(minElem) > size {
		return 0, nil, r.malformed("%s at offset %d claims %d elements in %d bytes", what, at, n, size)
	}
	saved = r.b
	r.b = r.b[:r.i+int(size)]
	return int(n), saved, nil
}

// done checks that a compound used exactly its size and restores r.b.
func (r *reader) done(saved []byte, what string) error {
	if extra := len(r.b) - r.i; extra != 0 {
		r.b = saved
		return r.malformed("%s has %d bytes left over after its last element at offset %d", what, extra, r.i)
	}
	r.b = saved
	return nil
}

func (r *reader) listOf(c byte) ([]any, error) {
	if c == codeList0 {
		return []any{}, nil
	}
	n, saved, err := r.compound(c, "list", 1)
	if err != nil {
		return nil, err
	}
	if err := r.enter(); err != nil {
		return nil, err
	}
	l := make([]any, n)
	for i := range l {
		if l[i], err = r.value(); err != nil {
			return nil, err
		}
	}
	r.leave()
	return l, r.done(saved, "list")
}

// mapOf decodes a map. When keyOK is set every key must pass it (the typed
// decoders use this for fields, annotations and application-properties).
func (r *reader) mapOf(c byte, keyOK func(any) bool) (*Map, error) {
	at := r.i - 1
	n, saved, err := r.compound(c, "map", 1)
	if err != nil {
		return nil, err
	}
	// AMQP 1.0 §1.6.23: a map is a sequence of key/value pairs, so its
	// element count is even.
	if n%2 != 0 {
		r.b = saved
		return nil, r.malformed("map at offset %d has an odd element count %d", at, n)
	}
	if err := r.enter(); err != nil {
		return nil, err
	}
	m := &Map{}
	if n > 0 {
		m.Entries = make([]MapEntry, n/2)
	}
	for i := range m.Entries {
		kat := r.i
		if m.Entries[i].Key, err = r.value(); err != nil {
			return nil, err
		}
		if keyOK != nil && !keyOK(m.Entries[i].Key) {
			return nil, newError(ErrCondDecodeError, ErrInvalidField, "map key %s at offset %d has a type not allowed here", describe(m.Entries[i].Key), kat)
		}
		if m.Entries[i].Value, err = r.value(); err != nil {
			return nil, err
		}
	}
	r.leave()
	return m, r.done(saved, "map")
}

func (r *reader) arrayOf(c byte) (Array, error) {
	at := r.i - 1
	n, saved, err := r.compound(c, "array", 0)
	if err != nil {
		return Array{}, err
	}
	if err := r.enter(); err != nil {
		return Array{}, err
	}
	var a Array
	ec, err := r.byte1()
	if err != nil {
		return Array{}, r.malformed("array at offset %d has no element constructor", at)
	}
	if ec == codeDescribed {
		if a.Descriptor, err = r.descriptor(); err != nil {
			return Array{}, err
		}
		if ec, err = r.byte1(); err != nil {
			return Array{}, r.malformed("array at offset %d has no element constructor after its descriptor", at)
		}
		if ec == codeDescribed {
			// The grammar allows a described element constructor to be
			// described again; no peer does it and it has no Array form.
			return Array{}, r.malformed("array at offset %d has a doubly described element constructor", at)
		}
	}
	if a.Type = typeOfCode(ec); a.Type == 0 {
		return Array{}, r.malformed("array at offset %d has unknown element constructor 0x%02x", at, ec)
	}
	if w := minWidth(ec); w > 0 {
		if uint64(n)*uint64(w) > uint64(r.left()) {
			return Array{}, r.malformed("array at offset %d claims %d elements of at least %d bytes in %d bytes", at, n, w, r.left())
		}
	} else {
		// Elements without data cost no input, so only a running budget
		// keeps a few bytes from turning into millions of values.
		if n > r.zeroLeft {
			return Array{}, newError(ErrCondDecodeError, ErrTooManyElements,
				"array at offset %d has %d elements without data; the limit for one value is %d in all", at, n, r.maxCount)
		}
		r.zeroLeft -= n
	}
	a.Elems = make([]any, n)
	for i := range a.Elems {
		if a.Elems[i], err = r.primitive(ec); err != nil {
			return Array{}, err
		}
	}
	r.leave()
	return a, r.done(saved, "array")
}

// describe names the type of a decoded value for error messages.
func describe(v any) string {
	if t, ok := TypeOf(v); ok {
		return t.String()
	}
	if _, ok := v.(Described); ok {
		return "described value"
	}
	return fmt.Sprintf("%T", v)
}

// DecodeValue decodes one value from the start of b and returns it with the
// number of bytes it took. Compound values are checked against l (zero
// fields take the DefaultLimits values). Binary values are copied, so the
// result does not alias b.
func DecodeValue(b []byte, l Limits) (v any, n int, err error) {
	l = l.withDefaults()
	r := newReader(b, &l, false)
	v, err = r.value()
	if err != nil {
		return nil, 0, err
	}
	return v, r.i, nil
}
