// Interop builds KahaDB journal commands with ActiveMQ 5.17's generated
// protobuf classes, the way KahaDBStore / MessageDatabase set their fields,
// and checks Go-encoded payloads against them. Used by TestKahaDBCommandInterop.
//
// Usage: java Interop <go-encodings-file>
// Input lines:  <case-name> <hex of Go Encode payload>
// Output lines: <case-name> <hex of Java payload> <verdict>
//   Java payload = type byte + writeFramed, as MessageDatabase.toByteSequence.
//   verdict = OK when Java parses the Go payload with mergeFramed into an
//   object equal to (and printing the same as) its own, missing the same
//   required fields (none, except the sync-marker Trace); otherwise
//   MISMATCH:... with both toString forms.
import java.io.BufferedReader;
import java.io.FileReader;
import java.io.IOException;

import org.apache.activemq.protobuf.Buffer;
import org.apache.activemq.store.kahadb.JournalCommand;
import org.apache.activemq.store.kahadb.data.*;
import org.apache.activemq.store.kahadb.disk.util.DataByteArrayOutputStream;
import org.apache.activemq.util.ByteSequence;

public class Interop {
    static byte[] bytes(int... v) {
        byte[] b = new byte[v.length];
        for (int i = 0; i < v.length; i++) b[i] = (byte) v[i];
        return b;
    }

