package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// AppendValue appends the encoding of v to dst and returns the extended
// slice. v must be a value of the model (see the package documentation) or
// a Composite; each is written in its smallest encoding (AMQP 1.0 §1.3:
// uint 0 as uint0, small values as smalluint, short strings as str8, lists
// and maps as list8/map8 when they fit).
//
// AppendValue panics on a Go value outside the model, on an Array whose
// elements do not match its Type and on a descriptor that is neither uint64
// nor Symbol: these are bugs in the caller, not input errors. Values
// decoded by this package never cause a panic.
func AppendValue(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, codeNull)
	case bool:
		if x {
			return append(dst, codeTrue)
		}
		return append(dst, codeFalse)
	case uint8:
		return append(dst, codeUbyte, x)
	case uint16:
		return binary.BigEndian.AppendUint16(append(dst, codeUshort), x)
	case uint32:
		return appendUint(dst, x)
	case uint64:
		return appendUlong(dst, x)
	case int8:
		return append(dst, codeByte, byte(x))
	case int16:
		return binary.BigEndian.AppendUint16(append(dst, codeShort), uint16(x))
	case int32:
		if x >= math.MinInt8 && x <= math.MaxInt8 {
			return append(dst, codeSmallInt, byte(x))
		}
		return binary.BigEndian.AppendUint32(append(dst, codeInt), uint32(x))
	case int64:
		if x >= math.MinInt8 && x <= math.MaxInt8 {
			return append(dst, codeSmallLong, byte(x))
		}
		return binary.BigEndian.AppendUint64(append(dst, codeLong), uint64(x))
	case float32:
		return binary.BigEndian.AppendUint32(append(dst, codeFloat), math.Float32bits(x))
	case float64:
		return binary.BigEndian.AppendUint64(append(dst, codeDouble), math.Float64bits(x))
	case Decimal32:
		return append(append(dst, codeDecimal32), x[:]...)
	case Decimal64:
		return append(append(dst, codeDecimal64), x[:]...)
	case Decimal128:
		return append(append(dst, codeDecimal128), x[:]...)
	case Char:
		return binary.BigEndian.AppendUint32(append(dst, codeChar), uint32(x))
	case Timestamp:
		return binary.BigEndian.AppendUint64(append(dst, codeTimestamp), uint64(x))
	case UUID:
		return append(append(dst, codeUUID), x[:]...)
	case []byte:
		return appendBinary(dst, x)
	case string:
		return appendString(dst, x)
	case Symbol:
		return appendSymbol(dst, x)
	case []any:
		return appendList(dst, x)
	case *Map:
		if x == nil {
			return append(dst, codeNull)
		}
		return appendMap(dst, x)
	case Array:
		return appendArray(dst, x)
	case Described:
		dst = append(dst, codeDescribed)
		dst = appendDescriptor(dst, x.Descriptor)
		return AppendValue(dst, x.Value)
	case Composite:
		return x.appendComposite(dst)
	}
	panic(fmt.Sprintf("wire: %T is not an AMQP value", v))
}

func appendUint(dst []byte, v uint32) []byte {
	switch {
	case v == 0:
		return append(dst, codeUint0)
	case v <= math.MaxUint8:
		return append(dst, codeSmallUint, byte(v))
	}
	return binary.BigEndian.AppendUint32(append(dst, codeUint), v)
}

func appendUlong(dst []byte, v uint64) []byte {
	switch {
	case v == 0:
		return append(dst, codeUlong0)
	case v <= math.MaxUint8:
		return append(dst, codeSmallUlong, byte(v))
	}
	return binary.BigEndian.AppendUint64(append(dst, codeUlong), v)
}

func appendVar(dst []byte, c8, c32 byte, s string) []byte {
	if len(s) <= math.MaxUint8 {
		return append(append(dst, c8, byte(len(s))), s...)
	}
	return append(binary.BigEndian.AppendUint32(append(dst, c32), uint32(len(s))), s...)
}

