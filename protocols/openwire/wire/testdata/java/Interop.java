// Interop drives org.apache.activemq.openwire.OpenWireFormat for the Go
// codec's interop tests (interop_test.go).
//
//   java Interop gen <dir>
//       marshals the same command list (Interop.commands) for versions
//       10, 11, 12, tight/loose and cache on/off, one OpenWireFormat per
//       stream, into <dir>/v<N>-<tight|loose>-<cache|nocache>.bin
//   java Interop check <file> <version> <tight> <cache>
//       unmarshals every frame of a Go-written stream, re-marshals it with
//       a fresh OpenWireFormat of the same settings and requires identical
//       bytes; prints one line per message body and "OK <n>".
import java.io.*;
import java.nio.file.*;
import java.util.*;
import javax.jms.*;
import org.apache.activemq.command.*;
import org.apache.activemq.openwire.OpenWireFormat;
import org.apache.activemq.util.ByteSequence;

public class Interop {
    static final String EMOJI_TEXT = "h\u00e9llo \u4e16\u754c \ud83d\ude00 nul[\u0000]";

    static OpenWireFormat format(int version, boolean tight, boolean cache) {
        OpenWireFormat wf = new OpenWireFormat(version);
        wf.setTightEncodingEnabled(tight);
        wf.setCacheEnabled(cache);
        wf.setStackTraceEnabled(true);
        wf.setSizePrefixDisabled(false);
        return wf;
    }

    static Throwable exception() {
        Exception cause = new java.lang.IllegalStateException("inner \u00fc");
        cause.setStackTrace(new StackTraceElement[] {
            new StackTraceElement("org.example.Inner", "run", "Inner.java", 7),
            new StackTraceElement("org.example.Native", "call", null, -2),
        });
        JMSException e = new InvalidDestinationException("no such destination: queue://x");
        e.initCause(cause);
        e.setStackTrace(new StackTraceElement[] {
            new StackTraceElement("org.apache.activemq.broker.Region", "lookup", "Region.java", 123),
        });
        return e;
    }

