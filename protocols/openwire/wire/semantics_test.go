package wire

import (
	"strings"
	"testing"
	"time"
)

// checkJavaSemantics checks field values of the commands Interop.java
// generates (Interop.commands).
func checkJavaSemantics(t *testing.T, f Format, cmds []DataStructure) {
	t.Helper()
	var texts, bytesMsgs, maps, streams []*Message
	var exc *ExceptionResponse
	for _, ds := range cmds {
		switch x := ds.(type) {
		case *Message:
			switch x.DataStructureType() {
			case TypeActiveMQTextMessage:
				texts = append(texts, x)
			case TypeActiveMQBytesMessage:
				bytesMsgs = append(bytesMsgs, x)
			case TypeActiveMQMapMessage:
				maps = append(maps, x)
			case TypeActiveMQStreamMessage:
				streams = append(streams, x)
			}
		case *ExceptionResponse:
			exc = x
		}
	}
	wfi, ok := cmds[0].(*WireFormatInfo)
	if !ok {
		t.Fatalf("first command is %T", cmds[0])
	}
	o, err := wfi.Options()
	if err != nil {
		t.Fatal(err)
	}
	if o.Version != f.Version || !o.TightEncodingEnabled || !o.CacheEnabled || o.CacheSize != 1024 ||
		o.MaxInactivityDuration != 30*time.Second || o.MaxFrameSize != 104857600 {
		t.Errorf("WireFormatInfo options = %+v", o)
	}
	if len(texts) != 2 || len(bytesMsgs) != 2 || len(maps) != 1 || len(streams) != 1 || exc == nil {
		t.Fatalf("found %d text, %d bytes, %d map, %d stream messages, exception %v", len(texts), len(bytesMsgs), len(maps), len(streams), exc)
	}
	if s, ok, err := texts[0].Text(Limits{}); err != nil || !ok || s != emojiText {
		t.Errorf("Text() = %q, %v, %v; want %q", s, ok, err, emojiText)
	}
	if texts[0].CorrelationId != "corr-\U0001F600" {
		t.Errorf("CorrelationId = %q", texts[0].CorrelationId)
	}
	props, err := texts[0].Properties(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	wantProps := map[string]any{"bool": true, "byte": int8(-1), "short": int16(-300), "int": int32(123456),
		"long": int64(-9000000000), "float": float32(1.5), "double": -2.25, "string": "v\u00e4lue \U0001F600"}
	for k, v := range wantProps {
		if props[k] != v {
			t.Errorf("property %s = %#v, want %#v", k, props[k], v)
		}
	}
	if s, _, err := texts[1].Text(Limits{}); err != nil || !texts[1].Compressed || !strings.HasPrefix(s, "compress me 0 compress me 1 ") {
		t.Errorf("compressed text: %q, compressed=%v, %v", s[:min(len(s), 40)], texts[1].Compressed, err)
	}
	if b, err := bytesMsgs[0].Bytes(Limits{}); err != nil || string(b) != "\x00\x01\x02\xff" {
		t.Errorf("Bytes() = %x, %v", b, err)
	}
	if b, err := bytesMsgs[1].Bytes(Limits{}); err != nil || !bytesMsgs[1].Compressed || !strings.HasPrefix(string(b), "compress me 0 ") {
		t.Errorf("compressed Bytes() = %.20q, %v", b, err)
	}
	m, err := maps[0].Map(Limits{})
	if err != nil || m["name"] != "\u4e16\u754c" || m["count"] != int32(3) || m["ch"] != Char('Z') || string(m["raw"].([]byte)) != "\x05\x06" {
		t.Errorf("Map() = %#v, %v", m, err)
	}
	st, err := streams[0].Stream(Limits{})
	if err != nil || len(st) != 5 || st[0] != "first" || st[1] != int32(42) || st[2] != false || st[3] != 3.5 {
		t.Errorf("Stream() = %#v, %v", st, err)
	}
	e := exc.Exception
	if e == nil || e.ClassName != "javax.jms.InvalidDestinationException" || e.Cause == nil ||
		e.Cause.Message != "inner \u00fc" || len(e.Cause.StackTrace) != 2 || e.Cause.StackTrace[1].FileName != "" ||
		e.StackTrace[0].LineNumber != 123 {
		t.Errorf("exception = %+v", e)
	}
	for _, ds := range cmds {
		if m, ok := ds.(*Message); ok && m.DataStructureType() == TypeActiveMQMessage {
			want := ""
			if f.Version >= 10 {
				want = "ID:custom-text-view"
			}
			if m.MessageId.TextView != want {
				t.Errorf("TextView = %q, want %q", m.MessageId.TextView, want)
			}
			p, err := m.Properties(Limits{})
			if err != nil || UTF16Len(p["big"].(string)) != 9000 {
				t.Errorf("big string property: %v", err)
			}
		}
	}
}
