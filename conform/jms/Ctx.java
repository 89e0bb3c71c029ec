package wharf.conformance;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import javax.jms.Connection;
import javax.jms.DeliveryMode;
import javax.jms.Destination;
import javax.jms.JMSException;
import javax.jms.Message;
import javax.jms.MessageConsumer;
import javax.jms.MessageProducer;
import javax.jms.Queue;
import javax.jms.Session;
import javax.jms.TextMessage;
import javax.jms.Topic;

import org.apache.activemq.ActiveMQConnectionFactory;

/**
 * Ctx is one case's context: the broker URLs, a destination base name
 * unique to the case and run, and every connection the case opened (closed
 * when the case ends, whatever happened).
 */
final class Ctx {
    /** WAIT_MS bounds every receive that must succeed. */
    static final long WAIT_MS = 5000;
    /**
     * QUIET_MS is how long a receive that must get nothing waits, where no
     * marker message can prove the absence (exclusive consumers, prefetch 0).
     */
    static final long QUIET_MS = 300;

    final Conformance conf;
    final String name;
    final String url;
    final String stomp;
    /** mqtt is the same broker's MQTT connector ("host:port"), or null. */
    final String mqtt;
    final String failoverURL;
    /**
     * activemq is true when the broker is ActiveMQ 5.17 (the reference run):
     * cases with a documented difference then assert ActiveMQ's behaviour.
     */
    final boolean activemq;
    /** base is unique per case and run, with no '.', '*', '>' or ','. */
    final String base;
    private final List<Connection> conns = new ArrayList<>();
    private volatile String step = "";
    private int markers;

    Ctx(Conformance conf, String name, String url, String stomp, String mqtt, String failoverURL, boolean activemq, String base) {
        this.conf = conf;
        this.name = name;
        this.url = url;
        this.stomp = stomp;
        this.mqtt = mqtt;
        this.failoverURL = failoverURL;
        this.activemq = activemq;
        this.base = base;
    }

    /** step records what the case is doing, reported if it times out. */
    void step(String s) {
        step = s;
    }

    String trail() {
        return step.isEmpty() ? "" : " (last step: " + step + ")";
    }

    /** withOption appends a URI query option to a broker URL. */
    static String withOption(String url, String opt) {
        return url + (url.contains("?") ? "&" : "?") + opt;
    }

    /** factory is ActiveMQ's factory with the client's defaults, plus trusted packages for ObjectMessage. */
    ActiveMQConnectionFactory factory(String brokerURL) {
        ActiveMQConnectionFactory f = new ActiveMQConnectionFactory(brokerURL);
        f.setTrustedPackages(Arrays.asList("wharf.conformance", "java.lang", "java.util"));
        return f;
    }

    ActiveMQConnectionFactory factory() {
        return factory(url);
    }

    /** track registers a connection to close when the case ends. */
    synchronized <C extends Connection> C track(C c) {
        conns.add(c);
        return c;
    }

    /** conn opens and starts a connection with the client's defaults. */
    Connection conn() throws JMSException {
        return start(factory());
    }

    Connection start(ActiveMQConnectionFactory f) throws JMSException {
        Connection c = track(f.createConnection());
        c.start();
        return c;
    }

    /** connWithID opens and starts a connection with a client id. */
    Connection connWithID(String clientID) throws JMSException {
        Connection c = track(factory().createConnection());
        c.setClientID(clientID);
        c.start();
        return c;
    }

    Session session(Connection c) throws JMSException {
        return c.createSession(false, Session.AUTO_ACKNOWLEDGE);
    }

    Queue queue(Session s, String suffix) throws JMSException {
        return s.createQueue(base + suffix);
    }

    Topic topic(Session s, String suffix) throws JMSException {
        return s.createTopic(base + suffix);
    }

    /** sendText sends persistent text messages (synchronous sends, so they are on the broker on return). */
    void sendText(Session s, Destination d, String... bodies) throws JMSException {
        MessageProducer p = s.createProducer(d);
        p.setDeliveryMode(DeliveryMode.PERSISTENT);
        for (String b : bodies) {
            p.send(s.createTextMessage(b));
        }
        p.close();
    }

    /** recv returns the next message or fails after WAIT_MS. */
    Message recv(MessageConsumer c, String what) throws JMSException {
        step("receive " + what);
        Message m = c.receive(WAIT_MS);
        if (m == null) {
            throw new AssertionError(what + ": no message within " + WAIT_MS + " ms");
        }
        return m;
    }

    /** recvText receives and checks a text message's body. */
    TextMessage recvText(MessageConsumer c, String want, String what) throws JMSException {
        Message m = recv(c, what + " (want \"" + want + "\")");
        if (!(m instanceof TextMessage)) {
            throw new AssertionError(what + ": got " + m.getClass().getName() + ", want a TextMessage \"" + want + "\"");
        }
        Conformance.eq(((TextMessage) m).getText(), want, what);
        return (TextMessage) m;
    }

    /** quiet checks that nothing arrives within QUIET_MS. */
    void quiet(MessageConsumer c, String what) throws JMSException {
        step("expect nothing: " + what);
        Message m = c.receive(QUIET_MS);
        if (m != null) {
            throw new AssertionError(what + ": got unexpected " + describe(m));
        }
    }

    /**
     * nextIsMarker sends a marker to d from session s and checks that it is
     * the next message c receives: whatever was queued before it would have
     * come first, so nothing else is pending.
     */
    void nextIsMarker(Session s, Destination d, MessageConsumer c, String what) throws JMSException {
        String marker = "marker-" + (++markers);
        sendText(s, d, marker);
        Message m = recv(c, what + " (marker)");
        if (!(m instanceof TextMessage) || !marker.equals(((TextMessage) m).getText())) {
            throw new AssertionError(what + ": got " + describe(m) + " before the marker, want nothing");
        }
    }

    /** assertQueueEmpty checks from a fresh connection that queue q holds nothing. */
    void assertQueueEmpty(Queue q, String what) throws JMSException {
        Connection c = conn();
        Session s = session(c);
        MessageConsumer mc = s.createConsumer(q);
        nextIsMarker(s, q, mc, what);
        c.close();
    }

    static String describe(Message m) {
        try {
            String body = m instanceof TextMessage ? " \"" + ((TextMessage) m).getText() + "\"" : "";
            return m.getClass().getSimpleName() + body + " id=" + m.getJMSMessageID() + " redelivered=" + m.getJMSRedelivered();
        } catch (JMSException e) {
            return String.valueOf(m);
        }
    }

    void close() {
        List<Connection> cs;
        synchronized (this) {
            cs = new ArrayList<>(conns);
            conns.clear();
        }
        for (Connection c : cs) {
            Conformance.closeQuietly(c);
        }
    }
}
