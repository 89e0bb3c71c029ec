package jolokia

import (
	"errors"
	"sort"
	"strings"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/engine/selector"
)

// destinationBean is a queue's QueueViewMBean, a topic's TopicViewMBean,
// or a temporary one's (all DestinationViewMBean).
func (s *snapshot) destinationBean(d message.Destination) *mbean {
	h := s.h
	st := func(f func(engine.DestinationStats) any) func() any {
		return func() any { return f(s.destStats(d)) }
	}
	b := &mbean{
		name: h.destinationName(d), desc: "Information on the management interface of the MBean",
		attrs: []attribute{
			{"Name", "java.lang.String", "Name of this destination.", func() any { return d.Name }},
			{"QueueSize", "long", "Number of messages in the destination which are yet to be consumed.  Potentially dispatched but unacknowledged.", st(func(x engine.DestinationStats) any { return x.QueueSize })},
			{"EnqueueCount", "long", "Number of messages that have been sent to the destination.", st(func(x engine.DestinationStats) any { return x.EnqueueCount })},
			{"DequeueCount", "long", "Number of messages that have been acknowledged (and removed from) from the destination.", st(func(x engine.DestinationStats) any { return x.DequeueCount })},
			{"DispatchCount", "long", "Number of messages that have been delivered (but potentially not acknowledged) to consumers.", st(func(x engine.DestinationStats) any { return x.DispatchCount })},
			{"InFlightCount", "long", "Number of messages that have been dispatched to, but not acknowledged by, consumers.", st(func(x engine.DestinationStats) any { return x.InFlightCount })},
			{"ExpiredCount", "long", "Number of messages that have been expired.", st(func(x engine.DestinationStats) any { return x.ExpiredCount })},
			{"ConsumerCount", "long", "Number of consumers subscribed to this destination.", st(func(x engine.DestinationStats) any { return x.ConsumerCount })},
			{"ProducerCount", "long", "Number of producers publishing to this destination", func() any { return int64(h.e.ProducerCount(d)) }},
			{"MemoryUsageByteCount", "long", "Memory usage, in bytes, used by undelivered messages", st(func(x engine.DestinationStats) any { return x.MemoryUsage })},
			{"MemoryPercentUsage", "int", "The percentage of the memory limit used", st(func(x engine.DestinationStats) any { return x.MemoryPercentUsage })},
			{"MemoryLimit", "long", "Memory limit, in bytes, used for holding undelivered messages before paging to temporary storage.", st(func(x engine.DestinationStats) any {
				if x.MemoryLimit > 0 {
					return x.MemoryLimit
				}
				return h.e.Usage().MemoryLimit // no limit of its own: the broker's
			})},
			{"AverageEnqueueTime", "double", "Average time a message was held on this destination.", st(func(x engine.DestinationStats) any { return x.EnqueueTime.Average() })},
			{"MaxEnqueueTime", "long", "The longest time a message was held on this destination", st(func(x engine.DestinationStats) any { return x.EnqueueTime.Max })},
			{"MinEnqueueTime", "long", "The shortest time a message was held on this destination", st(func(x engine.DestinationStats) any { return x.EnqueueTime.Min })},
			// ActiveMQ truncates the average size to a long.
			{"AverageMessageSize", "long", "Average message size on this destination", st(func(x engine.DestinationStats) any { return int64(x.MessageSize.Average()) })},
			{"MaxMessageSize", "long", "Max message size on this destination", st(func(x engine.DestinationStats) any { return x.MessageSize.Max })},
			{"MinMessageSize", "long", "Min message size on this destination", st(func(x engine.DestinationStats) any { return x.MessageSize.Min })},
			{"MaxPageSize", "int", "Maximum number of messages to be paged in", st(func(x engine.DestinationStats) any { return x.Policy.MaxPageSize })},
			{"ProducerFlowControl", "boolean", "Flow control is enabled for producers", st(func(x engine.DestinationStats) any { return x.Policy.ProducerFlowControl })},
			{"BlockedSends", "long", "Get number of messages blocked for Flow Control", st(func(x engine.DestinationStats) any { return x.BlockedSends })},
			{"Subscriptions", "[Ljavax.management.ObjectName;", "returns all the current subscription MBeans matching this destination", func() any {
				var ns []objectName
				for _, c := range s.consumers() {
					if c.Destination == d {
						ns = append(ns, h.consumerName(c))
					}
				}
				for _, ds := range s.durableSubs() {
					if ds.Destination == d {
						ns = append(ns, h.durableName(ds.DurableSub))
					}
				}
				return objectNameList(ns)
			}},
		},
	}
	// The setters ActiveMQ's DestinationViewMBean has that the engine
	// can honour as the destination runs (ChangePolicy).
	change := func(c engine.PolicyChange) error {
		err := h.e.ChangePolicy(d, c)
		if errors.Is(err, engine.ErrBadArgument) {
			return badRequest("%s", err.Error())
		}
		return err
	}
	b.setters = map[string]func(any) error{
		"MaxPageSize": func(v any) error { n := int(v.(int64)); return change(engine.PolicyChange{MaxPageSize: &n}) },
		"ProducerFlowControl": func(v any) error {
			f := v.(bool)
			return change(engine.PolicyChange{ProducerFlowControl: &f})
		},
		"MemoryLimit": func(v any) error { n := v.(int64); return change(engine.PolicyChange{MemoryLimit: &n}) },
	}
	switch d.Type {
	case message.Topic:
		b.class = "org.apache.activemq.broker.jmx.TopicView"
	case message.TempTopic:
		b.class = "org.apache.activemq.broker.jmx.TemporaryTopicView"
	case message.TempQueue:
		// The engine's message operations are for queues a client does
		// not own; a temporary queue belongs to its connection.
		b.class = "org.apache.activemq.broker.jmx.TemporaryQueueView"
	default:
		b.class = "org.apache.activemq.broker.jmx.QueueView"
		b.ops = func() []operation { return s.queueOps(d) }
		b.attrs = append(b.attrs, attribute{"Paused", "boolean", "Dispatch to consumers is paused", st(func(x engine.DestinationStats) any { return x.Paused })})
	}
	return b
}