    static List<DataStructure> commands(int version) throws Exception {
        List<DataStructure> l = new ArrayList<>();
        ConnectionId conn = new ConnectionId("ID:host-1234-1700000000000-1:1");
        SessionId sess = new SessionId(conn, 1);
        ConsumerId cons = new ConsumerId(sess, 1);
        ProducerId prod = new ProducerId(sess, 1);
        ActiveMQQueue queue = new ActiveMQQueue("orders.in");
        ActiveMQTopic topic = new ActiveMQTopic("ActiveMQ.Advisory.TempQueue,ActiveMQ.Advisory.TempTopic");
        BrokerId broker = new BrokerId("ID:broker-1-1700000000000-0:1");
        LocalTransactionId ltx = new LocalTransactionId(conn, 5);
        XATransactionId xtx = new XATransactionId();
        xtx.setFormatId(0x1234);
        xtx.setGlobalTransactionId(new byte[] {1, 2, 3, 4});
        xtx.setBranchQualifier(new byte[] {9, 8});

        WireFormatInfo wfi = new WireFormatInfo();
        wfi.setVersion(version);
        wfi.setStackTraceEnabled(true);
        wfi.setCacheEnabled(true);
        wfi.setCacheSize(1024);
        wfi.setTightEncodingEnabled(true);
        wfi.setSizePrefixDisabled(false);
        wfi.setMaxInactivityDuration(30000);
        wfi.setMaxInactivityDurationInitalDelay(10000);
        wfi.setMaxFrameSize(104857600L);
        l.add(wfi);

        BrokerInfo bi = new BrokerInfo();
        bi.setBrokerId(broker);
        bi.setBrokerURL("tcp://localhost:61616");
        bi.setBrokerName("localhost");
        bi.setConnectionId(7);
        bi.setNetworkProperties("a=b");
        BrokerInfo peer = new BrokerInfo();
        peer.setBrokerId(new BrokerId("ID:peer"));
        peer.setBrokerName("peer");
        bi.setPeerBrokerInfos(new BrokerInfo[] {peer});
        l.add(bi);

        ConnectionInfo ci = new ConnectionInfo(conn);
        ci.setCommandId(1);
        ci.setResponseRequired(true);
        ci.setClientId("client-\u00e9");
        ci.setUserName("system");
        ci.setPassword("manager");
        ci.setManageable(true);
        ci.setClientMaster(true);
        ci.setFaultTolerant(false);
        ci.setClientIp("tcp://127.0.0.1:5000");
        l.add(ci);

        SessionInfo si = new SessionInfo(sess);
        si.setCommandId(2);
        l.add(si);

        ConsumerInfo adv = new ConsumerInfo(new ConsumerId(new SessionId(conn, -1), 1));
        adv.setDestination(topic);
        adv.setPrefetchSize(1000);
        adv.setNoLocal(true);
        adv.setCommandId(3);
        adv.setResponseRequired(true);
        l.add(adv);

        ConsumerInfo cinfo = new ConsumerInfo(cons);
        cinfo.setDestination(queue);
        cinfo.setPrefetchSize(100);
        cinfo.setSelector("color = 'red' AND weight > 5");
        cinfo.setClientId("client-\u00e9");
        cinfo.setSubscriptionName("durable-1");
        cinfo.setPriority((byte) -5);
        cinfo.setExclusive(true);
        cinfo.setBrokerPath(new BrokerId[] {broker});
        NetworkBridgeFilter nbf = new NetworkBridgeFilter();
        nbf.setNetworkBrokerId(broker);
        nbf.setMessageTTL(3);
        nbf.setConsumerTTL(2);
        nbf.setNetworkTTL(3);
        cinfo.setAdditionalPredicate(nbf);
        cinfo.setNetworkConsumerPath(new ConsumerId[] {new ConsumerId(sess, 99)});
        cinfo.setCommandId(4);
        cinfo.setResponseRequired(true);
        l.add(cinfo);

        ProducerInfo pi = new ProducerInfo(prod);
        pi.setDestination(queue);
        pi.setWindowSize(65536);
        pi.setDispatchAsync(true);
        pi.setCommandId(5);
        l.add(pi);

        l.add(new TransactionInfo(conn, ltx, TransactionInfo.BEGIN));
        l.add(new TransactionInfo(conn, xtx, TransactionInfo.PREPARE));

        DestinationInfo di = new DestinationInfo(conn, DestinationInfo.ADD_OPERATION_TYPE,
                new ActiveMQTempQueue("ID:host-1234-1700000000000-1:1:1"));
        di.setTimeout(70000);
        l.add(di);

        RemoveSubscriptionInfo rsi = new RemoveSubscriptionInfo();
        rsi.setConnectionId(conn);
        rsi.setSubcriptionName("durable-1");
        rsi.setClientId("client-\u00e9");
        l.add(rsi);

        l.add(new KeepAliveInfo());
        l.add(new ShutdownInfo());
        l.add(new FlushCommand());
        RemoveInfo ri = new RemoveInfo(cons);
        ri.setLastDeliveredSequenceId(-1);
        l.add(ri);
        l.add(null);
        l.add(new RemoveInfo(sess));
        ControlCommand cc = new ControlCommand();
        cc.setCommand("shutdown");
        l.add(cc);

        ConnectionError ce = new ConnectionError();
        ce.setException(new IOException("connection reset"));
        ce.getException().setStackTrace(new StackTraceElement[0]);
        ce.setConnectionId(conn);
        l.add(ce);

        ConsumerControl cctl = new ConsumerControl();
        cctl.setConsumerId(cons);
        cctl.setDestination(queue);
        cctl.setPrefetch(0);
        cctl.setStop(true);
        l.add(cctl);

        ConnectionControl conctl = new ConnectionControl();
        conctl.setFaultTolerant(true);
        conctl.setConnectedBrokers("tcp://a:1,tcp://b:2");
        conctl.setReconnectTo("tcp://b:2");
        conctl.setToken(new byte[] {0x0a, 0x0b});
        l.add(conctl);

        l.add(new ProducerAck(prod, 1234));

        MessagePull mp = new MessagePull();
        mp.setConsumerId(cons);
        mp.setDestination(queue);
        mp.setTimeout(-1);
        mp.setCorrelationId("corr-1");
        mp.setMessageId(new MessageId(prod, 3));
        l.add(mp);

        ActiveMQTextMessage text = new ActiveMQTextMessage();
        text.setProducerId(prod);
        text.setDestination(queue);
        text.setMessageId(new MessageId(prod, 1));
        text.setPersistent(true);
        text.setPriority((byte) 4);
        text.setTimestamp(1700000000123L);
        text.setExpiration(0);
        text.setCorrelationId("corr-\ud83d\ude00");
        text.setType("greeting");
        text.setGroupID("group-a");
        text.setGroupSequence(1);
        text.setReplyTo(new ActiveMQTempQueue("ID:host-1234-1700000000000-1:1:1"));
        text.setText(EMOJI_TEXT);
        text.setBooleanProperty("bool", true);
        text.setByteProperty("byte", (byte) -1);
        text.setShortProperty("short", (short) -300);
        text.setIntProperty("int", 123456);
        text.setLongProperty("long", -9000000000L);
        text.setFloatProperty("float", 1.5f);
        text.setDoubleProperty("double", -2.25);
        text.setStringProperty("string", "v\u00e4lue \ud83d\ude00");
        text.setCommandId(6);
        text.setResponseRequired(true);
        l.add(text);

        ActiveMQBytesMessage bytes = new ActiveMQBytesMessage();
        bytes.setProducerId(prod);
        bytes.setDestination(queue);
        bytes.setMessageId(new MessageId(prod, 2));
        bytes.setTransactionId(ltx);
        bytes.writeBytes(new byte[] {0, 1, 2, (byte) 0xff});
        bytes.storeContent();
        l.add(bytes);

        ActiveMQMapMessage map = new ActiveMQMapMessage();
        map.setProducerId(prod);
        map.setDestination(queue);
        map.setMessageId(new MessageId(prod, 3));
        map.setString("name", "\u4e16\u754c");
        map.setInt("count", 3);
        map.setChar("ch", 'Z');
        map.setBytes("raw", new byte[] {5, 6});
        map.setObject("nil", null);
        map.storeContent();
        l.add(map);

        ActiveMQStreamMessage stream = new ActiveMQStreamMessage();
        stream.setProducerId(prod);
        stream.setDestination(queue);
        stream.setMessageId(new MessageId(prod, 4));
        stream.writeString("first");
        stream.writeInt(42);
        stream.writeBoolean(false);
        stream.writeDouble(3.5);
        stream.writeBytes(new byte[] {7});
        stream.storeContent();
        l.add(stream);

        ActiveMQObjectMessage obj = new ActiveMQObjectMessage();
        obj.setProducerId(prod);
        obj.setDestination(queue);
        obj.setMessageId(new MessageId(prod, 5));
        obj.setObject("serialized");
        obj.storeContent();
        l.add(obj);

        ActiveMQTextMessage ztext = new ActiveMQTextMessage();
        ztext.setProducerId(prod);
        ztext.setDestination(queue);
        ztext.setMessageId(new MessageId(prod, 6));
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 200; i++) {
            sb.append("compress me ").append(i).append(' ');
        }
        ztext.setText(sb.toString());
        ztext.compress();
        l.add(ztext);

