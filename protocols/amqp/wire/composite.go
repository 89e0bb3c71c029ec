package wire

import (
	"encoding/binary"
	"math"
	"time"
)

// Composite is a typed AMQP composite (AMQP 1.0 §1.4): a described list
// with a fixed descriptor. Performatives, SASL frame bodies, delivery
// states, termini, Error and the transaction types implement it.
// AppendValue encodes a Composite as its described list, so one may be
// placed in a generic value (an AmqpValue body carrying a Declare, for
// example); the generic decoder returns it as a Described, which
// DecodeComposite turns back into the typed form.
type Composite interface {
	// Descriptor returns the composite's numeric descriptor code.
	Descriptor() uint64
	appendComposite(dst []byte) []byte
}

// Descriptor codes (domain 0x00000000).
const (
	codeOpen               = 0x10
	codeBegin              = 0x11
	codeAttach             = 0x12
	codeFlow               = 0x13
	codeTransfer           = 0x14
	codeDisposition        = 0x15
	codeDetach             = 0x16
	codeEnd                = 0x17
	codeClose              = 0x18
	codeError              = 0x1d
	codeReceived           = 0x23
	codeAccepted           = 0x24
	codeRejected           = 0x25
	codeReleased           = 0x26
	codeModified           = 0x27
	codeSource             = 0x28
	codeTarget             = 0x29
	codeDeleteOnClose      = 0x2b
	codeDeleteOnNoLinks    = 0x2c
	codeDeleteOnNoMessages = 0x2d
	codeDeleteOnNoLinksOrM = 0x2e
	codeCoordinator        = 0x30
	codeDeclare            = 0x31
	codeDischarge          = 0x32
	codeDeclared           = 0x33
	codeTransactionalState = 0x34
	codeSASLMechanisms     = 0x40
	codeSASLInit           = 0x41
	codeSASLChallenge      = 0x42
	codeSASLResponse       = 0x43
	codeSASLOutcome        = 0x44
	codeHeader             = 0x70
	codeDeliveryAnnots     = 0x71
	codeMessageAnnots      = 0x72
	codeProperties         = 0x73
	codeApplicationProps   = 0x74
	codeData               = 0x75
	codeAmqpSequence       = 0x76
	codeAmqpValue          = 0x77
	codeFooter             = 0x78
)

// descriptorNames maps each known code to its spec name (used in error
// messages) and its symbolic descriptor.
var descriptorNames = map[uint64][2]string{
	codeOpen:               {"open", "amqp:open:list"},
	codeBegin:              {"begin", "amqp:begin:list"},
	codeAttach:             {"attach", "amqp:attach:list"},
	codeFlow:               {"flow", "amqp:flow:list"},
	codeTransfer:           {"transfer", "amqp:transfer:list"},
	codeDisposition:        {"disposition", "amqp:disposition:list"},
	codeDetach:             {"detach", "amqp:detach:list"},
	codeEnd:                {"end", "amqp:end:list"},
	codeClose:              {"close", "amqp:close:list"},
	codeError:              {"error", "amqp:error:list"},
	codeReceived:           {"received", "amqp:received:list"},
	codeAccepted:           {"accepted", "amqp:accepted:list"},
	codeRejected:           {"rejected", "amqp:rejected:list"},
	codeReleased:           {"released", "amqp:released:list"},
	codeModified:           {"modified", "amqp:modified:list"},
	codeSource:             {"source", "amqp:source:list"},
	codeTarget:             {"target", "amqp:target:list"},
	codeDeleteOnClose:      {"delete-on-close", "amqp:delete-on-close:list"},
	codeDeleteOnNoLinks:    {"delete-on-no-links", "amqp:delete-on-no-links:list"},
	codeDeleteOnNoMessages: {"delete-on-no-messages", "amqp:delete-on-no-messages:list"},
	codeDeleteOnNoLinksOrM: {"delete-on-no-links-or-messages", "amqp:delete-on-no-links-or-messages:list"},
	codeCoordinator:        {"coordinator", "amqp:coordinator:list"},
	codeDeclare:            {"declare", "amqp:declare:list"},
	codeDischarge:          {"discharge", "amqp:discharge:list"},
	codeDeclared:           {"declared", "amqp:declared:list"},
	codeTransactionalState: {"transactional-state", "amqp:transactional-state:list"},
	codeSASLMechanisms:     {"sasl-mechanisms", "amqp:sasl-mechanisms:list"},
	codeSASLInit:           {"sasl-init", "amqp:sasl-init:list"},
	codeSASLChallenge:      {"sasl-challenge", "amqp:sasl-challenge:list"},
	codeSASLResponse:       {"sasl-response", "amqp:sasl-response:list"},
	codeSASLOutcome:        {"sasl-outcome", "amqp:sasl-outcome:list"},
	codeHeader:             {"header", "amqp:header:list"},
	codeDeliveryAnnots:     {"delivery-annotations", "amqp:delivery-annotations:map"},
	codeMessageAnnots:      {"message-annotations", "amqp:message-annotations:map"},
	codeProperties:         {"properties", "amqp:properties:list"},
	codeApplicationProps:   {"application-properties", "amqp:application-properties:map"},
	codeData:               {"data", "amqp:data:binary"},
	codeAmqpSequence:       {"amqp-sequence", "amqp:amqp-sequence:list"},
	codeAmqpValue:          {"amqp-value", "amqp:value:*"},
	codeFooter:             {"footer", "amqp:footer:map"},
}

