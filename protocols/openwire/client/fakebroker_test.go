package client

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"wharf/protocols/openwire/wire"
)

// A scripted broker on loopback for behaviour ActiveMQ does not show on
// demand (keep-alives asking for a response, a silent broker, a broker
// closing a consumer or the connection). It needs no external broker.

type fakeConn struct {
	t   *testing.T
	nc  net.Conn
	enc *wire.Encoder
	dec *wire.Decoder
	buf []byte
}

func (f *fakeConn) write(ds wire.DataStructure) {
	f.t.Helper()
	b, err := f.enc.Append(nil, ds)
	if err != nil {
		f.t.Fatalf("fake broker encode: %v", err)
	}
	if _, err := f.nc.Write(b); err != nil {
		f.t.Fatalf("fake broker write: %v", err)
	}
}

// read returns the next frame from the client, or nil on EOF or timeout.
func (f *fakeConn) read() wire.DataStructure {
	f.t.Helper()
	f.nc.SetReadDeadline(time.Now().Add(wait))
	for {
		ds, err := f.dec.Next()
		if err != nil {
			f.t.Fatalf("fake broker decode: %v", err)
		}
		if ds != nil {
			return ds
		}
		n, err := f.nc.Read(f.buf)
		if n == 0 && err != nil {
			return nil
		}
		f.dec.Feed(f.buf[:n])
	}
}

// readType skips frames until one of type T arrives.
func readType[T wire.DataStructure](f *fakeConn) T {
	f.t.Helper()
	for {
		ds := f.read()
		if ds == nil {
			var zero T
			f.t.Fatalf("fake broker: connection ended while waiting for %T", zero)
		}
		if x, ok := ds.(T); ok {
			return x
		}
	}
}

// fakeDial dials a fake broker advertising opts and runs the broker side
// of the handshake; it returns both ends.
func fakeDial(t *testing.T, opts wire.Options, co Options) (*Conn, *fakeConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type result struct {
		c   *Conn
		err error
	}
	dialed := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		c, err := Dial(ctx, ln.Addr().String(), co)
		dialed <- result{c, err}
	}()
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	f := &fakeConn{t: t, nc: nc, buf: make([]byte, 4096),
		enc: wire.NewEncoder(wire.InitialFormat(wire.MaxVersion)),
		dec: wire.NewDecoder(wire.InitialFormat(wire.MaxVersion), wire.Limits{})}
	wfi, err := wire.NewWireFormatInfo(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.write(wfi)
	remote, err := readType[*wire.WireFormatInfo](f).Options()
	if err != nil {
		t.Fatal(err)
	}
	format, err := wire.Negotiate(opts, remote)
	if err != nil {
		t.Fatal(err)
	}
	f.enc.SetFormat(format)
	f.dec.SetFormat(format)
	f.write(&wire.BrokerInfo{BrokerId: &wire.BrokerId{Value: "ID:fake"}, BrokerName: "fake"})
	ci := readType[*wire.ConnectionInfo](f)
	f.write(&wire.Response{CorrelationId: ci.CommandId})
	r := <-dialed
	if r.err != nil {
		t.Fatalf("Dial: %v", r.err)
	}
	t.Cleanup(func() { r.c.fail(ErrClosed); <-r.c.readerDone })
	return r.c, f
}

// answer replies to the next frame of type T, which must want a response.
func answer[T wire.Command](f *fakeConn) T {
	f.t.Helper()
	x := readType[T](f)
	f.write(&wire.Response{CorrelationId: x.Base().CommandId})
	return x
}

func TestOpenWireClientFakeKeepAliveEcho(t *testing.T) {
	c, f := fakeDial(t, wire.DefaultOptions(), testOptions())
	f.write(&wire.KeepAliveInfo{BaseCommand: wire.BaseCommand{ResponseRequired: true}})
	ka := readType[*wire.KeepAliveInfo](f)
	if ka.ResponseRequired {
		t.Fatal("keep-alive echo asks for a response")
	}
	if c.keepAliveIn.Load() != 1 {
		t.Fatalf("keep-alives counted %d", c.keepAliveIn.Load())
	}
}

func TestOpenWireClientFakeInactivity(t *testing.T) {
	opts := wire.DefaultOptions()
	opts.MaxInactivityDuration = 300 * time.Millisecond
	opts.MaxInactivityDurationInitalDelay = 10 * time.Millisecond
	c, f := fakeDial(t, opts, testOptions())
	// The client keeps writing while idle...
	readType[*wire.KeepAliveInfo](f)
	// ...and, hearing nothing, gives up.
	select {
	case <-c.Done():
	case <-time.After(wait):
		t.Fatal("connection to a silent broker still open")
	}
	if err := c.Err(); !errors.Is(err, ErrInactivity) {
		t.Fatalf("Err = %v, want ErrInactivity", err)
	}
}

