package wire

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// goldenCase is one row of the STOMP codec golden table. The same table seeds
// FuzzSTOMPWireDecode.
type goldenCase struct {
	name    string
	raw     string
	version string  // decoder version before the first frame
	after   string  // if set, SetVersion(after) once a CONNECT/STOMP frame is decoded
	limits  *Limits // nil: DefaultLimits
	want    []Frame
	beats   int   // heart-beats counted
	err     error // sentinel the decoder must return (after want frames)
}

// fr builds a frame: body "" means no body; kv are name, value pairs.
func fr(cmd, body string, kv ...string) Frame {
	f := Frame{Command: cmd}
	if body != "" {
		f.Body = []byte(body)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		f.Headers = append(f.Headers, Header{Name: kv[i], Value: kv[i+1]})
	}
	return f
}

func frames(f ...Frame) []Frame { return f }

func limitsWith(fn func(*Limits)) *Limits {
	l := DefaultLimits()
	fn(&l)
	return &l
}

func goldenCases() []goldenCase {
	cases := []goldenCase{
		{name: "connect 1.0 without headers", raw: "CONNECT\n\n\x00", version: V10,
			want: frames(fr("CONNECT", ""))},
		{name: "connect with negotiation headers", version: V10,
			raw:  "CONNECT\naccept-version:1.0,1.1,1.2\nhost:localhost\nlogin:guest\npasscode:guest\nheart-beat:1000,0\n\n\x00",
			want: frames(fr("CONNECT", "", "accept-version", "1.0,1.1,1.2", "host", "localhost", "login", "guest", "passcode", "guest", "heart-beat", "1000,0"))},
		{name: "stomp command is a connect", raw: "STOMP\r\naccept-version:1.2\r\nhost:/\r\n\r\n\x00", version: V10,
			want: frames(fr("STOMP", "", "accept-version", "1.2", "host", "/"))},
		{name: "connect values are trimmed and never unescaped even in 1.2", version: V12,
			raw:  "CONNECT\nlogin: a\\cb\\t \npasscode:p:w\n\n\x00",
			want: frames(fr("CONNECT", "", "login", "a\\cb\\t", "passcode", "p:w"))},
		{name: "connected keeps raw colons", version: V12,
			raw:  "CONNECTED\nversion:1.2\nsession:ID:host-1234-1\nserver:ActiveMQ/5.17.2\nheart-beat:0,0\n\n\x00",
			want: frames(fr("CONNECTED", "", "version", "1.2", "session", "ID:host-1234-1", "server", "ActiveMQ/5.17.2", "heart-beat", "0,0"))},
		{name: "frames after connect use the negotiated version", version: V10, after: V12,
			raw:  "CONNECT\naccept-version:1.2\n\n\x00SEND\ndestination:/queue/a\\cb\n\n\x00",
			want: frames(fr("CONNECT", "", "accept-version", "1.2"), fr("SEND", "", "destination", "/queue/a:b"))},
		{name: "frames after connect stay 1.0 without a switch", version: V10,
			raw:  "CONNECT\n\n\x00SEND\ndestination:/queue/a\\cb\n\n\x00",
			want: frames(fr("CONNECT", ""), fr("SEND", "", "destination", "/queue/a\\cb"))},
		{name: "send with text body", version: V12,
			raw:  "SEND\ndestination:/queue/a\ncontent-type:text/plain\n\nhello world\x00",
			want: frames(fr("SEND", "hello world", "destination", "/queue/a", "content-type", "text/plain"))},
		{name: "subscribe", version: V12,
			raw:  "SUBSCRIBE\nid:0\ndestination:/topic/t\nack:client-individual\n\n\x00",
			want: frames(fr("SUBSCRIBE", "", "id", "0", "destination", "/topic/t", "ack", "client-individual"))},
		{name: "unsubscribe", version: V12, raw: "UNSUBSCRIBE\nid:0\n\n\x00",
			want: frames(fr("UNSUBSCRIBE", "", "id", "0"))},
		{name: "ack", version: V12, raw: "ACK\nid:12345\ntransaction:tx1\n\n\x00",
			want: frames(fr("ACK", "", "id", "12345", "transaction", "tx1"))},
		{name: "nack", version: V12, raw: "NACK\nid:12345\n\n\x00",
			want: frames(fr("NACK", "", "id", "12345"))},
		{name: "begin", version: V12, raw: "BEGIN\ntransaction:tx1\n\n\x00",
			want: frames(fr("BEGIN", "", "transaction", "tx1"))},
		{name: "commit", version: V12, raw: "COMMIT\ntransaction:tx1\n\n\x00",
			want: frames(fr("COMMIT", "", "transaction", "tx1"))},
		{name: "abort", version: V12, raw: "ABORT\ntransaction:tx1\n\n\x00",
			want: frames(fr("ABORT", "", "transaction", "tx1"))},
		{name: "disconnect with receipt and empty body", version: V12, raw: "DISCONNECT\nreceipt:77\n\n\x00",
			want: frames(fr("DISCONNECT", "", "receipt", "77"))},
		{name: "message", version: V12,
			raw:   "MESSAGE\nsubscription:0\nmessage-id:ID\\cvm-1\\c1\\c1\ndestination:/queue/a\ncontent-length:2\n\nhi\x00\n",
			want:  frames(fr("MESSAGE", "hi", "subscription", "0", "message-id", "ID:vm-1:1:1", "destination", "/queue/a", "content-length", "2")),
			beats: 1},
		{name: "receipt", version: V12, raw: "RECEIPT\nreceipt-id:77\n\n\x00\n",
			want: frames(fr("RECEIPT", "", "receipt-id", "77")), beats: 1},
		{name: "error", version: V12, raw: "ERROR\nmessage:bad\ncontent-type:text/plain\n\nstack\ntrace\x00\n",
			want: frames(fr("ERROR", "stack\ntrace", "message", "bad", "content-type", "text/plain")), beats: 1},
		{name: "unknown command is a frame", version: V12, raw: "FOO\nbar:baz\n\n\x00",
			want: frames(fr("FOO", "", "bar", "baz"))},
		{name: "command is trimmed", version: V12, raw: " \tSEND \n\n\x00",
			want: frames(fr("SEND", ""))},
		{name: "crlf in 1.2", version: V12, raw: "SEND\r\ndestination:/queue/a\r\n\r\nhello\r\n\x00",
			want: frames(fr("SEND", "hello\r\n", "destination", "/queue/a"))},
		{name: "crlf in 1.0", version: V10, raw: "SEND\r\ndestination:/queue/a\r\n\r\nhello\x00",
			want: frames(fr("SEND", "hello", "destination", "/queue/a"))},
		{name: "crlf in 1.1 keeps the cr in values", version: V11, raw: "SEND\r\ndestination:/queue/a\r\n\r\nhi\x00",
			want: frames(fr("SEND", "hi", "destination", "/queue/a\r"))},
		{name: "1.2 escapes decoded", version: V12, raw: "SEND\nk\\cey:a\\nb\\cc\\\\d\\re\n\n\x00",
			want: frames(fr("SEND", "", "k:ey", "a\nb:c\\d\re"))},
		{name: "1.1 escapes decoded", version: V11, raw: "SEND\nk\\cey:a\\nb\\cc\\\\d\n\n\x00",
			want: frames(fr("SEND", "", "k:ey", "a\nb:c\\d"))},
		{name: "1.0 not unescaped", version: V10, raw: "SEND\nkey:a\\nb\\c\\t\n\n\x00",
			want: frames(fr("SEND", "", "key", "a\\nb\\c\\t"))},
		{name: "1.0 values trimmed", version: V10, raw: "SEND\nkey:  spaced value \t\n\n\x00",
			want: frames(fr("SEND", "", "key", "spaced value"))},
		{name: "1.1 values not trimmed", version: V11, raw: "SEND\nkey:  v \n\n\x00",
			want: frames(fr("SEND", "", "key", "  v "))},
		{name: "1.2 values not trimmed", version: V12, raw: "SEND\nkey: v \t\n\n\x00",
			want: frames(fr("SEND", "", "key", " v \t"))},
		{name: "raw colons in a value are kept", version: V12, raw: "SEND\nkey:a:b:c\n\n\x00",
			want: frames(fr("SEND", "", "key", "a:b:c"))},
		{name: "empty header name is accepted", version: V12, raw: "SEND\n:value\n\n\x00",
			want: frames(fr("SEND", "", "", "value"))},
		{name: "empty header value", version: V12, raw: "SEND\nkey:\n\n\x00",
			want: frames(fr("SEND", "", "key", ""))},
		{name: "nul inside a header value is an octet", version: V12, raw: "SEND\nkey:a\x00b\n\n\x00",
			want: frames(fr("SEND", "", "key", "a\x00b"))},
		{name: "repeated headers kept in order", version: V12, raw: "SEND\nfoo:1\nbar:x\nfoo:2\n\n\x00",
			want: frames(fr("SEND", "", "foo", "1", "bar", "x", "foo", "2"))},
		{name: "content-length body with embedded nuls", version: V12,
			raw:  "SEND\ndestination:/queue/a\ncontent-length:5\n\na\x00b\x00c\x00",
			want: frames(fr("SEND", "a\x00b\x00c", "destination", "/queue/a", "content-length", "5"))},
		{name: "content-length zero", version: V12, raw: "SEND\ncontent-length:0\n\n\x00",
			want: frames(fr("SEND", "", "content-length", "0"))},
		{name: "content-length with spaces and plus sign", version: V12, raw: "SEND\ncontent-length: +3 \n\nabc\x00",
			want: frames(fr("SEND", "abc", "content-length", " +3 "))},
		{name: "first content-length wins", version: V12, raw: "SEND\ncontent-length:2\ncontent-length:5\n\na\x00\x00",
			want: frames(fr("SEND", "a\x00", "content-length", "2", "content-length", "5"))},
		{name: "content-length on any command", version: V12, raw: "ACK\nid:1\ncontent-length:1\n\n\x00\x00",
			want: frames(fr("ACK", "\x00", "id", "1", "content-length", "1"))},
		{name: "body up to the first nul", version: V12, raw: "SEND\n\nhello\x00SEND\n\nworld\x00",
			want: frames(fr("SEND", "hello"), fr("SEND", "world"))},
		{name: "two frames back to back", version: V12, raw: "SEND\n\nA\x00SEND\ncontent-length:1\n\nB\x00",
			want: frames(fr("SEND", "A"), fr("SEND", "B", "content-length", "1"))},
		{name: "heart-beats between frames", version: V12,
			raw:  "\n\r\n\nSEND\n\nA\x00\n\n\x00\x00SEND\n\nB\x00\n",
			want: frames(fr("SEND", "A"), fr("SEND", "B")), beats: 6},
		{name: "heart-beats only", version: V12, raw: "\n\n\r\n", beats: 3},
		{name: "whitespace line is a heart-beat", version: V10, raw: "  \t\r\nDISCONNECT\n\n\x00", beats: 1,
			want: frames(fr("DISCONNECT", ""))},
		{name: "incomplete frame waits", version: V12, raw: "SEND\ndestination:/queue/a\ncontent-length:10\n\nabc"},
		{name: "incomplete content-length waits for nul", version: V12, raw: "SEND\ncontent-length:3\n\nabc"},
		{name: "command at the limit", version: V12, raw: strings.Repeat("C", 1024) + "\r\n\n\x00",
			want: frames(fr(strings.Repeat("C", 1024), ""))},
		{name: "header line at the limit", version: V12, raw: "SEND\nk:" + strings.Repeat("v", 10238) + "\r\n\n\x00",
			want: frames(fr("SEND", "", "k", strings.Repeat("v", 10238)))},
		{name: "headers at the limit", version: V12, raw: "SEND\na:1\nb:2\nc:3\n\n\x00",
			limits: limitsWith(func(l *Limits) { l.MaxHeaders = 3 }),
			want:   frames(fr("SEND", "", "a", "1", "b", "2", "c", "3"))},
		{name: "body at the limit", version: V12, raw: "SEND\n\n1234\x00SEND\ncontent-length:4\n\n1\x0023\x00",
			limits: limitsWith(func(l *Limits) { l.MaxBodyBytes = 4 }),
			want:   frames(fr("SEND", "1234"), fr("SEND", "1\x0023", "content-length", "4"))},
		{name: "frame at the limit", version: V12, raw: "SEND\nk:v\n\n12\x00",
			limits: limitsWith(func(l *Limits) { l.MaxFrameBytes = 13 }),
			want:   frames(fr("SEND", "12", "k", "v"))},

		// Errors.
		{name: "command too long", version: V12, raw: strings.Repeat("C", 1025) + "\n\n\x00", err: ErrCommandTooLong},
		{name: "command too long before its eol", version: V12, raw: strings.Repeat("C", 1026), err: ErrCommandTooLong},
		{name: "command too long with a small limit", version: V12, raw: "SUBSCRIBE\n\n\x00",
			limits: limitsWith(func(l *Limits) { l.MaxCommandBytes = 8 }), err: ErrCommandTooLong},
		{name: "header line too long", version: V12, raw: "SEND\nk:" + strings.Repeat("v", 10239) + "\n\n\x00", err: ErrHeaderTooLong},
		{name: "header line too long with a small limit", version: V12, raw: "SEND\nkey:value\r\n\n\x00",
			limits: limitsWith(func(l *Limits) { l.MaxHeaderLineBytes = 8 }), err: ErrHeaderTooLong},
		{name: "too many headers", version: V12, raw: "SEND\na:1\nb:2\nc:3\nd:4\n\n\x00",
			limits: limitsWith(func(l *Limits) { l.MaxHeaders = 3 }), err: ErrTooManyHeaders},
		{name: "too many headers at the default limit", version: V12,
			raw: "SEND\n" + strings.Repeat("h:v\n", 1001) + "\n\x00", err: ErrTooManyHeaders},
		{name: "content-length over the default body limit", version: V12,
			raw: "SEND\ncontent-length:104857601\n\n", err: ErrBodyTooLarge},
		{name: "content-length of 2^40 refused before any body", version: V12,
			raw: "SEND\ncontent-length:1099511627776\n\n", err: ErrBodyTooLarge},
		{name: "content-length beyond int64", version: V12,
			raw: "SEND\ncontent-length:999999999999999999999999999999\n\nx\x00", err: ErrBodyTooLarge},
		{name: "body without content-length too large", version: V12, raw: "SEND\n\n12345\x00",
			limits: limitsWith(func(l *Limits) { l.MaxBodyBytes = 4 }), err: ErrBodyTooLarge},
		{name: "body without content-length too large before its nul", version: V12, raw: "SEND\n\n12345",
			limits: limitsWith(func(l *Limits) { l.MaxBodyBytes = 4 }), err: ErrBodyTooLarge},
		{name: "frame too large in headers", version: V12, raw: "SEND\ndestination:/queue/abc\n\n\x00",
			limits: limitsWith(func(l *Limits) { l.MaxFrameBytes = 20 }), err: ErrFrameTooLarge},
		{name: "frame too large by its body", version: V12, raw: "SEND\nk:v\n\n123\x00",
			limits: limitsWith(func(l *Limits) { l.MaxFrameBytes = 13 }), err: ErrFrameTooLarge},
		{name: "frame too large by its content-length", version: V12, raw: "SEND\ncontent-length:3\n\n",
			limits: limitsWith(func(l *Limits) { l.MaxFrameBytes = 25 }), err: ErrFrameTooLarge},
		{name: "content-length not a number", version: V12, raw: "SEND\ncontent-length:abc\n\n\x00", err: ErrBadContentLength},
		{name: "content-length negative", version: V12, raw: "SEND\ncontent-length:-1\n\n\x00", err: ErrBadContentLength},
		{name: "content-length empty", version: V12, raw: "SEND\ncontent-length:\n\n\x00", err: ErrBadContentLength},
		{name: "content-length hexadecimal", version: V12, raw: "SEND\ncontent-length:0x10\n\n\x00", err: ErrBadContentLength},
		{name: "missing nul after content-length body", version: V12, raw: "SEND\ncontent-length:3\n\nabcd\x00", err: ErrMissingNUL},
		{name: "header line without colon", version: V12, raw: "SEND\nnocolon\n\n\x00", err: ErrBadHeaderLine},
		{name: "lost blank line shows as a header without colon", version: V12, raw: "SEND\n\x00SEND\n\n\x00", err: ErrBadHeaderLine},
		{name: "undefined escape in 1.2", version: V12, raw: "SEND\nk:a\\tb\n\n\x00", err: ErrBadEscape},
		{name: "dangling backslash in 1.2", version: V12, raw: "SEND\nk:a\\\n\n\x00", err: ErrBadEscape},
		{name: "undefined escape in a 1.2 name", version: V12, raw: "SEND\nk\\x:v\n\n\x00", err: ErrBadEscape},
		{name: "cr escape undefined in 1.1", version: V11, raw: "SEND\nk:a\\rb\n\n\x00", err: ErrBadEscape},
		{name: "error after a good frame", version: V12, raw: "SEND\n\nok\x00\nSEND\nbad\n\n\x00", beats: 1,
			want: frames(fr("SEND", "ok")), err: ErrBadHeaderLine},
	}
	return cases
}

