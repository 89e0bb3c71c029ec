package jolokia

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/internal/version"
)

// domain is ActiveMQ's JMX domain (<managementContext jmxDomainName>).
const domain = "org.apache.activemq"

// brokerName is org.apache.activemq:type=Broker,brokerName=X, the name
// every other bean extends (BrokerMBeanSupport.createBrokerObjectName).
func (h *Handler) brokerName() objectName {
	return objectName{domain: domain, props: []prop{{"type", "Broker"}, {"brokerName", encodePart(h.name)}}}
}

// under is the broker's name with more key properties after it.
func (h *Handler) under(kv ...string) objectName {
	on := h.brokerName()
	for i := 0; i+1 < len(kv); i += 2 {
		on.props = append(on.props, prop{kv[i], kv[i+1]})
	}
	return on
}

func (h *Handler) destinationName(d message.Destination) objectName {
	return h.under("destinationType", d.Type.String(), "destinationName", encodePart(d.Name))
}

func (s *snapshot) brokerBean() *mbean {
	h := s.h
	e := h.e
	total := func(f func(engine.DestinationStats) int64) func() any {
		return func() any {
			var n int64
			for _, st := range s.allStats() {
				n += f(st)
			}
			return n
		}
	}
	// msgSize is the broker's message size statistic: every
	// destination's merged, as ActiveMQ's parent statistic adds up its
	// children's samples.
	msgSize := func(f func(engine.Statistic) int64) func() any {
		return func() any {
			var all engine.Statistic
			for _, st := range s.allStats() {
				all.Merge(st.MessageSize)
			}
			return f(all)
		}
	}
	names := func(t message.DestType) func() any {
		return func() any {
			var ns []objectName
			for _, d := range s.destinations() {
				if d.Type == t {
					ns = append(ns, h.destinationName(d))
				}
			}
			return objectNameList(ns)
		}
	}
	durables := func(active bool) func() any {
		return func() any {
			var ns []objectName
			for _, ds := range s.durableSubs() {
				if ds.Active == active {
					ns = append(ns, h.durableName(ds.DurableSub))
				}
			}
			return objectNameList(ns)
		}
	}
	subscribers := func(t message.DestType) func() any {
		return func() any {
			var ns []objectName
			for _, c := range s.consumers() {
				if c.Destination.Type == t {
					ns = append(ns, h.consumerName(c))
				}
			}
			return objectNameList(ns)
		}
	}
	producers := func(dynamic bool, t message.DestType) func() any {
		return func() any {
			var ns []objectName
			for _, p := range s.producers() {
				if p.Destination.IsZero() == dynamic && (dynamic || p.Destination.Type == t) {
					ns = append(ns, h.producerName(p))
				}
			}
			return objectNameList(ns)
		}
	}
	usage := func(f func(engine.Usage) int64) func() any { return func() any { return f(e.Usage()) } }
	pct := func(f func(engine.Usage) int) func() any { return func() any { return f(e.Usage()) } }
	nameArg := []argInfo{{"name", "java.lang.String", "name"}}
	destOp := func(name, desc string, t message.DestType, add bool) operation {
		return operation{name: name, desc: desc, ret: "void", args: nameArg, changes: true, run: func(a []any) (any, error) {
			n, err := stringArg(a[0])
			if err != nil {
				return nil, err
			}
			d := message.Destination{Type: t, Name: n}
			if add {
				return nil, e.AddDestination(d)
			}
			if err := adminName(d); err != nil {
				return nil, err
			}
			return nil, e.RemoveDestination(d)
		}}
	}
	// BrokerViewMBean's limit setters (Engine.SetLimits).
	limit := func(which int) func(any) error {
		return func(v any) error {
			n := v.(int64)
			ls := [3]*int64{}
			ls[which] = &n
			err := e.SetLimits(ls[0], ls[1], ls[2])
			if errors.Is(err, engine.ErrBadArgument) {
				return badRequest("%s", err.Error())
			}
			return err
		}
	}
	return &mbean{
		name: h.brokerName(), class: "org.apache.activemq.broker.jmx.BrokerView", desc: "Information on the management interface of the MBean",
		setters: map[string]func(any) error{"MemoryLimit": limit(0), "StoreLimit": limit(1), "TempLimit": limit(2)},
		attrs: []attribute{
			{"BrokerId", "java.lang.String", "The unique id of the broker.", func() any { return e.BrokerID() }},
			{"BrokerName", "java.lang.String", "The name of the broker.", func() any { return h.name }},
			{"BrokerVersion", "java.lang.String", "The version of the broker.", func() any { return version.Broker }},
			{"Uptime", "java.lang.String", "Uptime of the broker.", func() any { return printDuration(h.now().Sub(h.started).Milliseconds()) }},
			{"UptimeMillis", "long", "Uptime of the broker in milliseconds.", func() any { return h.now().Sub(h.started).Milliseconds() }},
			{"CurrentConnectionsCount", "int", "", func() any { return len(s.connections()) }},
			{"TotalEnqueueCount", "long", "Number of messages that have been sent to the broker.", total(func(st engine.DestinationStats) int64 { return st.EnqueueCount })},
			{"TotalDequeueCount", "long", "Number of messages that have been acknowledged on the broker.", total(func(st engine.DestinationStats) int64 { return st.DequeueCount })},
			{"TotalConsumerCount", "long", "Number of message consumers subscribed to destinations on the broker.", total(func(st engine.DestinationStats) int64 { return st.ConsumerCount })},
			{"TotalMessageCount", "long", "Number of unacknowledged messages on the broker.", total(func(st engine.DestinationStats) int64 { return st.QueueSize })},
			{"AverageMessageSize", "long", "Average message size on this broker", msgSize(func(x engine.Statistic) int64 { return int64(x.Average()) })},
			{"MaxMessageSize", "long", "Max message size on this broker", msgSize(func(x engine.Statistic) int64 { return x.Max })},
			{"MinMessageSize", "long", "Min message size on this broker", msgSize(func(x engine.Statistic) int64 { return x.Min })},
			{"MemoryPercentUsage", "int", "Percent of memory limit used.", pct(func(u engine.Usage) int { return u.MemoryPercent })},
			{"MemoryLimit", "long", "Memory limit, in bytes, used for holding undelivered messages before paging to temporary storage.", usage(func(u engine.Usage) int64 { return u.MemoryLimit })},
			{"StorePercentUsage", "int", "Percent of store limit used.", pct(func(u engine.Usage) int { return u.StorePercent })},
			{"StoreLimit", "long", "Disk limit, in bytes, used for persistent messages before producers are blocked.", usage(func(u engine.Usage) int64 { return u.StoreLimit })},
			{"TempPercentUsage", "int", "Percent of temp limit used.", pct(func(u engine.Usage) int { return u.TempPercent })},
			{"TempLimit", "long", "Disk limit, in bytes, used for non-persistent messages and temporary data before producers are blocked.", usage(func(u engine.Usage) int64 { return u.TempLimit })},
			{"StatisticsEnabled", "boolean", "Broker statistics enabled.", func() any { return e.StatisticsEnabled() }},
			{"Slave", "boolean", "Slave broker.", func() any { return false }},
			{"Queues", "[Ljavax.management.ObjectName;", "Standard Queues containing AIE messages.", names(message.Queue)},
			{"Topics", "[Ljavax.management.ObjectName;", "Topics (broadcasted 'queues'); generally system information.", names(message.Topic)},
			{"TemporaryQueues", "[Ljavax.management.ObjectName;", "Temporary Queues; generally temporary message response holders.", names(message.TempQueue)},
			{"TemporaryTopics", "[Ljavax.management.ObjectName;", "Temporary Topics; generally unused.", names(message.TempTopic)},
			{"QueueSubscribers", "[Ljavax.management.ObjectName;", "Queue Subscribers.", subscribers(message.Queue)},
			{"TopicSubscribers", "[Ljavax.management.ObjectName;", "Topic Subscribers", subscribers(message.Topic)},
			{"TemporaryQueueSubscribers", "[Ljavax.management.ObjectName;", "Temporary Queue Subscribers.", subscribers(message.TempQueue)},
			{"TemporaryTopicSubscribers", "[Ljavax.management.ObjectName;", "Temporary Topic Subscribers.", subscribers(message.TempTopic)},
			{"QueueProducers", "[Ljavax.management.ObjectName;", "Queue Producers.", producers(false, message.Queue)},
			{"TopicProducers", "[Ljavax.management.ObjectName;", "Topic Producers.", producers(false, message.Topic)},
			{"TemporaryQueueProducers", "[Ljavax.management.ObjectName;", "Temporary Queue Producers.", producers(false, message.TempQueue)},
			{"TemporaryTopicProducers", "[Ljavax.management.ObjectName;", "Temporary Topic Producers.", producers(false, message.TempTopic)},
			{"DynamicDestinationProducers", "[Ljavax.management.ObjectName;", "Dynamic Destination Producers.", producers(true, 0)},
			{"DurableTopicSubscribers", "[Ljavax.management.ObjectName;", "Durable (persistent) topic subscribers", durables(true)},
			{"InactiveDurableTopicSubscribers", "[Ljavax.management.ObjectName;", "Inactive (disconnected persistent) topic subscribers", durables(false)},
		},
		ops: func() []operation {
			ops := []operation{
				destOp("addQueue", "Adds a Queue destination to the broker.", message.Queue, true),
				destOp("removeQueue", "Removes a Queue destination from the broker.", message.Queue, false),
				destOp("addTopic", "Adds a Topic destination to the broker.", message.Topic, true),
				destOp("removeTopic", "Removes a Topic destination from the broker.", message.Topic, false),
				{name: "destroyDurableSubscriber", desc: "Destroys a durable subscriber.", ret: "void", changes: true,
					args: []argInfo{{"clientId", "java.lang.String", "clientId"}, {"subscriberName", "java.lang.String", "subscriberName"}},
					run: func(a []any) (any, error) {
						cid, err := stringArg(a[0])
						if err != nil {
							return nil, err
						}
						name, err := stringArg(a[1])
						if err != nil {
							return nil, err
						}
						return nil, e.Unsubscribe(engine.SubKey{ClientID: cid, Name: name})
					}},
			}
			if stop := h.opts.Stop; stop != nil {
				ops = append(ops, operation{name: "stop", desc: "Stop the broker and all its components.", ret: "void", changes: true,
					run: func([]any) (any, error) {
						h.log.Info("broker stop requested over the API")
						stop()
						return nil, nil
					}})
			}
			return ops
		},
	}
}

