package wharf.conformance;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import javax.jms.DeliveryMode;
import javax.jms.Message;
import javax.jms.MessageConsumer;
import javax.jms.MessageProducer;
import javax.jms.TextMessage;
import javax.jms.XAConnection;
import javax.jms.XASession;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import org.apache.activemq.ActiveMQXAConnectionFactory;

/**
 * XaClient drives XA branches with ActiveMQ's own XA client
 * (ActiveMQXAConnectionFactory, XASession.getXAResource) for the KahaDB XA
 * interop tests (conformance/kahadb_xa_test.go). It reads one command a
 * line on stdin and answers each with one line on stdout, "OK ..." or
 * "ERR &lt;reason&gt;":
 *
 * <pre>
 *   connect URL                 an XAConnection and one XASession to URL
 *   prepare GTID IN OUT KEY     branch GTID: start; send KEY.1 and KEY.2
 *                               (persistent TextMessages, property "key")
 *                               to queue OUT; receive one message from
 *                               queue IN; end(TMSUCCESS); prepare.
 *                               Answers "OK vote=V acked=K" (K: the
 *                               received message's "key" property)
 *   recover                     recover(TMSTARTRSCAN|TMENDRSCAN): "OK" and
 *                               " F:G:B" per Xid (format, global id and
 *                               branch qualifier as UTF-8)
 *   commit GTID                 commit(xid, false): the second phase
 *   rollback GTID               rollback(xid)
 *   close                       closes the connection
 * </pre>
 *
 * The Xid of GTID is TestXid(format 0x57484152, GTID, "b1"), as the Go
 * side's testXid. End of stdin ends the program.
 */
public final class XaClient {
    static final int FORMAT = 0x57484152; // "WHAR"

    /** A plain Xid, as a transaction manager would pass one. */
    static final class TestXid implements Xid {
        private final int format;
        private final byte[] gtid, bqual;

        TestXid(int format, byte[] gtid, byte[] bqual) {
            this.format = format;
            this.gtid = gtid;
            this.bqual = bqual;
        }

        public int getFormatId() { return format; }
        public byte[] getGlobalTransactionId() { return gtid.clone(); }
        public byte[] getBranchQualifier() { return bqual.clone(); }

        @Override public boolean equals(Object o) {
            if (!(o instanceof Xid)) {
                return false;
            }
            Xid x = (Xid) o;
            return x.getFormatId() == format && Arrays.equals(x.getGlobalTransactionId(), gtid)
                && Arrays.equals(x.getBranchQualifier(), bqual);
        }

        @Override public int hashCode() { return format ^ Arrays.hashCode(gtid) ^ Arrays.hashCode(bqual); }
    }

    static Xid xid(String gtid) {
        return new TestXid(FORMAT, gtid.getBytes(StandardCharsets.UTF_8), "b1".getBytes(StandardCharsets.UTF_8));
    }

    private XAConnection conn;
    private XASession session;
    private XAResource resource;

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        XaClient c = new XaClient();
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.trim().split(" ");
            String answer;
            try {
                answer = c.run(f);
            } catch (Exception e) {
                answer = "ERR " + oneLine(e);
            }
            out.println(answer);
        }
        c.close();
    }

    static String oneLine(Throwable e) {
        StringBuilder b = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (b.length() > 0) {
                b.append(" <- ");
            }
            b.append(t.getClass().getName()).append(": ").append(t.getMessage());
            if (t instanceof javax.transaction.xa.XAException) {
                b.append(" (errorCode ").append(((javax.transaction.xa.XAException) t).errorCode).append(')');
            }
        }
        return b.toString().replace('\n', ' ');
    }

    private String run(String[] f) throws Exception {
        switch (f[0]) {
        case "connect":
            close();
            conn = new ActiveMQXAConnectionFactory(f[1]).createXAConnection();
            conn.start();
            session = conn.createXASession();
            resource = session.getXAResource();
            return "OK";
        case "prepare":
            return prepare(xid(f[1]), f[2], f[3], f[4]);
        case "recover": {
            StringBuilder b = new StringBuilder("OK");
            for (Xid x : resource.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN)) {
                b.append(' ').append(x.getFormatId())
                    .append(':').append(new String(x.getGlobalTransactionId(), StandardCharsets.UTF_8))
                    .append(':').append(new String(x.getBranchQualifier(), StandardCharsets.UTF_8));
            }
            return b.toString();
        }
        case "commit":
            resource.commit(xid(f[1]), false);
            return "OK";
        case "rollback":
            resource.rollback(xid(f[1]));
            return "OK";
        case "close":
            close();
            return "OK";
        default:
            return "ERR unknown command " + f[0];
        }
    }

    private String prepare(Xid x, String in, String out, String key) throws Exception {
        resource.start(x, XAResource.TMNOFLAGS);
        MessageProducer p = session.createProducer(session.createQueue(out));
        p.setDeliveryMode(DeliveryMode.PERSISTENT);
        for (int i = 1; i <= 2; i++) {
            TextMessage m = session.createTextMessage("xa " + key + "." + i);
            m.setStringProperty("key", key + "." + i);
            p.send(m);
        }
        MessageConsumer k = session.createConsumer(session.createQueue(in));
        Message m = k.receive(15000);
        if (m == null) {
            resource.end(x, XAResource.TMFAIL);
            resource.rollback(x);
            return "ERR no message on queue " + in + " within 15 s";
        }
        resource.end(x, XAResource.TMSUCCESS);
        int vote = resource.prepare(x);
        k.close();
        p.close();
        return "OK vote=" + vote + " acked=" + m.getStringProperty("key");
    }

    private void close() throws Exception {
        if (conn != null) {
            conn.close();
            conn = null;
        }
    }
}
