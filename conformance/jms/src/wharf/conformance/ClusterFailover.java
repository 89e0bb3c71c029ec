package wharf.conformance;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import javax.jms.DeliveryMode;
import javax.jms.MessageConsumer;
import javax.jms.MessageProducer;
import javax.jms.Queue;
import javax.jms.Session;
import javax.jms.TextMessage;

import org.apache.activemq.ActiveMQConnection;
import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.command.ConnectionControl;
import org.apache.activemq.transport.TransportListener;

/**
 * ClusterFailover is a failover client that must learn its brokers from
 * the ConnectionControl (conformance/failover_cluster_test.go):
 *
 * <pre>
 *   ClusterFailover URL QUEUE
 * </pre>
 *
 * connects with ActiveMQ's JMS client to URL (a failover: URL naming one
 * broker), prints each ConnectionControl the brokers send as
 * "CONTROL connectedBrokers=... rebalance=..." and "BROKER name" once
 * connected; then, for each line "send" on its standard input, sends one
 * persistent message to QUEUE, receives it back (30 s at most) and
 * prints "RECEIVED text BROKER name", the broker it is connected to
 * then. It exits at the end of its input.
 */
public final class ClusterFailover {
    private ClusterFailover() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: ClusterFailover URL QUEUE");
            System.exit(2);
        }
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        ActiveMQConnection c = (ActiveMQConnection) new ActiveMQConnectionFactory(args[0]).createConnection();
        c.addTransportListener(new TransportListener() {
            @Override
            public void onCommand(Object command) {
                if (command instanceof ConnectionControl) {
                    ConnectionControl cc = (ConnectionControl) command;
                    out.println("CONTROL connectedBrokers=" + cc.getConnectedBrokers() + " rebalance=" + cc.isRebalanceConnection());
                }
            }

            @Override
            public void onException(IOException error) {
                out.println("EXCEPTION " + error);
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
        out.println("BROKER " + c.getBrokerName());
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        Queue q = s.createQueue(args[1]);
        MessageProducer p = s.createProducer(q);
        p.setDeliveryMode(DeliveryMode.PERSISTENT);
        MessageConsumer k = s.createConsumer(q);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        int n = 0;
        for (String line; (line = in.readLine()) != null;) {
            if (!line.trim().equals("send")) {
                continue;
            }
            String body = "cluster-" + n++;
            p.send(s.createTextMessage(body));
            TextMessage m = (TextMessage) k.receive(30000);
            out.println("RECEIVED " + (m == null ? "nothing" : m.getText()) + " BROKER " + c.getBrokerName());
        }
        c.close();
    }
}
