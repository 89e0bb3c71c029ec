package conform

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"time"

	"wharf/protocols/openwire/wire"
)

// openWireBadInput: bad OpenWire input closes that connection and nothing
// else. Each subtest writes one kind of garbage on a fresh connection and
// reads to the close; a neighbour connected throughout still answers a
// KeepAliveInfo after each. (Moved from
// conformance/openwire_errors_test.go; its frame over the size limit,
// which depends on the connector's wireFormat.maxFrameSize, stays there:
// ActiveMQ 5.17 has no limit by default.)
func openWireBadInput(t *T) {
	addr := t.Addr(OpenWire)
	good := OpenWireHandshake(t, addr)
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
		{"command-before-wireformatinfo", frame(wire.TypeShutdownInfo, []byte{0, 0, 0, 1, 0})},
		{"unknown-type-code", append(append([]byte(nil), wfiFrame...), frame(250, []byte{1, 2, 3})...)},
		{"not-openwire", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *T) {
			c, err := net.DialTimeout("tcp", addr, wait)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			if _, err := c.Write(tc.input); err != nil {
				t.Fatal(err)
			}
			// The broker's WireFormatInfo, then (maybe) a ConnectionError,
			// then the close: read to EOF within a bound.
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			n, err := io.Copy(io.Discard, c)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the broker kept the connection open after bad input (%d bytes read)", n)
			}
			t.Observe("close", "%s: closed after %d bytes (%v)", tc.name, n, err)
			// The neighbour still works: a round trip on it.
			good.Ping(t)
		})
	}
}

func init() {
	register(Case{Name: "openwire/errors/bad-input", Needs: []string{OpenWire}, Run: openWireBadInput,
		Pins:   "a command before WireFormatInfo, an unknown type code, or bytes that are not OpenWire close that connection, and only that one",
		Source: "OpenWireFormat.doUnmarshal (\"Unknown data type\"), WireFormatNegotiator; reference openwire.md"})
}
