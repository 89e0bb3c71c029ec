// Package samesite tells a request a browser made for another site's page
// from one its own pages or a non-browser client made. A browser holding
// the operator's credentials (cached basic authentication, a cookie) sends
// them along with a request another site's page makes — a GET from an
// <img> included — and such a request carries Sec-Fetch-Site cross-site
// (or same-site) or an Origin that is not this server's. Clients that are
// not browsers (curl, hawtio's proxy, scripts) send neither. The Jolokia
// API and the REST message API refuse what Foreign reports.
package samesite

import (
	"net/http"
	"net/url"
)

// Foreign reports whether r comes from another site's page, and if so
// what says so ("another site's page" or "origin ORIGIN"), for the error.
func Foreign(r *http.Request) (why string, foreign bool) {
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		return "another site's page", true
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if u, err := url.Parse(origin); err != nil || u.Host != r.Host {
			return "origin " + origin, true
		}
	}
	return "", false
}