// decodeChunks feeds chunks to a new decoder as a session would: after a
// connect-family frame it applies tc.after and drains the held bytes. Each
// chunk is overwritten after Feed to prove frames do not alias the input.
func decodeChunks(tc goldenCase, chunks [][]byte) ([]Frame, int, error) {
	lim := DefaultLimits()
	if tc.limits != nil {
		lim = *tc.limits
	}
	d := NewDecoder(lim)
	d.SetVersion(tc.version)
	var out []Frame
	beats := 0
	for _, c := range chunks {
		buf := append([]byte(nil), c...)
		in := buf
		for {
			n := len(out)
			var hb int
			var err error
			out, hb, err = d.Feed(in, out)
			beats += hb
			if err != nil {
				return out, beats, err
			}
			if tc.after != "" {
				for _, f := range out[n:] {
					if isConnectFamily(f.Command) {
						d.SetVersion(tc.after)
					}
				}
			}
			if d.Buffered() == 0 {
				break
			}
			in = nil
		}
		for i := range buf {
			buf[i] = 0xEE
		}
	}
	return out, beats, nil
}

func checkResult(t *testing.T, tc goldenCase, got []Frame, beats int, err error) {
	t.Helper()
	if tc.err == nil && err != nil {
		t.Fatalf("error = %v, want none", err)
	}
	if tc.err != nil && !errors.Is(err, tc.err) {
		t.Fatalf("error = %v, want %v", err, tc.err)
	}
	if !reflect.DeepEqual(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
		t.Fatalf("frames:\n got %s\nwant %s", dump(got), dump(tc.want))
	}
	if beats != tc.beats {
		t.Fatalf("heart-beats = %d, want %d", beats, tc.beats)
	}
}

