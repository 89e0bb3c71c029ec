package wharf.conformance;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;

/**
 * Mqtt is a minimal MQTT 3.1.1 client over a raw socket, enough for the
 * mixed-protocol cases: CONNECT with a clean session, SUBSCRIBE, PUBLISH at
 * QoS 0 and 1 (waiting for the PUBACK), and reading PUBLISH packets with
 * their exact flags and payload bytes (answering PUBACK for QoS 1).
 * QoS 2 is not implemented: a QoS 2 PUBLISH from the broker fails the read.
 */
final class Mqtt implements AutoCloseable {
    // Control packet types (MQTT 3.1.1 §2.2.1).
    private static final int CONNECT = 1;
    private static final int CONNACK = 2;
    private static final int PUBLISH = 3;
    private static final int PUBACK = 4;
    private static final int SUBSCRIBE = 8;
    private static final int SUBACK = 9;
    private static final int PINGRESP = 13;
    private static final int DISCONNECT = 14;

    /** Publish is one PUBLISH packet as read from the wire. */
    static final class Publish {
        final String topic;
        final int qos;
        final boolean retain;
        final boolean dup;
        /** packetId is 0 for QoS 0. */
        final int packetId;
        final byte[] payload;

        Publish(String topic, int qos, boolean retain, boolean dup, int packetId, byte[] payload) {
            this.topic = topic;
            this.qos = qos;
            this.retain = retain;
            this.dup = dup;
            this.packetId = packetId;
            this.payload = payload;
        }

        String text() {
            return new String(payload, StandardCharsets.UTF_8);
        }

        @Override
        public String toString() {
            return "PUBLISH topic=" + topic + " qos=" + qos + " retain=" + retain + " dup=" + dup
                    + " id=" + packetId + " payload=" + payload.length + "B";
        }
    }

    /** Packet is any control packet: its first byte and its variable header and payload. */
    private static final class Packet {
        final int header;
        final byte[] body;

        Packet(int header, byte[] body) {
            this.header = header;
            this.body = body;
        }

