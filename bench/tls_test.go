package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runTLS runs cfg against the broker and returns its result.
func runTLS(t *testing.T, cfg Config) (*Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Run(ctx, cfg, RunOptions{})
}

// TestBenchTLSConnectors: every protocol's TLS scheme reaches the TLS
// connector of the same name, verifying the broker's certificate with
// --ca, and every message arrives exactly once; an ssl connector that
// needs a client certificate takes the run with --cert and --key and
// refuses it without; a CA that did not sign the broker's certificate
// fails the run at the first connection.
func TestBenchTLSConnectors(t *testing.T) {
	b := startTLSBroker(t, tlsBrokerOptions{})
	dir := tlsFixtures(t)
	ca := filepath.Join(dir, "ca.pem")
	cert, key := filepath.Join(dir, "client1.pem"), filepath.Join(dir, "client1-key.pem")
	for _, tc := range []struct {
		name, url string
		set       func(*Config)
	}{
		{"stomp+ssl", "stomp+ssl://" + b.Addr("stomp+ssl").String(), nil},
		{"ssl (OpenWire)", "ssl://" + b.Addr("ssl").String(), nil},
		{"mqtt+ssl", "mqtt+ssl://" + b.Addr("mqtt+ssl").String(), func(c *Config) { c.Scenario = ScenarioTopic }},
		{"amqp+ssl", "amqp+ssl://" + b.Addr("amqp+ssl").String(), nil},
		{"amqps", "amqps://" + b.Addr("amqp+ssl").String(), nil},
		{"ssl with a client certificate, needClientAuth", "ssl://" + b.Addr("ssl-need").String(), func(c *Config) {
			c.CertFile, c.KeyFile = cert, key
		}},
		{"stomp+ssl connection storm", "stomp+ssl://" + b.Addr("stomp+ssl").String(), func(c *Config) {
			c.Scenario, c.Connections, c.Hold = ScenarioConnections, 10, 0
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.URL, cfg.CAFile, cfg.Count, cfg.Drain = tc.url, ca, 200, 2*time.Second
			if tc.set != nil {
				tc.set(&cfg)
			}
			res, err := runTLS(t, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK() {
				t.Fatalf("run not OK: %+v", res)
			}
			if cfg.Scenario == ScenarioConnections {
				if res.Connections.Opened != 10 {
					t.Errorf("opened %d connections, want 10", res.Connections.Opened)
				}
				return
			}
			want := int64(200) * cfg.fanOut()
			if res.Sent != 200 || res.Received != want {
				t.Errorf("sent %d, received %d; want 200 and %d", res.Sent, res.Received, want)
			}
		})
	}

	for _, tc := range []struct {
		name, url, ca string
		want          string
	}{
		{"needClientAuth without a client certificate", "ssl://" + b.Addr("ssl-need").String(), ca, "certificate required"},
		{"a CA that did not sign the broker's certificate", "stomp+ssl://" + b.Addr("stomp+ssl").String(),
			filepath.Join(dir, "untrusted.pem"), "certificate signed by unknown authority"},
		{"plain STOMP on the TLS port", "stomp://" + b.Addr("stomp+ssl").String(), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.URL, cfg.CAFile, cfg.Count, cfg.ConnectTimeout = tc.url, tc.ca, 10, 2*time.Second
			_, err := runTLS(t, cfg)
			if !errors.Is(err, ErrConnect) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run = %v, want ErrConnect saying %q", err, tc.want)
			}
		})
	}
}

