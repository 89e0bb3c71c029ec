package marshal

import (
	"fmt"
	"sort"
	"strings"

	"wharf/engine/message"
	"wharf/protocols/openwire/wire"
)

// A network bridge's BrokerInfo carries its connector's settings in
// networkProperties, a java.util.Properties text (ActiveMQ's
// DemandForwardingBridgeSupport.startRemoteBridge writes it with
// MarshallingSupport.propertiesToString). The accepting broker reads it
// (TransportConnection.getNetworkConfiguration): with syncDurableSubs it
// answers with a BrokerSubscriptionInfo of its durable subscriptions on
// the bridge's dynamically included destinations (NetworkBridgeUtils).

// NetworkProperties writes props as java.util.Properties.store does,
// without the date comment; keys in order.
func NetworkProperties(props map[string]string) string {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("#\n")
	for _, k := range keys {
		b.WriteString(propEscape(k, true))
		b.WriteByte('=')
		b.WriteString(propEscape(props[k], false))
		b.WriteByte('\n')
	}
	return b.String()
}

func propEscape(s string, key bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\\' || r == ':' || r == '=' || r == '#' || r == '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == ' ' && (key || i == 0):
			b.WriteString(`\ `)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r > 0x7e:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ParseNetworkProperties reads a java.util.Properties text (the subset
// propertiesToString writes: one key=value per line, comments,
// backslash escapes; continued lines are joined).
func ParseNetworkProperties(s string) map[string]string {
	out := map[string]string{}
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for strings.HasSuffix(line, `\`) && !strings.HasSuffix(line, `\\`) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		// The key ends at the first unescaped '=', ':' or blank.
		end, esc := len(line), false
		for j := 0; j < len(line); j++ {
			c := line[j]
			if esc {
				esc = false
				continue
			}
			if c == '\\' {
				esc = true
				continue
			}
			if c == '=' || c == ':' || c == ' ' || c == '\t' {
				end = j
				break
			}
		}
		key, rest := line[:end], line[end:]
		rest = strings.TrimLeft(rest, " \t\f")
		if rest != "" && (rest[0] == '=' || rest[0] == ':') {
			rest = strings.TrimLeft(rest[1:], " \t\f")
		}
		out[propUnescape(key)] = propUnescape(rest)
	}
	return out
}

func propUnescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			var r rune
			if i+4 < len(s) {
				if _, err := fmt.Sscanf(s[i+1:i+5], "%04x", &r); err == nil {
					b.WriteRune(r)
					i += 4
					continue
				}
			}
			b.WriteByte('u')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// DestinationList writes destinations as
// StringToListOfActiveMQDestinationConverter does: "[topic://A, queue://B]".
func DestinationList(ds []message.Destination) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// ParseDestinationList reads DestinationList's form; a name without a
// prefix is a queue, and URI options (?forceDurable=true) are dropped.
func ParseDestinationList(s string) []message.Destination {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return nil
	}
	var out []message.Destination
	for _, item := range strings.Split(s[1:len(s)-1], ",") {
		item = strings.TrimSpace(item)
		if i := strings.IndexByte(item, '?'); i >= 0 {
			item = item[:i]
		}
		if item != "" {
			out = append(out, message.ParseQualified(item, message.Queue))
		}
	}
	return out
}

// MatchesIncluded is NetworkBridgeUtils.matchesNetworkConfig: d is one of
// the dynamically included destinations (of its kind); an empty list
// matches nothing.
func MatchesIncluded(included []message.Destination, d message.Destination) bool {
	for _, p := range included {
		if p.Type.IsTopic() == d.Type.IsTopic() && p.Matches(d) {
			return true
		}
	}
	return false
}

// DurableSub is one durable subscription for a BrokerSubscriptionInfo.
type DurableSub struct {
	ClientID, Name, Selector string
	Destination              message.Destination
	NoLocal                  bool
}

// BrokerSubscriptionInfo builds the command NetworkBridgeUtils
// getBrokerSubscriptionInfo sends: brokerName's durable subscriptions
// that match included, each as a ConsumerInfo with its client id and
// subscription name.
func BrokerSubscriptionInfo(brokerID, brokerName string, subs []DurableSub, included []message.Destination) *wire.BrokerSubscriptionInfo {
	bsi := &wire.BrokerSubscriptionInfo{BrokerId: &wire.BrokerId{Value: brokerID}, BrokerName: brokerName}
	for i, s := range subs {
		if !MatchesIncluded(included, s.Destination) {
			continue
		}
		bsi.SubscriptionInfos = append(bsi.SubscriptionInfos, &wire.ConsumerInfo{
			ConsumerId:       &wire.ConsumerId{ConnectionId: "ID:" + brokerName + "-durable-sync", SessionId: 1, Value: int64(i + 1)},
			Destination:      DestFromEngine(s.Destination),
			ClientId:         s.ClientID,
			SubscriptionName: s.Name,
			Selector:         s.Selector,
			NoLocal:          s.NoLocal,
			PrefetchSize:     100,
		})
	}
	return bsi
}
