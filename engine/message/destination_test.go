package message

import "testing"

func TestMessageDestinationWildcards(t *testing.T) {
	cases := []struct {
		pattern, name string
		wild, match   bool
	}{
		{"a.b", "a.b", false, true},
		{"a.*", "a.b", true, true},
		{"a.*", "a.b.c", true, false},
		{"a.>", "a", true, true},
		{"a.>", "a.b.c", true, true},
		{">", "x.y", true, true},
		{"*.b", "a.b", true, true},
		{"a*.b", "ab.b", false, false},
		{"a.b>", "a.b>", false, true},
		{"a,b.*", "a", false, true}, // a composite: its elements match
		{"a,b.*", "b.c", false, true},
		{"a,b.*", "c", false, false},
		{"a.*.c", "a.b.c", true, true},
		{"a.*.c", "a.b.d", true, false},
	}
	for _, c := range cases {
		p := TopicDest(c.pattern)
		if got := p.IsWildcard(); got != c.wild {
			t.Errorf("%q IsWildcard = %v, want %v", c.pattern, got, c.wild)
		}
		if got := p.Matches(TopicDest(c.name)); got != c.match {
			t.Errorf("%q matches %q = %v, want %v", c.pattern, c.name, got, c.match)
		}
		if QueueDest(c.pattern).Matches(TopicDest(c.name)) {
			t.Errorf("queue pattern %q matched topic %q", c.pattern, c.name)
		}
	}
}

func TestMessageValueText(t *testing.T) {
	cases := []struct {
		v    Value
		want string
	}{
		{BoolValue(true), "true"},
		{IntValue(-3), "-3"},
		{LongValue(1 << 40), "1099511627776"},
		{DoubleValue(1.5), "1.5"},
		{DoubleValue(2), "2.0"},
		{FloatValue(0.25), "0.25"},
		{StringValue("x"), "x"},
	}
	for _, c := range cases {
		if got := c.v.Text(); got != c.want {
			t.Errorf("%v Text() = %q, want %q", c.v.Kind, got, c.want)
		}
	}
}
