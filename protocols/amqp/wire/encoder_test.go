package wire

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestAMQPWireEncodeSmallest pins the encoding AppendValue chooses: the
// smallest of each type's encodings (AMQP 1.0 §1.3).
func TestAMQPWireEncodeSmallest(t *testing.T) {
	long := strings.Repeat("x", 255)
	check := func(name string, v any, want []byte) {
		t.Helper()
		if got := AppendValue(nil, v); !bytes.Equal(got, want) {
			t.Errorf("%s: AppendValue = % x, want % x", name, got, want)
		}
	}
	check("nil", nil, hx("40"))
	check("true", true, hx("41"))
	check("false", false, hx("42"))
	check("ubyte", uint8(7), hx("50 07"))
	check("ushort", uint16(0x102), hx("60 01 02"))
	check("uint 0", uint32(0), hx("43"))
	check("uint 255", uint32(255), hx("52 ff"))
	check("uint 256", uint32(256), hx("70 00 00 01 00"))
	check("ulong 0", uint64(0), hx("44"))
	check("ulong 255", uint64(255), hx("53 ff"))
	check("ulong 256", uint64(256), hx("80 00 00 00 00 00 00 01 00"))
	check("byte", int8(-2), hx("51 fe"))
	check("short", int16(-2), hx("61 ff fe"))
	check("int -128", int32(-128), hx("54 80"))
	check("int 128", int32(128), hx("71 00 00 00 80"))
	check("long 127", int64(127), hx("55 7f"))
	check("long -129", int64(-129), hx("81 ff ff ff ff ff ff ff 7f"))
	check("float", float32(1.5), hx("72 3f c0 00 00"))
	check("double", 1.5, hx("82 3f f8 00 00 00 00 00 00"))
	check("char", Char('é'), hx("73 00 00 00 e9"))
	check("timestamp", Timestamp(1), hx("83 00 00 00 00 00 00 00 01"))
	check("str8 at 255 bytes", long, cat(hx("a1 ff"), []byte(long)))
	check("str32 at 256 bytes", long+"y", cat(hx("b1 00 00 01 00"), []byte(long+"y")))
	check("sym8", Symbol("a"), hx(`a3 01 "a"`))
	check("sym32", Symbol(long+"y"), cat(hx("b3 00 00 01 00"), []byte(long+"y")))
	check("vbin8", []byte{1}, hx("a0 01 01"))
	check("vbin8 nil", []byte(nil), hx("a0 00"))
	check("vbin32", []byte(long+"y"), cat(hx("b0 00 00 01 00"), []byte(long+"y")))
	check("list0", []any{}, hx("45"))
	check("list8", []any{nil, true}, hx("c0 03 02 40 41"))
	// A list8's size byte counts the count byte: 254 body bytes fit, 255 do not.
	body254 := []any{strings.Repeat("z", 252)}
	check("list8 at 254 body bytes", body254, cat(hx("c0 ff 01 a1 fc"), []byte(strings.Repeat("z", 252))))
	body255 := []any{strings.Repeat("z", 253)}
	check("list32 at 255 body bytes", body255, cat(hx("d0 00 00 01 03 00 00 00 01 a1 fd"), []byte(strings.Repeat("z", 253))))
	check("map8", NewMap(Symbol("k"), uint32(1)), hx(`c1 06 02 a3 01 "k" 52 01`))
	check("map8 empty", &Map{}, hx("c1 01 00"))
	check("nil map", (*Map)(nil), hx("40"))
	check("array of smalluint", Array{Type: TypeUint, Elems: []any{uint32(1), uint32(2)}}, hx("e0 04 02 52 01 02"))
	check("array of uint", Array{Type: TypeUint, Elems: []any{uint32(1), uint32(256)}}, hx("e0 0a 02 70 00 00 00 01 00 00 01 00"))
	check("array of uint0 values uses smalluint", Array{Type: TypeUint, Elems: []any{uint32(0)}}, hx("e0 03 01 52 00"))
	check("array of boolean", Array{Type: TypeBoolean, Elems: []any{true, false}}, hx("e0 04 02 56 01 00"))
	check("array of null", Array{Type: TypeNull, Elems: []any{nil, nil}}, hx("e0 02 02 40"))
	check("array of int", Array{Type: TypeInt, Elems: []any{int32(-1), int32(1000)}}, hx("e0 0a 02 71 ff ff ff ff 00 00 03 e8"))
	check("array of long", Array{Type: TypeLong, Elems: []any{int64(-1)}}, hx("e0 03 01 55 ff"))
	check("array of ulong", Array{Type: TypeUlong, Elems: []any{uint64(256)}}, hx("e0 0a 01 80 00 00 00 00 00 00 01 00"))
	check("empty array of string", Array{Type: TypeString, Elems: []any{}}, hx("e0 02 00 a1"))
	check("array of sym32", Array{Type: TypeSymbol, Elems: []any{Symbol(long + "y")}},
		cat(hx("f0 00 00 01 09 00 00 00 01 b3 00 00 01 00"), []byte(long+"y")))
	check("array of binary", Array{Type: TypeBinary, Elems: []any{[]byte{1}}}, hx("e0 04 01 a0 01 01"))
	check("array of uuid", Array{Type: TypeUUID, Elems: []any{UUID{15: 1}}}, cat(hx("e0 12 01 98"), make([]byte, 15), []byte{1}))
	check("array of lists shrinks its elements", Array{Type: TypeList, Elems: []any{[]any{true}, []any{}}},
		hx("e0 07 02 c0 02 01 41 01 00"))
	check("array of large lists keeps list32", Array{Type: TypeList, Elems: []any{[]any{strings.Repeat("z", 253)}}},
		cat(hx("f0 00 00 01 0c 00 00 00 01 d0 00 00 01 03 00 00 00 01 a1 fd"), []byte(strings.Repeat("z", 253))))
	check("array of maps", Array{Type: TypeMap, Elems: []any{NewMap(Symbol("k"), true)}}, hx(`e0 08 01 c1 05 02 a3 01 "k" 41`))
	check("array of arrays", Array{Type: TypeArray, Elems: []any{
		Array{Type: TypeUint, Elems: []any{uint32(1), uint32(2)}},
		Array{Type: TypeString, Elems: []any{""}},
	}}, hx("e0 0b 02 e0 04 02 52 01 02 03 01 a1 00"))
	check("array of described", Array{Type: TypeList, Descriptor: Symbol("x:y"), Elems: []any{[]any{true}}},
		hx(`e0 0b 01 00 a3 03 "x:y" c0 02 01 41`))
	check("described", Described{Descriptor: uint64(0x77), Value: "hi"}, hx(`00 53 77 a1 02 "hi"`))
	check("described symbol", Described{Descriptor: Symbol("a:b"), Value: nil}, hx(`00 a3 03 "a:b" 40`))
	check("composite", &Accepted{}, hx("00 53 24 45"))
	check("composite with fields", &Rejected{Error: &Error{Condition: ErrCondNotFound}},
		cat(hx("00 53 25 c0 17 01 00 53 1d c0 11 01 a3 0e"), []byte("amqp:not-found")))
}

