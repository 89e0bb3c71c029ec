package conformance

import (
	"errors"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// tlsTargets are the brokers the TLS client tests run against: Wharf
// in-process, and Debian's ActiveMQ 5.17 with the same configuration
// (skipped when it is not installed).
var tlsTargets = []string{"wharf", "activemq"}

// TestTLSClients runs each real client over TLS against
// tlsclients/activemq.xml (no authentication): ActiveMQ's JMS client on
// ssl:// without and with a client certificate (JKS and PKCS12 keystores)
// and refused without one where the connector needs it, stomp.py and
// mosquitto with the CA alone and with a client certificate, and Qpid
// Proton over amqps (Wharf only: Debian's ActiveMQ has no AMQP).
func TestTLSClients(t *testing.T) {
	for _, target := range tlsTargets {
		t.Run(target, func(t *testing.T) {
			b := startTLSTarget(t, target, "activemq.xml")
			f := tlsClientFixtures

			t.Run("JMS/ssl", func(t *testing.T) {
				last, err, out := jmsTLS(t, jmsTLSArgs(t, b.addr(t, "ssl"), uniq(t), "")...)
				expectOK(t, "JMS ssl://", last, err, out)
			})
			t.Run("JMS/ssl-client-cert-jks", func(t *testing.T) {
				last, err, out := jmsTLS(t, jmsTLSArgs(t, b.addr(t, "ssl-need"), uniq(t), f.clientJKS)...)
				expectOK(t, "JMS ssl:// needClientAuth, JKS keystore", last, err, out)
			})
			t.Run("JMS/ssl-client-cert-pkcs12", func(t *testing.T) {
				last, err, out := jmsTLS(t, jmsTLSArgs(t, b.addr(t, "ssl-need"), uniq(t), f.clientP12)...)
				expectOK(t, "JMS ssl:// needClientAuth, PKCS12 keystore", last, err, out)
			})
			t.Run("JMS/ssl-need-without-cert", func(t *testing.T) {
				last, err, out := jmsTLS(t, jmsTLSArgs(t, b.addr(t, "ssl-need"), uniq(t), "")...)
				expectError(t, "JMS ssl:// needClientAuth without a certificate", last, err, out)
			})
			t.Run("STOMP/stomp.py", func(t *testing.T) {
				skipWithoutPython(t, "stomp", stomppyInstallHint)
				addr := b.addr(t, "stomp-ssl")
				last, err, out := runStompPy(t, addr, uniq(t))
				expectOK(t, "stomp.py stomp+ssl://", last, err, out)
			})
			t.Run("STOMP/stomp.py-client-cert", func(t *testing.T) {
				skipWithoutPython(t, "stomp", stomppyInstallHint)
				addr := b.addr(t, "stomp-ssl")
				last, err, out := runStompPy(t, addr, uniq(t), f.clientCert, f.clientKey)
				expectOK(t, "stomp.py stomp+ssl:// with a client certificate", last, err, out)
			})
			t.Run("MQTT/mosquitto", func(t *testing.T) {
				mosquittoRoundTrip(t, b.addr(t, "mqtt-ssl"), "tls/"+uniq(t))
			})
			t.Run("MQTT/mosquitto-client-cert", func(t *testing.T) {
				mosquittoRoundTrip(t, b.addr(t, "mqtt-ssl"), "tls/"+uniq(t), f.clientCert, f.clientKey)
			})
			t.Run("AMQP/proton", func(t *testing.T) {
				skipWithoutPython(t, "proton.utils", protonInstallHint)
				last, err, out := runProtonPy(t, b.addr(t, "amqp-ssl"), uniq(t))
				expectOK(t, "Qpid Proton amqps", last, err, out)
			})
			t.Run("AMQP/proton-client-cert", func(t *testing.T) {
				skipWithoutPython(t, "proton.utils", protonInstallHint)
				last, err, out := runProtonPy(t, b.addr(t, "amqp-ssl"), uniq(t), f.clientCert, f.clientKey)
				expectOK(t, "Qpid Proton amqps with a client certificate", last, err, out)
			})
		})
	}
}

// TestTLSCertificateUser runs tlsclients/activemq-cert.xml:
// jaasDualAuthenticationPlugin maps the client certificate's DN to
// certuser (TextFileCertificateLoginModule), whose group may use tls.>
// only. Each client logs in by its certificate alone and works on tls.>;
// the JMS client is refused elsewhere with a message naming certuser, and
// refused without a certificate.
func TestTLSCertificateUser(t *testing.T) {
	for _, target := range tlsTargets {
		t.Run(target, func(t *testing.T) {
			b := startTLSTarget(t, target, "activemq-cert.xml")
			f := tlsClientFixtures

			t.Run("JMS/cert-user", func(t *testing.T) {
				last, err, out := jmsTLS(t, jmsTLSArgs(t, b.addr(t, "ssl"), "tls."+uniq(t), f.clientJKS)...)
				expectOK(t, "JMS as certuser on tls.>", last, err, out)
			})
			t.Run("JMS/cert-user-refused-elsewhere", func(t *testing.T) {
				q := "other." + uniq(t)
				last, err, out := jmsTLS(t, jmsTLSArgs(t, b.addr(t, "ssl"), q, f.clientJKS)...)
				// ActiveMQ names the subject by its certificate's DN
				// (JaasCertificateSecurityContext), not by the user the
				// DN maps to; the map's groups are certuser's.
				expectError(t, "JMS as certuser on other.>", last, err, out,
					"JMSSecurityException: User "+f.clientDN+" is not authorized to read from: queue://"+q)
			})
			t.Run("JMS/no-cert", func(t *testing.T) {
				last, err, out := jmsTLS(t, jmsTLSArgs(t, b.addr(t, "ssl"), "tls."+uniq(t), "")...)
				expectError(t, "JMS without a certificate", last, err, out)
			})
			t.Run("JMS/untrusted-cert", func(t *testing.T) {
				last, err, out := jmsTLS(t, jmsTLSArgs(t, b.addr(t, "ssl"), "tls."+uniq(t), f.untrustedP12)...)
				expectError(t, "JMS with an untrusted certificate", last, err, out)
			})
			t.Run("STOMP/stomp.py", func(t *testing.T) {
				skipWithoutPython(t, "stomp", stomppyInstallHint)
				last, err, out := runStompPy(t, b.addr(t, "stomp-ssl"), "tls."+uniq(t), f.clientCert, f.clientKey)
				expectOK(t, "stomp.py as certuser", last, err, out)
			})
			t.Run("MQTT/mosquitto", func(t *testing.T) {
				mosquittoRoundTrip(t, b.addr(t, "mqtt-ssl"), "tls/"+uniq(t), f.clientCert, f.clientKey)
			})
			t.Run("AMQP/proton", func(t *testing.T) {
				skipWithoutPython(t, "proton.utils", protonInstallHint)
				last, err, out := runProtonPy(t, b.addr(t, "amqp-ssl"), "tls."+uniq(t), f.clientCert, f.clientKey)
				expectOK(t, "Qpid Proton as certuser", last, err, out)
			})
		})
	}
}

// runStompPy runs tlsclients/stomp_tls.py against addr with the fixture CA
// and, when given, a PEM client certificate and key.
func runStompPy(t *testing.T, addr, queue string, certKey ...string) (string, error, string) {
	t.Helper()
	return runPyClient(t, "stomp_tls.py", addr, queue, certKey...)
}

// runProtonPy runs tlsclients/proton_tls.py as runStompPy runs stomp.py.
func runProtonPy(t *testing.T, addr, queue string, certKey ...string) (string, error, string) {
	t.Helper()
	return runPyClient(t, "proton_tls.py", addr, queue, certKey...)
}

func runPyClient(t *testing.T, script, addr, queue string, certKey ...string) (string, error, string) {
	t.Helper()
	host, port := splitAddr(t, addr)
	args := []string{filepath.Join("tlsclients", script), host, port, fixture(t, tlsClientFixtures.caPEM), queue}
	for _, f := range certKey {
		args = append(args, fixture(t, f))
	}
	// stomp.py reads an SSLSocket in its receiver thread while the
	// caller's thread writes to it, which OpenSSL does not allow: now and
	// then the interpreter dies of it ("double free or corruption",
	// SIGABRT), against ActiveMQ and Wharf alike. A client killed by a
	// signal is the client's crash, not an answer from the broker: it is
	// logged and run once more.
	last, err, out := runClient(t, "/usr/bin/python3", args...)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Logf("%s died of %v (a client crash), run again:\n%s", script, ws.Signal(), tail(out, 1000))
			return runClient(t, "/usr/bin/python3", args...)
		}
	}
	return last, err, out
}
