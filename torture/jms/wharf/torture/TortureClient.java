package wharf.torture;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.Semaphore;

import javax.jms.Connection;
import javax.jms.DeliveryMode;
import javax.jms.Destination;
import javax.jms.Message;
import javax.jms.MessageConsumer;
import javax.jms.MessageProducer;
import javax.jms.Session;
import javax.jms.TextMessage;
import javax.jms.XAConnection;
import javax.jms.XASession;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.ActiveMQXAConnectionFactory;

/**
 * TortureClient is the ActiveMQ JMS client's share of the kill torture
 * (torture/torture_test.go). It runs for the whole test against a broker
 * that is SIGKILLed and restarted on the same address; each thread
 * connects again after a failure. Usage:
 *
 * <pre>
 *   TortureClient URL SEED PREFIX XA
 * </pre>
 *
 * XA "true" runs the xa thread.
 *
 * Threads, and what they print on stdout (one line each):
 * <ul>
 * <li>producer: a synchronous persistent producer (the client's default
 * for persistent sends outside a transaction) sending to queue
 * torture.q.jms or topic torture.t, one message per "GO" line read on
 * stdin: "SENDING DEST KEY", then "SENT DEST KEY" once send returned;
 * "FAILED" if it threw.</li>
 * <li>consumer: queue torture.q.jms, CLIENT_ACKNOWLEDGE, with
 * jms.sendAcksAsync=false (acknowledge waits for the broker's Response):
 * "GOT KEY REDELIVERED MSGID", "ACKING KEY MSGID", "CONFIRMED KEY MSGID".</li>
 * <li>xa: XA branches: receive one message of torture.q.xain and send two
 * to torture.q.xaout in the branch, end, prepare, commit (two-phase):
 * "XAGOT KEY REDELIVERED MSGID", "XABRANCH GTID IN OUT1 OUT2" (before the
 * sends), "XAACKING GTID" (before prepare), "XACOMMITTED GTID". After a
 * reconnection, the branches the broker has prepared are resolved, commit
 * or rollback by a seeded coin: "XARECOVER GTID commit|rollback" then
 * "XACOMMITTED GTID" or "XAROLLEDBACK GTID".</li>
 * </ul>
 * End of stdin ends the program.
 */
public final class TortureClient {
    static final int FORMAT = 0x57544f52; // "WTOR"
    static PrintStream out;
    static String url, prefix;
    static final Semaphore credits = new Semaphore(0);