// adminName refuses what removeQueue/removeTopic cannot name.
func adminName(d message.Destination) error {
	if d.Name == "" || d.IsWildcard() || d.IsComposite() {
		return fmt.Errorf("%q is not a destination name", d.Name)
	}
	return nil
}

// healthBean is service=Health (HealthViewMBean). Wharf reports "Good":
// the usage figures operators alert on are on the Broker bean.
func (s *snapshot) healthBean() *mbean {
	good := func() any { return "Good" }
	return &mbean{
		name: s.h.under("service", "Health"), class: "org.apache.activemq.broker.jmx.HealthView", desc: "Information on the management interface of the MBean",
		attrs: []attribute{{"CurrentStatus", "java.lang.String", "String representation of current Broker state", good}},
		ops: func() []operation {
			return []operation{{name: "healthStatus", desc: "String representation of current Broker state", ret: "java.lang.String",
				run: func([]any) (any, error) { return good(), nil }}}
		},
	}
}

// printDuration writes an uptime as ActiveMQ's TimeUtils.printDuration
// does: "12.345 seconds", "5 minutes", "1 hour 3 minutes", "2 days 1 hour".
func printDuration(ms int64) string {
	secs := float64(ms) / 1000
	if secs < 60 {
		return groupThousands(strconv.FormatFloat(secs, 'f', 3, 64)) + " seconds"
	}
	unit := func(n int64, one string) string {
		s := groupThousands(strconv.FormatInt(n, 10)) + " " + one
		if n > 1 {
			s += "s"
		}
		return s
	}
	mins := secs / 60
	if mins < 60 {
		return unit(int64(mins), "minute")
	}
	hours := mins / 60
	if hours < 24 {
		s := unit(int64(hours), "hour")
		if m := int64((hours - float64(int64(hours))) * 60); m != 0 {
			s += " " + unit(m, "minute")
		}
		return s
	}
	days := hours / 24
	s := unit(int64(days), "day")
	if hr := int64((days - float64(int64(days))) * 24); hr != 0 {
		s += " " + unit(hr, "hour")
	}
	return s
}

// groupThousands puts commas in the integer part, as Java's "###,###".
func groupThousands(n string) string {
	intPart, frac, _ := strings.Cut(n, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}
