package wire

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// clientFrame encodes one masked frame as a client sends it.
func clientFrame(fin bool, op Opcode, key [4]byte, payload []byte) []byte {
	b := AppendHeader(nil, Header{Fin: fin, Opcode: op, Masked: true, MaskKey: key, PayloadLength: int64(len(payload))})
	start := len(b)
	b = append(b, payload...)
	Mask(key, 0, b[start:])
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

var key1 = [4]byte{0x37, 0xfa, 0x21, 0x3d} // RFC 6455 §5.7's masking key

// decoded is what a stream decodes to: messages with their type, control
// frames, and the error that ended it.
type decoded struct {
	events []string
	err    error
}

// decodeAll feeds in to a fresh decoder in the chunk sizes given (cycled;
// nil means one piece) and renders the events, gathering each message.
func decodeAll(lim Limits, in []byte, splits []int) decoded {
	d := NewDecoder(lim)
	buf := append([]byte(nil), in...)
	var out decoded
	var msg []byte
	for k := 0; len(buf) > 0; k++ {
		size := len(buf)
		if len(splits) > 0 {
			size = min(max(splits[k%len(splits)], 1), len(buf))
		}
		chunk := buf[:size]
		buf = buf[size:]
		for len(chunk) > 0 {
			n, ev, ok, err := d.Next(chunk)
			if n < 0 || n > len(chunk) || (n == 0 && !ok && err == nil) {
				panic(fmt.Sprintf("Next used %d of %d bytes", n, len(chunk)))
			}
			chunk = chunk[n:]
			if err != nil {
				out.err = err
				return out
			}
			if !ok {
				continue
			}
			if ev.Opcode.IsControl() {
				out.events = append(out.events, fmt.Sprintf("%s %q", ev.Opcode, ev.Payload))
				continue
			}
			msg = append(msg, ev.Payload...)
			if ev.Final {
				out.events = append(out.events, fmt.Sprintf("%s %q", ev.Opcode, msg))
				msg = msg[:0]
			}
		}
	}
	return out
}

// golden is the codec's one table (STYLE §9): the RFC 6455 §5.7 examples
// and one case per rule. It seeds FuzzWSDecoder.
var golden = []struct {
	name string
	lim  Limits
	in   []byte
	want []string
	err  error
}{
	{
		name: "RFC 6455 5.7 single-frame masked text",
		in:   []byte{0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58},
		want: []string{`text "Hello"`},
	},
	{
		name: "RFC 6455 5.7 single-frame unmasked text is refused from a client",
		in:   []byte{0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f},
		err:  ErrUnmasked,
	},
	{
		name: "RFC 6455 5.7 fragmented text, masked",
		in:   cat(clientFrame(false, OpText, key1, []byte("Hel")), clientFrame(true, OpContinuation, key1, []byte("lo"))),
		want: []string{`text "Hello"`},
	},
	{
		name: "RFC 6455 5.7 ping, masked",
		in:   clientFrame(true, OpPing, key1, []byte("Hello")),
		want: []string{`ping "Hello"`},
	},
	{
		name: "256 bytes binary uses the 16-bit length",
		in:   clientFrame(true, OpBinary, key1, bytes.Repeat([]byte{7}, 256)),
		want: []string{fmt.Sprintf("binary %q", bytes.Repeat([]byte{7}, 256))},
	},
	{
		name: "65536 bytes binary uses the 64-bit length",
		in:   clientFrame(true, OpBinary, key1, bytes.Repeat([]byte{9}, 65536)),
		want: []string{fmt.Sprintf("binary %q", bytes.Repeat([]byte{9}, 65536))},
	},
	{
		name: "control frame between fragments",
		in: cat(clientFrame(false, OpBinary, key1, []byte("ab")), clientFrame(true, OpPing, key1, nil),
			clientFrame(false, OpContinuation, key1, nil), clientFrame(true, OpContinuation, key1, []byte("c"))),
		want: []string{`ping ""`, `binary "abc"`},
	},
	{
		name: "several messages in a row",
		in: cat(clientFrame(true, OpText, key1, []byte("one")), clientFrame(true, OpBinary, key1, []byte{0, 1}),
			clientFrame(true, OpText, key1, nil), clientFrame(true, OpPong, key1, []byte("p"))),
		want: []string{`text "one"`, `binary "\x00\x01"`, `text ""`, `pong "p"`},
	},
	{
		name: "close with code and reason",
		in:   clientFrame(true, OpClose, key1, []byte("\x03\xe8bye")),
		want: []string{`close "\x03\xe8bye"`},
	},
	{
		name: "close without code",
		in:   clientFrame(true, OpClose, key1, nil),
		want: []string{`close ""`},
	},
	{
		name: "close with a one-byte payload is refused",
		in:   clientFrame(true, OpClose, key1, []byte{3}),
		err:  ErrClosePayload,
	},
	{
		name: "close with code 1005 is refused",
		in:   clientFrame(true, OpClose, key1, []byte{0x03, 0xed}),
		err:  ErrClosePayload,
	},
	{
		name: "close reason must be UTF-8",
		in:   clientFrame(true, OpClose, key1, []byte{0x03, 0xe8, 0xff}),
		err:  ErrInvalidUTF8,
	},
	{
		name: "reserved bits are refused",
		in:   []byte{0xC1, 0x80, 1, 2, 3, 4},
		err:  ErrReservedBits,
	},
	{
		name: "reserved opcode is refused",
		in:   clientFrame(true, Opcode(3), key1, nil),
		err:  ErrReservedOpcode,
	},
	{
		name: "fragmented ping is refused",
		in:   clientFrame(false, OpPing, key1, nil),
		err:  ErrControlFragmented,
	},
	{
		name: "ping over 125 bytes is refused",
		in:   clientFrame(true, OpPing, key1, make([]byte, 126)),
		err:  ErrControlTooLong,
	},
	{
		name: "continuation without a message is refused",
		in:   clientFrame(true, OpContinuation, key1, []byte("x")),
		err:  ErrUnexpectedContinuation,
	},
	{
		name: "new message inside a fragmented one is refused",
		in:   cat(clientFrame(false, OpText, key1, []byte("a")), clientFrame(true, OpText, key1, []byte("b"))),
		err:  ErrExpectedContinuation,
	},
	{
		name: "64-bit length with the top bit set is refused",
		in:   []byte{0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4},
		err:  ErrLengthOverflow,
	},
	{
		name: "binary message at the limit passes",
		lim:  Limits{MaxBinaryMessageBytes: 4, MaxTextMessageBytes: 1},
		in:   cat(clientFrame(false, OpBinary, key1, []byte("ab")), clientFrame(true, OpContinuation, key1, []byte("cd"))),
		want: []string{`binary "abcd"`},
	},
	{
		name: "binary message over the limit is refused from the header",
		lim:  Limits{MaxBinaryMessageBytes: 4},
		in:   cat(clientFrame(false, OpBinary, key1, []byte("ab")), clientFrame(true, OpContinuation, key1, []byte("cde"))[:6]),
		err:  ErrMessageTooBig,
	},
	{
		name: "text limit applies to text",
		lim:  Limits{MaxTextMessageBytes: 2, MaxBinaryMessageBytes: 100},
		in:   clientFrame(true, OpText, key1, []byte("abc")),
		err:  ErrMessageTooBig,
	},
	{
		name: "control frames do not count against the limit",
		lim:  Limits{MaxBinaryMessageBytes: 2},
		in:   cat(clientFrame(false, OpBinary, key1, []byte("a")), clientFrame(true, OpPing, key1, []byte("pingpong")), clientFrame(true, OpContinuation, key1, []byte("b"))),
		want: []string{`ping "pingpong"`, `binary "ab"`},
	},
	{
		name: "text split inside a character is valid",
		in:   cat(clientFrame(false, OpText, key1, []byte("\xe2\x82")), clientFrame(true, OpContinuation, key1, []byte("\xac!"))),
		want: []string{`text "€!"`},
	},
	{
		name: "text ending inside a character is refused",
		in:   clientFrame(true, OpText, key1, []byte("a\xe2\x82")),
		err:  ErrInvalidUTF8,
	},
	{
		name: "invalid UTF-8 in text is refused",
		in:   clientFrame(true, OpText, key1, []byte("a\xffb")),
		err:  ErrInvalidUTF8,
	},
	{
		name: "binary is not checked for UTF-8",
		in:   clientFrame(true, OpBinary, key1, []byte("a\xff")),
		want: []string{`binary "a\xff"`},
	},
}

func TestWSWireGolden(t *testing.T) {
	for _, tc := range golden {
		t.Run(tc.name, func(t *testing.T) {
			for _, splits := range [][]int{nil, {1}, {2, 3}, {5, 1, 13}} {
				got := decodeAll(tc.lim, tc.in, splits)
				if !errors.Is(got.err, tc.err) || (tc.err == nil && got.err != nil) {
					t.Fatalf("splits %v: err = %v, want %v", splits, got.err, tc.err)
				}
				if tc.err == nil && strings.Join(got.events, "\n") != strings.Join(tc.want, "\n") {
					t.Fatalf("splits %v: events\n%s\nwant\n%s", splits, strings.Join(got.events, "\n"), strings.Join(tc.want, "\n"))
				}
			}
		})
	}
}

func TestWSWireAppendHeaderRFCExamples(t *testing.T) {
	check := func(name string, got, want []byte) {
		t.Helper()
		if !bytes.Equal(got, want) {
			t.Errorf("%s: got % x, want % x", name, got, want)
		}
	}
	// RFC 6455 §5.7.
	check("unmasked text", AppendFrame(nil, OpText, []byte("Hello")), []byte{0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f})
	check("masked text", clientFrame(true, OpText, key1, []byte("Hello")), []byte{0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58})
	check("256 bytes", AppendHeader(nil, Header{Fin: true, Opcode: OpBinary, PayloadLength: 256}), []byte{0x82, 0x7E, 0x01, 0x00})
	check("64 KiB", AppendHeader(nil, Header{Fin: true, Opcode: OpBinary, PayloadLength: 65536}), []byte{0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0})
	check("close 1000", AppendClose(nil, CloseNormal, ""), []byte{0x88, 0x02, 0x03, 0xe8})
	check("close no status", AppendClose(nil, CloseNoStatus, "ignored"), []byte{0x88, 0x00})
	for _, n := range []int{0, 125, 126, 65535, 65536} {
		if got, want := HeaderLen(n, false), len(AppendHeader(nil, Header{PayloadLength: int64(n)})); got != want {
			t.Errorf("HeaderLen(%d) = %d, want %d", n, got, want)
		}
		if got, want := HeaderLen(n, true), len(AppendHeader(nil, Header{Masked: true, PayloadLength: int64(n)})); got != want {
			t.Errorf("HeaderLen(%d, masked) = %d, want %d", n, got, want)
		}
	}
	long := AppendClose(nil, CloseNormal, strings.Repeat("€", 60))
	if len(long)-2 > MaxControlPayload || !utf8.Valid(long[4:]) {
		t.Errorf("long close reason: payload %d bytes, valid UTF-8 %v", len(long)-2, utf8.Valid(long[4:]))
	}
}

func TestWSWireAcceptKey(t *testing.T) {
	// RFC 6455 §1.3's example.
	if got, want := AcceptKey("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="; got != want {
		t.Fatalf("AcceptKey = %q, want %q", got, want)
	}
	for key, want := range map[string]bool{
		"dGhlIHNhbXBsZSBub25jZQ==": true,
		"dGhlIHNhbXBsZSBub25jZQ":   false,
		"not base64 at all!!!!!!!": false,
		"dGhlIHNhbXBsZSBub25jZWU=": false, // 17 bytes
	} {
		if got := ValidKey(key); got != want {
			t.Errorf("ValidKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestWSWireValidCloseCode(t *testing.T) {
	// The spec's list [RFC 6455 §7.4.1, §7.4.2] and IANA's 1012-1014.
	valid := map[uint16]bool{
		CloseNormal: true, CloseGoingAway: true, CloseProtocolError: true, CloseUnsupportedData: true,
		1004: false, CloseNoStatus: false, CloseAbnormal: false,
		CloseInvalidPayload: true, ClosePolicyViolation: true, CloseMessageTooBig: true,
		CloseMandatoryExtension: true, CloseInternalError: true,
		CloseServiceRestart: true, CloseTryAgainLater: true, CloseBadGateway: true,
		CloseTLSHandshake: false, 999: false, 1016: false, 2999: false, 3000: true, 4999: true, 5000: false,
	}
	for code, want := range valid {
		if got := ValidCloseCode(code); got != want {
			t.Errorf("ValidCloseCode(%d) = %v, want %v", code, got, want)
		}
	}
	for err, want := range map[error]uint16{
		ErrMessageTooBig: CloseMessageTooBig, ErrInvalidUTF8: CloseInvalidPayload,
		ErrUnmasked: CloseProtocolError, ErrReservedBits: CloseProtocolError, ErrClosePayload: CloseProtocolError,
		fmt.Errorf("wrapped: %w", ErrMessageTooBig): CloseMessageTooBig,
	} {
		if got := CloseCodeFor(err); got != want {
			t.Errorf("CloseCodeFor(%v) = %d, want %d", err, got, want)
		}
	}
}

func TestWSWireMask(t *testing.T) {
	// Mask from any offset equals masking byte by byte.
	payload := []byte("The quick brown fox jumps over the lazy dog, twice over.")
	for pos := 0; pos < 4; pos++ {
		for n := 0; n <= len(payload); n += 3 {
			got := append([]byte(nil), payload[:n]...)
			Mask(key1, pos, got)
			for i := range n {
				if want := payload[i] ^ key1[(pos+i)&3]; got[i] != want {
					t.Fatalf("pos %d len %d: byte %d = %#x, want %#x", pos, n, i, got[i], want)
				}
			}
		}
	}
}
