package message

import "testing"

// Text is String.valueOf: a double property reaches a STOMP header in
// Java's notation, the same that selectors compare with.
func TestValueTextJavaNotation(t *testing.T) {
	for _, tc := range []struct {
		v    Value
		want string
	}{
		{DoubleValue(1e10), "1.0E10"}, {DoubleValue(0.0001), "1.0E-4"}, {DoubleValue(12.5), "12.5"},
		{DoubleValue(3), "3.0"}, {FloatValue(0.1), "0.1"}, {FloatValue(2e7), "2.0E7"},
	} {
		if got := tc.v.Text(); got != tc.want {
			t.Errorf("%v.Text() = %q, want %q", tc.v.Float(), got, tc.want)
		}
	}
}
