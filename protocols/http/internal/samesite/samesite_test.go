package samesite

import (
	"net/http/httptest"
	"testing"
)

func TestForeign(t *testing.T) {
	for _, tc := range []struct {
		name, site, origin string
		want               bool
	}{
		{"curl", "", "", false},
		{"own page", "same-origin", "http://example.com", false},
		{"typed in the address bar", "none", "", false},
		{"other site", "cross-site", "", true},
		{"sibling subdomain", "same-site", "", true},
		{"foreign origin", "", "http://evil.example", true},
		{"unparsable origin", "", "http://[::1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "http://example.com/api/jolokia/", nil)
			if tc.site != "" {
				r.Header.Set("Sec-Fetch-Site", tc.site)
			}
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			if why, got := Foreign(r); got != tc.want || got == (why == "") {
				t.Errorf("Foreign = %q, %v; want %v", why, got, tc.want)
			}
		})
	}
}
