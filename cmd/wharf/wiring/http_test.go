package wiring

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"wharf/engine"
	"wharf/engine/brokertest"
	"wharf/engine/config"
	"wharf/engine/message"
	httpserver "wharf/protocols/http"
)

// debianConf holds the jetty.xml and jetty-realm.properties of Debian's
// activemq package.
const debianConf = "/usr/share/doc/activemq/examples/conf"

// debianJettyConf lays out an activemq.xml that imports Debian's jetty.xml
// (edited by edit) beside its jetty-realm.properties and the test
// keystore as broker.ks, and loads it.
func debianJettyConf(t *testing.T, edit func(string) string) (*config.Config, error) {
	t.Helper()
	jetty, err := os.ReadFile(filepath.Join(debianConf, "jetty.xml"))
	if err != nil {
		t.Skipf("Debian's ActiveMQ sample configuration is missing (%v): apt-get install activemq", err)
	}
	realm, err := os.ReadFile(filepath.Join(debianConf, "jetty-realm.properties"))
	if err != nil {
		t.Fatal(err)
	}
	ks, err := os.ReadFile("../../../security/testdata/tls/broker.ks")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string][]byte{
		"activemq.xml": []byte(`<beans xmlns="http://www.springframework.org/schema/beans">
<broker xmlns="http://activemq.apache.org/schema/core"><persistenceAdapter><memoryPersistenceAdapter/></persistenceAdapter></broker>
<import resource="jetty.xml"/>
</beans>`),
		"jetty.xml":              []byte(edit(string(jetty))),
		"jetty-realm.properties": realm,
		"broker.ks":              ks,
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return config.LoadFile(filepath.Join(dir, "activemq.xml"), nil)
}