func dump(fs []Frame) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "{%q %q %q} ", f.Command, f.Headers, f.Body)
	}
	return b.String()
}

func TestSTOMPWireGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, beats, err := decodeChunks(tc, [][]byte{[]byte(tc.raw)})
			checkResult(t, tc, got, beats, err)
			if err != nil && !strings.HasPrefix(err.Error(), "stomp: ") {
				t.Errorf("error %q lacks the stomp: prefix", err)
			}
			for _, f := range got {
				// STOMP 1.2 "Repeated Header Entries": Get sees the first.
				seen := map[string]bool{}
				for _, h := range f.Headers {
					if seen[h.Name] {
						continue
					}
					seen[h.Name] = true
					if v, ok := f.Get(h.Name); !ok || v != h.Value {
						t.Errorf("Get(%q) = %q, %v; want the first value %q", h.Name, v, ok, h.Value)
					}
				}
			}
		})
	}
}

// TestSTOMPWireSplit feeds every golden input in every 2-way split and one
// byte at a time; the frames, heart-beat count and error text must be the
// same as for the whole input.
func TestSTOMPWireSplit(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(tc.raw)
			whole, wholeBeats, wholeErr := decodeChunks(tc, [][]byte{raw})
			same := func(how string, got []Frame, beats int, err error) {
				t.Helper()
				if !reflect.DeepEqual(got, whole) || beats != wholeBeats || fmt.Sprint(err) != fmt.Sprint(wholeErr) {
					t.Fatalf("%s: got %s beats %d err %v; whole input gave %s beats %d err %v",
						how, dump(got), beats, err, dump(whole), wholeBeats, wholeErr)
				}
			}
			for i := 0; i <= len(raw); i++ {
				got, beats, err := decodeChunks(tc, [][]byte{raw[:i], raw[i:]})
				same(fmt.Sprintf("split at %d", i), got, beats, err)
			}
			bytewise := make([][]byte, len(raw))
			for i := range raw {
				bytewise[i] = raw[i : i+1]
			}
			got, beats, err := decodeChunks(tc, bytewise)
			same("byte by byte", got, beats, err)
		})
	}
}