// descriptorCodes maps symbolic descriptors to their codes.
var descriptorCodes = func() map[string]uint64 {
	m := make(map[string]uint64, len(descriptorNames))
	for c, n := range descriptorNames {
		m[n[1]] = c
	}
	return m
}()

// DescriptorName returns the symbolic descriptor of a known code
// ("amqp:open:list" for 0x10) and false for an unknown one.
func DescriptorName(code uint64) (Symbol, bool) {
	n, ok := descriptorNames[code]
	return Symbol(n[1]), ok
}

func codeName(code uint64) string {
	if n, ok := descriptorNames[code]; ok {
		return n[0]
	}
	return "unknown"
}

// descriptorCode reads a descriptor and returns its numeric code; symbolic
// descriptors of known composites are translated, unknown ones refused.
func (r *reader) descriptorCode() (uint64, error) {
	at := r.i
	d, err := r.descriptor()
	if err != nil {
		return 0, err
	}
	switch x := d.(type) {
	case uint64:
		return x, nil
	case Symbol:
		if c, ok := descriptorCodes[string(x)]; ok {
			return c, nil
		}
		return 0, newError(ErrCondDecodeError, ErrInvalidField, "unknown descriptor %q at offset %d", string(x), at)
	}
	return 0, nil
}

// fields reads the fields of one composite in order. The first error is
// kept and every later read returns zero values, so decoders read straight
// through and check f.err (through finish) once.
type fields struct {
	r     *reader
	name  string // composite name for errors: "open"
	n     int    // fields left to read
	saved []byte
	err   error
}

// composite reads the list of a composite (after its descriptor) with at
// most max fields. AMQP 1.0 §1.4: trailing fields may be omitted; a list
// longer than the composite's field count is refused, as Proton-J does.
func (r *reader) composite(name string, max int) (fields, error) {
	at := r.i
	c, err := r.byte1()
	if err != nil {
		return fields{}, err
	}
	f := fields{r: r, name: name}
	switch c {
	case codeList0:
		f.saved = r.b
		r.b = r.b[:r.i]
		return f, r.enter()
	case codeList8, codeList32:
	default:
		return fields{}, newError(ErrCondDecodeError, ErrInvalidField,
			"%s at offset %d is encoded with constructor 0x%02x; want a list", name, at, c)
	}
	n, saved, err := r.compound(c, name, 1)
	if err != nil {
		return fields{}, err
	}
	if n > max {
		r.b = saved
		return fields{}, newError(ErrCondDecodeError, ErrInvalidField, "%s has %d fields; it defines %d", name, n, max)
	}
	f.n, f.saved = n, saved
	return f, r.enter()
}

