package conformance

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-stomp/stomp/v3"

	"wharf/cmd/wharf/wiring"
	"wharf/engine/brokertest"
	"wharf/engine/config"
	"wharf/internal/activemq"
)

// The TLS client tests (tls_clients_test.go, tls_badinput_test.go) run
// real clients over TLS (ActiveMQ's JMS client, stomp.py, mosquitto,
// Qpid Proton) against Wharf in-process and against Debian's ActiveMQ
// 5.17, both started with the same activemq.xml from conformance/tlsclients
// and the keytool fixtures of security/testdata/tls.

// envTLSDir replaces the fixture directory (tlsDir).
const envTLSDir = "WHARF_CONFORMANCE_TLS_DIR"

// tlsDir is the one copy of the keytool fixtures, relative to this package.
const tlsDir = "../security/testdata/tls"

// tlsClientFixtures names the files of the fixture directory and their
// passwords, as security/testdata/tls/README.md describes them.
var tlsClientFixtures = struct {
	keyStore, keyStoreType, keyStorePassword string // the broker's
	trustStore, trustStorePassword           string // the CA, the broker's truststore
	clientTrustStore                         string // the same for Java clients
	caPEM                                    string
	clientJKS, clientP12, clientPassword     string
	clientCert, clientKey                    string // PEM
	expiredCert, expiredKey                  string // PEM, signed by the CA, expired
	untrustedCert, untrustedKey              string // PEM, self-signed
	untrustedP12                             string
	// clientDN is the client certificate's subject as Java prints it
	// (X509Certificate.getSubjectDN().getName()), the form
	// tlsclients/users-dn.properties maps to certuser.
	clientDN string
}{
	keyStore: "broker.ks", keyStoreType: "jks", keyStorePassword: "password",
	trustStore: "broker.ts", trustStorePassword: "password",
	clientTrustStore: "client.ts",
	caPEM:            "ca.pem",
	clientJKS:        "client1.ks", clientP12: "client1.p12", clientPassword: "password",
	clientCert: "client1.pem", clientKey: "client1-key.pem",
	expiredCert: "expired.pem", expiredKey: "expired-key.pem",
	untrustedCert: "untrusted.pem", untrustedKey: "untrusted-key.pem",
	untrustedP12: "untrusted.p12",
	clientDN:     "CN=client1, OU=Wharf, O=Test, C=FR",
}

// tlsTimeout bounds every external client process and every network wait
// of these tests.
const tlsTimeout = 30 * time.Second

// fixture returns the absolute path of a fixture file, skipping the test
// when the fixtures are not there.
func fixture(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv(envTLSDir)
	if dir == "" {
		dir = filepath.FromSlash(tlsDir)
	}
	p, err := filepath.Abs(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("TLS fixture %s missing (security/testdata/tls, or set %s): %v", name, envTLSDir, err)
	}
	return p
}

// tlsVars are the placeholders of tlsclients/*.xml, with every port set
// to port.
func tlsVars(t *testing.T, port func(name string) string) map[string]string {
	t.Helper()
	f := tlsClientFixtures
	v := map[string]string{
		"wharf.tls.dir":                 filepath.Dir(fixture(t, f.keyStore)),
		"wharf.tls.keystore":            f.keyStore,
		"wharf.tls.keystore.type":       f.keyStoreType,
		"wharf.tls.keystore.password":   f.keyStorePassword,
		"wharf.tls.truststore":          f.trustStore,
		"wharf.tls.truststore.password": f.trustStorePassword,
	}
	for _, name := range tlsConnectors {
		v["wharf.tls."+strings.ReplaceAll(name, "-", "")+".port"] = port(name)
	}
	return v
}

// tlsConnectors are the connector names of tlsclients/*.xml; the port
// placeholder of each is wharf.tls.<name without "-">.port.
var tlsConnectors = []string{"tcp", "ssl", "ssl-need", "stomp", "mqtt", "amqp"}

// tlsBroker is a running broker of one of the tlsclients configurations.
type tlsBroker struct {
	activemq bool
	// addrs maps a connector name (tcp, ssl, ssl-need, stomp-ssl,
	// mqtt-ssl, amqp-ssl) to its "127.0.0.1:port".
	addrs map[string]string
	// log is the broker's output (ActiveMQ only), for reports.
	log *procLog
}

// addr returns the connector's address, skipping the test when the broker
// has no such connector (ActiveMQ has no AMQP; a Wharf build may lack one).
func (b *tlsBroker) addr(t *testing.T, name string) string {
	t.Helper()
	a := b.addrs[name]
	if a == "" {
		if b.activemq {
			t.Skipf("Debian's ActiveMQ 5.17 has no %s connector (no AMQP transport in the package)", name)
		}
		t.Fatalf("Wharf serves no connector %q of the configuration", name)
	}
	return a
}

