package wharf.conformance;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.BitSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import javax.jms.Connection;
import javax.jms.DeliveryMode;
import javax.jms.Message;
import javax.jms.MessageConsumer;
import javax.jms.MessageProducer;
import javax.jms.Session;
import javax.jms.TextMessage;

import org.apache.activemq.ActiveMQConnectionFactory;

/**
 * FailoverLoad is the JMS load of the master/slave failover test
 * (conformance/failover_load_test.go): ActiveMQ's own JMS client on a
 * failover: URL, one producer and one consumer on their own connections.
 *
 * <pre>
 *   FailoverLoad URL QUEUE
 * </pre>
 *
 * The producer sends persistent TextMessages "0", "1", ... synchronously
 * (jms.alwaysSyncSend): a send that returned was acknowledged by the
 * broker, after it stored the message. The consumer receives in an
 * AUTO_ACKNOWLEDGE session. Every 100 ms: "PROGRESS sent=N received=R".
 * The line "stop" on stdin stops the producer, which then sends "END";
 * once the consumer has received it the program prints
 *
 * <pre>
 *   RESULT sent=N failed=F received=R distinct=D duplicates=X lost=L maxSendGapMs=G
 *   LOST n1,n2,...   (only when lost > 0)
 * </pre>
 *
 * sent counts acknowledged sends, failed the sends that threw (not
 * acknowledged: not counted as lost if they never arrive), lost the
 * acknowledged messages never received, duplicates the deliveries of a
 * message received before, maxSendGapMs the longest time between two
 * acknowledged sends (the outage the producer saw).
 */
public final class FailoverLoad {
    private FailoverLoad() {
    }

    private static final String END = "END";

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: FailoverLoad URL QUEUE");
            System.exit(2);
        }
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        String url = args[0] + (args[0].contains("?") ? "&" : "?") + "jms.alwaysSyncSend=true";
        String queue = args[1];
        ActiveMQConnectionFactory f = new ActiveMQConnectionFactory(url);

        BitSet acked = new BitSet();
        BitSet failedSeqs = new BitSet();
        BitSet got = new BitSet();
        AtomicInteger sent = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger received = new AtomicInteger();
        AtomicInteger duplicates = new AtomicInteger();
        AtomicLong maxGap = new AtomicLong();
        AtomicInteger stop = new AtomicInteger();

        Connection pc = f.createConnection();
        pc.start();
        Session ps = pc.createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageProducer p = ps.createProducer(ps.createQueue(queue));
        p.setDeliveryMode(DeliveryMode.PERSISTENT);

        Connection cc = f.createConnection();
        cc.start();
        Session cs = cc.createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageConsumer k = cs.createConsumer(cs.createQueue(queue));

        Thread consumer = new Thread(() -> {
            for (;;) {
                try {
                    Message m = k.receive();
                    if (m == null) {
                        continue;
                    }
                    String text = ((TextMessage) m).getText();
                    if (END.equals(text)) {
                        return;
                    }
                    int seq = Integer.parseInt(text);
                    synchronized (got) {
                        if (got.get(seq)) {
                            duplicates.incrementAndGet();
                        }
                        got.set(seq);
                    }
                    received.incrementAndGet();
                } catch (Exception e) {
                    out.println("RECVERR " + e);
                }
            }
        }, "consumer");
        Thread producer = new Thread(() -> {
            long last = System.nanoTime();
            for (int seq = 0; stop.get() == 0; seq++) {
                try {
                    p.send(ps.createTextMessage(Integer.toString(seq)));
                    long now = System.nanoTime();
                    maxGap.accumulateAndGet((now - last) / 1_000_000, Math::max);
                    last = now;
                    synchronized (acked) {
                        acked.set(seq);
                    }
                    sent.incrementAndGet();
                } catch (Exception e) {
                    failed.incrementAndGet();
                    synchronized (acked) {
                        failedSeqs.set(seq);
                    }
                    out.println("SENDERR " + seq + " " + e);
                }
            }
        }, "producer");
        Thread progress = new Thread(() -> {
            while (stop.get() < 2) {
                out.println("PROGRESS sent=" + sent.get() + " received=" + received.get());
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "progress");
        progress.setDaemon(true);
        consumer.start();
        producer.start();
        progress.start();

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null && !line.trim().equals("stop");) {
        }
        stop.set(1);
        producer.join();
        p.send(ps.createTextMessage(END));
        consumer.join();
        stop.set(2);

        StringBuilder lost = new StringBuilder();
        int nLost = 0;
        int distinct;
        synchronized (got) {
            distinct = got.cardinality();
            synchronized (acked) {
                for (int i = acked.nextSetBit(0); i >= 0; i = acked.nextSetBit(i + 1)) {
                    if (!got.get(i)) {
                        nLost++;
                        if (nLost <= 50) {
                            lost.append(lost.length() > 0 ? "," : "").append(i);
                        }
                    }
                }
            }
        }
        out.println("RESULT sent=" + sent.get() + " failed=" + failed.get() + " received=" + received.get()
                + " distinct=" + distinct + " duplicates=" + duplicates.get() + " lost=" + nLost
                + " maxSendGapMs=" + maxGap.get());
        if (nLost > 0) {
            out.println("LOST " + lost);
        }
        pc.close();
        cc.close();
    }
}
