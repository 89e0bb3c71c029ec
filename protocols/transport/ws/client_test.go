package ws

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"wharf/protocols/transport/ws/wire"
)

// testTimeout bounds every blocking step of a test so that a broken server
// fails the test instead of hanging it.
const testTimeout = 10 * time.Second

// client is a minimal RFC 6455 client over a real TCP connection, built on
// the wire package, able to send what well-behaved libraries never do
// (fragments split anywhere, several messages per write, oversize frames,
// an abrupt close).
type client struct {
	t    testing.TB
	nc   net.Conn
	br   *bufio.Reader
	resp *http.Response
	key  [4]byte
}

// handshake sends an upgrade request for path offering protos (none if
// empty) and returns the client and the server's response, whatever its
// status.
func handshake(t testing.TB, addr, path string, protos ...string) (*client, *http.Response) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, testTimeout)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(testTimeout))
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	key := base64.StdEncoding.EncodeToString(nonce[:])
	req := "GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n"
	if len(protos) > 0 {
		req += "Sec-WebSocket-Protocol: " + strings.Join(protos, ", ") + "\r\n"
	}
	req += "\r\n"
	if _, err := nc.Write([]byte(req)); err != nil {
		t.Fatalf("write handshake: %v", err)
	}
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read handshake response: %v", err)
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		if got, want := resp.Header.Get("Sec-WebSocket-Accept"), wire.AcceptKey(key); got != want {
			t.Fatalf("Sec-WebSocket-Accept = %q, want %q", got, want)
		}
	}
	c := &client{t: t, nc: nc, br: br, resp: resp}
	_, _ = rand.Read(c.key[:])
	return c, resp
}

// dial upgrades and fails the test unless the server switched protocols.
func dial(t testing.TB, addr string, protos ...string) *client {
	t.Helper()
	c, resp := handshake(t, addr, "/", protos...)
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("handshake: status %d (%s), want 101", resp.StatusCode, body)
	}
	return c
}

// frame encodes one masked client frame.
func (c *client) frame(fin bool, op wire.Opcode, payload []byte) []byte {
	b := wire.AppendHeader(nil, wire.Header{Fin: fin, Opcode: op, Masked: true, MaskKey: c.key, PayloadLength: int64(len(payload))})
	start := len(b)
	b = append(b, payload...)
	wire.Mask(c.key, 0, b[start:])
	return b
}

// send writes raw bytes (frames built with frame) in one write.
func (c *client) send(parts ...[]byte) {
	c.t.Helper()
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("client write: %v", err)
	}
}

// sendMessage sends payload as one final frame of type op.
func (c *client) sendMessage(op wire.Opcode, payload string) {
	c.t.Helper()
	c.send(c.frame(true, op, []byte(payload)))
}

// readFrame reads one server frame; servers never mask.
func (c *client) readFrame() (wire.Header, []byte, error) {
	var hdr []byte
	for {
		h, n, err := wire.ParseHeader(hdr)
		if err != nil {
			return wire.Header{}, nil, err
		}
		if n > 0 {
			if h.Masked {
				return h, nil, errors.New("server frame is masked")
			}
			p := make([]byte, h.PayloadLength)
			_, err := io.ReadFull(c.br, p)
			return h, p, err
		}
		b, err := c.br.ReadByte()
		if err != nil {
			return wire.Header{}, nil, err
		}
		hdr = append(hdr, b)
	}
}

// next reads the next data message or close frame, answering nothing and
// skipping pongs. It fails the test on a read error.
func (c *client) next() (wire.Opcode, []byte) {
	c.t.Helper()
	for {
		h, p, err := c.readFrame()
		if err != nil {
			c.t.Fatalf("client read: %v", err)
		}
		if h.Opcode == wire.OpPong {
			continue
		}
		if !h.Fin {
			c.t.Fatalf("server sent a fragment (%s, %d bytes)", h.Opcode, len(p))
		}
		return h.Opcode, p
	}
}

// expectClose reads until the server's close frame and returns its code.
func (c *client) expectClose() uint16 {
	c.t.Helper()
	for {
		op, p := c.next()
		if op != wire.OpClose {
			continue
		}
		code, _, err := wire.ParseClose(p)
		if err != nil {
			c.t.Fatalf("server close frame %q: %v", p, err)
		}
		return code
	}
}

// expectEOF reads until the server closes the TCP connection.
func (c *client) expectEOF() {
	c.t.Helper()
	for {
		if _, _, err := c.readFrame(); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err) {
				return
			}
			c.t.Fatalf("waiting for EOF: %v", err)
		}
	}
}

func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && strings.Contains(ne.Err.Error(), "reset")
}

// closePayload is a close frame payload with code.
func closePayload(code uint16) []byte { return []byte{byte(code >> 8), byte(code)} }

// stompFrame renders a STOMP frame.
func stompFrame(command string, body string, headers ...string) string {
	var b strings.Builder
	b.WriteString(command + "\n")
	for i := 0; i+1 < len(headers); i += 2 {
		fmt.Fprintf(&b, "%s:%s\n", headers[i], headers[i+1])
	}
	b.WriteString("\n" + body + "\x00")
	return b.String()
}
