package stomp

import (
	"bytes"
	"strconv"
	"testing"

	"wharf/engine"
	"wharf/protocols/internal/conntest"
	"wharf/protocols/internal/fuzzprog"
)

// stompHeaderValues are the values the structure-aware fuzzer picks for
// each header it writes: the ones the session acts on, plus a few that
// must be refused.
var stompHeaderValues = []struct {
	name   string
	values []string
}{
	{"destination", []string{"/queue/q", "/topic/t", "/queue/a,/queue/b", "/temp-queue/x", "/temp-topic/y", "/topic/>", "/queue/*.z", "/queue/ActiveMQ.DLQ", "", "/bogus/x", "queue://q"}},
	{"id", []string{"1", "2", "3", ""}},
	{"ack", []string{"auto", "client", "client-individual", "bogus"}},
	{"receipt", []string{"r1", "r2", ""}},
	{"transaction", []string{"t1", "t2", ""}},
	{"selector", []string{"a > 1", "JMSType = 'x'", "(((", "JMSPriority BETWEEN 1 AND 9"}},
	{"persistent", []string{"true", "false", "maybe"}},
	{"expires", []string{"0", "1", "9999999999999", "-5", "x"}},
	{"priority", []string{"0", "4", "9", "-1", "99"}},
	{"reply-to", []string{"/temp-queue/r", "/queue/r"}},
	{"browser", []string{"true", "false"}},
	{"activemq.prefetchSize", []string{"0", "1", "1000", "-1", "x"}},
	{"activemq.subscriptionName", []string{"d1", "d2"}},
	{"client-id", []string{"c1", "c2"}},
	{"activemq.exclusive", []string{"true"}},
	{"activemq.noLocal", []string{"true"}},
	{"activemq.retroactive", []string{"true"}},
	{"AMQ_SCHEDULED_DELAY", []string{"0", "1000", "-1", "x"}},
	{"JMSXGroupID", []string{"g1", "g2"}},
	{"content-type", []string{"text/plain", "application/octet-stream"}},
	{"heart-beat", []string{"0,0", "1,1", "x"}},
	{"transformation", []string{"jms-map-json", "jms-object-xml", "bogus"}},
}

var stompCommands = []string{"SEND", "SUBSCRIBE", "UNSUBSCRIBE", "ACK", "NACK", "BEGIN", "COMMIT", "ABORT", "SEND", "SUBSCRIBE", "ACK", "CONNECT", "STOMP", "DISCONNECT", "BOGUS"}

