package security

import (
	"crypto/md5"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"wharf/engine"
)

// Realm is the users file of Jetty's HashLoginService, which ActiveMQ's
// jetty.xml points at conf/jetty-realm.properties: a java.util.Properties
// file of "user: password[, role ...]" lines, read as Jetty's
// PropertyUserStore reads it (the value is trimmed, the password is what
// comes before the first comma, the roles are the rest, each trimmed). It
// logs in the users of the web server (protocols/http). A Realm does not
// change once loaded; its methods are safe from any goroutine.
type Realm struct {
	users map[string]realmUser
}

type realmUser struct {
	// password is the plain password, or the MD5 digest when md5 is set
	// (Jetty's "MD5:" credential, lowercase hex).
	password string
	md5      bool
	roles    []string
}

// LoadRealm reads a jetty-realm.properties file.
func LoadRealm(path string) (*Realm, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("realm: %w", err)
	}
	r, err := ParseRealm(b)
	if err != nil {
		return nil, fmt.Errorf("realm %s: %w", path, err)
	}
	return r, nil
}

// ParseRealm reads the content of a jetty-realm.properties file. A
// password written "MD5:<hex>" is compared by its digest; Jetty's "OBF:"
// and "CRYPT:" forms are refused with ErrRealmCredential naming the user.
func ParseRealm(b []byte) (*Realm, error) {
	p, err := parseProperties(b)
	if err != nil {
		return nil, err
	}
	r := &Realm{users: make(map[string]realmUser, len(p.keys))}
	for _, k := range p.keys {
		v, _ := p.get(k)
		user := strings.TrimSpace(k)
		cred, roles, _ := strings.Cut(strings.TrimSpace(v), ",")
		u := realmUser{password: strings.TrimSpace(cred)}
		for _, role := range strings.Split(roles, ",") {
			if role = strings.TrimSpace(role); role != "" {
				u.roles = append(u.roles, role)
			}
		}
		switch {
		case strings.HasPrefix(u.password, "MD5:"):
			digest := strings.ToLower(strings.TrimPrefix(u.password, "MD5:"))
			if _, err := hex.DecodeString(digest); err != nil || len(digest) != 2*md5.Size {
				return nil, fmt.Errorf("%w: user %q: MD5: wants 32 hex digits", ErrRealmCredential, user)
			}
			u.password, u.md5 = digest, true
		case strings.HasPrefix(u.password, "OBF:"), strings.HasPrefix(u.password, "CRYPT:"):
			form, _, _ := strings.Cut(u.password, ":")
			return nil, fmt.Errorf("%w: user %q: %s: passwords are not supported by Wharf (write the password, or MD5:<hex digest>)", ErrRealmCredential, user, form)
		}
		r.users[user] = u
	}
	return r, nil
}

// Len is the number of users.
func (r *Realm) Len() int { return len(r.users) }

// Authenticate checks a user's password and returns the user's roles. A
// refusal wraps engine.ErrBadCredentials and does not say whether the user
// exists.
func (r *Realm) Authenticate(user, password string) ([]string, error) {
	u, ok := r.users[user]
	got := password
	if ok && u.md5 {
		sum := md5.Sum([]byte(password))
		got = hex.EncodeToString(sum[:])
	}
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(u.password)) != 1 {
		return nil, fmt.Errorf("%w: realm user %q", engine.ErrBadCredentials, user)
	}
	return u.roles, nil
}