    static byte[] seq(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) b[i] = (byte) i;
        return b;
    }

    static KahaDestination dest(KahaDestination.DestinationType t, String name) {
        KahaDestination d = new KahaDestination();
        d.setType(t);
        d.setName(name);
        return d;
    }

    static KahaTransactionInfo local(String conn, long id) {
        KahaLocalTransactionId l = new KahaLocalTransactionId();
        l.setConnectionId(conn);
        l.setTransactionId(id);
        KahaTransactionInfo t = new KahaTransactionInfo();
        t.setLocalTransactionId(l);
        return t;
    }

    static KahaTransactionInfo xa(int format, byte[] bq, byte[] gtid) {
        KahaXATransactionId x = new KahaXATransactionId();
        x.setBranchQualifier(new Buffer(bq));
        x.setGlobalTransactionId(new Buffer(gtid));
        x.setFormatId(format);
        KahaTransactionInfo t = new KahaTransactionInfo();
        t.setXaTransactionId(x);
        return t;
    }

    static final byte[] SUB_INFO = bytes(
        0x00, 0x00, 0x00, 0x27, 0x37, 0x01, 0x00, 0x04, 'c', 'i', 'd', '1',
        0x01, 0x65, 0x01, 0x00, 0x06, 'T', 'E', 'S', 'T', '.', 'T', 0x00,
        0x01, 0x00, 0x04, 's', 'u', 'b', '1',
        0x01, 0x65, 0x01, 0x00, 0x06, 'T', 'E', 'S', 'T', '.', 'T', 0x00);

    // KahaDBStore.addMessage / updateMessage field sequence.
    static KahaAddMessageCommand add(KahaDestination d, String id, KahaTransactionInfo tx,
                                     int prio, boolean prioSupported, byte[] msg) {
        KahaAddMessageCommand c = new KahaAddMessageCommand();
        c.setDestination(d);
        c.setMessageId(id);
        c.setTransactionInfo(tx);
        c.setPriority(prio);
        c.setPrioritySupported(prioSupported);
        c.setMessage(new Buffer(msg));
        return c;
    }

    // KahaDBStore.removeMessage (queue) / doAcknowledge (topic) sequence.
    static KahaRemoveMessageCommand remove(KahaDestination d, String subKey, String id,
                                           KahaTransactionInfo tx, byte[] ack) {
        KahaRemoveMessageCommand c = new KahaRemoveMessageCommand();
        c.setDestination(d);
        if (subKey != null) c.setSubscriptionKey(subKey);
        c.setMessageId(id);
        c.setTransactionInfo(tx);
        if (ack != null) c.setAck(new Buffer(ack));
        return c;
    }

    static JournalCommand<?> build(String name) {
        KahaDestination.DestinationType Q = KahaDestination.DestinationType.QUEUE;
        KahaDestination.DestinationType T = KahaDestination.DestinationType.TOPIC;
        KahaDestination.DestinationType TQ = KahaDestination.DestinationType.TEMP_QUEUE;
        KahaDestination.DestinationType TT = KahaDestination.DestinationType.TEMP_TOPIC;
        String mid = "ID:host-43033-1795954969663-2:1:1:1:3";
        String conn = "ID:host-43033-1795954969663-2:1";
        switch (name) {
        case "trace-loaded":
            return new KahaTraceCommand().setMessage("LOADED Sun Nov 29 12:22:49 UTC 2026");
        case "trace-sync":
            return new KahaTraceCommand();
        case "add-queue":
            return add(dest(Q, "TEST.Q"), mid, null, 4, false, seq(10));
        case "add-topic-local-tx":
            return add(dest(T, "TEST.T"), mid, local(conn, 7), 9, true, "hello".getBytes());
        case "add-temp-queue-xa-negative-priority":
            return add(dest(TQ, "ID:tmp-1"), mid, xa(0x1234, bytes(1, 2), bytes(3, 4, 5)), -1, false, new byte[0]);
        case "add-temp-topic-large":
            return add(dest(TT, "ID:tmp-2"), mid, null, 0, false, seq(300));
        case "add-unicode":
            return add(dest(Q, "Q.\u00e9\u4e2d\ud83d\ude00"), "id-\u00fc", null, 4, false, seq(3));
        case "remove-queue-ack":
            return remove(dest(Q, "TEST.Q"), null, mid, null, bytes(0, 0, 0, 2, 22, 0));
        case "remove-topic-unmatched":
            return remove(dest(T, "TEST.T"), "cid1:sub1", mid, null, new byte[0]);
        case "remove-topic-tx":
            return remove(dest(T, "TEST.T"), "cid1:sub1", mid, local(conn, 8), bytes(9, 9));
        case "remove-no-ack":
            return remove(dest(Q, "TEST.Q"), null, mid, null, null);
        case "prepare-xa":
            return new KahaPrepareCommand().setTransactionInfo(xa(131077, bytes(0xb1), bytes(0xc1, 0xc2)));
        case "commit-local":
            return new KahaCommitCommand().setTransactionInfo(local("ID:vm-43033-1795954969663-2:1", 1));
        case "commit-xa":
            return new KahaCommitCommand().setTransactionInfo(xa(-1, new byte[0], seq(64)));
        case "commit-local-previous-entry": {
            KahaTransactionInfo t = local(conn, -1);
            KahaLocation l = new KahaLocation();
            l.setLogId(2);
            l.setOffset(1234);
            t.setPreviousEntry(l);
            return new KahaCommitCommand().setTransactionInfo(t);
        }
        case "rollback-local":
            return new KahaRollbackCommand().setTransactionInfo(local(conn, Long.MAX_VALUE));
        case "remove-destination":
            return new KahaRemoveDestinationCommand().setDestination(dest(T, "TEST.T"));
        case "subscription-add": {
            KahaSubscriptionCommand c = new KahaSubscriptionCommand();
            c.setDestination(dest(T, "TEST.T"));
            c.setSubscriptionKey("cid1:sub1");
            c.setRetroactive(false);
            c.setSubscriptionInfo(new Buffer(SUB_INFO));
            return c;
        }
        case "subscription-add-retroactive": {
            KahaSubscriptionCommand c = new KahaSubscriptionCommand();
            c.setDestination(dest(T, "TEST.T"));
            c.setSubscriptionKey("cid1:sub2");
            c.setRetroactive(true);
            c.setSubscriptionInfo(new Buffer(SUB_INFO));
            return c;
        }
        case "subscription-delete": {
            KahaSubscriptionCommand c = new KahaSubscriptionCommand();
            c.setDestination(dest(T, "TEST.T"));
            c.setSubscriptionKey("cid1:sub1");
            return c;
        }
        case "producer-audit":
            return new KahaProducerAuditCommand().setAudit(new Buffer(bytes(0xac, 0xed, 0x00, 0x05)));
        case "ack-message-file-map":
            return new KahaAckMessageFileMapCommand().setAckMessageFileMap(new Buffer(seq(200)));
        case "update-message":
            return new KahaUpdateMessageCommand().setMessage(add(dest(Q, "TEST.Q"), mid, null, 5, true, seq(4)));
        case "add-scheduled-job": {
            KahaAddScheduledJobCommand c = new KahaAddScheduledJobCommand();
            c.setScheduler("JMS");
            c.setJobId("ID:job-1");
            c.setStartTime(1795954969663L);
            c.setCronEntry("* * * * *");
            c.setDelay(1000);
            c.setPeriod(0);
            c.setRepeat(-1);
            c.setNextExecutionTime(1795954970663L);
            c.setPayload(new Buffer(seq(5)));
            return c;
        }
        case "reschedule-job": {
            KahaRescheduleJobCommand c = new KahaRescheduleJobCommand();
            c.setScheduler("JMS");
            c.setJobId("ID:job-1");
            c.setExecutionTime(1795954970663L);
            c.setNextExecutionTime(1795954971663L);
            c.setRescheduledCount(2);
            return c;
        }
        case "remove-scheduled-job": {
            KahaRemoveScheduledJobCommand c = new KahaRemoveScheduledJobCommand();
            c.setScheduler("JMS");
            c.setJobId("ID:job-1");
            c.setNextExecutionTime(1795954971663L);
            return c;
        }
        case "remove-scheduled-jobs": {
            KahaRemoveScheduledJobsCommand c = new KahaRemoveScheduledJobsCommand();
            c.setScheduler("JMS");
            c.setStartTime(0);
            c.setEndTime(Long.MIN_VALUE);
            return c;
        }
        case "destroy-scheduler":
            return new KahaDestroySchedulerCommand().setScheduler("JMS");
        case "rewritten-data-file": {
            // MessageDatabase.AckCompactionRunner: source and type only.
            KahaRewrittenDataFileCommand c = new KahaRewrittenDataFileCommand();
            c.setSourceDataFileId(3);
            c.setRewriteType(1);
            return c;
        }
        case "rewritten-data-file-no-skip": {
            KahaRewrittenDataFileCommand c = new KahaRewrittenDataFileCommand();
            c.setSourceDataFileId(3);
            c.setRewriteType(1);
            c.setSkipIfSourceExists(false);
            return c;
        }
        }
        throw new IllegalArgumentException("unknown case " + name);
    }

    // Same steps as MessageDatabase.toByteSequence.
    static byte[] toByteSequence(JournalCommand<?> data) throws IOException {
        int size = data.serializedSizeFramed();
        DataByteArrayOutputStream os = new DataByteArrayOutputStream(size + 1);
        os.writeByte(data.type().getNumber());
        data.writeFramed(os);
        ByteSequence s = os.toByteSequence();
        byte[] b = new byte[s.getLength()];
        System.arraycopy(s.getData(), s.getOffset(), b, 0, b.length);
        return b;
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x & 0xff));
        return sb.toString();
    }

    static byte[] unhex(String s) {
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return b;
    }

    // Same steps as MessageDatabase.load after the journal read.
    static JournalCommand<?> load(byte[] payload) throws IOException {
        KahaEntryType type = KahaEntryType.valueOf(payload[0]);
        if (type == null) throw new IOException("null type information from: " + payload[0]);
        JournalCommand<?> m = (JournalCommand<?>) type.createMessage();
        byte[] framed = new byte[payload.length - 1];
        System.arraycopy(payload, 1, framed, 0, framed.length);
        m.mergeFramed(framed);
        return m;
    }

    static java.util.List<String> missing(JournalCommand<?> m) {
        return ((org.apache.activemq.protobuf.BaseMessage<?>) m).missingFields();
    }

    public static void main(String[] args) throws Exception {
        try (BufferedReader r = new BufferedReader(new FileReader(args[0]))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.isEmpty()) continue;
                String[] p = line.split(" ");
                JournalCommand<?> want = build(p[0]);
                byte[] javaBytes = toByteSequence(want);
                String verdict;
                try {
                    JournalCommand<?> got = load(unhex(p.length > 1 ? p[1] : ""));
                    String ws = want.toString().replace('\n', '|');
                    String gs = got.toString().replace('\n', '|');
                    if (got.type() != want.type()) {
                        verdict = "MISMATCH:type:" + got.type();
                    } else if (!missing(got).equals(missing(want))) {
                        // Only the sync-marker Trace lacks a required field, in ActiveMQ too.
                        verdict = "MISMATCH:missing:" + missing(got);
                    } else if (!got.equals(want) || !gs.equals(ws)) {
                        verdict = "MISMATCH:want[" + ws + "]got[" + gs + "]";
                    } else if (got.serializedSizeFramed() != javaBytes.length - 1) {
                        verdict = "MISMATCH:size";
                    } else {
                        verdict = "OK";
                    }
                } catch (Exception e) {
                    verdict = "MISMATCH:exception:" + e;
                }
                System.out.println(p[0] + " " + hex(javaBytes) + " " + verdict.replace(' ', '_'));
            }
        }
    }
}