// startTLSTarget starts the broker target ("wharf" or "activemq") with
// the configuration tlsclients/<xml>.
func startTLSTarget(t *testing.T, target, xml string) *tlsBroker {
	t.Helper()
	if target == "activemq" {
		return startTLSActiveMQ(t, xml)
	}
	return startTLSWharf(t, xml)
}

// startTLSWharf starts Wharf in-process with tlsclients/<xml>, loaded by
// config.LoadFile with every port 0.
func startTLSWharf(t *testing.T, xml string) *tlsBroker {
	t.Helper()
	vars := tlsVars(t, func(string) string { return "0" })
	vars["activemq.data"] = t.TempDir()
	path := filepath.Join("tlsclients", xml)
	loaded, err := config.LoadFile(path, vars)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	b := brokertest.Start(t, wiring.Factories(), brokertest.WithConfig(func(c *config.Config) {
		*c = *loaded
		c.Persistence.Kind = config.KindMemory
	}))
	tb := &tlsBroker{addrs: map[string]string{}}
	for name, a := range b.Addrs() {
		tb.addrs[name] = a.String()
	}
	return tb
}

// tlsAMQPorts are the ActiveMQ ports of the TLS tests (63710-63719, apart
// from the other suites' 617xx and 626xx).
var tlsAMQPorts = map[string]string{
	"tcp": "63710", "ssl": "63711", "ssl-need": "63712", "stomp": "63713", "mqtt": "63714", "amqp": "63715",
}

// amqpConnectorLine is the AMQP connector of the tlsclients files, removed
// for ActiveMQ.
var amqpConnectorLine = regexp.MustCompile(`(?m)^.*<transportConnector name="amqp-ssl".*$\n`)

// startTLSActiveMQ runs Debian's ActiveMQ 5.17 with tlsclients/<xml> (its
// AMQP connector removed), login.config and the properties files in its
// conf directory, as bin/activemq runs it (java.security.auth.login.config
// set to conf/login.config), on the fixed ports tlsAMQPorts.
func startTLSActiveMQ(t *testing.T, xml string) *tlsBroker {
	t.Helper()
	skipWithoutActiveMQ(t)
	for name, port := range tlsAMQPorts {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second); err == nil {
			c.Close()
			t.Fatalf("port %s (connector %s) is in use: another ActiveMQ of this test still running?", port, name)
		}
	}
	base := t.TempDir()
	conf := filepath.Join(base, "conf")
	for _, d := range []string{conf, filepath.Join(base, "data"), filepath.Join(base, "tmp"), filepath.Join(base, "lib")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// ActiveMQ's MQTT transport decodes with the FuseSource MQTT codec,
	// which Debian ships in libmqtt-client-java off the broker's
	// classpath; $ACTIVEMQ_BASE/lib is on it (as activemq/run.sh links).
	for _, jar := range []string{"mqtt-client", "hawtdispatch", "hawtdispatch-transport"} {
		p := filepath.Join("/usr/share/java", jar+".jar")
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s missing: ActiveMQ's mqtt+ssl connector cannot start (apt-get install -y libmqtt-client-java)", p)
		}
		if err := os.Symlink(p, filepath.Join(base, "lib", jar+".jar")); err != nil {
			t.Fatal(err)
		}
	}
	copyFile := func(from, to string, edit func([]byte) []byte) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			b = edit(b)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(filepath.Join("tlsclients", xml), filepath.Join(conf, "activemq.xml"), func(b []byte) []byte {
		return amqpConnectorLine.ReplaceAll(b, nil)
	})
	copyFile(filepath.FromSlash("activemq/log4j.properties"), filepath.Join(conf, "log4j.properties"), func(b []byte) []byte {
		// The handshake failures are logged by the transport at DEBUG.
		return append(b, "\nlog4j.logger.org.apache.activemq.broker.TransportConnection.Transport=DEBUG\n"...)
	})
	for _, f := range []string{"login.config", "users.properties", "groups.properties", "users-dn.properties", "groups-dn.properties"} {
		copyFile(filepath.Join("tlsclients", f), filepath.Join(conf, f), nil)
	}
	var props []string
	for k, v := range tlsVars(t, func(name string) string { return tlsAMQPorts[name] }) {
		props = append(props, k+"="+v)
	}
	props = append(props, "java.security.auth.login.config="+filepath.Join(conf, "login.config"))
	p := startProc(t, "activemq", activemq.Command(base, props...))
	p.waitLine(regexp.MustCompile(`Apache ActiveMQ \S+ \(.*\) started`), procStartTimeout)
	b := &tlsBroker{activemq: true, addrs: map[string]string{}, log: p.log}
	names := map[string]string{"stomp": "stomp-ssl", "mqtt": "mqtt-ssl", "amqp": "amqp-ssl"}
	for name, port := range tlsAMQPorts {
		if name == "amqp" || (name == "ssl-need" && xml != "activemq.xml") {
			continue
		}
		if n, ok := names[name]; ok {
			name = n
		}
		b.addrs[name] = "127.0.0.1:" + port
	}
	// Stop it before its temporary directory goes (Cleanup runs last in,
	// first out: this runs before TempDir's removal).
	t.Cleanup(func() {
		if p.cmd.Process != nil {
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return b
}

// clientTLS is a Go client's TLS configuration: the fixture CA as root,
// ServerName 127.0.0.1, and the PEM certificate and key when given,
// presented whatever CAs the server asks for.
func clientTLS(t *testing.T, certKey ...string) *tls.Config {
	t.Helper()
	ca, err := os.ReadFile(fixture(t, tlsClientFixtures.caPEM))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatalf("no certificate in %s", tlsClientFixtures.caPEM)
	}
	c := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	if len(certKey) == 2 {
		kp, err := tls.LoadX509KeyPair(fixture(t, certKey[0]), fixture(t, certKey[1]))
		if err != nil {
			t.Fatalf("load %s, %s: %v", certKey[0], certKey[1], err)
		}
		// Always present it: with Certificates, Go's client sends nothing
		// when the server's CertificateRequest lists CAs that did not
		// issue it (Wharf lists them, Java does not), and the server
		// would see no certificate rather than an untrusted one.
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &kp, nil }
	}
	return c
}

