package http

import "errors"

// Errors of Listen: why a non-loopback listener is refused.
var (
	// ErrNoLogin: authentication is off (jetty.xml's Constraint
	// authenticate="false", YAML http.authenticate: false).
	ErrNoLogin = errors.New("http: authentication is off")
	// ErrNoUsers: nobody can log in (no realm users and no
	// authentication plugin).
	ErrNoUsers = errors.New("http: no user can log in")
	// ErrDefaultAdmin: admin/admin logs in, as in the
	// jetty-realm.properties ActiveMQ ships.
	ErrDefaultAdmin = errors.New("http: admin/admin still logs in")
)
