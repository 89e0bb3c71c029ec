// LoginConfigDiff parses a login.config with Java's own ConfigFile (the
// default javax.security.auth.login.Configuration) and writes
// <file>.golden: for each entry name given, its modules as
// "name: class FLAG {k=v, ...}" (options sorted), "name: none" if absent,
// or "ERROR" when the file does not parse.
// Run (activemq.conf is set as bin/activemq sets it):
//   java -Dactivemq.conf=/etc/wharf LoginConfigDiff.java FILE NAME...
import java.io.File;
import java.nio.file.*;
import java.util.*;
import javax.security.auth.login.*;
import java.security.URIParameter;

public class LoginConfigDiff {
    public static void main(String[] a) throws Exception {
        StringBuilder out = new StringBuilder();
        try {
            Configuration c = Configuration.getInstance("JavaLoginConfig", new URIParameter(new File(a[0]).toURI()));
            for (int i = 1; i < a.length; i++) {
                AppConfigurationEntry[] es = c.getAppConfigurationEntry(a[i]);
                if (es == null) { out.append(a[i]).append(": none\n"); continue; }
                for (AppConfigurationEntry e : es) {
                    TreeMap<String, Object> opts = new TreeMap<>(e.getOptions());
                    String flag = e.getControlFlag().toString().replace("LoginModuleControlFlag: ", "").toUpperCase();
                    out.append(a[i]).append(": ").append(e.getLoginModuleName()).append(' ').append(flag).append(' ').append(opts).append('\n');
                }
            }
        } catch (Exception e) {
            out = new StringBuilder("ERROR\n");
        }
        Files.write(Paths.get(a[0] + ".golden"), out.toString().getBytes("UTF-8"));
    }
}
