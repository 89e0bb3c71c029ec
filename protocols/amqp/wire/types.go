package wire

import (
	"bytes"
	"encoding/hex"
	"math"
	"time"
)

// Symbol is an AMQP symbol (AMQP 1.0 §1.6.21): ASCII text used for
// identifiers such as error conditions, capabilities and descriptors.
type Symbol string

// Char is an AMQP char (§1.6.16): one Unicode code point, sent as UTF-32BE.
type Char rune

// Timestamp is an AMQP timestamp (§1.6.17): milliseconds since the Unix
// epoch, UTC. It is kept as the wire integer so that values round-trip.
type Timestamp int64

// Time returns t as a UTC time.Time.
func (t Timestamp) Time() time.Time { return time.UnixMilli(int64(t)).UTC() }

// TimestampOf returns the timestamp of tm, truncated to the millisecond.
func TimestampOf(tm time.Time) Timestamp { return Timestamp(tm.UnixMilli()) }

// UUID is an AMQP uuid (§1.6.18, RFC 4122 byte order).
type UUID [16]byte

// String returns u in the 8-4-4-4-12 hexadecimal form.
func (u UUID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// Decimal32 is an IEEE 754-2008 decimal32 (§1.6.13), kept as its four wire
// bytes (big-endian, BID encoding): the broker never does arithmetic on it.
type Decimal32 [4]byte

// Decimal64 is an IEEE 754-2008 decimal64 (§1.6.14), kept as raw bytes.
type Decimal64 [8]byte

// Decimal128 is an IEEE 754-2008 decimal128 (§1.6.15), kept as raw bytes.
type Decimal128 [16]byte

// Described is a described value (§1.2): a descriptor, uint64 or Symbol,
// and the value it describes. The generic decoder returns composites it
// does not decode into typed structs (and every described value inside a
// generic value) as Described.
type Described struct {
	// Descriptor is a uint64 code or a Symbol name.
	Descriptor any
	// Value is any value of the model.
	Value any
}

// MapEntry is one key/value pair of a Map.
type MapEntry struct {
	Key   any
	Value any
}

// Map is an AMQP map (§1.6.23): key/value pairs in wire order. AMQP maps
// are ordered and their keys may be any type, so they are not Go maps.
// Duplicate keys are kept as received; Get returns the first.
type Map struct {
	Entries []MapEntry
}

// NewMap returns a map of the given key, value, key, value... pairs. It
// panics when given an odd number of arguments.
func NewMap(kv ...any) *Map {
	if len(kv)%2 != 0 {
		panic("wire: NewMap needs key/value pairs")
	}
	m := &Map{Entries: make([]MapEntry, 0, len(kv)/2)}
	for i := 0; i < len(kv); i += 2 {
		m.Entries = append(m.Entries, MapEntry{Key: kv[i], Value: kv[i+1]})
	}
	return m
}

// Len returns the number of pairs; 0 for a nil map.
func (m *Map) Len() int {
	if m == nil {
		return 0
	}
	return len(m.Entries)
}

// Get returns the value of the first pair whose key equals key (see Equal);
// a nil map has no pairs.
func (m *Map) Get(key any) (any, bool) {
	if m == nil {
		return nil, false
	}
	for i := range m.Entries {
		if Equal(m.Entries[i].Key, key) {
			return m.Entries[i].Value, true
		}
	}
	return nil, false
}

// Set replaces the value of the first pair whose key equals key, or
// appends the pair.
func (m *Map) Set(key, value any) {
	for i := range m.Entries {
		if Equal(m.Entries[i].Key, key) {
			m.Entries[i].Value = value
			return
		}
	}
	m.Entries = append(m.Entries, MapEntry{Key: key, Value: value})
}

// Delete removes every pair whose key equals key.
func (m *Map) Delete(key any) {
	if m == nil {
		return
	}
	e := m.Entries[:0]
	for _, p := range m.Entries {
		if !Equal(p.Key, key) {
			e = append(e, p)
		}
	}
	clear(m.Entries[len(e):])
	m.Entries = e
}

// Array is an AMQP array (§1.6.24): elements of one type sharing one
// constructor. Elems hold values of the Go type for Type (uint32 for
// TypeUint, Symbol for TypeSymbol, Array for TypeArray, ...). For an array
// of described values, Descriptor is set and Elems hold the described
// values, not Described wrappers.
type Array struct {
	Type       Type
	Descriptor any
	Elems      []any
}

// Type names the AMQP type of a value, as used for Array elements.
type Type uint8

// Types of the AMQP type system (§1.6).
const (
	TypeNull Type = iota + 1
	TypeBoolean
	TypeUbyte
	TypeUshort
	TypeUint
	TypeUlong
	TypeByte
	TypeShort
	TypeInt
	TypeLong
	TypeFloat
	TypeDouble
	TypeDecimal32
	TypeDecimal64
	TypeDecimal128
	TypeChar
	TypeTimestamp
	TypeUUID
	TypeBinary
	TypeString
	TypeSymbol
	TypeList
	TypeMap
	TypeArray
)

var typeNames = [...]string{"invalid", "null", "boolean", "ubyte", "ushort", "uint", "ulong",
	"byte", "short", "int", "long", "float", "double", "decimal32", "decimal64", "decimal128",
	"char", "timestamp", "uuid", "binary", "string", "symbol", "list", "map", "array"}

// String returns the spec's name of the type ("uint", "symbol", ...).
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "invalid"
}

