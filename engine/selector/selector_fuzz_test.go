package selector

import (
	"errors"
	"math"
	"testing"

	"wharf/engine/message"
)

// fuzzMessages are evaluated against every selector that parses.
func fuzzMessages() []*message.Message {
	odd := &message.Message{}
	for _, name := range []string{"a", "b", "c", "x", "color", "weight", "flag", "num"} {
		odd.Props.Set(name, message.DoubleValue(math.NaN()))
	}
	odd.Props.Set("s", message.StringValue("%_\\'\u00e9\U0001F600"))
	odd.Props.Set("i", message.IntValue(math.MinInt32))
	odd.Props.Set("l", message.LongValue(math.MinInt64))
	odd.Props.Set("z", message.CharValue('z'))
	return []*message.Message{testMessage(), {}, odd}
}

func FuzzSelectorParse(f *testing.F) {
	for _, tc := range matchCases {
		f.Add(tc.sel)
	}
	for _, tc := range syntaxCases {
		if len(tc.sel) < 1024 {
			f.Add(tc.sel)
		}
	}
	msgs := fuzzMessages()
	f.Fuzz(func(t *testing.T, sel string) {
		for _, o := range []Options{{}, {ConvertStringExpressions: true}} {
			s, err := ParseWith(sel, o)
			if err != nil {
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("error %T is not a *SyntaxError: %v", err, err)
				}
				if se.Pos < 0 || se.Pos > len(sel)+1 {
					t.Fatalf("Pos %d outside the selector (%d bytes)", se.Pos, len(sel))
				}
				if se.Selector != sel || se.Msg == "" {
					t.Fatalf("bad SyntaxError %+v", se)
				}
				continue
			}
			if s.String() != sel {
				t.Fatalf("String() = %q, want %q", s.String(), sel)
			}
			for _, m := range msgs {
				for _, r := range []int32{0, 3} {
					s.Matches(m, r)
				}
			}
		}
	})
}
