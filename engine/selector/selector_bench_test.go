package selector

import (
	"testing"

	"wharf/engine/message"
)

func BenchmarkSelectorMatch(b *testing.B) {
	m := &message.Message{Type: "widget", Priority: 4}
	m.Props.Set("color", message.StringValue("red"))
	m.Props.Set("weight", message.IntValue(42))
	m.Props.Set("size", message.StringValue("large"))
	m.Props.Set("price", message.DoubleValue(19.99))
	m.Props.Set("region", message.StringValue("eu-west"))
	s, err := Parse("color = 'red' AND weight > 10")
	if err != nil {
		b.Fatal(err)
	}
	if !s.Matches(m, 0) {
		b.Fatal("selector does not match")
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Matches(m, 0)
	}
}

func BenchmarkSelectorParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("color = 'red' AND weight > 10 AND region LIKE 'eu-%' AND size IN ('large', 'xl')"); err != nil {
			b.Fatal(err)
		}
	}
}
