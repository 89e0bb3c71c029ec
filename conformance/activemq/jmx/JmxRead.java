// JmxRead reads MBean attributes from a running broker over JMX (the JDK's
// javax.management, nothing else) and prints each as one JSON line, with
// values rendered as Jolokia renders them (an ObjectName is
// {"objectName": canonical name}, arrays are lists, CompositeData an
// object), so that the same reads made through Wharf's Jolokia API can be
// compared line by line. It is the ActiveMQ side of the JMX differential
// test (issue 16): run.sh starts Debian's ActiveMQ 5.17 with its JMX
// connector and feeds it reads.txt.
//
// Usage: java JmxRead.java <JMX service URL> < reads
//   (or: javac JmxRead.java && java -cp . JmxRead <URL> < reads)
//
// Each input line is "<ObjectName or pattern> <attribute>[,<attribute>...]";
// blank lines and lines starting with # are skipped. A pattern is expanded
// with queryNames, sorted by canonical name. Each output line is
//   {"mbean":"<canonical>","attribute":"<name>","type":"<declared type>","value":<value>}
// or, when the read fails,
//   {"mbean":"<canonical or input>","attribute":"<name>","error_type":"<exception class>"}
import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

public class JmxRead {
    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: JmxRead <JMX service URL> < reads");
            System.exit(2);
        }
        try (JMXConnector c = JMXConnectorFactory.connect(new JMXServiceURL(args[0]))) {
            MBeanServerConnection mbs = c.getMBeanServerConnection();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                line = line.trim();
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                String[] parts = line.split("\\s+", 2);
                if (parts.length != 2) {
                    System.err.println("skipped (want '<name> <attributes>'): " + line);
                    continue;
                }
                read(mbs, parts[0], parts[1].split(","));
            }
        }
    }

    static void read(MBeanServerConnection mbs, String name, String[] attrs) {
        List<ObjectName> names = new ArrayList<>();
        try {
            ObjectName on = new ObjectName(name);
            names.addAll(mbs.queryNames(on, null));
        } catch (Exception e) {
            for (String a : attrs) {
                error(name, a, e);
            }
            return;
        }
        if (names.isEmpty()) {
            for (String a : attrs) {
                System.out.println("{\"mbean\":" + str(name) + ",\"attribute\":" + str(a)
                    + ",\"error_type\":\"javax.management.InstanceNotFoundException\"}");
            }
            return;
        }
        names.sort(Comparator.comparing(ObjectName::getCanonicalName));
        for (ObjectName on : names) {
            Map<String, String> types = new TreeMap<>();
            try {
                for (MBeanAttributeInfo ai : mbs.getMBeanInfo(on).getAttributes()) {
                    types.put(ai.getName(), ai.getType());
                }
            } catch (Exception e) {
                // the types are informative; the reads below report errors
            }
            for (String a : attrs) {
                try {
                    Object v = mbs.getAttribute(on, a);
                    System.out.println("{\"mbean\":" + str(on.getCanonicalName()) + ",\"attribute\":" + str(a)
                        + ",\"type\":" + str(types.getOrDefault(a, "")) + ",\"value\":" + json(v) + "}");
                } catch (Exception e) {
                    error(on.getCanonicalName(), a, e);
                }
            }
        }
    }

    static void error(String name, String attr, Exception e) {
        System.out.println("{\"mbean\":" + str(name) + ",\"attribute\":" + str(attr)
            + ",\"error_type\":" + str(e.getClass().getName()) + "}");
    }

    // json renders a value as Jolokia serializes it.
    static String json(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof Boolean || v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
            return v.toString();
        }
        if (v instanceof Number) {
            double d = ((Number) v).doubleValue();
            return Double.isFinite(d) ? v.toString() : str(v.toString());
        }
        if (v instanceof ObjectName) {
            return "{\"objectName\":" + str(((ObjectName) v).getCanonicalName()) + "}";
        }
        if (v instanceof CompositeData) {
            CompositeData cd = (CompositeData) v;
            StringBuilder b = new StringBuilder("{");
            for (String k : new java.util.TreeSet<>(cd.getCompositeType().keySet())) {
                if (b.length() > 1) {
                    b.append(',');
                }
                b.append(str(k)).append(':').append(json(cd.get(k)));
            }
            return b.append('}').toString();
        }
        if (v instanceof Map) {
            StringBuilder b = new StringBuilder("{");
            for (Map.Entry<?, ?> e : new TreeMap<>((Map<?, ?>) v).entrySet()) {
                if (b.length() > 1) {
                    b.append(',');
                }
                b.append(str(String.valueOf(e.getKey()))).append(':').append(json(e.getValue()));
            }
            return b.append('}').toString();
        }
        if (v.getClass().isArray() || v instanceof Collection) {
            Object[] items = v instanceof Collection ? ((Collection<?>) v).toArray() : toObjects(v);
            StringBuilder b = new StringBuilder("[");
            for (int i = 0; i < items.length; i++) {
                if (i > 0) {
                    b.append(',');
                }
                b.append(json(items[i]));
            }
            return b.append(']').toString();
        }
        return str(v.toString());
    }

    static Object[] toObjects(Object array) {
        Object[] out = new Object[Array.getLength(array)];
        for (int i = 0; i < out.length; i++) {
            out[i] = Array.get(array, i);
        }
        return out;
    }

    static String str(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (ch < 0x20) {
                        b.append(String.format("\\u%04x", (int) ch));
                    } else {
                        b.append(ch);
                    }
            }
        }
        return b.append('"').toString();
    }
}
