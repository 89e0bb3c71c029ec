package wharf.conformance;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import javax.jms.DeliveryMode;
import javax.jms.MessageProducer;
import javax.jms.Session;

import org.apache.activemq.ActiveMQConnection;
import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.transport.TransportListener;

/**
 * FailoverSend is the producer of the duplicate-send test
 * (conformance/dedup_test.go): ActiveMQ's own JMS client on a failover:
 * URL, sending persistent TextMessages synchronously when told to.
 *
 * <pre>
 *   FailoverSend URL QUEUE
 * </pre>
 *
 * Prints "READY" once connected with its producer. Each line "send TEXT"
 * on stdin sends TEXT and prints "SENT TEXT" once the broker answered
 * (after a reconnect the failover transport sends the unanswered message
 * again, then the answer comes) or "SENDERR TEXT exception". "quit" ends
 * it. The transport's interruptions and resumptions are printed as
 * "INTERRUPTED" and "RESUMED".
 */
public final class FailoverSend {
    private FailoverSend() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: FailoverSend URL QUEUE");
            System.exit(2);
        }
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        String url = args[0] + (args[0].contains("?") ? "&" : "?") + "jms.alwaysSyncSend=true";
        ActiveMQConnection c = (ActiveMQConnection) new ActiveMQConnectionFactory(url).createConnection();
        c.addTransportListener(new TransportListener() {
            @Override
            public void onCommand(Object command) {
            }

            @Override
            public void onException(IOException error) {
                out.println("TRANSPORTERR " + error);
            }

            @Override
            public void transportInterupted() {
                out.println("INTERRUPTED");
            }

            @Override
            public void transportResumed() {
                out.println("RESUMED");
            }
        });
        c.start();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageProducer p = s.createProducer(s.createQueue(args[1]));
        p.setDeliveryMode(DeliveryMode.PERSISTENT);
        out.println("READY");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null;) {
            line = line.trim();
            if (line.equals("quit")) {
                break;
            }
            if (!line.startsWith("send ")) {
                out.println("BADCMD " + line);
                continue;
            }
            String text = line.substring(5);
            try {
                p.send(s.createTextMessage(text));
                out.println("SENT " + text);
            } catch (Exception e) {
                out.println("SENDERR " + text + " " + e);
            }
        }
        c.close();
    }
}
