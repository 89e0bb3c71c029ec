// KahaGen drives an embedded ActiveMQ 5.17 broker with a KahaDB store for
// the journal compatibility test (activemq_test.go). It is run with Java's
// single-file source launcher:
//
//	java -cp '/usr/share/activemq/lib/*' KahaGen.java write <kahadb dir> <work dir>
//	    sends 10 persistent messages to queue WHARF.JOURNAL, consumes 2, then
//	    sends 2 in a local transaction and commits: add, remove and commit
//	    records in the journal.
//	java -cp '/usr/share/activemq/lib/*' KahaGen.java count <kahadb dir> <work dir>
//	    starts on the directory and prints "COUNT n": the messages ActiveMQ
//	    recovered on queue WHARF.JOURNAL, and "BODY text" for each.
import java.io.File;
import java.util.Enumeration;
import javax.jms.Connection;
import javax.jms.DeliveryMode;
import javax.jms.MessageConsumer;
import javax.jms.MessageProducer;
import javax.jms.Queue;
import javax.jms.QueueBrowser;
import javax.jms.Session;
import javax.jms.TextMessage;
import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.broker.BrokerService;
import org.apache.activemq.store.kahadb.KahaDBPersistenceAdapter;

public class KahaGen {
    public static void main(String[] args) throws Exception {
        String mode = args[0];
        BrokerService broker = new BrokerService();
        broker.setBrokerName("kahagen");
        broker.setUseJmx(false);
        broker.setAdvisorySupport(false);
        broker.setPersistent(true);
        broker.setDataDirectoryFile(new File(args[2]));
        broker.setTmpDataDirectory(new File(args[2], "tmp"));
        KahaDBPersistenceAdapter kaha = new KahaDBPersistenceAdapter();
        kaha.setDirectory(new File(args[1]));
        broker.setPersistenceAdapter(kaha);
        broker.start();
        broker.waitUntilStarted();
        Connection c = new ActiveMQConnectionFactory("vm://kahagen?create=false").createConnection();
        c.start();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        Queue q = s.createQueue("WHARF.JOURNAL");
        if (mode.equals("write")) {
            MessageProducer p = s.createProducer(q);
            p.setDeliveryMode(DeliveryMode.PERSISTENT);
            for (int i = 0; i < 10; i++) {
                p.send(s.createTextMessage("message " + i));
            }
            MessageConsumer mc = s.createConsumer(q);
            for (int i = 0; i < 2; i++) {
                if (mc.receive(10000) == null) {
                    throw new IllegalStateException("no message");
                }
            }
            mc.close();
            Session tx = c.createSession(true, Session.SESSION_TRANSACTED);
            MessageProducer tp = tx.createProducer(q);
            tp.setDeliveryMode(DeliveryMode.PERSISTENT);
            tp.send(tx.createTextMessage("tx 0"));
            tp.send(tx.createTextMessage("tx 1"));
            tx.commit();
        } else {
            QueueBrowser b = s.createBrowser(q);
            int n = 0;
            for (Enumeration<?> e = b.getEnumeration(); e.hasMoreElements(); n++) {
                System.out.println("BODY " + ((TextMessage) e.nextElement()).getText());
            }
            System.out.println("COUNT " + n);
        }
        c.close();
        broker.stop();
        broker.waitUntilStopped();
    }
}
