// AuthzDiff runs ActiveMQ 5.17's own DefaultAuthorizationMap (Debian's
// activemq-broker.jar) over a map spec and prints each query's read,
// write and admin ACLs: the golden file authz.golden that
// TestSecurityAuthorizeMatchesActiveMQ compares Wharf's map with.
//
// Regenerate (from security/testdata/java):
//   CP=/usr/share/java/activemq-broker.jar:/usr/share/java/activemq-client.jar:/usr/share/java/geronimo-jms_1.1_spec.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/activemq-jaas.jar:/usr/share/java/hawtbuf.jar
//   java -cp $CP AuthzDiff.java authz.spec > authz.golden
//
// Spec lines: "entry queue|topic PATTERN read=a,b write=... admin=...",
// "default read=...", "temp read=...", "query queue|topic|temp-queue NAME".
import java.nio.file.*;
import java.util.*;
import org.apache.activemq.command.*;
import org.apache.activemq.filter.DestinationMapEntry;
import org.apache.activemq.security.*;

public class AuthzDiff {
    static AuthorizationEntry entry(String[] f, int from) throws Exception {
        AuthorizationEntry e = new AuthorizationEntry();
        for (int i = from; i < f.length; i++) {
            String[] kv = f[i].split("=", 2);
            switch (kv[0]) {
                case "read": e.setRead(kv[1]); break;
                case "write": e.setWrite(kv[1]); break;
                case "admin": e.setAdmin(kv[1]); break;
            }
        }
        return e;
    }

    static String names(Set<?> s) {
        if (s == null) return "null";
        List<String> l = new ArrayList<>();
        for (Object o : s) l.add(((java.security.Principal) o).getName());
        Collections.sort(l);
        return String.join(",", l);
    }

    public static void main(String[] args) throws Exception {
        List<DestinationMapEntry> entries = new ArrayList<>();
        DefaultAuthorizationMap map = new DefaultAuthorizationMap();
        List<String> out = new ArrayList<>();
        boolean built = false;
        for (String line : Files.readAllLines(Paths.get(args[0]))) {
            line = line.trim();
            if (line.isEmpty() || line.startsWith("#")) continue;
            String[] f = line.split("\\s+");
            switch (f[0]) {
                case "entry": {
                    AuthorizationEntry e = entry(f, 3);
                    if (f[1].equals("queue")) e.setQueue(f[2]); else e.setTopic(f[2]);
                    entries.add(e);
                    break;
                }
                case "default": map.setDefaultEntry(entry(f, 1)); break;
                case "temp": {
                    TempDestinationAuthorizationEntry t = new TempDestinationAuthorizationEntry();
                    AuthorizationEntry e = entry(f, 1);
                    t.setReadACLs(e.getReadACLs()); t.setWriteACLs(e.getWriteACLs()); t.setAdminACLs(e.getAdminACLs());
                    map.setTempDestinationAuthorizationEntry(t);
                    break;
                }
                case "query": {
                    if (!built) { map.setAuthorizationEntries(entries); built = true; }
                    ActiveMQDestination d = ActiveMQDestination.createDestination(f[2],
                        f[1].equals("queue") ? ActiveMQDestination.QUEUE_TYPE :
                        f[1].equals("topic") ? ActiveMQDestination.TOPIC_TYPE : ActiveMQDestination.TEMP_QUEUE_TYPE);
                    String r, w, a;
                    if (d.isTemporary()) {
                        r = names(map.getTempDestinationReadACLs()); w = names(map.getTempDestinationWriteACLs()); a = names(map.getTempDestinationAdminACLs());
                    } else {
                        r = names(map.getReadACLs(d)); w = names(map.getWriteACLs(d)); a = names(map.getAdminACLs(d));
                    }
                    System.out.println(f[1] + " " + f[2] + " read=" + r + " write=" + w + " admin=" + a);
                    break;
                }
            }
        }
    }
}
