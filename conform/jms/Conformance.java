package wharf.conformance;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;

import javax.jms.Connection;
import javax.jms.JMSException;
import javax.jms.Message;

/**
 * Conformance runs the JMS conformance cases against one broker with
 * ActiveMQ's own JMS client and prints one line per case on stdout:
 *
 * <pre>
 *   PASS &lt;case&gt;
 *   FAIL &lt;case&gt; &lt;reason on one line&gt;
 *   SKIP &lt;case&gt; &lt;reason on one line&gt;
 * </pre>
 *
 * and, for the failover case, a request to the driver:
 *
 * <pre>
 *   RESTART &lt;case&gt;
 * </pre>
 *
 * after which it reads one line from stdin ("RESTARTED" or "DROPPED") once
 * the driver has restarted the broker (or cut every connection). Arguments:
 *
 * <pre>
 *   --url URL            OpenWire broker URL, e.g. tcp://127.0.0.1:61616 (required)
 *   --stomp HOST:PORT    the same broker's STOMP connector (mixed cases; skipped without)
 *   --mqtt HOST:PORT     the same broker's MQTT connector (mixed MQTT cases; skipped without)
 *   --failover-url URL   failover URL whose broker the driver restarts (failover case; skipped without)
 *   --run REGEX          only cases whose name matches (find, as go test -run)
 *   --timeout SECONDS    per case (default 60)
 *   --list               print the case names and exit
 *   --activemq           the broker is ActiveMQ 5.17: cases with a documented
 *                        difference assert ActiveMQ's behaviour instead
 * </pre>
 *
 * Exit status: 0 when no case failed, 1 otherwise, 2 on bad arguments.
 */
public final class Conformance {
    /** A case body; it throws to fail. */
    interface Body {
        void run(Ctx c) throws Exception;
    }

    private final PrintStream out;
    private final BufferedReader control;
    final Map<String, Body> cases = new LinkedHashMap<>();

    Conformance(PrintStream out, BufferedReader control) {
        this.out = out;
        this.control = control;
        Cases.register(this);
    }

    void add(String name, Body b) {
        if (cases.put(name, b) != null) {
            throw new IllegalStateException("duplicate case " + name);
        }
    }

    /** requestRestart asks the driver to restart the broker and waits. */
    synchronized String requestRestart(String name) throws Exception {
        if (control == null) {
            throw new Skip("no driver on stdin to restart the broker");
        }
        out.println("RESTART " + name);
        out.flush();
        String reply = control.readLine();
        if (reply == null) {
            throw new Skip("driver closed stdin instead of restarting the broker");
        }
        return reply.trim();
    }

    /** Skip is thrown by a case that cannot run with the given arguments. */
    static final class Skip extends Exception {
        private static final long serialVersionUID = 1L;

        Skip(String reason) {
            super(reason);
        }
    }

