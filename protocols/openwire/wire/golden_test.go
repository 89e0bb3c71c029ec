package wire

import (
	"bytes"
	"errors"
	"math/rand"
	"reflect"
	"testing"
)

func hexb(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch x := p.(type) {
		case byte:
			b = append(b, x)
		case int:
			b = append(b, byte(x))
		case string:
			b = append(b, x...)
		case []byte:
			b = append(b, x...)
		}
	}
	return b
}

func prefixed(body []byte) []byte {
	n := len(body)
	return append([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, body...)
}

// nestedDataResponses builds loose DataResponse frames nested n deep.
func nestedDataResponses(n int) []byte {
	body := []byte{TypeDataResponse, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	for i := 1; i < n; i++ {
		body = append(body, 1, TypeDataResponse, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	}
	body = append(body, 0)
	return prefixed(body)
}

var (
	v12Tight      = Format{Version: 12, TightEncodingEnabled: true, StackTraceEnabled: true}
	v12TightCache = Format{Version: 12, TightEncodingEnabled: true, CacheEnabled: true, StackTraceEnabled: true}
	v12Loose      = Format{Version: 12, StackTraceEnabled: true}
	v12LooseCache = Format{Version: 12, CacheEnabled: true, StackTraceEnabled: true}
)

// goldenFrames is the one golden table of this codec: raw bytes, the
// decoded command (nil: a null command) or the error. Unless decodeOnly,
// encoding want must give raw back. It also seeds the fuzzers.
var goldenFrames = []struct {
	name       string
	f          Format
	lim        Limits
	raw        []byte
	want       DataStructure
	wantErr    error
	decodeOnly bool
}{
	// OpenWire reference §13, captured 5.17.2 traffic.
	{name: "response tight", f: v12Tight,
		raw:  hexb(0, 0, 0, 0x0b, 0x1e, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1),
		want: &Response{CorrelationId: 1}},
	{name: "response loose", f: v12Loose,
		raw:  hexb(0, 0, 0, 0x0a, 0x1e, 0, 0, 0, 0, 0, 0, 0, 0, 1),
		want: &Response{CorrelationId: 1}},
	{name: "session info tight cache slot 3", f: v12TightCache, decodeOnly: true,
		raw: hexb(0, 0, 0, 0x2b, 0x04, 0x01, 0x5e, 0, 0, 0, 3, 0, 3, 0x79, 0, 0x1d, "ID:vm-37871-1795955050986-1:1", 0, 1),
		want: &SessionInfo{BaseCommand: BaseCommand{CommandId: 3},
			SessionId: &SessionId{ConnectionId: "ID:vm-37871-1795955050986-1:1", Value: 1}}},
	{name: "keepalive loose", f: v12Loose,
		raw: hexb(0, 0, 0, 6, TypeKeepAliveInfo, 0, 0, 0, 0, 1), want: &KeepAliveInfo{BaseCommand{ResponseRequired: true}}},
	{name: "null command is skipped", f: v12Loose, raw: hexb(0, 0, 0, 1, 0)},
	{name: "tight long 8 bytes (negative)", f: v12Tight,
		raw:  hexb(0, 0, 0, 0x0f, TypeRemoveInfo, 1, 0x0c, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe),
		want: &RemoveInfo{LastDeliveredSequenceId: -2}},
	{name: "tight long 2 bytes", f: v12Tight,
		raw:  hexb(0, 0, 0, 9, TypeRemoveInfo, 1, 0x08, 0, 0, 0, 0, 0x12, 0x34),
		want: &RemoveInfo{LastDeliveredSequenceId: 0x1234}},
	{name: "tight long 4 bytes unsigned", f: v12Tight,
		raw:  hexb(0, 0, 0, 11, TypeRemoveInfo, 1, 0x04, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff),
		want: &RemoveInfo{LastDeliveredSequenceId: 0xffffffff}},
	{name: "loose string with nul and emoji", f: v12Loose,
		raw:  prefixed(hexb(TypeControlCommand, 0, 0, 0, 0, 0, 1, 0, 8, 0xc0, 0x80, 0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80)),
		want: &ControlCommand{Command: "\x00\U0001F600"}},
	{name: "tight ascii string", f: v12Tight,
		raw:  prefixed(hexb(TypeControlCommand, 1, 0x06, 0, 0, 0, 0, 0, 2, "ok")),
		want: &ControlCommand{Command: "ok"}},
	{name: "loose cache on, uncached nested field", f: v12LooseCache,
		raw:  prefixed(hexb(TypeProducerAck, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)),
		want: &ProducerAck{Size: 1}},

	{name: "size zero", f: v12Loose, raw: hexb(0, 0, 0, 0), wantErr: ErrMalformedFrame},
	{name: "negative size", f: v12Loose, raw: hexb(0xff, 0xff, 0xff, 0xff), wantErr: ErrMalformedFrame},
	{name: "frame larger than limit", f: v12Loose, lim: Limits{MaxFrameSize: 16},
		raw: hexb(0, 0, 0, 17), wantErr: ErrFrameTooLarge},
	{name: "frame larger than negotiated", f: Format{Version: 12, MaxFrameSize: 8},
		raw: hexb(0x7f, 0xff, 0xff, 0xff), wantErr: ErrFrameTooLarge},
	{name: "unknown type", f: v12Loose, raw: hexb(0, 0, 0, 1, 13), wantErr: ErrUnknownType},
	{name: "BrokerSubscriptionInfo before v12", f: Format{Version: 11},
		raw: prefixed(hexb(TypeBrokerSubscriptionInfo, 0, 0, 0, 0, 0, 0, 0, 0)), wantErr: ErrUnknownType},
	{name: "truncated field", f: v12Loose,
		raw: hexb(0, 0, 0, 6, 0x1e, 0, 0, 0, 0, 0), wantErr: ErrTruncated},
	{name: "trailing bytes", f: v12Loose,
		raw: hexb(0, 0, 0, 7, TypeKeepAliveInfo, 0, 0, 0, 0, 0, 0xff), wantErr: ErrTrailingBytes},
	{name: "boolean stream exhausted", f: v12Tight,
		raw: hexb(0, 0, 0, 0x0a, 0x1e, 0, 0, 0, 0, 0, 0, 0, 0, 1), wantErr: ErrBooleanStream},
	{name: "boolean stream longer than frame", f: v12Tight,
		raw: hexb(0, 0, 0, 4, 0x1e, 0x80, 0x7f, 0xff), wantErr: ErrTruncated},
	{name: "negative byte array length", f: v12Loose,
		raw: prefixed(hexb(TypePartialCommand, 0, 0, 0, 1, 1, 0xff, 0xff, 0xff, 0xff)), wantErr: ErrNegativeLength},
	{name: "byte array longer than frame", f: v12Loose,
		raw: prefixed(hexb(TypePartialCommand, 0, 0, 0, 1, 1, 0x7f, 0xff, 0xff, 0xff)), wantErr: ErrTruncated},
	{name: "cache index out of range", f: v12LooseCache,
		raw: prefixed(hexb(TypeSessionInfo, 0, 0, 0, 0, 0, 1, 0x7f, 0xff, 0)), wantErr: ErrCacheIndex},
	{name: "cache reference out of range", f: v12LooseCache,
		raw: prefixed(hexb(TypeSessionInfo, 0, 0, 0, 0, 0, 0, 0xff, 0xfe)), wantErr: ErrCacheIndex},
	{name: "nested object of the wrong type", f: v12Loose,
		raw: prefixed(hexb(TypeSessionInfo, 0, 0, 0, 0, 0, 1, TypeActiveMQTopic, 1, 0, 1, "x")), wantErr: ErrUnexpectedType},
	{name: "nesting too deep", f: v12Loose, raw: nestedDataResponses(40), wantErr: ErrTooDeep},
	{name: "negative array count", f: v12Loose,
		raw: prefixed(hexb(TypeDataArrayResponse, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff)), wantErr: ErrNegativeLength},
	{name: "array count beyond frame", f: v12Loose,
		raw: prefixed(hexb(TypeDataArrayResponse, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 0xff)), wantErr: ErrTruncated},
	{name: "malformed modified utf-8", f: v12Loose,
		raw: prefixed(hexb(TypeControlCommand, 0, 0, 0, 0, 0, 1, 0, 1, 0xff)), wantErr: ErrInvalidUTF8},
	{name: "stack trace count beyond frame", f: v12Loose,
		raw: prefixed(hexb(TypeExceptionResponse, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1, "X", 0, 0x7f, 0xff)), wantErr: ErrTruncated},
}

func TestOpenWireWireGolden(t *testing.T) {
	for _, tc := range goldenFrames {
		t.Run(tc.name, func(t *testing.T) {
			for seed := int64(0); seed < 4; seed++ {
				rng := rand.New(rand.NewSource(seed))
				d := NewDecoder(tc.f, tc.lim)
				var got []DataStructure
				var err error
				for rest := tc.raw; len(rest) > 0 && err == nil; {
					n := min(1+rng.Intn(8), len(rest))
					d.Feed(rest[:n])
					rest = rest[n:]
					for {
						var ds DataStructure
						ds, err = d.Next()
						if err != nil || ds == nil {
							break
						}
						got = append(got, clearRaw(ds))
					}
				}
				if tc.wantErr != nil {
					if !errors.Is(err, tc.wantErr) {
						t.Fatalf("err = %v, want %v", err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				var want []DataStructure
				if tc.want != nil {
					want = []DataStructure{tc.want}
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("decoded %#v, want %#v", got, want)
				}
			}
			if tc.wantErr == nil && !tc.decodeOnly {
				b, err := NewEncoder(tc.f).Append(nil, tc.want)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(b, tc.raw) {
					t.Fatalf("encoded %x\n         want %x", b, tc.raw)
				}
			}
		})
	}
}