// dialSTOMPTLS connects go-stomp over TLS.
func dialSTOMPTLS(t *testing.T, addr string, cfg *tls.Config) *stomp.Conn {
	t.Helper()
	d := &net.Dialer{Timeout: tlsTimeout}
	nc, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		t.Fatalf("TLS dial %s: %v", addr, err)
	}
	c, err := stomp.Connect(nc, stomp.ConnOpt.Host("localhost"), stomp.ConnOpt.HeartBeat(0, 0))
	if err != nil {
		nc.Close()
		t.Fatalf("STOMP over TLS to %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Disconnect(); nc.Close() })
	return c
}

// runClient runs an external client with tlsTimeout and returns its
// stdout's last line, its exit error and everything it wrote.
func runClient(t *testing.T, name string, args ...string) (last string, err error, out string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), tlsTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s: killed after %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), tlsTimeout, stdout.String(), tail(stderr.String(), 2000))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	return lines[len(lines)-1], err, stdout.String() + stderr.String()
}

// expectOK checks a client's result line is "OK ...".
func expectOK(t *testing.T, client, last string, err error, out string) {
	t.Helper()
	if err != nil || !strings.HasPrefix(last, "OK ") {
		t.Fatalf("%s: want OK, got %q (%v)\n%s", client, last, err, tail(out, 3000))
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "RETRY ") {
			t.Logf("%s: %s", client, l)
		}
	}
	t.Logf("%s: %s", client, last)
}

// expectError checks a client's result line is "ERROR ..." containing
// every one of want, and returns it.
func expectError(t *testing.T, client, last string, err error, out string, want ...string) string {
	t.Helper()
	if err == nil || !strings.HasPrefix(last, "ERROR ") {
		t.Fatalf("%s: want ERROR, got %q (%v)\n%s", client, last, err, tail(out, 3000))
	}
	for _, w := range want {
		if !strings.Contains(last, w) {
			t.Errorf("%s: error %q does not mention %q", client, last, w)
		}
	}
	t.Logf("%s: %s", client, last)
	return last
}

// jmsTLS runs the Java TlsClient (ActiveMQSslConnectionFactory) with args.
func jmsTLS(t *testing.T, args ...string) (string, error, string) {
	t.Helper()
	cp := jmsClasspath(t)
	classes := compileJMS(t, cp)
	return runClient(t, "java", append([]string{"-cp", classes + string(os.PathListSeparator) + cp, "wharf.conformance.TlsClient"}, args...)...)
}

// jmsTLSArgs are the TlsClient arguments for url and queue with the
// fixture truststore and, when keyStore is not "", that client keystore
// ("jks" or "pkcs12" by its extension).
func jmsTLSArgs(t *testing.T, addr, queue, keyStore string) []string {
	t.Helper()
	f := tlsClientFixtures
	args := []string{"--url", "ssl://" + addr, "--queue", queue,
		"--truststore", fixture(t, f.clientTrustStore), "--truststore-password", f.trustStorePassword}
	if keyStore != "" {
		typ := "jks"
		if strings.HasSuffix(keyStore, ".p12") {
			typ = "pkcs12"
		}
		args = append(args, "--keystore", fixture(t, keyStore), "--keystore-password", f.clientPassword, "--keystore-type", typ)
	}
	return args
}

