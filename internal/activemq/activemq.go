// Package activemq builds the command that runs Debian's ActiveMQ 5.17 as
// its bin/activemq script does, for the tests that compare Wharf with it.
package activemq

import (
	"os/exec"
	"path/filepath"
)

// Home is where Debian's activemq package installs the broker.
const Home = "/usr/share/activemq"

// Command is "bin/activemq start" for an instance whose ACTIVEMQ_BASE is
// base: its activemq.xml and log4j.properties in base/conf, its data in
// base/data, temporary files in base/tmp. props are further -D settings
// ("name=value"), such as the placeholders the activemq.xml uses.
func Command(base string, props ...string) *exec.Cmd {
	conf := filepath.Join(base, "conf")
	args := []string{"-Xms64M", "-Xmx512M",
		"--add-reads=java.xml=java.logging",
		"--add-opens", "java.base/java.security=ALL-UNNAMED",
		"--add-opens", "java.base/java.net=ALL-UNNAMED",
		"--add-opens", "java.base/java.lang=ALL-UNNAMED",
		"--add-opens", "java.base/java.util=ALL-UNNAMED",
		"--add-opens", "java.naming/javax.naming.spi=ALL-UNNAMED",
		"--add-opens", "java.rmi/sun.rmi.transport.tcp=ALL-UNNAMED",
		"--add-opens", "java.base/java.util.concurrent=ALL-UNNAMED",
		"--add-opens", "java.base/java.util.concurrent.atomic=ALL-UNNAMED",
		"-Dactivemq.classpath=" + conf,
		"-Dactivemq.home=" + Home,
		"-Dactivemq.base=" + base,
		"-Dactivemq.conf=" + conf,
		"-Dactivemq.data=" + filepath.Join(base, "data"),
		"-Djava.io.tmpdir=" + filepath.Join(base, "tmp"),
		"-Dlog4j.configuration=file:" + filepath.Join(conf, "log4j.properties"),
	}
	for _, p := range props {
		args = append(args, "-D"+p)
	}
	args = append(args, "-jar", filepath.Join(Home, "bin", "activemq.jar"),
		"start", "xbean:file:"+filepath.Join(conf, "activemq.xml"))
	return exec.Command("java", args...)
}