        ActiveMQBytesMessage zbytes = new ActiveMQBytesMessage();
        zbytes.setProducerId(prod);
        zbytes.setDestination(queue);
        zbytes.setMessageId(new MessageId(prod, 7));
        zbytes.writeBytes(sb.toString().getBytes("UTF-8"));
        zbytes.storeContent();
        zbytes.compress();
        l.add(zbytes);

        ActiveMQMessage plain = new ActiveMQMessage();
        plain.setProducerId(prod);
        plain.setDestination(topic);
        MessageId tv = new MessageId(prod, 8);
        tv.setTextView("ID:custom-text-view");
        plain.setMessageId(tv);
        StringBuilder big = new StringBuilder();
        for (int i = 0; i < 9000; i++) {
            big.append((char) ('a' + i % 26));
        }
        plain.setStringProperty("big", big.toString());
        plain.setDataStructure(cinfo);
        plain.setTargetConsumerId(cons);
        plain.setBrokerPath(new BrokerId[] {broker, new BrokerId("ID:other")});
        plain.setCluster(new BrokerId[0]);
        plain.setBrokerInTime(1700000000200L);
        plain.setBrokerOutTime(1700000000300L);
        plain.setArrival(1L << 40);
        plain.setUserID("system");
        plain.setRedeliveryCounter(2);
        plain.setOriginalDestination(queue);
        plain.setOriginalTransactionId(xtx);
        plain.setJMSXGroupFirstForConsumer(true);
        plain.setDroppable(true);
        l.add(plain);

