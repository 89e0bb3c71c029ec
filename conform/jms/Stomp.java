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
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Stomp is a minimal STOMP 1.2 client over a raw socket, enough for the
 * mixed-protocol cases: CONNECT, SEND, SUBSCRIBE with receipts, and reading
 * MESSAGE frames with their exact headers and body bytes.
 */
final class Stomp implements AutoCloseable {
    /** Frame is one STOMP frame as read from the wire. */
    static final class Frame {
        final String command;
        final Map<String, String> headers;
        final byte[] body;

        Frame(String command, Map<String, String> headers, byte[] body) {
            this.command = command;
            this.headers = headers;
            this.body = body;
        }

        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        @Override
        public String toString() {
            return command + " " + headers + " body=" + body.length + "B";
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private int receipts;

    Stomp(String hostPort, int timeoutMillis) throws IOException {
        int i = hostPort.lastIndexOf(':');
        socket = new Socket();
        socket.connect(new InetSocketAddress(hostPort.substring(0, i), Integer.parseInt(hostPort.substring(i + 1))), timeoutMillis);
        socket.setSoTimeout(timeoutMillis);
        in = new BufferedInputStream(socket.getInputStream());
        out = socket.getOutputStream();
        Map<String, String> h = new LinkedHashMap<>();
        h.put("accept-version", "1.2");
        h.put("host", "localhost");
        h.put("heart-beat", "0,0");
        write("CONNECT", h, null);
        Frame f = read();
        if (!f.command.equals("CONNECTED")) {
            throw new IOException("STOMP CONNECT answered with " + f);
        }
    }

    /** send sends a SEND frame with a receipt and waits for the receipt. */
    void send(String dest, Map<String, String> headers, byte[] body) throws IOException {
        Map<String, String> h = new LinkedHashMap<>();
        h.put("destination", dest);
        h.putAll(headers);
        withReceipt("SEND", h, body);
    }

    /** subscribe subscribes (ack auto) and waits for the receipt. */
    void subscribe(String id, String dest) throws IOException {
        Map<String, String> h = new LinkedHashMap<>();
        h.put("id", id);
        h.put("destination", dest);
        h.put("ack", "auto");
        withReceipt("SUBSCRIBE", h, null);
    }

    private void withReceipt(String command, Map<String, String> h, byte[] body) throws IOException {
        String id = "r" + (++receipts);
        h.put("receipt", id);
        write(command, h, body);
        Frame f = read();
        if (!f.command.equals("RECEIPT") || !id.equals(f.headers.get("receipt-id"))) {
            throw new IOException(command + ": want RECEIPT " + id + ", got " + f + " " + f.text());
        }
    }

    void write(String command, Map<String, String> headers, byte[] body) throws IOException {
        StringBuilder sb = new StringBuilder(command).append('\n');
        for (Map.Entry<String, String> e : headers.entrySet()) {
            sb.append(escape(e.getKey())).append(':').append(escape(e.getValue())).append('\n');
        }
        sb.append('\n');
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.write(sb.toString().getBytes(StandardCharsets.UTF_8));
        if (body != null) {
            b.write(body);
        }
        b.write(0);
        out.write(b.toByteArray());
        out.flush();
    }

    /** read reads the next frame, skipping heart-beat EOLs. */
    Frame read() throws IOException {
        String command;
        do {
            command = line();
        } while (command.isEmpty());
        Map<String, String> h = new LinkedHashMap<>();
        for (String l = line(); !l.isEmpty(); l = line()) {
            int c = l.indexOf(':');
            String k = unescape(l.substring(0, c));
            // STOMP 1.2: the first occurrence of a repeated header wins.
            h.putIfAbsent(k, unescape(l.substring(c + 1)));
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        String cl = h.get("content-length");
        if (cl != null) {
            int n = Integer.parseInt(cl.trim());
            byte[] buf = in.readNBytes(n);
            if (buf.length != n) {
                throw new EOFException("short STOMP body");
            }
            body.write(buf);
            if (in.read() != 0) {
                throw new IOException("no NUL after content-length body");
            }
        } else {
            for (int c = in.read(); c != 0; c = in.read()) {
                if (c < 0) {
                    throw new EOFException("EOF in STOMP body");
                }
                body.write(c);
            }
        }
        return new Frame(command, h, body.toByteArray());
    }

    private String line() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int c = in.read(); c != '\n'; c = in.read()) {
            if (c < 0) {
                throw new EOFException("EOF in STOMP frame");
            }
            b.write(c);
        }
        String s = b.toString(StandardCharsets.UTF_8);
        return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
    }

    private static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace(":", "\\c");
    }

    private static String unescape(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                char n = s.charAt(++i);
                sb.append(n == 'n' ? '\n' : n == 'r' ? '\r' : n == 'c' ? ':' : n);
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    @Override
    public void close() throws IOException {
        try {
            write("DISCONNECT", new LinkedHashMap<>(), null);
        } catch (IOException ignored) {
            // closing anyway
        }
        socket.close();
    }
}
