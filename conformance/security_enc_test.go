package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/go-stomp/stomp/v3"

	"wharf/internal/activemq"
	"wharf/security/enc"
)

// ENC() values end to end, both ways with Debian's ActiveMQ 5.17:
//
//   - values made by ActiveMQ's `activemq encrypt` are read by `wharf run`,
//     through the Jasypt beans of ActiveMQ's examples/conf/
//     activemq-security.xml (EnvironmentStringPBEConfig with
//     passwordEnvName ACTIVEMQ_ENCRYPTION_PASSWORD, StandardPBEStringEncryptor,
//     EncryptablePropertyPlaceholderConfigurer over credentials-enc.properties)
//     feeding a simpleAuthenticationPlugin, and through a JAAS
//     PropertiesLoginModule with decrypt=true over a users.properties with
//     ENC() passwords;
//   - values made by `wharf encrypt` are read by ActiveMQ 5.17 through the
//     same JAAS configuration.
//
// Each side is then logged in to over STOMP with the plain password
// (accepted) and a wrong one (refused with ActiveMQ's
// "User name [x] or password is invalid.").
//
// Debian's ActiveMQ cannot run the Jasypt placeholder configurer itself:
// libjasypt-java ships jasypt's core (StandardPBEStringEncryptor,
// EnvironmentStringPBEConfig) but none of the jasypt-spring* modules that
// hold EncryptablePropertyPlaceholderConfigurer, and Debian packages no
// other. ActiveMQ's JAAS decrypt=true uses only the core, so that is the
// path checked on ActiveMQ's side.

// encPassword is the encryption password both brokers get through
// ACTIVEMQ_ENCRYPTION_PASSWORD.
const encPassword = "enc-flow pass~1"

// encEnv is the environment variable ActiveMQ's Jasypt config reads.
const encEnv = "ACTIVEMQ_ENCRYPTION_PASSWORD"

// encUsers are the accounts of the ENC() tests: user → plain password.
var encUsers = map[string]string{
	"orders-svc": "0rders s3cret",
	"ops":        "ops-Pa55!",
}

// amqEncrypt runs ActiveMQ's `activemq encrypt` (activemq-console's
// EncryptCommand) and returns the text after "Encrypted text: ".
func amqEncrypt(t *testing.T, password, input string) string {
	t.Helper()
	skipWithoutActiveMQ(t)
	base := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), procStartTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", "-Dactivemq.home="+amqHome, "-Dactivemq.base="+base,
		"-Djava.io.tmpdir="+base, "-jar", filepath.Join(amqHome, "bin", "activemq.jar"),
		"encrypt", "--password", password, "--input", input)
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("activemq encrypt: %v\n%s", err, out)
	}
	return encResult(t, "activemq encrypt", string(out), "Encrypted text: ")
}

// wharfEncrypt runs `wharf encrypt` and returns the text after
// "Encrypted text: ".
func wharfEncrypt(t *testing.T, password, input string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), procStartTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, wharfBinary(t), "encrypt", "--password", password, "--input", input).CombinedOutput()
	if err != nil {
		t.Fatalf("wharf encrypt: %v\n%s", err, out)
	}
	return encResult(t, "wharf encrypt", string(out), "Encrypted text: ")
}

func encResult(t *testing.T, tool, out, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimRight(l, "\r"), prefix); ok && v != "" {
			return v
		}
	}
	t.Fatalf("no %q line in the output of %s:\n%s", prefix, tool, out)
	return ""
}

// encryptAll encrypts every password of encUsers with encrypt, in
// parallel (each `activemq encrypt` is a JVM start).
func encryptAll(t *testing.T, encrypt func(*testing.T, string, string) string) map[string]string {
	t.Helper()
	var mu sync.Mutex
	out := map[string]string{}
	t.Run("encrypt", func(t *testing.T) {
		for user, pw := range encUsers {
			t.Run(user, func(t *testing.T) {
				t.Parallel()
				c := encrypt(t, encPassword, pw)
				mu.Lock()
				out[user] = c
				mu.Unlock()
			})
		}
	})
	if len(out) != len(encUsers) {
		t.FailNow()
	}
	return out
}