// FuzzSTOMPSessionFrames is the structure-aware session fuzzer (issue #17):
// after a valid CONNECT, the input is a program that builds up to 32
// frames from the commands and headers STOMP has (values mostly from
// stompHeaderValues, ACK ids taken from the MESSAGE frames the session
// wrote so far, bodies with or without a content-length), damages some of
// their bytes, and feeds each in two pieces. Invariants: no panic; unless
// a frame was damaged (the framing may then be lost), a frame asking for a
// receipt after them is answered or the session has ended; after close no
// consumer is left; and the engine still serves a fresh client
// (checked after every seed input, and after one fuzzed input in
// conntest.ServeCheckEvery).
func FuzzSTOMPSessionFrames(f *testing.F) {
	e := conntest.Engine(f)
	srv := NewServer(e, DefaultOptions())
	f.Add([]byte{})
	// SUBSCRIBE client-individual to /queue/q, SEND to it, ACK what came.
	f.Add([]byte{0, 1 << 3, 3, 1 << 3, 0, 0 << 3, 0, 2, 2 << 3, 0, 0, 0, 0 << 3, 0, 2, 0 << 3, 0, 3, 4, 'b', 'o', 'd', 'y', 0, 3 << 3, 0, 0, 0})
	f.Add([]byte("\x05\x08\x28\x04\x30\x00\x10\x00\x00\x00\x05\x00\x30\x08\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) { stompFramesInput(t, e, srv, data) })
}

// BenchmarkFuzzSTOMPSessionFramesCorpus runs FuzzSTOMPSessionFrames' body
// over its seed and cached corpus (ns/input: what an execution costs).
func BenchmarkFuzzSTOMPSessionFramesCorpus(b *testing.B) {
	e := conntest.Engine(b)
	srv := NewServer(e, DefaultOptions())
	fuzzprog.Replay(b, "wharf/protocols/stomp", "FuzzSTOMPSessionFrames", func(tb testing.TB, v []any) {
		stompFramesInput(tb, e, srv, v[0].([]byte))
	})
}

const stompFramesConnect = "CONNECT\naccept-version:1.0,1.1,1.2\nhost:x\n\n\x00"

// stompFramesInput is one input of FuzzSTOMPSessionFrames.
func stompFramesInput(t testing.TB, e *engine.Engine, srv *Server, data []byte) {
	p := fuzzprog.New(data)
	tc := &conntest.Conn{}
	s := srv.Handler(tc)
	s.OnData([]byte(stompFramesConnect))
	for n := 0; n < 32 && p.More() && !tc.Closed(); n++ {
		frame := p.Damage(buildSTOMPFrame(p, tc))
		cut := p.Intn(len(frame) + 1)
		if s.OnData(frame[:cut]) != nil || s.OnData(frame[cut:]) != nil {
			break
		}
	}
	if !p.Damaged && !tc.Closed() {
		// The receipt id is the input's hash: the input's own frames
		// cannot ask for it (short of a hash collision), and the same
		// input writes the same bytes every run.
		id := "probe-" + strconv.FormatUint(conntest.InputHash(data), 16)
		s.OnData([]byte("BEGIN\ntransaction:" + id + "\nreceipt:" + id + "\n\n\x00"))
		if !tc.Await(conntest.ProbeWait, func(out []byte, closed bool) bool {
			return closed || bytes.Contains(out, []byte("receipt-id:"+id+"\n"))
		}) {
			t.Fatalf("no RECEIPT %s and no close within %v; the session wrote:\n%q", id, conntest.ProbeWait, tc.Written())
		}
	}
	s.OnClose(nil)
	if st := e.Stats(queueQ); st.ConsumerCount != 0 {
		t.Fatalf("a closed session left %d consumers on /queue/q", st.ConsumerCount)
	}
	if err := conntest.ServesAfter(e, conntest.ProbeWait, data); err != nil {
		t.Fatalf("the engine stopped serving after the input: %v", err)
	}
	if err := conntest.Tidy(e); err != nil {
		t.Fatalf("tidying the engine after the input: %v", err)
	}
}

// buildSTOMPFrame builds one frame from p's choices; tc holds what the
// session wrote so far, where ACK and NACK find ack ids (read only then:
// copying the output for every frame was a fifth of what the target
// allocated).
func buildSTOMPFrame(p *fuzzprog.Prog, tc *conntest.Conn) []byte {
	cmd := p.Pick(stompCommands...)
	b := append([]byte(cmd), '\n')
	for n := p.Intn(7); n > 0; n-- {
		h := stompHeaderValues[p.Intn(len(stompHeaderValues))]
		v := p.Pick(h.values...)
		if (cmd == "ACK" || cmd == "NACK") && h.name == "id" {
			v = pickAckID(p, tc.Written())
		}
		b = append(append(append(append(b, h.name...), ':'), v...), '\n')
	}
	body := p.Bytes(64)
	switch p.Intn(3) {
	case 0: // content-length, so the body may hold NULs
		b = append(append(b, "content-length:"...), strconv.Itoa(len(body))...)
		b = append(b, '\n')
	case 1:
		body = bytes.ReplaceAll(body, []byte{0}, nil)
	default:
		body = nil
	}
	b = append(append(b, '\n'), body...)
	return append(b, 0)
}

// pickAckID picks one of the ack ids (STOMP 1.2 "ack" headers) in out, or
// a made-up one when there is none.
func pickAckID(p *fuzzprog.Prog, out []byte) string {
	var ids []string
	for rest := out; ; {
		i := bytes.Index(rest, []byte("\nack:"))
		if i < 0 {
			break
		}
		rest = rest[i+5:]
		if j := bytes.IndexByte(rest, '\n'); j >= 0 {
			ids = append(ids, string(rest[:j]))
		}
	}
	if len(ids) == 0 {
		return "1-1"
	}
	return ids[p.Intn(min(len(ids), 256))]
}
