// JaasDiff runs a JAAS login with ActiveMQ 5.17's login modules (Debian's
// activemq-jaas.jar) and prints the outcome: "OK users=[..] groups=[..]"
// or "FAIL <LoginException message>". Used to check Wharf's control-flag
// semantics (TestSecurityJAASControlFlags's table); see jaas.golden.
// Run: java -cp $CP -Djava.security.auth.login.config=DIR/jaas-flags.config JaasDiff.java ENTRY USER PASSWORD
// with DIR holding jaas-flags.config and testdata/jaas/*.properties.
// (USER/PASSWORD "-" for null).
import java.util.*;
import javax.security.auth.Subject;
import javax.security.auth.callback.*;
import javax.security.auth.login.*;
import java.security.Principal;

public class JaasDiff {
    public static void main(String[] a) throws Exception {
        final String user = a[1].equals("-") ? null : a[1];
        final String pw = a[2].equals("-") ? null : a[2];
        CallbackHandler h = cbs -> {
            for (Callback c : cbs) {
                if (c instanceof NameCallback) ((NameCallback) c).setName(user);
                if (c instanceof PasswordCallback) ((PasswordCallback) c).setPassword(pw == null ? null : pw.toCharArray());
            }
        };
        try {
            LoginContext lc = new LoginContext(a[0], h);
            lc.login();
            List<String> us = new ArrayList<>(), gs = new ArrayList<>();
            for (Principal p : lc.getSubject().getPrincipals()) {
                if (p.getClass().getSimpleName().equals("UserPrincipal")) us.add(p.getName()); else gs.add(p.getName());
            }
            Collections.sort(us); Collections.sort(gs);
            System.out.println("OK users=" + us + " groups=" + gs);
        } catch (LoginException e) {
            System.out.println("FAIL " + e.getMessage());
        }
    }
}
