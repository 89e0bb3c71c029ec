package security

import (
	"errors"
	"os"
	"slices"
	"testing"

	"wharf/engine"
)

func TestRealmJettyProperties(t *testing.T) {
	r, err := ParseRealm([]byte(`# username: password [,rolename ...]
admin: admin, admin
user : user,user , extra
plain = p\u0041ss
hashed: MD5:5F4DCC3B5AA765D61D8327DEB882CF99, user
`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != 4 {
		t.Errorf("Len = %d, want 4", r.Len())
	}
	for _, tc := range []struct {
		user, password string
		roles          []string
		ok             bool
	}{
		{"admin", "admin", []string{"admin"}, true},
		{"user", "user", []string{"user", "extra"}, true},
		{"plain", "pAss", nil, true},
		{"hashed", "password", []string{"user"}, true},
		{"hashed", "MD5:5F4DCC3B5AA765D61D8327DEB882CF99", nil, false},
		{"admin", "Admin", nil, false},
		{"nobody", "", nil, false},
		{"user", "", nil, false},
	} {
		roles, err := r.Authenticate(tc.user, tc.password)
		if tc.ok != (err == nil) || !slices.Equal(roles, tc.roles) {
			t.Errorf("Authenticate(%q, %q) = %v, %v; want roles %v, ok %v", tc.user, tc.password, roles, err, tc.roles, tc.ok)
		}
		if err != nil && !errors.Is(err, engine.ErrBadCredentials) {
			t.Errorf("refusal %v does not wrap engine.ErrBadCredentials", err)
		}
	}
}

func TestRealmRefusesUnreadableCredentials(t *testing.T) {
	for _, in := range []string{"u: OBF:1v2j1uum1xtv1zej1zer1xtn1uvk1v1v, admin", "u: CRYPT:adpexzg3FUZAk, admin", "u: MD5:abc, admin"} {
		if _, err := ParseRealm([]byte(in)); !errors.Is(err, ErrRealmCredential) {
			t.Errorf("%q: %v, want ErrRealmCredential", in, err)
		}
	}
	if _, err := LoadRealm("/nonexistent/jetty-realm.properties"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
}

// TestRealmDebianSample reads the jetty-realm.properties Debian ships.
func TestRealmDebianSample(t *testing.T) {
	const path = "/usr/share/doc/activemq/examples/conf/jetty-realm.properties"
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%v: apt-get install activemq", err)
	}
	r, err := LoadRealm(path)
	if err != nil {
		t.Fatal(err)
	}
	if roles, err := r.Authenticate("admin", "admin"); err != nil || !slices.Equal(roles, []string{"admin"}) {
		t.Errorf("admin/admin: %v %v, want role admin", roles, err)
	}
	if roles, err := r.Authenticate("user", "user"); err != nil || !slices.Equal(roles, []string{"user"}) {
		t.Errorf("user/user: %v %v, want role user", roles, err)
	}
}