// TestSTOMPWireRoundTrip encodes every decoded golden frame and a set of
// awkward frames, and decodes them again.
func TestSTOMPWireRoundTrip(t *testing.T) {
	awkward := []Frame{
		fr("SEND", "a\x00b", "destination", "/queue/a:b", "k\\ey", "line1\nline2", "cr", "x\ry\r", "content-length", "3"),
		fr("MESSAGE", "text body", "message-id", "ID:vm-1:1:1", "", "empty name", "empty", ""),
		fr("ERROR", "", "message", "stomp: header line without a colon: \"x\\ny\""),
		fr("CONNECTED", "", "session", "ID:host-1", "version", "1.2"),
	}
	for _, v := range []string{V10, V11, V12} {
		for _, f := range awkward {
			if v == V10 || (v == V11 && strings.Contains(fmt.Sprint(f.Headers), "\r")) {
				continue // 1.0 cannot carry LF, 1.1 cannot carry a trailing CR
			}
			t.Run(v+"/"+f.Command, func(t *testing.T) { roundTrip(t, f, v) })
		}
	}
	for _, tc := range goldenCases() {
		if tc.err != nil || tc.after != "" {
			continue
		}
		for _, f := range tc.want {
			t.Run(tc.name, func(t *testing.T) { roundTrip(t, f, tc.version) })
		}
	}
}