func TestAMQPWireEncodePanicsOnValuesOutsideTheModel(t *testing.T) {
	for name, v := range map[string]any{
		"go int":                 42,
		"go map":                 map[string]any{"a": 1},
		"array element mismatch": Array{Type: TypeUint, Elems: []any{"x"}},
		"array null mismatch":    Array{Type: TypeNull, Elems: []any{true}},
		"array fixed mismatch":   Array{Type: TypeFloat, Elems: []any{1.5}},
		"array invalid type":     Array{Type: 0, Elems: []any{}},
		"descriptor of a string": Described{Descriptor: "x", Value: nil},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatalf("AppendValue(%#v) did not panic", v)
				}
			}()
			AppendValue(nil, v)
		})
	}
}

// TestAMQPWireEncodePerformatives pins performative encodings: trailing
// nulls dropped, defaults omitted, smallest list form.
func TestAMQPWireEncodePerformatives(t *testing.T) {
	check := func(name string, p Composite, want []byte) {
		t.Helper()
		if got := AppendValue(nil, p); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got % x\nwant % x", name, got, want)
		}
	}
	check("open with defaults", NewOpen("c"), hx(`00 53 10 c0 04 01 a1 01 "c"`))
	check("open with a max-frame-size", &Open{ContainerID: "c", MaxFrameSize: 131072, ChannelMax: math.MaxUint16, IdleTimeOut: 30 * time.Second,
		OfferedCapabilities: []Symbol{"ANONYMOUS-RELAY"}},
		hx(`00 53 10 c0 26 08 a1 01 "c" 40 70 00 02 00 00 40 70 00 00 75 30 40 40 e0 12 01 a3 0f "ANONYMOUS-RELAY"`))
	check("begin", &Begin{RemoteChannel: u16p(0), NextOutgoingID: 1, IncomingWindow: 2048, OutgoingWindow: 2048, HandleMax: math.MaxUint32},
		hx("00 53 11 c0 10 04 60 00 00 52 01 70 00 00 08 00 70 00 00 08 00"))
	check("attach with defaults", NewAttach("l", 0, RoleReceiver), hx(`00 53 12 c0 06 03 a1 01 "l" 43 41`))
	check("attach coordinator", &Attach{Name: "l", Role: RoleSender, SndSettleMode: SndSettleMixed,
		Source: &Source{}, Target: &Coordinator{}}, hx(`00 53 12 c0 10 07 a1 01 "l" 43 42 40 40 00 53 28 45 00 53 30 45`))
	check("source expiry policy default omitted", &Source{Address: "q", ExpiryPolicy: ExpirySessionEnd},
		hx(`00 53 28 c0 04 01 a1 01 "q"`))
	check("transfer", &Transfer{Handle: 1, DeliveryID: u32p(2), DeliveryTag: []byte{3}, MessageFormat: u32p(0), Settled: boolp(true)},
		hx("00 53 14 c0 0a 05 52 01 52 02 a0 01 03 43 41"))
	check("continuation transfer", &Transfer{Handle: 1, More: true}, hx("00 53 14 c0 08 06 52 01 40 40 40 40 41"))
	check("disposition", &Disposition{Role: RoleReceiver, First: 3, Settled: true, State: &Accepted{}},
		hx("00 53 15 c0 0a 05 41 52 03 40 41 00 53 24 45"))
	check("flow", &Flow{IncomingWindow: 10, NextOutgoingID: 0, OutgoingWindow: 10, Handle: u32p(0), DeliveryCount: u32p(0), LinkCredit: u32p(100)},
		hx("00 53 13 c0 0b 07 40 52 0a 43 52 0a 43 43 52 64"))
	check("end", &End{}, hx("00 53 17 45"))
	check("close with error", &Close{Error: &Error{Condition: ErrCondDecodeError, Description: "bad"}},
		cat(hx("00 53 18 c0 1f 01 00 53 1d c0 19 02 a3 11"), []byte("amqp:decode-error"), hx(`a1 03 "bad"`)))
	check("sasl-outcome ok", &SASLOutcome{Code: SASLOK}, hx("00 53 44 c0 03 01 50 00"))
	check("sasl-mechanisms", &SASLMechanisms{Mechanisms: []Symbol{"PLAIN", "ANONYMOUS"}},
		hx(`00 53 40 c0 15 01 e0 12 02 a3 05 "PLAIN" 09 "ANONYMOUS"`))
	check("discharge", &Discharge{TxnID: []byte{1}, Fail: true}, hx("00 53 32 c0 05 02 a0 01 01 41"))
	check("declared with empty txn-id", &Declared{TxnID: nil}, hx("00 53 33 c0 03 01 a0 00"))
}