// writeFiles writes name → content into dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// encBeans are the Jasypt beans of ActiveMQ's activemq-security.xml, with
// the properties file in ${activemq.conf}.
const encBeans = `
  <bean id="environmentVariablesConfiguration" class="org.jasypt.encryption.pbe.config.EnvironmentStringPBEConfig">
    <property name="algorithm" value="PBEWithMD5AndDES"/>
    <property name="passwordEnvName" value="ACTIVEMQ_ENCRYPTION_PASSWORD"/>
  </bean>
  <bean id="configurationEncryptor" class="org.jasypt.encryption.pbe.StandardPBEStringEncryptor">
    <property name="config" ref="environmentVariablesConfiguration"/>
  </bean>
  <bean id="propertyConfigurer" class="org.jasypt.spring4.properties.EncryptablePropertyPlaceholderConfigurer">
    <constructor-arg ref="configurationEncryptor"/>
    <property name="location" value="file:${activemq.conf}/credentials-enc.properties"/>
  </bean>
`

// encBrokerXML is an activemq.xml with beans (Jasypt's or none), plugins
// and connectors on loopback port 0.
func encBrokerXML(beans, plugins, connectors string) string {
	return `<beans xmlns="http://www.springframework.org/schema/beans"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="http://www.springframework.org/schema/beans http://www.springframework.org/schema/beans/spring-beans.xsd
  http://activemq.apache.org/schema/core http://activemq.apache.org/schema/core/activemq-core.xsd">
` + beans + `
  <broker xmlns="http://activemq.apache.org/schema/core" brokerName="encflow"
          useJmx="false" persistent="false" schedulerSupport="false">
    <plugins>
` + plugins + `
    </plugins>
    <transportConnectors>
` + connectors + `
    </transportConnectors>
  </broker>
</beans>
`
}

const encWharfConnectors = `      <transportConnector name="openwire" uri="tcp://127.0.0.1:0"/>
      <transportConnector name="stomp" uri="stomp://127.0.0.1:0"/>`

const encSimplePlugin = `      <simpleAuthenticationPlugin anonymousAccessAllowed="false">
        <users>
          <authenticationUser username="orders-svc" password="${orders.password}" groups="producers"/>
          <authenticationUser username="ops" password="${ops.password}" groups="admins"/>
        </users>
      </simpleAuthenticationPlugin>`

const encJAASPlugin = `      <jaasAuthenticationPlugin configuration="activemq"/>`

// encLoginConfig is login.config's "activemq" entry with decrypt=true,
// the option of ActiveMQ's PropertiesLoginModule (PropertiesLoader) that
// decrypts ENC() values with ACTIVEMQ_ENCRYPTION_PASSWORD.
const encLoginConfig = `activemq {
    org.apache.activemq.jaas.PropertiesLoginModule required
        org.apache.activemq.jaas.properties.user="users.properties"
        org.apache.activemq.jaas.properties.group="groups.properties"
        decrypt=true;
};
`

// encJAASFiles are login.config, users.properties (ENC() passwords) and
// groups.properties for the encrypted values encs.
func encJAASFiles(encs map[string]string) map[string]string {
	return map[string]string{
		"login.config":      encLoginConfig,
		"users.properties":  "orders-svc=ENC(" + encs["orders-svc"] + ")\nops = ENC(" + encs["ops"] + ")\n",
		"groups.properties": "producers=orders-svc\nadmins=ops\n",
	}
}

// startWharfRun runs `wharf run --log-format json --config cfg` with env
// added to the environment and returns its STOMP address once it started.
func startWharfRun(t *testing.T, cfg string, env []string, args ...string) *wharfProc {
	t.Helper()
	cmd := exec.Command(wharfBinary(t), append([]string{"run", "--log-format", "json", "--http=false", "--config", cfg}, args...)...)
	cmd.Env = append(encEnvWithout(), env...)
	p := startProc(t, "wharf", cmd)
	p.waitLine(regexp.MustCompile(`"msg":"broker started"`), procStartTimeout)
	w := &wharfProc{proc: p}
	lines, _ := p.log.snapshot()
	for _, line := range lines {
		if !wharfListening.MatchString(line) {
			continue
		}
		var rec struct{ Connector, Addr string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("wharf log line %q: %v", line, err)
		}
		if rec.Connector == "stomp" {
			w.stomp = rec.Addr
		}
	}
	if w.stomp == "" {
		t.Fatalf("wharf started without logging its stomp listener; log:\n%s", p.log.tail(60))
	}
	return w
}

