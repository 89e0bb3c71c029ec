package http

import (
	"bufio"
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"

	"wharf/engine"
	"wharf/engine/message"
)

// This file serves the XML feeds of ActiveMQ's web console
// (activemq-web-console webapp/xml/queues.jsp, topics.jsp,
// subscribers.jsp), which monitoring agents poll: Telegraf's activemq
// input reads all three, netdata's activemq collector the first two. The
// elements, attributes and their order are ActiveMQ 5.17's; so is the
// content type, text/xml;charset=ISO-8859-1. ActiveMQ writes a name
// outside ISO-8859-1 as a '?', and one outside ASCII in bytes that Go's
// XML decoder (both agents') refuses; Wharf writes every character
// outside ASCII as a character reference, which parses as the same
// name under either charset.
//
// ActiveMQ lists the destinations in no particular order; Wharf sorts
// them by name so that successive polls read alike.

// feedContentType is what the JSPs declare (<%@ page contentType %>).
const feedContentType = "text/xml;charset=ISO-8859-1"

// feed serves one XML feed of the ready broker, 503 before.
func (s *Server) feed(write func(*bufio.Writer, *engine.Engine)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := s.engine.Load()
		if e == nil {
			http.Error(w, "503 service unavailable: the broker is starting or stopping", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", feedContentType)
		bw := bufio.NewWriter(w)
		write(bw, e)
		bw.Flush()
	})
}

// destinationsOf returns the stats of the destinations of type t, sorted
// by name: plain queues (queues.jsp lists BrokerView's Queues, not its
// TemporaryQueues), or plain topics, the advisory topics among them (as
// BrokerView's Topics).
func destinationsOf(e *engine.Engine, t message.DestType) []engine.DestinationSnapshot {
	all := e.AllStats()
	out := all[:0]
	for _, d := range all {
		if d.Destination.Type == t {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b engine.DestinationSnapshot) int { return cmp.Compare(a.Destination.Name, b.Destination.Name) })
	return out
}

// writeQueuesFeed writes queues.jsp: each queue's size, consumers,
// enqueues and dequeues (QueueViewMBean QueueSize, ConsumerCount,
// EnqueueCount, DequeueCount), and the links to its RSS and Atom feeds as
// ActiveMQ 5.17 writes them (its c:out escapes the "&amp;" of the JSP a
// second time). Wharf does not serve those feeds.
func writeQueuesFeed(w *bufio.Writer, e *engine.Engine) {
	w.WriteString("<queues>\n")
	for _, d := range destinationsOf(e, message.Queue) {
		name := d.Destination.Name
		w.WriteString(`<queue name="`)
		writeEscaped(w, name)
		w.WriteString("\">\n\n")
		writeDestStats(w, d.Stats)
		w.WriteString("\n\n\n  <feed>\n    <atom>")
		writeEscaped(w, "queueBrowse/"+name+"?view=rss&amp;feedType=atom_1.0")
		w.WriteString("</atom>\n    <rss>")
		writeEscaped(w, "queueBrowse/"+name+"?view=rss&amp;feedType=rss_2.0")
		w.WriteString("</rss>\n  </feed>\n</queue>\n")
	}
	w.WriteString("</queues>\n")
}

// writeTopicsFeed writes topics.jsp: each topic's stats as for a queue.
// ActiveMQ 5.17's JSP leaves a space after the name in the name
// attribute; so does Wharf, since agents pass the name on as they read it
// (Telegraf's topic tag keeps the space).
func writeTopicsFeed(w *bufio.Writer, e *engine.Engine) {
	w.WriteString("<topics>\n")
	for _, d := range destinationsOf(e, message.Topic) {
		w.WriteString(`<topic name="`)
		writeEscaped(w, d.Destination.Name)
		w.WriteString(" \">\n\n")
		writeDestStats(w, d.Stats)
		w.WriteString("\n\n</topic>\n")
	}
	w.WriteString("</topics>\n")
}