func TestAMQPWireAppendFrame(t *testing.T) {
	got := AppendFrame(nil, 7, &End{}, nil)
	if want := hx("00 00 00 0c 02 00 00 07 00 53 17 45"); !bytes.Equal(got, want) {
		t.Errorf("AppendFrame(End) = % x, want % x", got, want)
	}
	if got, want := AppendFrame(nil, 3, nil, nil), hx("00 00 00 08 02 00 00 03"); !bytes.Equal(got, want) {
		t.Errorf("heartbeat = % x, want % x", got, want)
	}
	if got, want := AppendFrame(nil, 0, (*End)(nil), nil), hx("00 00 00 08 02 00 00 00"); !bytes.Equal(got, want) {
		t.Errorf("typed nil performative = % x, want a heartbeat % x", got, want)
	}
	if got, want := AppendSASLFrame(nil, &SASLOutcome{Code: SASLAuth}), hx("00 00 00 10 02 01 00 00 00 53 44 c0 03 01 50 01"); !bytes.Equal(got, want) {
		t.Errorf("sasl frame = % x, want % x", got, want)
	}
	if got := AppendHeader([]byte("x"), ProtocolSASL); string(got) != "x"+HeaderSASL {
		t.Errorf("AppendHeader = %q", got)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("AppendSASLFrame(Open) did not panic")
			}
		}()
		AppendSASLFrame(nil, NewOpen("c"))
	}()

	tr := &Transfer{Handle: 1, DeliveryID: u32p(2), DeliveryTag: []byte{0, 0, 0, 3}, MessageFormat: u32p(0), Settled: boolp(false)}
	payload := bytes.Repeat([]byte{'p'}, 1024)
	buf := AppendFrame(nil, 1, tr, payload)
	if n := testing.AllocsPerRun(100, func() { buf = AppendFrame(buf[:0], 1, tr, payload) }); n != 0 {
		t.Errorf("AppendFrame with capacity allocated %v times, want 0", n)
	}
	m := benchMessage()
	mbuf := AppendMessage(nil, m)
	if n := testing.AllocsPerRun(100, func() { mbuf = AppendMessage(mbuf[:0], m) }); n != 0 {
		t.Errorf("AppendMessage with capacity allocated %v times, want 0", n)
	}
}