// encEnvWithout is the test's environment without
// ACTIVEMQ_ENCRYPTION_PASSWORD (a developer may have it set).
func encEnvWithout() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, encEnv+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// stompLogin connects over STOMP 1.2 as user and disconnects; it returns
// the broker's refusal (the ERROR frame's message header) or nil.
func stompLogin(addr, user, password string) error {
	c, err := stomp.Dial("tcp", addr, stomp.ConnOpt.Login(user, password),
		stomp.ConnOpt.Host("localhost"), stomp.ConnOpt.HeartBeat(0, 0))
	if err != nil {
		return err
	}
	return c.Disconnect()
}

// checkLogins logs in as every user of encUsers with its password
// (accepted) and with a wrong one (refused with ActiveMQ's text).
func checkLogins(t *testing.T, broker, addr string) {
	t.Helper()
	for user, pw := range encUsers {
		if err := stompLogin(addr, user, pw); err != nil {
			t.Errorf("%s: STOMP login as %s with its password: %v", broker, user, err)
		}
		err := stompLogin(addr, user, pw+"-wrong")
		want := "User name [" + user + "] or password is invalid."
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: STOMP login as %s with a wrong password: %v; want %q", broker, user, err, want)
		}
	}
}

// TestConformanceSecurityEncWharfRunReadsActiveMQSimple: passwords made by
// `activemq encrypt`, in credentials-enc.properties read through the
// Jasypt beans of activemq-security.xml, are the simpleAuthenticationPlugin
// passwords of `wharf run`.
func TestConformanceSecurityEncWharfRunReadsActiveMQSimple(t *testing.T) {
	if testing.Short() {
		t.Skip("starts JVMs and wharf run: not with -short")
	}
	encs := encryptAll(t, amqEncrypt)
	conf := filepath.Join(t.TempDir(), "conf")
	writeFiles(t, conf, map[string]string{
		"activemq.xml": encBrokerXML(encBeans, encSimplePlugin, encWharfConnectors),
		"credentials-enc.properties": "orders.password=ENC(" + encs["orders-svc"] + ")\n" +
			"ops.password=ENC(" + encs["ops"] + ")\n",
	})
	w := startWharfRun(t, filepath.Join(conf, "activemq.xml"), []string{encEnv + "=" + encPassword}, "-Dactivemq.conf="+conf)
	checkLogins(t, "wharf run", w.stomp)
}

// TestConformanceSecurityEncWharfRunReadsActiveMQJAAS: ENC() passwords
// made by `activemq encrypt` in a users.properties that login.config reads
// with decrypt=true.
func TestConformanceSecurityEncWharfRunReadsActiveMQJAAS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts JVMs and wharf run: not with -short")
	}
	encs := encryptAll(t, amqEncrypt)
	conf := filepath.Join(t.TempDir(), "conf")
	files := encJAASFiles(encs)
	files["activemq.xml"] = encBrokerXML("", encJAASPlugin, encWharfConnectors)
	writeFiles(t, conf, files)
	w := startWharfRun(t, filepath.Join(conf, "activemq.xml"), []string{encEnv + "=" + encPassword})
	checkLogins(t, "wharf run", w.stomp)
}

var amqSTOMPListening = regexp.MustCompile(`Listening for connections at: stomp://[^:/]+:(\d+)`)

