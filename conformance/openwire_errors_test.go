package conformance

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"wharf/conform"
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
	good := conform.OpenWireHandshake(t, addr)
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
			good.Ping(t)
		})
	}
}
