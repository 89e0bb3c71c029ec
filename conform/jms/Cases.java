package wharf.conformance;

import static wharf.conformance.Conformance.check;
import static wharf.conformance.Conformance.eq;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;

import javax.jms.BytesMessage;
import javax.jms.Connection;
import javax.jms.DeliveryMode;
import javax.jms.Destination;
import javax.jms.InvalidClientIDException;
import javax.jms.InvalidDestinationException;
import javax.jms.JMSException;
import javax.jms.MapMessage;
import javax.jms.Message;
import javax.jms.MessageConsumer;
import javax.jms.MessageEOFException;
import javax.jms.MessageProducer;
import javax.jms.ObjectMessage;
import javax.jms.Queue;
import javax.jms.QueueBrowser;
import javax.jms.Session;
import javax.jms.StreamMessage;
import javax.jms.TemporaryQueue;
import javax.jms.TemporaryTopic;
import javax.jms.TextMessage;
import javax.jms.Topic;
import javax.jms.TopicSubscriber;
import javax.jms.XAConnection;
import javax.jms.XASession;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import org.apache.activemq.ActiveMQConnection;
import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.ActiveMQSession;
import org.apache.activemq.ActiveMQXAConnectionFactory;
import org.apache.activemq.RedeliveryPolicy;
import org.apache.activemq.command.ActiveMQMessage;
import org.apache.activemq.command.ConsumerInfo;
import org.apache.activemq.transport.TransportListener;

/**
 * Cases are the JMS conformance cases, one method each, registered in the
 * order they run. Every case works on destinations named after c.base, so
 * runs and cases never share state on a long-lived broker.
 */
final class Cases {
    private Cases() {
    }

    static void register(Conformance r) {
        r.add("MessageText", Cases::messageText);
        r.add("MessageTextLarge", Cases::messageTextLarge);
        r.add("MessageBytes", Cases::messageBytes);
        r.add("MessageMap", Cases::messageMap);
        r.add("MessageStream", Cases::messageStream);
        r.add("MessageObject", Cases::messageObject);
        r.add("MessagePlain", Cases::messagePlain);
        r.add("MessageCompressed", Cases::messageCompressed);
        r.add("Properties", Cases::properties);
        r.add("Headers", Cases::headers);
        r.add("HeadersPersistentDefaults", Cases::headersPersistentDefaults);
        r.add("QueuePointToPoint", Cases::queuePointToPoint);
        r.add("QueueCompetingConsumers", Cases::queueCompetingConsumers);
        r.add("TopicFanOut", Cases::topicFanOut);
        r.add("TopicNoLocal", Cases::topicNoLocal);
        r.add("AsyncSend", Cases::asyncSend);
        r.add("ClientIDInUse", Cases::clientIDInUse);
        r.add("DurableOffline", Cases::durableOffline);
        r.add("DurableUnsubscribe", Cases::durableUnsubscribe);
        r.add("DurableUnsubscribeUnknown", Cases::durableUnsubscribeUnknown);
        r.add("AckAuto", Cases::ackAuto);
        r.add("AckClient", Cases::ackClient);
        r.add("AckDupsOK", Cases::ackDupsOK);
        r.add("AckSessionTransacted", Cases::ackSessionTransacted);
        r.add("AckIndividual", Cases::ackIndividual);
        r.add("Recover", Cases::recover);
        r.add("TxSendCommit", Cases::txSendCommit);
        r.add("TxSendRollback", Cases::txSendRollback);
        r.add("TxReceiveRollback", Cases::txReceiveRollback);
        r.add("XATwoPhaseCommit", Cases::xaTwoPhaseCommit);
        r.add("XAOnePhaseCommit", Cases::xaOnePhaseCommit);
        r.add("XARollback", Cases::xaRollback);
        r.add("XARecover", Cases::xaRecover);
        r.add("SelectorsQueue", Cases::selectorsQueue);
        r.add("SelectorTopic", Cases::selectorTopic);
        r.add("TempQueueRequestReply", Cases::tempQueueRequestReply);
        r.add("TempTopic", Cases::tempTopic);
        r.add("TempQueueDeletedSend", Cases::tempQueueDeletedSend);
        r.add("QueueBrowser", Cases::queueBrowser);
        r.add("MessageGroups", Cases::messageGroups);
        r.add("ExclusiveConsumer", Cases::exclusiveConsumer);
        r.add("Priority", Cases::priority);
        r.add("Wildcards", Cases::wildcards);
        r.add("Composite", Cases::composite);
        r.add("VirtualTopic", Cases::virtualTopic);
        r.add("RedeliveryToDLQ", Cases::redeliveryToDLQ);
        r.add("Expiry", Cases::expiry);
        r.add("Prefetch0", Cases::prefetch0);
        r.add("Prefetch1", Cases::prefetch1);
        r.add("AdvisoryConsumer", Cases::advisoryConsumer);
        r.add("Failover", Cases::failover);
        r.add("MixedJMSToSTOMP", Cases::mixedJMSToSTOMP);
        r.add("MixedSTOMPToJMS", Cases::mixedSTOMPToJMS);
        r.add("MixedJMSToSTOMPNonBMP", Cases::mixedJMSToSTOMPNonBMP);
        r.add("MixedSTOMPToJMSNonBMP", Cases::mixedSTOMPToJMSNonBMP);
        r.add("MixedMQTTToJMS", Cases::mixedMQTTToJMS);
        r.add("MixedJMSToMQTT", Cases::mixedJMSToMQTT);
        r.add("MixedMQTTRetainedToJMS", Cases::mixedMQTTRetainedToJMS);
    }

    /** Text with an emoji and a musical symbol (both outside the BMP), a NUL and 2- and 3-byte characters. */
    static final String UNICODE = "héllo wörld € \u0000 😀 𝄞 日本語";

    /**
     * BMP is non-ASCII text without U+0000 and without characters outside
     * the BMP, for property values and map strings: ActiveMQ 5.17's client
     * writes those with writeUTF (modified UTF-8) but decodes them with its
     * own reader, which turns C0 80 and each surrogate into U+FFFD pairs
     * (seen with the client alone, no broker involved), so no broker can
     * carry such strings to an ActiveMQ client intact.
     */
    static final String BMP = "héllo wörld € 日本語 ñ";

    // ---------------------------------------------------------------- message types

    static void messageText(Ctx c) throws Exception {
        Session s = c.session(c.conn());
        Queue q = c.queue(s, "");
        MessageProducer p = s.createProducer(q);
        for (String text : new String[] {UNICODE, "", "plain ascii"}) {
            p.send(s.createTextMessage(text));
        }
        p.send(s.createTextMessage()); // null text
        MessageConsumer mc = s.createConsumer(q);
        c.recvText(mc, UNICODE, "unicode text");
        c.recvText(mc, "", "empty text");
        c.recvText(mc, "plain ascii", "ascii text");
        Message m = c.recv(mc, "null text");
        check(m instanceof TextMessage, "null text: got " + m.getClass().getName() + ", want TextMessage");
        eq(((TextMessage) m).getText(), null, "null text");
    }

    static void messageTextLarge(Ctx c) throws Exception {
        // Over 64 KiB of modified UTF-8, past writeUTF's limit, with
        // surrogate pairs across the whole body.
        StringBuilder sb = new StringBuilder();
        while (sb.length() < 200_000) {
            sb.append(UNICODE).append(sb.length());
        }
        String text = sb.toString();
        Session s = c.session(c.conn());
        Queue q = c.queue(s, "");
        c.sendText(s, q, text);
        c.recvText(s.createConsumer(q), text, "200k-char text");
    }

