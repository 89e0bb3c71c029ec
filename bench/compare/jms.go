package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// jmsRun is a scenario measured with ActiveMQ's own JMS client,
// bench/jms/JmsBench.java, instead of wharf bench: one JVM, one
// connection, one producer and one auto-acknowledging listener per
// receiver, the client's defaults otherwise (asynchronous non-persistent
// sends, synchronous persistent ones, prefetch 1000 or 32767).
type jmsRun struct {
	topic, persistent bool
	count, size, subs int
	// pairs > 1 runs that many producers (a thread and session each) and
	// queue consumers.
	pairs int
}

// args are JmsBench's arguments for a run of count messages against url.
func (j jmsRun) args(url string, count int) []string {
	kind, persistence := "queue", "nonpersistent"
	if j.topic {
		kind = "topic"
	}
	if j.persistent {
		persistence = "persistent"
	}
	return []string{url, kind, persistence, strconv.Itoa(count), strconv.Itoa(j.size), strconv.Itoa(j.subs), strconv.Itoa(max(j.pairs, 1))}
}

// jmsClasspath is the classpath of Debian's ActiveMQ JMS client.
var jmsClasspath = []string{
	"/usr/share/java/activemq-client.jar", "/usr/share/java/geronimo-jms_1.1_spec.jar",
	"/usr/share/java/hawtbuf.jar", "/usr/share/java/slf4j-api.jar", "/usr/share/java/slf4j-nop.jar",
	"/usr/share/java/geronimo-j2ee-management-1.1-spec.jar",
}

// buildJMS compiles bench/jms/JmsBench.java into dir and returns the
// classpath to run it with.
func buildJMS(ctx context.Context, repo, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	cp := strings.Join(jmsClasspath, ":")
	cmd := exec.CommandContext(ctx, "javac", "-d", dir, "-cp", cp, filepath.Join(repo, "bench", "jms", "JmsBench.java"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("javac bench/jms/JmsBench.java: %w\n%s", err, out)
	}
	return dir + ":" + cp, nil
}

// jmsTimeout bounds one JmsBench run (it gives up by itself after 300 s of
// waiting for its messages).
const jmsTimeout = 3 * time.Minute

// jmsResult is JmsBench's result line.
var jmsResult = regexp.MustCompile(`^RESULT .*: ([0-9.]+) msgs/s received \(([0-9.]+) s\)`)

// measureJMS runs j once against the broker's OpenWire URL and samples the
// broker's CPU time around it.
func (r *runner) measureJMS(ctx context.Context, j jmsRun, b *broker, s Sample) Sample {
	if r.jmsCP == "" {
		s.Error = "JMS client unavailable: " + r.jmsErr
		return s
	}
	count := max(int(float64(j.count)*r.scale), max(j.pairs, 1))
	receivers := 1
	if j.topic {
		receivers = j.subs
	}
	url := b.urls[connOpenWire]
	cpu0, err := cpuSeconds(b.pid)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	ctx, cancel := context.WithTimeout(ctx, jmsTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", append([]string{"-cp", r.jmsCP, "JmsBench"}, j.args(url, count)...)...)
	out, err := cmd.CombinedOutput()
	cpu1, cerr := cpuSeconds(b.pid)
	if err != nil {
		s.Error = fmt.Sprintf("JmsBench: %v: %s", err, lastLine(out))
		return s
	}
	var rate, secs float64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := jmsResult.FindStringSubmatch(sc.Text()); m != nil {
			rate, _ = strconv.ParseFloat(m[1], 64)
			secs, _ = strconv.ParseFloat(m[2], 64)
		}
	}
	if rate == 0 {
		s.Error = "JmsBench printed no result: " + lastLine(out)
		return s
	}
	// JmsBench fails unless every receiver got count messages.
	s.Value, s.ReceiveRate, s.Seconds = rate, rate, secs
	s.Sent, s.Received = int64(count), int64(count*receivers)
	if cerr == nil {
		s.CPUSeconds = cpu1 - cpu0
	}
	return s
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// cpuSeconds is pid's user plus system CPU time (proc(5): utime and stime
// are the 12th and 13th fields after the command name, in USER_HZ = 100).
func cpuSeconds(pid int) (float64, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unreadable CPU times in /proc/%d/stat", pid)
	}
	return float64(ut+st) / 100, nil
}
