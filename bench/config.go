package bench

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"strings"
	"time"
)

// Scenario names a workload.
type Scenario string

// The scenarios of `wharf bench`.
const (
	ScenarioQueue       Scenario = "queue"
	ScenarioTopic       Scenario = "topic"
	ScenarioReqReply    Scenario = "reqreply"
	ScenarioConnections Scenario = "connections"
)

// AckMode is how consumers acknowledge. In a transacted run (Config.TxSize
// > 0) consumers acknowledge by committing, whatever the mode.
type AckMode string

// The acknowledgement modes: JMS AUTO_ACKNOWLEDGE, CLIENT_ACKNOWLEDGE
// (STOMP ack:client, cumulative) and ActiveMQ's INDIVIDUAL_ACKNOWLEDGE
// (STOMP ack:client-individual). Client and individual acknowledge every
// message as it is received.
const (
	AckAuto       AckMode = "auto"
	AckClient     AckMode = "client"
	AckIndividual AckMode = "individual"
)

// Protocol names a wire protocol.
type Protocol string

// The protocols `wharf bench` speaks.
const (
	ProtocolSTOMP    Protocol = "stomp"
	ProtocolOpenWire Protocol = "openwire"
	ProtocolMQTT     Protocol = "mqtt"
	ProtocolAMQP     Protocol = "amqp"
)

// Settlement is how AMQP 1.0 deliveries are settled (AMQP 1.0 §2.6.12,
// §3.4): the sender settle mode of the run's producer links, and the one
// its consumer links ask the broker for.
type Settlement string

// The settlement modes of `wharf bench --settle`.
const (
	// SettleUnsettled sends unsettled: the broker answers each message
	// with an outcome (Accepted), which a sync send waits for; consumers
	// accept each message they receive.
	SettleUnsettled Settlement = "unsettled"
	// SettlePresettled sends settled (fire and forget: no outcome comes
	// back) and asks the broker to send to consumers settled, so that
	// nothing is acknowledged either way: at most once.
	SettlePresettled Settlement = "presettled"
)

// AMQPAddressing is how AMQP 1.0 addresses name a queue or a topic,
// which the standard leaves to each broker.
type AMQPAddressing string

// The addressings of `wharf bench --amqp-addresses`.
const (
	// AMQPActiveMQ is ActiveMQ's (and Wharf's): queue://name and
	// topic://name.
	AMQPActiveMQ AMQPAddressing = "activemq"
	// AMQPRabbitMQ is RabbitMQ's AMQP 1.0 plugin's: /queue/name (the
	// queue, declared by a consumer's link if missing) and /topic/name
	// (amq.topic with routing key name; each receiver gets a queue of its
	// own bound to it).
	AMQPRabbitMQ AMQPAddressing = "rabbitmq"
)

// StampBytes is the size of the stamp at the head of every body, the
// smallest allowed Config.Size.
const StampBytes = stampBytes