func startHTTP(t *testing.T, c *config.Config) *httpserver.Server {
	t.Helper()
	s, err := StartHTTP(c, true, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func status(t *testing.T, c *http.Client, url, user, password string) int {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(user, password)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestWiringHTTPDebianJetty: Debian's jetty.xml and jetty-realm.properties
// as shipped serve on loopback with their users (admin/admin included),
// and are refused on every interface, since admin/admin still logs in.
func TestWiringHTTPDebianJetty(t *testing.T) {
	c, err := debianJettyConf(t, func(s string) string { return s })
	if err != nil {
		t.Fatal(err)
	}
	s := startHTTP(t, c)
	url := "http://" + s.Addr().String() + "/metrics"
	for _, tc := range []struct {
		user, password string
		want           int
	}{{"admin", "admin", 200}, {"user", "user", 200}, {"admin", "user", 401}} {
		if got := status(t, http.DefaultClient, url, tc.user, tc.password); got != tc.want {
			t.Errorf("%s/%s: %d, want %d", tc.user, tc.password, got, tc.want)
		}
	}

	c, err = debianJettyConf(t, func(s string) string {
		return strings.Replace(s, `<property name="host" value="127.0.0.1"/>`, `<property name="host" value="0.0.0.0"/>`, 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = StartHTTP(c, true, nil, slog.New(slog.DiscardHandler))
	if !errors.Is(err, httpserver.ErrDefaultAdmin) || !strings.Contains(err.Error(), `"0.0.0.0:0"`) {
		t.Fatalf("jetty.xml on 0.0.0.0 with admin/admin: %v, want ErrDefaultAdmin naming the address", err)
	}
}

// TestWiringHTTPSDebianSecureConnector enables the SecureConnector of
// Debian's jetty.xml: on every interface (it names no host) it is refused
// while admin/admin logs in; on loopback it serves TLS with the keystore.
func TestWiringHTTPSDebianSecureConnector(t *testing.T) {
	enable := func(host string) func(string) string {
		return func(s string) string {
			s = strings.Replace(s, `<!-- bean id="SecureConnector"`, `<bean id="SecureConnector"`, 1)
			s = strings.Replace(s, `</bean -->`, `</bean>`, 1)
			return strings.Replace(s, `<property name="port" value="8162" />`, `<property name="port" value="8162" />`+host, 1)
		}
	}
	c, err := debianJettyConf(t, enable(""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := StartHTTP(c, true, nil, slog.New(slog.DiscardHandler)); !errors.Is(err, httpserver.ErrDefaultAdmin) {
		t.Fatalf("SecureConnector on every interface with admin/admin: %v, want ErrDefaultAdmin", err)
	}
	c, err = debianJettyConf(t, enable(`<property name="host" value="127.0.0.1"/>`))
	if err != nil {
		t.Fatal(err)
	}
	s := startHTTP(t, c)
	ca, err := os.ReadFile("../../../security/testdata/tls/ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if got := status(t, client, "https://"+s.TLSAddr().String()+"/metrics", "user", "user"); got != 200 {
		t.Errorf("HTTPS /metrics as user: %d, want 200", got)
	}
	if got := status(t, client, "https://"+s.TLSAddr().String()+"/metrics", "user", "admin"); got != 401 {
		t.Errorf("HTTPS /metrics with a wrong password: %d, want 401", got)
	}
}

// TestWiringHTTPBrokerPlugin: without a realm the web server logs in
// against the broker's authentication plugin, groups as roles.
func TestWiringHTTPBrokerPlugin(t *testing.T) {
	y := `persistent: false
security:
  authentication:
    kind: simple
    users:
      - {username: ops, password: opspw, groups: admins}
      - {username: app, password: apppw, groups: users}
      - {username: guest, password: guestpw, groups: guests}
`
	c, err := config.ParseYAML(strings.NewReader(y), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := startHTTP(t, c)
	url := "http://" + s.Addr().String() + "/metrics"
	for _, tc := range []struct {
		user, password string
		want           int
	}{{"ops", "opspw", 200}, {"app", "apppw", 200}, {"guest", "guestpw", 403}, {"ops", "apppw", 401}} {
		if got := status(t, http.DefaultClient, url, tc.user, tc.password); got != tc.want {
			t.Errorf("%s/%s: %d, want %d", tc.user, tc.password, got, tc.want)
		}
	}
	// A plugin that takes admin/admin is refused off loopback too.
	y = strings.Replace(y, "{username: ops, password: opspw", "{username: admin, password: admin", 1) + "http: {host: 0.0.0.0}\n"
	if c, err = config.ParseYAML(strings.NewReader(y), "wharf.yaml", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := StartHTTP(c, true, nil, slog.New(slog.DiscardHandler)); !errors.Is(err, httpserver.ErrDefaultAdmin) {
		t.Fatalf("plugin with admin/admin on 0.0.0.0: %v, want ErrDefaultAdmin", err)
	}
}

// done hands an engine send's result to a channel.
type done chan error

func (d done) Complete(_ uint64, err error) { d <- err }

// TestWiringHTTPJournalHistograms: a broker on KahaDB built with
// FactoriesObserved feeds the web server's journal histograms, and the
// whole exposition passes promtool.
func TestWiringHTTPJournalHistograms(t *testing.T) {
	jm := httpserver.NewJournalMetrics()
	b := brokertest.Start(t, FactoriesObserved(jm), brokertest.WithKahaDB())
	c := config.Default()
	c.HTTP.Authenticate = false
	s, err := StartHTTP(&c, true, jm, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Ready(b.Engine())
	conn, err := b.Engine().Connect(engine.Credentials{Protocol: "stomp"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const n = 20
	for i := range n {
		ch := make(done, 1)
		m := &message.Message{Destination: message.QueueDest("journal"), Body: []byte("persistent"), BodyType: message.TextBody, Persistent: true, Priority: 4}
		if err := conn.Send(m, "", ch, uint64(i)); err != nil {
			t.Fatal(err)
		}
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.Get("http://" + s.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	h := func(name string) *dto.Histogram {
		f := fams[name]
		if f == nil || len(f.Metric) != 1 || f.Metric[0].Histogram == nil {
			t.Fatalf("no histogram %s", name)
		}
		return f.Metric[0].Histogram
	}
	// Every persistent send was synced before it was acknowledged.
	if got := h("wharf_journal_fsync_duration_seconds").GetSampleCount(); got < 1 {
		t.Errorf("fsync histogram counted %d fsyncs after %d synced sends", got, n)
	}
	if got := h("wharf_journal_batch_records").GetSampleSum(); got < n {
		t.Errorf("batch histogram summed %v records, want at least the %d messages", got, n)
	}
	if got := h("wharf_journal_batch_bytes").GetSampleSum(); got < n*float64(len("persistent")) {
		t.Errorf("batch histogram summed %v bytes", got)
	}
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not found: apt-get install prometheus (make test-deps installs it)")
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = strings.NewReader(string(body))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestWiringHTTPRefusesOpenConfigs: a realm without users, or the login
// turned off, is refused beyond loopback, saying why.
func TestWiringHTTPRefusesOpenConfigs(t *testing.T) {
	dir := t.TempDir()
	realm := filepath.Join(dir, "jetty-realm.properties")
	if err := os.WriteFile(realm, []byte("# username: password [,rolename ...]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		yaml string
		want error
	}{
		{"http: {host: 0.0.0.0, realm: " + realm + "}", httpserver.ErrNoUsers},
		{"http: {host: 0.0.0.0}", httpserver.ErrNoUsers},
		{"http: {host: 0.0.0.0, authenticate: false}", httpserver.ErrNoLogin},
	} {
		c, err := config.ParseYAML(strings.NewReader("persistent: false\n"+tc.yaml), "wharf.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := StartHTTP(c, true, nil, slog.New(slog.DiscardHandler)); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.yaml, err, tc.want)
		}
	}
}

// TestWiringAdminTarget: the admin commands' address from a
// configuration: the plain listener, on loopback for one on every
// interface (IPv4 or IPv6), the HTTPS one when there is one, and an
// error for a configuration without a web server.
func TestWiringAdminTarget(t *testing.T) {
	dir := t.TempDir()
	ks, err := os.ReadFile("../../../security/testdata/tls/broker.ks")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "broker.ks"), ks, 0o644)
	for _, tc := range []struct{ yaml, url string }{
		{"persistent: false", "http://127.0.0.1:8161"},
		{"http: {host: 0.0.0.0, port: 9000, authenticate: false}", "http://127.0.0.1:9000"},
		{"http: {host: '::', port: 9000, authenticate: false}", "http://[::1]:9000"},
		{"http: {host: 10.1.2.3, port: 9000, authenticate: false}", "http://10.1.2.3:9000"},
		{"http: {https: {host: 0.0.0.0, port: 9443, key_store: broker.ks, key_store_password: password}}", "https://127.0.0.1:9443"},
	} {
		p := filepath.Join(dir, "wharf.yaml")
		os.WriteFile(p, []byte(tc.yaml), 0o644)
		c, err := config.LoadFileWith(p, nil, config.LoadOptions{TrustedNetwork: true})
		if err != nil {
			t.Fatalf("%s: %v", tc.yaml, err)
		}
		url, tlsc, err := AdminTarget(c)
		if err != nil || url != tc.url || (tlsc != nil) != strings.HasPrefix(tc.url, "https:") {
			t.Errorf("%s: %q, TLS %v, %v; want %q", tc.yaml, url, tlsc != nil, err, tc.url)
		}
	}
	c, err := config.ParseYAML(strings.NewReader("http: {enabled: false}"), "off.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := AdminTarget(c); err == nil || !strings.Contains(err.Error(), "starts no web server") {
		t.Errorf("web server off: %v", err)
	}
}
