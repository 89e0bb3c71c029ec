package wire

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// fuzzLimits picks, from sel, DefaultLimits or small limits the fuzzer can
// cross with short inputs.
func fuzzLimits(sel uint8) Limits {
	switch (sel / 3) % 3 {
	case 1:
		return Limits{MaxFrameSize: 512, MaxNesting: 4, MaxContainerCount: 8}
	case 2:
		return Limits{MaxFrameSize: 64, MaxNesting: 8, MaxContainerCount: 32}
	}
	return DefaultLimits()
}

// FuzzAMQPWireDecode checks, for any input, limits and split: decoding
// never panics; a split stream decodes exactly as the whole stream;
// decoded sizes respect the limits; and decode -> encode -> decode gives
// the same value (compared through a second encoding, which must be
// identical). sel%3 picks the decoder: stream, value or message.
func FuzzAMQPWireDecode(f *testing.F) {
	for i, tc := range goldenCases() {
		sel := uint8(tc.kind)
		f.Add(tc.raw, sel, uint64(i))
		f.Add(tc.raw, sel+3, uint64(i)*7919)
	}
	f.Fuzz(func(t *testing.T, raw []byte, sel uint8, seed uint64) {
		l := fuzzLimits(sel).withDefaults()
		switch caseKind(sel % 3) {
		case kindValue:
			fuzzValue(t, raw, l)
		case kindMessage:
			fuzzMessage(t, raw, l)
		default:
			fuzzStream(t, raw, l, seed)
		}
	})
}

func fuzzStream(t *testing.T, raw []byte, l Limits, seed uint64) {
	whole, wholeErr := decodeStream(l, [][]byte{raw})

	rng := rand.New(rand.NewPCG(seed, uint64(len(raw))))
	var chunks [][]byte
	for rest := raw; len(rest) > 0; {
		n := 1 + rng.IntN(min(len(rest), 1+rng.IntN(64)))
		chunks = append(chunks, rest[:n])
		rest = rest[n:]
	}
	split, splitErr := decodeStream(l, chunks)
	if len(split) != len(whole) || !bytes.Equal(encodeFrames(split), encodeFrames(whole)) || fmt.Sprint(splitErr) != fmt.Sprint(wholeErr) {
		t.Fatalf("split input differs:\n split %s err %v\n whole %s err %v", dump(split), splitErr, dump(whole), wholeErr)
	}
	if wholeErr != nil {
		checkError(t, wholeErr)
	}

	for _, fr := range whole {
		if len(fr.Payload) > int(l.MaxFrameSize)-FrameHeaderSize {
			t.Fatalf("payload of %d bytes in frames limited to %d", len(fr.Payload), l.MaxFrameSize)
		}
		if fr.Payload != nil && len(fr.Payload) == 0 {
			t.Fatal("empty payload is not nil")
		}
		if fr.Type == FrameSASL && fr.Body == nil {
			t.Fatal("empty SASL frame returned")
		}
		checkSizes(t, reflect.ValueOf(fr.Body), 0, l)
	}

	// Re-encode, re-decode (frames may grow: arrays of booleans sent with
	// 0x41 come back as 0x56), encode again.
	enc := encodeFrames(whole)
	big := l
	big.MaxFrameSize = 1 << 30
	again, err := decodeStream(big, [][]byte{enc})
	if err != nil {
		t.Fatalf("re-decoding % x: %v\nframes %s", enc, err, dump(whole))
	}
	if enc2 := encodeFrames(again); !bytes.Equal(enc2, enc) {
		t.Fatalf("round trip differs:\n first  % x\n second % x", enc, enc2)
	}
}

func fuzzValue(t *testing.T, raw []byte, l Limits) {
	v, n, err := DecodeValue(raw, l)
	if err != nil {
		checkError(t, err)
		return
	}
	if n <= 0 || n > len(raw) {
		t.Fatalf("DecodeValue used %d of %d bytes", n, len(raw))
	}
	checkSizes(t, reflect.ValueOf(&v).Elem(), 0, l)
	enc := AppendValue(nil, v)
	v2, n2, err := DecodeValue(enc, l)
	if err != nil || n2 != len(enc) {
		t.Fatalf("re-decoding % x: %v (%d of %d bytes)", enc, err, n2, len(enc))
	}
	if !Equal(v, v2) {
		t.Fatalf("round trip:\n got  %s\n want %s", dump(v2), dump(v))
	}
	if enc2 := AppendValue(nil, v2); !bytes.Equal(enc2, enc) {
		t.Fatalf("second encoding differs:\n % x\n % x", enc, enc2)
	}
}

