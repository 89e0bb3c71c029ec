package conformance

// Hostile input at the protocol limits (issue #17 item 3), over real
// sockets: deep AMQP nesting, huge MQTT remaining lengths, STOMP header
// floods and OpenWire sizes that lie. Each case checks the refusal the
// protocol gives (the close, with its error where it has one) and that the
// broker keeps serving a client of every protocol meanwhile.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	amqpwire "wharf/protocols/amqp/wire"
	mqttwire "wharf/protocols/mqtt/wire"
	owwire "wharf/protocols/openwire/wire"

	"wharf/conform"
)

// readToClose reads nc until the broker closes it and returns what it
// read; it fails the test if the connection is still open after d.
func readToClose(t *testing.T, nc net.Conn, d time.Duration) []byte {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(d))
	var out bytes.Buffer
	_, err := io.Copy(&out, nc)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the broker left the connection open for %v after the bad input (read %d bytes)", d, out.Len())
	}
	return out.Bytes()
}

// TestConformanceHostileAMQPDeepNesting: an attach whose unsettled map
// holds a value nested 10,000 deep — described types, or lists — within the
// frame size limit is refused with Close decode-error naming the nesting
// (the decoder stops at Limits.MaxNesting, 32, before any recursion can
// exhaust the stack); other AMQP connections keep working.
func TestConformanceHostileAMQPDeepNesting(t *testing.T) {
	b := hostileBroker(t, nil)
	const depth = 10000
	described := bytes.Repeat([]byte{0x00, 0x53, 0x00}, depth)
	described = append(described, 0x40)
	list := []byte{0x40}
	for i := 0; i < depth/2; i++ {
		h := []byte{0xd0, 0, 0, 0, 0, 0, 0, 0, 1}
		binary.BigEndian.PutUint32(h[1:], uint32(len(list)+4))
		list = append(h, list...)
	}
	for _, c := range []struct {
		name  string
		value []byte
	}{{"described types", described}, {"lists", list}} {
		t.Run(c.name, func(t *testing.T) {
			r := conform.DialRawAMQP(t, b.AMQPAddr())
			r.Open(uniq(t))
			// attach (0x12), list32 of 8 fields: name "x", handle 0,
			// role sender, four nulls, then unsettled, a map32 whose one
			// value is the nested one (a map's values may be anything, so
			// the decoder descends into it).
			fields := []byte{0xa1, 1, 'x', 0x43, 0x42, 0x40, 0x40, 0x40, 0x40}
			m := []byte{0xd1, 0, 0, 0, 0, 0, 0, 0, 2, 0xa1, 1, 'k'}
			binary.BigEndian.PutUint32(m[1:], uint32(4+3+len(c.value)))
			m = append(m, c.value...)
			fields = append(fields, m...)
			body := []byte{0x00, 0x53, 0x12, 0xd0, 0, 0, 0, 0, 0, 0, 0, 8}
			binary.BigEndian.PutUint32(body[4:], uint32(len(fields)+4))
			body = append(body, fields...)
			r.Write(conform.RawAMQPFrame(0, body))
			for {
				f := r.Next()
				cl, ok := f.Body.(*amqpwire.Close)
				if !ok {
					continue
				}
				if cl.Error == nil || cl.Error.Condition != amqpwire.ErrCondDecodeError || !strings.Contains(cl.Error.Description, "nested") {
					t.Fatalf("Close %+v, want decode-error about the nesting", cl.Error)
				}
				t.Logf("refused: %s: %s", cl.Error.Condition, cl.Error.Description)
				break
			}
			r.Closed()
			hostileCycle(t, b, "amqp", 0)
		})
	}
}

