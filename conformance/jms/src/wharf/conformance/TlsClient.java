package wharf.conformance;

import java.util.LinkedHashMap;
import java.util.Map;

import javax.jms.Connection;
import javax.jms.JMSException;
import javax.jms.Message;
import javax.jms.MessageConsumer;
import javax.jms.MessageProducer;
import javax.jms.Queue;
import javax.jms.Session;
import javax.jms.TextMessage;

import org.apache.activemq.ActiveMQSslConnectionFactory;

/**
 * TlsClient connects ActiveMQ's JMS client to a broker over TLS with
 * ActiveMQSslConnectionFactory, sends one text message to a queue and
 * receives it back, for conformance/tls_clients_test.go. It prints one line
 * on stdout:
 *
 * <pre>
 *   OK &lt;body received&gt;
 *   ERROR &lt;exception class&gt;: &lt;message&gt; [&lt;- cause class: message ...]
 * </pre>
 *
 * Arguments (all "--name value"):
 *
 * <pre>
 *   --url URL                  ssl://127.0.0.1:PORT (required)
 *   --queue NAME               the queue (required)
 *   --truststore PATH          JKS or PKCS12 file with the CA (required)
 *   --truststore-password PW
 *   --truststore-type TYPE     jks (default) or pkcs12
 *   --keystore PATH            the client certificate and key (optional)
 *   --keystore-password PW
 *   --keystore-type TYPE       jks (default) or pkcs12
 *   --user NAME, --password PW connection credentials (optional)
 *   --timeout SECONDS          receive timeout (default 10)
 * </pre>
 *
 * Exit status: 0 for OK, 1 for ERROR, 2 on bad arguments.
 */
public final class TlsClient {
    private TlsClient() {}

    public static void main(String[] argv) {
        Map<String, String> a = new LinkedHashMap<>();
        for (int i = 0; i < argv.length; i++) {
            if (!argv[i].startsWith("--") || i + 1 >= argv.length) {
                System.err.println("TlsClient: bad argument " + argv[i] + " (want --name value)");
                System.exit(2);
            }
            a.put(argv[i].substring(2), argv[++i]);
        }
        for (String req : new String[] {"url", "queue", "truststore"}) {
            if (!a.containsKey(req)) {
                System.err.println("TlsClient: --" + req + " is required");
                System.exit(2);
            }
        }
        int code;
        try {
            System.out.println("OK " + roundTrip(a));
            code = 0;
        } catch (Exception e) {
            System.out.println("ERROR " + describe(e));
            code = 1;
        }
        System.out.flush();
        // The client's transport threads are not daemons: leave at once.
        System.exit(code);
    }

    private static String roundTrip(Map<String, String> a) throws Exception {
        ActiveMQSslConnectionFactory f = new ActiveMQSslConnectionFactory(a.get("url"));
        f.setTrustStore(a.get("truststore"));
        f.setTrustStorePassword(a.getOrDefault("truststore-password", ""));
        f.setTrustStoreType(a.getOrDefault("truststore-type", "jks"));
        if (a.containsKey("keystore")) {
            f.setKeyStore(a.get("keystore"));
            f.setKeyStorePassword(a.getOrDefault("keystore-password", ""));
            f.setKeyStoreType(a.getOrDefault("keystore-type", "jks"));
        }
        if (a.containsKey("user")) {
            f.setUserName(a.get("user"));
            f.setPassword(a.getOrDefault("password", ""));
        }
        long timeout = Long.parseLong(a.getOrDefault("timeout", "10")) * 1000;
        Connection c = f.createConnection();
        try {
            c.start();
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue q = s.createQueue(a.get("queue"));
            MessageConsumer consumer = s.createConsumer(q);
            MessageProducer p = s.createProducer(q);
            String body = "tls " + a.get("queue");
            p.send(s.createTextMessage(body));
            Message m = consumer.receive(timeout);
            if (m == null) {
                throw new JMSException("no message on " + a.get("queue") + " within " + timeout + " ms");
            }
            String got = ((TextMessage) m).getText();
            if (!body.equals(got)) {
                throw new JMSException("received " + got + ", want " + body);
            }
            return got;
        } finally {
            try {
                c.close();
            } catch (JMSException ignored) {
                // The outcome is already decided.
            }
        }
    }

    /** describe is the exception and its causes on one line. */
    private static String describe(Throwable e) {
        StringBuilder b = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (b.length() > 0) {
                b.append(" <- ");
            }
            b.append(t.getClass().getName()).append(": ").append(String.valueOf(t.getMessage()).replace('\n', ' '));
        }
        return b.toString();
    }
}
