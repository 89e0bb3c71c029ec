package torture

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ActiveMQ's own JMS client (Debian's libactivemq-java) runs
// jms/wharf/torture/TortureClient.java: a synchronous persistent producer,
// a CLIENT_ACKNOWLEDGE consumer whose acks wait for the broker, and XA
// branches. It is compiled with javac once per source version.

const (
	jmsJarDir      = "/usr/share/java"
	jmsInstallHint = "apt-get install -y default-jdk-headless libactivemq-java"
	envJMS         = "WHARF_TORTURE_JMS_CLASSPATH" // replaces the jars under jmsJarDir
)

var jmsJars = []string{"activemq-client.jar", "geronimo-jms_1.1_spec.jar", "hawtbuf.jar", "slf4j-api.jar", "slf4j-nop.jar", "geronimo-j2ee-management-1.1-spec.jar"}

// Streams of the Java client.
const (
	streamJMS   = "q.jms/jms-client"
	streamXAIn  = "q.xain/jms-xa"
	streamXAOut = "q.xaout/openwire"
)

// javaClasspath is the client's jars and the compiled TortureClient, or
// a reason to run without the Java client.
func javaClasspath(t *testing.T) (string, string) {
	t.Helper()
	for _, tool := range []string{"java", "javac"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Sprintf("%s not found (%s)", tool, jmsInstallHint)
		}
	}
	cp := os.Getenv(envJMS)
	if cp == "" {
		var paths []string
		for _, j := range jmsJars {
			p := filepath.Join(jmsJarDir, j)
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Sprintf("%s missing (%s, or set %s)", p, jmsInstallHint, envJMS)
			}
			paths = append(paths, p)
		}
		cp = strings.Join(paths, string(os.PathListSeparator))
	}
	src := filepath.Join("jms", "wharf", "torture", "TortureClient.java")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(append([]byte(cp+"\x00"), b...))
	dir := filepath.Join(os.TempDir(), "wharf-torture-jms-"+hex.EncodeToString(h[:])[:16])
	if _, err := os.Stat(filepath.Join(dir, "wharf", "torture", "TortureClient.class")); err != nil {
		tmp, err := os.MkdirTemp(os.TempDir(), "wharf-torture-jms-build-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		if out, err := exec.Command("javac", "-encoding", "UTF-8", "-d", tmp, "-cp", cp, src).CombinedOutput(); err != nil {
			t.Fatalf("javac %s: %v\n%s", src, err, out)
		}
		if err := os.Rename(tmp, dir); err != nil {
			if _, serr := os.Stat(filepath.Join(dir, "wharf", "torture", "TortureClient.class")); serr != nil {
				t.Fatal(err)
			}
		}
	}
	return dir + string(os.PathListSeparator) + cp, ""
}

// javaClient is the running TortureClient.
type javaClient struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr strings.Builder
	done   chan struct{} // closed when stdout is read to the end
	lines  int
}

type xaBranchInfo struct {
	in, id, out1, out2 string
}

// startJava runs TortureClient and feeds what it prints to the ledger;
// the producer gets a credit ("GO") for each send it finished once its
// destinations' backlog is below backlogBound, until prodCtx ends.
func (r *rig) startJava(t *testing.T, cp string, xa bool, prodCtx context.Context) *javaClient {
	t.Helper()
	cmd := exec.Command("java", "-cp", cp, "wharf.torture.TortureClient", "tcp://"+r.a.openwire, fmt.Sprint(r.seed), "jms", fmt.Sprint(xa))
	j := &javaClient{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &j.stderr
	var err error
	if j.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start java: %v", err)
	}
	t.Cleanup(j.stop)
	credit := make(chan struct{}, 1<<16)
	for range 8 {
		credit <- struct{}{}
	}
	go func() {
		for {
			select {
			case <-credit:
			case <-prodCtx.Done():
				return
			}
			if r.holdBack(prodCtx, qJMS) != nil || r.holdBack(prodCtx, tDurable) != nil {
				return
			}
			io.WriteString(j.stdin, "GO\n")
		}
	}()
	go func() {
		defer close(j.done)
		branches := map[string]*xaBranchInfo{}
		sc := bufio.NewScanner(out)
		trace, _ := os.Create(os.Getenv("WHARF_TORTURE_JAVA_TRACE"))
		for sc.Scan() {
			if trace != nil {
				fmt.Fprintln(trace, sc.Text())
			}
			j.lines++
			f := strings.Fields(sc.Text())
			if len(f) == 0 {
				continue
			}
			switch {
			case f[0] == "SENDING" && len(f) == 3:
				r.l.sending(f[1], f[2])
			case f[0] == "SENT" && len(f) == 3:
				r.l.sent("jms", f[1], f[2])
				credit <- struct{}{}
			case f[0] == "FAILED":
				credit <- struct{}{}
			case f[0] == "GOT" && len(f) == 4:
				r.l.delivered(streamJMS, f[1], f[3], f[2] == "true")
			case f[0] == "ACKING" && len(f) == 3:
				r.l.acking(streamJMS, delivery{f[1], f[2]})
			case f[0] == "CONFIRMED" && len(f) == 3:
				r.l.confirmed(streamJMS, delivery{f[1], f[2]})
			case f[0] == "XAGOT" && len(f) == 4:
				r.l.delivered(streamXAIn, f[1], f[3], f[2] == "true")
				branches[""] = &xaBranchInfo{in: f[1], id: f[3]}
			case f[0] == "XABRANCH" && len(f) == 5:
				b := branches[""]
				delete(branches, "")
				if b == nil || b.in != f[2] {
					r.l.violateLocked(fmt.Sprintf("java: %q without its XAGOT (test bug)", sc.Text()))
					continue
				}
				b.out1, b.out2 = f[3], f[4]
				branches[f[1]] = b
				r.l.sending(qXAOut, b.out1, b.out2)
				r.l.xaBranch(f[1], b.in, b.out1, b.out2)
			case f[0] == "XAACKING" && len(f) == 2:
				if b := branches[f[1]]; b != nil {
					r.l.acking(streamXAIn, delivery{b.in, b.id})
				}
			case f[0] == "XARECOVER":
			case f[0] == "XACOMMITTED" && len(f) == 2:
				b := branches[f[1]]
				if b == nil {
					r.l.violateLocked(fmt.Sprintf("java: %q: no such branch", sc.Text()))
					continue
				}
				r.l.confirmed(streamXAIn, delivery{b.in, b.id})
				r.l.sent("jms-xa", qXAOut, b.out1, b.out2)
			case f[0] == "XAROLLEDBACK" && len(f) == 2:
				r.l.xaRolledBack(f[1])
			default:
				r.logf("java: %s", sc.Text())
			}
		}
	}()
	return j
}

// stop ends the client (SIGKILL: its work is done) and waits for it.
func (j *javaClient) stop() {
	if j.cmd.ProcessState != nil {
		return
	}
	j.cmd.Process.Kill()
	j.cmd.Wait()
	<-j.done
}