// TestAMQPWireAppendTransfer splits a payload over frames no larger than
// the peer's max-frame-size and checks the session can join them.
func TestAMQPWireAppendTransfer(t *testing.T) {
	payload := make([]byte, 5000)
	for i := range payload {
		payload[i] = byte(i)
	}
	tr := &Transfer{Handle: 4, DeliveryID: u32p(8), DeliveryTag: []byte("tag"), MessageFormat: u32p(0), Settled: boolp(true)}
	orig := *tr
	for _, maxFrame := range []uint32{512, 1000, 4999, 6000, 0} {
		enc, err := AppendTransfer([]byte("prefix"), 1, tr, payload, maxFrame)
		if err != nil {
			t.Fatalf("max %d: %v", maxFrame, err)
		}
		if !reflect.DeepEqual(*tr, orig) {
			t.Fatalf("AppendTransfer modified its transfer: %+v", *tr)
		}
		got, err := decodeStream(DefaultLimits(), [][]byte{hdrAMQP, enc[len("prefix"):]})
		if err != nil {
			t.Fatalf("max %d: %v", maxFrame, err)
		}
		var joined []byte
		frames := got[1:]
		for i, f := range frames {
			size := len(AppendFrame(nil, f.Channel, f.Body, f.Payload))
			if maxFrame != 0 && size > int(maxFrame) {
				t.Errorf("max %d: frame %d has %d bytes", maxFrame, i, size)
			}
			x := f.Body.(*Transfer)
			if x.Handle != 4 || x.More != (i < len(frames)-1) {
				t.Errorf("max %d: frame %d: handle %d more %v", maxFrame, i, x.Handle, x.More)
			}
			if i == 0 && (x.DeliveryID == nil || *x.DeliveryID != 8 || string(x.DeliveryTag) != "tag") {
				t.Errorf("max %d: first frame lost its delivery fields: %+v", maxFrame, x)
			}
			if i > 0 && (x.DeliveryID != nil || x.DeliveryTag != nil) {
				t.Errorf("max %d: continuation frame %d carries delivery fields: %+v", maxFrame, i, x)
			}
			joined = append(joined, f.Payload...)
		}
		if !bytes.Equal(joined, payload) {
			t.Fatalf("max %d: joined payload differs (%d bytes, want %d)", maxFrame, len(joined), len(payload))
		}
		if maxFrame == 6000 || maxFrame == 0 {
			if len(frames) != 1 {
				t.Errorf("max %d: %d frames, want 1", maxFrame, len(frames))
			}
		}
	}

	_, err := AppendTransfer(nil, 0, tr, payload, 20)
	var e *Error
	if !errors.As(err, &e) || e.Condition != ErrCondFrameSizeTooSmall {
		t.Fatalf("tiny max-frame-size: error %v, want amqp:frame-size-too-small", err)
	}
	empty, err := AppendTransfer(nil, 0, &Transfer{Handle: 1, More: true}, nil, 512)
	if err != nil || !bytes.Equal(empty, AppendFrame(nil, 0, &Transfer{Handle: 1, More: true}, nil)) {
		t.Fatalf("empty payload: % x, %v", empty, err)
	}
}

func TestAMQPWireDecoderErrorMessages(t *testing.T) {
	check := func(raw []byte, l Limits, want string) {
		t.Helper()
		_, err := decodeStream(l, [][]byte{raw})
		if err == nil || err.Error() != want {
			t.Errorf("decode % x:\n error %v\n want  %s", raw, err, want)
		}
	}
	def := DefaultLimits()
	check([]byte("GET / HTTP/1.1\r\n"), def,
		`amqp: connection:framing-error: protocol header "GET / HT" is not AMQP 1.0 (want "AMQP\x00\x01\x00\x00", "AMQP\x03\x01\x00\x00" or "AMQP\x02\x01\x00\x00")`)
	check(cat(hdrAMQP, hx("00 10 00 00 02 00 00 00")), def,
		"amqp: connection:framing-error: frame of 1048576 bytes exceeds max-frame-size 131072")
	check(cat(hdrAMQP, amqpFrame(0, described(0x10, list8(null)))), def,
		"amqp: invalid-field: open.container-id is mandatory")
	check(cat(hdrAMQP, amqpFrame(0, described(0x10, list8(str8("c"), null, str8("big"))))), def,
		"amqp: decode-error: open.max-frame-size: uint expected, got string")
	check(cat(hdrAMQP, amqpFrame(0, described(0x12, list8(str8("l"), smallUint(0), fals1, null, null, described(0x29, list0))))), def,
		"amqp: decode-error: target (descriptor 0x29) at offset 15 where source is expected")
	check(cat(hdrSASL, amqpFrame(0, described(0x10, list8(str8("c"))))), def,
		"amqp: connection:framing-error: AMQP frame during the SASL exchange")
	check(cat(hdrAMQP, amqpFrame(0, described(0x10, list8(str8("c"), null, null, null, null, null, null, null, null,
		map8(sym8("k"), hx("a1 01 ff")))))), def,
		"amqp: decode-error: string at offset 24 is not valid UTF-8")

	_, err := decodeStream(def, [][]byte{cat(hdrAMQP, amqpFrame(0, described(0x10, list8(null))))})
	var e *Error
	if !errors.As(err, &e) || e.Info.Len() != 1 {
		t.Fatalf("invalid-field error %v has no info", err)
	}
	if v, _ := e.Info.Get(Symbol("invalid-field")); v != Symbol("container-id") {
		t.Errorf("info invalid-field = %v, want container-id", v)
	}
}

func TestAMQPWireStickyError(t *testing.T) {
	d := NewDecoder(DefaultLimits())
	_, err := d.Feed([]byte("AMQP\x09\x01\x00\x00"), nil)
	if !errors.Is(err, ErrProtocolHeader) {
		t.Fatalf("error = %v, want ErrProtocolHeader", err)
	}
	got, err2 := d.Feed(hdrAMQP, nil)
	if err2 != err || len(got) != 0 || d.Err() != err {
		t.Fatalf("after an error Feed returned %d frames and %v, want no frames and %v", len(got), err2, err)
	}
}

