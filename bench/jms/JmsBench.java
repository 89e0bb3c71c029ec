import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.jms.*;
import org.apache.activemq.ActiveMQConnectionFactory;

/**
 * JMS throughput with ActiveMQ's own Java client, for the Wharf vs ActiveMQ
 * comparison (bench/jms/run.sh). One producer and one consumer (or one
 * producer and N topic subscribers) in this JVM; the figure is messages
 * received per second, from the first send to the last receive.
 *
 * usage: JmsBench URL queue|topic persistent|nonpersistent COUNT SIZE SUBSCRIBERS
 */
public class JmsBench {
    public static void main(String[] a) throws Exception {
        String url = a[0];
        boolean topic = a[1].equals("topic");
        boolean persistent = a[2].equals("persistent");
        int count = Integer.parseInt(a[3]);
        int size = Integer.parseInt(a[4]);
        int subs = Integer.parseInt(a[5]);
        ActiveMQConnectionFactory f = new ActiveMQConnectionFactory(url);
        Connection conn = f.createConnection();
        conn.start();
        String name = "bench." + System.nanoTime();
        int receivers = topic ? subs : 1;
        CountDownLatch done = new CountDownLatch(receivers);
        AtomicInteger received = new AtomicInteger();
        for (int i = 0; i < receivers; i++) {
            Session s = conn.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Destination d = topic ? s.createTopic(name) : s.createQueue(name);
            MessageConsumer c = s.createConsumer(d);
            final int[] n = {0};
            c.setMessageListener(m -> {
                received.incrementAndGet();
                if (++n[0] == count) {
                    done.countDown();
                }
            });
        }
        Session ps = conn.createSession(false, Session.AUTO_ACKNOWLEDGE);
        Destination d = topic ? ps.createTopic(name) : ps.createQueue(name);
        MessageProducer p = ps.createProducer(d);
        p.setDeliveryMode(persistent ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT);
        byte[] body = new byte[size];
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            BytesMessage m = ps.createBytesMessage();
            m.writeBytes(body);
            p.send(m);
        }
        boolean ok = done.await(300, TimeUnit.SECONDS);
        double secs = (System.nanoTime() - start) / 1e9;
        conn.close();
        if (!ok) {
            System.out.printf("FAILED received %d of %d%n", received.get(), count * receivers);
            System.exit(1);
        }
        System.out.printf("RESULT %s %s %d x %d B, %d receiver(s): %.0f msgs/s received (%.2f s)%n",
                a[1], a[2], count, size, receivers, count * receivers / secs, secs);
    }
}