        ActiveMQBlobMessage blob = new ActiveMQBlobMessage();
        blob.setProducerId(prod);
        blob.setDestination(queue);
        blob.setMessageId(new MessageId(prod, 9));
        blob.setRemoteBlobUrl("http://blob/1");
        blob.setMimeType("application/octet-stream");
        blob.setDeletedByBroker(true);
        l.add(blob);

        MessageDispatch md = new MessageDispatch();
        md.setConsumerId(cons);
        md.setDestination(queue);
        md.setMessage(text);
        md.setRedeliveryCounter(1);
        l.add(md);
        MessageDispatch mdEnd = new MessageDispatch();
        mdEnd.setConsumerId(cons);
        mdEnd.setDestination(queue);
        l.add(mdEnd);

        MessageAck ack = new MessageAck();
        ack.setDestination(queue);
        ack.setConsumerId(cons);
        ack.setAckType(MessageAck.STANDARD_ACK_TYPE);
        ack.setFirstMessageId(new MessageId(prod, 1));
        ack.setLastMessageId(new MessageId(prod, 3));
        ack.setMessageCount(3);
        ack.setCommandId(9);
        l.add(ack);
        MessageAck poison = new MessageAck();
        poison.setDestination(queue);
        poison.setConsumerId(cons);
        poison.setTransactionId(ltx);
        poison.setAckType(MessageAck.POISON_ACK_TYPE);
        poison.setLastMessageId(new MessageId(prod, 4));
        poison.setMessageCount(1);
        poison.setPoisonCause(exception());
        l.add(poison);

        Response r = new Response();
        r.setCorrelationId(1);
        l.add(r);
        ExceptionResponse er = new ExceptionResponse(exception());
        er.setCorrelationId(2);
        l.add(er);
        DataResponse dr = new DataResponse();
        dr.setCorrelationId(3);
        dr.setData(wfi);
        l.add(dr);
        DataArrayResponse dar = new DataArrayResponse();
        dar.setCorrelationId(4);
        dar.setData(new DataStructure[] {xtx, ltx, null});
        l.add(dar);
        IntegerResponse ir = new IntegerResponse();
        ir.setCorrelationId(5);
        ir.setResult(3);
        l.add(ir);

        DiscoveryEvent de = new DiscoveryEvent("tcp://host:61616");
        de.setBrokerName("b1");
        l.add(de);
        JournalTopicAck jta = new JournalTopicAck();
        jta.setDestination(topic);
        jta.setMessageId(new MessageId(prod, 10));
        jta.setMessageSequenceId(77);
        jta.setSubscritionName("sub");
        jta.setClientId("cid");
        jta.setTransactionId(ltx);
        l.add(jta);
        JournalQueueAck jqa = new JournalQueueAck();
        jqa.setDestination(queue);
        jqa.setMessageAck(ack);
        l.add(jqa);
        JournalTrace jt = new JournalTrace();
        jt.setMessage("trace");
        l.add(jt);
        l.add(new JournalTransaction(JournalTransaction.XA_COMMIT, xtx, true));

        SubscriptionInfo sub = new SubscriptionInfo("client-\u00e9", "durable-1");
        sub.setDestination(topic);
        sub.setSubscribedDestination(new ActiveMQTopic("news"));
        sub.setSelector("a > 1");
        sub.setNoLocal(true);
        l.add(sub);

