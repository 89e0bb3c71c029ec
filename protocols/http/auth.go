package http

import (
	"context"
	"net/http"
	"slices"
	"strconv"
)

// Authenticator checks a user name and password and returns the user's
// roles: jetty-realm.properties roles, or the groups the broker's
// authentication plugin gives. A refusal is any error. It is called from
// request goroutines concurrently.
type Authenticator func(user, password string) (roles []string, err error)

// Login is who made a request.
type Login struct {
	// User is the name the request logged in with; "" when
	// authentication is off.
	User string
	// Roles are the user's roles; nil when authentication is off.
	Roles []string
	// open: authentication is off, and every request may do everything
	// (loopback only, see Listen).
	open bool
}

// Admin reports whether the login may write: it holds role admin (Jetty's
// realm, jetty.xml's adminSecurityConstraint) or admins (the group of
// ActiveMQ's stock users.properties), or authentication is off.
func (l Login) Admin() bool {
	return l.open || slices.Contains(l.Roles, "admin") || slices.Contains(l.Roles, "admins")
}

// reader reports whether the login may read: a role of jetty.xml's
// securityConstraint (user, admin) or its plural, a group of ActiveMQ's
// users.properties.
func (l Login) reader() bool {
	return l.Admin() || slices.Contains(l.Roles, "user") || slices.Contains(l.Roles, "users")
}

type loginKey struct{}

// LoginFrom returns the login of a request that went through the
// server's authentication; the zero Login (no roles) otherwise.
func LoginFrom(r *http.Request) Login {
	l, _ := r.Context().Value(loginKey{}).(Login)
	return l
}

// RequireAdmin serves h only to a login with the admin role (Login.Admin)
// and answers 403 Forbidden to others: wrap the handlers that change the
// broker with it.
func RequireAdmin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !LoginFrom(r).Admin() {
			http.Error(w, "403 forbidden: this needs the admin role", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// authenticated serves h to requests that log in with HTTP Basic
// authentication (RFC 7617) as a user who may read, and answers 401 with a
// challenge naming the realm to the others, 403 to a user without a
// reading role.
func (s *Server) authenticated(h http.Handler) http.Handler {
	challenge := "Basic realm=" + strconv.Quote(s.o.RealmName) + `, charset="UTF-8"`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.open() {
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), loginKey{}, Login{open: true})))
			return
		}
		user, password, ok := r.BasicAuth()
		var roles []string
		var err error
		if ok {
			roles, err = s.o.Auth(user, password)
		}
		if !ok || err != nil {
			if ok {
				s.log.Debug("login refused", "remote", r.RemoteAddr, "user", user, "err", err)
			}
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "401 unauthorized", http.StatusUnauthorized)
			return
		}
		l := Login{User: user, Roles: roles}
		if !l.reader() {
			http.Error(w, "403 forbidden: this needs the user or admin role", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), loginKey{}, l)))
	})
}

// open reports whether requests are served without a login.
func (s *Server) open() bool { return !s.o.Authenticate || s.o.Auth == nil }
