package amqp

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"wharf/engine"
	"wharf/protocols/amqp/wire"
	"wharf/protocols/internal/options"
	"wharf/protocols/transport"
)

// Sentinel errors of the AMQP adapter.
var (
	ErrBadOption = errors.New("amqp: invalid transport option")
)

// Options configure the AMQP adapter. They come from the transport
// connector's URI options, named as ActiveMQ names them.
type Options struct {
	// Limits bound frames: MaxFrameSize is the max-frame-size announced in
	// Open (wireFormat.maxAmqpFrameSize, 128 KiB).
	Limits wire.Limits
	// MaxMessageSize bounds one message, all its transfer frames together
	// (wireFormat.maxFrameSize; ActiveMQ's default is effectively 100 MiB).
	MaxMessageSize int
	// IdleTimeout is the idle-time-out announced in Open
	// (wireFormat.idleTimeout, 30 s): a client that sends nothing for it
	// is disconnected.
	IdleTimeout time.Duration
	// AllowNonSASL accepts connections that skip the SASL layer
	// (wireFormat.allowNonSaslConnections, false).
	AllowNonSASL bool
	// ProducerCredit is the link credit granted to a client's sender link
	// (transport.producerCredit, 1000).
	ProducerCredit uint32
	// ConnectTimeout bounds the time to an Open
	// (transport.connectAttemptTimeout, 30 s).
	ConnectTimeout time.Duration
	// BrokerName is the container-id of the broker's Open.
	BrokerName string
	Logger     *slog.Logger
}

// DefaultOptions are ActiveMQ 5.17's defaults.
func DefaultOptions() Options {
	return Options{
		Limits:         wire.DefaultLimits(),
		MaxMessageSize: 100 << 20,
		IdleTimeout:    30 * time.Second,
		ProducerCredit: 1000,
		ConnectTimeout: 30 * time.Second,
		BrokerName:     "localhost",
	}
}

// ParseOptions reads a transport connector's URI options into Options.
// Options it does not know are an error naming them.
func ParseOptions(query map[string]string) (Options, error) {
	o := DefaultOptions()
	for k, v := range query {
		var err error
		switch k {
		case "wireFormat.maxAmqpFrameSize":
			var n int
			n, err = options.PositiveInt(v)
			if err == nil && n < wire.MinMaxFrameSize {
				err = fmt.Errorf("below the minimum of %d", wire.MinMaxFrameSize)
			}
			o.Limits.MaxFrameSize = uint32(n)
		case "wireFormat.maxFrameSize":
			o.MaxMessageSize, err = options.PositiveInt(v)
		case "wireFormat.idleTimeout":
			var ms int
			ms, err = strconv.Atoi(strings.TrimSpace(v))
			if err == nil && ms < 0 {
				err = fmt.Errorf("must not be negative")
			}
			o.IdleTimeout = time.Duration(ms) * time.Millisecond
		case "wireFormat.allowNonSaslConnections":
			o.AllowNonSASL, err = strconv.ParseBool(v)
		case "transport.producerCredit", "wireFormat.producerCredit":
			var n int
			n, err = options.PositiveInt(v)
			o.ProducerCredit = uint32(n)
		case "transport.connectAttemptTimeout":
			var ms int
			ms, err = options.PositiveInt(v)
			o.ConnectTimeout = time.Duration(ms) * time.Millisecond
		case "transport.transformer":
			if v != "jms" {
				err = fmt.Errorf("only the jms transformer is supported")
			}
		default:
			return o, fmt.Errorf("%w: %q is not an AMQP transport option Wharf supports", ErrBadOption, k)
		}
		if err != nil {
			return o, fmt.Errorf("%w: %s=%q: %v", ErrBadOption, k, v, err)
		}
	}
	return o, nil
}

// Server creates AMQP connections on an engine.
type Server struct {
	e    *engine.Engine
	opts Options
	log  *slog.Logger
}

// NewServer returns an AMQP server for e.
func NewServer(e *engine.Engine, o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 30 * time.Second
	}
	if o.ProducerCredit == 0 {
		o.ProducerCredit = 1000
	}
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = 100 << 20
	}
	if o.BrokerName == "" {
		o.BrokerName = e.BrokerName()
	}
	return &Server{e: e, opts: o, log: o.Logger}
}

// Handler is the transport.HandlerFactory of the server.
func (s *Server) Handler(c transport.Conn) transport.Handler {
	return newConn(s, c)
}