func roundTrip(t *testing.T, f Frame, version string) {
	t.Helper()
	enc := AppendFrame(nil, &f, version)
	d := NewDecoder(DefaultLimits())
	d.SetVersion(version)
	got, _, err := d.Feed(enc, nil)
	if err != nil {
		t.Fatalf("decode %q: %v", enc, err)
	}
	if len(got) != 1 || !reflect.DeepEqual(got[0], f) {
		t.Fatalf("round trip of %q under %s:\n got %s\nwant %s", enc, version, dump(got), dump([]Frame{f}))
	}
}

func TestSTOMPWireEncode(t *testing.T) {
	f := fr("MESSAGE", "hi", "destination", "/queue/a", "message-id", "ID:x:1", "p", "a\\b\nc\rd")
	check := func(version, want string) {
		t.Helper()
		if got := string(AppendFrame(nil, &f, version)); got != want {
			t.Errorf("AppendFrame(%s) = %q, want %q", version, got, want)
		}
	}
	check(V12, "MESSAGE\ndestination:/queue/a\nmessage-id:ID\\cx\\c1\np:a\\\\b\\nc\\rd\n\nhi\x00\n")
	check(V11, "MESSAGE\ndestination:/queue/a\nmessage-id:ID\\cx\\c1\np:a\\\\b\\nc\rd\n\nhi\x00\n")
	// 1.0 has no escapes: LF becomes a space so it cannot inject a header.
	check(V10, "MESSAGE\ndestination:/queue/a\nmessage-id:ID:x:1\np:a\\b c\rd\n\nhi\x00\n")

	c := fr("CONNECTED", "", "session", "ID:h:1")
	if got, want := string(AppendFrame(nil, &c, V12)), "CONNECTED\nsession:ID:h:1\n\n\x00\n"; got != want {
		t.Errorf("CONNECTED = %q, want %q (never escaped)", got, want)
	}

	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { buf = AppendFrame(buf[:0], &f, V12) }); n != 0 {
		t.Errorf("AppendFrame with capacity allocated %v times, want 0", n)
	}
}

