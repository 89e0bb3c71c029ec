package stomp

import (
	"encoding/json"
	"unicode"
	"unicode/utf8"

	"wharf/engine/message"
)

// advisoryJSON renders an advisory's payload the way ActiveMQ's STOMP
// converter always renders advisory messages: as JSON, the command's type
// naming a single object of its fields ({"ConsumerInfo":{...}}).
//
// DEVIATION: ActiveMQ serialises the whole Java command with XStream and
// Jettison (nested id objects, commandId, responseRequired...); Wharf writes
// the command's meaningful fields, flat, with the same lower-camel names.
func advisoryJSON(a *message.Advisory) []byte {
	fields := map[string]any{}
	for _, f := range a.Fields {
		fields[lowerFirst(f.Name)] = jsonValue(f.Value)
	}
	name := a.Command
	if a.Message != nil {
		name = "ActiveMQMessage"
		m := a.Message
		fields["messageId"] = m.ID
		fields["destination"] = m.Destination.String()
		fields["persistent"] = m.Persistent
		fields["timestamp"] = m.Timestamp
		fields["expiration"] = m.Expiration
		fields["priority"] = m.Priority
		if m.CorrelationID != "" {
			fields["correlationId"] = m.CorrelationID
		}
		if !m.OriginalDestination.IsZero() {
			fields["originalDestination"] = m.OriginalDestination.String()
		}
		props := map[string]any{}
		for _, p := range m.Props {
			props[p.Name] = jsonValue(p.Value)
		}
		if len(props) > 0 {
			fields["properties"] = props
		}
	}
	b, err := json.Marshal(map[string]any{name: fields})
	if err != nil {
		return []byte("{}")
	}
	return b
}

func jsonValue(v message.Value) any {
	switch {
	case v.Kind == message.Bool:
		return v.Bool()
	case v.IsInteger():
		return v.Int()
	case v.IsFloat():
		return v.Float()
	case v.Kind == message.Null:
		return nil
	}
	return v.Text()
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}
