package message

import (
	"math"
	"strconv"
	"strings"
)

// Kind is the type of a property or map/stream value, as JMS types them.
type Kind uint8

// The JMS property types. Bytes, Char, Map and List appear only in map and
// stream bodies (and in OpenWire's marshalled property maps).
const (
	Null Kind = iota
	Bool
	Byte
	Short
	Int
	Long
	Float
	Double
	String
	Bytes
	Char
)

var kindNames = [...]string{"null", "boolean", "byte", "short", "int", "long", "float", "double", "string", "bytes", "char"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one typed value. It is a small struct, not an interface, so that
// reading properties on the dispatch path does not allocate.
type Value struct {
	Kind Kind
	num  uint64 // bool, integers (two's complement), float bits
	str  string // String
	raw  []byte // Bytes
}

// Constructors for each kind.
func BoolValue(b bool) Value {
	var n uint64
	if b {
		n = 1
	}
	return Value{Kind: Bool, num: n}
}
func ByteValue(v int8) Value     { return Value{Kind: Byte, num: uint64(int64(v))} }
func ShortValue(v int16) Value   { return Value{Kind: Short, num: uint64(int64(v))} }
func IntValue(v int32) Value     { return Value{Kind: Int, num: uint64(int64(v))} }
func LongValue(v int64) Value    { return Value{Kind: Long, num: uint64(v)} }
func FloatValue(v float32) Value { return Value{Kind: Float, num: uint64(math.Float32bits(v))} }
func DoubleValue(v float64) Value {
	return Value{Kind: Double, num: math.Float64bits(v)}
}
func StringValue(s string) Value { return Value{Kind: String, str: s} }
func BytesValue(b []byte) Value  { return Value{Kind: Bytes, raw: b} }
func CharValue(r uint16) Value   { return Value{Kind: Char, num: uint64(r)} }

// Bool returns the boolean; false for any other kind.
func (v Value) Bool() bool { return v.Kind == Bool && v.num != 0 }

// Int returns byte, short, int, long and char values as int64.
func (v Value) Int() int64 { return int64(v.num) }

// Float returns float and double values as float64.
func (v Value) Float() float64 {
	if v.Kind == Float {
		return float64(math.Float32frombits(uint32(v.num)))
	}
	return math.Float64frombits(v.num)
}

// Str returns a String value's text.
func (v Value) Str() string { return v.str }

// Raw returns a Bytes value's bytes.
func (v Value) Raw() []byte { return v.raw }

// IsInteger reports whether the value is one of the integer kinds.
func (v Value) IsInteger() bool { return v.Kind >= Byte && v.Kind <= Long }

// IsFloat reports whether the value is float or double.
func (v Value) IsFloat() bool { return v.Kind == Float || v.Kind == Double }

// Text renders the value as Java's String.valueOf would; this is how STOMP
// headers and MQTT see properties.
func (v Value) Text() string {
	switch v.Kind {
	case Null:
		return "null"
	case Bool:
		return strconv.FormatBool(v.Bool())
	case Byte, Short, Int, Long:
		return strconv.FormatInt(v.Int(), 10)
	case Float:
		return JavaFloatString(v.Float(), 32)
	case Double:
		return JavaFloatString(v.Float(), 64)
	case String:
		return v.str
	case Bytes:
		return string(v.raw)
	case Char:
		return string(rune(v.num))
	}
	return ""
}

// JavaFloatString is Java's Double.toString (bits 64) or Float.toString
// (bits 32): plain notation for 1e-3 <= |f| < 1e7, otherwise "d.dddE±n", and
// always at least one digit after the point. Property conversions and
// selectors both use it, so a double reads the same everywhere.
func JavaFloatString(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, bits) // like -1.2345e+08
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// Property is a named message property.
type Property struct {
	Name  string
	Value Value
}

// Properties is an ordered list of properties. Messages carry few properties,
// so a slice scanned linearly beats a map and keeps the sender's order.
type Properties []Property

// Get returns the named property and whether it is present.
func (ps Properties) Get(name string) (Value, bool) {
	for i := range ps {
		if ps[i].Name == name {
			return ps[i].Value, true
		}
	}
	return Value{}, false
}

// Set replaces the named property or appends it.
func (ps *Properties) Set(name string, v Value) {
	for i := range *ps {
		if (*ps)[i].Name == name {
			(*ps)[i].Value = v
			return
		}
	}
	*ps = append(*ps, Property{Name: name, Value: v})
}

// Delete removes the named property.
func (ps *Properties) Delete(name string) {
	for i := range *ps {
		if (*ps)[i].Name == name {
			*ps = append((*ps)[:i], (*ps)[i+1:]...)
			return
		}
	}
}
