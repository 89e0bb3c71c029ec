// PrintDN prints, for each PEM certificate named on the command line, the
// subject as X509Certificate.getSubjectDN().getName() gives it (what
// ActiveMQ's CertificateLoginModule matches) into <name>.dn.
// Run: java PrintDN.java *.pem   (Java 11+ single-file launch)
import java.io.*;
import java.nio.file.*;
import java.security.cert.*;

public class PrintDN {
    public static void main(String[] args) throws Exception {
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        for (String a : args) {
            try (InputStream in = new FileInputStream(a)) {
                X509Certificate c = (X509Certificate) cf.generateCertificate(in);
                Files.write(Paths.get(a.replace(".pem", ".dn")), c.getSubjectDN().getName().getBytes("UTF-8"));
            }
        }
    }
}