// queueOps are QueueViewMBean's operations on the engine's admin API.
// They act on messages not dispatched to a consumer (engine/admin.go).
func (s *snapshot) queueOps(d message.Destination) []operation {
	e := s.h.e
	str := func(n string) argInfo { return argInfo{n, "java.lang.String", n} }
	integer := func(n string) argInfo { return argInfo{n, "int", n} }
	byID := func(a []any) (engine.MessageFilter, error) {
		id, err := stringArg(a[0])
		if err != nil {
			return nil, err
		}
		return func(m *message.Message, _ int32) bool { return m.ID == id }, nil
	}
	bySelector := func(a []any) (engine.MessageFilter, error) {
		text, err := stringArg(a[0])
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(text) == "" {
			return nil, nil // ActiveMQ: an empty selector matches every message
		}
		sel, err := selector.Parse(text)
		if err != nil {
			return nil, &jmxError{status: 500, typ: "javax.jms.InvalidSelectorException", msg: err.Error()}
		}
		return sel.Matches, nil
	}
	target := func(a any) (message.Destination, error) {
		n, err := stringArg(a)
		if err != nil {
			return message.Destination{}, err
		}
		return message.ParseQualified(n, message.Queue), nil
	}
	limit := func(a any) (int, error) {
		n, err := intArg(a)
		if err != nil {
			return 0, err
		}
		return int(n), nil
	}
	// one turns a count into the boolean of the by-id operations.
	one := func(n int, err error) (any, error) { return n > 0, err }
	count := func(n int, err error) (any, error) { return n, err }
	move := func(filter func([]any) (engine.MessageFilter, error), withMax, copyOnly, byOne bool) func([]any) (any, error) {
		return func(a []any) (any, error) {
			f, err := filter(a)
			if err != nil {
				return nil, err
			}
			to, err := target(a[1])
			if err != nil {
				return nil, err
			}
			max := -1
			if byOne {
				max = 1
			}
			if withMax {
				if max, err = limit(a[2]); err != nil {
					return nil, err
				}
			}
			var n int
			if copyOnly {
				n, err = e.CopyMessages(d, f, to, max)
			} else {
				n, err = e.MoveMessages(d, f, to, max)
			}
			if byOne {
				return one(n, err)
			}
			return count(n, err)
		}
	}
	browse := func(a []any) (any, error) {
		var f engine.MessageFilter
		if len(a) > 0 {
			var err error
			if f, err = bySelector(a); err != nil {
				return nil, err
			}
		}
		msgs, err := e.Browse(d, f, s.h.opts.MaxBrowseMessages)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(msgs))
		for i, m := range msgs {
			out[i] = compositeMessage(m)
		}
		return out, nil
	}
	return []operation{
		{name: "pause", desc: "pause dispatch to consumers", ret: "void", changes: true,
			run: func([]any) (any, error) { return nil, e.PauseDispatch(d) }},
		{name: "resume", desc: "resume dispatch to consumers if paused", ret: "void", changes: true,
			run: func([]any) (any, error) { return nil, e.ResumeDispatch(d) }},
		{name: "purge", desc: "Removes all of the messages in the queue.", ret: "void", changes: true,
			run: func([]any) (any, error) { _, err := e.Purge(d); return nil, err }},
		{name: "purge", desc: "Removes the first number of messages in the queue.", ret: "void", changes: true, args: []argInfo{{"number", "long", "number"}},
			run: func(a []any) (any, error) {
				n, err := intArg(a[0])
				if err != nil {
					return nil, err
				}
				_, err = e.RemoveMessages(d, nil, int(max(n, 0)))
				return nil, err
			}},
		{name: "removeMessage", desc: "Remove a message from the destination by JMS message ID.  If the message has been dispatched, it cannot be deleted and false is returned.",
			ret: "boolean", changes: true, args: []argInfo{str("messageId")},
			run: func(a []any) (any, error) {
				f, err := byID(a)
				if err != nil {
					return nil, err
				}
				return one(e.RemoveMessages(d, f, 1))
			}},
		{name: "removeMatchingMessages", desc: "Removes messages from the destination based on an SQL-92 selection on the message headers or XPATH on the body.",
			ret: "int", changes: true, args: []argInfo{str("selector")},
			run: func(a []any) (any, error) {
				f, err := bySelector(a)
				if err != nil {
					return nil, err
				}
				return count(e.RemoveMessages(d, f, -1))
			}},
		{name: "removeMatchingMessages", desc: "Removes up to a specified number of messages from the destination based on an SQL-92 selection on the message headers or XPATH on the body.",
			ret: "int", changes: true, args: []argInfo{str("selector"), integer("maximumMessages")},
			run: func(a []any) (any, error) {
				f, err := bySelector(a)
				if err != nil {
					return nil, err
				}
				n, err := limit(a[1])
				if err != nil {
					return nil, err
				}
				return count(e.RemoveMessages(d, f, n))
			}},
		{name: "copyMessageTo", desc: "Copies a message with the given JMS message ID into the specified destination.", ret: "boolean", changes: true,
			args: []argInfo{str("messageId"), str("destinationName")}, run: move(byID, false, true, true)},
		{name: "copyMatchingMessagesTo", desc: "Copies messages based on an SQL-92 selecton on the message headers or XPATH on the body into the specified destination.", ret: "int", changes: true,
			args: []argInfo{str("selector"), str("destinationName")}, run: move(bySelector, false, true, false)},
		{name: "copyMatchingMessagesTo", desc: "Copies up to a specified number of messages based on an SQL-92 selecton on the message headers or XPATH on the body into the specified destination.", ret: "int", changes: true,
			args: []argInfo{str("selector"), str("destinationName"), integer("maximumMessages")}, run: move(bySelector, true, true, false)},
		{name: "moveMessageTo", desc: "Moves a message with the given JMS message ID into the specified destination.", ret: "boolean", changes: true,
			args: []argInfo{str("messageId"), str("destinationName")}, run: move(byID, false, false, true)},
		{name: "moveMatchingMessagesTo", desc: "Moves messages based on an SQL-92 selecton on the message headers or XPATH on the body into the specified destination.", ret: "int", changes: true,
			args: []argInfo{str("selector"), str("destinationName")}, run: move(bySelector, false, false, false)},
		{name: "moveMatchingMessagesTo", desc: "Moves up to a specified number of messages based on an SQL-92 selecton on the message headers or XPATH on the body into the specified destination.", ret: "int", changes: true,
			args: []argInfo{str("selector"), str("destinationName"), integer("maximumMessages")}, run: move(bySelector, true, false, false)},
		{name: "retryMessages", desc: "Retries messages sent to the DLQ", ret: "int", changes: true,
			run: func([]any) (any, error) { return count(e.RetryMessages(d, nil, -1)) }},
		// A Wharf extension (docs/http.md): ActiveMQ's QueueViewMBean has
		// retryMessages() only. It retries at most the given number, so
		// that a client can replay a large DLQ in parts and show progress.
		{name: "retryMessages", desc: "Wharf extension: retries up to the given number of messages sent to the DLQ; returns how many went back", ret: "int", changes: true,
			args: []argInfo{integer("maximumMessages")},
			run: func(a []any) (any, error) {
				n, err := limit(a[0])
				if err != nil {
					return nil, err
				}
				if n <= 0 {
					return nil, badRequest("retryMessages(int): maximumMessages %d is not positive", n)
				}
				return count(e.RetryMessages(d, nil, n))
			}},
		{name: "retryMessage", desc: "Moves a message with the given JMS message back to its original destination", ret: "boolean", changes: true, args: []argInfo{str("messageId")},
			run: func(a []any) (any, error) {
				f, err := byID(a)
				if err != nil {
					return nil, err
				}
				return one(e.RetryMessages(d, f, 1))
			}},
		{name: "browse", desc: "An array of all messages in the destination. Not HTML friendly.", ret: "[Ljavax.management.openmbean.CompositeData;", run: browse},
		{name: "browse", desc: "An array of all messages in the destination based on an SQL-92 selection on the message headers or XPATH on the body. Not HTML friendly.",
			ret: "[Ljavax.management.openmbean.CompositeData;", args: []argInfo{str("selector")}, run: browse},
		{name: "getMessage", desc: "View a message from the destination by JMS message ID.", ret: "javax.management.openmbean.CompositeData", args: []argInfo{str("messageId")},
			run: func(a []any) (any, error) {
				f, err := byID(a)
				if err != nil {
					return nil, err
				}
				msgs, err := e.Browse(d, f, 1)
				if err != nil || len(msgs) == 0 {
					return nil, err
				}
				return compositeMessage(msgs[0]), nil
			}},
	}
}

