package conformance

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// secJMS drives conformance/jms's SecurityMatrix, ActiveMQ's own JMS
// client, one command a line; each answer is one line.
type secJMS struct {
	t     *testing.T
	in    io.WriteCloser
	out   *bufio.Scanner
	lines chan string
}

// secJMSTimeout bounds one JMS cell (the client's own timeouts are
// shorter: 10 s send, 5 s receive, 5 s close).
const secJMSTimeout = 60 * time.Second

func startSecJMS(t *testing.T, url string) *secJMS {
	t.Helper()
	cp := jmsClasspath(t)
	classes := compileJMS(t, cp)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	cmd := exec.CommandContext(ctx, "java", "-cp", classes+string(os.PathListSeparator)+cp,
		"wharf.conformance.SecurityMatrix", url)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the JMS security matrix: %v", err)
	}
	j := &secJMS{t: t, in: in, lines: make(chan string)}
	go func() {
		s := bufio.NewScanner(out)
		s.Buffer(make([]byte, 64<<10), 1<<20)
		for s.Scan() {
			j.lines <- s.Text()
		}
		close(j.lines)
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cancel()
			<-done
		}
		cancel()
	})
	return j
}

// do sends one command and returns the program's answer.
func (j *secJMS) do(args ...string) string {
	j.t.Helper()
	if _, err := io.WriteString(j.in, strings.Join(args, " ")+"\n"); err != nil {
		j.t.Fatalf("JMS security matrix: %v", err)
	}
	select {
	case l, ok := <-j.lines:
		if !ok {
			j.t.Fatal("the JMS security matrix program exited")
		}
		return l
	case <-time.After(secJMSTimeout):
		j.t.Fatalf("JMS security matrix: no answer to %q within %s", args, secJMSTimeout)
	}
	return ""
}

// secJMSCells runs the OpenWire cells with ActiveMQ's JMS client (the
// reference OpenWire client, issue 14), checking the broker with the
// STOMP verifier between cells as the STOMP cells do.
func secJMSCells(t *testing.T, tg *secTarget, v *secVerifier, m *secMatrix) {
	if tg.openwire == "" {
		t.Log("no OpenWire connector: JMS cells skipped")
		return
	}
	// The client as it comes, and with jms.watchTopicAdvisories=false: by
	// default ActiveMQConnection subscribes to ActiveMQ.Advisory.TempQueue
	// and .TempTopic at start, which seed 000's map grants only to
	// "everyone" (a group nobody is in), so non-admins cannot connect.
	secJMSRun(t, v, m, "jms", startSecJMS(t, "tcp://"+tg.openwire))
	secJMSRun(t, v, m, "jmsnoadv", startSecJMS(t, "tcp://"+tg.openwire+"?jms.watchTopicAdvisories=false"))
}

// secJMSRun runs the JMS cells of every user with client j.
func secJMSRun(t *testing.T, v *secVerifier, m *secMatrix, proto string, j *secJMS) {
	d := secDestsFor(v.tag, proto)
	for _, q := range []string{d.orders, d.dlq, d.other, "orders.fanout.copy", "audit.fanout"} {
		v.queue(q)
	}
	v.topic(d.topic)
	for _, u := range secUsers {
		login, pass := u.login, u.pass
		if login == "" {
			login, pass = "-", "-"
		}
		cell := func(op, out string) { m.cell(proto+"/"+u.name+"/"+op, out) }
		out := j.do("connect", login, pass)
		cell("connect", out)
		if out != "ok" {
			continue
		}
		mark := "m-" + proto + "-" + u.name + "-"
		send := func(op, kind, dest string, count func(string) int) {
			mk := mark + strings.ReplaceAll(op, " ", "_")
			out := j.do("send", login, pass, kind, dest, mk)
			cell("send "+op, out+" | stored="+strconv.Itoa(count(mk)))
		}
		queueCount := func(name string) func(string) int {
			return func(mk string) int { return v.stored(name, mk) }
		}
		send("orders.in", "queue", d.orders, queueCount(d.orders))
		send("DLQ", "queue", d.dlq, queueCount(d.dlq))
		send("other", "queue", d.other, queueCount(d.other))
		send("topic", "topic", d.topic, func(mk string) int { return v.published(d.topic, mk) })

		for _, op := range []string{"consume", "browse"} {
			mk := mark + op
			if out := v.c.do("SEND", "destination:/queue/"+d.orders, "body:"+mk); out != "ok" {
				t.Fatalf("verifier send: %s", out)
			}
			out := j.do(op, login, pass, d.orders, mk)
			cell(op+" orders.in", out+" | left="+strconv.Itoa(v.stored(d.orders, mk)))
		}
		cell("subscribe topic", j.do("subscribe", login, pass, d.topic))
		cell("durable subscribe topic", j.do("durable", login, pass, d.topic, "cid-"+v.tag+"-"+proto+"-"+u.name))

		for _, prefix := range []string{"orders", "other"} {
			q := prefix + "." + v.tag + "_" + proto + ".new-" + u.name
			out := j.do("send", login, pass, "queue", q, mark+"create")
			cell("create by send "+prefix, out+" | created="+strconv.FormatBool(v.created(q)))
			q += "-sub"
			out = j.do("createconsumer", login, pass, q)
			cell("create by subscribe "+prefix, out+" | created="+strconv.FormatBool(v.created(q)))
		}
		cell("temp queue", j.do("temp", login, pass, mark+"temp"))
		cell("advisory subscribe ActiveMQ.Advisory.Queue", j.do("advisory", login, pass))

		mk := mark + "fanout"
		out = j.do("send", login, pass, "queue", "orders.fanout", mk)
		cell("send composite orders.fanout", out+" | orders.fanout.copy="+strconv.Itoa(v.stored("orders.fanout.copy", mk))+
			" audit.fanout="+strconv.Itoa(v.stored("audit.fanout", mk)))

		cq := "orders." + u.name + "." + d.events
		vmk := mark + "vt"
		out = j.do("createconsumer", login, pass, cq)
		cell("virtual topic consumer queue orders.USER.events", out+" | created="+strconv.FormatBool(v.created(cq)))
		out = j.do("send", login, pass, "topic", d.events, vmk)
		cell("send virtual topic events", out+" | stored="+strconv.Itoa(v.stored(cq, vmk)))
	}
}
