package conform

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Endpoints a case can need: one per protocol, and connectors with an
// option set that a few cases need (a small frame limit, $-topics
// published, a short AMQP idle time-out). A Target maps each to a
// host:port; ConfigXML declares each as a connector of that name.
const (
	STOMP      = "stomp"
	STOMPSmall = "stomp-small" // a STOMP connector with wireFormat.maxFrameSize=SmallFrameSize
	OpenWire   = "openwire"
	MQTT       = "mqtt"
	MQTTSmall  = "mqtt-small"  // an MQTT connector with wireFormat.maxFrameSize=MQTTSmallFrameSize
	MQTTDollar = "mqtt-dollar" // an MQTT connector with transport.publishDollarTopics=true
	AMQP       = "amqp"
	AMQPIdle   = "amqp-idle" // an AMQP connector with wireFormat.idleTimeout=AMQPIdleTimeout

	SmallFrameSize     = 4096
	MQTTSmallFrameSize = 1024
	AMQPIdleTimeout    = 500 * time.Millisecond
)

// An endpointOption is a connector that differs from its protocol's plain
// one by an option of its URI: the broker URL given for it carries that
// option in its query, as the connector's uri in activemq.xml does.
type endpointOption struct {
	endpoint, scheme, key, value string
}

var endpointOptions = []endpointOption{
	{STOMPSmall, "stomp", "wireFormat.maxFrameSize", strconv.Itoa(SmallFrameSize)},
	{MQTTSmall, "mqtt", "wireFormat.maxFrameSize", strconv.Itoa(MQTTSmallFrameSize)},
	{MQTTDollar, "mqtt", "transport.publishDollarTopics", "true"},
	{AMQPIdle, "amqp", "wireFormat.idleTimeout", strconv.Itoa(int(AMQPIdleTimeout / time.Millisecond))},
}

// Endpoints lists every endpoint name, each protocol's plain one first.
func Endpoints() []string {
	return []string{STOMP, STOMPSmall, OpenWire, MQTT, MQTTSmall, MQTTDollar, AMQP, AMQPIdle}
}

// EndpointURL is how a broker URL names an endpoint: scheme://host:port,
// with the connector option in the query for the optioned ones (e.g.
// "mqtt://host:port?wireFormat.maxFrameSize=1024").
func EndpointURL(endpoint, hostport string) string {
	switch endpoint {
	case STOMP:
		return "stomp://" + hostport
	case OpenWire:
		return "tcp://" + hostport
	case MQTT:
		return "mqtt://" + hostport
	case AMQP:
		return "amqp://" + hostport
	}
	for _, o := range endpointOptions {
		if o.endpoint == endpoint {
			return o.scheme + "://" + hostport + "?" + o.key + "=" + o.value
		}
	}
	return ""
}

// DefaultTimeout bounds a case that does not state its own bound.
const DefaultTimeout = 30 * time.Second

// A Case is one conformance check.
type Case struct {
	// Name is stable across releases: protocol/area/behaviour, such as
	// "stomp/ack/client-individual". --only and --skip match it.
	Name string
	// Needs lists the endpoints the case talks to; it runs only when the
	// target has all of them.
	Needs []string
	// Pins states, in one line, the ActiveMQ 5.17 behaviour the case checks.
	Pins string
	// Source is where that behaviour comes from: a spec clause or the
	// ActiveMQ class that implements it.
	Source string
	// Config names what of the suite's activemq.xml (ConfigXML) the case
	// relies on, "" when a stock broker will do.
	Config string
	// Deviation describes a documented difference of Wharf from ActiveMQ
	// that the case tells apart (T.Deviation records which was seen).
	Deviation string
	// Extension describes a case that checks a protocol beyond ActiveMQ
	// 5.17 (MQTT 5): on a broker without it the case skips, and a
	// differential run counts that difference as expected.
	Extension string
	// Restart is true for a case that restarts the broker (Target.RestartCmd).
	Restart bool
	// Timeout bounds the case; zero means DefaultTimeout.
	Timeout time.Duration
	// Run performs the check. It fails through T.Fatalf and friends, as a
	// test does.
	Run func(t *T)
}

// Protocol is the first element of the case's name.
func (c *Case) Protocol() string {
	p, _, _ := strings.Cut(c.Name, "/")
	return p
}

func (c *Case) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

var (
	registry []*Case
	nameRe   = regexp.MustCompile(`^[a-z0-9]+(/[a-z0-9][a-z0-9.-]*)+$`)
)

// register adds cases to the registry; called from the init functions of
// the case files. A bad or duplicate name is a bug in this package.
func register(cs ...Case) {
	for i := range cs {
		c := cs[i]
		if !nameRe.MatchString(c.Name) {
			panic(fmt.Sprintf("conform: case name %q is not protocol/area/behaviour in lower case", c.Name))
		}
		if c.Run == nil || c.Pins == "" || c.Source == "" || len(c.Needs) == 0 {
			panic(fmt.Sprintf("conform: case %s lacks Run, Pins, Source or Needs", c.Name))
		}
		if slices.ContainsFunc(registry, func(o *Case) bool { return o.Name == c.Name }) {
			panic(fmt.Sprintf("conform: case %s registered twice", c.Name))
		}
		registry = append(registry, &c)
	}
}

// Cases returns every registered case, sorted by name.
func Cases() []*Case {
	out := slices.Clone(registry)
	slices.SortFunc(out, func(a, b *Case) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Select returns the cases whose names match only (nil: all) and do not
// match skip (nil: none), sorted by name.
func Select(only, skip *regexp.Regexp) []*Case {
	var out []*Case
	for _, c := range Cases() {
		if only != nil && !only.MatchString(c.Name) {
			continue
		}
		if skip != nil && skip.MatchString(c.Name) {
			continue
		}
		out = append(out, c)
	}
	return out
}
