package storetest

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"wharf/engine"
	"wharf/engine/message"
)

// diffMessage lists, one per line, every stored field where got differs from
// want ("Priority: got 4, want 7"). Origin and Original are not compared
// (see the package comment). An empty result means equal.
func diffMessage(got, want *message.Message) []string {
	if got == nil || want == nil {
		if got == want {
			return nil
		}
		return []string{fmt.Sprintf("message: got %v, want %v", got, want)}
	}
	var d []string
	field := func(name string, g, w any) {
		if g != w {
			d = append(d, fmt.Sprintf("%s: got %#v, want %#v", name, g, w))
		}
	}
	field("ID", got.ID, want.ID)
	field("Destination", got.Destination, want.Destination)
	field("ReplyTo", got.ReplyTo, want.ReplyTo)
	field("CorrelationID", got.CorrelationID, want.CorrelationID)
	field("Type", got.Type, want.Type)
	field("Priority", got.Priority, want.Priority)
	field("Persistent", got.Persistent, want.Persistent)
	field("Timestamp", got.Timestamp, want.Timestamp)
	field("Expiration", got.Expiration, want.Expiration)
	field("UserID", got.UserID, want.UserID)
	field("GroupID", got.GroupID, want.GroupID)
	field("GroupSeq", got.GroupSeq, want.GroupSeq)
	field("OriginalDestination", got.OriginalDestination, want.OriginalDestination)
	field("RedeliveryCounter", got.RedeliveryCounter, want.RedeliveryCounter)
	field("BodyType", got.BodyType, want.BodyType)
	if !bytes.Equal(got.Body, want.Body) {
		d = append(d, fmt.Sprintf("Body: got %q, want %q", got.Body, want.Body))
	}
	d = append(d, diffProps("Props", got.Props, want.Props)...)
	d = append(d, diffProps("Map", got.Map, want.Map)...)
	if len(got.List) != len(want.List) {
		d = append(d, fmt.Sprintf("List: got %d values %s, want %d values %s",
			len(got.List), valuesString(got.List), len(want.List), valuesString(want.List)))
	} else {
		for i := range got.List {
			if !valueEqual(got.List[i], want.List[i]) {
				d = append(d, fmt.Sprintf("List[%d]: got %s, want %s", i, valueString(got.List[i]), valueString(want.List[i])))
			}
		}
	}
	return d
}

// diffProps compares property lists by name: JMS properties and map entries
// are unordered, and a store that keeps messages in OpenWire (KahaDB) does
// not keep the sender's order.
func diffProps(what string, got, want message.Properties) []string {
	byName := func(p message.Properties) message.Properties {
		p = slices.Clone(p)
		slices.SortStableFunc(p, func(a, b message.Property) int { return strings.Compare(a.Name, b.Name) })
		return p
	}
	got, want = byName(got), byName(want)
	if len(got) != len(want) {
		return []string{fmt.Sprintf("%s: got %d entries %s, want %d entries %s",
			what, len(got), propsString(got), len(want), propsString(want))}
	}
	var d []string
	for i := range got {
		if got[i].Name != want[i].Name || !valueEqual(got[i].Value, want[i].Value) {
			d = append(d, fmt.Sprintf("%s[%d]: got %s=%s, want %s=%s", what, i,
				got[i].Name, valueString(got[i].Value), want[i].Name, valueString(want[i].Value)))
		}
	}
	return d
}

// valueEqual compares kind and content; Int exposes the numeric bits of
// every numeric and boolean kind, so floats compare bit for bit (NaN too).
func valueEqual(a, b message.Value) bool {
	return a.Kind == b.Kind && a.Int() == b.Int() && a.Str() == b.Str() && bytes.Equal(a.Raw(), b.Raw())
}

func valueString(v message.Value) string {
	if v.Kind == message.Bytes {
		return fmt.Sprintf("%s(%x)", v.Kind, v.Raw())
	}
	return fmt.Sprintf("%s(%s)", v.Kind, v.Text())
}

func valuesString(vs []message.Value) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = valueString(v)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func propsString(ps message.Properties) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.Name + "=" + valueString(p.Value)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// sortedKeys returns a sorted copy of keys, so that sets compare as slices.
func sortedKeys(keys []engine.SubKey) []engine.SubKey {
	s := slices.Clone(keys)
	slices.SortFunc(s, compareKeys)
	return s
}

func compareKeys(a, b engine.SubKey) int {
	if c := strings.Compare(a.ClientID, b.ClientID); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

func keysString(keys []engine.SubKey) string {
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = k.String()
	}
	return "[" + strings.Join(s, " ") + "]"
}