// TestAMQPWireFeedStops: Feed returns after a header and after each SASL
// frame, holding the rest until the session has looked.
func TestAMQPWireFeedStops(t *testing.T) {
	saslInit := saslFrame(described(0x41, list8(sym8("ANONYMOUS"))))
	open := amqpFrame(0, described(0x10, list8(str8("c"))))
	d := NewDecoder(DefaultLimits())
	out, err := d.Feed(cat(hdrSASL, saslInit, hdrAMQP, open), nil)
	if err != nil || len(out) != 1 || out[0].Protocol != ProtocolSASL {
		t.Fatalf("first Feed: %s %v", dump(out), err)
	}
	if d.Buffered() != len(saslInit)+8+len(open) {
		t.Fatalf("Buffered = %d", d.Buffered())
	}
	out, err = d.Feed(nil, out[:0])
	if err != nil || len(out) != 1 || out[0].Type != FrameSASL {
		t.Fatalf("second Feed: %s %v", dump(out), err)
	}
	d.SetExpectHeader()
	out, err = d.Feed(nil, out[:0])
	if err != nil || len(out) != 1 || out[0].Protocol != ProtocolAMQP {
		t.Fatalf("third Feed: %s %v", dump(out), err)
	}
	out, err = d.Feed(nil, out[:0])
	if err != nil || len(out) != 1 || d.Buffered() != 0 {
		t.Fatalf("fourth Feed: %s %v, %d buffered", dump(out), err, d.Buffered())
	}
	if _, ok := out[0].Body.(*Open); !ok {
		t.Fatalf("fourth Feed gave %s, want the open", dump(out))
	}
}

func TestAMQPWireTLSHeaderHandsOverTheRest(t *testing.T) {
	d := NewDecoder(DefaultLimits())
	hello := []byte{0x16, 0x03, 0x01, 0x02, 0x00}
	out, err := d.Feed(cat(hdrTLS, hello), nil)
	if err != nil || len(out) != 1 || out[0].Protocol != ProtocolTLS {
		t.Fatalf("Feed: %s %v", dump(out), err)
	}
	if got := d.TakeBuffered(); !bytes.Equal(got, hello) || d.Buffered() != 0 {
		t.Fatalf("TakeBuffered = % x, want the TLS record % x", got, hello)
	}
	// The decrypted stream starts with its own header.
	out, err = d.Feed(cat(hdrSASL), out[:0])
	if err != nil || len(out) != 1 || out[0].Protocol != ProtocolSASL {
		t.Fatalf("inner header: %s %v", dump(out), err)
	}
}

func TestAMQPWireSetExpectHeaderMidFrame(t *testing.T) {
	end := amqpFrame(0, described(0x17, list0))
	d := NewDecoder(DefaultLimits())
	out, err := d.Feed(hdrAMQP, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out, err = d.Feed(end[:5], out); err != nil {
		t.Fatal(err)
	}
	d.SetExpectHeader() // takes effect after the frame being read
	out, err = d.Feed(cat(end[5:], hdrAMQP), out)
	if err != nil || len(out) != 3 || out[1].Body == nil || out[2].Type != FrameHeader {
		t.Fatalf("got %s %v, want a header, the end frame and a header", dump(out), err)
	}
}

func TestAMQPWireSetMaxFrameSize(t *testing.T) {
	d := NewDecoder(Limits{})
	if got := d.Limits().MaxFrameSize; got != 128*1024 {
		t.Fatalf("default MaxFrameSize = %d", got)
	}
	d.SetMaxFrameSize(512)
	big := amqpFrame(0, described(0x14, list8(smallUint(0))), make([]byte, 600))
	if _, err := d.Feed(hdrAMQP, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Feed(big, nil); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("error = %v, want ErrFrameTooLarge", err)
	}
	d = NewDecoder(Limits{})
	d.SetMaxFrameSize(1)
	if d.Limits().MaxFrameSize != FrameHeaderSize {
		t.Fatalf("SetMaxFrameSize(1) gave %d", d.Limits().MaxFrameSize)
	}
}

// TestAMQPWireFrameSizeIsNotAnAllocation: a large but allowed frame size
// reserves memory only as bytes arrive.
func TestAMQPWireFrameSizeIsNotAnAllocation(t *testing.T) {
	d := NewDecoder(Limits{MaxFrameSize: 1 << 30})
	if _, err := d.Feed(cat(hdrAMQP, hx("3f ff ff ff 02 00 00 00 00 53 14")), nil); err != nil {
		t.Fatal(err)
	}
	if c := cap(d.body); c > 4096 {
		t.Fatalf("decoder reserved %d bytes for 3 received", c)
	}
}

// TestAMQPWireLargeTransferSplit feeds a 300 KiB transfer in odd pieces.
func TestAMQPWireLargeTransferSplit(t *testing.T) {
	payload := bytes.Repeat([]byte("0123456789abcdef"), 20000)
	tr := &Transfer{Handle: 0, DeliveryID: u32p(0), DeliveryTag: []byte{1}, MessageFormat: u32p(0)}
	enc := cat(hdrAMQP, AppendFrame(nil, 0, tr, payload), AppendFrame(nil, 0, &End{}, nil))
	d := NewDecoder(Limits{MaxFrameSize: 1 << 20})
	var out []Frame
	for len(enc) > 0 {
		n := min(len(enc), 7919)
		var err error
		out, err = d.Feed(enc[:n], out)
		if err != nil {
			t.Fatal(err)
		}
		if d.Buffered() > 0 {
			out, err = d.Feed(nil, out)
			if err != nil {
				t.Fatal(err)
			}
		}
		enc = enc[n:]
	}
	if len(out) != 3 || !bytes.Equal(out[1].Payload, payload) || cap(out[1].Payload) != len(payload) {
		t.Fatalf("got %d frames; payload %d bytes (cap %d)", len(out), len(out[1].Payload), cap(out[1].Payload))
	}
	if _, ok := out[2].Body.(*End); !ok {
		t.Fatalf("last frame %s", dump(out[2:]))
	}
	if cap(d.body) > keepBytes {
		t.Errorf("decoder kept a %d-byte buffer", cap(d.body))
	}
}

func TestAMQPWireDecodeComposite(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  []byte
		want Composite
	}{
		{"declare", described(0x77, described(0x31, list0)), &Declare{}},
		{"discharge", described(0x77, described(0x32, list8(bin8(0, 1), true1))), &Discharge{TxnID: []byte{0, 1}, Fail: true}},
		{"symbolic declare", described(0x77, cat([]byte{0}, sym8("amqp:declare:list"), list0)), &Declare{}},
	} {
		m, err := DecodeMessage(tc.raw)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := DecodeComposite(m.Value, DefaultLimits())
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: DecodeComposite = %s, %v; want %s", tc.name, dump(got), err, dump(tc.want))
		}
	}
	if got, err := DecodeComposite(&Declare{}, Limits{}); err != nil || !reflect.DeepEqual(got, &Declare{}) {
		t.Errorf("DecodeComposite(composite) = %v, %v", got, err)
	}
	for _, bad := range []any{"x", Described{Descriptor: uint64(0x99), Value: []any{}},
		Described{Descriptor: uint64(0x32), Value: []any{}}, Described{Descriptor: uint64(0x31), Value: "x"}} {
		if _, err := DecodeComposite(bad, Limits{}); !errors.Is(err, ErrInvalidField) {
			t.Errorf("DecodeComposite(%#v) error = %v, want ErrInvalidField", bad, err)
		}
	}
	if name, ok := DescriptorName(0x31); !ok || name != "amqp:declare:list" {
		t.Errorf("DescriptorName(0x31) = %q, %v", name, ok)
	}
}