        int type() {
            return header >>> 4;
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    /** PUBLISH packets read while waiting for an acknowledgement, in order. */
    private final Deque<Publish> pending = new ArrayDeque<>();
    private int nextID;

    /**
     * Mqtt connects (protocol level 4, clean session, keep-alive 0) as
     * clientID and fails unless the CONNACK accepts it.
     */
    Mqtt(String hostPort, String clientID, int timeoutMillis) throws IOException {
        int i = hostPort.lastIndexOf(':');
        socket = new Socket();
        socket.connect(new InetSocketAddress(hostPort.substring(0, i), Integer.parseInt(hostPort.substring(i + 1))), timeoutMillis);
        socket.setSoTimeout(timeoutMillis);
        socket.setTcpNoDelay(true);
        in = new BufferedInputStream(socket.getInputStream());
        out = socket.getOutputStream();
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        writeString(b, "MQTT");
        b.write(4); // protocol level: 3.1.1
        b.write(0x02); // connect flags: clean session
        b.write(0); // keep-alive 0: no keep-alive
        b.write(0);
        writeString(b, clientID);
        write(CONNECT << 4, b.toByteArray());
        Packet p = readPacket();
        if (p.type() != CONNACK || p.body.length != 2) {
            throw new IOException("MQTT CONNECT answered with packet type " + p.type() + " " + Arrays.toString(p.body) + ", want CONNACK");
        }
        if (p.body[1] != 0) {
            throw new IOException("MQTT CONNACK return code " + p.body[1] + ", want 0 (accepted)");
        }
        if ((p.body[0] & 1) != 0) {
            throw new IOException("MQTT CONNACK session present with a clean session");
        }
    }

    /** subscribe subscribes to one filter and returns the QoS the SUBACK grants (0x80 for failure). */
    int subscribe(String filter, int qos) throws IOException {
        int id = packetID();
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.write(id >>> 8);
        b.write(id);
        writeString(b, filter);
        b.write(qos);
        write(SUBSCRIBE << 4 | 0x02, b.toByteArray());
        Packet p = awaitAck(SUBACK, id, "SUBSCRIBE " + filter);
        if (p.body.length != 3) {
            throw new IOException("SUBACK for one filter has " + (p.body.length - 2) + " return codes");
        }
        return p.body[2] & 0xff;
    }

    /** publish sends a PUBLISH; at QoS 1 it returns once the broker's PUBACK arrived. */
    void publish(String topic, int qos, boolean retain, byte[] payload) throws IOException {
        if (qos != 0 && qos != 1) {
            throw new IllegalArgumentException("QoS " + qos + " is not implemented");
        }
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        writeString(b, topic);
        int id = 0;
        if (qos == 1) {
            id = packetID();
            b.write(id >>> 8);
            b.write(id);
        }
        b.write(payload);
        write(PUBLISH << 4 | qos << 1 | (retain ? 1 : 0), b.toByteArray());
        if (qos == 1) {
            awaitAck(PUBACK, id, "PUBLISH " + topic);
        }
    }

    /**
     * read returns the next PUBLISH from the broker, answering PUBACK for
     * QoS 1; it fails with a SocketTimeoutException when none arrives
     * within the connection's timeout.
     */
    Publish read() throws IOException {
        Publish p = pending.poll();
        if (p != null) {
            return p;
        }
        for (;;) {
            Packet pk = readPacket();
            if (pk.type() == PUBLISH) {
                return publishOf(pk);
            }
            if (pk.type() != PINGRESP) {
                throw new IOException("unexpected MQTT packet type " + pk.type() + " while waiting for PUBLISH");
            }
        }
    }

    /** awaitAck reads until the acknowledgement of type with packet id, queueing PUBLISH packets read meanwhile. */
    private Packet awaitAck(int type, int id, String what) throws IOException {
        for (;;) {
            Packet pk = readPacket();
            if (pk.type() == PUBLISH) {
                pending.add(publishOf(pk));
                continue;
            }
            if (pk.type() == type && pk.body.length >= 2 && ((pk.body[0] & 0xff) << 8 | (pk.body[1] & 0xff)) == id) {
                return pk;
            }
            throw new IOException(what + ": got packet type " + pk.type() + " " + Arrays.toString(pk.body) + ", want type " + type + " for packet id " + id);
        }
    }

    private Publish publishOf(Packet pk) throws IOException {
        int qos = (pk.header >>> 1) & 3;
        if (qos > 1) {
            throw new IOException("PUBLISH with QoS " + qos + ": this client implements QoS 0 and 1 only");
        }
        byte[] b = pk.body;
        int n = (b[0] & 0xff) << 8 | (b[1] & 0xff);
        String topic = new String(b, 2, n, StandardCharsets.UTF_8);
        int off = 2 + n;
        int id = 0;
        if (qos > 0) {
            id = (b[off] & 0xff) << 8 | (b[off + 1] & 0xff);
            off += 2;
            write(PUBACK << 4, new byte[] {(byte) (id >>> 8), (byte) id});
        }
        return new Publish(topic, qos, (pk.header & 1) != 0, (pk.header & 0x08) != 0, id, Arrays.copyOfRange(b, off, b.length));
    }

    private int packetID() {
        nextID = nextID % 0xffff + 1;
        return nextID;
    }

    private void write(int header, byte[] body) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.write(header);
        int n = body.length;
        do {
            int d = n % 128;
            n /= 128;
            b.write(n > 0 ? d | 0x80 : d);
        } while (n > 0);
        b.write(body);
        out.write(b.toByteArray());
        out.flush();
    }

    private Packet readPacket() throws IOException {
        int header = in.read();
        if (header < 0) {
            throw new EOFException("MQTT connection closed by the broker");
        }
        int len = 0;
        for (int shift = 0;; shift += 7) {
            int d = in.read();
            if (d < 0) {
                throw new EOFException("EOF in MQTT remaining length");
            }
            if (shift > 21) {
                throw new IOException("malformed MQTT remaining length");
            }
            len |= (d & 0x7f) << shift;
            if ((d & 0x80) == 0) {
                break;
            }
        }
        byte[] body = in.readNBytes(len);
        if (body.length != len) {
            throw new EOFException("short MQTT packet: " + body.length + " of " + len + " bytes");
        }
        return new Packet(header, body);
    }

    private static void writeString(ByteArrayOutputStream b, String s) {
        byte[] u = s.getBytes(StandardCharsets.UTF_8);
        b.write(u.length >>> 8);
        b.write(u.length);
        b.write(u, 0, u.length);
    }

    @Override
    public void close() throws IOException {
        try {
            write(DISCONNECT << 4, new byte[0]);
        } catch (IOException ignored) {
            // closing anyway
        }
        socket.close();
    }
}