// TypeOf returns the AMQP type of a value of the model, and false for a Go
// value outside it (a Described or Composite has the type of its value;
// TypeOf reports false for them too, as they have no primitive type).
func TypeOf(v any) (Type, bool) {
	switch v.(type) {
	case nil:
		return TypeNull, true
	case bool:
		return TypeBoolean, true
	case uint8:
		return TypeUbyte, true
	case uint16:
		return TypeUshort, true
	case uint32:
		return TypeUint, true
	case uint64:
		return TypeUlong, true
	case int8:
		return TypeByte, true
	case int16:
		return TypeShort, true
	case int32:
		return TypeInt, true
	case int64:
		return TypeLong, true
	case float32:
		return TypeFloat, true
	case float64:
		return TypeDouble, true
	case Decimal32:
		return TypeDecimal32, true
	case Decimal64:
		return TypeDecimal64, true
	case Decimal128:
		return TypeDecimal128, true
	case Char:
		return TypeChar, true
	case Timestamp:
		return TypeTimestamp, true
	case UUID:
		return TypeUUID, true
	case []byte:
		return TypeBinary, true
	case string:
		return TypeString, true
	case Symbol:
		return TypeSymbol, true
	case []any:
		return TypeList, true
	case *Map:
		return TypeMap, true
	case Array:
		return TypeArray, true
	}
	return 0, false
}

// Equal reports whether two values of the model are equal: same types,
// same contents. Floats compare by bit pattern, so a NaN equals itself;
// binaries compare by content; maps compare pair by pair in order;
// Composites compare by their encoding. Go values outside the model are
// never equal.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Map:
		y, ok := b.(*Map)
		if !ok || (x == nil) != (y == nil) {
			return false
		}
		if x == nil {
			return true
		}
		if len(x.Entries) != len(y.Entries) {
			return false
		}
		for i := range x.Entries {
			if !Equal(x.Entries[i].Key, y.Entries[i].Key) || !Equal(x.Entries[i].Value, y.Entries[i].Value) {
				return false
			}
		}
		return true
	case Array:
		y, ok := b.(Array)
		if !ok || x.Type != y.Type || !Equal(x.Descriptor, y.Descriptor) || len(x.Elems) != len(y.Elems) {
			return false
		}
		for i := range x.Elems {
			if !Equal(x.Elems[i], y.Elems[i]) {
				return false
			}
		}
		return true
	case Described:
		y, ok := b.(Described)
		return ok && Equal(x.Descriptor, y.Descriptor) && Equal(x.Value, y.Value)
	case nil, bool, uint8, uint16, uint32, uint64, int8, int16, int32, int64,
		Decimal32, Decimal64, Decimal128, Char, Timestamp, UUID, string, Symbol:
		return a == b // comparable types: no panic
	case Composite:
		// Typed composites placed in a value compare by their encoding.
		y, ok := b.(Composite)
		return ok && bytes.Equal(AppendValue(nil, x), AppendValue(nil, y))
	}
	return false
}