// compositeMessage is a message as ActiveMQ's OpenTypeSupport makes it a
// CompositeData and Jolokia renders that: an object of its items.
func compositeMessage(q engine.QueuedMessage) map[string]any {
	m := q.Msg
	mode := "NON-PERSISTENT"
	if m.Persistent {
		mode = "PERSISTENT"
	}
	var replyTo any
	if !m.ReplyTo.IsZero() {
		replyTo = m.ReplyTo.String()
	}
	out := map[string]any{
		"JMSMessageID":      m.ID,
		"JMSDestination":    m.Destination.String(),
		"JMSCorrelationID":  m.CorrelationID,
		"JMSReplyTo":        replyTo,
		"JMSType":           m.Type,
		"JMSDeliveryMode":   mode,
		"JMSExpiration":     m.Expiration,
		"JMSPriority":       int(m.Priority),
		"JMSRedelivered":    q.Redeliveries > 0,
		"JMSTimestamp":      time.UnixMilli(m.Timestamp).UTC().Format(time.RFC3339),
		"JMSXGroupID":       m.GroupID,
		"JMSXGroupSeq":      int(m.GroupSeq),
		"JMSXUserID":        m.UserID,
		"RedeliveryCounter": int(q.Redeliveries),
		"PropertiesText":    propertiesText(m.Props),
	}
	if !m.OriginalDestination.IsZero() {
		out["OriginalDestination"] = m.OriginalDestination.String()
	}
	switch m.BodyType {
	case message.TextBody:
		out["Text"] = string(m.Body)
	case message.BytesBody:
		out["BodyLength"] = int64(len(m.Body))
	}
	return out
}

// propertiesText is the message properties as Java's Map.toString writes
// them ("{a=1, b=x}"), sorted here so that it reads the same every time.
func propertiesText(ps message.Properties) string {
	parts := make([]string, 0, len(ps))
	for _, p := range ps {
		parts = append(parts, p.Name+"="+p.Value.Text())
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ", ") + "}"
}
