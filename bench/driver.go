package bench

import (
	"context"
	"crypto/tls"
	"time"
)

// dest is a queue or topic by name, as STOMP, OpenWire and AMQP (as
// ActiveMQ maps its addresses) know it; MQTT knows only topics and takes
// both kinds as one.
type dest struct {
	name  string
	topic bool
}

// session is one connection with one session on it, as a producer,
// consumer or responder uses it. Its methods are called from the one
// goroutine that owns it, except done and close.
type session interface {
	// send sends body to to; replyTo, if set, is the reply-to. With sync
	// it returns once the broker confirmed the message. In a transacted
	// session the send belongs to the current transaction.
	send(ctx context.Context, to dest, body []byte, replyTo *dest, sync bool) error
	// subscribe opens a consumer and returns once the broker confirmed it:
	// messages sent after that reach it.
	subscribe(ctx context.Context, from dest, o subOptions) (subscription, error)
	// commit commits the current transaction (transacted sessions).
	commit(ctx context.Context) error
	// done is closed when the connection has ended, for whatever reason.
	done() <-chan struct{}
	// close ends the connection in an orderly way; safe from any goroutine.
	close() error
}

// subscription is a consumer on a session.
type subscription interface {
	// receive returns the next message.
	receive(ctx context.Context) (delivery, error)
	// ack acknowledges d (client and individual modes; transacted
	// sessions include it in the current transaction).
	ack(d delivery) error
}

// delivery is a received message.
type delivery struct {
	body    []byte
	replyTo *dest
	handle  any // the protocol's own message, for ack
}

type subOptions struct {
	ack      AckMode
	prefetch int
}

// dialer opens a session; transacted makes it a transacted one.
type dialer func(ctx context.Context, transacted bool) (session, error)

// newDialer returns the dialer for t with the run's settings; tc is the
// client TLS configuration when t is a TLS URL, nil otherwise.
func newDialer(t Target, cfg *Config, tc *tls.Config) dialer {
	timeout := cfg.ConnectTimeout
	persistent := cfg.Persistent
	switch t.Protocol {
	case ProtocolSTOMP:
		return func(ctx context.Context, transacted bool) (session, error) {
			return dialSTOMP(ctx, t, tc, timeout, persistent, transacted)
		}
	case ProtocolMQTT:
		// Config.Validate refuses transactions over MQTT.
		o := mqttOptions{timeout: timeout, tls: tc, qos: byte(cfg.QoS), cleanSession: cfg.CleanSession, manualAck: cfg.Ack != AckAuto}
		return func(ctx context.Context, _ bool) (session, error) {
			return dialMQTT(ctx, t, o)
		}
	case ProtocolAMQP:
		// Config.Validate refuses transactions over AMQP.
		o := amqpOptions{
			timeout:    timeout,
			tls:        tc,
			persistent: persistent,
			presettled: cfg.Settle == SettlePresettled,
			autoAccept: cfg.Ack == AckAuto,
			rabbitMQ:   cfg.AMQPAddresses == AMQPRabbitMQ,
		}
		return func(ctx context.Context, _ bool) (session, error) {
			return dialAMQP(ctx, t, o)
		}
	default:
		return func(ctx context.Context, transacted bool) (session, error) {
			return dialOpenWire(ctx, t, tc, timeout, persistent, transacted)
		}
	}
}

// closeTimeout bounds the orderly close of a connection at the end of a
// run; a broker that does not answer in time gets its socket closed.
const closeTimeout = 5 * time.Second
