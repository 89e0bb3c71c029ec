package ws

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"wharf/protocols/transport"
)

// Subprotocol names ActiveMQ 5.17's WebSocket connector serves, most
// preferred first: when a client offers several of one protocol the server
// picks by this order, as ActiveMQ's WSServlet does (its priorities:
// v12.stomp 3, v11.stomp 2, v10.stomp 1, stomp 0; mqttv3.1 1, mqtt 0).
var (
	STOMPSubprotocols = []string{"v12.stomp", "v11.stomp", "v10.stomp", "stomp"}
	MQTTSubprotocols  = []string{"mqttv3.1", "mqtt"}
)

// Subprotocols returns a protos map that serves every name in names with
// f, for Listen and NewServer; merge several with maps.Copy.
func Subprotocols(f transport.HandlerFactory, names ...string) map[string]transport.HandlerFactory {
	m := make(map[string]transport.HandlerFactory, len(names))
	for _, n := range names {
		m[n] = f
	}
	return m
}

// DefaultMaxMessageBytes is the default limit on one incoming message,
// text or binary, in bytes: Jetty 9's WebSocketPolicy default
// (maxTextMessageSize and maxBinaryMessageSize, 64 KiB), which is what
// ActiveMQ 5.17's ws connector runs with unless its URI sets
// websocket.maxTextMessageSize / websocket.maxBinaryMessageSize. A message
// over the limit closes the connection with 1009.
const DefaultMaxMessageBytes = 64 << 10

// MessageType is the frame opcode a connection's writes are sent as.
type MessageType int

// Message types.
const (
	// Binary sends each Write as one binary message (MQTT over WebSocket:
	// "MQTT Control Packets MUST be sent in WebSocket binary data frames"
	// [MQTT-6.0.0-1]).
	Binary MessageType = iota + 1
	// Text sends each Write as one text message: ActiveMQ's StompSocket
	// sends STOMP frames with sendString, and stomp.js reads text frames.
	// A Write whose bytes are not valid UTF-8 (a binary STOMP body) goes
	// as a binary message instead, since a text frame may not carry them.
	Text
)

// Options configures a Server or a Listener. The zero value is usable.
type Options struct {
	// MaxOutboundBytes caps, per connection, the bytes queued by Write and
	// not yet written to the socket (frame headers included), in bytes.
	// Beyond it the connection is cut and Write returns
	// transport.ErrOutboundFull, as for TCP connections. 0 means
	// transport.DefaultMaxOutboundBytes.
	MaxOutboundBytes int
	// MaxConnections caps the connections open at once (ActiveMQ
	// transportConnector maximumConnections). 0 means unlimited. On a ws
	// port it counts WebSocket connections and an upgrade beyond it is
	// answered 503; on a wss port (TLS set) Listen counts every socket from
	// the moment it is accepted, handshaking ones included, and closes a
	// socket beyond it at once, as transport.ListenTLS does.
	MaxConnections int
	// MaxTextMessageBytes and MaxBinaryMessageBytes bound one incoming
	// message, all its fragments together, in bytes (ActiveMQ
	// websocket.maxTextMessageSize, websocket.maxBinaryMessageSize). 0 means
	// DefaultMaxMessageBytes; -1 means no limit.
	MaxTextMessageBytes   int
	MaxBinaryMessageBytes int
	// DefaultSubprotocol is the key of protos that serves a client offering
	// no subprotocol at all. "" means "stomp": ActiveMQ's connector treats
	// such clients as STOMP "for legacy reasons" (WSServlet), and old
	// stomp.js versions offer none. A server whose protos have no "stomp"
	// (an /mqtt path) sets its own, or such clients get 400.
	DefaultSubprotocol string
	// MessageTypes gives, per subprotocol, the frame type writes are sent
	// as. A subprotocol not listed gets Text if its name contains "stomp"
	// and Binary otherwise.
	MessageTypes map[string]MessageType
	// CheckOrigin decides whether an upgrade with this Origin header is
	// allowed (403 otherwise). nil allows every origin, as ActiveMQ's
	// connector does: a page served from one host may use a broker on
	// another.
	CheckOrigin func(r *http.Request) bool
	// Logger receives lifecycle and error logs; nil means slog.Default().
	Logger *slog.Logger
	// TLS, when not nil, makes Listen serve wss:// (ActiveMQ's wss,
	// stomp+wss, mqtt+wss connectors): connections complete a TLS
	// handshake with this config (cloned) before the HTTP upgrade, within
	// TLSHandshakeTimeout, and each connection implements
	// transport.TLSConn, so sessions read the client's verified chain with
	// transport.PeerCertificates. HTTP/2 is not offered (ALPN http/1.1):
	// WebSocket upgrades need HTTP/1.1. NewServer ignores it: a Server
	// mounted on an HTTPS server serves TLS connections as TLSConns by
	// itself.
	TLS *tls.Config
	// TLSHandshakeTimeout bounds, on a wss port, each TLS handshake; the
	// upgrade request then has its own 10 s header bound. 0 means
	// transport.DefaultTLSHandshakeTimeout (10 s).
	TLSHandshakeTimeout time.Duration
	// MaxPendingHandshakes bounds, on a wss port, the TLS handshakes under
	// way at once; a socket accepted beyond it is closed at once. 0 means
	// transport.DefaultMaxPendingHandshakes (256).
	MaxPendingHandshakes int
}

// ParseOptions takes the WebSocket options out of a transport connector's
// URI options and returns the rest, for the protocol's own parser:
// maximumConnections, websocket.maxTextMessageSize and
// websocket.maxBinaryMessageSize. Another websocket.* option (Jetty's
// maxIdleTime, inputBufferSize, ...) is an error naming it.
func ParseOptions(query map[string]string) (o Options, rest map[string]string, err error) {
	rest = map[string]string{}
	for k, v := range query {
		switch k {
		case "maximumConnections":
			o.MaxConnections, err = atoiNonNegative(v)
		case "websocket.maxTextMessageSize":
			o.MaxTextMessageBytes, err = atoiPositive(v)
		case "websocket.maxBinaryMessageSize":
			o.MaxBinaryMessageBytes, err = atoiPositive(v)
		default:
			if strings.HasPrefix(k, "websocket.") {
				return o, nil, fmt.Errorf("%w: %q is not a WebSocket option Wharf supports (supported: websocket.maxTextMessageSize, websocket.maxBinaryMessageSize)", transport.ErrInvalidOptions, k)
			}
			rest[k] = v
		}
		if err != nil {
			return o, nil, fmt.Errorf("%w: %s=%q: %v", transport.ErrInvalidOptions, k, v, err)
		}
	}
	return o, rest, nil
}

func atoiNonNegative(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a count")
	}
	return n, nil
}

func atoiPositive(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("not a positive size in bytes")
	}
	return n, nil
}
