package config

import "sort"

// suggest returns the name in known that is one edit away from name (a
// letter inserted, deleted or replaced, or two neighbours swapped), for a
// "did you mean" hint on a misspelt attribute, element or key; "" when
// there is none. Of several, the first in sorted order is returned, so
// that the message is the same from one run to the next.
func suggest(name string, known []string) string {
	var hits []string
	for _, k := range known {
		if k != name && oneEdit(name, k) {
			hits = append(hits, k)
		}
	}
	if len(hits) == 0 {
		return ""
	}
	sort.Strings(hits)
	return hits[0]
}

// oneEdit reports whether a and b differ by at most one insertion,
// deletion, substitution or transposition of adjacent bytes.
func oneEdit(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > 1 {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if i == len(a) {
		return true // equal, or b has one byte more at the end
	}
	if len(a) < len(b) {
		return a[i:] == b[i+1:] // one byte inserted at i
	}
	if a[i+1:] == b[i+1:] {
		return true // replaced at i
	}
	// Swapped with the next byte.
	return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
}
