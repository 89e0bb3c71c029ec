package wharf.conformance;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import javax.jms.Connection;
import javax.jms.DeliveryMode;
import javax.jms.Destination;
import javax.jms.MessageConsumer;
import javax.jms.MessageProducer;
import javax.jms.Session;
import javax.jms.TextMessage;

import org.apache.activemq.ActiveMQConnectionFactory;

/**
 * NetClient drives the network-of-brokers tests
 * (conformance/network_activemq_test.go) with ActiveMQ's own JMS client:
 *
 * <pre>
 *   NetClient split DEST TOTAL URL...          one consumer per URL
 *   NetClient produce DEST COUNT PERSISTENT URL
 * </pre>
 *
 * DEST is queue://NAME or topic://NAME. split opens one connection and
 * consumer per URL, prints "READY", then receives on all of them until
 * TOTAL messages have arrived (60 s at most) and prints "COUNTS n1 n2 ..."
 * in URL order ("TIMEOUT n1 n2 ..." if they did not), and "DUP text" for
 * a text received twice. produce sends COUNT text messages "m0".."mN-1"
 * and prints "SENT COUNT".
 */
public final class NetClient {
    private NetClient() {
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        if (args.length >= 4 && args[0].equals("split")) {
            split(out, args[1], Integer.parseInt(args[2]), java.util.Arrays.copyOfRange(args, 3, args.length));
        } else if (args.length == 5 && args[0].equals("produce")) {
            produce(out, args[1], Integer.parseInt(args[2]), Boolean.parseBoolean(args[3]), args[4]);
        } else {
            System.err.println("usage: NetClient split DEST TOTAL URL... | produce DEST COUNT PERSISTENT URL");
            System.exit(2);
        }
        System.exit(0);
    }

    private static Destination dest(Session s, String d) throws Exception {
        if (d.startsWith("topic://")) {
            return s.createTopic(d.substring(8));
        }
        return s.createQueue(d.startsWith("queue://") ? d.substring(8) : d);
    }

    private static void split(PrintStream out, String d, int total, String[] urls) throws Exception {
        List<Connection> conns = new ArrayList<>();
        List<MessageConsumer> ks = new ArrayList<>();
        for (String url : urls) {
            Connection c = new ActiveMQConnectionFactory(url).createConnection();
            c.start();
            Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
            ks.add(s.createConsumer(dest(s, d)));
            conns.add(c);
        }
        out.println("READY");
        AtomicInteger got = new AtomicInteger();
        int[] counts = new int[urls.length];
        Set<String> seen = new HashSet<>();
        Object done = new Object();
        for (int i = 0; i < ks.size(); i++) {
            final int idx = i;
            ks.get(i).setMessageListener(m -> {
                try {
                    String text = ((TextMessage) m).getText();
                    synchronized (done) {
                        if (!seen.add(text)) {
                            out.println("DUP " + text);
                        }
                        counts[idx]++;
                        if (got.incrementAndGet() >= total) {
                            done.notifyAll();
                        }
                    }
                } catch (Exception e) {
                    out.println("ERROR " + e);
                }
            });
        }
        long deadline = System.currentTimeMillis() + 60_000;
        String verdict = "COUNTS";
        synchronized (done) {
            while (got.get() < total) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    verdict = "TIMEOUT";
                    break;
                }
                done.wait(left);
            }
            StringBuilder b = new StringBuilder(verdict);
            for (int n : counts) {
                b.append(' ').append(n);
            }
            out.println(b);
        }
        for (Connection c : conns) {
            c.close();
        }
    }

    private static void produce(PrintStream out, String d, int count, boolean persistent, String url) throws Exception {
        Connection c = new ActiveMQConnectionFactory(url).createConnection();
        c.start();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageProducer p = s.createProducer(dest(s, d));
        p.setDeliveryMode(persistent ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT);
        for (int i = 0; i < count; i++) {
            p.send(s.createTextMessage("m" + i));
        }
        out.println("SENT " + count);
        c.close();
    }
}
