package security

import (
	"errors"
	"strings"
	"testing"

	"wharf/engine"
	"wharf/engine/config"
)

// fakeDecrypt stands in for enc.Decrypt: "ENC(rev:x)" decrypts to x
// reversed with password "secret".
func fakeDecrypt(ct, pw string) (string, error) {
	if pw != "secret" || !strings.HasPrefix(ct, "rev:") {
		return "", errors.New("bad")
	}
	r := []rune(ct[4:])
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r), nil
}

func withDecrypt(t *testing.T, f func(string, string) (string, error)) {
	t.Helper()
	old := decryptENC
	decryptENC = f
	t.Cleanup(func() { decryptENC = old })
}

const decryptModule = `org.apache.activemq.jaas.PropertiesLoginModule required decrypt=true
	org.apache.activemq.jaas.properties.user="users.properties"
	org.apache.activemq.jaas.properties.group="groups.properties";`

func TestSecurityJAASDecrypt(t *testing.T) {
	withDecrypt(t, fakeDecrypt)
	t.Setenv(encryptionPasswordEnv, "secret")
	lc := writeConfig(t, decryptModule)
	mustWrite(t, strings.TrimSuffix(lc, "login.config")+"users.properties", "ops= ENC(rev:wp-spo) \nplain=p\n")
	p := newPlugin(t, config.Security{Authentication: jaasAuth(config.AuthJAAS, lc, "e")}, nil)
	s, err := p.Authenticate(engine.Credentials{Username: "ops", Password: "ops-pw"})
	checkSubject(t, s, err, "ops", []string{"admins"}, []string{"ops"})
	if _, err := p.Authenticate(engine.Credentials{Username: "plain", Password: "p"}); err != nil {
		t.Errorf("plain password refused: %v", err)
	}
	// The ENC(...) text itself is not the password.
	_, err = p.Authenticate(engine.Credentials{Username: "ops", Password: "ENC(rev:wp-spo)"})
	checkRefused(t, err, "User name [ops] or password is invalid.")

	// Without decrypt=true, ENC(...) is the literal password, as in
	// ActiveMQ.
	lc = writeConfig(t, sprintf(propsModule, "required"))
	mustWrite(t, strings.TrimSuffix(lc, "login.config")+"users.properties", "ops=ENC(rev:wp-spo)\n")
	p = newPlugin(t, config.Security{Authentication: jaasAuth(config.AuthJAAS, lc, "e")}, nil)
	if _, err := p.Authenticate(engine.Credentials{Username: "ops", Password: "ENC(rev:wp-spo)"}); err != nil {
		t.Errorf("literal ENC() password refused: %v", err)
	}
}

func TestSecurityJAASDecryptErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		decrypt func(string, string) (string, error)
		env     string
		module  string
		want    string
	}{
		{"no password in the environment", fakeDecrypt, "", decryptModule, "ACTIVEMQ_ENCRYPTION_PASSWORD is not set"},
		{"wrong password", fakeDecrypt, "nope", decryptModule, "cannot decrypt ENC() value: ops: bad"},
		{"other algorithm", fakeDecrypt, "secret", strings.Replace(decryptModule, "decrypt=true", "decrypt=true algorithm=PBEWITHHMACSHA256ANDAES_256", 1), `algorithm "PBEWITHHMACSHA256ANDAES_256"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withDecrypt(t, tc.decrypt)
			t.Setenv(encryptionPasswordEnv, tc.env)
			lc := writeConfig(t, tc.module)
			mustWrite(t, strings.TrimSuffix(lc, "login.config")+"users.properties", "ops=ENC(rev:wp-spo)\n")
			_, err := New(&config.Config{Security: config.Security{Authentication: jaasAuth(config.AuthJAAS, lc, "e")}}, nil)
			if !errors.Is(err, ErrDecrypt) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want ErrDecrypt with %q", err, tc.want)
			}
		})
	}
}

func TestSecurityJAASDecryptActiveMQValue(t *testing.T) {
	// "manager" encrypted with password "activemq" by Debian's ActiveMQ
	// 5.17.2 `activemq encrypt` (security/enc's golden values). ActiveMQ's
	// own PropertiesLoginModule with decrypt=true logs admin/manager in
	// with this file (checked with testdata/java/JaasDiff.java and
	// jasypt.jar on the class path).
	t.Setenv(encryptionPasswordEnv, "activemq")
	lc := writeConfig(t, decryptModule)
	dir := strings.TrimSuffix(lc, "login.config")
	mustWrite(t, dir+"users.properties", "admin=ENC(2+bWHBxnk3MmdioEXzgtqQ==)\n")
	mustWrite(t, dir+"groups.properties", "admins=admin\n")
	p := newPlugin(t, config.Security{Authentication: jaasAuth(config.AuthJAAS, lc, "e")}, nil)
	s, err := p.Authenticate(engine.Credentials{Username: "admin", Password: "manager"})
	checkSubject(t, s, err, "admin", []string{"admins"}, []string{"admin"})
}