// finish checks the composite consumed exactly its list.
func (f *fields) finish() error {
	if f.err != nil {
		return f.err
	}
	f.r.leave()
	return f.r.done(f.saved, f.name)
}

func (f *fields) fail(err error) {
	if f.err == nil {
		f.err = err
	}
}

// next reads the constructor of the next field: present is false for an
// absent (omitted or null) field and after an error.
func (f *fields) next() (c byte, present bool) {
	if f.err != nil || f.n == 0 {
		return 0, false
	}
	f.n--
	c, err := f.r.byte1()
	if err != nil {
		f.fail(err)
		return 0, false
	}
	return c, c != codeNull
}

// wrongType records a field whose constructor is not of the field's type.
func (f *fields) wrongType(field, want string, c byte) {
	got := "described value"
	if t := typeOfCode(c); t != 0 {
		got = t.String()
	} else if c != codeDescribed {
		got = "constructor 0x" + hexByte(c)
	}
	f.fail(newError(ErrCondDecodeError, ErrInvalidField, "%s.%s: %s expected, got %s", f.name, field, want, got))
}

func hexByte(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// missing records an absent mandatory field (AMQP 1.0 §1.4: a mandatory
// field must not be null).
func (f *fields) missing(field string) {
	if f.err != nil {
		return
	}
	e := newError(ErrCondInvalidField, ErrInvalidField, "%s.%s is mandatory", f.name, field)
	e.Info = invalidFieldInfo(field)
	f.fail(e)
}

// invalid records a field whose value is outside its restricted range.
func (f *fields) invalid(field string, format string, args ...any) {
	e := newError(ErrCondInvalidField, ErrInvalidField, f.name+"."+field+": "+format, args...)
	e.Info = invalidFieldInfo(field)
	f.fail(e)
}

// check records a read error.
func (f *fields) check(err error) bool {
	if err != nil {
		f.fail(err)
		return false
	}
	return true
}

func (f *fields) uintField(field string) (uint32, bool) {
	c, ok := f.next()
	if !ok {
		return 0, false
	}
	switch c {
	case codeUint, codeSmallUint, codeUint0:
		v, err := f.r.uintOf(c)
		return v, f.check(err)
	}
	f.wrongType(field, "uint", c)
	return 0, false
}

// uint reads an optional uint with a default.
func (f *fields) uint(field string, def uint32) uint32 {
	if v, ok := f.uintField(field); ok {
		return v
	}
	return def
}

// mandUint reads a mandatory uint.
func (f *fields) mandUint(field string) uint32 {
	v, ok := f.uintField(field)
	if !ok {
		f.missing(field)
	}
	return v
}

func (f *fields) optUint(field string) *uint32 {
	if v, ok := f.uintField(field); ok {
		return &v
	}
	return nil
}

func (f *fields) ushort(field string) (uint16, bool) {
	c, ok := f.next()
	if !ok {
		return 0, false
	}
	if c != codeUshort {
		f.wrongType(field, "ushort", c)
		return 0, false
	}
	v, err := f.r.u16()
	return v, f.check(err)
}

func (f *fields) ubyte(field string) (uint8, bool) {
	c, ok := f.next()
	if !ok {
		return 0, false
	}
	if c != codeUbyte {
		f.wrongType(field, "ubyte", c)
		return 0, false
	}
	s, err := f.r.next(1, "ubyte")
	if !f.check(err) {
		return 0, false
	}
	return s[0], true
}

func (f *fields) ulong(field string) (uint64, bool) {
	c, ok := f.next()
	if !ok {
		return 0, false
	}
	switch c {
	case codeUlong, codeSmallUlong, codeUlong0:
		v, err := f.r.ulongOf(c)
		return v, f.check(err)
	}
	f.wrongType(field, "ulong", c)
	return 0, false
}

func (f *fields) boolField(field string) (bool, bool) {
	c, ok := f.next()
	if !ok {
		return false, false
	}
	switch c {
	case codeTrue, codeFalse, codeBool:
		v, err := f.r.boolOf(c)
		return v, f.check(err)
	}
	f.wrongType(field, "boolean", c)
	return false, false
}

// bool reads an optional boolean whose default is false.
func (f *fields) bool(field string) bool {
	v, _ := f.boolField(field)
	return v
}

func (f *fields) stringField(field string) (string, bool) {
	c, ok := f.next()
	if !ok {
		return "", false
	}
	if c != codeStr8 && c != codeStr32 {
		f.wrongType(field, "string", c)
		return "", false
	}
	v, err := f.r.stringOf(c)
	return v, f.check(err)
}

// string reads an optional string; absent is "".
func (f *fields) string(field string) string {
	v, _ := f.stringField(field)
	return v
}

func (f *fields) mandString(field string) string {
	v, ok := f.stringField(field)
	if !ok {
		f.missing(field)
	}
	return v
}

func (f *fields) symbolField(field string) (Symbol, bool) {
	c, ok := f.next()
	if !ok {
		return "", false
	}
	if c != codeSym8 && c != codeSym32 {
		f.wrongType(field, "symbol", c)
		return "", false
	}
	v, err := f.r.symbolOf(c)
	return v, f.check(err)
}

func (f *fields) symbol(field string) Symbol {
	v, _ := f.symbolField(field)
	return v
}

func (f *fields) mandSymbol(field string) Symbol {
	v, ok := f.symbolField(field)
	if !ok {
		f.missing(field)
	}
	return v
}

func (f *fields) binaryField(field string) ([]byte, bool) {
	c, ok := f.next()
	if !ok {
		return nil, false
	}
	if c != codeVbin8 && c != codeVbin32 {
		f.wrongType(field, "binary", c)
		return nil, false
	}
	v, err := f.r.binaryOf(c)
	return v, f.check(err)
}

// binary reads an optional binary; absent is nil, present and empty is a
// non-nil empty slice.
func (f *fields) binary(field string) []byte {
	v, _ := f.binaryField(field)
	return v
}

func (f *fields) mandBinary(field string) []byte {
	v, ok := f.binaryField(field)
	if !ok {
		f.missing(field)
	}
	return v
}

func (f *fields) timestamp(field string) Timestamp {
	c, ok := f.next()
	if !ok {
		return 0
	}
	if c != codeTimestamp {
		f.wrongType(field, "timestamp", c)
		return 0
	}
	v, err := f.r.u64("timestamp")
	f.check(err)
	return Timestamp(v)
}

// millis reads an optional milliseconds field (uint) as a duration.
func (f *fields) millis(field string) time.Duration {
	v, _ := f.uintField(field)
	return time.Duration(v) * time.Millisecond
}

// symbols reads a multiple symbol field (AMQP 1.0 §1.4 "multiple"): a
// single symbol or an array of symbols. Absent is nil; an empty array is a
// non-nil empty slice.
func (f *fields) symbols(field string) []Symbol {
	c, ok := f.next()
	if !ok {
		return nil
	}
	switch c {
	case codeSym8, codeSym32:
		v, err := f.r.symbolOf(c)
		if !f.check(err) {
			return nil
		}
		return []Symbol{v}
	case codeArray8, codeArray32:
		a, err := f.r.arrayOf(c)
		if !f.check(err) {
			return nil
		}
		if a.Type != TypeSymbol || a.Descriptor != nil {
			f.fail(newError(ErrCondDecodeError, ErrInvalidField, "%s.%s: array of symbol expected, got array of %v", f.name, field, a.Type))
			return nil
		}
		s := make([]Symbol, len(a.Elems))
		for i, e := range a.Elems {
			s[i] = e.(Symbol)
		}
		return s
	}
	f.wrongType(field, "symbol", c)
	return nil
}

func (f *fields) mandSymbols(field string) []Symbol {
	s := f.symbols(field)
	if s == nil {
		f.missing(field)
	}
	return s
}

func symbolKey(k any) bool { _, ok := k.(Symbol); return ok }

func annotationKey(k any) bool {
	switch k.(type) {
	case Symbol, uint64:
		return true
	}
	return false
}

func stringKey(k any) bool { _, ok := k.(string); return ok }

// mapField reads an optional map whose keys must pass keyOK.
func (f *fields) mapField(field string, keyOK func(any) bool) *Map {
	c, ok := f.next()
	if !ok {
		return nil
	}
	if c != codeMap8 && c != codeMap32 {
		f.wrongType(field, "map", c)
		return nil
	}
	m, err := f.r.mapOf(c, keyOK)
	if !f.check(err) {
		return nil
	}
	return m
}

// fieldsMap reads an optional "fields" map: symbol keys (AMQP 1.0 §2.8.13).
func (f *fields) fieldsMap(field string) *Map { return f.mapField(field, symbolKey) }

// value reads an optional field of any type ("*").
func (f *fields) value(field string) any {
	c, ok := f.next()
	if !ok {
		return nil
	}
	var v any
	var err error
	if c == codeDescribed {
		v, err = f.r.described()
	} else {
		v, err = f.r.primitive(c)
	}
	f.check(err)
	return v
}

// composite reads an optional field holding one of the given composites.
func (f *fields) composite(field string, allowed ...uint64) Composite {
	c, ok := f.next()
	if !ok {
		return nil
	}
	if c != codeDescribed {
		f.wrongType(field, codeName(allowed[0]), c)
		return nil
	}
	v, err := f.r.typedAfterConstructor(allowed...)
	if !f.check(err) {
		return nil
	}
	return v
}

// typedAfterConstructor decodes a composite whose 0x00 has been read; its
// descriptor must be one of allowed.
func (r *reader) typedAfterConstructor(allowed ...uint64) (Composite, error) {
	at := r.i
	if err := r.enter(); err != nil {
		return nil, err
	}
	code, err := r.descriptorCode()
	if err != nil {
		return nil, err
	}
	ok := false
	for _, a := range allowed {
		ok = ok || a == code
	}
	if !ok {
		return nil, newError(ErrCondDecodeError, ErrInvalidField,
			"%s (descriptor 0x%x) at offset %d where %s is expected", codeName(code), code, at, codeName(allowed[0]))
	}
	v, err := decodeTyped(code, r)
	if err != nil {
		return nil, err
	}
	r.leave()
	return v, nil
}

// decodeTyped decodes the list of the composite with the given code (its
// descriptor has been read). A switch rather than a table of functions, so
// the reader does not escape to the heap.
func decodeTyped(code uint64, r *reader) (Composite, error) {
	switch code {
	case codeOpen:
		return decodeOpen(r)
	case codeBegin:
		return decodeBegin(r)
	case codeAttach:
		return decodeAttach(r)
	case codeFlow:
		return decodeFlow(r)
	case codeTransfer:
		return decodeTransfer(r)
	case codeDisposition:
		return decodeDisposition(r)
	case codeDetach:
		return decodeDetach(r)
	case codeEnd:
		return decodeEnd(r)
	case codeClose:
		return decodeClose(r)
	case codeError:
		return decodeError(r)
	case codeReceived:
		return decodeReceived(r)
	case codeAccepted:
		return decodeAccepted(r)
	case codeRejected:
		return decodeRejected(r)
	case codeReleased:
		return decodeReleased(r)
	case codeModified:
		return decodeModified(r)
	case codeSource:
		return decodeSource(r)
	case codeTarget:
		return decodeTarget(r)
	case codeCoordinator:
		return decodeCoordinator(r)
	case codeDeclare:
		return decodeDeclare(r)
	case codeDischarge:
		return decodeDischarge(r)
	case codeDeclared:
		return decodeDeclared(r)
	case codeTransactionalState:
		return decodeTransactionalState(r)
	case codeSASLMechanisms:
		return decodeSASLMechanisms(r)
	case codeSASLInit:
		return decodeSASLInit(r)
	case codeSASLChallenge:
		return decodeSASLChallenge(r)
	case codeSASLResponse:
		return decodeSASLResponse(r)
	case codeSASLOutcome:
		return decodeSASLOutcome(r)
	}
	return nil, newError(ErrCondDecodeError, ErrInvalidField, "%s (descriptor 0x%x) has no typed form", codeName(code), code)
}

// hasTypedForm reports whether decodeTyped knows the code.
func hasTypedForm(code uint64) bool {
	return code >= codeOpen && code <= codeClose || code == codeError ||
		code >= codeReceived && code <= codeTarget ||
		code >= codeCoordinator && code <= codeTransactionalState ||
		code >= codeSASLMechanisms && code <= codeSASLOutcome
}

// DecodeComposite turns a generic value holding a known composite (a
// Described with the composite's descriptor, as the generic decoder and
// DecodeMessage return an AmqpValue body) into its typed form: a *Declare
// or *Discharge sent to a transaction coordinator, for example. A value
// that already is a Composite is returned as it is.
func DecodeComposite(v any, l Limits) (Composite, error) {
	if c, ok := v.(Composite); ok {
		return c, nil
	}
	d, ok := v.(Described)
	if !ok {
		return nil, newError(ErrCondDecodeError, ErrInvalidField, "%s is not a described value", describe(v))
	}
	var code uint64
	switch x := d.Descriptor.(type) {
	case uint64:
		code = x
	case Symbol:
		code = descriptorCodes[string(x)]
	}
	if !hasTypedForm(code) {
		return nil, newError(ErrCondDecodeError, ErrInvalidField, "descriptor %v has no typed form", d.Descriptor)
	}
	l = l.withDefaults()
	b := AppendValue(nil, v)
	r := newReader(b, &l, false)
	if _, err := r.byte1(); err != nil {
		return nil, err
	}
	return r.typedAfterConstructor(code)
}

// listWriter encodes the fields of a composite into a list that ends at its
// last non-null field (AMQP 1.0 §1.4: trailing nulls may be omitted; they
// are, so the encoding is the smallest).
type listWriter struct {
	start  int // offset of the list's 32-bit placeholder
	n      int // fields written
	keepAt int // len(dst) after the last non-null field
	keepN  int // fields up to and including it
}

// beginList appends the descriptor and the list placeholder of a composite.
func beginList(dst []byte, code uint64) ([]byte, listWriter) {
	dst = appendUlong(append(dst, codeDescribed), code)
	dst, start := beginCompound(dst, codeList32)
	return dst, listWriter{start: start, keepAt: len(dst)}
}

// null appends an absent field.
func (w *listWriter) null(dst []byte) []byte {
	w.n++
	return append(dst, codeNull)
}

// kept marks the field just appended as present.
func (w *listWriter) kept(dst []byte) []byte {
	w.n++
	w.keepAt, w.keepN = len(dst), w.n
	return dst
}

// end drops the trailing nulls and completes the list: list0 when no field
// is present, list8 or list32 otherwise.
func (w *listWriter) end(dst []byte) []byte {
	dst = dst[:w.keepAt]
	if w.keepN == 0 {
		dst = dst[:w.start]
		return append(dst, codeList0)
	}
	return finishCompound(dst, w.start, w.keepN, codeList8)
}

func (w *listWriter) uint(dst []byte, v uint32, omit bool) []byte {
	if omit {
		return w.null(dst)
	}
	return w.kept(appendUint(dst, v))
}

func (w *listWriter) optUint(dst []byte, v *uint32) []byte {
	if v == nil {
		return w.null(dst)
	}
	return w.kept(appendUint(dst, *v))
}

func (w *listWriter) ulong(dst []byte, v uint64, omit bool) []byte {
	if omit {
		return w.null(dst)
	}
	return w.kept(appendUlong(dst, v))
}

func (w *listWriter) ushort(dst []byte, v uint16, omit bool) []byte {
	if omit {
		return w.null(dst)
	}
	return w.kept(binary.BigEndian.AppendUint16(append(dst, codeUshort), v))
}

func (w *listWriter) ubyte(dst []byte, v uint8, omit bool) []byte {
	if omit {
		return w.null(dst)
	}
	return w.kept(append(dst, codeUbyte, v))
}

// bool writes a boolean whose default is false: false is omitted.
func (w *listWriter) bool(dst []byte, v bool) []byte {
	if !v {
		return w.null(dst)
	}
	return w.kept(append(dst, codeTrue))
}

func (w *listWriter) optBool(dst []byte, v *bool) []byte {
	if v == nil {
		return w.null(dst)
	}
	return w.kept(AppendValue(dst, *v))
}

// mandBool writes a mandatory boolean.
func (w *listWriter) mandBool(dst []byte, v bool) []byte {
	return w.kept(AppendValue(dst, v))
}

// string writes a string; "" is omitted unless mandatory.
func (w *listWriter) string(dst []byte, v string, mandatory bool) []byte {
	if v == "" && !mandatory {
		return w.null(dst)
	}
	return w.kept(appendString(dst, v))
}

func (w *listWriter) symbol(dst []byte, v Symbol, mandatory bool) []byte {
	if v == "" && !mandatory {
		return w.null(dst)
	}
	return w.kept(appendSymbol(dst, v))
}

// binary writes a binary; nil is omitted unless mandatory.
func (w *listWriter) binary(dst []byte, v []byte, mandatory bool) []byte {
	if v == nil && !mandatory {
		return w.null(dst)
	}
	return w.kept(appendBinary(dst, v))
}

func (w *listWriter) timestamp(dst []byte, v Timestamp) []byte {
	if v == 0 {
		return w.null(dst)
	}
	return w.kept(binary.BigEndian.AppendUint64(append(dst, codeTimestamp), uint64(v)))
}

func (w *listWriter) millis(dst []byte, v time.Duration) []byte {
	if v <= 0 {
		return w.null(dst)
	}
	return w.kept(appendMillis(dst, v))
}

// symbols writes a multiple symbol field as an array of symbols; nil is
// omitted unless mandatory.
func (w *listWriter) symbols(dst []byte, v []Symbol, mandatory bool) []byte {
	if v == nil && !mandatory {
		return w.null(dst)
	}
	return w.kept(appendSymbolArray(dst, v))
}

func (w *listWriter) mapv(dst []byte, v *Map) []byte {
	if v == nil {
		return w.null(dst)
	}
	return w.kept(appendMap(dst, v))
}

func (w *listWriter) value(dst []byte, v any) []byte {
	if v == nil {
		return w.null(dst)
	}
	return w.kept(AppendValue(dst, v))
}

func (w *listWriter) composite(dst []byte, v Composite) []byte {
	if v == nil || isNilComposite(v) {
		return w.null(dst)
	}
	return w.kept(v.appendComposite(dst))
}

// appendSymbolArray appends an array of symbols, sym8 elements when every
// symbol fits.
func appendSymbolArray(dst []byte, v []Symbol) []byte {
	dst, start := beginCompound(dst, codeArray32)
	c := byte(codeSym8)
	for _, s := range v {
		if len(s) > math.MaxUint8 {
			c = codeSym32
		}
	}
	dst = append(dst, c)
	for _, s := range v {
		dst = appendElemString(dst, c, string(s))
	}
	return finishCompound(dst, start, len(v), codeArray8)
}
