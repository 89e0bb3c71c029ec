package openwire

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	"wharf/protocols/internal/conntest"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
	"wharf/protocols/transport"
)

// TestOpenWireSlowReaderNotCut: ten topic subscribers on one connection
// with the Java client's default prefetch (32,767) and a client that reads
// nothing while 8,000 messages of 1 KiB are published: 80 MiB of
// dispatches, more than the transport's 64 MiB cap on unwritten bytes.
// The connection is not cut as a slow consumer: once 16 MiB wait
// unwritten the consumers give back their unused credit, the rest waits in
// the engine, and when the client reads it gets every message, each
// subscriber's in order.
func TestOpenWireSlowReaderNotCut(t *testing.T) {
	const subs, count, size = 10, 8000, 1024
	e := conntest.Engine(t)
	srv, err := NewServer(e, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	l, err := transport.Listen("127.0.0.1:0", srv.Handler, transport.Options{NumEventLoop: 2, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	addr := l.Addr().String()

	// The slow client: raw frames, so that nothing reads for it.
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	// No inactivity monitor: this client sends nothing while the producer
	// runs, which takes longer than 30 s under the race detector on a
	// loaded machine, and the broker would close it as inactive (the cut
	// this test is about is the transport's, at 64 MiB unwritten).
	opts := wire.DefaultOptions()
	opts.MaxInactivityDuration = 0
	wfi, rest, f, err := owHello(1, opts)
	if err != nil {
		t.Fatal(err)
	}
	// A fresh encoder for what follows: it only names cache slots it has
	// set itself, which the broker's decoder takes as told.
	enc := wire.NewEncoder(f)
	topic := wire.NewTopic("slow.fanout")
	var out []byte
	for i := 1; i <= subs; i++ {
		out, err = enc.Append(out, &wire.ConsumerInfo{
			BaseCommand:  wire.BaseCommand{CommandId: int32(10 + i), ResponseRequired: true},
			ConsumerId:   &wire.ConsumerId{ConnectionId: "ID:idle-1", SessionId: 1, Value: int64(i)},
			Destination:  topic,
			PrefetchSize: defaultTopicPrefetch,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range [][]byte{wfi, rest, out} {
		if _, err := nc.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	dec := wire.NewDecoder(wire.InitialFormat(wire.MaxVersion), wire.Limits{})
	buf := make([]byte, 256<<10)
	next := func() wire.DataStructure {
		t.Helper()
		for {
			ds, err := dec.Next()
			if err != nil {
				t.Fatal(err)
			}
			if ds != nil {
				return ds
			}
			_ = nc.SetReadDeadline(time.Now().Add(30 * time.Second))
			n, err := nc.Read(buf)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			dec.Feed(buf[:n])
		}
	}
	// The handshake and the consumers are answered (2 + subs Responses).
	for answered := 0; answered < 2+subs; {
		switch r := next().(type) {
		case *wire.WireFormatInfo:
			dec.SetFormat(f)
		case *wire.ExceptionResponse:
			t.Fatalf("command %d refused: %v", r.CorrelationId, r.Exception)
		case *wire.Response:
			answered++
		}
	}

	// The producer, on a connection of its own, sends everything; its
	// last send waits for the broker's answer.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pc, err := client.Dial(ctx, addr, client.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	ps, err := pc.Session(false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ps.Producer(topic)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < count; i++ {
		body := make([]byte, size)
		copy(body, fmt.Sprintf("%08d", i))
		if err := p.Send(ctx, client.NewBytesMessage(body), i == count-1); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}

	// Now the client reads: every subscriber gets every message, in order.
	got := make(map[int64]int)
	for total := 0; total < subs*count; {
		ds := next()
		md, ok := ds.(*wire.MessageDispatch)
		if !ok || md.Message == nil {
			continue
		}
		sub := md.ConsumerId.Value
		want := fmt.Sprintf("%08d", got[sub])
		body, err := md.Message.Body(wire.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if string(body[:8]) != want {
			t.Fatalf("subscriber %d: message %q, want %q", sub, body[:8], want)
		}
		got[sub]++
		total++
	}
	for i := int64(1); i <= subs; i++ {
		if got[i] != count {
			t.Errorf("subscriber %d got %d messages, want %d", i, got[i], count)
		}
	}
	// Still connected: a new session is answered.
	ka, err := enc.Append(nil, &wire.SessionInfo{BaseCommand: wire.BaseCommand{CommandId: 99, ResponseRequired: true}, SessionId: &wire.SessionId{ConnectionId: "ID:idle-1", Value: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write(ka); err != nil {
		t.Fatal(err)
	}
	for {
		ds := next()
		if r, ok := ds.(*wire.Response); ok && r.CorrelationId == 99 {
			break
		}
	}
}