func TestSTOMPWireEscape(t *testing.T) {
	check := func(version, plain, escaped string) {
		t.Helper()
		if got := Escape(plain, version); got != escaped {
			t.Errorf("Escape(%q, %s) = %q, want %q", plain, version, got, escaped)
		}
		if got := string(AppendEscaped([]byte("x"), plain, version)); got != "x"+escaped {
			t.Errorf("AppendEscaped(%q, %s) = %q, want %q", plain, version, got, "x"+escaped)
		}
		got, err := Unescape(escaped, version)
		if err != nil || got != plain {
			t.Errorf("Unescape(%q, %s) = %q, %v; want %q", escaped, version, got, err, plain)
		}
	}
	check(V12, "plain", "plain")
	check(V12, "a:b\\c\nd\re", "a\\cb\\\\c\\nd\\re")
	check(V11, "a:b\\c\nd\re", "a\\cb\\\\c\\nd\re")
	check(V10, "a:b\\c\nd", "a:b\\c\nd")
	for _, bad := range []struct{ version, s string }{
		{V12, "a\\tb"}, {V12, "a\\"}, {V11, "a\\rb"}, {V11, "\\x"},
	} {
		if _, err := Unescape(bad.s, bad.version); !errors.Is(err, ErrBadEscape) {
			t.Errorf("Unescape(%q, %s) error = %v, want ErrBadEscape", bad.s, bad.version, err)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = Escape("/queue/plain", V12) }); n != 0 {
		t.Errorf("Escape of a plain value allocated %v times, want 0", n)
	}
}

