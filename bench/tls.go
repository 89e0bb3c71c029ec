package bench

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
)

// loginProblems checks --user and --password against the URL's own
// user:password@: one place names the user, not both.
func (c *Config) loginProblems() []error {
	var errs []error
	t, err := ParseURL(c.URL)
	if c.User != "" && err == nil && t.User != "" {
		errs = append(errs, fmt.Errorf("--user %q: the URL already names user %q; give the user in --url or in --user, not both", c.User, t.User))
	}
	if c.Password != "" && c.User == "" {
		errs = append(errs, fmt.Errorf("--password: give --user too (the password of which user?)"))
	}
	return errs
}

// tlsProblems checks the TLS files against the URL: they need a TLS
// scheme, a certificate needs its key, and each file must load.
func (c *Config) tlsProblems(t Target) []error {
	var given []string
	for _, f := range []struct{ flag, v string }{{"--ca", c.CAFile}, {"--cert", c.CertFile}, {"--key", c.KeyFile}} {
		if f.v != "" {
			given = append(given, f.flag)
		}
	}
	if !t.TLS {
		if len(given) == 0 {
			return nil
		}
		return []error{fmt.Errorf("%s: %q is a plain (not TLS) URL; use a TLS scheme: stomp+ssl://, ssl:// (OpenWire), mqtt+ssl:// or amqp+ssl:// (amqps://)",
			strings.Join(given, ", "), c.URL)}
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return []error{fmt.Errorf("--cert and --key go together: give the client certificate and its private key, or neither")}
	}
	if _, err := c.clientTLS(); err != nil {
		return []error{err}
	}
	return nil
}

// clientTLS is the client TLS configuration of a run on a TLS URL: the
// roots of --ca (the system's without it) and the certificate of --cert
// and --key, if given. The server name is the URL's host, which the
// broker's certificate must name (a DNS or IP subject alternative name).
// Every connection makes a full handshake: there is no session cache, as
// a fleet of separate clients would have none in common.
func (c *Config) clientTLS() (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.CAFile != "" {
		b, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: --ca: %w", ErrTLSFiles, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("%w: --ca %s: no PEM certificate in it (want -----BEGIN CERTIFICATE-----)", ErrTLSFiles, c.CAFile)
		}
		conf.RootCAs = pool
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: --cert %s --key %s: %w", ErrTLSFiles, c.CertFile, c.KeyFile, err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}