func writeDestStats(w *bufio.Writer, st engine.DestinationStats) {
	w.WriteString(`  <stats size="`)
	w.WriteString(strconv.FormatInt(st.QueueSize, 10))
	w.WriteString("\"\n         consumerCount=\"")
	w.WriteString(strconv.FormatInt(st.ConsumerCount, 10))
	w.WriteString("\"\n         enqueueCount=\"")
	w.WriteString(strconv.FormatInt(st.EnqueueCount, 10))
	w.WriteString("\"\n         dequeueCount=\"")
	w.WriteString(strconv.FormatInt(st.DequeueCount, 10))
	w.WriteString(`"/>`)
}

// writeSubscribersFeed writes subscribers.jsp: the durable topic
// subscriptions, the active ones (BrokerView DurableTopicSubscribers)
// first, then the inactive ones, each by client id and subscription name.
// An inactive subscription's connectionId is "NOTSET" and its selector
// "" when it has none, as ActiveMQ's SubscriptionView reports them.
//
// pendingQueueSize and dispatchedQueueSize are what the subscription holds;
// enqueueCounter, dispatchedCounter and dequeueCounter the messages it
// matched, was sent and acknowledged since the broker started
// (engine.SubCounters; 0 with <broker enableStatistics="false">).
func writeSubscribersFeed(w *bufio.Writer, e *engine.Engine) {
	subs := e.DurableSubsStats()
	slices.SortFunc(subs, func(a, b engine.DurableSubStats) int {
		if a.Active != b.Active {
			if a.Active {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.Key.ClientID, b.Key.ClientID), cmp.Compare(a.Key.Name, b.Key.Name))
	})
	w.WriteString("<subscribers>\n")
	for _, sub := range subs {
		conn, active := "NOTSET", "no"
		if sub.Active {
			conn, active = sub.ConnectionID, "yes"
		}
		attr := func(name, value string, sep string) {
			w.WriteString(name)
			w.WriteString(`="`)
			writeEscaped(w, value)
			w.WriteString(`"`)
			w.WriteString(sep)
		}
		const indent = "\n            "
		w.WriteString("<subscriber ")
		attr("clientId", sub.Key.ClientID, " "+indent)
		attr("subscriptionName", sub.Key.Name, " "+indent)
		attr("connectionId", conn, indent)
		attr("destinationName", sub.Destination.Name, " "+indent)
		attr("selector", sub.Selector, " "+indent)
		attr("active", active, " >\n")
		const statIndent = "\n         "
		w.WriteString("  <stats ")
		attr("pendingQueueSize", strconv.Itoa(sub.Pending), statIndent)
		attr("dispatchedQueueSize", strconv.Itoa(sub.Dispatched), statIndent)
		attr("dispatchedCounter", strconv.FormatInt(sub.DispatchedCounter, 10), statIndent)
		attr("enqueueCounter", strconv.FormatInt(sub.EnqueueCounter, 10), statIndent)
		attr("dequeueCounter", strconv.FormatInt(sub.DequeueCounter, 10), "/>\n\n</subscriber>\n")
	}
	w.WriteString("</subscribers>\n")
}

// writeEscaped writes s as XML attribute or element text in ASCII: the
// five characters c:out escapes as it does (&lt; &gt; &amp; &#039;
// &#034;), every other character outside printable ASCII as a character
// reference, and the characters XML 1.0 forbids (most controls, invalid
// UTF-8) as U+FFFD, so that the feed always parses.
func writeEscaped(w *bufio.Writer, s string) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == '<':
			w.WriteString("&lt;")
		case r == '>':
			w.WriteString("&gt;")
		case r == '&':
			w.WriteString("&amp;")
		case r == '\'':
			w.WriteString("&#039;")
		case r == '"':
			w.WriteString("&#034;")
		case r >= 0x20 && r < 0x7f:
			w.WriteByte(byte(r))
		default:
			if !xmlChar(r) || (r == utf8.RuneError && n == 1) {
				r = utf8.RuneError
			}
			w.WriteString("&#x")
			w.WriteString(strconv.FormatInt(int64(r), 16))
			w.WriteByte(';')
		}
	}
}

// xmlChar reports whether XML 1.0 allows r (its Char production).
func xmlChar(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' ||
		(r >= 0x20 && r <= 0xd7ff) || (r >= 0xe000 && r <= 0xfffd) || (r >= 0x10000 && r <= 0x10ffff)
}