// skipWithoutPython skips unless /usr/bin/python3 imports module.
func skipWithoutPython(t *testing.T, module, hint string) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skipf("/usr/bin/python3 not found (%s)", hint)
	}
	if out, err := exec.Command("/usr/bin/python3", "-c", "import "+module).CombinedOutput(); err != nil {
		t.Skipf("/usr/bin/python3 cannot import %s: %v %s (%s)", module, err, out, hint)
	}
}

// mosquittoTLSArgs are the mosquitto_pub/sub arguments for the broker at
// addr over TLS with the fixture CA and, when given, a PEM client
// certificate and key.
func mosquittoTLSArgs(t *testing.T, addr string, certKey ...string) []string {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	args := []string{"-h", host, "-p", port, "--cafile", fixture(t, tlsClientFixtures.caPEM)}
	if len(certKey) == 2 {
		args = append(args, "--cert", fixture(t, certKey[0]), "--key", fixture(t, certKey[1]))
	}
	return args
}

// mosquittoRoundTrip subscribes with mosquitto_sub over TLS, waits until
// the broker has acknowledged the subscription (its -d output shows the
// SUBACK), publishes one message with mosquitto_pub and checks that
// mosquitto_sub receives it.
func mosquittoRoundTrip(t *testing.T, addr, topic string, certKey ...string) {
	t.Helper()
	sub := mosquittoTool(t, "mosquitto_sub")
	pub := mosquittoTool(t, "mosquitto_pub")
	base := mosquittoTLSArgs(t, addr, certKey...)
	ctx, cancel := context.WithTimeout(context.Background(), tlsTimeout)
	defer cancel()
	// Explicit client IDs, unique in the run (mosquitto 2 sends an empty
	// one otherwise).
	id := fmt.Sprintf("tls%d", nextSeq.Add(1))
	// stdbuf: mosquitto_sub writes through stdio, which buffers a pipe
	// until exit; its SUBACK line must come when it happens.
	stdbuf, err := exec.LookPath("stdbuf")
	if err != nil {
		t.Skipf("stdbuf not found (apt-get install -y coreutils)")
	}
	cmd := exec.CommandContext(ctx, stdbuf, append([]string{"-oL", sub}, append(base, "-d", "-i", id+"sub", "-q", "1", "-t", topic, "-C", "1", "-W", "20")...)...)
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var seen []string
	// waitFor reads mosquitto_sub's lines until one contains what.
	waitFor := func(what string) {
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					cmd.Wait()
					t.Fatalf("mosquitto_sub ended before %q: %v\n%s\n%s", what, cmd.ProcessState, strings.Join(seen, "\n"), stderr.String())
				}
				seen = append(seen, l)
				if strings.Contains(l, what) {
					return
				}
			case <-ctx.Done():
				t.Fatalf("mosquitto_sub: no %q within %v\n%s\n%s", what, tlsTimeout, strings.Join(seen, "\n"), stderr.String())
			}
		}
	}
	waitFor("received SUBACK")
	body := "tls " + topic
	if last, err, out := runClient(t, pub, append(base, "-i", id+"pub", "-q", "1", "-t", topic, "-m", body)...); err != nil {
		t.Fatalf("mosquitto_pub: %v %s\n%s", err, last, out)
	}
	waitFor(body)
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("mosquitto_sub: %v\n%s", err, stderr.String())
	}
	t.Logf("mosquitto over TLS: %s received %q", topic, body)
}

// stompRoundTrip sends on c to a fresh queue and receives it: the client
// that must keep working while others misbehave.
func stompRoundTrip(t *testing.T, c *stomp.Conn, dest string) {
	t.Helper()
	s, err := c.Subscribe(dest, stomp.AckAuto)
	if err != nil {
		t.Fatalf("subscribe %s: %v", dest, err)
	}
	defer s.Unsubscribe()
	body := fmt.Sprintf("still working %s", dest)
	if err := c.Send(dest, "text/plain", []byte(body), stomp.SendOpt.Receipt); err != nil {
		t.Fatalf("send %s: %v", dest, err)
	}
	select {
	case m, ok := <-s.C:
		if !ok || m.Err != nil {
			t.Fatalf("the working client's subscription %s failed: %v", dest, m)
		}
		if string(m.Body) != body {
			t.Fatalf("working client got %q, want %q", m.Body, body)
		}
	case <-time.After(tlsTimeout):
		t.Fatalf("the working client got nothing on %s within %v", dest, tlsTimeout)
	}
}