// TestAMQPWireConditions checks the condition constants against the
// spec's lists (AMQP 1.0 §2.8.15-§2.8.18, §4.5.8).
func TestAMQPWireConditions(t *testing.T) {
	spec := map[Symbol]string{
		ErrCondInternalError: "amqp:internal-error", ErrCondNotFound: "amqp:not-found",
		ErrCondUnauthorizedAccess: "amqp:unauthorized-access", ErrCondDecodeError: "amqp:decode-error",
		ErrCondResourceLimitExceeded: "amqp:resource-limit-exceeded", ErrCondNotAllowed: "amqp:not-allowed",
		ErrCondInvalidField: "amqp:invalid-field", ErrCondNotImplemented: "amqp:not-implemented",
		ErrCondResourceLocked: "amqp:resource-locked", ErrCondPreconditionFailed: "amqp:precondition-failed",
		ErrCondResourceDeleted: "amqp:resource-deleted", ErrCondIllegalState: "amqp:illegal-state",
		ErrCondFrameSizeTooSmall: "amqp:frame-size-too-small", ErrCondConnectionForced: "amqp:connection:forced",
		ErrCondFramingError: "amqp:connection:framing-error", ErrCondConnectionRedirect: "amqp:connection:redirect",
		ErrCondWindowViolation: "amqp:session:window-violation", ErrCondErrantLink: "amqp:session:errant-link",
		ErrCondHandleInUse: "amqp:session:handle-in-use", ErrCondUnattachedHandle: "amqp:session:unattached-handle",
		ErrCondDetachForced: "amqp:link:detach-forced", ErrCondTransferLimitExceeded: "amqp:link:transfer-limit-exceeded",
		ErrCondMessageSizeExceeded: "amqp:link:message-size-exceeded", ErrCondLinkRedirect: "amqp:link:redirect",
		ErrCondStolen: "amqp:link:stolen", ErrCondTransactionUnknownID: "amqp:transaction:unknown-id",
		ErrCondTransactionRollback: "amqp:transaction:rollback", ErrCondTransactionTimeout: "amqp:transaction:timeout",
	}
	if len(spec) != 28 {
		t.Fatalf("%d distinct conditions, want 28", len(spec))
	}
	for c, s := range spec {
		if string(c) != s {
			t.Errorf("condition %q, spec says %q", c, s)
		}
	}
	e := &Error{Condition: ErrCondNotFound}
	if e.Error() != "amqp: not-found" {
		t.Errorf("Error() = %q", e.Error())
	}
	e = &Error{Condition: "com.example:busy", Description: "later"}
	if e.Error() != "amqp: com.example:busy: later" {
		t.Errorf("Error() = %q", e.Error())
	}
}

