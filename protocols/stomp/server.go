package stomp

import (
	"fmt"
	"log/slog"
	"strconv"
	"time"
	"wharf/protocols/internal/logthrottle"

	"wharf/engine"
	"wharf/protocols/internal/options"
	"wharf/protocols/stomp/wire"
	"wharf/protocols/transport"
)

// Options configure the STOMP adapter. They come from the transport
// connector's URI options, named as ActiveMQ names them.
type Options struct {
	// Limits bound frames (wireFormat.maxFrameSize, wireFormat.maxDataLength).
	Limits wire.Limits
	// DefaultHeartBeat applies when CONNECT has no heart-beat header
	// (transport.defaultHeartBeat, "0,0").
	DefaultHeartBeat string
	// HeartBeatGrace multiplies the client's heart-beat interval to get the
	// read check period (transport.hbGracePeriodMultiplier, 1.0). As in
	// ActiveMQ's InactivityMonitor, a connection is cut when a whole check
	// period passes with nothing read, so a client is allowed between one and
	// two periods of silence.
	HeartBeatGrace float64
	// ConnectTimeout is how long a new connection may take to send CONNECT
	// (ActiveMQ: 30 s).
	ConnectTimeout time.Duration
	Logger         *slog.Logger
}

// DefaultOptions are ActiveMQ 5.17's defaults.
func DefaultOptions() Options {
	return Options{
		Limits:           wire.DefaultLimits(),
		DefaultHeartBeat: "0,0",
		HeartBeatGrace:   1.0,
		ConnectTimeout:   30 * time.Second,
	}
}

// ParseOptions reads a transport connector's URI options
// (stomp://host:port?wireFormat.maxFrameSize=...) into Options. Options it
// does not know are an error naming them: an ActiveMQ user must learn that
// Wharf ignores nothing silently.
func ParseOptions(query map[string]string) (Options, error) {
	o := DefaultOptions()
	for k, v := range query {
		var err error
		switch k {
		case "wireFormat.maxFrameSize":
			o.Limits.MaxFrameBytes, err = options.PositiveInt(v)
		case "wireFormat.maxDataLength":
			o.Limits.MaxBodyBytes, err = options.PositiveInt(v)
		case "transport.defaultHeartBeat":
			if _, _, perr := parseHeartBeat(v); perr != nil {
				err = perr
			}
			o.DefaultHeartBeat = v
		case "transport.hbGracePeriodMultiplier":
			o.HeartBeatGrace, err = strconv.ParseFloat(v, 64)
			if err == nil && o.HeartBeatGrace < 1 {
				err = fmt.Errorf("must be at least 1.0")
			}
		case "transport.connectAttemptTimeout":
			var ms int
			ms, err = options.PositiveInt(v)
			o.ConnectTimeout = time.Duration(ms) * time.Millisecond
		default:
			return o, fmt.Errorf("%w: %q is not a STOMP transport option Wharf supports", ErrBadOption, k)
		}
		if err != nil {
			return o, fmt.Errorf("%w: %s=%q: %v", ErrBadOption, k, v, err)
		}
	}
	return o, nil
}

// Server creates STOMP sessions on an engine.
type Server struct {
	e    *engine.Engine
	opts Options
	log  *slog.Logger
	// rejected rate-limits the "frame rejected" warnings of all the
	// server's sessions: a flood of refused logins or frames writes at
	// most 20 lines per 10 s, then one with the count held back
	// (STYLE.md §7).
	rejected logthrottle.Burst
}

// NewServer returns a STOMP server for e.
func NewServer(e *engine.Engine, o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.HeartBeatGrace < 1 {
		o.HeartBeatGrace = 1
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 30 * time.Second
	}
	if o.DefaultHeartBeat == "" {
		o.DefaultHeartBeat = "0,0"
	}
	return &Server{e: e, opts: o, log: o.Logger, rejected: logthrottle.Burst{Every: 10 * time.Second, Max: 20}}
}

// Handler is the transport.HandlerFactory of the server.
func (s *Server) Handler(c transport.Conn) transport.Handler {
	return newSession(s, c)
}