// Config describes one run. Start from DefaultConfig; Validate before Run.
type Config struct {
	// URL is the broker: stomp://host:port (also stomp+nio),
	// tcp://host:port, nio://host:port, openwire://host:port for
	// OpenWire, mqtt://host:port (also mqtt+nio) for MQTT 3.1.1, or
	// amqp://host:port (also amqp+nio) for AMQP 1.0; over TLS
	// stomp+ssl (stomp+nio+ssl), ssl (nio+ssl), mqtt+ssl (mqtt+nio+ssl)
	// and amqp+ssl (amqp+nio+ssl, amqps), ActiveMQ's connector schemes.
	// user:password@ in the URL logs in (over AMQP with SASL PLAIN;
	// without it AMQP uses SASL ANONYMOUS).
	URL      string
	Scenario Scenario

	// User and Password log in, as user:password@ in the URL does (give
	// one or the other, not both).
	User, Password string
	// CAFile is a PEM file of the certificates that sign the broker's
	// (TLS URLs only); empty trusts the system's roots.
	CAFile string
	// CertFile and KeyFile are the client certificate (chain) and its
	// unencrypted private key, both PEM, presented to a broker that asks
	// for one (needClientAuth, wantClientAuth); both or neither.
	CertFile, KeyFile string

	// Producers is the number of producers (queue, topic) or requesters
	// (reqreply), each on its own connection.
	Producers int
	// Consumers is the number of queue consumers (queue) or responders
	// (reqreply), each on its own connection.
	Consumers int
	// Subscribers is the topic fan-out: each gets every message.
	Subscribers int
	// Size is the body size in bytes, at least StampBytes.
	Size int
	// Count is the total number of messages to send, shared among the
	// producers; 0 means no count (Duration bounds the run).
	Count int64
	// Duration bounds the sending phase; 0 with a Count means
	// DefaultMaxDuration, so that every run ends.
	Duration time.Duration
	// Drain is how long receivers wait for the next message once sending
	// has ended, before the missing ones count as lost.
	Drain time.Duration
	// Rate is the target send rate in messages per second over all
	// producers (open loop); 0 sends as fast as the broker takes them
	// (closed loop).
	Rate float64
	// Persistent sends persistent messages.
	Persistent bool
	// Sync waits for the broker to confirm each send (OpenWire
	// ResponseRequired, STOMP receipt, MQTT PUBACK or PUBCOMP, AMQP
	// Accepted outcome); nil means persistent sends outside
	// transactions, as the JMS client does (the commit is what waits in a
	// transaction).
	Sync *bool
	Ack  AckMode
	// TxSize > 0 makes producers and consumers transacted, committing
	// every TxSize messages (and what remains at the end).
	TxSize int
	// Prefetch is the consumers' prefetch in messages (over AMQP, the
	// link credit); 0 leaves the client's default (OpenWire: the Java
	// defaults; STOMP: the broker's; AMQP: amqpDefaultCredit).
	Prefetch int
	// Destination names the queue or topic; empty makes a fresh name per
	// run (wharf.bench.<scenario>.<pid>.<time>), so that runs against a
	// long-lived broker do not see each other's leftovers.
	Destination string

	// Connections and Hold drive the connections scenario: open this many
	// connections, keep them for Hold, close them.
	Connections int
	Hold        time.Duration

	// QoS is the MQTT quality of service of publications and
	// subscriptions (0, 1 or 2); other protocols ignore it.
	QoS int
	// CleanSession is the MQTT clean-session flag of every connection
	// [MQTT-3.1.2-6]: true discards the session when the connection ends.
	CleanSession bool

	// Settle is the AMQP settlement mode; other protocols accept only
	// SettleUnsettled, which is how they work anyway.
	Settle Settlement
	// AMQPAddresses is how AMQP addresses name destinations; empty is
	// AMQPActiveMQ.
	AMQPAddresses AMQPAddressing

	// ConnectTimeout bounds each connection's setup.
	ConnectTimeout time.Duration
	// BrokerPID, when > 0, is sampled (RSS, CPU) during the run (Linux).
	BrokerPID int
}

// DefaultMaxDuration bounds the sending phase of a run given by count only.
const DefaultMaxDuration = 10 * time.Minute

// DefaultConfig returns the configuration `wharf bench` starts from: one
// producer and one consumer on a queue, 1 KiB non-persistent messages,
// 10,000 of them, as fast as possible.
func DefaultConfig() Config {
	return Config{
		URL:            "tcp://127.0.0.1:61616",
		Scenario:       ScenarioQueue,
		Producers:      1,
		Consumers:      1,
		Subscribers:    4,
		Size:           1024,
		Drain:          5 * time.Second,
		Ack:            AckAuto,
		QoS:            1,
		CleanSession:   true,
		Settle:         SettleUnsettled,
		Connections:    1000,
		Hold:           10 * time.Second,
		ConnectTimeout: 5 * time.Second,
	}
}

// SyncSends reports whether sends wait for the broker's confirmation.
// A presettled AMQP send has none to wait for.
func (c *Config) SyncSends() bool {
	if c.Settle == SettlePresettled {
		return false
	}
	if c.Sync != nil {
		return *c.Sync
	}
	return c.Persistent && c.TxSize == 0
}

// Target is where a URL points.
type Target struct {
	Protocol Protocol
	Addr     string // host:port
	User     string
	Password string
	// TLS is set for the TLS schemes (stomp+ssl, ssl, mqtt+ssl, amqps...).
	TLS bool
}

// urlSchemes maps each URL scheme `wharf bench` takes to its protocol and
// whether it runs over TLS: the schemes of ActiveMQ's transport
// connectors, and amqps as AMQP clients write it.
var urlSchemes = map[string]struct {
	p   Protocol
	tls bool
}{
	"stomp": {ProtocolSTOMP, false}, "stomp+nio": {ProtocolSTOMP, false},
	"stomp+ssl": {ProtocolSTOMP, true}, "stomp+nio+ssl": {ProtocolSTOMP, true},
	"tcp": {ProtocolOpenWire, false}, "nio": {ProtocolOpenWire, false}, "openwire": {ProtocolOpenWire, false},
	"ssl": {ProtocolOpenWire, true}, "nio+ssl": {ProtocolOpenWire, true},
	"mqtt": {ProtocolMQTT, false}, "mqtt+nio": {ProtocolMQTT, false},
	"mqtt+ssl": {ProtocolMQTT, true}, "mqtt+nio+ssl": {ProtocolMQTT, true},
	"amqp": {ProtocolAMQP, false}, "amqp+nio": {ProtocolAMQP, false},
	"amqp+ssl": {ProtocolAMQP, true}, "amqp+nio+ssl": {ProtocolAMQP, true}, "amqps": {ProtocolAMQP, true},
}

