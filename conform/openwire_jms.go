package conform

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The OpenWire case with ActiveMQ's own JMS client, when this machine has
// Java and the client's jars (Debian's libactivemq-java): a small program,
// run by Java's source launcher, sends and receives through the broker and
// prints what it got; the case checks those lines. Without Java or the jars
// it skips, naming what to install, so a report says which client ran.

// jmsProgram sends a TextMessage (correlation id, type, priority 7, a
// string and an int property) and a BytesMessage to a queue, receives
// both and prints one "name=value" line per observed field.
const jmsProgram = `import javax.jms.*;
import org.apache.activemq.ActiveMQConnectionFactory;

public class ConformJMS {
    public static void main(String[] a) throws Exception {
        ActiveMQConnectionFactory f = new ActiveMQConnectionFactory(a[0]);
        Connection c = a.length > 2 ? f.createConnection(a[2], a[3]) : f.createConnection();
        try {
            c.start();
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue q = s.createQueue(a[1]);
            MessageProducer p = s.createProducer(q);
            TextMessage m = s.createTextMessage("h\u00e9llo w\u00f6rld");
            m.setJMSCorrelationID("corr-1");
            m.setJMSType("greeting");
            m.setStringProperty("color", "red");
            m.setIntProperty("n", 7);
            p.send(m, DeliveryMode.PERSISTENT, 7, 0);
            BytesMessage b = s.createBytesMessage();
            b.writeBytes(new byte[] {0, 1, 2});
            p.send(b);
            MessageConsumer k = s.createConsumer(q);
            Message r = k.receive(5000);
            if (!(r instanceof TextMessage)) {
                System.out.println("first=" + r);
                return;
            }
            TextMessage t = (TextMessage) r;
            System.out.println("text=" + t.getText());
            System.out.println("correlation=" + t.getJMSCorrelationID());
            System.out.println("type=" + t.getJMSType());
            System.out.println("priority=" + t.getJMSPriority());
            System.out.println("persistent=" + (t.getJMSDeliveryMode() == DeliveryMode.PERSISTENT));
            System.out.println("redelivered=" + t.getJMSRedelivered());
            System.out.println("color=" + t.getStringProperty("color"));
            System.out.println("n=" + t.getIntProperty("n"));
            Message r2 = k.receive(5000);
            if (r2 instanceof BytesMessage) {
                BytesMessage b2 = (BytesMessage) r2;
                System.out.println("bytes=" + b2.getBodyLength());
            } else {
                System.out.println("second=" + r2);
            }
        } finally {
            c.close();
        }
    }
}
`

// jmsClasspath returns the JMS client's class path, or what is missing.
func jmsClasspath() (string, string) {
	if _, err := exec.LookPath("java"); err != nil {
		return "", "java (apt-get install default-jre-headless)"
	}
	var cp []string
	for _, j := range JMSJars {
		p := filepath.Join(JMSJarDir, j)
		if _, err := os.Stat(p); err != nil {
			return "", p + " (apt-get install libactivemq-java libslf4j-java)"
		}
		cp = append(cp, p)
	}
	return strings.Join(cp, string(os.PathListSeparator)), ""
}

func openWireJMSRoundTrip(t *T) {
	cp, missing := jmsClasspath()
	if missing != "" {
		t.Skipf("ActiveMQ's JMS client cannot run here: no %s", missing)
	}
	if v, err := os.Readlink(filepath.Join(JMSJarDir, "activemq-client.jar")); err == nil {
		t.Observe("client", "ActiveMQ JMS client %s", filepath.Base(v))
	} else {
		t.Observe("client", "ActiveMQ JMS client %s", filepath.Join(JMSJarDir, "activemq-client.jar"))
	}
	dir, err := os.MkdirTemp("", "wharf-conform-jms-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	src := filepath.Join(dir, "ConformJMS.java")
	if err := os.WriteFile(src, []byte(jmsProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-cp", cp, src, "tcp://" + t.Addr(OpenWire), t.Uniq()}
	if t.User() != "" {
		args = append(args, t.User(), t.Password())
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", args...)
	cmd.Env = append(os.Environ(), "JAVA_TOOL_OPTIONS=-Dfile.encoding=UTF-8 -Dstdout.encoding=UTF-8")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("the JMS program failed: %v\n%s%s", err, out, stderr)
	}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			got[k] = v
			t.Observe("recv", "JMS %s", l)
		}
	}
	want := map[string]string{
		"text": "héllo wörld", "correlation": "corr-1", "type": "greeting", "priority": "7",
		"persistent": "true", "redelivered": "false", "color": "red", "n": "7", "bytes": "3",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q (output %q)", k, got[k], v, out)
		}
	}
}

func init() {
	register(Case{Name: "openwire/jms/round-trip", Needs: []string{OpenWire}, Run: openWireJMSRoundTrip, Timeout: 90 * time.Second,
		Pins:   "ActiveMQ's JMS client gets back a TextMessage's text, JMSCorrelationID, JMSType, priority and properties, and a BytesMessage",
		Source: "ActiveMQ JMS client (ActiveMQConnectionFactory, ActiveMQSession); JMS 1.1 §3"})
}