        PartialCommand part = new PartialCommand();
        part.setCommandId(11);
        part.setData(new byte[] {1, 2, 3});
        l.add(part);
        LastPartialCommand last = new LastPartialCommand();
        last.setCommandId(12);
        last.setData(new byte[0]);
        l.add(last);
        ReplayCommand rc = new ReplayCommand();
        rc.setFirstNakNumber(3);
        rc.setLastNakNumber(9);
        l.add(rc);
        MessageDispatchNotification mdn = new MessageDispatchNotification();
        mdn.setConsumerId(cons);
        mdn.setDestination(queue);
        mdn.setDeliverySequenceId(4096);
        mdn.setMessageId(new MessageId(prod, 1));
        l.add(mdn);
        l.add(nbf);
        if (version >= 12) {
            BrokerSubscriptionInfo bsi = new BrokerSubscriptionInfo("localhost");
            bsi.setBrokerId(broker);
            bsi.setSubscriptionInfos(new ConsumerInfo[] {cinfo});
            l.add(bsi);
        }
        l.add(queue);
        l.add(new ActiveMQTempTopic("ID:tt:1"));
        l.add(new MessageId(prod, 11));
        return l;
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("gen")) {
            Path dir = Paths.get(args[1]);
            for (int v : new int[] {10, 11, 12}) {
                for (boolean tight : new boolean[] {true, false}) {
                    for (boolean cache : new boolean[] {true, false}) {
                        OpenWireFormat wf = format(v, tight, cache);
                        ByteArrayOutputStream out = new ByteArrayOutputStream();
                        DataOutputStream dout = new DataOutputStream(out);
                        for (DataStructure ds : commands(v)) {
                            wf.marshal(ds, dout);
                        }
                        dout.flush();
                        String name = "v" + v + "-" + (tight ? "tight" : "loose") + "-" + (cache ? "cache" : "nocache") + ".bin";
                        Files.write(dir.resolve(name), out.toByteArray());
                    }
                }
            }
            System.out.println("OK");
            return;
        }
        if (args[0].equals("check")) {
            byte[] data = Files.readAllBytes(Paths.get(args[1]));
            int version = Integer.parseInt(args[2]);
            boolean tight = Boolean.parseBoolean(args[3]);
            boolean cache = Boolean.parseBoolean(args[4]);
            OpenWireFormat in = format(version, tight, cache);
            OpenWireFormat out = format(version, tight, cache);
            DataInputStream din = new DataInputStream(new ByteArrayInputStream(data));
            int n = 0;
            int pos = 0;
            while (din.available() > 0) {
                int start = data.length - din.available();
                Object o = in.unmarshal((DataInput) din);
                int end = data.length - din.available();
                ByteSequence again = out.marshal(o);
                byte[] want = Arrays.copyOfRange(data, start, end);
                byte[] got = Arrays.copyOfRange(again.getData(), again.getOffset(), again.getOffset() + again.getLength());
                if (!Arrays.equals(want, got)) {
                    System.out.println("MISMATCH frame " + n + " " + (o == null ? "null" : o.getClass().getSimpleName()));
                    System.exit(1);
                }
                describe(n, o);
                n++;
            }
            System.out.println("OK " + n);
            return;
        }
        throw new IllegalArgumentException(args[0]);
    }

    static void describe(int n, Object o) throws Exception {
        if (o instanceof ActiveMQTextMessage) {
            ActiveMQTextMessage m = (ActiveMQTextMessage) o;
            System.out.println(escape(n + " TEXT " + m.getText() + " props=" + new TreeMap<>(m.getProperties())));
        } else if (o instanceof ActiveMQBytesMessage) {
            ActiveMQBytesMessage m = (ActiveMQBytesMessage) o;
            m.setReadOnlyBody(true);
            byte[] b = new byte[(int) m.getBodyLength()];
            m.readBytes(b);
            System.out.println(n + " BYTES " + Arrays.toString(b));
        } else if (o instanceof ActiveMQMapMessage) {
            ActiveMQMapMessage m = (ActiveMQMapMessage) o;
            TreeMap<String, Object> t = new TreeMap<>();
            for (Map.Entry<String, Object> e : m.getContentMap().entrySet()) {
                Object v = e.getValue();
                t.put(e.getKey(), v instanceof byte[] ? Arrays.toString((byte[]) v) : v);
            }
            System.out.println(escape(n + " MAP " + t));
        } else if (o instanceof ExceptionResponse) {
            Throwable t = ((ExceptionResponse) o).getException();
            System.out.println(escape(n + " EXCEPTION " + t.getClass().getName() + " " + t.getMessage() + " cause=" + t.getCause()));
        }
    }

    static String escape(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c < 0x20 || c > 0x7e) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
