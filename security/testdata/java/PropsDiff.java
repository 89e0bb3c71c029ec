// PropsDiff loads each file named on the command line with
// java.util.Properties.load(InputStream), as ActiveMQ's
// ReloadableProperties does, and writes <file>.golden: one line per key,
// sorted, "key=value" with every character outside printable ASCII (and
// '\\', '=') written as backslash-u and four hex digits, or "ERROR" when load throws.
// Regenerate: java PropsDiff.java props/*.properties
import java.io.*;
import java.nio.file.*;
import java.util.*;

public class PropsDiff {
    static String esc(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c < 0x20 || c > 0x7e || c == '\\' || c == '=') b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.toString();
    }
    public static void main(String[] args) throws Exception {
        for (String a : args) {
            StringBuilder out = new StringBuilder();
            Properties p = new Properties();
            try (InputStream in = new FileInputStream(a)) {
                p.load(in);
                List<String> keys = new ArrayList<>(p.stringPropertyNames());
                Collections.sort(keys);
                for (String k : keys) out.append(esc(k)).append('=').append(esc(p.getProperty(k))).append('\n');
            } catch (IllegalArgumentException e) {
                out = new StringBuilder("ERROR\n");
            }
            Files.write(Paths.get(a + ".golden"), out.toString().getBytes("US-ASCII"));
        }
    }
}
