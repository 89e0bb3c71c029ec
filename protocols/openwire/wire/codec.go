package wire

import (
	"encoding/binary"
	"fmt"
)

// codec walks one data structure's fields in wire order. Each type's
// marshal method calls it once per field; the same method serves tight and
// loose encoding and decoding, so field order is written down exactly once
// per type (OpenWire vN *Marshaller.looseMarshal / tightMarshal1/2 /
// tightUnmarshal / looseUnmarshal all follow the same order).
//
// Errors are sticky: after the first failure every further call is a no-op,
// so a decoder fed garbage stops reading and allocating at once.
type codec struct {
	enc        bool
	tight      bool
	cacheOn    bool
	stackTrace bool
	version    int
	lim        *Limits

	// Encoding: data bytes are appended to data; booleans go to bits in
	// tight mode and inline in loose mode.
	data []byte
	bits *bitWriter
	wc   *marshalCache

	// Decoding.
	in  []byte
	pos int
	br  bitReader
	rc  *unmarshalCache

	depth int
	typ   byte
	field string
	err   error
}

// fail records the first error with the structure type and field it hit.
func (c *codec) fail(err error) {
	if c.err == nil {
		c.err = fmt.Errorf("%s.%s: %w", TypeName(c.typ), c.field, err)
	}
}

// ---- raw data helpers (decode) ----

func (c *codec) take(n int) []byte {
	if c.err != nil {
		return nil
	}
	if n < 0 {
		c.fail(ErrNegativeLength)
		return nil
	}
	if len(c.in)-c.pos < n {
		c.fail(ErrTruncated)
		return nil
	}
	b := c.in[c.pos : c.pos+n : c.pos+n]
	c.pos += n
	return b
}