func TestAMQPWireValueHelpers(t *testing.T) {
	m := NewMap(Symbol("a"), uint32(1), []byte("b"), "x")
	if v, ok := m.Get(Symbol("a")); !ok || v != uint32(1) {
		t.Errorf("Get(a) = %v, %v", v, ok)
	}
	if _, ok := m.Get("a"); ok {
		t.Error("Get(string a) matched the symbol key")
	}
	if v, ok := m.Get([]byte("b")); !ok || v != "x" {
		t.Errorf("Get([]byte b) = %v, %v", v, ok)
	}
	m.Set(Symbol("a"), uint32(2))
	m.Set([]any{}, true) // an uncomparable key must not panic
	m.Delete([]byte("b"))
	want := NewMap(Symbol("a"), uint32(2), []any{}, true)
	if !Equal(m, want) {
		t.Errorf("after Set/Delete: %s, want %s", dump(m), dump(want))
	}
	if (*Map)(nil).Len() != 0 {
		t.Error("nil map has entries")
	}
	if _, ok := (*Map)(nil).Get("x"); ok {
		t.Error("nil map Get found a value")
	}

	nan := math.Float64frombits(0x7ff8000000000001)
	if !Equal([]any{nan, float32(math.NaN())}, []any{nan, float32(math.NaN())}) {
		t.Error("NaN values are not Equal")
	}
	if Equal(float32(1), float64(1)) || Equal(uint32(1), uint64(1)) || Equal(Symbol("a"), "a") {
		t.Error("values of different types are Equal")
	}
	if !Equal(Array{Type: TypeInt, Elems: []any{int32(1)}}, Array{Type: TypeInt, Elems: []any{int32(1)}}) ||
		Equal(Array{Type: TypeInt, Elems: []any{}}, Array{Type: TypeLong, Elems: []any{}}) {
		t.Error("array equality")
	}
	if !Equal(Described{uint64(1), []byte{1}}, Described{uint64(1), []byte{1}}) {
		t.Error("described equality")
	}

	u := UUID{0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00}
	if u.String() != "123e4567-e89b-12d3-a456-426614174000" {
		t.Errorf("UUID.String = %s", u)
	}
	tm := time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC)
	if ts := TimestampOf(tm); ts != 1700000000000 || !ts.Time().Equal(tm) {
		t.Errorf("TimestampOf = %d, Time = %v", ts, ts.Time())
	}
	for ty := TypeNull; ty <= TypeArray; ty++ {
		if ty.String() == "invalid" {
			t.Errorf("type %d has no name", ty)
		}
	}
	if Type(99).String() != "invalid" || FrameType(7).String() != "unknown" {
		t.Error("String of unknown values")
	}
}

