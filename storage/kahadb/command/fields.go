package command

import "fmt"

// Decoding is declared, not hand-looped: each message of journal-data.proto
// has a fieldTable listing its fields (number, wire type, proto name,
// whether required, and how the value is stored), and one loop,
// fieldTable.decode, applies the protobuf rules to every message alike.

// presence says whether a field is required by journal-data.proto, in the
// sense Decode enforces (see the package comment).
type presence bool

const (
	required presence = true
	optional presence = false
)

// fieldDecoder decodes one field of a message of type T, known by its key:
// number and wire type together, as both fields of KahaLocalTransactionId
// carry number 1. Exactly one of the functions is set: for a scalar, the one
// of its type, which returns where in m the value is stored; for a nested
// message or a value with rules of its own, set, which decodes it.
type fieldDecoder[T any] struct {
	num      int
	wire     int
	name     string // proto field name, for errors
	presence presence

	str   func(m *T) *string
	bytes func(m *T) *[]byte
	i32   func(m *T) *int32
	i64   func(m *T) *int64
	flag  func(m *T) *bool
	set   func(m *T, f field) error
}

// fieldTable declares how a message of type T decodes.
type fieldTable[T any] struct {
	// defaults, when set, runs before the fields are read (proto defaults
	// other than the zero value).
	defaults func(m *T)
	// fields are checked for presence in this order, which is field-number
	// order: the first missing one is the one reported.
	fields []fieldDecoder[T]
	// check, when set, runs after the fields are read: rules that involve
	// more than one field.
	check func(m *T) error
}

// decode reads the fields in b into m. Unknown fields, and known numbers
// with another wire type, are skipped as protobuf parsers do; a field seen
// twice is decoded twice (a nested message merges, a scalar's last value
// wins). m is not cleared first, so a nested message that appears twice
// merges.
func (t *fieldTable[T]) decode(b []byte, m *T) error {
	if t.defaults != nil {
		t.defaults(m)
	}
	var seen uint32 // bit i: fields[i] was present
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		i := t.find(f.num, f.typ)
		if i < 0 {
			continue
		}
		// Scalars are stored here rather than by a set function each, so
		// that a field costs one indirect call (the getter), not two.
		switch fd := &t.fields[i]; {
		case fd.str != nil:
			*fd.str(m) = string(f.b)
		case fd.bytes != nil:
			*fd.bytes(m) = f.bytes()
		case fd.i32 != nil:
			*fd.i32(m) = f.int32()
		case fd.i64 != nil:
			*fd.i64(m) = f.int64()
		case fd.flag != nil:
			*fd.flag(m) = f.bool()
		default:
			if err := fd.set(m, f); err != nil {
				return err
			}
		}
		seen |= 1 << i
	}
	for i := range t.fields {
		if t.fields[i].presence == required && seen&(1<<i) == 0 {
			return missing(t.fields[i].name)
		}
	}
	if t.check != nil {
		return t.check(m)
	}
	return nil
}

// find returns the index in fields of the field with key (num, wire), or -1.
// Fields are numbered from 1 without gaps in most messages, so field num is
// looked for at index num-1 first.
func (t *fieldTable[T]) find(num, wire int) int {
	if i := num - 1; i < len(t.fields) && t.fields[i].num == num && t.fields[i].wire == wire {
		return i
	}
	for i := range t.fields {
		if t.fields[i].num == num && t.fields[i].wire == wire {
			return i
		}
	}
	return -1
}

// The constructors below are the field kinds of journal-data.proto; get
// returns where in m the value is stored.

func stringField[T any](num int, name string, p presence, get func(m *T) *string) fieldDecoder[T] {
	return fieldDecoder[T]{num: num, wire: wireBytes, name: name, presence: p, str: get}
}

// bytesField stores a non-nil slice aliasing the payload, so that a present
// but empty field stays distinguishable from an absent one.
func bytesField[T any](num int, name string, p presence, get func(m *T) *[]byte) fieldDecoder[T] {
	return fieldDecoder[T]{num: num, wire: wireBytes, name: name, presence: p, bytes: get}
}

func int32Field[T any](num int, name string, p presence, get func(m *T) *int32) fieldDecoder[T] {
	return fieldDecoder[T]{num: num, wire: wireVarint, name: name, presence: p, i32: get}
}

func int64Field[T any](num int, name string, p presence, get func(m *T) *int64) fieldDecoder[T] {
	return fieldDecoder[T]{num: num, wire: wireVarint, name: name, presence: p, i64: get}
}

func boolField[T any](num int, name string, p presence, get func(m *T) *bool) fieldDecoder[T] {
	return fieldDecoder[T]{num: num, wire: wireVarint, name: name, presence: p, flag: get}
}

// funcField decodes a value with rules of its own by set.
func funcField[T any](num, wire int, name string, p presence, set func(m *T, f field) error) fieldDecoder[T] {
	return fieldDecoder[T]{num: num, wire: wire, name: name, presence: p, set: set}
}

// messageField decodes a nested message with table, into the value get
// returns (which may allocate it on first use); its errors are prefixed with
// the field's name.
func messageField[T, M any](num int, name string, p presence, table *fieldTable[M], get func(m *T) *M) fieldDecoder[T] {
	return funcField(num, wireBytes, name, p, func(m *T, f field) error {
		if err := table.decode(f.b, get(m)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
}

// alloc returns *p, first pointing it at a new zero M when it is nil: the
// getter of an optional nested message held by pointer.
func alloc[M any](p **M) *M {
	if *p == nil {
		*p = new(M)
	}
	return *p
}