func TestSTOMPWireFrameHeaders(t *testing.T) {
	f := fr("SEND", "", "a", "1", "b", "2", "a", "3")
	if v, ok := f.Get("a"); !ok || v != "1" {
		t.Errorf("Get(a) = %q, %v; want first value 1", v, ok)
	}
	if _, ok := f.Get("missing"); ok {
		t.Error("Get(missing) found a header")
	}
	f.Set("a", "x")
	f.Set("c", "4")
	want := fr("SEND", "", "a", "x", "b", "2", "a", "3", "c", "4")
	if !reflect.DeepEqual(f, want) {
		t.Errorf("after Set: %s, want %s", dump([]Frame{f}), dump([]Frame{want}))
	}
	f.Del("a")
	want = fr("SEND", "", "b", "2", "c", "4")
	if !reflect.DeepEqual(f, want) {
		t.Errorf("after Del: %s, want %s", dump([]Frame{f}), dump([]Frame{want}))
	}
}

// TestSTOMPWireErrorMessages pins the text the session copies into the ERROR
// frame's message header.
func TestSTOMPWireErrorMessages(t *testing.T) {
	check := func(raw string, lim Limits, want string) {
		t.Helper()
		d := NewDecoder(lim)
		d.SetVersion(V12)
		_, _, err := d.Feed([]byte(raw), nil)
		if err == nil || err.Error() != want {
			t.Errorf("decode %q: error %v, want %q", raw, err, want)
		}
	}
	def := DefaultLimits()
	check("SEND\ncontent-length:104857601\n\n", def,
		"stomp: frame body too large: SEND frame body of 104857601 bytes exceeds the limit of 104857600 bytes")
	check("SEND\ncontent-length:12a\n\n", def,
		`stomp: invalid content-length: "12a" in SEND frame is not a number of bytes`)
	check("SEND\ncontent-length:1\n\nab", def,
		`stomp: missing NUL after frame body: SEND frame with content-length 1 is followed by byte 'b'`)
	check("SEND\nbroken line\n\n", def,
		`stomp: header line without a colon: "broken line" in SEND frame`)
	check("SEND\nk:a\\tb\n\n", def,
		`stomp: undefined escape sequence in header: \t in "a\\tb" (SEND frame)`)
	check("SEND\na:1\nb:2\n\n", Limits{MaxHeaders: 1},
		"stomp: too many headers: SEND frame has more than 1 headers")
	check("X\n\n", Limits{MaxFrameBytes: 2}, `stomp: frame too large: "X" frame exceeds the limit of 2 bytes`)
}

