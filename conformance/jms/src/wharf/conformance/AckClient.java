package wharf.conformance;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import javax.jms.Connection;
import javax.jms.Message;
import javax.jms.MessageConsumer;
import javax.jms.Session;
import javax.jms.TextMessage;

import org.apache.activemq.ActiveMQConnectionFactory;

/**
 * AckClient consumes two queues with ActiveMQ's own JMS client for the
 * confirmed-acknowledgement kill test (conformance/kahadb_ackkill_test.go),
 * until the broker goes away:
 *
 * <pre>
 *   AckClient URL CLIENT_QUEUE TX_QUEUE
 * </pre>
 *
 * CLIENT_QUEUE is read in a CLIENT_ACKNOWLEDGE session of a connection
 * with jms.sendAcksAsync=false, so that Message.acknowledge() waits for
 * the broker's Response to its MessageAck; TX_QUEUE in a transacted
 * session that commits after each message. Each message's text is its key;
 * for each, on stdout: "GOT KEY R" (R: JMSRedelivered), "ACKING KEY" before
 * the acknowledge or commit, "CONFIRMED KEY" once it returned. A failure
 * (the broker killed) ends the thread with "DONE reason"; the program
 * exits when both threads have.
 */
public final class AckClient {
    private AckClient() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: AckClient URL CLIENT_QUEUE TX_QUEUE");
            System.exit(2);
        }
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        String url = args[0] + (args[0].contains("?") ? "&" : "?") + "jms.sendAcksAsync=false";
        Thread client = new Thread(() -> consume(out, url, args[1], false), "client-ack");
        Thread tx = new Thread(() -> consume(out, url, args[2], true), "transacted");
        client.start();
        tx.start();
        client.join();
        tx.join();
    }

    private static void consume(PrintStream out, String url, String queue, boolean transacted) {
        Connection c = null;
        try {
            c = new ActiveMQConnectionFactory(url).createConnection();
            c.start();
            Session s = c.createSession(transacted, transacted ? Session.SESSION_TRANSACTED : Session.CLIENT_ACKNOWLEDGE);
            MessageConsumer k = s.createConsumer(s.createQueue(queue));
            for (;;) {
                Message m = k.receive();
                if (m == null) {
                    out.println("DONE " + queue + " consumer closed");
                    return;
                }
                String key = ((TextMessage) m).getText();
                out.println("GOT " + key + " " + m.getJMSRedelivered());
                out.println("ACKING " + key);
                if (transacted) {
                    s.commit();
                } else {
                    m.acknowledge();
                }
                out.println("CONFIRMED " + key);
            }
        } catch (Exception e) {
            out.println("DONE " + queue + " " + e);
        } finally {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // the broker is gone
                }
            }
        }
    }
}