// schemeList names the accepted schemes, for error messages.
const schemeList = "stomp, stomp+nio, stomp+ssl, stomp+nio+ssl, tcp, nio, openwire, ssl, nio+ssl, " +
	"mqtt, mqtt+nio, mqtt+ssl, mqtt+nio+ssl, amqp, amqp+nio, amqp+ssl, amqp+nio+ssl or amqps"

// ParseURL reads a broker URL.
func ParseURL(s string) (Target, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Target{}, fmt.Errorf("%w: %q: %v", ErrBadURL, s, err)
	}
	var t Target
	sc, ok := urlSchemes[strings.ToLower(u.Scheme)]
	switch {
	case u.Scheme == "":
		return Target{}, fmt.Errorf("%w: %q has no scheme (stomp://, tcp://, mqtt://, amqp:// or their TLS forms stomp+ssl://, ssl://, mqtt+ssl://, amqp+ssl://)", ErrBadURL, s)
	case !ok:
		return Target{}, fmt.Errorf("%w: %q: scheme %q is not %s", ErrBadURL, s, u.Scheme, schemeList)
	}
	t.Protocol, t.TLS = sc.p, sc.tls
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil || host == "" || port == "" {
		return Target{}, fmt.Errorf("%w: %q: want %s://host:port", ErrBadURL, s, u.Scheme)
	}
	t.Addr = net.JoinHostPort(host, port)
	if u.User != nil {
		t.User = u.User.Username()
		t.Password, _ = u.User.Password()
	}
	return t, nil
}

// target is where the run connects: the URL, with the log-in of User and
// Password when they are given.
func (c *Config) target() (Target, error) {
	t, err := ParseURL(c.URL)
	if err != nil {
		return t, err
	}
	if c.User != "" {
		t.User, t.Password = c.User, c.Password
	}
	return t, nil
}

// Validate checks c and fills the defaults that depend on other fields
// (Duration for a count-only run). It reports every problem at once.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	t, err := ParseURL(c.URL)
	if err != nil {
		errs = append(errs, err)
	}
	switch c.Scenario {
	case ScenarioQueue, ScenarioTopic, ScenarioReqReply, ScenarioConnections:
	default:
		bad("--scenario %q: want queue, topic, reqreply or connections", c.Scenario)
	}
	switch c.Ack {
	case AckAuto, AckClient, AckIndividual:
	default:
		bad("--ack %q: want auto, client or individual", c.Ack)
	}
	if c.Producers < 1 {
		bad("--producers %d: want at least 1", c.Producers)
	}
	if c.Consumers < 1 {
		bad("--consumers %d: want at least 1", c.Consumers)
	}
	if c.Subscribers < 1 {
		bad("--subscribers %d: want at least 1", c.Subscribers)
	}
	if c.Size < StampBytes {
		bad("--size %d: want at least %d (the sequence number and timestamp every message carries)", c.Size, StampBytes)
	}
	if c.Count < 0 {
		bad("--count %d: want 0 (no count) or more", c.Count)
	}
	if c.Duration < 0 {
		bad("--duration %s: want a positive duration", c.Duration)
	}
	if c.Scenario != ScenarioConnections && c.Count == 0 && c.Duration == 0 {
		bad("give --count or --duration (or both): every run is bounded")
	}
	if c.Count > 0 && c.Count < int64(c.Producers) {
		bad("--count %d is less than --producers %d", c.Count, c.Producers)
	}
	if c.Drain <= 0 {
		bad("--drain %s: want a positive duration", c.Drain)
	}
	if c.Rate < 0 {
		bad("--rate %g: want 0 (as fast as possible) or a rate in messages/s", c.Rate)
	}
	if c.TxSize < 0 {
		bad("--tx %d: want 0 (no transactions) or a batch size", c.TxSize)
	}
	if c.Prefetch < 0 {
		bad("--prefetch %d: want 0 (client default) or more", c.Prefetch)
	}
	if c.Connections < 1 {
		bad("--connections %d: want at least 1", c.Connections)
	}
	if c.Hold < 0 {
		bad("--hold %s: want 0 or more", c.Hold)
	}
	if c.ConnectTimeout <= 0 {
		bad("--connect-timeout %s: want a positive duration", c.ConnectTimeout)
	}
	if c.BrokerPID < 0 {
		bad("--broker-pid %d: want a process id", c.BrokerPID)
	}
	if c.QoS < 0 || c.QoS > 2 {
		bad("--qos %d: want 0, 1 or 2", c.QoS)
	}
	switch c.Settle {
	case SettleUnsettled:
	case SettlePresettled:
		if err == nil && t.Protocol != ProtocolAMQP {
			bad("--settle presettled: only AMQP has settlement modes (%s acknowledges as --ack says)", t.Protocol)
		}
	default:
		bad("--settle %q: want unsettled or presettled", c.Settle)
	}
	switch c.AMQPAddresses {
	case "", AMQPActiveMQ:
	case AMQPRabbitMQ:
		if err == nil && t.Protocol != ProtocolAMQP {
			bad("--amqp-addresses rabbitmq: only AMQP URLs take it, not %s", t.Protocol)
		}
	default:
		bad("--amqp-addresses %q: want activemq (queue://name, topic://name) or rabbitmq (/queue/name, /topic/name)", c.AMQPAddresses)
	}
	errs = append(errs, c.loginProblems()...)
	if err == nil {
		errs = append(errs, c.tlsProblems(t)...)
	}
	switch t.Protocol {
	case ProtocolMQTT:
		errs = append(errs, c.mqttProblems()...)
	case ProtocolAMQP:
		errs = append(errs, c.amqpProblems()...)
	}
	if len(errs) > 0 {
		return &configError{errs}
	}
	if c.Scenario != ScenarioConnections && c.Duration == 0 {
		c.Duration = DefaultMaxDuration
	}
	return nil
}