// TestConformanceSecurityEncActiveMQReadsWharf: ENC() passwords made by
// `wharf encrypt`, in the JAAS users.properties, are read by ActiveMQ 5.17
// (PropertiesLoginModule decrypt=true, ACTIVEMQ_ENCRYPTION_PASSWORD set).
// ActiveMQ's STOMP connector is on loopback port 0; the bound port is read
// from its log.
func TestConformanceSecurityEncActiveMQReadsWharf(t *testing.T) {
	if testing.Short() {
		t.Skip("starts ActiveMQ: not with -short")
	}
	skipWithoutActiveMQ(t)
	encs := encryptAll(t, wharfEncrypt)
	for user, c := range encs {
		// The value is Jasypt's: base64 of 8 bytes of salt and whole DES blocks.
		if plain, err := enc.Decrypt(c, encPassword); err != nil || plain != encUsers[user] {
			t.Fatalf("wharf encrypt made %q for %s, which decrypts to %q, %v", c, user, plain, err)
		}
	}
	base := t.TempDir()
	conf := filepath.Join(base, "conf")
	files := encJAASFiles(encs)
	files["activemq.xml"] = encBrokerXML("", encJAASPlugin,
		`      <transportConnector name="stomp" uri="stomp://127.0.0.1:0"/>`)
	log4j, err := os.ReadFile(filepath.FromSlash("activemq/log4j.properties"))
	if err != nil {
		t.Fatal(err)
	}
	files["log4j.properties"] = string(log4j)
	writeFiles(t, conf, files)
	for _, d := range []string{"data", "tmp"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := activemq.Command(base, "java.security.auth.login.config="+filepath.Join(conf, "login.config"))
	cmd.Env = append(encEnvWithout(), encEnv+"="+encPassword)
	p := startProc(t, "activemq", cmd)
	port := p.waitLine(amqSTOMPListening, procStartTimeout)[1]
	p.waitLine(regexp.MustCompile(`Apache ActiveMQ \S+ \(.*\) started`), procStartTimeout)
	checkLogins(t, "ActiveMQ", "127.0.0.1:"+port)
}

// wharfRunFails runs `wharf run --config cfg` without
// ACTIVEMQ_ENCRYPTION_PASSWORD and returns its output; it must exit with
// an error before it listens.
func wharfRunFails(t *testing.T, cfg string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), procStartTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, wharfBinary(t), append([]string{"run", "--http=false", "--config", cfg}, args...)...)
	cmd.Env = encEnvWithout()
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("wharf run without %s: %v, want a non-zero exit; output:\n%s", encEnv, err, out)
	}
	if strings.Contains(string(out), `Listening for connections at`) {
		t.Errorf("wharf run without %s listened before failing:\n%s", encEnv, out)
	}
	return string(out)
}

// TestConformanceSecurityEncMissingPassword: without
// ACTIVEMQ_ENCRYPTION_PASSWORD, `wharf run` refuses to start and names
// the placeholder whose ENC() value it could not decrypt (Jasypt-bean
// variant) or the users.properties key (JAAS variant).
//
// DEVIATION: ActiveMQ fails differently in each case: the Spring context
// does not start (Jasypt: "Password not set for Password Based
// Encryptor"), and with JAAS decrypt=true the broker starts and every
// login through that module fails.
func TestConformanceSecurityEncMissingPassword(t *testing.T) {
	encs := map[string]string{}
	for user, pw := range encUsers {
		c, err := enc.Encrypt(pw, encPassword)
		if err != nil {
			t.Fatal(err)
		}
		encs[user] = c
	}
	t.Run("simple", func(t *testing.T) {
		conf := filepath.Join(t.TempDir(), "conf")
		writeFiles(t, conf, map[string]string{
			"activemq.xml":               encBrokerXML(encBeans, encSimplePlugin, encWharfConnectors),
			"credentials-enc.properties": "orders.password=ENC(" + encs["orders-svc"] + ")\nops.password=ENC(" + encs["ops"] + ")\n",
		})
		out := wharfRunFails(t, filepath.Join(conf, "activemq.xml"), "-Dactivemq.conf="+conf)
		for _, want := range []string{
			"${orders.password} is an ENC() value but the encryption password variable ACTIVEMQ_ENCRYPTION_PASSWORD is not set",
			"${ops.password} is an ENC() value but the encryption password variable ACTIVEMQ_ENCRYPTION_PASSWORD is not set",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("wharf run output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("jaas", func(t *testing.T) {
		conf := filepath.Join(t.TempDir(), "conf")
		files := encJAASFiles(encs)
		files["activemq.xml"] = encBrokerXML("", encJAASPlugin, encWharfConnectors)
		writeFiles(t, conf, files)
		out := wharfRunFails(t, filepath.Join(conf, "activemq.xml"))
		want := "orders-svc: " + encEnv + " is not set"
		if !strings.Contains(out, want) || !strings.Contains(out, "users.properties") {
			t.Errorf("wharf run output lacks %q and the file name users.properties:\n%s", want, out)
		}
	})
}
