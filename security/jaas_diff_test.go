package security

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"wharf/engine"
	"wharf/engine/config"
)

// TestSecurityJAASMatchesActiveMQ runs the logins of
// testdata/java/jaas.golden (JaasDiff.java with ActiveMQ 5.17's
// activemq-jaas.jar and Java 17's LoginContext, over jaas-flags.config)
// and compares outcomes: principals on success, the LoginException
// message on failure.
func TestSecurityJAASMatchesActiveMQ(t *testing.T) {
	lc := copyJAAS(t)
	b, err := os.ReadFile("testdata/java/jaas-flags.config")
	if err != nil {
		t.Fatal(err)
	}
	flags := filepath.Join(filepath.Dir(lc), "jaas-flags.config")
	mustWrite(t, flags, string(b))
	golden, err := os.ReadFile("testdata/java/jaas.golden")
	if err != nil {
		t.Fatal(err)
	}
	plugins := map[string]*Plugin{}
	for _, line := range strings.Split(strings.TrimSpace(string(golden)), "\n") {
		head, want, _ := strings.Cut(line, ": ")
		f := strings.Fields(head)
		entry, user, pw := f[0], f[1], f[2]
		if user == "-" {
			user = ""
		}
		if pw == "-" {
			pw = ""
		}
		p := plugins[entry]
		if p == nil {
			p = newPlugin(t, config.Security{Authentication: jaasAuth(config.AuthJAAS, flags, entry)}, nil)
			plugins[entry] = p
		}
		s, err := p.Authenticate(engine.Credentials{Username: user, Password: pw})
		var got string
		if err != nil {
			got = "FAIL " + loginMessage(errorsUnwrapLogin(err))
		} else {
			us, gs := slices.Clone(s.UserPrincipals), slices.Clone(s.Groups)
			slices.Sort(us)
			slices.Sort(gs)
			got = "OK users=[" + strings.Join(us, ", ") + "] groups=[" + strings.Join(gs, ", ") + "]"
		}
		if got != want {
			t.Errorf("%s: Wharf %q, ActiveMQ %q", head, got, want)
		}
	}
}

// errorsUnwrapLogin finds the login failure inside an authentication error.
func errorsUnwrapLogin(err error) error {
	s := err.Error()
	if i := strings.Index(s, ErrLoginFailed.Error()); i >= 0 {
		return &textError{s[i:]}
	}
	return err
}

type textError struct{ s string }

func (e *textError) Error() string { return e.s }
