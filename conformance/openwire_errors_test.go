package conformance

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"wharf/protocols/openwire/wire"
)

// Bad OpenWire input that ActiveMQ 5.17 would wait on closes that
// connection in Wharf, and nothing else: a frame cut short inside its
// body (Wharf bounds each command by its size prefix; ActiveMQ reads on
// past it) and a frame over wireFormat.maxFrameSize (100 MiB in the
// shared activemq.xml's absence of one: the codec's default; ActiveMQ
// has none by default). The bad input both close — a command before
// WireFormatInfo, an unknown type code, bytes that are not OpenWire — is
// the conform case openwire/errors/bad-input.
func TestConformanceOpenWireBadInput(t *testing.T) {
	b := startBroker(t)
	addrOf := func() string {
		a := b.Addr("openwire")
		if a == nil {
			t.Skip("no OpenWire connector in this build")
		}
		return a.String()
	}
	addr := addrOf()

	// A well-behaved neighbour, connected throughout.
	good := openwireHandshake(t, addr)
	defer good.Close()

	frame := func(typ byte, body []byte) []byte {
		out := binary.BigEndian.AppendUint32(nil, uint32(1+len(body)))
		return append(append(out, typ), body...)
	}
	wfi, err := wire.NewWireFormatInfo(wire.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	wfiFrame, err := wire.Marshal(wfi, wire.InitialFormat(wire.MaxVersion))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		input []byte
	}{
		{"frame cut short inside its body", append(append([]byte(nil), wfiFrame...), frame(wire.TypeConnectionInfo, []byte{0})...)},
		{"frame over the size limit", append(append([]byte(nil), wfiFrame...), 0x7f, 0xff, 0xff, 0xff, wire.TypeActiveMQTextMessage)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write(tc.input); err != nil {
				t.Fatal(err)
			}
			// The broker's WireFormatInfo, then (maybe) a ConnectionError,
			// then the close: read to EOF within a bound.
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.Copy(io.Discard, c); err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					t.Fatal("the broker kept the connection open after bad input")
				}
			}
			// The neighbour still works: a round trip on it.
			good.ping(t)
		})
	}
}

// owConn is a minimal OpenWire connection for these tests: handshake, then
// KeepAliveInfo round trips.
type owConn struct {
	net.Conn
	dec *wire.Decoder
	enc *wire.Encoder
	seq int32
}

func openwireHandshake(t *testing.T, addr string) *owConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	o := &owConn{Conn: c, dec: wire.NewDecoder(wire.InitialFormat(wire.MaxVersion), wire.DefaultLimits()), enc: wire.NewEncoder(wire.InitialFormat(wire.MaxVersion))}
	opts := wire.DefaultOptions()
	wfi, _ := wire.NewWireFormatInfo(opts)
	b, err := o.enc.Append(nil, wfi)
	if err != nil {
		t.Fatal(err)
	}
	c.Write(b)
	theirs, ok := o.read(t).(*wire.WireFormatInfo)
	if !ok {
		t.Fatal("the broker's first command is not WireFormatInfo")
	}
	remote, err := theirs.Options()
	if err != nil {
		t.Fatal(err)
	}
	f, err := wire.Negotiate(opts, remote)
	if err != nil {
		t.Fatal(err)
	}
	o.dec.SetFormat(f)
	o.enc.SetFormat(f)
	return o
}

func (o *owConn) read(t *testing.T) wire.DataStructure {
	t.Helper()
	buf := make([]byte, 64<<10)
	o.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer o.SetReadDeadline(time.Time{})
	for {
		ds, err := o.dec.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ds != nil {
			return ds
		}
		n, err := o.Conn.Read(buf)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		o.dec.Feed(buf[:n])
	}
}

// request sends c with the next command id, asking for a response, and
// returns that id.
func (o *owConn) request(t *testing.T, c wire.Command) int32 {
	t.Helper()
	o.seq++
	c.Base().CommandId, c.Base().ResponseRequired = o.seq, true
	b, err := o.enc.Append(nil, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Write(b); err != nil {
		t.Fatalf("write %s: %v", wire.TypeName(c.DataStructureType()), err)
	}
	return o.seq
}

// ping sends a KeepAliveInfo asking for a response and waits for it: a
// KeepAliveInfo echoed by the inactivity monitor (ActiveMQ's default), or a
// Response when the connection has none.
func (o *owConn) ping(t *testing.T) {
	t.Helper()
	o.request(t, &wire.KeepAliveInfo{})
	for {
		switch r := o.read(t).(type) {
		case *wire.KeepAliveInfo:
			return
		case *wire.Response:
			if r.CorrelationId == o.seq {
				return
			}
		}
	}
}