// mqttProblems are the settings MQTT 3.1.1 has no counterpart for.
func (c *Config) mqttProblems() []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch {
	case c.Scenario == ScenarioQueue:
		// MQTT 3.1.1 has no shared subscriptions: every subscriber of a
		// topic gets every message, so there is nothing that competing
		// consumers could share.
		bad("--scenario queue: MQTT has only topics, no queues; use --scenario topic (fan-out), reqreply or connections")
	case c.Scenario == ScenarioReqReply && c.Consumers > 1:
		bad("--consumers %d: over MQTT every responder would get (and answer) every request; use --consumers 1", c.Consumers)
	}
	if c.TxSize > 0 {
		bad("--tx %d: MQTT has no transactions", c.TxSize)
	}
	if c.Prefetch > 0 {
		bad("--prefetch %d: MQTT 3.1.1 has no prefetch (the broker's in-flight window applies)", c.Prefetch)
	}
	if c.Persistent {
		// ActiveMQ stores QoS 1 and 2 publications as persistent
		// messages and QoS 0 ones as non-persistent.
		bad("--persistent: MQTT has no persistent flag; --qos 1 or 2 is what a broker keeps")
	}
	return errs
}

// amqpProblems are the settings the AMQP driver has no counterpart for.
func (c *Config) amqpProblems() []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.TxSize > 0 {
		// AMQP 1.0 transactions (§4) need a link to the broker's
		// coordinator and transactional delivery states; go-amqp can
		// attach neither.
		bad("--tx %d: the AMQP client (go-amqp) has no transactions; run without --tx, or use OpenWire or STOMP for transacted runs", c.TxSize)
	}
	if c.Prefetch > math.MaxInt32 {
		bad("--prefetch %d: AMQP link credit is at most %d", c.Prefetch, math.MaxInt32)
	}
	if c.Settle == SettlePresettled {
		if c.Ack != AckAuto {
			bad("--ack %s: presettled messages are settled when the broker sends them, there is nothing to acknowledge; use --settle unsettled", c.Ack)
		}
		if c.Sync != nil && *c.Sync {
			bad("--sync: a presettled send has no outcome to wait for; use --settle unsettled")
		}
	}
	return errs
}

// configError lists every problem Validate found, one per line.
type configError struct{ errs []error }

func (e *configError) Error() string {
	var b strings.Builder
	b.WriteString(ErrConfig.Error())
	for _, err := range e.errs {
		b.WriteString("\n  ")
		b.WriteString(strings.TrimPrefix(err.Error(), "bench: "))
	}
	return b.String()
}

// Unwrap lets errors.Is find ErrConfig and each problem's sentinel.
func (e *configError) Unwrap() []error { return append([]error{ErrConfig}, e.errs...) }

// fanOut is how many copies of each message the receivers must see.
func (c *Config) fanOut() int64 {
	if c.Scenario == ScenarioTopic {
		return int64(c.Subscribers)
	}
	return 1
}