func fuzzMessage(t *testing.T, raw []byte, l Limits) {
	m, err := DecodeMessageWithLimits(raw, l)
	// A reused MessageDecoder, holding a previous message (whole, or as
	// far as l let it decode), decodes raw as DecodeMessageWithLimits
	// does: nothing of the previous one stays.
	md := NewMessageDecoder(l)
	_, _ = md.Decode(AppendMessage(nil, benchMessage()))
	rm, rerr := md.Decode(raw)
	if (err == nil) != (rerr == nil) {
		t.Fatalf("DecodeMessageWithLimits: %v; MessageDecoder.Decode: %v", err, rerr)
	}
	if err != nil {
		checkError(t, err)
		return
	}
	for s := SectionHeader; s < numSections; s++ {
		if !bytes.Equal(rm.Raw(s), m.Raw(s)) {
			t.Fatalf("section %d: reused decoder % x, fresh % x", s, rm.Raw(s), m.Raw(s))
		}
	}
	a, b := *m, *rm
	a.ResetEncoding()
	b.ResetEncoding()
	if ea, eb := AppendMessage(nil, &a), AppendMessage(nil, &b); !bytes.Equal(ea, eb) {
		t.Fatalf("reused decoder's fields differ:\n fresh  % x\n reused % x", ea, eb)
	}
	checkSizes(t, reflect.ValueOf(m), 0, l)
	if !bytes.Equal(m.Encoded(), raw) {
		t.Fatal("Encoded() is not the input")
	}
	// As decoded: the bare message is copied.
	enc := AppendMessage(nil, m)
	m2, err := DecodeMessageWithLimits(enc, l)
	if err != nil {
		t.Fatalf("re-decoding % x: %v", enc, err)
	}
	if enc2 := AppendMessage(nil, m2); !bytes.Equal(enc2, enc) {
		t.Fatalf("round trip differs:\n first  % x\n second % x", enc, enc2)
	}
	if !bytes.Equal(m2.Bare(), m.Bare()) {
		t.Fatalf("bare message changed:\n % x\n % x", m.Bare(), m2.Bare())
	}
	// From the fields.
	m.ResetEncoding()
	fresh := AppendMessage(nil, m)
	m3, err := DecodeMessageWithLimits(fresh, l)
	if err != nil {
		t.Fatalf("re-decoding from fields % x: %v", fresh, err)
	}
	m3.ResetEncoding()
	if again := AppendMessage(nil, m3); !bytes.Equal(again, fresh) {
		t.Fatalf("round trip from fields differs:\n first  % x\n second % x", fresh, again)
	}
}

// checkError: every decode error is an *Error with a condition.
func checkError(t *testing.T, err error) {
	t.Helper()
	e, ok := err.(*Error)
	if !ok || e.Condition == "" || e.Unwrap() == nil {
		t.Fatalf("error %v (%T) is not an *Error with a condition and a sentinel", err, err)
	}
}

// checkSizes walks a decoded value and checks every generic container
// against the limits: element counts and nesting depth.
func checkSizes(t *testing.T, v reflect.Value, depth int, l Limits) {
	t.Helper()
	if depth > l.MaxNesting+2 {
		t.Fatalf("value nested %d deep, limit %d", depth, l.MaxNesting)
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if !v.IsNil() {
			checkSizes(t, v.Elem(), depth, l)
		}
	case reflect.Struct:
		switch x := v.Interface().(type) {
		case Map:
			if 2*len(x.Entries) > l.MaxContainerCount {
				t.Fatalf("map of %d entries, limit %d elements", len(x.Entries), l.MaxContainerCount)
			}
			depth++
		case Array:
			if len(x.Elems) > l.MaxContainerCount {
				t.Fatalf("array of %d elements, limit %d", len(x.Elems), l.MaxContainerCount)
			}
			depth++
		case Described:
			depth++
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				checkSizes(t, v.Field(i), depth, l)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		if v.Type() == reflect.TypeFor[[]any]() {
			if v.Len() > l.MaxContainerCount {
				t.Fatalf("list of %d elements, limit %d", v.Len(), l.MaxContainerCount)
			}
			depth++
		}
		for i := range v.Len() {
			checkSizes(t, v.Index(i), depth, l)
		}
	}
}