func TestOpenWireClientFakeBrokerCloses(t *testing.T) {
	c, f := fakeDial(t, wire.DefaultOptions(), testOptions())
	sessionDone := make(chan *Session, 1)
	go func() {
		s, err := c.Session(false)
		if err != nil {
			t.Errorf("Session: %v", err)
		}
		sessionDone <- s
	}()
	answer[*wire.SessionInfo](f)
	s := <-sessionDone
	if s == nil {
		t.FailNow()
	}
	consumerDone := make(chan *Consumer, 1)
	go func() {
		k, err := s.Consumer(wire.NewQueue("q"), ConsumerOptions{})
		if err != nil {
			t.Errorf("Consumer: %v", err)
		}
		consumerDone <- k
	}()
	ci := answer[*wire.ConsumerInfo](f)
	k := <-consumerDone
	if k == nil {
		t.FailNow()
	}
	// ConsumerControl.Close ends the consumer (slow-consumer abort).
	f.write(&wire.ConsumerControl{ConsumerId: ci.ConsumerId, Close: true})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := k.Receive(ctx); !errors.Is(err, ErrConsumerClosedByBroker) {
		t.Fatalf("Receive after ConsumerControl.Close = %v", err)
	}
	// ShutdownInfo ends the connection.
	f.write(&wire.ShutdownInfo{})
	select {
	case <-c.Done():
	case <-time.After(wait):
		t.Fatal("connection open after ShutdownInfo")
	}
	if err := c.Err(); !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("Err = %v, want ErrConnectionLost", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close after loss: %v", err)
	}
}

func TestOpenWireClientFakeHandshake(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first wire.DataStructure
	}{
		{"not a WireFormatInfo", &wire.BrokerInfo{BrokerName: "early"}},
		{"bad magic", &wire.WireFormatInfo{Magic: [8]byte{'A', 'c', 't', 'i', 'v', 'e', 'X', 'X'}, Version: 12}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				nc, err := ln.Accept()
				if err != nil {
					return
				}
				defer nc.Close()
				b, _ := wire.NewEncoder(wire.InitialFormat(wire.MaxVersion)).Append(nil, tc.first)
				nc.Write(b)
				nc.Read(make([]byte, 4096)) // until the client hangs up
			}()
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			c, err := Dial(ctx, ln.Addr().String(), testOptions())
			if err == nil {
				c.Close()
				t.Fatal("Dial succeeded")
			}
			if !errors.Is(err, ErrHandshake) {
				t.Fatalf("Dial = %v, want ErrHandshake", err)
			}
		})
	}
	t.Run("no answer", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			nc, err := ln.Accept()
			if err == nil {
				defer nc.Close()
				nc.Read(make([]byte, 4096))
				nc.Read(make([]byte, 4096))
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err = Dial(ctx, ln.Addr().String(), testOptions())
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Dial to a mute server = %v, want deadline exceeded", err)
		}
	})
}

// TestOpenWireClientFakeFlushOrder: asynchronous sends queued behind the
// flusher reach the broker whole and in order, and Close writes the
// connection's RemoveInfo and then its ShutdownInfo before the socket
// closes, after every message.
func TestOpenWireClientFakeFlushOrder(t *testing.T) {
	c, f := fakeDial(t, wire.DefaultOptions(), testOptions())
	done := make(chan error, 1)
	const n = 2000
	go func() {
		s, err := c.Session(false)
		if err != nil {
			done <- err
			return
		}
		p, err := s.Producer(wire.NewQueue("flush.order"))
		if err != nil {
			done <- err
			return
		}
		body := make([]byte, 3000) // 2000 × 3 KB: well past the 256 KiB queue bound
		for range n {
			if err := p.Send(context.Background(), NewBytesMessage(body), false); err != nil {
				done <- err
				return
			}
		}
		done <- c.Close()
	}()
	answer[*wire.SessionInfo](f)
	answer[*wire.ProducerInfo](f)
	for i := int64(1); i <= n; i++ {
		m := readType[*wire.Message](f)
		if got := m.MessageId.ProducerSequenceId; got != i {
			t.Fatalf("message %d has sequence %d", i, got)
		}
	}
	rm := readType[*wire.RemoveInfo](f)
	if _, ok := rm.ObjectId.(*wire.ConnectionId); !ok {
		t.Fatalf("RemoveInfo for %T, want the connection's", rm.ObjectId)
	}
	f.write(&wire.Response{CorrelationId: rm.CommandId})
	readType[*wire.ShutdownInfo](f)
	if ds := f.read(); ds != nil {
		t.Fatalf("after ShutdownInfo: %s, want the end of the stream", wire.TypeName(ds.DataStructureType()))
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