func appendBinary(dst []byte, b []byte) []byte {
	if len(b) <= math.MaxUint8 {
		return append(append(dst, codeVbin8, byte(len(b))), b...)
	}
	return append(binary.BigEndian.AppendUint32(append(dst, codeVbin32), uint32(len(b))), b...)
}

func appendString(dst []byte, s string) []byte { return appendVar(dst, codeStr8, codeStr32, s) }

func appendSymbol(dst []byte, s Symbol) []byte {
	return appendVar(dst, codeSym8, codeSym32, string(s))
}

func appendDescriptor(dst []byte, d any) []byte {
	switch x := d.(type) {
	case uint64:
		return appendUlong(dst, x)
	case Symbol:
		return appendSymbol(dst, x)
	}
	panic(fmt.Sprintf("wire: descriptor %T is neither uint64 nor Symbol", d))
}

// appendMillis appends a milliseconds field (uint) from a duration,
// truncated to the millisecond and clamped to the uint range.
func appendMillis(dst []byte, d time.Duration) []byte {
	return appendUint(dst, durationUnits(d, time.Millisecond))
}

func durationUnits(d, unit time.Duration) uint32 {
	n := d / unit
	switch {
	case n < 0:
		return 0
	case n > math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(n)
}

// compoundHeader is the 9-byte placeholder of a list32, map32 or array32:
// code, size, count. finishCompound fills it in or shrinks it.
const compoundHeader = 9

// beginCompound appends the placeholder of a 32-bit compound.
func beginCompound(dst []byte, c32 byte) ([]byte, int) {
	start := len(dst)
	return append(dst, c32, 0, 0, 0, 0, 0, 0, 0, 0), start
}

// finishCompound completes the compound begun at start with count elements
// in the bytes after its header: it becomes the 8-bit form when size and
// count fit in a byte (moving the body down 6 bytes), the 32-bit form
// otherwise.
func finishCompound(dst []byte, start, count int, c8 byte) []byte {
	body := len(dst) - start - compoundHeader
	if body+1 <= math.MaxUint8 && count <= math.MaxUint8 {
		dst[start] = c8
		dst[start+1] = byte(body + 1)
		dst[start+2] = byte(count)
		copy(dst[start+3:], dst[start+compoundHeader:])
		return dst[:len(dst)-6]
	}
	binary.BigEndian.PutUint32(dst[start+1:], uint32(body+4))
	binary.BigEndian.PutUint32(dst[start+5:], uint32(count))
	return dst
}

func appendList(dst []byte, l []any) []byte {
	if len(l) == 0 {
		return append(dst, codeList0)
	}
	dst, start := beginCompound(dst, codeList32)
	for _, v := range l {
		dst = AppendValue(dst, v)
	}
	return finishCompound(dst, start, len(l), codeList8)
}

func appendMap(dst []byte, m *Map) []byte {
	dst, start := beginCompound(dst, codeMap32)
	for i := range m.Entries {
		dst = AppendValue(dst, m.Entries[i].Key)
		dst = AppendValue(dst, m.Entries[i].Value)
	}
	return finishCompound(dst, start, 2*len(m.Entries), codeMap8)
}

// elemCode picks the element constructor of an array: the smallest one that
// holds every element and has a data width, so that each element is
// visible on the wire. Compound elements start in their 32-bit form;
// appendArrayContent shrinks them afterwards when it can.
func elemCode(a *Array) byte {
	switch a.Type {
	case TypeNull:
		return codeNull
	case TypeBoolean:
		return codeBool
	case TypeUbyte:
		return codeUbyte
	case TypeUshort:
		return codeUshort
	case TypeUint:
		for _, e := range a.Elems {
			if v, ok := e.(uint32); ok && v > math.MaxUint8 {
				return codeUint
			}
		}
		return codeSmallUint
	case TypeUlong:
		for _, e := range a.Elems {
			if v, ok := e.(uint64); ok && v > math.MaxUint8 {
				return codeUlong
			}
		}
		return codeSmallUlong
	case TypeByte:
		return codeByte
	case TypeShort:
		return codeShort
	case TypeInt:
		for _, e := range a.Elems {
			if v, ok := e.(int32); ok && (v < math.MinInt8 || v > math.MaxInt8) {
				return codeInt
			}
		}
		return codeSmallInt
	case TypeLong:
		for _, e := range a.Elems {
			if v, ok := e.(int64); ok && (v < math.MinInt8 || v > math.MaxInt8) {
				return codeLong
			}
		}
		return codeSmallLong
	case TypeFloat:
		return codeFloat
	case TypeDouble:
		return codeDouble
	case TypeDecimal32:
		return codeDecimal32
	case TypeDecimal64:
		return codeDecimal64
	case TypeDecimal128:
		return codeDecimal128
	case TypeChar:
		return codeChar
	case TypeTimestamp:
		return codeTimestamp
	case TypeUUID:
		return codeUUID
	case TypeBinary, TypeString, TypeSymbol:
		var c byte
		switch a.Type {
		case TypeBinary:
			c = codeVbin8
		case TypeString:
			c = codeStr8
		default:
			c = codeSym8
		}
		for _, e := range a.Elems {
			n := 0
			switch v := e.(type) {
			case []byte:
				n = len(v)
			case string:
				n = len(v)
			case Symbol:
				n = len(v)
			}
			if n > math.MaxUint8 {
				return c + 0x10 // vbin32, str32, sym32
			}
		}
		return c
	case TypeList:
		return codeList32
	case TypeMap:
		return codeMap32
	case TypeArray:
		return codeArray32
	}
	panic(fmt.Sprintf("wire: array of invalid type %d", a.Type))
}

func appendArray(dst []byte, a Array) []byte {
	dst, start := beginCompound(dst, codeArray32)
	dst = appendArrayContent(dst, &a)
	return finishCompound(dst, start, len(a.Elems), codeArray8)
}

// appendArrayContent appends what follows an array's size and count: the
// element constructor (with its descriptor) and the element data.
func appendArrayContent(dst []byte, a *Array) []byte {
	if a.Descriptor != nil {
		dst = appendDescriptor(append(dst, codeDescribed), a.Descriptor)
	}
	c := elemCode(a)
	cAt := len(dst)
	dst = append(dst, c)
	for _, e := range a.Elems {
		dst = appendElem(dst, c, a.Type, e)
	}
	if c == codeList32 || c == codeMap32 || c == codeArray32 {
		dst = shrinkElems(dst, cAt, len(a.Elems))
	}
	return dst
}

func badElem(e any, t Type) {
	panic(fmt.Sprintf("wire: %T element in an array of %v", e, t))
}

// appendElem appends the data of one array element for constructor c.
func appendElem(dst []byte, c byte, t Type, e any) []byte {
	switch c {
	case codeNull:
		if e != nil {
			badElem(e, t)
		}
		return dst
	case codeBool:
		v, ok := e.(bool)
		if !ok {
			badElem(e, t)
		}
		if v {
			return append(dst, 1)
		}
		return append(dst, 0)
	case codeSmallUint, codeUint:
		v, ok := e.(uint32)
		if !ok {
			badElem(e, t)
		}
		if c == codeSmallUint {
			return append(dst, byte(v))
		}
		return binary.BigEndian.AppendUint32(dst, v)
	case codeSmallUlong, codeUlong:
		v, ok := e.(uint64)
		if !ok {
			badElem(e, t)
		}
		if c == codeSmallUlong {
			return append(dst, byte(v))
		}
		return binary.BigEndian.AppendUint64(dst, v)
	case codeSmallInt, codeInt:
		v, ok := e.(int32)
		if !ok {
			badElem(e, t)
		}
		if c == codeSmallInt {
			return append(dst, byte(v))
		}
		return binary.BigEndian.AppendUint32(dst, uint32(v))
	case codeSmallLong, codeLong:
		v, ok := e.(int64)
		if !ok {
			badElem(e, t)
		}
		if c == codeSmallLong {
			return append(dst, byte(v))
		}
		return binary.BigEndian.AppendUint64(dst, uint64(v))
	case codeVbin8, codeVbin32:
		v, ok := e.([]byte)
		if !ok {
			badElem(e, t)
		}
		return appendElemBytes(dst, c, v)
	case codeStr8, codeStr32:
		v, ok := e.(string)
		if !ok {
			badElem(e, t)
		}
		return appendElemString(dst, c, v)
	case codeSym8, codeSym32:
		v, ok := e.(Symbol)
		if !ok {
			badElem(e, t)
		}
		return appendElemString(dst, c, string(v))
	case codeList32:
		v, ok := e.([]any)
		if !ok {
			badElem(e, t)
		}
		dst, start := beginCompound(dst, 0)
		for _, x := range v {
			dst = AppendValue(dst, x)
		}
		return fillCompound32(dst, start, len(v))
	case codeMap32:
		v, ok := e.(*Map)
		if !ok || v == nil {
			badElem(e, t)
		}
		dst, start := beginCompound(dst, 0)
		for i := range v.Entries {
			dst = AppendValue(dst, v.Entries[i].Key)
			dst = AppendValue(dst, v.Entries[i].Value)
		}
		return fillCompound32(dst, start, 2*len(v.Entries))
	case codeArray32:
		v, ok := e.(Array)
		if !ok {
			badElem(e, t)
		}
		dst, start := beginCompound(dst, 0)
		dst = appendArrayContent(dst, &v)
		return fillCompound32(dst, start, len(v.Elems))
	}
	// The remaining constructors have one fixed width per type: encode
	// with the generic encoder, check it chose c, and keep the data.
	at := len(dst)
	if tt, ok := TypeOf(e); !ok || tt != t {
		badElem(e, t)
	}
	dst = AppendValue(dst, e)
	if dst[at] != c {
		badElem(e, t)
	}
	copy(dst[at:], dst[at+1:])
	return dst[:len(dst)-1]
}

func appendElemBytes(dst []byte, c byte, v []byte) []byte {
	if c&0xf0 == 0xa0 {
		return append(append(dst, byte(len(v))), v...)
	}
	return append(binary.BigEndian.AppendUint32(dst, uint32(len(v))), v...)
}

func appendElemString(dst []byte, c byte, v string) []byte {
	if c&0xf0 == 0xa0 {
		return append(append(dst, byte(len(v))), v...)
	}
	return append(binary.BigEndian.AppendUint32(dst, uint32(len(v))), v...)
}

// fillCompound32 fills in the size and count of a compound array element
// begun with beginCompound; its placeholder code byte is not part of an
// element and is removed here.
func fillCompound32(dst []byte, start, count int) []byte {
	body := len(dst) - start - compoundHeader
	binary.BigEndian.PutUint32(dst[start+1:], uint32(body+4))
	binary.BigEndian.PutUint32(dst[start+5:], uint32(count))
	copy(dst[start:], dst[start+1:])
	return dst[:len(dst)-1]
}

// shrinkElems rewrites the compound elements of an array written in their
// 32-bit form (constructor at cAt, n elements after it) into the 8-bit form
// when every element fits, and changes the constructor to match.
func shrinkElems(dst []byte, cAt, n int) []byte {
	off := cAt + 1
	for range n {
		size := binary.BigEndian.Uint32(dst[off:])
		count := binary.BigEndian.Uint32(dst[off+4:])
		if size-4+1 > math.MaxUint8 || count > math.MaxUint8 {
			return dst
		}
		off += 4 + int(size)
	}
	from, to := cAt+1, cAt+1
	for range n {
		body := int(binary.BigEndian.Uint32(dst[from:])) - 4
		count := dst[from+7]
		dst[to] = byte(body + 1)
		dst[to+1] = count
		copy(dst[to+2:], dst[from+8:from+8+body])
		from += 8 + body
		to += 2 + body
	}
	dst[cAt] -= 0x10 // list32->list8, map32->map8, array32->array8
	return dst[:to]
}