    static void messageBytes(Ctx c) throws Exception {
        Session s = c.session(c.conn());
        Queue q = c.queue(s, "");
        BytesMessage out = s.createBytesMessage();
        byte[] raw = {0, 1, -1, 127, -128, 0};
        out.writeBoolean(true);
        out.writeByte((byte) -7);
        out.writeShort((short) -1234);
        out.writeChar('€');
        out.writeInt(0xCAFEBABE);
        out.writeLong(Long.MIN_VALUE + 3);
        out.writeFloat(3.25f);
        out.writeDouble(-1e300);
        out.writeUTF(UNICODE);
        out.writeBytes(raw);
        out.writeObject(Integer.valueOf(99));
        s.createProducer(q).send(out);
        // 1 MiB of every byte value.
        byte[] big = new byte[1 << 20];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) (i * 31);
        }
        BytesMessage large = s.createBytesMessage();
        large.writeBytes(big);
        s.createProducer(q).send(large);
        s.createProducer(q).send(s.createBytesMessage()); // empty

        MessageConsumer mc = s.createConsumer(q);
        Message m = c.recv(mc, "bytes message");
        check(m instanceof BytesMessage, "got " + m.getClass().getName() + ", want BytesMessage");
        BytesMessage in = (BytesMessage) m;
        eq(in.readBoolean(), true, "readBoolean");
        eq(in.readByte(), (byte) -7, "readByte");
        eq(in.readShort(), (short) -1234, "readShort");
        eq(in.readChar(), '€', "readChar");
        eq(in.readInt(), 0xCAFEBABE, "readInt");
        eq(in.readLong(), Long.MIN_VALUE + 3, "readLong");
        eq(in.readFloat(), 3.25f, "readFloat");
        eq(in.readDouble(), -1e300, "readDouble");
        eq(in.readUTF(), UNICODE, "readUTF");
        byte[] got = new byte[raw.length];
        eq(in.readBytes(got), raw.length, "readBytes length");
        eq(got, raw, "readBytes");
        eq(in.readInt(), 99, "writeObject(Integer) read back as int");
        try {
            in.readByte();
            throw new AssertionError("readByte past the end: no MessageEOFException");
        } catch (MessageEOFException expected) {
            // end of body
        }
        in.reset();
        java.io.ByteArrayOutputStream utf = new java.io.ByteArrayOutputStream();
        new java.io.DataOutputStream(utf).writeUTF(UNICODE); // length-prefixed modified UTF-8
        long want = 1 + 1 + 2 + 2 + 4 + 8 + 4 + 8 + utf.size() + raw.length + 4;
        eq(in.getBodyLength(), want, "getBodyLength");

        BytesMessage l = (BytesMessage) c.recv(mc, "1 MiB bytes message");
        eq(l.getBodyLength(), (long) big.length, "1 MiB body length");
        byte[] lb = new byte[big.length];
        l.readBytes(lb);
        eq(Arrays.equals(lb, big), true, "1 MiB body content equal");
        BytesMessage e = (BytesMessage) c.recv(mc, "empty bytes message");
        eq(e.getBodyLength(), 0L, "empty body length");
    }

    static void messageMap(Ctx c) throws Exception {
        Session s = c.session(c.conn());
        Queue q = c.queue(s, "");
        MapMessage out = s.createMapMessage();
        out.setBoolean("bool", true);
        out.setByte("byte", (byte) -3);
        out.setShort("short", (short) 30000);
        out.setChar("char", 'Ω');
        out.setInt("int", -70000);
        out.setLong("long", 1L << 40);
        out.setFloat("float", 1.5f);
        out.setDouble("double", Math.PI);
        out.setString("string", BMP);
        out.setString("null", null);
        out.setBytes("bytes", new byte[] {9, 0, -9});
        out.setBytes("bytesPart", new byte[] {1, 2, 3, 4, 5}, 1, 3);
        out.setObject("object", Long.valueOf(-5));
        StringBuilder big = new StringBuilder();
        while (big.length() < 70_000) {
            big.append("big string ");
        }
        out.setString("bigString", big.toString());
        s.createProducer(q).send(out);

        Message m = c.recv(s.createConsumer(q), "map message");
        check(m instanceof MapMessage, "got " + m.getClass().getName() + ", want MapMessage");
        MapMessage in = (MapMessage) m;
        Map<String, Object> want = new LinkedHashMap<>();
        want.put("bool", Boolean.TRUE);
        want.put("byte", Byte.valueOf((byte) -3));
        want.put("short", Short.valueOf((short) 30000));
        want.put("char", Character.valueOf('Ω'));
        want.put("int", Integer.valueOf(-70000));
        want.put("long", Long.valueOf(1L << 40));
        want.put("float", Float.valueOf(1.5f));
        want.put("double", Double.valueOf(Math.PI));
        want.put("string", BMP);
        want.put("null", null);
        want.put("bytes", new byte[] {9, 0, -9});
        want.put("bytesPart", new byte[] {2, 3, 4});
        want.put("object", Long.valueOf(-5));
        want.put("bigString", big.toString());
        for (Map.Entry<String, Object> e : want.entrySet()) {
            Object got = in.getObject(e.getKey());
            eq(got, e.getValue(), "map entry " + e.getKey());
            if (e.getValue() != null) {
                eq(got.getClass(), e.getValue().getClass(), "map entry " + e.getKey() + " type");
            }
        }
        Set<String> names = new TreeSet<>();
        for (Enumeration<?> en = in.getMapNames(); en.hasMoreElements();) {
            names.add((String) en.nextElement());
        }
        eq(names, new TreeSet<>(want.keySet()), "map names");
        eq(in.itemExists("null"), true, "itemExists(null-valued)");
        eq(in.getString("int"), "-70000", "getString of an int (conversion)");
        eq(in.getLong("short"), 30000L, "getLong of a short (conversion)");
    }

    static void messageStream(Ctx c) throws Exception {
        Session s = c.session(c.conn());
        Queue q = c.queue(s, "");
        StreamMessage out = s.createStreamMessage();
        List<Object> want = Arrays.asList(Boolean.FALSE, Byte.valueOf((byte) 100), Short.valueOf((short) -2),
                Character.valueOf('ü'), Integer.valueOf(123456789), Long.valueOf(-1L), Float.valueOf(-0.5f),
                Double.valueOf(2.5e-10), UNICODE, new byte[] {0, 7, 0}, null);
        out.writeBoolean(false);
        out.writeByte((byte) 100);
        out.writeShort((short) -2);
        out.writeChar('ü');
        out.writeInt(123456789);
        out.writeLong(-1L);
        out.writeFloat(-0.5f);
        out.writeDouble(2.5e-10);
        out.writeString(UNICODE);
        out.writeBytes(new byte[] {0, 7, 0});
        out.writeObject(null);
        s.createProducer(q).send(out);

        Message m = c.recv(s.createConsumer(q), "stream message");
        check(m instanceof StreamMessage, "got " + m.getClass().getName() + ", want StreamMessage");
        StreamMessage in = (StreamMessage) m;
        for (int i = 0; i < want.size(); i++) {
            Object got = in.readObject();
            eq(got, want.get(i), "stream item " + i);
            if (got != null) {
                eq(got.getClass(), want.get(i).getClass(), "stream item " + i + " type");
            }
        }
        try {
            in.readObject();
            throw new AssertionError("readObject past the end: no MessageEOFException");
        } catch (MessageEOFException expected) {
            // end of stream
        }
        in.reset();
        eq(in.readString(), "false", "readString of a boolean (conversion)");
    }

    static void messageObject(Ctx c) throws Exception {
        Session s = c.session(c.conn());
        Queue q = c.queue(s, "");
        Payload p = new Payload(UNICODE, 42, Arrays.asList("a", "b"));
        s.createProducer(q).send(s.createObjectMessage(p));
        s.createProducer(q).send(s.createObjectMessage(new HashMap<>(Map.of("k", 1))));
        MessageConsumer mc = s.createConsumer(q);
        Message m = c.recv(mc, "object message");
        check(m instanceof ObjectMessage, "got " + m.getClass().getName() + ", want ObjectMessage");
        eq(((ObjectMessage) m).getObject(), p, "object");
        Message m2 = c.recv(mc, "object message (HashMap)");
        eq(((ObjectMessage) m2).getObject(), new HashMap<>(Map.of("k", 1)), "object");
    }

    static void messagePlain(Ctx c) throws Exception {
        Session s = c.session(c.conn());
        Queue q = c.queue(s, "");
        Message out = s.createMessage();
        out.setStringProperty("only", "properties");
        s.createProducer(q).send(out);
        Message m = c.recv(s.createConsumer(q), "plain message");
        check(!(m instanceof TextMessage || m instanceof BytesMessage || m instanceof MapMessage
                || m instanceof StreamMessage || m instanceof ObjectMessage),
                "plain Message arrived as " + m.getClass().getName());
        eq(m.getStringProperty("only"), "properties", "property");
    }

    static void messageCompressed(Ctx c) throws Exception {
        // A producer with useCompression=true deflates bodies; a consumer
        // without it must read them as they were written.
        ActiveMQConnectionFactory f = c.factory();
        f.setUseCompression(true);
        Session ps = c.session(c.start(f));
        Session cs = c.session(c.conn());
        Queue q = c.queue(cs, "");
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 2000; i++) {
            sb.append("compressible ").append(i % 10).append(' ');
        }
        String text = sb.toString() + UNICODE;
        MessageProducer p = ps.createProducer(q);
        p.send(ps.createTextMessage(text));
        BytesMessage b = ps.createBytesMessage();
        b.writeBytes(text.getBytes(StandardCharsets.UTF_8));
        p.send(b);
        MapMessage mm = ps.createMapMessage();
        String mapText = sb.toString() + BMP;
        mm.setString("text", mapText);
        mm.setInt("n", 7);
        p.send(mm);

        MessageConsumer mc = cs.createConsumer(q);
        c.recvText(mc, text, "compressed text");
        BytesMessage gb = (BytesMessage) c.recv(mc, "compressed bytes");
        byte[] body = new byte[(int) gb.getBodyLength()];
        gb.readBytes(body);
        eq(new String(body, StandardCharsets.UTF_8), text, "compressed bytes body");
        MapMessage gm = (MapMessage) c.recv(mc, "compressed map");
        eq(gm.getString("text"), mapText, "compressed map text");
        eq(gm.getObject("n"), 7, "compressed map int");
    }

    static void properties(Ctx c) throws Exception {
        Session s = c.session(c.conn());
        Queue q = c.queue(s, "");
        Message out = s.createTextMessage("props");
        StringBuilder big = new StringBuilder();
        while (big.length() < 70_000) {
            big.append("long property ");
        }
        Map<String, Object> want = new LinkedHashMap<>();
        want.put("pBoolean", Boolean.TRUE);
        want.put("pByte", Byte.valueOf((byte) -128));
        want.put("pShort", Short.valueOf((short) 32767));
        want.put("pInt", Integer.valueOf(Integer.MIN_VALUE));
        want.put("pLong", Long.valueOf(Long.MAX_VALUE));
        want.put("pFloat", Float.valueOf(Float.MIN_VALUE));
        want.put("pDouble", Double.valueOf(-0.0));
        want.put("pString", BMP);
        want.put("pEmpty", "");
        want.put("pBigString", big.toString());
        want.put("pObject", Integer.valueOf(17));
        out.setBooleanProperty("pBoolean", true);
        out.setByteProperty("pByte", (byte) -128);
        out.setShortProperty("pShort", (short) 32767);
        out.setIntProperty("pInt", Integer.MIN_VALUE);
        out.setLongProperty("pLong", Long.MAX_VALUE);
        out.setFloatProperty("pFloat", Float.MIN_VALUE);
        out.setDoubleProperty("pDouble", -0.0);
        out.setStringProperty("pString", BMP);
        out.setStringProperty("pEmpty", "");
        out.setStringProperty("pBigString", big.toString());
        out.setObjectProperty("pObject", Integer.valueOf(17));
        s.createProducer(q).send(out);

        Message m = c.recv(s.createConsumer(q), "message with properties");
        for (Map.Entry<String, Object> e : want.entrySet()) {
            Object got = m.getObjectProperty(e.getKey());
            eq(got, e.getValue(), "property " + e.getKey());
            eq(got.getClass(), e.getValue().getClass(), "property " + e.getKey() + " type");
        }
        Set<String> names = new TreeSet<>();
        for (Enumeration<?> en = m.getPropertyNames(); en.hasMoreElements();) {
            String n = (String) en.nextElement();
            if (!n.startsWith("JMSX")) {
                names.add(n);
            }
        }
        eq(names, new TreeSet<>(want.keySet()), "property names");
        eq(m.propertyExists("absent"), false, "propertyExists(absent)");
        eq(m.getStringProperty("pInt"), String.valueOf(Integer.MIN_VALUE), "getStringProperty of an int");
        eq(m.getLongProperty("pShort"), 32767L, "getLongProperty of a short");
        eq(m.getDoubleProperty("pFloat"), (double) Float.MIN_VALUE, "getDoubleProperty of a float");
    }

    // ---------------------------------------------------------------- headers

    static void headers(Ctx c) throws Exception {
        Session s = c.session(c.conn());
        Queue q = c.queue(s, "");
        Queue replyTo = c.queue(s, "_reply");
        TextMessage out = s.createTextMessage("headers");
        out.setJMSCorrelationID("corr-" + c.base);
        out.setJMSReplyTo(replyTo);
        out.setJMSType("type-x");
        MessageProducer p = s.createProducer(q);
        long before = System.currentTimeMillis();
        p.send(out, DeliveryMode.NON_PERSISTENT, 7, 60_000);
        long after = System.currentTimeMillis();
        check(out.getJMSMessageID() != null && out.getJMSMessageID().startsWith("ID:"), "sent JMSMessageID " + out.getJMSMessageID() + " does not start with ID:");

        Message m = c.recv(s.createConsumer(q), "message with headers");
        eq(m.getJMSMessageID(), out.getJMSMessageID(), "JMSMessageID");
        eq(m.getJMSDestination(), q, "JMSDestination");
        eq(m.getJMSCorrelationID(), "corr-" + c.base, "JMSCorrelationID");
        eq(m.getJMSReplyTo(), replyTo, "JMSReplyTo");
        eq(m.getJMSType(), "type-x", "JMSType");
        eq(m.getJMSPriority(), 7, "JMSPriority");
        eq(m.getJMSDeliveryMode(), DeliveryMode.NON_PERSISTENT, "JMSDeliveryMode");
        eq(m.getJMSTimestamp(), out.getJMSTimestamp(), "JMSTimestamp");
        check(m.getJMSTimestamp() >= before && m.getJMSTimestamp() <= after,
                "JMSTimestamp " + m.getJMSTimestamp() + " outside the send call [" + before + "," + after + "]");
        eq(m.getJMSExpiration(), m.getJMSTimestamp() + 60_000, "JMSExpiration (timestamp + TTL)");
        eq(m.getJMSRedelivered(), false, "JMSRedelivered");
        eq(m.getIntProperty("JMSXDeliveryCount"), 1, "JMSXDeliveryCount");
    }

    static void headersPersistentDefaults(Ctx c) throws Exception {
        Session s = c.session(c.conn());
        Queue q = c.queue(s, "");
        Topic replyTo = c.topic(s, "_reply");
        Message out = s.createTextMessage("defaults");
        out.setJMSReplyTo(replyTo);
        s.createProducer(q).send(out);
        Message m = c.recv(s.createConsumer(q), "message with default headers");
        eq(m.getJMSDeliveryMode(), DeliveryMode.PERSISTENT, "JMSDeliveryMode (producer default)");
        eq(m.getJMSPriority(), 4, "JMSPriority (default)");
        eq(m.getJMSExpiration(), 0L, "JMSExpiration (no TTL)");
        eq(m.getJMSCorrelationID(), null, "JMSCorrelationID (unset)");
        eq(m.getJMSType(), null, "JMSType (unset)");
        eq(m.getJMSReplyTo(), replyTo, "JMSReplyTo (a topic)");
        check(m.getJMSReplyTo() instanceof Topic, "JMSReplyTo is not a Topic: " + m.getJMSReplyTo());
    }

    // ---------------------------------------------------------------- queues and topics

    static void queuePointToPoint(Ctx c) throws Exception {
        Session ps = c.session(c.conn());
        Queue q = c.queue(ps, "");
        String[] bodies = new String[10];
        for (int i = 0; i < bodies.length; i++) {
            bodies[i] = "m" + i;
        }
        c.sendText(ps, q, bodies);
        Session cs = c.session(c.conn());
        MessageConsumer mc = cs.createConsumer(q);
        for (String b : bodies) {
            c.recvText(mc, b, "in order");
        }
        c.nextIsMarker(ps, q, mc, "after 10 messages");
    }

    static void queueCompetingConsumers(Ctx c) throws Exception {
        ActiveMQConnectionFactory f = c.factory(Ctx.withOption(c.url, "jms.prefetchPolicy.all=1"));
        Session s1 = c.session(c.start(f));
        Session s2 = c.session(c.start(f));
        Queue q = c.queue(s1, "");
        MessageConsumer c1 = s1.createConsumer(q);
        MessageConsumer c2 = s2.createConsumer(q);
        Session ps = c.session(c.conn());
        int n = 20;
        String[] bodies = new String[n];
        for (int i = 0; i < n; i++) {
            bodies[i] = "m" + i;
        }
        c.sendText(ps, q, bodies);
        List<String> got1 = new ArrayList<>();
        List<String> got2 = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Message m = (i % 2 == 0 ? c1 : c2).receive(Ctx.QUIET_MS);
            if (m != null) {
                (i % 2 == 0 ? got1 : got2).add(((TextMessage) m).getText());
            }
        }
        // Drain whatever is left on either.
        for (MessageConsumer mc : new MessageConsumer[] {c1, c2}) {
            for (Message m = mc.receive(Ctx.QUIET_MS); m != null; m = mc.receive(Ctx.QUIET_MS)) {
                (mc == c1 ? got1 : got2).add(((TextMessage) m).getText());
            }
        }
        List<String> all = new ArrayList<>(got1);
        all.addAll(got2);
        Collections.sort(all);
        List<String> want = new ArrayList<>(Arrays.asList(bodies));
        Collections.sort(want);
        eq(all, want, "union of both consumers (each message exactly once)");
        check(!got1.isEmpty() && !got2.isEmpty(), "one consumer got everything: " + got1 + " / " + got2);
    }

    static void topicFanOut(Ctx c) throws Exception {
        Session ps = c.session(c.conn());
        Topic t = c.topic(ps, "");
        List<MessageConsumer> subs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            subs.add(c.session(c.conn()).createConsumer(t));
        }
        c.sendText(ps, t, "a", "b", "c");
        MessageConsumer late = c.session(c.conn()).createConsumer(t);
        c.sendText(ps, t, "d");
        for (int i = 0; i < subs.size(); i++) {
            for (String b : new String[] {"a", "b", "c", "d"}) {
                c.recvText(subs.get(i), b, "subscriber " + i);
            }
        }
        c.recvText(late, "d", "late subscriber gets only what was published after it subscribed");
    }

    static void topicNoLocal(Ctx c) throws Exception {
        Connection local = c.conn();
        Session ls = c.session(local);
        Topic t = c.topic(ls, "");
        MessageConsumer noLocal = ls.createConsumer(t, null, true);
        MessageConsumer all = ls.createConsumer(t);
        Session rs = c.session(c.conn());
        c.sendText(ls, t, "local");
        c.sendText(rs, t, "remote");
        c.recvText(noLocal, "remote", "noLocal subscriber skips its own connection's message");
        c.recvText(all, "local", "ordinary subscriber");
        c.recvText(all, "remote", "ordinary subscriber");
    }

    static void asyncSend(Ctx c) throws Exception {
        ActiveMQConnectionFactory f = c.factory();
        f.setUseAsyncSend(true);
        Session ps = c.session(c.start(f));
        Queue q = c.queue(ps, "");
        MessageProducer p = ps.createProducer(q);
        p.setDeliveryMode(DeliveryMode.PERSISTENT);
        int n = 200;
        for (int i = 0; i < n; i++) {
            p.send(ps.createTextMessage("m" + i));
        }
        MessageConsumer mc = c.session(c.conn()).createConsumer(q);
        for (int i = 0; i < n; i++) {
            c.recvText(mc, "m" + i, "async persistent send " + i);
        }
    }

    static void clientIDInUse(Ctx c) throws Exception {
        String id = c.base + "-client";
        c.connWithID(id).createSession(false, Session.AUTO_ACKNOWLEDGE);
        Connection second = c.track(c.factory().createConnection());
        try {
            second.setClientID(id);
            second.start();
            second.createSession(false, Session.AUTO_ACKNOWLEDGE);
            throw new AssertionError("second connection with client id " + id + " was accepted");
        } catch (InvalidClientIDException expected) {
            // RegionBroker.addConnection's words, exactly; the first
            // connection comes through the harness's proxy, from a port
            // of its own.
            String want = "Broker: \\S+ - Client: " + java.util.regex.Pattern.quote(id) + " already connected from tcp://127\\.0\\.0\\.1:[0-9]+";
            check(expected.getMessage() != null && expected.getMessage().matches(want),
                    "client id in use: exception message \"" + expected.getMessage() + "\" does not match " + want);
        }
    }

    // ---------------------------------------------------------------- durable subscriptions

    static void durableOffline(Ctx c) throws Exception {
        String id = c.base + "-client";
        Connection c1 = c.connWithID(id);
        Session s1 = c.session(c1);
        Topic t = c.topic(s1, "");
        s1.createDurableSubscriber(t, "sub").close();
        c1.close();

        Session ps = c.session(c.conn());
        c.sendText(ps, t, "offline-1", "offline-2", "offline-3");

        Connection c2 = c.connWithID(id);
        Session s2 = c.session(c2);
        TopicSubscriber sub = s2.createDurableSubscriber(t, "sub");
        for (String b : new String[] {"offline-1", "offline-2", "offline-3"}) {
            c.recvText(sub, b, "message published while offline");
        }
        c.nextIsMarker(ps, t, sub, "after the offline messages");
        sub.close();
        s2.unsubscribe("sub");
    }

    static void durableUnsubscribe(Ctx c) throws Exception {
        String id = c.base + "-client";
        Connection conn = c.connWithID(id);
        Session s = c.session(conn);
        Topic t = c.topic(s, "");
        TopicSubscriber sub = s.createDurableSubscriber(t, "sub");
        try {
            s.unsubscribe("sub");
            throw new AssertionError("unsubscribe of a durable subscription with an active subscriber succeeded");
        } catch (JMSException expected) {
            // JMS 1.1 §6.11.1: "It is erroneous for a client to delete a durable subscription while it has an active TopicSubscriber"
            // ActiveMQ's text, exactly (TopicRegion.removeSubscription): applications match on it.
            eq(expected.getMessage(), "Durable consumer is in use", "unsubscribe while in use: exception message");
        }
        sub.close();
        Session ps = c.session(c.conn());
        c.sendText(ps, t, "before-unsubscribe");
        s.unsubscribe("sub");
        c.sendText(ps, t, "between");
        TopicSubscriber again = s.createDurableSubscriber(t, "sub");
        c.nextIsMarker(ps, t, again, "a new subscription with the same name starts empty");
        again.close();
        s.unsubscribe("sub");
    }

    static void durableUnsubscribeUnknown(Ctx c) throws Exception {
        Session s = c.session(c.connWithID(c.base + "-client"));
        try {
            s.unsubscribe("never-subscribed");
            throw new AssertionError("unsubscribe of an unknown durable subscription succeeded");
        } catch (InvalidDestinationException expected) {
            // ActiveMQ TopicRegion.removeSubscription, in its words
            eq(expected.getMessage(), "No durable subscription exists for clientID: " + c.base + "-client and subscriptionName: never-subscribed",
                    "unsubscribe of an unknown subscription: exception message");
        }
    }

    // ---------------------------------------------------------------- acknowledge modes

    static void ackAuto(Ctx c) throws Exception {
        Connection conn = c.conn();
        Session s = conn.createSession(false, Session.AUTO_ACKNOWLEDGE);
        Queue q = c.queue(s, "");
        c.sendText(s, q, "one", "two");
        MessageConsumer mc = s.createConsumer(q);
        c.recvText(mc, "one", "auto ack");
        c.recvText(mc, "two", "auto ack");
        conn.close();
        c.assertQueueEmpty(q, "auto-acked messages are gone");
    }

    static void ackClient(Ctx c) throws Exception {
        Connection conn = c.conn();
        Session s = conn.createSession(false, Session.CLIENT_ACKNOWLEDGE);
        Queue q = c.queue(s, "");
        c.sendText(c.session(conn), q, "one", "two", "three");
        MessageConsumer mc = s.createConsumer(q);
        for (String b : new String[] {"one", "two", "three"}) {
            c.recvText(mc, b, "client ack, not acknowledged");
        }
        s.close(); // unacknowledged: back to the queue

        Session s2 = conn.createSession(false, Session.CLIENT_ACKNOWLEDGE);
        MessageConsumer mc2 = s2.createConsumer(q);
        Message first = null;
        for (String b : new String[] {"one", "two", "three"}) {
            Message m = c.recvText(mc2, b, "redelivered after the session closed unacknowledged");
            eq(m.getJMSRedelivered(), true, "JMSRedelivered of \"" + b + "\"");
            if (first == null) {
                first = m;
            }
        }
        // JMS 1.1 §4.5.2: acknowledging one message acknowledges every
        // message the session has consumed, including later ones.
        first.acknowledge();
        conn.close();
        c.assertQueueEmpty(q, "after acknowledge() of the first message");
    }

    static void ackDupsOK(Ctx c) throws Exception {
        Connection conn = c.conn();
        Session s = conn.createSession(false, Session.DUPS_OK_ACKNOWLEDGE);
        Queue q = c.queue(s, "");
        c.sendText(s, q, "one", "two", "three");
        MessageConsumer mc = s.createConsumer(q);
        for (String b : new String[] {"one", "two", "three"}) {
            c.recvText(mc, b, "dups ok");
        }
        mc.close();
        conn.close();
        c.assertQueueEmpty(q, "dups-ok messages are acknowledged at the latest when the consumer closes");
    }

    static void ackSessionTransacted(Ctx c) throws Exception {
        Connection conn = c.conn();
        Session s = conn.createSession(true, Session.SESSION_TRANSACTED);
        eq(s.getAcknowledgeMode(), Session.SESSION_TRANSACTED, "acknowledge mode");
        Queue q = c.queue(s, "");
        c.sendText(c.session(conn), q, "one", "two");
        MessageConsumer mc = s.createConsumer(q);
        c.recvText(mc, "one", "transacted receive");
        c.recvText(mc, "two", "transacted receive");
        s.commit();
        conn.close();
        c.assertQueueEmpty(q, "after commit");
    }

    static void ackIndividual(Ctx c) throws Exception {
        Connection conn = c.conn();
        Session s = conn.createSession(false, ActiveMQSession.INDIVIDUAL_ACKNOWLEDGE);
        Queue q = c.queue(s, "");
        c.sendText(c.session(conn), q, "one", "two", "three");
        MessageConsumer mc = s.createConsumer(q);
        c.recvText(mc, "one", "individual ack");
        Message two = c.recvText(mc, "two", "individual ack");
        c.recvText(mc, "three", "individual ack");
        two.acknowledge(); // only "two"
        conn.close();

        Session s2 = c.session(c.conn());
        MessageConsumer mc2 = s2.createConsumer(q);
        eq(c.recvText(mc2, "one", "unacknowledged, redelivered").getJMSRedelivered(), true, "JMSRedelivered");
        eq(c.recvText(mc2, "three", "unacknowledged, redelivered (\"two\" was acknowledged alone)").getJMSRedelivered(), true, "JMSRedelivered");
        c.nextIsMarker(s2, q, mc2, "only two redelivered");
    }

    static void recover(Ctx c) throws Exception {
        Connection conn = c.conn();
        Session s = conn.createSession(false, Session.CLIENT_ACKNOWLEDGE);
        Queue q = c.queue(s, "");
        c.sendText(c.session(conn), q, "one", "two");
        MessageConsumer mc = s.createConsumer(q);
        Message m1 = c.recvText(mc, "one", "first delivery");
        Message m2 = c.recvText(mc, "two", "first delivery");
        eq(m1.getJMSRedelivered(), false, "JMSRedelivered on first delivery");
        eq(m1.getIntProperty("JMSXDeliveryCount"), 1, "JMSXDeliveryCount on first delivery");
        s.recover();
        Message r1 = c.recvText(mc, "one", "after recover()");
        Message r2 = c.recvText(mc, "two", "after recover()");
        eq(r1.getJMSMessageID(), m1.getJMSMessageID(), "redelivered JMSMessageID");
        eq(r2.getJMSMessageID(), m2.getJMSMessageID(), "redelivered JMSMessageID");
        eq(r1.getJMSRedelivered(), true, "JMSRedelivered after recover()");
        eq(r2.getJMSRedelivered(), true, "JMSRedelivered after recover()");
        eq(r1.getIntProperty("JMSXDeliveryCount"), 2, "JMSXDeliveryCount after recover()");
        r2.acknowledge();
        conn.close();
        c.assertQueueEmpty(q, "after acknowledging the redelivered messages");
    }

    // ---------------------------------------------------------------- local transactions

    static void txSendCommit(Ctx c) throws Exception {
        Connection conn = c.conn();
        Session tx = conn.createSession(true, Session.SESSION_TRANSACTED);
        Session plain = c.session(conn);
        Queue q = c.queue(plain, "");
        MessageConsumer mc = c.session(c.conn()).createConsumer(q);
        MessageProducer p = tx.createProducer(q);
        p.send(tx.createTextMessage("tx-1"));
        p.send(tx.createTextMessage("tx-2"));
        c.nextIsMarker(plain, q, mc, "transacted sends are invisible before commit");
        tx.commit();
        c.recvText(mc, "tx-1", "after commit");
        c.recvText(mc, "tx-2", "after commit");
    }

    static void txSendRollback(Ctx c) throws Exception {
        Connection conn = c.conn();
        Session tx = conn.createSession(true, Session.SESSION_TRANSACTED);
        Session plain = c.session(conn);
        Queue q = c.queue(plain, "");
        MessageConsumer mc = c.session(c.conn()).createConsumer(q);
        MessageProducer p = tx.createProducer(q);
        p.send(tx.createTextMessage("rolled-back"));
        tx.rollback();
        p.send(tx.createTextMessage("committed"));
        tx.commit();
        c.recvText(mc, "committed", "only the committed send arrives");
        c.nextIsMarker(plain, q, mc, "after rollback and commit");
    }

    static void txReceiveRollback(Ctx c) throws Exception {
        Connection conn = c.conn();
        Session tx = conn.createSession(true, Session.SESSION_TRANSACTED);
        Queue q = c.queue(tx, "");
        c.sendText(c.session(conn), q, "one", "two");
        MessageConsumer mc = tx.createConsumer(q);
        Message m1 = c.recvText(mc, "one", "transacted receive");
        c.recvText(mc, "two", "transacted receive");
        tx.rollback();
        Message r1 = c.recvText(mc, "one", "redelivered after rollback");
        eq(r1.getJMSMessageID(), m1.getJMSMessageID(), "JMSMessageID after rollback");
        eq(r1.getJMSRedelivered(), true, "JMSRedelivered after rollback");
        eq(r1.getIntProperty("JMSXDeliveryCount"), 2, "JMSXDeliveryCount after rollback");
        c.recvText(mc, "two", "redelivered after rollback");
        tx.commit();
        conn.close();
        c.assertQueueEmpty(q, "after commit of the redelivered messages");
    }

    // ---------------------------------------------------------------- XA

    /** TestXid is a plain Xid; ActiveMQ copies it into an XATransactionId. */
    static final class TestXid implements Xid {
        private static final AtomicInteger SEQ = new AtomicInteger();
        final byte[] gtrid;
        final byte[] bqual = {1};

        TestXid(String base) {
            gtrid = (base + "-" + SEQ.incrementAndGet()).getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public int getFormatId() {
            return 0x57484152; // "WHAR"
        }

        @Override
        public byte[] getGlobalTransactionId() {
            return gtrid;
        }

        @Override
        public byte[] getBranchQualifier() {
            return bqual;
        }

        boolean sameAs(Xid x) {
            return x.getFormatId() == getFormatId() && Arrays.equals(x.getGlobalTransactionId(), gtrid)
                    && Arrays.equals(x.getBranchQualifier(), bqual);
        }
    }

    static XASession xaSession(Ctx c) throws JMSException {
        ActiveMQXAConnectionFactory f = new ActiveMQXAConnectionFactory(c.url);
        XAConnection xc = c.track(f.createXAConnection());
        xc.start();
        return xc.createXASession();
    }

    static void xaTwoPhaseCommit(Ctx c) throws Exception {
        XASession xs = xaSession(c);
        XAResource xr = xs.getXAResource();
        Session plain = c.session(c.conn());
        Queue q = c.queue(plain, "");
        MessageConsumer mc = plain.createConsumer(q);
        TestXid xid = new TestXid(c.base);
        xr.start(xid, XAResource.TMNOFLAGS);
        xs.getSession().createProducer(q).send(xs.createTextMessage("xa-1"));
        xr.end(xid, XAResource.TMSUCCESS);
        eq(xr.prepare(xid), XAResource.XA_OK, "prepare");
        c.nextIsMarker(plain, q, mc, "XA send is invisible while prepared");
        xr.commit(xid, false);
        c.recvText(mc, "xa-1", "after two-phase commit");

        // And an XA receive, two-phase.
        c.sendText(plain, q, "to-consume");
        mc.close();
        TestXid xid2 = new TestXid(c.base);
        xr.start(xid2, XAResource.TMNOFLAGS);
        MessageConsumer xmc = xs.getSession().createConsumer(q);
        c.recvText(xmc, "to-consume", "XA receive");
        xr.end(xid2, XAResource.TMSUCCESS);
        eq(xr.prepare(xid2), XAResource.XA_OK, "prepare of a receive");
        xr.commit(xid2, false);
        xmc.close();
        c.assertQueueEmpty(q, "after the XA receive committed");
    }

    static void xaOnePhaseCommit(Ctx c) throws Exception {
        XASession xs = xaSession(c);
        XAResource xr = xs.getXAResource();
        Session plain = c.session(c.conn());
        Queue q = c.queue(plain, "");
        MessageConsumer mc = plain.createConsumer(q);
        TestXid xid = new TestXid(c.base);
        xr.start(xid, XAResource.TMNOFLAGS);
        xs.getSession().createProducer(q).send(xs.createTextMessage("xa-1pc"));
        xr.end(xid, XAResource.TMSUCCESS);
        c.nextIsMarker(plain, q, mc, "XA send is invisible before commit");
        xr.commit(xid, true);
        c.recvText(mc, "xa-1pc", "after one-phase commit");
    }

    static void xaRollback(Ctx c) throws Exception {
        XASession xs = xaSession(c);
        XAResource xr = xs.getXAResource();
        Session plain = c.session(c.conn());
        Queue q = c.queue(plain, "");
        // A rolled-back send (prepared first) disappears.
        TestXid xid = new TestXid(c.base);
        xr.start(xid, XAResource.TMNOFLAGS);
        xs.getSession().createProducer(q).send(xs.createTextMessage("rolled-back"));
        xr.end(xid, XAResource.TMSUCCESS);
        eq(xr.prepare(xid), XAResource.XA_OK, "prepare");
        xr.rollback(xid);
        // A rolled-back receive is delivered again.
        c.sendText(plain, q, "consume-then-rollback");
        TestXid xid2 = new TestXid(c.base);
        xr.start(xid2, XAResource.TMNOFLAGS);
        MessageConsumer xmc = xs.getSession().createConsumer(q);
        Message m = c.recvText(xmc, "consume-then-rollback", "XA receive (the rolled-back send must not come first)");
        xr.end(xid2, XAResource.TMSUCCESS);
        xr.rollback(xid2);
        TestXid xid3 = new TestXid(c.base);
        xr.start(xid3, XAResource.TMNOFLAGS);
        Message again = c.recvText(xmc, "consume-then-rollback", "redelivered after XA rollback");
        eq(again.getJMSMessageID(), m.getJMSMessageID(), "JMSMessageID after XA rollback");
        eq(again.getJMSRedelivered(), true, "JMSRedelivered after XA rollback");
        xr.end(xid3, XAResource.TMSUCCESS);
        xr.commit(xid3, true);
        xmc.close();
        c.assertQueueEmpty(q, "after rollback of the send and commit of the receive");
    }

    static void xaRecover(Ctx c) throws Exception {
        XASession xs = xaSession(c);
        XAResource xr = xs.getXAResource();
        Session plain = c.session(c.conn());
        Queue q = c.queue(plain, "");
        TestXid commitMe = new TestXid(c.base);
        TestXid rollMe = new TestXid(c.base);
        for (TestXid x : new TestXid[] {commitMe, rollMe}) {
            xr.start(x, XAResource.TMNOFLAGS);
            xs.getSession().createProducer(q).send(xs.createTextMessage(x == commitMe ? "commit" : "rollback"));
            xr.end(x, XAResource.TMSUCCESS);
            eq(xr.prepare(x), XAResource.XA_OK, "prepare");
        }
        // A second XA connection (as a transaction manager recovering
        // after a crash) sees both prepared branches and finishes them.
        XASession other = xaSession(c);
        XAResource or = other.getXAResource();
        Xid[] found = or.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN);
        Xid gotCommit = null;
        Xid gotRoll = null;
        for (Xid x : found) {
            if (commitMe.sameAs(x)) {
                gotCommit = x;
            } else if (rollMe.sameAs(x)) {
                gotRoll = x;
            }
        }
        check(gotCommit != null && gotRoll != null, "recover() returned " + found.length + " xids without both prepared branches");
        or.commit(gotCommit, false);
        or.rollback(gotRoll);
        Xid[] after = or.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN);
        for (Xid x : after) {
            check(!commitMe.sameAs(x) && !rollMe.sameAs(x), "a finished branch is still returned by recover()");
        }
        MessageConsumer mc = plain.createConsumer(q);
        c.recvText(mc, "commit", "the recovered and committed branch's message");
        c.nextIsMarker(plain, q, mc, "the recovered and rolled back branch's message is gone");
    }

    // ---------------------------------------------------------------- selectors

    static void selectorsQueue(Ctx c) throws Exception {
        Session s = c.session(c.conn());
        String[][] cases = {
            {"color = 'red' AND weight > 5", "2"},
            {"JMSType = 'special'", "3"},
            {"color IN ('blue', 'green')", "3"},
            {"color IS NULL", "4"},
            {"weight BETWEEN 2 AND 4", "1"},
            {"color LIKE 'r_d%'", "1,2,5"},
            {"JMSPriority > 6", "5"},
            {"NOT (weight < 9) OR flag", "3,5"},
            {"name = 'x''y'", "4"},
        };
        for (int i = 0; i < cases.length; i++) {
            Queue q = c.queue(s, "_" + i);
            MessageProducer p = s.createProducer(q);
            p.setDeliveryMode(DeliveryMode.PERSISTENT);
            send(s, p, "1", "red", 3, null, false, 4);
            send(s, p, "2", "red", 8, null, false, 4);
            send(s, p, "3", "blue", 9, "special", false, 4);
            Message m4 = s.createTextMessage("4");
            m4.setIntProperty("weight", 1);
            m4.setStringProperty("name", "x'y");
            p.send(m4);
            send(s, p, "5", "reddish", 1, null, true, 8);
            Set<String> match = new HashSet<>(Arrays.asList(cases[i][1].split(",")));
            MessageConsumer sel = s.createConsumer(q, cases[i][0]);
            for (String b : new String[] {"1", "2", "3", "4", "5"}) {
                if (match.contains(b)) {
                    c.recvText(sel, b, "selector " + cases[i][0]);
                }
            }
            sel.close();
            MessageConsumer rest = s.createConsumer(q);
            for (String b : new String[] {"1", "2", "3", "4", "5"}) {
                if (!match.contains(b)) {
                    c.recvText(rest, b, "left behind by selector " + cases[i][0]);
                }
            }
            c.nextIsMarker(s, q, rest, "selector " + cases[i][0]);
            rest.close();
        }
    }

    private static void send(Session s, MessageProducer p, String body, String color, int weight, String type, boolean flag, int prio) throws JMSException {
        Message m = s.createTextMessage(body);
        m.setStringProperty("color", color);
        m.setIntProperty("weight", weight);
        m.setBooleanProperty("flag", flag);
        if (type != null) {
            m.setJMSType(type);
        }
        p.send(m, DeliveryMode.PERSISTENT, prio, 0);
    }

    static void selectorTopic(Ctx c) throws Exception {
        Session s = c.session(c.conn());
        Topic t = c.topic(s, "");
        MessageConsumer red = c.session(c.conn()).createConsumer(t, "color = 'red'");
        MessageProducer p = s.createProducer(t);
        p.setDeliveryMode(DeliveryMode.PERSISTENT);
        for (String color : new String[] {"red", "blue", "red", "green"}) {
            Message m = s.createTextMessage(color);
            m.setStringProperty("color", color);
            p.send(m);
        }
        Message end = s.createTextMessage("end");
        end.setStringProperty("color", "red");
        p.send(end);
        c.recvText(red, "red", "topic selector");
        c.recvText(red, "red", "topic selector");
        c.recvText(red, "end", "topic selector (blue and green filtered)");
    }

    // ---------------------------------------------------------------- temporary destinations

    static void tempQueueRequestReply(Ctx c) throws Exception {
        Session requester = c.session(c.conn());
        Session responder = c.session(c.conn());
        Queue requests = c.queue(requester, "");
        TemporaryQueue replies = requester.createTemporaryQueue();
        MessageConsumer replyConsumer = requester.createConsumer(replies);
        MessageConsumer requestConsumer = responder.createConsumer(requests);
        MessageProducer anon = responder.createProducer(null);

        for (int i = 0; i < 3; i++) {
            TextMessage req = requester.createTextMessage("request " + i);
            req.setJMSReplyTo(replies);
            req.setJMSCorrelationID("corr-" + i);
            requester.createProducer(requests).send(req);

            Message got = c.recvText(requestConsumer, "request " + i, "request");
            Destination replyTo = got.getJMSReplyTo();
            check(replyTo instanceof TemporaryQueue, "JMSReplyTo " + replyTo + " is not a TemporaryQueue");
            eq(replyTo, replies, "JMSReplyTo");
            TextMessage reply = responder.createTextMessage("reply " + i);
            reply.setJMSCorrelationID(got.getJMSCorrelationID());
            anon.send(replyTo, reply);

            Message r = c.recvText(replyConsumer, "reply " + i, "reply on the temporary queue");
            eq(r.getJMSCorrelationID(), "corr-" + i, "reply JMSCorrelationID");
        }
        replyConsumer.close();
        replies.delete();
    }

    /**
     * A send to a deleted temporary queue fails with an exception naming
     * it (temp-queue://ID:...), as ActiveMQ's does: the owner's connection
     * knows at once and its client refuses ("Cannot publish to a deleted
     * Destination: ...", or the broker does, below, when an advisory came
     * late); a connection that does not watch advisories
     * cannot know, and the broker refuses with a
     * DestinationDoesNotExistException whose message is the destination's
     * qualified name (AbstractRegion.lookup).
     */
    static void tempQueueDeletedSend(Ctx c) throws Exception {
        Session owner = c.session(c.conn());
        TemporaryQueue tq = owner.createTemporaryQueue();
        String name = tq.toString();
        check(name.startsWith("temp-queue://ID:"), "temporary queue " + name + " is not named temp-queue://ID:...");
        tq.delete();

        MessageProducer own = owner.createProducer(null);
        own.setDeliveryMode(DeliveryMode.PERSISTENT);
        try {
            own.send(tq, owner.createTextMessage("to a deleted temporary queue"));
            throw new AssertionError("the owner's send to its deleted temporary queue " + name + " succeeded");
        } catch (JMSException expected) {
            // Usually the client refuses; but the advisory of the queue's
            // creation, which arrives asynchronously, can put it back in
            // the client's list of live temporary destinations after the
            // delete, and then the broker refuses.
            String msg = expected.getMessage();
            check(msg.equals("Cannot publish to a deleted Destination: " + name) || msg.equals(name),
                    "owner's send: exception message \"" + msg + "\", want \"Cannot publish to a deleted Destination: " + name + "\" or \"" + name + "\"");
        }

        ActiveMQConnectionFactory f = c.factory();
        f.setWatchTopicAdvisories(false);
        Session other = c.session(c.start(f));
        MessageProducer p = other.createProducer(null);
        p.setDeliveryMode(DeliveryMode.PERSISTENT); // a synchronous send: the broker's answer is the exception
        try {
            p.send(tq, other.createTextMessage("to a deleted temporary queue"));
            throw new AssertionError("a send to the deleted temporary queue " + name + " succeeded");
        } catch (JMSException expected) {
            // In 5.17 DestinationDoesNotExistException is a plain JMSException.
            eq(expected.getClass().getName(), "org.apache.activemq.DestinationDoesNotExistException", "broker's refusal: exception class");
            eq(expected.getMessage(), name, "broker's refusal: exception message");
        }
    }

    static void tempTopic(Ctx c) throws Exception {
        Session owner = c.session(c.conn());
        TemporaryTopic t = owner.createTemporaryTopic();
        MessageConsumer a = owner.createConsumer(t);
        MessageConsumer b = owner.createConsumer(t);
        // The sending connection does not watch advisories: one that does
        // refuses, in ActiveMQ's client, a send to a temporary destination
        // its advisory consumer has not heard of yet ("Cannot publish to a
        // deleted Destination"), a race this case is not about (it lost it
        // under load against ActiveMQ 5.17 itself). The broker decides.
        ActiveMQConnectionFactory f = c.factory();
        f.setWatchTopicAdvisories(false);
        Session other = c.session(c.start(f));
        MessageProducer p = other.createProducer(t);
        p.setDeliveryMode(DeliveryMode.PERSISTENT);
        p.send(other.createTextMessage("to temp topic"));
        c.recvText(a, "to temp topic", "temp topic subscriber a");
        c.recvText(b, "to temp topic", "temp topic subscriber b");
        a.close();
        b.close();
        t.delete();
    }

    // ---------------------------------------------------------------- browser, groups, exclusive, priority

    static void queueBrowser(Ctx c) throws Exception {
        Session s = c.session(c.conn());
        Queue q = c.queue(s, "");
        Queue empty = c.queue(s, "_empty");
        MessageProducer p = s.createProducer(q);
        p.setDeliveryMode(DeliveryMode.PERSISTENT);
        for (String color : new String[] {"red", "blue", "red"}) {
            Message m = s.createTextMessage(color);
            m.setStringProperty("color", color);
            p.send(m);
        }
        eq(browse(s.createBrowser(q)), Arrays.asList("red", "blue", "red"), "browse");
        eq(browse(s.createBrowser(q, "color = 'blue'")), Arrays.asList("blue"), "browse with selector");
        eq(browse(s.createBrowser(q)), Arrays.asList("red", "blue", "red"), "browse again (browsing consumes nothing)");
        eq(browse(s.createBrowser(empty)), Collections.emptyList(), "browse an empty queue");
        MessageConsumer mc = s.createConsumer(q);
        c.recvText(mc, "red", "consume after browsing");
        c.recvText(mc, "blue", "consume after browsing");
        c.recvText(mc, "red", "consume after browsing");
    }

    private static List<String> browse(QueueBrowser b) throws JMSException {
        List<String> got = new ArrayList<>();
        for (Enumeration<?> e = b.getEnumeration(); e.hasMoreElements();) {
            got.add(((TextMessage) e.nextElement()).getText());
        }
        b.close();
        return got;
    }

    static void messageGroups(Ctx c) throws Exception {
        Queue q = null;
        List<Conformance.Collector> cols = new ArrayList<>();
        int groups = 4;
        int per = 5;
        for (int i = 0; i < 2; i++) {
            Session s = c.session(c.conn());
            q = c.queue(s, "");
            Conformance.Collector col = new Conformance.Collector(groups * per);
            cols.add(col);
            s.createConsumer(q).setMessageListener(col);
        }
        Session ps = c.session(c.conn());
        MessageProducer p = ps.createProducer(q);
        p.setDeliveryMode(DeliveryMode.PERSISTENT);
        for (int n = 1; n <= per; n++) {
            for (int g = 0; g < groups; g++) {
                Message m = ps.createTextMessage("g" + g + "-" + n);
                m.setStringProperty("JMSXGroupID", "group-" + g);
                m.setIntProperty("JMSXGroupSeq", n);
                p.send(m);
            }
        }
        // Wait for all of them, whichever consumer has them.
        long deadline = System.currentTimeMillis() + Ctx.WAIT_MS;
        while (cols.get(0).got.size() + cols.get(1).got.size() < groups * per) {
            check(System.currentTimeMillis() < deadline, "got " + (cols.get(0).got.size() + cols.get(1).got.size()) + " of " + groups * per + " grouped messages");
            Thread.sleep(10); // polling the collectors, with a deadline
        }
        Map<String, Integer> owner = new HashMap<>();
        for (int ci = 0; ci < cols.size(); ci++) {
            Map<String, Integer> lastSeq = new HashMap<>();
            synchronized (cols.get(ci).got) {
                for (Message m : cols.get(ci).got) {
                    String g = m.getStringProperty("JMSXGroupID");
                    Integer prev = owner.putIfAbsent(g, ci);
                    check(prev == null || prev == ci, g + " was delivered to both consumers");
                    int seq = m.getIntProperty("JMSXGroupSeq");
                    int last = lastSeq.getOrDefault(g, 0);
                    eq(seq, last + 1, g + " sequence on consumer " + ci);
                    lastSeq.put(g, seq);
                    boolean first = m.propertyExists("JMSXGroupFirstForConsumer") && m.getBooleanProperty("JMSXGroupFirstForConsumer");
                    eq(first, seq == 1, g + " message " + seq + " JMSXGroupFirstForConsumer");
                }
            }
        }
        eq(owner.size(), groups, "groups seen");
    }

    static void exclusiveConsumer(Ctx c) throws Exception {
        Session s1 = c.session(c.conn());
        Session s2 = c.session(c.conn());
        Queue q = s1.createQueue(c.base + "?consumer.exclusive=true");
        MessageConsumer first = s1.createConsumer(q);
        MessageConsumer second = s2.createConsumer(q);
        Session ps = c.session(c.conn());
        Queue plain = c.queue(ps, "");
        String[] bodies = new String[12];
        for (int i = 0; i < bodies.length; i++) {
            bodies[i] = "m" + i;
        }
        c.sendText(ps, plain, bodies);
        for (int i = 0; i < 10; i++) {
            c.recvText(first, bodies[i], "exclusive consumer gets everything");
        }
        c.quiet(second, "the second consumer while the exclusive one is there");
        first.close();
        for (int i = 10; i < 12; i++) {
            c.recvText(second, bodies[i], "the second consumer takes over when the first closes");
        }
    }

    static void priority(Ctx c) throws Exception {
        // Needs a broker policy with prioritizedMessages="true" for this
        // queue: conformance/activemq/activemq.xml has one for "*.prio.>".
        Session s = c.session(c.conn());
        Queue q = c.queue(s, ".prio.q");
        MessageProducer p = s.createProducer(q);
        int[] prios = {0, 9, 4, 5, 1, 8, 4, 9, 0, 7};
        for (int i = 0; i < prios.length; i++) {
            p.send(s.createTextMessage("p" + prios[i] + "-" + i), DeliveryMode.PERSISTENT, prios[i], 0);
        }
        MessageConsumer mc = s.createConsumer(q);
        List<String> got = new ArrayList<>();
        for (int i = 0; i < prios.length; i++) {
            got.add(((TextMessage) c.recv(mc, "prioritized message " + i)).getText());
        }
        List<String> want = Arrays.asList("p9-1", "p9-7", "p8-5", "p7-9", "p5-3", "p4-2", "p4-6", "p1-4", "p0-0", "p0-8");
        eq(got, want, "dispatch order (highest JMSPriority first, FIFO within a priority)");
    }

    static void wildcards(Ctx c) throws Exception {
        Session s = c.session(c.conn());
        MessageConsumer all = c.session(c.conn()).createConsumer(c.topic(s, ".>"));
        MessageConsumer starX = c.session(c.conn()).createConsumer(c.topic(s, ".*.x"));
        MessageConsumer aStar = c.session(c.conn()).createConsumer(c.topic(s, ".a.*"));
        for (String suffix : new String[] {".a.x", ".b.x", ".a.y", ".c", ".a.x.deep"}) {
            c.sendText(s, c.topic(s, suffix), suffix);
        }
        c.sendText(s, c.topic(s, ".a.x"), "end");
        for (String b : new String[] {".a.x", ".b.x", ".a.y", ".c", ".a.x.deep", "end"}) {
            c.recvText(all, b, "topic base.>");
        }
        for (String b : new String[] {".a.x", ".b.x", "end"}) {
            c.recvText(starX, b, "topic base.*.x");
        }
        for (String b : new String[] {".a.x", ".a.y", "end"}) {
            c.recvText(aStar, b, "topic base.a.*");
        }
        // A wildcard queue consumer receives from every matching queue.
        MessageConsumer qAll = s.createConsumer(c.queue(s, ".q.>"));
        c.sendText(s, c.queue(s, ".q.one"), "q1");
        c.sendText(s, c.queue(s, ".q.two.deep"), "q2");
        c.sendText(s, c.queue(s, ".other"), "not matched");
        c.recvText(qAll, "q1", "queue base.q.>");
        c.recvText(qAll, "q2", "queue base.q.>");
        c.quiet(qAll, "queue base.q.> after its two matches");
    }

    static void composite(Ctx c) throws Exception {
        Session s = c.session(c.conn());
        Queue a = c.queue(s, ".A");
        Queue b = c.queue(s, ".B");
        Topic t = c.topic(s, ".T");
        MessageConsumer ta = c.session(c.conn()).createConsumer(t);
        c.sendText(s, s.createQueue(c.base + ".A," + c.base + ".B"), "to both queues");
        c.sendText(s, s.createQueue(c.base + ".A,topic://" + c.base + ".T"), "to a queue and a topic");
        MessageConsumer ca = s.createConsumer(a);
        MessageConsumer cb = s.createConsumer(b);
        c.recvText(ca, "to both queues", "queue A");
        c.recvText(ca, "to a queue and a topic", "queue A");
        c.recvText(cb, "to both queues", "queue B");
        c.recvText(ta, "to a queue and a topic", "topic T");
        c.nextIsMarker(s, b, cb, "queue B got only the first");
    }

    static void virtualTopic(Ctx c) throws Exception {
        Session s = c.session(c.conn());
        String vt = "VirtualTopic." + c.base;
        Topic t = s.createTopic(vt);
        Conformance.Collector a = new Conformance.Collector(4);
        MessageConsumer a1 = c.session(c.conn()).createConsumer(s.createQueue("Consumer.A." + vt));
        MessageConsumer a2 = c.session(c.conn()).createConsumer(s.createQueue("Consumer.A." + vt));
        a1.setMessageListener(a);
        a2.setMessageListener(a);
        MessageConsumer b = c.session(c.conn()).createConsumer(s.createQueue("Consumer.B." + vt));
        MessageConsumer plainSub = c.session(c.conn()).createConsumer(t);
        c.sendText(s, t, "v1", "v2", "v3", "v4");
        a.await("Consumer.A (two competing consumers)");
        List<String> got = Conformance.texts(a.got);
        Collections.sort(got);
        eq(got, Arrays.asList("v1", "v2", "v3", "v4"), "Consumer.A got each message once");
        for (String body : new String[] {"v1", "v2", "v3", "v4"}) {
            c.recvText(b, body, "Consumer.B queue");
            c.recvText(plainSub, body, "ordinary topic subscriber");
        }
    }

    // ---------------------------------------------------------------- redelivery, DLQ, expiry

    static void redeliveryToDLQ(Ctx c) throws Exception {
        ActiveMQConnectionFactory f = c.factory();
        RedeliveryPolicy rp = new RedeliveryPolicy();
        rp.setMaximumRedeliveries(1);
        rp.setInitialRedeliveryDelay(0);
        rp.setRedeliveryDelay(0);
        f.setRedeliveryPolicy(rp);
        Connection conn = c.start(f);
        Session tx = conn.createSession(true, Session.SESSION_TRANSACTED);
        Session plain = c.session(conn);
        Queue q = c.queue(plain, "");
        Message out = plain.createTextMessage("poison");
        out.setStringProperty("wharfCase", c.base);
        MessageProducer p = plain.createProducer(q);
        p.setDeliveryMode(DeliveryMode.PERSISTENT); // ActiveMQ's DLQ takes only persistent messages by default
        p.send(out);
        MessageConsumer mc = tx.createConsumer(q);
        c.recvText(mc, "poison", "first delivery");
        tx.rollback();
        Message again = c.recvText(mc, "poison", "redelivery 1 of 1");
        eq(again.getJMSRedelivered(), true, "JMSRedelivered");
        tx.rollback(); // exceeds maximumRedeliveries: the client sends a poison ack
        c.nextIsMarker(plain, q, mc, "the poisoned message left the queue");
        tx.commit();

        MessageConsumer dlq = plain.createConsumer(plain.createQueue("ActiveMQ.DLQ"), "wharfCase = '" + c.base + "'");
        Message dead = c.recvText(dlq, "poison", "ActiveMQ.DLQ");
        eq(dead.getJMSMessageID(), out.getJMSMessageID(), "JMSMessageID in the DLQ");
        String cause = dead.getStringProperty("dlqDeliveryFailureCause");
        check(cause != null && cause.contains("exceeds redelivery policy limit"),
                "dlqDeliveryFailureCause " + Conformance.show(cause) + " does not say \"exceeds redelivery policy limit\"");
        eq(((ActiveMQMessage) dead).getOriginalDestination(), q, "original destination");
    }

    static void expiry(Ctx c) throws Exception {
        Session s = c.session(c.conn());
        Queue q = c.queue(s, "");
        MessageProducer p = s.createProducer(q);
        Message m = s.createTextMessage("expires");
        m.setStringProperty("wharfCase", c.base);
        p.send(m, DeliveryMode.PERSISTENT, 4, 1);
        eq(m.getJMSExpiration(), m.getJMSTimestamp() + 1, "JMSExpiration with TTL 1 ms");
        Message np = s.createTextMessage("expires, non-persistent");
        p.send(np, DeliveryMode.NON_PERSISTENT, 4, 1);
        // Let the 1 ms time-to-live pass: the effect waited for is the clock.
        Thread.sleep(20);
        MessageConsumer mc = s.createConsumer(q);
        c.nextIsMarker(s, q, mc, "expired messages are not delivered");
        // ActiveMQ's default dead-letter strategy keeps expired persistent
        // messages (processExpired=true).
        MessageConsumer dlq = s.createConsumer(s.createQueue("ActiveMQ.DLQ"), "wharfCase = '" + c.base + "'");
        Message dead = c.recvText(dlq, "expires", "the expired persistent message in ActiveMQ.DLQ");
        eq(dead.getJMSMessageID(), m.getJMSMessageID(), "JMSMessageID in the DLQ");
    }

    // ---------------------------------------------------------------- prefetch

    static void prefetch0(Ctx c) throws Exception {
        ActiveMQConnectionFactory f = c.factory(Ctx.withOption(c.url, "jms.prefetchPolicy.all=0"));
        Session s1 = c.session(c.start(f));
        Queue q = c.queue(s1, "");
        MessageConsumer c1 = s1.createConsumer(q);
        Session ps = c.session(c.conn());
        c.sendText(ps, q, "one", "two");
        c.recvText(c1, "one", "prefetch 0 pulls one message");
        // With any prefetch above 0, "two" would already sit in c1's buffer.
        Session s2 = c.session(c.start(f));
        MessageConsumer c2 = s2.createConsumer(q);
        c.recvText(c2, "two", "a second prefetch-0 consumer gets what the first did not pull");
        eq(c1.receiveNoWait(), null, "receiveNoWait on an empty queue");
        eq(c1.receive(Ctx.QUIET_MS), null, "receive(timeout) on an empty queue");
        c.sendText(ps, q, "three");
        c.recvText(c1, "three", "receive after an empty pull");
    }

    static void prefetch1(Ctx c) throws Exception {
        ActiveMQConnectionFactory f = c.factory(Ctx.withOption(c.url, "jms.prefetchPolicy.all=1"));
        Session s1 = c.session(c.start(f));
        Queue q = c.queue(s1, "");
        MessageConsumer c1 = s1.createConsumer(q);
        Session ps = c.session(c.conn());
        c.sendText(ps, q, "one", "two", "three");
        c.recvText(c1, "one", "prefetch 1");
        Session s2 = c.session(c.start(f));
        MessageConsumer c2 = s2.createConsumer(q);
        // c1 holds at most one more message; the other is free for c2.
        String g2 = ((TextMessage) c.recv(c2, "second consumer (prefetch 1 leaves a message for it)")).getText();
        String g1 = ((TextMessage) c.recv(c1, "first consumer's prefetched message")).getText();
        eq(new TreeSet<>(Arrays.asList(g1, g2)), new TreeSet<>(Arrays.asList("two", "three")), "the two remaining messages, one each");
    }

    // ---------------------------------------------------------------- advisories

    static void advisoryConsumer(Ctx c) throws Exception {
        Session s = c.session(c.conn());
        Queue q = c.queue(s, "");
        MessageConsumer adv = s.createConsumer(s.createTopic("ActiveMQ.Advisory.Consumer.Queue." + c.base));
        MessageConsumer consumer = c.session(c.conn()).createConsumer(q);
        Message m = c.recv(adv, "consumer advisory");
        check(m instanceof ActiveMQMessage, "advisory is a " + m.getClass().getName());
        Object ds = ((ActiveMQMessage) m).getDataStructure();
        check(ds instanceof ConsumerInfo, "advisory data structure is " + ds + ", want a ConsumerInfo");
        eq(((ConsumerInfo) ds).getDestination(), q, "advisory ConsumerInfo destination");
        eq(m.getIntProperty("consumerCount"), 1, "consumerCount");
        consumer.close();
        Message removed = c.recv(adv, "consumer-removed advisory");
        eq(removed.getIntProperty("consumerCount"), 0, "consumerCount after close");
    }

    // ---------------------------------------------------------------- failover

    static void failover(Ctx c) throws Exception {
        if (c.failoverURL == null) {
            throw new Conformance.Skip("needs --failover-url and a driver that restarts the broker");
        }
        ActiveMQConnectionFactory f = c.factory(c.failoverURL);
        ActiveMQConnection conn = (ActiveMQConnection) c.start(f);
        AtomicInteger interrupted = new AtomicInteger();
        AtomicInteger resumed = new AtomicInteger();
        conn.addTransportListener(new TransportListener() {
            @Override
            public void onCommand(Object command) {
            }

            @Override
            public void onException(java.io.IOException error) {
            }

            @Override
            public void transportInterupted() {
                interrupted.incrementAndGet();
            }

            @Override
            public void transportResumed() {
                resumed.incrementAndGet();
            }
        });
        Session s = c.session(conn);
        Queue q = c.queue(s, "");
        Queue live = c.queue(s, "_live");
        Topic t = c.topic(s, "");
        c.sendText(s, q, "before-1", "before-2");
        MessageConsumer mc = s.createConsumer(q);
        c.recvText(mc, "before-1", "before the restart");
        mc.close(); // "before-2" stays on the broker, persistent
        MessageConsumer liveConsumer = s.createConsumer(live);
        MessageConsumer topicSub = s.createConsumer(t);

        c.step("waiting for the driver to restart the broker");
        String how = c.conf.requestRestart(c.name);
        check(how.equals("RESTARTED") || how.equals("DROPPED"), "driver answered " + how);
        String event = how.equals("RESTARTED") ? "broker restart" : "connection drop";

        // The failover transport replays the connection, sessions and the
        // two open consumers on the new connection.
        c.sendText(s, q, "after");
        MessageConsumer mc2 = s.createConsumer(q);
        c.recvText(mc2, "before-2", "persistent message sent before the " + event);
        c.recvText(mc2, "after", "message sent after reconnecting");
        c.sendText(s, live, "to-live");
        c.recvText(liveConsumer, "to-live", "consumer opened before the " + event);
        c.sendText(s, t, "to-topic");
        c.recvText(topicSub, "to-topic", "topic subscriber opened before the " + event);
        check(interrupted.get() >= 1, "transportInterupted was not called");
        check(resumed.get() >= 1, "transportResumed was not called");
    }

    // ---------------------------------------------------------------- mixed protocols

    static Stomp stomp(Ctx c) throws Exception {
        if (c.stomp == null) {
            throw new Conformance.Skip("needs --stomp host:port (the same broker's STOMP connector)");
        }
        return new Stomp(c.stomp, (int) Ctx.WAIT_MS);
    }

    static void mixedJMSToSTOMP(Ctx c) throws Exception {
        try (Stomp st = stomp(c)) {
            Session s = c.session(c.conn());
            Queue q = c.queue(s, "");
            Queue reply = c.queue(s, "_reply");
            MessageProducer p = s.createProducer(q);
            TextMessage tm = s.createTextMessage(BMP);
            tm.setStringProperty("pString", "value");
            tm.setIntProperty("pInt", 42);
            tm.setBooleanProperty("pBool", true);
            tm.setDoubleProperty("pDouble", 1.5);
            tm.setJMSCorrelationID("corr-1");
            tm.setJMSType("type-1");
            tm.setJMSReplyTo(reply);
            p.send(tm, DeliveryMode.PERSISTENT, 6, 0);
            BytesMessage bm = s.createBytesMessage();
            byte[] raw = {0, 1, 2, 0, -1};
            bm.writeBytes(raw);
            p.send(bm, DeliveryMode.NON_PERSISTENT, 4, 0);

            st.subscribe("s1", "/queue/" + q.getQueueName());
            Stomp.Frame f = st.read();
            eq(f.command, "MESSAGE", "frame");
            eq(f.text(), BMP, "text body as UTF-8");
            eq(f.headers.containsKey("content-length"), false, "a TextMessage has no content-length header (" + f.headers + ")");
            eq(f.headers.get("destination"), "/queue/" + q.getQueueName(), "destination header");
            eq(f.headers.get("message-id"), tm.getJMSMessageID(), "message-id header");
            eq(f.headers.get("subscription"), "s1", "subscription header");
            eq(f.headers.get("pString"), "value", "string property as a header");
            eq(f.headers.get("pInt"), "42", "int property as a header");
            eq(f.headers.get("pBool"), "true", "boolean property as a header");
            eq(f.headers.get("pDouble"), "1.5", "double property as a header");
            eq(f.headers.get("correlation-id"), "corr-1", "correlation-id header");
            eq(f.headers.get("type"), "type-1", "type header");
            eq(f.headers.get("priority"), "6", "priority header");
            eq(f.headers.get("persistent"), "true", "persistent header");
            eq(f.headers.get("reply-to"), "/queue/" + reply.getQueueName(), "reply-to header");
            eq(f.headers.get("expires"), "0", "expires header");
            eq(f.headers.get("timestamp"), String.valueOf(tm.getJMSTimestamp()), "timestamp header");

            Stomp.Frame fb = st.read();
            eq(fb.command, "MESSAGE", "frame");
            eq(fb.headers.get("content-length"), "5", "a BytesMessage has a content-length header");
            eq(fb.body, raw, "bytes body");
            eq(fb.headers.containsKey("persistent"), false, "no persistent header for a non-persistent message (" + fb.headers + ")");
        }
    }

    static void mixedSTOMPToJMS(Ctx c) throws Exception {
        try (Stomp st = stomp(c)) {
            Session s = c.session(c.conn());
            Queue q = c.queue(s, "");
            String text = BMP;
            Map<String, String> h = new LinkedHashMap<>();
            h.put("pString", "value");
            h.put("pNumber", "42");
            h.put("correlation-id", "corr-2");
            h.put("type", "type-2");
            h.put("priority", "3");
            h.put("persistent", "true");
            h.put("reply-to", "/queue/" + c.base + "_reply");
            st.send("/queue/" + q.getQueueName(), h, text.getBytes(StandardCharsets.UTF_8));
            byte[] raw = {0, 1, 2, 0, -1};
            Map<String, String> hb = new LinkedHashMap<>();
            hb.put("content-length", "5");
            st.send("/queue/" + q.getQueueName(), hb, raw);
            byte[] utf8 = "text with a length".getBytes(StandardCharsets.UTF_8);
            Map<String, String> hl = new LinkedHashMap<>();
            hl.put("content-length", String.valueOf(utf8.length));
            st.send("/queue/" + q.getQueueName(), hl, utf8);

            MessageConsumer mc = s.createConsumer(q);
            Message m = c.recv(mc, "STOMP SEND without content-length");
            check(m instanceof TextMessage, "STOMP SEND without content-length arrived as " + m.getClass().getName() + ", want TextMessage");
            eq(((TextMessage) m).getText(), text, "text");
            eq(m.getObjectProperty("pString"), "value", "header as a string property");
            eq(m.getObjectProperty("pNumber"), "42", "numeric header as a string property");
            eq(m.getJMSCorrelationID(), "corr-2", "JMSCorrelationID");
            eq(m.getJMSType(), "type-2", "JMSType");
            eq(m.getJMSPriority(), 3, "JMSPriority");
            eq(m.getJMSDeliveryMode(), DeliveryMode.PERSISTENT, "JMSDeliveryMode");
            eq(m.getJMSReplyTo(), s.createQueue(c.base + "_reply"), "JMSReplyTo");
            check(m.getJMSMessageID() != null && m.getJMSMessageID().startsWith("ID:"), "JMSMessageID " + m.getJMSMessageID());

            Message b = c.recv(mc, "STOMP SEND with content-length");
            check(b instanceof BytesMessage, "STOMP SEND with content-length arrived as " + b.getClass().getName() + ", want BytesMessage");
            BytesMessage bm = (BytesMessage) b;
            eq(bm.getBodyLength(), 5L, "body length");
            byte[] got = new byte[5];
            bm.readBytes(got);
            eq(got, raw, "bytes body");
            eq(b.getJMSDeliveryMode(), DeliveryMode.NON_PERSISTENT, "JMSDeliveryMode without a persistent header");

            Message l = c.recv(mc, "STOMP SEND of text with content-length");
            check(l instanceof BytesMessage, "STOMP SEND of UTF-8 text with content-length arrived as " + l.getClass().getName() + ", want BytesMessage");
        }
    }

    /** NON_BMP is text with characters outside the BMP, which STOMP carries as 4-byte UTF-8. */
    static final String NON_BMP = "emoji 😀 clef 𝄞 and BMP é€";

    static void mixedJMSToSTOMPNonBMP(Ctx c) throws Exception {
        try (Stomp st = stomp(c)) {
            Session s = c.session(c.conn());
            Queue q = c.queue(s, "");
            s.createProducer(q).send(s.createTextMessage(NON_BMP));
            st.subscribe("s1", "/queue/" + q.getQueueName());
            Stomp.Frame f = st.read();
            eq(f.command, "MESSAGE", "frame");
            if (c.activemq) {
                // DEVIATION (ActiveMQ 5.17.2): the STOMP body is the OpenWire
                // text's modified UTF-8 bytes as they are, so each character
                // outside the BMP arrives as two 3-byte surrogates (CESU-8),
                // which is not UTF-8. Wharf sends UTF-8 (issue 5, item 2).
                java.io.ByteArrayOutputStream mutf = new java.io.ByteArrayOutputStream();
                new java.io.DataOutputStream(mutf).writeUTF(NON_BMP);
                byte[] cesu = Arrays.copyOfRange(mutf.toByteArray(), 2, mutf.size());
                eq(f.body, cesu, "ActiveMQ: body is the modified UTF-8 bytes");
                return;
            }
            eq(f.body, NON_BMP.getBytes(StandardCharsets.UTF_8), "body is UTF-8 (4-byte sequences outside the BMP)");
            eq(f.text(), NON_BMP, "text");
        }
    }

    static void mixedSTOMPToJMSNonBMP(Ctx c) throws Exception {
        try (Stomp st = stomp(c)) {
            Session s = c.session(c.conn());
            Queue q = c.queue(s, "");
            st.send("/queue/" + q.getQueueName(), new LinkedHashMap<>(), NON_BMP.getBytes(StandardCharsets.UTF_8));
            Message m = c.recv(s.createConsumer(q), "STOMP text with characters outside the BMP");
            check(m instanceof TextMessage, "arrived as " + m.getClass().getName() + ", want TextMessage");
            if (c.activemq) {
                // DEVIATION (ActiveMQ 5.17.2): the STOMP body's UTF-8 bytes
                // become the OpenWire text as they are; the JMS client's
                // modified-UTF-8 decoder rejects the 4-byte sequences.
                // Wharf re-encodes (issue 5, item 2).
                try {
                    ((TextMessage) m).getText();
                    throw new AssertionError("ActiveMQ: getText() succeeded; the documented difference is gone");
                } catch (JMSException expected) {
                    check(expected.getCause() instanceof java.io.UTFDataFormatException
                            || expected.getLinkedException() instanceof java.io.UTFDataFormatException,
                            "ActiveMQ: getText() failed with " + expected + ", want a UTFDataFormatException cause");
                }
                return;
            }
            eq(((TextMessage) m).getText(), NON_BMP, "text");
        }
    }

    // ---------------------------------------------------------------- mixed MQTT

    /** The JMS properties of the MQTT mapping (reference/mappings.md §2.3, §2.4). */
    static final String MQTT_QOS = "ActiveMQ.MQTT.QoS";
    static final String RETAIN = "ActiveMQ.Retain";
    static final String RETAINED = "ActiveMQ.Retained";

    /**
     * mqtt connects a raw MQTT 3.1.1 client with a clean session as
     * c.base + suffix. MQTT names map to JMS ones by swapping '/' and '.'
     * (mappings.md §2.1); c.base contains neither.
     */
    static Mqtt mqtt(Ctx c, String suffix) throws Exception {
        if (c.mqtt == null) {
            throw new Conformance.Skip("needs --mqtt host:port (the same broker's MQTT connector)");
        }
        return new Mqtt(c.mqtt, c.base + suffix, (int) Ctx.WAIT_MS);
    }

    /** checkFromMQTT checks the JMS side of an MQTT PUBLISH (mappings.md §2.3). */
    static void checkFromMQTT(Message m, byte[] payload, int qos, Topic dest, String what) throws JMSException {
        check(m instanceof BytesMessage, what + ": arrived as " + m.getClass().getName() + ", want a BytesMessage");
        BytesMessage bm = (BytesMessage) m;
        eq(bm.getBodyLength(), (long) payload.length, what + ": body length");
        byte[] got = new byte[payload.length];
        bm.readBytes(got);
        eq(got, payload, what + ": body");
        eq(m.getJMSDestination(), dest, what + ": JMSDestination");
        eq(m.getJMSDeliveryMode(), qos > 0 ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT, what + ": JMSDeliveryMode");
        eq(m.getObjectProperty(MQTT_QOS), qos, what + ": int property " + MQTT_QOS);
        eq(m.getJMSPriority(), 4, what + ": JMSPriority");
        eq(m.propertyExists(RETAIN), false, what + ": " + RETAIN + " on a PUBLISH without RETAIN");
        check(m.getJMSMessageID() != null && m.getJMSMessageID().startsWith("ID:"), what + ": JMSMessageID " + m.getJMSMessageID());
        eq(m.getJMSExpiration(), 0L, what + ": JMSExpiration");
        eq(m.getJMSRedelivered(), false, what + ": JMSRedelivered");
        eq(m.getJMSCorrelationID(), null, what + ": JMSCorrelationID");
        eq(m.getJMSReplyTo(), null, what + ": JMSReplyTo");
        eq(m.getJMSType(), null, what + ": JMSType");
        long now = System.currentTimeMillis();
        check(m.getJMSTimestamp() > now - 60_000 && m.getJMSTimestamp() <= now + 1000, what + ": JMSTimestamp " + m.getJMSTimestamp() + " is not about now (" + now + ")");
        Set<String> names = new TreeSet<>();
        for (Enumeration<?> e = m.getPropertyNames(); e.hasMoreElements();) {
            names.add((String) e.nextElement());
        }
        names.remove(RETAINED); // the retained copy's marker, checked by the caller
        eq(names, new TreeSet<>(Arrays.asList(MQTT_QOS)), what + ": property names");
    }

    static void mixedMQTTToJMS(Ctx c) throws Exception {
        try (Mqtt mq = mqtt(c, "-pub")) {
            Session s = c.session(c.conn());
            Topic t = c.topic(s, ".sensor.x");
            MessageConsumer exact = s.createConsumer(t);
            MessageConsumer wild = s.createConsumer(c.topic(s, ".sensor.*"));
            // Not UTF-8 (0xff, a lone 0xc3) and with NULs: a payload is bytes.
            byte[] p1 = {0, 1, 2, 0, (byte) 0xff, (byte) 0xc3, 'x'};
            byte[] p0 = ("QoS 0 " + BMP).getBytes(StandardCharsets.UTF_8);
            String topic = c.base + "/sensor/x";
            c.step("MQTT PUBLISH QoS 1 to " + topic);
            mq.publish(topic, 1, false, p1);
            c.step("MQTT PUBLISH QoS 0 to " + topic);
            mq.publish(topic, 0, false, p0);
            checkFromMQTT(c.recv(exact, "QoS 1 PUBLISH"), p1, 1, t, "QoS 1 PUBLISH, consumer on " + t.getTopicName());
            checkFromMQTT(c.recv(exact, "QoS 0 PUBLISH"), p0, 0, t, "QoS 0 PUBLISH, consumer on " + t.getTopicName());
            checkFromMQTT(c.recv(wild, "QoS 1 PUBLISH, wildcard"), p1, 1, t, "QoS 1 PUBLISH, consumer on " + c.base + ".sensor.*");
            checkFromMQTT(c.recv(wild, "QoS 0 PUBLISH, wildcard"), p0, 0, t, "QoS 0 PUBLISH, consumer on " + c.base + ".sensor.*");
        }
    }

    /**
     * activeMQMapPayload is what ActiveMQ 5.17 publishes to MQTT for a sent
     * MapMessage: MQTTProtocolConverter.convertMessage renders
     * getContentMap().toString(), the map the broker unmarshals from the
     * body (MarshallingSupport.unmarshalPrimitiveMap: a new HashMap(size)
     * filled in the order the client marshalled its own HashMap), as UTF-8.
     * The sent message holds that body once send returned.
     */
    static Map<String, Object> activeMQMapPayload(MapMessage sent) throws Exception {
        org.apache.activemq.util.ByteSequence body = ((org.apache.activemq.command.ActiveMQMapMessage) sent).getContent();
        check(body != null && !((ActiveMQMessage) sent).isCompressed(), "sent MapMessage: no uncompressed body");
        return org.apache.activemq.util.MarshallingSupport.unmarshalPrimitiveMap(
                new java.io.DataInputStream(new java.io.ByteArrayInputStream(body.data, body.offset, body.length)));
    }

    /** mapEntries splits a Map.toString rendering ("{k=v, k=v}") into its sorted entries. */
    static List<String> mapEntries(String rendered) {
        check(rendered.startsWith("{") && rendered.endsWith("}"), "map rendering " + Conformance.show(rendered) + " is not {...}");
        List<String> out = new ArrayList<>(Arrays.asList(rendered.substring(1, rendered.length() - 1).split(", ")));
        Collections.sort(out);
        return out;
    }

    static void mixedJMSToMQTT(Ctx c) throws Exception {
        try (Mqtt sub = mqtt(c, "-sub"); Mqtt sub0 = mqtt(c, "-sub0")) {
            String filter = c.base + "/out/+";
            String topic = c.base + "/out/a";
            c.step("MQTT SUBSCRIBE " + filter);
            eq(sub.subscribe(filter, 1), 1, "SUBACK for " + filter + " at QoS 1");
            eq(sub0.subscribe(topic, 0), 0, "SUBACK for " + topic + " at QoS 0");
            Session s = c.session(c.conn());
            Topic t = c.topic(s, ".out.a");
            MessageProducer p = s.createProducer(t);

            List<String> what = new ArrayList<>();
            List<byte[]> payloads = new ArrayList<>();
            List<Integer> qos = new ArrayList<>(); // granted QoS 1 (sub)

            // DEVIATION: with no ActiveMQ.MQTT.QoS property ActiveMQ 5.17
            // picks "persistent ? AT_MOST_ONCE : AT_LEAST_ONCE"
            // (MQTTProtocolConverter.convertMessage), then caps it by the
            // subscription's QoS: persistent JMS messages reach a QoS 1
            // subscriber at QoS 0 and non-persistent ones at QoS 1. Wharf
            // maps persistent to 1 and non-persistent to 0, as the inbound
            // side does (protocols/mqtt/subscribe.go messageQoS).
            int persistentQoS = c.activemq ? 0 : 1;
            int nonPersistentQoS = c.activemq ? 1 : 0;

            p.send(s.createTextMessage(BMP), DeliveryMode.PERSISTENT, 4, 0);
            what.add("persistent TextMessage");
            payloads.add(BMP.getBytes(StandardCharsets.UTF_8));
            qos.add(persistentQoS);

            // U+0000 and characters outside the BMP: UTF-8 on MQTT (ActiveMQ
            // decodes the text and encodes it with getBytes("UTF-8")).
            p.send(s.createTextMessage(UNICODE), DeliveryMode.NON_PERSISTENT, 4, 0);
            what.add("non-persistent TextMessage outside the BMP");
            payloads.add(UNICODE.getBytes(StandardCharsets.UTF_8));
            qos.add(nonPersistentQoS);

            BytesMessage bm = s.createBytesMessage();
            byte[] raw = {0, 1, 2, 0, (byte) 0xff, (byte) 0xc3};
            bm.writeBytes(raw);
            p.send(bm, DeliveryMode.PERSISTENT, 4, 0);
            what.add("persistent BytesMessage");
            payloads.add(raw);
            qos.add(persistentQoS);

            MapMessage mm = s.createMapMessage();
            mm.setString("name", BMP);
            mm.setInt("count", 42);
            mm.setBoolean("ok", true);
            mm.setDouble("ratio", 1.5);
            mm.setLong("big", 10000000000L);
            mm.setDouble("tiny", 1.0E-5);
            p.send(mm, DeliveryMode.NON_PERSISTENT, 4, 0);
            what.add("non-persistent MapMessage");
            String mapText = activeMQMapPayload(mm).toString();
            payloads.add(mapText.getBytes(StandardCharsets.UTF_8));
            qos.add(nonPersistentQoS);
            int mapIndex = what.size() - 1;

            // ActiveMQ.MQTT.QoS, when present, wins over the delivery mode
            // on both brokers (still capped by the subscription).
            TextMessage q1 = s.createTextMessage("persistent with " + MQTT_QOS + "=1");
            q1.setIntProperty(MQTT_QOS, 1);
            p.send(q1, DeliveryMode.PERSISTENT, 4, 0);
            what.add("persistent TextMessage with " + MQTT_QOS + "=1");
            payloads.add(q1.getText().getBytes(StandardCharsets.UTF_8));
            qos.add(1);

            TextMessage q0 = s.createTextMessage("non-persistent with " + MQTT_QOS + "=0");
            q0.setIntProperty(MQTT_QOS, 0);
            p.send(q0, DeliveryMode.NON_PERSISTENT, 4, 0);
            what.add("non-persistent TextMessage with " + MQTT_QOS + "=0");
            payloads.add(q0.getText().getBytes(StandardCharsets.UTF_8));
            qos.add(0);

            // A string property (what a STOMP header becomes) converts as
            // getIntProperty converts it. Persistent for ActiveMQ and
            // non-persistent for Wharf make the property the only way to
            // QoS 1.
            for (int mode : new int[] {DeliveryMode.PERSISTENT, DeliveryMode.NON_PERSISTENT}) {
                String kind = mode == DeliveryMode.PERSISTENT ? "persistent" : "non-persistent";
                TextMessage qs = s.createTextMessage(kind + " with " + MQTT_QOS + "=\"1\"");
                qs.setStringProperty(MQTT_QOS, "1");
                p.send(qs, mode, 4, 0);
                what.add(kind + " TextMessage with string property " + MQTT_QOS + "=\"1\"");
                payloads.add(qs.getText().getBytes(StandardCharsets.UTF_8));
                qos.add(1);
            }

            for (int i = 0; i < what.size(); i++) {
                for (Mqtt m : new Mqtt[] {sub, sub0}) {
                    boolean q1sub = m == sub;
                    String w = what.get(i) + " to the " + (q1sub ? "QoS 1 subscriber on " + filter : "QoS 0 subscriber on " + topic);
                    c.step("MQTT read: " + w);
                    Mqtt.Publish pub = m.read();
                    eq(pub.topic, topic, w + ": PUBLISH topic");
                    if (i == mapIndex && !c.activemq) {
                        // KNOWN DIFFERENCE (conformance/README.md, JMS
                        // difference 3): Wharf renders the map in
                        // java.util.HashMap bucket order as ActiveMQ does,
                        // but entries sharing a bucket come in key order,
                        // not the sender's put order: its OpenWire decoder
                        // does not keep a map body's wire order.
                        eq(mapEntries(pub.text()), mapEntries(mapText), w + ": map entries (Wharf rendered " + pub.text() + ", ActiveMQ " + mapText + ")");
                    } else if (!Arrays.equals(pub.payload, payloads.get(i))) {
                        throw new AssertionError(w + ": payload " + Conformance.show(pub.payload) + " (as UTF-8 " + Conformance.show(pub.text())
                                + "), want " + Conformance.show(payloads.get(i)) + " (" + Conformance.show(new String(payloads.get(i), StandardCharsets.UTF_8)) + ")");
                    }
                    eq(pub.qos, q1sub ? qos.get(i) : 0, w + ": PUBLISH QoS");
                    eq(pub.retain, false, w + ": RETAIN");
                    eq(pub.dup, false, w + ": DUP");
                }
            }
        }
    }

    static void mixedMQTTRetainedToJMS(Ctx c) throws Exception {
        try (Mqtt mq = mqtt(c, "-pub")) {
            Session s = c.session(c.conn());
            Topic t = c.topic(s, ".state");
            String topic = c.base + "/state";
            MessageConsumer live = s.createConsumer(t);
            byte[] payload = ("retained " + BMP).getBytes(StandardCharsets.UTF_8);
            c.step("MQTT PUBLISH QoS 1 RETAIN to " + topic);
            mq.publish(topic, 1, true, payload);

            // The live copy: the broker strips ActiveMQ.Retain
            // (RetainedMessageSubscriptionRecoveryPolicy.add) and adds
            // nothing.
            Message lm = c.recv(live, "retained PUBLISH, live subscriber");
            checkFromMQTT(lm, payload, 1, t, "retained PUBLISH, live subscriber");
            eq(lm.propertyExists(RETAINED), false, "retained PUBLISH, live subscriber: " + RETAINED);

            // A retroactive subscription gets the retained copy, marked.
            Topic retro = s.createTopic(t.getTopicName() + "?consumer.retroactive=true");
            MessageConsumer rc = s.createConsumer(retro);
            Message rm = c.recv(rc, "retained message, retroactive consumer");
            checkFromMQTT(rm, payload, 1, t, "retained message, retroactive consumer");
            eq(rm.getObjectProperty(RETAINED), Boolean.TRUE, "retroactive consumer: boolean property " + RETAINED);

            // A plain subscription gets no retained copy: the marker comes first.
            MessageConsumer plain = s.createConsumer(t);
            c.nextIsMarker(s, t, plain, "non-retroactive consumer after a retained PUBLISH");
            c.recvText(rc, "marker-1", "retroactive consumer after its retained message");
            c.recvText(live, "marker-1", "live subscriber after the retained message");

            // An empty retained PUBLISH clears it.
            c.step("MQTT PUBLISH QoS 1 RETAIN empty to " + topic);
            mq.publish(topic, 1, true, new byte[0]);
            checkFromMQTT(c.recv(live, "empty retained PUBLISH, live subscriber"), new byte[0], 1, t, "empty retained PUBLISH, live subscriber");
            MessageConsumer retro2 = s.createConsumer(retro);
            c.nextIsMarker(s, t, retro2, "retroactive consumer after the retained message was cleared");
        }
    }
}