// TestConformanceHostileMQTTRemainingLength: PUBLISH fixed headers that
// announce the largest remaining length MQTT can encode (268,435,455
// bytes, just under the default 256 MiB limit) from 8 connections at once
// make the broker allocate nothing like it (its heap grows by less than
// 64 MiB while the bodies are pending) and keep serving; on a connector
// with wireFormat.maxFrameSize=1024 the same header is refused at once by
// closing; a remaining length of five bytes (malformed [MQTT-1.5.5]) is
// refused by closing on every connector.
func TestConformanceHostileMQTTRemainingLength(t *testing.T) {
	b := hostileBroker(t, nil)
	small := mqttBroker(t, map[string]string{"wireFormat.maxFrameSize": "1024"})
	huge := []byte{0x30, 0xff, 0xff, 0xff, 0x7f}
	connect := func(addr string) net.Conn {
		t.Helper()
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		nc.Write(mqttwire.AppendPacket(nil, &mqttwire.Packet{Type: mqttwire.CONNECT, Connect: &mqttwire.Connect{
			ProtocolName: mqttwire.ProtocolName, ProtocolLevel: mqttwire.Version311, CleanSession: true, ClientID: uniq(t)}}, mqttwire.Version311))
		ack := make([]byte, 4)
		nc.SetReadDeadline(time.Now().Add(wait))
		if _, err := io.ReadFull(nc, ack); err != nil || ack[0] != 0x20 || ack[3] != 0 {
			t.Fatalf("CONNACK %x %v", ack, err)
		}
		nc.SetReadDeadline(time.Time{})
		return nc
	}
	t.Run("largest remaining length under the limit", func(t *testing.T) {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.HeapInuse
		var conns []net.Conn
		for i := 0; i < 8; i++ {
			nc := connect(b.MQTTAddr())
			// The header, the topic, and 64 KiB of the body.
			pkt := append(append([]byte(nil), huge...), 0, 1, 'h')
			pkt = append(pkt, make([]byte, 64<<10)...)
			if _, err := nc.Write(pkt); err != nil {
				t.Fatal(err)
			}
			conns = append(conns, nc)
		}
		// Other clients are served while the bodies are pending; by the
		// end of these round trips the broker has read the headers.
		for i := 0; i < 4; i++ {
			hostileCycle(t, b, "mqtt", 0)
			hostileCycle(t, b, "stomp", 0)
		}
		runtime.ReadMemStats(&ms)
		grew := int64(ms.HeapInuse) - int64(before)
		t.Logf("heap in use grew by %d KiB with 8 packets of 256 MiB announced", grew>>10)
		if grew > 64<<20 {
			t.Errorf("heap in use grew by %d MiB for 8 announced 256 MiB packets: the broker allocates what the header announces", grew>>20)
		}
		for _, nc := range conns {
			nc.Close()
		}
		waitNoConnections(t, b, 10*time.Second)
	})
	t.Run("over wireFormat.maxFrameSize", func(t *testing.T) {
		nc := connect(small.MQTTAddr())
		nc.Write(huge)
		readToClose(t, nc, wait)
		hostileCycle(t, small, "mqtt", 0)
	})
	t.Run("five-byte remaining length", func(t *testing.T) {
		for _, br := range []*struct {
			name string
			addr string
		}{{"default", b.MQTTAddr()}, {"small", small.MQTTAddr()}} {
			nc := connect(br.addr)
			nc.Write([]byte{0x30, 0xff, 0xff, 0xff, 0xff, 0x01})
			readToClose(t, nc, wait)
		}
		hostileCycle(t, b, "mqtt", 0)
	})
}

