package openwire

import (
	"testing"

	"wharf/protocols/internal/conntest"
	"wharf/protocols/openwire/wire"
)

// discardConn is a transport.Conn that counts what is written and keeps
// nothing, for benchmarks of the write path.
type discardConn struct {
	conntest.Conn
	n int
}

func (c *discardConn) Write(b []byte) error { c.n += len(b); return nil }

// BenchmarkOpenWireSessionSend is one MessageDispatch of a 1 KiB
// BytesMessage through session.send: encoded into a pooled buffer and
// handed to the transport (which copies it). allocs/op is the encode
// path's: the pooled buffer costs none once warm. flow=on is a
// connection with consumers, whose sends are counted for the bound on
// unwritten bytes (outflow.go: a mark every 1 MiB).
func BenchmarkOpenWireSessionSend(b *testing.B) {
	for _, flow := range []bool{false, true} {
		b.Run(map[bool]string{false: "flow=off", true: "flow=on"}[flow], func(b *testing.B) { benchSessionSend(b, flow) })
	}
}

func benchSessionSend(b *testing.B, flow bool) {
	e := conntest.Engine(b)
	srv, err := NewServer(e, DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	tc := &discardConn{}
	s := newSession(srv, tc)
	b.Cleanup(func() { s.OnClose(nil) })
	f, err := wire.Negotiate(srv.opts.Local, wire.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	s.enc.SetFormat(f)
	if flow {
		s.flow.Store(&outFlow{})
	}
	q := wire.NewQueue("bench")
	cons := &wire.ConsumerId{ConnectionId: "ID:bench-1", SessionId: 1, Value: 1}
	prod := &wire.ProducerId{ConnectionId: "ID:bench-2", SessionId: 1, Value: 1}
	m := &wire.Message{Kind: wire.TypeActiveMQBytesMessage, ProducerId: prod, Destination: q,
		MessageId: &wire.MessageId{ProducerId: prod, ProducerSequenceId: 1}, Content: make([]byte, 1024)}
	d := &wire.MessageDispatch{ConsumerId: cons, Destination: q, Message: m}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.send(d)
	}
	b.StopTimer()
	if tc.n < b.N*1024 {
		b.Fatalf("%d bytes written for %d dispatches of 1 KiB", tc.n, b.N)
	}
}
