package wharf.conformance;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.activemq.ActiveMQConnection;
import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.command.ConnectionControl;
import org.apache.activemq.transport.TransportListener;

/**
 * ClusterControl prints the ConnectionControl a broker sends a JMS
 * connection (conformance/failover_cluster_test.go):
 *
 * <pre>
 *   ClusterControl URL
 * </pre>
 *
 * connects with ActiveMQ's JMS client to URL, waits up to 10 s for the
 * broker's ConnectionControl and prints
 *
 * <pre>
 *   CONTROL connectedBrokers=... rebalance=true|false faultTolerant=true|false reconnectTo=...
 * </pre>
 *
 * or "NONE" when none came.
 */
public final class ClusterControl {
    private ClusterControl() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: ClusterControl URL");
            System.exit(2);
        }
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        CountDownLatch got = new CountDownLatch(1);
        String[] line = new String[1];
        ActiveMQConnection c = (ActiveMQConnection) new ActiveMQConnectionFactory(args[0]).createConnection();
        c.addTransportListener(new TransportListener() {
            @Override
            public void onCommand(Object command) {
                if (command instanceof ConnectionControl && got.getCount() > 0) {
                    ConnectionControl cc = (ConnectionControl) command;
                    line[0] = "CONTROL connectedBrokers=" + cc.getConnectedBrokers() + " rebalance=" + cc.isRebalanceConnection()
                            + " faultTolerant=" + cc.isFaultTolerant() + " reconnectTo=" + cc.getReconnectTo();
                    got.countDown();
                }
            }

            @Override
            public void onException(IOException error) {
            }

            @Override
            public void transportInterupted() {
            }

            @Override
            public void transportResumed() {
            }
        });
        c.start();
        out.println(got.await(10, TimeUnit.SECONDS) ? line[0] : "NONE");
        c.close();
    }
}
