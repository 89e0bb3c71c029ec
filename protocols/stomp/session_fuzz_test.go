package stomp

import (
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/internal/conntest"
	"wharf/protocols/internal/fuzzprog"
)

// FuzzSTOMPSession feeds arbitrary frames, split in two, to a session on a
// real engine after a valid CONNECT: whatever they say, the session must
// not panic, and its close must leave no consumer behind.
func FuzzSTOMPSession(f *testing.F) {
	e := conntest.Engine(f)
	srv := NewServer(e, DefaultOptions())
	for _, s := range []string{
		"SUBSCRIBE\nid:1\ndestination:/queue/q\nack:client-individual\nreceipt:r1\n\n\x00",
		"SEND\ndestination:/queue/q\npersistent:true\n\nhello\x00",
		"SEND\ndestination:/topic/t\ncontent-length:3\n\na\x00b\x00",
		"BEGIN\ntransaction:t1\n\n\x00SEND\ndestination:/queue/q\ntransaction:t1\n\nx\x00ABORT\ntransaction:t1\n\n\x00",
		"ACK\nid:1-1\n\n\x00NACK\nid:1-2\n\n\x00",
		"UNSUBSCRIBE\nid:1\n\n\x00",
		"SUBSCRIBE\nid:2\ndestination:/queue/q\nbrowser:true\n\n\x00",
		"DISCONNECT\nreceipt:bye\n\n\x00",
	} {
		f.Add([]byte(s), uint8(5))
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint8) { stompSessionInput(t, e, srv, data, split) })
}

// BenchmarkFuzzSTOMPSessionCorpus runs FuzzSTOMPSession's body over its
// seed and cached corpus (ns/input: what an execution costs).
func BenchmarkFuzzSTOMPSessionCorpus(b *testing.B) {
	e := conntest.Engine(b)
	srv := NewServer(e, DefaultOptions())
	fuzzprog.Replay(b, "wharf/protocols/stomp", "FuzzSTOMPSession", func(tb testing.TB, v []any) {
		stompSessionInput(tb, e, srv, v[0].([]byte), v[1].(byte))
	})
}

// stompSessionInput is one input of FuzzSTOMPSession.
func stompSessionInput(t testing.TB, e *engine.Engine, srv *Server, data []byte, split uint8) {
	const connect = "CONNECT\naccept-version:1.2\nhost:x\n\n\x00"
	tc := &conntest.Conn{}
	s := srv.Handler(tc)
	in := append([]byte(connect), data...)
	cut := min(len(connect)+int(split), len(in))
	s.OnData(in[:cut])
	s.OnData(in[cut:])
	s.OnClose(nil)
	if st := e.Stats(queueQ); st.ConsumerCount != 0 {
		t.Fatalf("a closed session left %d consumers on /queue/q", st.ConsumerCount)
	}
	if err := conntest.Tidy(e); err != nil {
		t.Fatalf("tidying the engine after the input: %v", err)
	}
}

var queueQ = message.QueueDest("q")