func TestSTOMPWireStickyError(t *testing.T) {
	d := NewDecoder(DefaultLimits())
	_, _, err := d.Feed([]byte("SEND\nnocolon\n\n\x00"), nil)
	if !errors.Is(err, ErrBadHeaderLine) {
		t.Fatalf("error = %v, want ErrBadHeaderLine", err)
	}
	got, _, err2 := d.Feed([]byte("SEND\n\n\x00"), nil)
	if err2 != err || len(got) != 0 || d.Err() != err {
		t.Fatalf("after an error Feed returned %d frames and %v, want no frames and %v", len(got), err2, err)
	}
}

// TestSTOMPWireContentLengthIsNotAnAllocation: a large but allowed
// content-length reserves at most one chunk until the bytes arrive.
func TestSTOMPWireContentLengthIsNotAnAllocation(t *testing.T) {
	d := NewDecoder(DefaultLimits())
	if _, _, err := d.Feed([]byte("SEND\ncontent-length:104857600\n\nabc"), nil); err != nil {
		t.Fatal(err)
	}
	if c := cap(d.body); c > keepBytes {
		t.Fatalf("decoder reserved %d bytes for 3 received, want at most %d", c, keepBytes)
	}
}

// TestSTOMPWireLargeBodySplit feeds a body far larger than one chunk in odd
// pieces, with and without content-length.
func TestSTOMPWireLargeBodySplit(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320000 bytes
	for _, withLength := range []bool{true, false} {
		f := fr("SEND", "", "destination", "/queue/big")
		f.Body = body
		if withLength {
			f.Set(HdrContentLength, fmt.Sprint(len(body)))
		}
		enc := AppendFrame(nil, &f, V12)
		d := NewDecoder(DefaultLimits())
		d.SetVersion(V12)
		var out []Frame
		for len(enc) > 0 {
			n := min(len(enc), 7919)
			var err error
			out, _, err = d.Feed(enc[:n], out)
			if err != nil {
				t.Fatal(err)
			}
			enc = enc[n:]
		}
		if len(out) != 1 || !bytes.Equal(out[0].Body, body) || !reflect.DeepEqual(out[0].Headers, f.Headers) {
			t.Fatalf("content-length %v: got %d frames", withLength, len(out))
		}
		if withLength && cap(out[0].Body) != len(body) {
			t.Errorf("content-length body capacity %d, want exactly %d", cap(out[0].Body), len(body))
		}
	}
}