// TestBenchTLSLogin: --user and --password log in to a broker with seed
// 000's authentication and authorization plugins, over TLS; a wrong
// password fails the run at the first connection with the broker's text.
func TestBenchTLSLogin(t *testing.T) {
	b := startTLSBroker(t, tlsBrokerOptions{auth: true})
	ca := filepath.Join(tlsFixtures(t), "ca.pem")
	cfg := DefaultConfig()
	// ops is in admins, which queue://> grants everything.
	cfg.URL, cfg.CAFile, cfg.User, cfg.Password = "stomp+ssl://"+b.Addr("stomp+ssl").String(), ca, "ops", "ops-secret"
	cfg.Count, cfg.Destination = 100, "bench.login"
	res, err := runTLS(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || res.Received != 100 {
		t.Fatalf("received %d, OK %v; want 100 and OK", res.Received, res.OK())
	}
	cfg.Password = "wrong"
	if _, err := runTLS(t, cfg); !errors.Is(err, ErrConnect) || !strings.Contains(err.Error(), "User name [ops] or password is invalid.") {
		t.Fatalf("wrong password: Run = %v, want ErrConnect with ActiveMQ's text", err)
	}
}

// TestBenchTLSValidate: TLS files and logins that cannot work are refused
// before the run, each with a message naming the flag and the fix.
func TestBenchTLSValidate(t *testing.T) {
	dir := tlsFixtures(t)
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		set  func(*Config)
		want string
		is   error
	}{
		{"--ca on a plain URL", func(c *Config) { c.URL, c.CAFile = "stomp://127.0.0.1:61613", "ca.pem" },
			`--ca: "stomp://127.0.0.1:61613" is a plain (not TLS) URL`, ErrConfig},
		{"--cert and --key on a plain URL", func(c *Config) { c.CertFile, c.KeyFile = "c.pem", "k.pem" },
			"--cert, --key: \"tcp://127.0.0.1:61616\" is a plain", ErrConfig},
		{"--cert without --key", func(c *Config) { c.URL, c.CertFile = "ssl://127.0.0.1:61617", filepath.Join(dir, "client1.pem") },
			"--cert and --key go together", ErrConfig},
		{"a missing CA file", func(c *Config) { c.URL, c.CAFile = "ssl://127.0.0.1:61617", filepath.Join(dir, "nope.pem") },
			"--ca: open " + filepath.Join(dir, "nope.pem"), ErrTLSFiles},
		{"a CA file without a certificate", func(c *Config) { c.URL, c.CAFile = "mqtt+ssl://127.0.0.1:8883", notPEM },
			"--ca " + notPEM + ": no PEM certificate in it", ErrTLSFiles},
		{"a key that is not the certificate's", func(c *Config) {
			c.URL = "amqps://127.0.0.1:5671"
			c.CertFile, c.KeyFile = filepath.Join(dir, "client1.pem"), filepath.Join(dir, "client2-key.pem")
		}, "--cert " + filepath.Join(dir, "client1.pem") + " --key " + filepath.Join(dir, "client2-key.pem"), ErrTLSFiles},
		{"--user with a user in the URL", func(c *Config) { c.URL, c.User = "stomp://a:b@127.0.0.1:61613", "ops" },
			`--user "ops": the URL already names user "a"`, ErrConfig},
		{"--password without --user", func(c *Config) { c.Password = "secret" },
			"--password: give --user too", ErrConfig},
		{"an unknown scheme", func(c *Config) { c.URL = "stomp+tls://127.0.0.1:61614" },
			`scheme "stomp+tls" is not stomp, stomp+nio, stomp+ssl`, ErrBadURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Count = 10
			tc.set(&cfg)
			err := cfg.Validate()
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v\nwant %v saying %q", err, tc.is, tc.want)
			}
		})
	}

	for url, want := range map[string]Target{
		"stomp+ssl://h:1":     {Protocol: ProtocolSTOMP, Addr: "h:1", TLS: true},
		"stomp+nio+ssl://h:1": {Protocol: ProtocolSTOMP, Addr: "h:1", TLS: true},
		"SSL://h:1":           {Protocol: ProtocolOpenWire, Addr: "h:1", TLS: true},
		"nio+ssl://h:1":       {Protocol: ProtocolOpenWire, Addr: "h:1", TLS: true},
		"mqtt+ssl://h:1":      {Protocol: ProtocolMQTT, Addr: "h:1", TLS: true},
		"amqp+ssl://u:p@h:1":  {Protocol: ProtocolAMQP, Addr: "h:1", TLS: true, User: "u", Password: "p"},
		"amqps://h:1":         {Protocol: ProtocolAMQP, Addr: "h:1", TLS: true},
		"stomp://h:1":         {Protocol: ProtocolSTOMP, Addr: "h:1"},
	} {
		if got, err := ParseURL(url); err != nil || got != want {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", url, got, err, want)
		}
	}
	cfg := DefaultConfig()
	cfg.URL, cfg.User, cfg.Password = "ssl://h:1", "ops", "pw"
	if got, err := cfg.target(); err != nil || got.User != "ops" || got.Password != "pw" || !got.TLS {
		t.Errorf("target() = %+v, %v; want ops/pw over TLS", got, err)
	}
}