// TestConformanceHostileSTOMPHeaderFloods: a frame with more headers than
// the limit (1,000, ActiveMQ's StompWireFormat.MAX_HEADERS) gets ERROR
// "The maximum number of headers was exceeded" and the close, before
// CONNECT and after it; 1,000 headers are fine; 50 connections flooding
// at once with 100,000 headers each are all refused while a client keeps
// exchanging messages.
func TestConformanceHostileSTOMPHeaderFloods(t *testing.T) {
	b := hostileBroker(t, nil)
	headers := func(n int) string {
		var sb strings.Builder
		for i := 0; i < n; i++ {
			sb.WriteString("h")
			sb.WriteString(strconv.Itoa(i))
			sb.WriteString(":v\n")
		}
		return sb.String()
	}
	expectError := func(t *testing.T, nc net.Conn, msg string) {
		t.Helper()
		out := readToClose(t, nc, wait)
		if !bytes.HasPrefix(out, []byte("ERROR\n")) || !bytes.Contains(out, []byte("message:"+msg+"\n")) {
			t.Fatalf("got %.200q, want ERROR %q then the close", out, msg)
		}
	}
	dial := func(t *testing.T) net.Conn {
		t.Helper()
		nc, err := net.Dial("tcp", b.STOMPAddr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		return nc
	}
	t.Run("too many headers on CONNECT", func(t *testing.T) {
		nc := dial(t)
		go nc.Write([]byte("CONNECT\naccept-version:1.2\nhost:localhost\n" + headers(1001) + "\n\x00"))
		expectError(t, nc, "The maximum number of headers was exceeded")
	})
	t.Run("too many headers on SEND", func(t *testing.T) {
		nc := dial(t)
		nc.Write([]byte("CONNECT\naccept-version:1.2\nhost:localhost\n\n\x00"))
		nc.SetReadDeadline(time.Now().Add(wait))
		buf := make([]byte, 4096)
		if n, err := nc.Read(buf); err != nil || !bytes.HasPrefix(buf[:n], []byte("CONNECTED")) {
			t.Fatalf("CONNECT: %q %v", buf[:n], err)
		}
		go nc.Write([]byte("SEND\ndestination:/queue/" + uniq(t) + "\n" + headers(1001) + "\nx\x00"))
		expectError(t, nc, "The maximum number of headers was exceeded")
	})
	t.Run("1,000 headers are accepted", func(t *testing.T) {
		c, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
		q := "/queue/" + uniq(t)
		c.Send("SEND", append([]string{"destination:" + q, "receipt:r1"}, strings.Split(strings.TrimSuffix(headers(998), "\n"), "\n")...), []byte("x"))
		c.ExpectReceipt("r1")
	})
	t.Run("50 connections flooding at once", func(t *testing.T) {
		good := newSTOMPExchanger(t, b.STOMPAddr())
		stop := make(chan struct{})
		done := good.run(stop)
		flood := []byte("CONNECT\naccept-version:1.2\nhost:localhost\n" + headers(100000) + "\n\x00")
		errs := make(chan error, 50)
		for i := 0; i < 50; i++ {
			go func() {
				nc, err := net.Dial("tcp", b.STOMPAddr())
				if err != nil {
					errs <- err
					return
				}
				defer nc.Close()
				go nc.Write(flood)
				nc.SetReadDeadline(time.Now().Add(2 * wait))
				out, _ := io.ReadAll(nc)
				if !bytes.Contains(out, []byte("message:The maximum number of headers was exceeded\n")) {
					errs <- errors.New("no ERROR for the flood: " + strconv.Quote(string(out[:min(len(out), 200)])))
					return
				}
				errs <- nil
			}()
		}
		for i := 0; i < 50; i++ {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
		close(stop)
		if err := <-done; err != nil {
			t.Errorf("the STOMP client during the flood: %v", err)
		}
		t.Logf("good client: %d round trips during the flood", good.sent.Load())
	})
	hostileCycle(t, b, "stomp", 0)
}

// TestConformanceHostileOpenWireLyingSizes: on a negotiated loose-encoding
// OpenWire connection, frames whose sizes lie — a negative frame size, a
// frame size larger than the 100 MB limit, a ConnectionInfo whose client
// id length runs past the end of its frame, a message whose content length
// is negative or runs past its frame — are each refused by closing the
// connection (after a ConnectionError where the broker can frame one);
// the broker allocates nothing of the announced sizes, and another
// OpenWire connection keeps working throughout.
func TestConformanceHostileOpenWireLyingSizes(t *testing.T) {
	b := hostileBroker(t, nil)
	addr := b.Addr("openwire").String()
	good := conform.OpenWireHandshake(t, addr)
	defer good.Close()
	marker := "HOSTILE-CONTENT"
	cases := []struct {
		name  string
		build func(f owwire.Format) []byte
	}{
		{"negative frame size", func(owwire.Format) []byte {
			return []byte{0x80, 0, 0, 0x10, owwire.TypeConnectionInfo, 0, 0}
		}},
		{"frame size over the limit", func(owwire.Format) []byte {
			return []byte{0x7f, 0xff, 0xff, 0xff, owwire.TypeActiveMQTextMessage, 0, 0}
		}},
		{"string length past the frame", func(f owwire.Format) []byte {
			fr, err := owwire.Marshal(&owwire.ConnectionInfo{ConnectionId: &owwire.ConnectionId{Value: "ID:lie"}, ClientId: marker}, f)
			if err != nil {
				t.Fatal(err)
			}
			return patchBefore(t, fr, marker, []byte{0x7f, 0xff})
		}},
		{"content length negative", func(f owwire.Format) []byte {
			return lyingMessage(t, f, marker, []byte{0xff, 0xff, 0xff, 0xfb})
		}},
		{"content length past the frame", func(f owwire.Format) []byte {
			return lyingMessage(t, f, marker, []byte{0x7f, 0xff, 0xff, 0xff})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nc, f := looseOpenWire(t, addr)
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			before := ms.HeapInuse
			if _, err := nc.Write(c.build(f)); err != nil {
				t.Fatal(err)
			}
			out := readToClose(t, nc, wait)
			runtime.ReadMemStats(&ms)
			if grew := int64(ms.HeapInuse) - int64(before); grew > 64<<20 {
				t.Errorf("heap in use grew by %d MiB for the lying size", grew>>20)
			}
			t.Logf("closed after %d bytes of answer", len(out))
			good.Ping(t)
		})
	}
	hostileCycle(t, b, "openwire", 0)
}

// looseOpenWire dials addr, negotiates loose encoding without the cache
// (so that field offsets can be found in the marshalled bytes) and returns
// the connection with the negotiated format.
func looseOpenWire(t *testing.T, addr string) (net.Conn, owwire.Format) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	opts := owwire.DefaultOptions()
	opts.TightEncodingEnabled, opts.CacheEnabled = false, false
	wfi, err := owwire.NewWireFormatInfo(opts)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := owwire.Marshal(wfi, owwire.InitialFormat(owwire.MaxVersion))
	if err != nil {
		t.Fatal(err)
	}
	nc.Write(fr)
	dec := owwire.NewDecoder(owwire.InitialFormat(owwire.MaxVersion), owwire.DefaultLimits())
	buf := make([]byte, 4096)
	nc.SetReadDeadline(time.Now().Add(wait))
	defer nc.SetReadDeadline(time.Time{})
	for {
		ds, err := dec.Next()
		if err != nil {
			t.Fatal(err)
		}
		if theirs, ok := ds.(*owwire.WireFormatInfo); ok {
			remote, err := theirs.Options()
			if err != nil {
				t.Fatal(err)
			}
			f, err := owwire.Negotiate(opts, remote)
			if err != nil {
				t.Fatal(err)
			}
			return nc, f
		}
		n, err := nc.Read(buf)
		if err != nil {
			t.Fatalf("reading the broker's WireFormatInfo: %v", err)
		}
		dec.Feed(buf[:n])
	}
}

// patchBefore overwrites the len(with) bytes just before marker in fr.
func patchBefore(t *testing.T, fr []byte, marker string, with []byte) []byte {
	t.Helper()
	i := bytes.Index(fr, []byte(marker))
	if i < len(with) {
		t.Fatalf("%q not found in the marshalled frame", marker)
	}
	out := append([]byte(nil), fr...)
	copy(out[i-len(with):], with)
	return out
}

// lyingMessage marshals a bytes message whose content is marker and
// patches the content's int32 length with length.
func lyingMessage(t *testing.T, f owwire.Format, marker string, length []byte) []byte {
	t.Helper()
	pid := &owwire.ProducerId{ConnectionId: "ID:lie", SessionId: 1, Value: 1}
	m := &owwire.Message{Kind: owwire.TypeActiveMQBytesMessage, ProducerId: pid, Destination: owwire.NewQueue("lie"),
		MessageId: &owwire.MessageId{ProducerId: pid, ProducerSequenceId: 1}, Content: []byte(marker)}
	fr, err := owwire.Marshal(m, f)
	if err != nil {
		t.Fatal(err)
	}
	return patchBefore(t, fr, marker, length)
}