    private TortureClient() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: TortureClient URL SEED PREFIX XA");
            System.exit(2);
        }
        out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        url = args[0];
        long seed = Long.parseLong(args[1]);
        prefix = args[2];
        Thread[] ts = {
            new Thread(() -> produce(new Random(seed)), "producer"),
            new Thread(TortureClient::consume, "consumer"),
            new Thread(() -> xa(new Random(seed + 1)), "xa"),
        };
        if (!Boolean.parseBoolean(args[3])) {
            ts = Arrays.copyOf(ts, 2);
        }
        for (Thread t : ts) {
            t.setDaemon(true);
            t.start();
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null;) {
            if (line.equals("GO")) {
                credits.release();
            }
        }
        System.exit(0);
    }

    static synchronized void say(String s) {
        out.println(s);
    }

    static void pause() {
        try {
            Thread.sleep(50); // the broker is restarting: connect again shortly
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void close(Connection c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception ignored) {
                // the broker is gone
            }
        }
    }

    static void produce(Random rnd) {
        long n = 0;
        for (;;) {
            Connection c = null;
            try {
                c = new ActiveMQConnectionFactory(url).createConnection();
                c.start();
                Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
                Destination q = s.createQueue("torture.q.jms"), t = s.createTopic("torture.t");
                MessageProducer p = s.createProducer(null);
                p.setDeliveryMode(DeliveryMode.PERSISTENT);
                for (;;) {
                    credits.acquire();
                    boolean topic = rnd.nextInt(3) == 0;
                    String key = prefix + "-send-" + (++n);
                    String dest = topic ? "torture.t" : "torture.q.jms";
                    say("SENDING " + dest + " " + key);
                    try {
                        p.send(topic ? t : q, s.createTextMessage(key));
                    } catch (Exception e) {
                        say("FAILED " + key);
                        throw e;
                    }
                    say("SENT " + dest + " " + key);
                }
            } catch (Exception e) {
                // fall through: connect again
            } finally {
                close(c);
            }
            pause();
        }
    }

    static void consume() {
        String u = url + (url.contains("?") ? "&" : "?") + "jms.sendAcksAsync=false&jms.prefetchPolicy.all=20";
        for (;;) {
            Connection c = null;
            try {
                c = new ActiveMQConnectionFactory(u).createConnection();
                c.start();
                Session s = c.createSession(false, Session.CLIENT_ACKNOWLEDGE);
                MessageConsumer k = s.createConsumer(s.createQueue("torture.q.jms"));
                for (;;) {
                    Message m = k.receive();
                    if (m == null) {
                        break;
                    }
                    String key = ((TextMessage) m).getText();
                    String id = m.getJMSMessageID();
                    say("GOT " + key + " " + m.getJMSRedelivered() + " " + id);
                    say("ACKING " + key + " " + id);
                    m.acknowledge();
                    say("CONFIRMED " + key + " " + id);
                }
            } catch (Exception e) {
                // fall through: connect again
            } finally {
                close(c);
            }
            pause();
        }
    }

    /** A plain Xid, as a transaction manager would pass one. */
    static final class TXid implements Xid {
        private final byte[] gtid;

        TXid(byte[] gtid) {
            this.gtid = gtid;
        }

        public int getFormatId() { return FORMAT; }
        public byte[] getGlobalTransactionId() { return gtid.clone(); }
        public byte[] getBranchQualifier() { return new byte[] {'b'}; }

        @Override public boolean equals(Object o) {
            return o instanceof Xid && ((Xid) o).getFormatId() == FORMAT
                && Arrays.equals(((Xid) o).getGlobalTransactionId(), gtid);
        }

        @Override public int hashCode() { return Arrays.hashCode(gtid); }
    }

    static void xa(Random rnd) {
        String u = url + (url.contains("?") ? "&" : "?") + "jms.prefetchPolicy.all=1";
        long n = 0;
        for (;;) {
            XAConnection c = null;
            try {
                c = new ActiveMQXAConnectionFactory(u).createXAConnection();
                c.start();
                XASession s = c.createXASession();
                XAResource r = s.getXAResource();
                // Branches a kill left prepared: the transaction manager
                // decides.
                for (Xid x : r.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN)) {
                    if (x.getFormatId() != FORMAT) {
                        continue;
                    }
                    String g = new String(x.getGlobalTransactionId(), StandardCharsets.UTF_8);
                    boolean commit = rnd.nextBoolean();
                    say("XARECOVER " + g + " " + (commit ? "commit" : "rollback"));
                    if (commit) {
                        r.commit(x, false);
                        say("XACOMMITTED " + g);
                    } else {
                        r.rollback(x);
                        say("XAROLLEDBACK " + g);
                    }
                }
                Session js = s.getSession();
                MessageConsumer k = js.createConsumer(js.createQueue("torture.q.xain"));
                MessageProducer p = js.createProducer(js.createQueue("torture.q.xaout"));
                p.setDeliveryMode(DeliveryMode.PERSISTENT);
                for (;;) {
                    String g = prefix + "-xa-" + (++n);
                    Xid x = new TXid(g.getBytes(StandardCharsets.UTF_8));
                    r.start(x, XAResource.TMNOFLAGS);
                    Message m = k.receive();
                    if (m == null) {
                        break;
                    }
                    String in = ((TextMessage) m).getText();
                    say("XAGOT " + in + " " + m.getJMSRedelivered() + " " + m.getJMSMessageID());
                    String o1 = g + "-a", o2 = g + "-b";
                    say("XABRANCH " + g + " " + in + " " + o1 + " " + o2);
                    p.send(js.createTextMessage(o1));
                    p.send(js.createTextMessage(o2));
                    r.end(x, XAResource.TMSUCCESS);
                    say("XAACKING " + g);
                    r.prepare(x);
                    r.commit(x, false);
                    say("XACOMMITTED " + g);
                }
            } catch (Exception e) {
                // fall through: connect again (a prepared branch is
                // resolved then)
            } finally {
                close(c);
            }
            pause();
        }
    }
}