// TestAMQPWireHeldBytesAreNotCopiedAgain: after each SASL frame Feed keeps
// the rest of the input; draining it with Feed(nil) must not copy it each
// time, or a stream of many small SASL frames costs quadratic time.
func TestAMQPWireHeldBytesAreNotCopiedAgain(t *testing.T) {
	challenge := saslFrame(described(0x42, list8(bin8('c'))))
	in := cat(hdrSASL, bytes.Repeat(challenge, 1000))
	d := NewDecoder(DefaultLimits())
	out, err := d.Feed(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	last := &d.pending[len(d.pending)-1]
	for n := 0; d.Buffered() > 0; n++ {
		if out, err = d.Feed(nil, out[:0]); err != nil || len(out) != 1 {
			t.Fatalf("frame %d: %s %v", n, dump(out), err)
		}
		if d.Buffered() > 0 && &d.pending[len(d.pending)-1] != last {
			t.Fatalf("frame %d: the held bytes were copied", n)
		}
	}
}

// TestAMQPWireCompositesWithEveryField encodes each composite with every
// field set to a non-default value and decodes it back.
func TestAMQPWireCompositesWithEveryField(t *testing.T) {
	caps := []Symbol{"a", "b"}
	props := NewMap(Symbol("p"), "v")
	e := &Error{Condition: ErrCondResourceLimitExceeded, Description: "full", Info: NewMap(Symbol("k"), uint64(1))}
	src := &Source{Address: "topic://t", Durable: DurableConfiguration, ExpiryPolicy: ExpiryNever, Timeout: 5 * time.Second,
		Dynamic: true, DynamicNodeProperties: NewMap(Symbol("lifetime-policy"), Described{uint64(0x2b), []any{}}),
		DistributionMode: DistModeCopy, Filter: NewMap(Symbol("f"), Described{Symbol("apache.org:no-local-filter:list"), []any{}}),
		DefaultOutcome: &Released{}, Outcomes: []Symbol{"amqp:accepted:list"}, Capabilities: caps}
	tgt := &Target{Address: "queue://q", Durable: DurableUnsettledState, ExpiryPolicy: ExpiryConnectionClose,
		Timeout: time.Hour, Dynamic: true, DynamicNodeProperties: props, Capabilities: caps}
	all := []Composite{
		&Open{ContainerID: "c", Hostname: "h", MaxFrameSize: 1024, ChannelMax: 10, IdleTimeOut: 1500 * time.Millisecond,
			OutgoingLocales: []Symbol{"en-US"}, IncomingLocales: []Symbol{"de-DE", "fr"}, OfferedCapabilities: caps,
			DesiredCapabilities: caps, Properties: props},
		&Begin{RemoteChannel: u16p(3), NextOutgoingID: 4, IncomingWindow: 5, OutgoingWindow: 6, HandleMax: 7,
			OfferedCapabilities: caps, DesiredCapabilities: []Symbol{}, Properties: props},
		&Attach{Name: "n", Handle: 1, Role: RoleReceiver, SndSettleMode: SndSettleUnsettled, RcvSettleMode: RcvSettleSecond,
			Source: src, Target: tgt, Unsettled: NewMap([]byte{1}, Described{uint64(0x24), []any{}}), IncompleteUnsettled: true,
			InitialDeliveryCount: u32p(9), MaxMessageSize: math.MaxUint64, OfferedCapabilities: caps, DesiredCapabilities: caps, Properties: props},
		&Flow{NextIncomingID: u32p(1), IncomingWindow: 2, NextOutgoingID: 3, OutgoingWindow: 4, Handle: u32p(5),
			DeliveryCount: u32p(6), LinkCredit: u32p(7), Available: u32p(8), Drain: true, Echo: true, Properties: props},
		&Transfer{Handle: 1, DeliveryID: u32p(2), DeliveryTag: []byte("t"), MessageFormat: u32p(0x80013700), Settled: boolp(false),
			More: true, RcvSettleMode: new(RcvSettleFirst), State: &Received{SectionNumber: 1, SectionOffset: 1 << 40},
			Resume: true, Aborted: true, Batchable: true},
		&Disposition{Role: RoleSender, First: 1, Last: u32p(2), Settled: true,
			State: &TransactionalState{TxnID: []byte{1}, Outcome: &Rejected{Error: e}}, Batchable: true},
		&Detach{Handle: 1, Closed: true, Error: e},
		&End{Error: e},
		&Close{Error: e},
		e,
		src, tgt,
		&Coordinator{Capabilities: []Symbol{"amqp:local-transactions", "amqp:multi-txns-per-ssn"}},
		&Received{SectionNumber: 3, SectionOffset: 4},
		&Accepted{}, &Rejected{Error: e}, &Released{},
		&Modified{DeliveryFailed: true, UndeliverableHere: true, MessageAnnotations: NewMap(Symbol("x"), uint64(1), uint64(2), "y")},
		&Declare{GlobalID: []byte("xid")},
		&Discharge{TxnID: []byte{1, 2}, Fail: true},
		&Declared{TxnID: []byte{3}},
		&TransactionalState{TxnID: []byte{4}, Outcome: &Declared{TxnID: []byte{5}}},
		&SASLMechanisms{Mechanisms: []Symbol{"PLAIN"}},
		&SASLInit{Mechanism: "PLAIN", InitialResponse: []byte{}, Hostname: "h"},
		&SASLChallenge{Challenge: []byte{}},
		&SASLResponse{Response: []byte("r")},
		&SASLOutcome{Code: SASLSysTemp, AdditionalData: []byte("d")},
	}
	for _, c := range all {
		name := codeName(c.Descriptor())
		if sym, ok := DescriptorName(c.Descriptor()); !ok || !strings.Contains(string(sym), name) {
			t.Errorf("%T: descriptor 0x%x has name %q", c, c.Descriptor(), sym)
		}
		enc := AppendValue(nil, c)
		v, n, err := DecodeValue(enc, DefaultLimits())
		if err != nil || n != len(enc) {
			t.Fatalf("%s: generic decode of % x: %v", name, enc, err)
		}
		got, err := DecodeComposite(v, DefaultLimits())
		if err != nil || !reflect.DeepEqual(got, c) {
			t.Errorf("%s round trip:\n got %s %v\nwant %s", name, dump(got), err, dump(c))
		}
		if p, ok := c.(Performative); ok {
			hdr := hdrAMQP
			if p.frameType() == FrameSASL {
				hdr = hdrSASL
			}
			frames, err := decodeStream(DefaultLimits(), [][]byte{cat(hdr, AppendFrame(nil, 9, p, nil))})
			if err != nil || len(frames) != 2 || !reflect.DeepEqual(frames[1].Body, p) {
				t.Errorf("%s as a frame: %s %v", name, dump(frames), err)
			}
		}
	}
}

func TestAMQPWireEqualComposites(t *testing.T) {
	if !Equal(&Discharge{TxnID: []byte{1}}, &Discharge{TxnID: []byte{1}}) || Equal(&Discharge{TxnID: []byte{1}}, &Discharge{TxnID: []byte{2}}) {
		t.Error("composites do not compare by encoding")
	}
	if Equal(&Accepted{}, Described{Descriptor: uint64(0x24), Value: []any{}}) {
		t.Error("a typed composite equals its generic form")
	}
	if Equal(42, 42) {
		t.Error("Go ints are outside the model and must not be Equal")
	}
}
