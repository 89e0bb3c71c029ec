package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-stomp/stomp/v3"
)

// waitExit reads the rest of w's log and waits for its exit, which must be
// status 0; it returns the log messages.
func (w *runningWharf) waitExit(t *testing.T) []string {
	t.Helper()
	var rest []string
	for w.sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(w.sc.Bytes(), &rec) == nil {
			msg, _ := rec["msg"].(string)
			rest = append(rest, msg)
		}
	}
	if err := w.cmd.Wait(); err != nil {
		t.Errorf("wharf run: %v, want exit status 0", err)
	}
	return rest
}

// healthz says whether the web server at addr answers /healthz with 200.
func healthz(t *testing.T, addr string) bool {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}

// TestWharfStop: wharf stop refuses a wrong password and a login without
// the admin role (exit 3, the broker still serving), and as admin stops a
// `wharf run` on KahaDB the way SIGTERM does: the command returns once
// the web server is gone, the broker exits 0 having closed its store, and
// the persistent messages sent before are there after a restart.
func TestWharfStop(t *testing.T) {
	dir := t.TempDir()
	const web = "{port: 0, realm: realm.properties}"
	w := startRunIn(t, dir, web)
	conn, err := stomp.Dial("tcp", w.stompAddr)
	if err != nil {
		t.Fatal(err)
	}
	bodies := []string{"one", "two", "three"}
	for _, b := range bodies {
		if err := conn.Send("/queue/stop.q", "text/plain", []byte(b), stomp.SendOpt.Receipt, stomp.SendOpt.Header("persistent", "true")); err != nil {
			t.Fatal(err)
		}
	}
	conn.Disconnect()

	url := "http://" + w.webAddr
	for _, tc := range []struct {
		user, password, want string
	}{
		{"admin", "wrong", `login refused for user "admin": wrong user or password`},
		{"viewer", "pw", `user "viewer" may not do this (operations need the admin role)`},
	} {
		code, out, errOut := runWharf(t, "stop", "--url", url, "--user", tc.user, "--password", tc.password)
		if code != 3 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("stop as %s/%s: exit %d, %q, %q; want 3 and %q", tc.user, tc.password, code, out, errOut, tc.want)
		}
		if !healthz(t, w.webAddr) {
			t.Fatalf("the broker stopped after a refused stop as %s", tc.user)
		}
	}

	code, out, errOut := runWharf(t, "stop", "--url", url, "--user", "admin", "--password", "secret")
	if code != 0 || out != "Broker localhost stopped\n" {
		t.Fatalf("stop as admin: exit %d, %q, %q; want 0", code, out, errOut)
	}
	// stop returned: the web server, closed last, no longer answers.
	if healthz(t, w.webAddr) {
		t.Error("the web server still answers after wharf stop returned")
	}
	rest := w.waitExit(t)
	for _, m := range []string{"stopping", "broker stopped", "web server stopped"} {
		if !slices.Contains(rest, m) {
			t.Errorf("log after the stop: no %q in %q", m, rest)
		}
	}

	// The store was closed cleanly: a restart has the three messages.
	w = startRunIn(t, dir, web)
	if got := w.logged("broker started"); len(got) != 1 || got[0]["messages_recovered"] != 3.0 {
		t.Errorf("restart: broker started %v, want 3 messages recovered", got)
	}
	conn, err = stomp.Dial("tcp", w.stompAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Disconnect()
	sub, err := conn.Subscribe("/queue/stop.q", stomp.AckAuto)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range bodies {
		select {
		case m := <-sub.C:
			if m.Err != nil || string(m.Body) != want {
				t.Fatalf("after the restart: %v %q, want %q", m.Err, m.Body, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("after the restart: no message %q within 10s", want)
		}
	}

	// --json, with the credentials from the environment; a STOMP client
	// still connected does not hold the stop up.
	cmd := wharfCommand(t.Context(), "stop", "--url", "http://"+w.webAddr, "--json")
	cmd.Env = append(cmd.Env, "WHARF_USER=admin", "WHARF_PASSWORD=secret")
	js, err := cmd.Output()
	var got map[string]any
	if err != nil || json.Unmarshal(js, &got) != nil || got["broker"] != "localhost" || got["stopped"] != true {
		t.Errorf("stop --json: %v, %q; want {broker: localhost, stopped: true}", err, js)
	}
	w.waitExit(t)

	// No broker there: exit 3, not a hang.
	if code, _, errOut := runWharf(t, "stop", "--url", "http://127.0.0.1:1"); code != 3 || !strings.Contains(errOut, "cannot reach it") {
		t.Errorf("stop of nothing: exit %d, %q; want 3", code, errOut)
	}
}

// freePort is a loopback port free a moment ago, for a configuration
// that the admin commands read (port 0 would say nothing to them).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestWharfAdminConfig: --config takes the web server's address from the
// broker's configuration, YAML or activemq.xml with its jetty.xml import:
// its HTTPS connector when it has one (trusting the keystore's
// certificate), else its plain one, 127.0.0.1 for 0.0.0.0. --config with
// --url, a file that does not load, or a configuration without a web
// server are exit status 2 naming the cause.
func TestWharfAdminConfig(t *testing.T) {
	dir := t.TempDir()
	ks, err := os.ReadFile("../../security/testdata/tls/broker.ks")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "broker.ks"), ks, 0o644)
	plain, secure := freePort(t), freePort(t)
	w := startRunIn(t, dir, fmt.Sprintf("{port: %d, realm: realm.properties, https: {port: %d, key_store: broker.ks, key_store_password: password}}", plain, secure))
	defer w.stop(t)
	w.stompSend(t, "cfg.q", "x")

	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// ActiveMQ's layout: activemq.xml importing jetty.xml, which names
	// the same ports (0.0.0.0 for the plain one) and keystore.
	connector := func(https bool) string {
		if !https {
			return ""
		}
		return fmt.Sprintf(`<bean id="SecureConnector" class="org.eclipse.jetty.server.ServerConnector">
  <constructor-arg ref="Server"/>
  <constructor-arg><bean id="handlers" class="org.eclipse.jetty.util.ssl.SslContextFactory">
    <property name="keyStorePath" value="${activemq.conf}/broker.ks"/>
    <property name="keyStorePassword" value="password"/>
  </bean></constructor-arg>
  <property name="host" value="127.0.0.1"/>
  <property name="port" value="%d"/>
</bean>`, secure)
	}
	jetty := func(https bool) string {
		return fmt.Sprintf(`<beans xmlns="http://www.springframework.org/schema/beans">
<bean id="securityLoginService" class="org.eclipse.jetty.security.HashLoginService">
  <property name="name" value="ActiveMQRealm"/>
  <property name="config" value="${activemq.conf}/realm.properties"/>
</bean>
<bean id="jettyPort" class="org.apache.activemq.web.WebConsolePort" init-method="start">
  <property name="host" value="0.0.0.0"/>
  <property name="port" value="%d"/>
</bean>
%s
</beans>`, plain, connector(https))
	}
	activemq := `<beans xmlns="http://www.springframework.org/schema/beans">
<broker xmlns="http://activemq.apache.org/schema/core" brokerName="localhost">
  <transportConnectors><transportConnector name="openwire" uri="tcp://0.0.0.0:61616"/></transportConnectors>
</broker>
<import resource="%s"/>
</beans>`
	sub := func(name string) string {
		d := filepath.Join(dir, name)
		os.Mkdir(d, 0o755)
		return d
	}
	tlsConf, plainConf := sub("tls"), sub("plain")
	for _, d := range []string{tlsConf, plainConf} {
		os.WriteFile(filepath.Join(d, "broker.ks"), ks, 0o644)
		os.WriteFile(filepath.Join(d, "realm.properties"), []byte(testRealm), 0o644)
	}
	os.WriteFile(filepath.Join(tlsConf, "jetty.xml"), []byte(jetty(true)), 0o644)
	os.WriteFile(filepath.Join(plainConf, "jetty.xml"), []byte(jetty(false)), 0o644)
	os.WriteFile(filepath.Join(tlsConf, "activemq.xml"), fmt.Appendf(nil, activemq, "jetty.xml"), 0o644)
	os.WriteFile(filepath.Join(plainConf, "activemq.xml"), fmt.Appendf(nil, activemq, "file:jetty.xml"), 0o644)

	for _, cfg := range []string{filepath.Join(dir, "wharf.yaml"), filepath.Join(tlsConf, "activemq.xml"), filepath.Join(plainConf, "activemq.xml")} {
		code, out, errOut := runWharf(t, "dstat", "queues", "--config", cfg, "--user", "viewer", "--password", "pw", "--json")
		var rows []dstatRow
		if code != 0 || json.Unmarshal([]byte(out), &rows) != nil {
			t.Errorf("dstat --config %s: exit %d, %q, %q; want 0", cfg, code, out, errOut)
			continue
		}
		if i := slices.IndexFunc(rows, func(r dstatRow) bool { return r.Name == "cfg.q" }); i < 0 || rows[i].QueueSize != 1 {
			t.Errorf("dstat --config %s: %v, want cfg.q with 1 message", cfg, rows)
		}
	}

	// Placeholders from the environment: an activemq.xml elsewhere than
	// its jetty.xml, found by ${activemq.conf} = $ACTIVEMQ_CONF.
	etc := sub("etc")
	os.WriteFile(filepath.Join(etc, "activemq.xml"), fmt.Appendf(nil, activemq, "${activemq.conf}/jetty.xml"), 0o644)
	cmd := wharfCommand(t.Context(), "dstat", "queues", "--config", filepath.Join(etc, "activemq.xml"), "--user", "viewer", "--password", "pw")
	cmd.Env = append(cmd.Env, "ACTIVEMQ_CONF="+tlsConf)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "cfg.q") {
		t.Errorf("dstat --config with ACTIVEMQ_CONF: %v, %q", err, out)
	}
	if code, _, errOut := runWharf(t, "dstat", "--config", filepath.Join(etc, "activemq.xml")); code != 2 || !strings.Contains(errOut, "jetty.xml") {
		t.Errorf("dstat --config without ACTIVEMQ_CONF: exit %d, %q; want 2 naming jetty.xml", code, errOut)
	}

	// A keystore that is not the server's: its certificate is refused.
	other, err := os.ReadFile("../../security/testdata/tls/client2.ks")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tlsConf, "broker.ks"), other, 0o644)
	code, _, errOut := runWharf(t, "dstat", "--config", filepath.Join(tlsConf, "activemq.xml"), "--user", "viewer", "--password", "pw")
	if code != 3 || !strings.Contains(errOut, "the server's certificate is not the one in the keystore") {
		t.Errorf("dstat against a server whose certificate is not the keystore's: exit %d, %q; want 3", code, errOut)
	}

	noWeb := write("noweb.yaml", "http: {enabled: false}\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"dstat", "--config", filepath.Join(dir, "wharf.yaml"), "--url", "http://127.0.0.1:8161"}, "give --url or --config, not both"},
		{[]string{"dstat", "--config", filepath.Join(dir, "missing.xml")}, "--config: config: open"},
		{[]string{"stop", "--config", noWeb}, "starts no web server"},
	} {
		if code, out, errOut := runWharf(t, tc.args...); code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("wharf %q: exit %d, %q, %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// stompSend sends persistent text messages to a queue of w, each with a
// receipt.
func (w *runningWharf) stompSend(t *testing.T, queue string, bodies ...string) {
	t.Helper()
	conn, err := stomp.Dial("tcp", w.stompAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Disconnect()
	for _, b := range bodies {
		if err := conn.Send("/queue/"+queue, "text/plain", []byte(b), stomp.SendOpt.Receipt, stomp.SendOpt.Header("persistent", "true")); err != nil {
			t.Fatal(err)
		}
	}
}