    public static void main(String[] args) throws Exception {
        String url = null;
        String stomp = null;
        String mqtt = null;
        String failover = null;
        Pattern run = null;
        long timeout = 60;
        boolean list = false;
        boolean activemq = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--url": url = args[++i]; break;
                case "--stomp": stomp = args[++i]; break;
                case "--mqtt": mqtt = args[++i]; break;
                case "--failover-url": failover = args[++i]; break;
                case "--run": run = Pattern.compile(args[++i]); break;
                case "--timeout": timeout = Long.parseLong(args[++i]); break;
                case "--list": list = true; break;
                case "--activemq": activemq = true; break;
                default:
                    System.err.println("unknown argument " + a);
                    System.exit(2);
            }
        }
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        BufferedReader control = failover == null ? null
                : new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Conformance conf = new Conformance(out, control);
        if (list) {
            conf.cases.keySet().forEach(out::println);
            return;
        }
        if (url == null) {
            System.err.println("usage: Conformance --url tcp://host:port [--stomp host:port] [--mqtt host:port] [--failover-url URL] [--run REGEX] [--timeout S] [--list] [--activemq]");
            System.exit(2);
        }
        String runID = UUID.randomUUID().toString().substring(0, 8);
        boolean failed = false;
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "case");
            t.setDaemon(true);
            return t;
        });
        for (Map.Entry<String, Body> e : conf.cases.entrySet()) {
            String name = e.getKey();
            if (run != null && !run.matcher(name).find()) {
                continue;
            }
            Ctx ctx = new Ctx(conf, name, url, stomp, mqtt, failover, activemq, "conf_" + runID + "_" + name);
            Future<?> f = pool.submit(() -> {
                e.getValue().run(ctx);
                return null;
            });
            String result;
            try {
                f.get(timeout, TimeUnit.SECONDS);
                result = "PASS " + name;
            } catch (TimeoutException te) {
                f.cancel(true);
                result = "FAIL " + name + " timed out after " + timeout + "s" + ctx.trail();
                failed = true;
            } catch (ExecutionException ee) {
                Throwable c = ee.getCause();
                if (c instanceof Skip) {
                    result = "SKIP " + name + " " + c.getMessage();
                } else {
                    result = "FAIL " + name + " " + describe(c) + ctx.trail();
                    failed = true;
                }
            }
            ctx.close();
            out.println(oneLine(result));
        }
        out.flush();
        System.exit(failed ? 1 : 0);
    }

    /** describe renders a failure: the message, its type, and where it was thrown. */
    static String describe(Throwable t) {
        StringBuilder sb = new StringBuilder();
        if (t instanceof AssertionError) {
            sb.append(t.getMessage());
        } else {
            sb.append(t.getClass().getName()).append(": ").append(t.getMessage());
            Throwable cause = t instanceof JMSException && ((JMSException) t).getLinkedException() != null
                    ? ((JMSException) t).getLinkedException() : t.getCause();
            if (cause != null && cause != t) {
                sb.append(" (caused by ").append(cause.getClass().getName()).append(": ").append(cause.getMessage()).append(')');
            }
        }
        for (StackTraceElement el : t.getStackTrace()) {
            if (el.getClassName().startsWith("wharf.conformance.Cases")) {
                sb.append(" at ").append(el.getFileName()).append(':').append(el.getLineNumber());
                break;
            }
        }
        return sb.toString();
    }

    static String oneLine(String s) {
        return s.replace("\r", "\\r").replace("\n", "\\n");
    }

    // ---- assertions: each throws AssertionError with got and want ----

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    static void eq(Object got, Object want, String what) {
        boolean same = got == null ? want == null
                : got instanceof byte[] && want instanceof byte[] ? Arrays.equals((byte[]) got, (byte[]) want)
                : got.equals(want);
        if (!same) {
            throw new AssertionError(what + ": got " + show(got) + ", want " + show(want));
        }
    }

    static String show(Object o) {
        if (o == null) {
            return "null";
        }
        if (o instanceof byte[]) {
            return Arrays.toString((byte[]) o);
        }
        String s = o instanceof String ? "\"" + o + "\"" : o + " (" + o.getClass().getSimpleName() + ")";
        return s.length() > 200 ? s.substring(0, 200) + "...(" + s.length() + " chars)" : s;
    }

    /** texts returns the bodies of text messages, for diagnostics. */
    static List<String> texts(List<Message> ms) throws JMSException {
        List<String> out = new ArrayList<>();
        for (Message m : ms) {
            out.add(m instanceof javax.jms.TextMessage ? ((javax.jms.TextMessage) m).getText() : String.valueOf(m));
        }
        return out;
    }

    /** Collector gathers messages delivered to a MessageListener. */
    static final class Collector implements javax.jms.MessageListener {
        final List<Message> got = Collections.synchronizedList(new ArrayList<>());
        private final CountDownLatch latch;

        Collector(int want) {
            latch = new CountDownLatch(want);
        }

        @Override
        public void onMessage(Message m) {
            got.add(m);
            latch.countDown();
        }

        void await(String what) throws Exception {
            if (!latch.await(Ctx.WAIT_MS, TimeUnit.MILLISECONDS)) {
                throw new AssertionError(what + ": got " + got.size() + " messages within " + Ctx.WAIT_MS + " ms, want " + (got.size() + latch.getCount()));
            }
        }
    }

    static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // the case is over
        }
    }
}
