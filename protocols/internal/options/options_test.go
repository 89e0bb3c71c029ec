package options

import "testing"

func TestPositiveInt(t *testing.T) {
	for in, want := range map[string]int{"1": 1, " 42 ": 42} {
		if got, err := PositiveInt(in); err != nil || got != want {
			t.Errorf("PositiveInt(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "-3", "", "ten", "1.5"} {
		if _, err := PositiveInt(in); err == nil {
			t.Errorf("PositiveInt(%q) accepted", in)
		}
	}
}