func (c *codec) u8() byte {
	if b := c.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (c *codec) u16() uint16 {
	if b := c.take(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (c *codec) u32() uint32 {
	if b := c.take(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (c *codec) u64() uint64 {
	if b := c.take(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

// getBool reads a presence/boolean flag: a BooleanStream bit in tight
// mode, a byte in loose mode (any non-zero byte is true, as readBoolean).
func (c *codec) getBool() bool {
	if c.err != nil {
		return false
	}
	if c.tight {
		v, ok := c.br.read()
		if !ok {
			c.fail(ErrBooleanStream)
		}
		return v
	}
	return c.u8() != 0
}

// putBool writes a presence/boolean flag.
func (c *codec) putBool(v bool) {
	if c.tight {
		c.bits.write(v)
		return
	}
	if v {
		c.data = append(c.data, 1)
	} else {
		c.data = append(c.data, 0)
	}
}

func (c *codec) putU16(v uint16) { c.data = binary.BigEndian.AppendUint16(c.data, v) }
func (c *codec) putU32(v uint32) { c.data = binary.BigEndian.AppendUint32(c.data, v) }
func (c *codec) putU64(v uint64) { c.data = binary.BigEndian.AppendUint64(c.data, v) }

// ---- field kinds (OpenWire reference §4) ----

func (c *codec) bool(name string, p *bool) {
	if c.err != nil {
		return
	}
	c.field = name
	if c.enc {
		c.putBool(*p)
		return
	}
	*p = c.getBool()
}

func (c *codec) byte(name string, p *byte) {
	if c.err != nil {
		return
	}
	c.field = name
	if c.enc {
		c.data = append(c.data, *p)
		return
	}
	*p = c.u8()
}

func (c *codec) int8(name string, p *int8) {
	b := byte(*p)
	c.byte(name, &b)
	*p = int8(b)
}

func (c *codec) int32(name string, p *int32) {
	if c.err != nil {
		return
	}
	c.field = name
	if c.enc {
		c.putU32(uint32(*p))
		return
	}
	*p = int32(c.u32())
}

// int64 is a Java long: 8 bytes loose; 2 bits plus 0/2/4/8 bytes tight,
// where the 2- and 4-byte forms are unsigned (BaseDataStreamMarshaller
// tightMarshalLong1/2, tightUnmarshalLong).
func (c *codec) int64(name string, p *int64) {
	if c.err != nil {
		return
	}
	c.field = name
	if !c.tight {
		if c.enc {
			c.putU64(uint64(*p))
		} else {
			*p = int64(c.u64())
		}
		return
	}
	if c.enc {
		v := uint64(*p)
		switch {
		case v == 0:
			c.bits.write(false)
			c.bits.write(false)
		case v&0xFFFFFFFFFFFF0000 == 0:
			c.bits.write(false)
			c.bits.write(true)
			c.putU16(uint16(v))
		case v&0xFFFFFFFF00000000 == 0:
			c.bits.write(true)
			c.bits.write(false)
			c.putU32(uint32(v))
		default:
			c.bits.write(true)
			c.bits.write(true)
			c.putU64(v)
		}
		return
	}
	b1, b2 := c.getBool(), c.getBool()
	switch {
	case b1 && b2:
		*p = int64(c.u64())
	case b1:
		*p = int64(c.u32())
	case b2:
		*p = int64(c.u16())
	default:
		*p = 0
	}
}

// str is a nullable Java string.
//
// DEVIATION: Go strings have no null, so "" is written as null and a
// received empty string decodes as "". ActiveMQ treats unset headers as
// null, so only a JMS header explicitly set to "" is affected.
func (c *codec) str(name string, p *string) {
	if c.err != nil {
		return
	}
	c.field = name
	if c.enc {
		s := *p
		c.putBool(s != "")
		if s == "" {
			return
		}
		n := ModifiedUTF8Len(s)
		if c.tight {
			// tightMarshalString1 refuses utflen >= Short.MAX_VALUE.
			if n >= 1<<15-1 {
				c.fail(ErrStringTooLong)
				return
			}
			ascii := isJavaASCII(s)
			c.bits.write(ascii)
			if ascii {
				c.putU16(uint16(len(s)))
				c.data = append(c.data, s...)
				return
			}
		} else if n > 0xFFFF {
			c.fail(ErrStringTooLong)
			return
		}
		c.putU16(uint16(n))
		c.data = AppendModifiedUTF8(c.data, s)
		return
	}
	if !c.getBool() {
		*p = ""
		return
	}
	if c.tight && c.getBool() {
		// ASCII form: signed short length, one byte per char, bytes are
		// taken as Latin-1 (new String(data, 0)).
		b := c.take(int(int16(c.u16())))
		if b == nil {
			return
		}
		*p = latin1(b)
		return
	}
	b := c.take(int(c.u16()))
	if b == nil {
		return
	}
	s, err := DecodeModifiedUTF8(b)
	if err != nil {
		c.fail(err)
		return
	}
	*p = s
}

func latin1(b []byte) string {
	for i, x := range b {
		if x >= 0x80 {
			out := make([]rune, 0, len(b))
			for _, y := range b[:i] {
				out = append(out, rune(y))
			}
			for _, y := range b[i:] {
				out = append(out, rune(y))
			}
			return string(out)
		}
	}
	return string(b)
}

// bytes is a nullable byte[] or ByteSequence: presence flag, int32 length,
// data. Decoded slices alias the frame buffer, which the Decoder allocates
// per frame and never reuses.
func (c *codec) bytes(name string, p *[]byte) {
	if c.err != nil {
		return
	}
	c.field = name
	if c.enc {
		b := *p
		c.putBool(b != nil)
		if b == nil {
			return
		}
		if int64(len(b)) > 1<<31-1 {
			c.fail(ErrFrameTooLarge)
			return
		}
		c.putU32(uint32(len(b)))
		c.data = append(c.data, b...)
		return
	}
	if !c.getBool() {
		*p = nil
		return
	}
	n := int(int32(c.u32()))
	*p = c.take(n)
}

// raw8 is a constant-length byte array (WireFormatInfo magic).
func (c *codec) raw8(name string, p *[8]byte) {
	if c.err != nil {
		return
	}
	c.field = name
	if c.enc {
		c.data = append(c.data, p[:]...)
		return
	}
	if b := c.take(8); b != nil {
		copy(p[:], b)
	}
}

// enter descends into a nested structure of type t.
func (c *codec) enter(t byte) (prev byte, ok bool) {
	c.depth++
	if c.depth > c.lim.MaxNestingDepth {
		c.fail(ErrTooDeep)
		c.depth--
		return 0, false
	}
	prev, c.typ = c.typ, t
	return prev, true
}

func (c *codec) leave(prev byte) {
	c.depth--
	c.typ = prev
}

// obj is a nested object: presence flag, type byte, body. In tight mode a
// marshal-aware type carries one more bit (OpenWireFormat
// tightMarshalNestedObject1), which Java always writes as false.
func (c *codec) obj(name string, p *DataStructure) {
	if c.err != nil {
		return
	}
	c.field = name
	if c.enc {
		v := *p
		present := !isNil(v)
		c.putBool(present)
		if !present {
			return
		}
		t := v.DataStructureType()
		if !knownType(t, c.version) {
			c.fail(fmt.Errorf("%w: %s in v%d", ErrUnknownType, TypeName(t), c.version))
			return
		}
		if c.tight && marshalAware(t) {
			c.bits.write(false)
		}
		c.data = append(c.data, t)
		prev, ok := c.enter(t)
		if !ok {
			return
		}
		v.marshal(c)
		c.leave(prev)
		return
	}
	if !c.getBool() {
		*p = nil
		return
	}
	t := c.u8()
	if c.err != nil {
		return
	}
	ds := newDataStructure(t, c.version)
	if ds == nil {
		c.fail(fmt.Errorf("%w: %d in v%d", ErrUnknownType, t, c.version))
		return
	}
	prev, ok := c.enter(t)
	if !ok {
		return
	}
	if c.tight && marshalAware(t) && c.getBool() {
		// A cached marshalled form: size and type, then the object with a
		// BooleanStream of its own (tightUnmarshalNestedObject). Java never
		// writes this, but it reads it.
		c.u32()
		c.u8()
		if c.err != nil {
			return
		}
		br, n, err := parseBits(c.in[c.pos:])
		if err != nil {
			c.fail(err)
			return
		}
		c.pos += n
		saved := c.br
		c.br = br
		ds.marshal(c)
		c.br = saved
	} else {
		ds.marshal(c)
	}
	c.leave(prev)
	*p = ds
}

// cobj is a cached nested object (tightMarshalCachedObject1/2,
// looseMarshalCachedObject). With the cache off it is obj. With it on, a
// flag says whether the object is new, then a short index, then (if new) the
// object. Null is cached like any value (reference §4.5).
func (c *codec) cobj(name string, p *DataStructure) {
	if !c.cacheOn {
		c.obj(name, p)
		return
	}
	if c.err != nil {
		return
	}
	c.field = name
	if c.enc {
		v := *p
		if isNil(v) {
			v = nil
		}
		if !cacheable(v) {
			c.fail(fmt.Errorf("%w: %s in a cached field", ErrUnexpectedType, TypeName(v.DataStructureType())))
			return
		}
		key := c.wc.keyOf(v)
		idx, found := c.wc.lookup(key)
		c.putBool(!found)
		if found {
			c.putU16(uint16(idx))
			return
		}
		if c.tight {
			// Java assigns the index after marshalling the nested object's
			// pass 1 (so nested cached objects get lower indices) but
			// writes it before the nested data: reserve and patch.
			at := len(c.data)
			c.data = append(c.data, 0, 0)
			c.obj(name, &v)
			binary.BigEndian.PutUint16(c.data[at:], uint16(c.wc.add(key)))
			return
		}
		c.putU16(uint16(c.wc.add(key)))
		c.obj(name, &v)
		return
	}
	isNew := c.getBool()
	idx := int16(c.u16())
	if c.err != nil {
		return
	}
	if isNew {
		c.obj(name, p)
		if c.err == nil && !cacheable(*p) {
			// Java writers only cache ids, destinations and transaction
			// ids. Storing anything else would let a peer build a DAG of
			// shared references that explodes when walked.
			c.fail(fmt.Errorf("%w: %s in a cached field", ErrUnexpectedType, TypeName((*p).DataStructureType())))
		}
		if c.err == nil {
			if err := c.rc.set(idx, *p); err != nil {
				c.fail(err)
			}
		}
		return
	}
	v, err := c.rc.get(idx)
	if err != nil {
		c.fail(err)
		return
	}
	*p = cloneCached(v)
}

// objField and cobjField adapt typed struct fields to obj/cobj; a nested
// object of another type is ErrUnexpectedType (Java: ClassCastException).
func objField[T DataStructure](c *codec, name string, p *T) {
	if c.err != nil {
		return
	}
	var ds DataStructure
	if c.enc {
		if !isNil(*p) {
			ds = *p
		}
		c.obj(name, &ds)
		return
	}
	c.obj(name, &ds)
	assign(c, p, ds)
}

func cobjField[T DataStructure](c *codec, name string, p *T) {
	if c.err != nil {
		return
	}
	var ds DataStructure
	if c.enc {
		if !isNil(*p) {
			ds = *p
		}
		c.cobj(name, &ds)
		return
	}
	c.cobj(name, &ds)
	assign(c, p, ds)
}

func assign[T DataStructure](c *codec, p *T, ds DataStructure) {
	if c.err != nil {
		return
	}
	if ds == nil {
		var zero T
		*p = zero
		return
	}
	v, ok := ds.(T)
	if !ok {
		c.fail(fmt.Errorf("%w: %s", ErrUnexpectedType, TypeName(ds.DataStructureType())))
		return
	}
	*p = v
}

// objArray is a nullable array of nested objects: flag, short count, objects.
func objArray[T DataStructure](c *codec, name string, p *[]T) {
	if c.err != nil {
		return
	}
	c.field = name
	if c.enc {
		s := *p
		c.putBool(s != nil)
		if s == nil {
			return
		}
		if len(s) > 1<<15-1 {
			c.fail(ErrTooManyElements)
			return
		}
		c.putU16(uint16(len(s)))
		for i := range s {
			var ds DataStructure
			if !isNil(s[i]) {
				ds = s[i]
			}
			c.obj(name, &ds)
		}
		return
	}
	if !c.getBool() {
		*p = nil
		return
	}
	n := int(int16(c.u16()))
	if c.err != nil {
		return
	}
	if !c.checkCount(n, 1) {
		return
	}
	out := make([]T, n)
	for i := range out {
		var ds DataStructure
		c.obj(name, &ds)
		assign(c, &out[i], ds)
		if c.err != nil {
			return
		}
	}
	*p = out
}

// checkCount validates a decoded element count before allocating: not
// negative, within Limits.MaxArrayLength, and no more elements than the
// remaining input could hold at minBytes each (one bit each in tight mode).
func (c *codec) checkCount(n, minBytes int) bool {
	switch {
	case n < 0:
		c.fail(ErrNegativeLength)
	case n > c.lim.MaxArrayLength:
		c.fail(ErrTooManyElements)
	case c.tight && minBytes <= 1 && n > c.br.remaining()+len(c.in)-c.pos:
		c.fail(ErrTruncated)
	case (!c.tight || minBytes > 1) && n*minBytes > len(c.in)-c.pos:
		c.fail(ErrTruncated)
	default:
		return true
	}
	return false
}

// Throwable is a marshalled Java exception (ExceptionResponse.Exception,
// ConnectionError.Exception, MessageAck.PoisonCause).
type Throwable struct {
	// ClassName is the Java class, e.g. "javax.jms.InvalidDestinationException".
	ClassName string
	Message   string
	// StackTrace and Cause are on the wire only when StackTraceEnabled was
	// negotiated.
	StackTrace []StackTraceElement
	Cause      *Throwable
}

// StackTraceElement is one Java stack frame.
type StackTraceElement struct {
	DeclaringClass string
	MethodName     string
	FileName       string
	LineNumber     int32
}

// Error makes a received Throwable usable as a Go error.
func (t *Throwable) Error() string {
	if t.Message == "" {
		return t.ClassName
	}
	return t.ClassName + ": " + t.Message
}

// throwable follows BaseDataStreamMarshaller.tightMarshalThrowable1/2 and
// looseMarshalThrowable.
func (c *codec) throwable(name string, p **Throwable) {
	if c.err != nil {
		return
	}
	c.field = name
	if c.enc {
		t := *p
		c.putBool(t != nil)
		if t == nil {
			return
		}
		c.str(name, &t.ClassName)
		c.str(name, &t.Message)
		if !c.stackTrace {
			return
		}
		if len(t.StackTrace) > 1<<15-1 {
			c.fail(ErrTooManyElements)
			return
		}
		c.putU16(uint16(len(t.StackTrace)))
		for i := range t.StackTrace {
			e := &t.StackTrace[i]
			c.str(name, &e.DeclaringClass)
			c.str(name, &e.MethodName)
			c.str(name, &e.FileName)
			c.int32(name, &e.LineNumber)
		}
		c.depth++
		if c.depth > c.lim.MaxNestingDepth {
			c.fail(ErrTooDeep)
		} else {
			c.throwable(name, &t.Cause)
		}
		c.depth--
		return
	}
	if !c.getBool() {
		*p = nil
		return
	}
	t := &Throwable{}
	c.str(name, &t.ClassName)
	c.str(name, &t.Message)
	if c.stackTrace {
		n := int(int16(c.u16()))
		if c.err != nil {
			return
		}
		// Each frame carries at least its 4-byte line number.
		if !c.checkCount(n, 4) {
			return
		}
		if n > 0 {
			t.StackTrace = make([]StackTraceElement, n)
		}
		for i := range t.StackTrace {
			e := &t.StackTrace[i]
			c.str(name, &e.DeclaringClass)
			c.str(name, &e.MethodName)
			c.str(name, &e.FileName)
			c.int32(name, &e.LineNumber)
		}
		c.depth++
		if c.depth > c.lim.MaxNestingDepth {
			c.fail(ErrTooDeep)
		} else {
			c.throwable(name, &t.Cause)
		}
		c.depth--
	}
	if c.err == nil {
		*p = t
	}
}

var known [256]bool

func init() {
	for t := range typeNames {
		if t != TypeNull {
			known[t] = true
		}
	}
}

func knownType(t byte, version int) bool {
	return known[t] && version >= minVersion(t)
}
