import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.jms.*;
import org.apache.activemq.ActiveMQConnectionFactory;

/**
 * JMS throughput with ActiveMQ's own Java client, for the Wharf vs ActiveMQ
 * comparison (bench/jms/run.sh). One producer and one consumer (or one
 * producer and N topic subscribers) in this JVM; with PAIRS > 1 on a queue,
 * PAIRS producers, each on a thread of its own with a session of its own,
 * sharing COUNT, and PAIRS consumers sharing the queue. The figure is
 * messages received per second, from the first send to the last receive.
 *
 * usage: JmsBench URL queue|topic persistent|nonpersistent COUNT SIZE SUBSCRIBERS [PAIRS]
 */
public class JmsBench {
    public static void main(String[] a) throws Exception {
        String url = a[0];
        boolean topic = a[1].equals("topic");
        boolean persistent = a[2].equals("persistent");
        int count = Integer.parseInt(a[3]);
        int size = Integer.parseInt(a[4]);
        int subs = Integer.parseInt(a[5]);
        int pairs = a.length > 6 ? Integer.parseInt(a[6]) : 1;
        if (pairs < 1 || (topic && pairs != 1)) {
            System.out.println("FAILED PAIRS " + pairs + ": want at least 1, and 1 on a topic");
            System.exit(2);
        }
        ActiveMQConnectionFactory f = new ActiveMQConnectionFactory(url);
        Connection conn = f.createConnection();
        conn.start();
        String name = "bench." + System.nanoTime();
        int receivers = topic ? subs : pairs;
        // A topic subscriber gets every message; queue consumers share
        // them, so the queue is done when they have COUNT between them.
        int expected = topic ? count * subs : count;
        CountDownLatch done = new CountDownLatch(1);
        AtomicInteger received = new AtomicInteger();
        for (int i = 0; i < receivers; i++) {
            Session s = conn.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Destination d = topic ? s.createTopic(name) : s.createQueue(name);
            MessageConsumer c = s.createConsumer(d);
            c.setMessageListener(m -> {
                if (received.incrementAndGet() == expected) {
                    done.countDown();
                }
            });
        }
        byte[] body = new byte[size];
        Thread[] producers = new Thread[pairs];
        Exception[] failed = new Exception[1];
        long start = System.nanoTime();
        for (int t = 0; t < pairs; t++) {
            int share = count / pairs + (t < count % pairs ? 1 : 0);
            Session ps = conn.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Destination d = topic ? ps.createTopic(name) : ps.createQueue(name);
            MessageProducer p = ps.createProducer(d);
            p.setDeliveryMode(persistent ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT);
            producers[t] = new Thread(() -> {
                try {
                    for (int i = 0; i < share; i++) {
                        BytesMessage m = ps.createBytesMessage();
                        m.writeBytes(body);
                        p.send(m);
                    }
                } catch (Exception e) {
                    synchronized (failed) {
                        failed[0] = e;
                    }
                }
            });
            producers[t].start();
        }
        for (Thread t : producers) {
            t.join();
        }
        if (failed[0] != null) {
            System.out.println("FAILED send: " + failed[0]);
            System.exit(1);
        }
        boolean ok = done.await(300, TimeUnit.SECONDS);
        double secs = (System.nanoTime() - start) / 1e9;
        conn.close();
        if (!ok) {
            System.out.printf("FAILED received %d of %d%n", received.get(), expected);
            System.exit(1);
        }
        System.out.printf("RESULT %s %s %d x %d B, %d producer(s), %d receiver(s): %.0f msgs/s received (%.2f s)%n",
                a[1], a[2], count, size, pairs, receivers, expected / secs, secs);
    }
}
