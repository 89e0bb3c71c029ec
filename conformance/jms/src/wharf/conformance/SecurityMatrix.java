package wharf.conformance;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Enumeration;

import javax.jms.Connection;
import javax.jms.Destination;
import javax.jms.JMSException;
import javax.jms.Message;
import javax.jms.MessageConsumer;
import javax.jms.MessageProducer;
import javax.jms.QueueBrowser;
import javax.jms.Session;
import javax.jms.TemporaryQueue;
import javax.jms.TextMessage;

import org.apache.activemq.ActiveMQConnectionFactory;

/**
 * The OpenWire cells of the security matrix (conformance/security_jms_test.go)
 * with ActiveMQ's own JMS client. It reads one command a line from stdin and
 * answers one line on stdout: "ok ..." or the exception's class and message,
 * so that the Go test can check the broker between cells.
 *
 * Commands (user "-" means no credentials):
 *   connect USER PASS
 *   send USER PASS queue|topic NAME BODY
 *   consume USER PASS NAME BODY        receive from a queue, expect BODY
 *   browse USER PASS NAME BODY         browse a queue, look for BODY
 *   subscribe USER PASS NAME           non-durable topic consumer
 *   durable USER PASS NAME CLIENTID    durable topic subscriber
 *   createconsumer USER PASS NAME      queue consumer, nothing received
 *   temp USER PASS BODY                temp queue: consumer, send, receive
 *   advisory USER PASS                 consumer on ActiveMQ.Advisory.Queue
 */
public final class SecurityMatrix {
    private final String url;

    private SecurityMatrix(String url) {
        this.url = url;
    }

    public static void main(String[] args) throws Exception {
        SecurityMatrix m = new SecurityMatrix(args[0]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            String out;
            try {
                out = m.run(line.split(" "));
            } catch (Throwable e) {
                out = describe(e);
            }
            System.out.println(out.replace('\n', ' '));
            System.out.flush();
        }
    }

    /** describe is the exception's class and message, and its cause's. */
    static String describe(Throwable e) {
        String s = e.getClass().getSimpleName() + ": " + e.getMessage();
        Throwable c = e.getCause();
        if (c != null && c.getMessage() != null && !c.getMessage().equals(e.getMessage())) {
            s += " (cause " + c.getClass().getSimpleName() + ": " + c.getMessage() + ")";
        }
        return s;
    }

    private Connection open(String user, String pass, String clientID) throws JMSException {
        ActiveMQConnectionFactory f = user.equals("-")
                ? new ActiveMQConnectionFactory(url)
                : new ActiveMQConnectionFactory(user, pass, url);
        f.setCloseTimeout(5000);
        f.setSendTimeout(10000);
        Connection c = f.createConnection();
        try {
            if (clientID != null) {
                c.setClientID(clientID);
            }
            c.start();
        } catch (JMSException e) {
            closeQuietly(c);
            throw e;
        }
        return c;
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (Throwable ignored) {
            // The outcome is already decided.
        }
    }

    private String run(String[] a) throws Exception {
        String cmd = a[0];
        Connection c = open(a[1], a[2], cmd.equals("durable") ? a[4] : null);
        try {
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            switch (cmd) {
                case "connect":
                    return "ok";
                case "send": {
                    Destination d = a[3].equals("queue") ? s.createQueue(a[4]) : s.createTopic(a[4]);
                    MessageProducer p = s.createProducer(d);
                    p.send(s.createTextMessage(a[5]));
                    return "ok";
                }
                case "consume": {
                    MessageConsumer k = s.createConsumer(s.createQueue(a[3]));
                    Message msg = k.receive(5000);
                    return "ok got=" + (msg instanceof TextMessage && a[4].equals(((TextMessage) msg).getText()));
                }
                case "browse": {
                    QueueBrowser b = s.createBrowser(s.createQueue(a[3]));
                    Enumeration<?> e = b.getEnumeration();
                    boolean got = false;
                    while (e.hasMoreElements()) {
                        Object o = e.nextElement();
                        got |= o instanceof TextMessage && a[4].equals(((TextMessage) o).getText());
                    }
                    return "ok got=" + got;
                }
                case "subscribe":
                    s.createConsumer(s.createTopic(a[3]));
                    return "ok";
                case "durable":
                    s.createDurableSubscriber(s.createTopic(a[3]), "sub");
                    return "ok";
                case "createconsumer":
                    s.createConsumer(s.createQueue(a[3]));
                    return "ok";
                case "temp": {
                    TemporaryQueue q = s.createTemporaryQueue();
                    MessageConsumer k = s.createConsumer(q);
                    s.createProducer(q).send(s.createTextMessage(a[3]));
                    Message msg = k.receive(5000);
                    return "ok got=" + (msg instanceof TextMessage && a[3].equals(((TextMessage) msg).getText()));
                }
                case "advisory":
                    s.createConsumer(s.createTopic("ActiveMQ.Advisory.Queue"));
                    return "ok";
                default:
                    return "unknown command " + cmd;
            }
        } finally {
            closeQuietly(c);
        }
    }
}
