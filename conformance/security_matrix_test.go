package conformance

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"wharf/cmd/wharf/wiring"
	"wharf/conform"
	"wharf/engine/brokertest"
	"wharf/engine/config"
	"wharf/protocols/mqtt/wire"
)

// The security matrix (issue 14, "How it is checked"): seed 000's users,
// groups and authorization map, every operation of every protocol, the
// outcome of each cell (accepted, or refused with the broker's exact text)
// and, for each one, whether a message was stored or delivered or a
// destination created. The same sequence runs against Debian's ActiveMQ
// 5.17 (conformance/activemq/security/run.sh) and against Wharf in process
// with the same activemq.xml, login.config, users.properties and
// groups.properties; both are compared with matrix.golden, which holds
// ActiveMQ's outcomes.
//
// The sequence matters: with seed 000's map nobody is in the group
// "everyone", so only admins may create advisory topics, and whether a
// non-admin's connect, send or subscribe succeeds on ActiveMQ depends on
// whether the advisory topic it fires (ActiveMQ.Advisory.Connection,
// ActiveMQ.Advisory.Queue, ActiveMQ.Advisory.Consumer.Queue.<name>, ...)
// already exists. The matrix therefore starts on a fresh broker (run.sh
// starts one per variant; Wharf's is per test) and runs its steps in one
// fixed order.

// Environment of run.sh's ActiveMQ side.
const (
	envSecActiveMQ = "WHARF_CONFORMANCE_SECURITY_ACTIVEMQ"
	envSecVariant  = "WHARF_CONFORMANCE_SECURITY_VARIANT"
	envSecOpenWire = "WHARF_CONFORMANCE_SECURITY_OPENWIRE_ADDR"
	envSecSTOMP    = "WHARF_CONFORMANCE_SECURITY_STOMP_ADDR"
	envSecMQTT     = "WHARF_CONFORMANCE_SECURITY_MQTT_ADDR"
	// envSecUpdate=1 rewrites matrix.golden from an ActiveMQ run.
	envSecUpdate = "WHARF_CONFORMANCE_SECURITY_UPDATE"
)

// secDir holds the configuration both brokers run with.
const secDir = "activemq/security"

// secGolden is ActiveMQ 5.17's outcome of every cell, one line each.
const secGolden = secDir + "/matrix.golden"

// secKnown lists the cells where Wharf differs from ActiveMQ 5.17 on
// purpose or until fixed, each with its reason.
const secKnown = secDir + "/wharf-differences.txt"

// secKnownDifferences reads secKnown; against ActiveMQ itself nothing is
// known to differ.
func secKnownDifferences(t *testing.T, tg *secTarget) map[string]string {
	t.Helper()
	known := map[string]string{}
	if tg.activeMQ {
		return known
	}
	b, err := os.ReadFile(secKnown)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, reason, ok := strings.Cut(l, "\t")
		if !ok {
			t.Fatalf("%s:%d: want <cell><TAB><reason>, got %q", secKnown, i+1, l)
		}
		known[k] = reason
	}
	return known
}

// secTarget is the broker under test.
type secTarget struct {
	activeMQ              bool
	stomp, mqtt, openwire string
	// wsAddr is Wharf's WebSocket connector (STOMP and MQTT); empty on
	// ActiveMQ, whose Debian package has no WebSocket transport.
	wsAddr string
	// amqp is Wharf's AMQP connector; empty on ActiveMQ.
	amqp string
}

// secUser is one column of the matrix: a login and password, or none.
type secUser struct{ name, login, pass string }

var secUsers = []secUser{
	{"orders-svc", "orders-svc", "orders-secret"},
	{"fulfilment", "fulfilment", "fulfilment-secret"},
	{"ops", "ops", "ops-secret"},
	{"wrong-password", "orders-svc", "not-the-password"},
	{"unknown-user", "nobody", "whatever"},
	{"no-credentials", "", ""},
}

// secStartTarget returns run.sh's ActiveMQ, or starts Wharf with
// activemq-<variant>.xml (JAAS by default), skipping when this build
// cannot load or enforce the security configuration yet.
func secStartTarget(t *testing.T) *secTarget {
	t.Helper()
	if os.Getenv(envSecActiveMQ) == "1" {
		return &secTarget{activeMQ: true, stomp: os.Getenv(envSecSTOMP), mqtt: os.Getenv(envSecMQTT), openwire: os.Getenv(envSecOpenWire)}
	}
	if external {
		t.Skipf("the security matrix runs against %s=1 (run.sh) or in process", envSecActiveMQ)
	}
	variant := os.Getenv(envSecVariant)
	if variant == "" {
		variant = "jaas"
	}
	dir, err := filepath.Abs(secDir)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "activemq-"+variant+".xml")
	loaded, err := config.LoadFile(file, map[string]string{
		"activemq.conf":                   dir,
		"activemq.data":                   t.TempDir(),
		"java.security.auth.login.config": filepath.Join(dir, "login.config"),
		"wharf.sec.openwire.port":         "0",
		"wharf.sec.stomp.port":            "0",
		"wharf.sec.mqtt.port":             "0",
	})
	if err != nil {
		t.Fatalf("load %s: %v", file, err)
	}
	f := wiring.Factories()
	b := brokertest.Start(t, f, brokertest.WithConfig(func(c *config.Config) {
		*c = *loaded
		c.Persistence.Kind = config.KindMemory
		// Debian's ActiveMQ has no WebSocket transport: Wharf's runs the
		// STOMP and MQTT cells over one as well.
		c.Transports = append(c.Transports,
			config.Transport{Name: "ws", URI: "ws://127.0.0.1:0", Scheme: "ws", Host: "127.0.0.1", Options: map[string]string{}},
			config.Transport{Name: "amqp", URI: "amqp://127.0.0.1:0", Scheme: "amqp", Host: "127.0.0.1", Options: map[string]string{}})
	}))
	return &secTarget{stomp: b.STOMPAddr(), mqtt: b.MQTTAddr(), openwire: b.Addr("openwire").String(), wsAddr: b.Addr("ws").String(),
		amqp: b.Addr("amqp").String()}
}

// secLike maps a protocol ActiveMQ 5.17 does not serve to the one whose
// cells it is compared with, by kind (secKind).
var secLike = map[string]string{"mqtt5": "mqtt", "amqp": "stomp"}

// secRefused matches an outcome that is a refusal in any protocol.
var secRefused = regexp.MustCompile(`not authorized|invalid|unauthorized|auth failed|CONNACK [1-9]|0x8[0-9a-f]|closed`)

// secKind reduces an outcome to "refused" or "ok" plus what the verifier
// found (the part after " | ").
func secKind(outcome string) string {
	head, check, _ := strings.Cut(outcome, " | ")
	k := "ok"
	// MQTT 3.1.1 on ActiveMQ acknowledges a refused PUBLISH and drops it.
	dropped := head == "PUBACK" && strings.HasSuffix(check, "=0")
	if secRefused.MatchString(head) || dropped {
		k = "refused"
	}
	if check != "" {
		k += " " + check
	}
	return k
}

var secTempName = regexp.MustCompile(`User (\S+) is not authorized to (?:create|read from): temp-queue://\S+`)

// secMatrix records cells in order. Outcomes have the run's unique tag
// replaced by "ID", so that they compare across runs and brokers.
type secMatrix struct {
	tag   string
	lines []string
}

func (m *secMatrix) cell(name, outcome string) {
	// Destination names carry the tag and the protocol (secDestsFor);
	// both become "ID", so that a WebSocket cell compares with its TCP one.
	for _, p := range []string{"stompws", "mqttws", "stomp", "mqtt5", "mqtt", "jmsnoadv", "jms", "amqp"} {
		outcome = strings.ReplaceAll(outcome, m.tag+"_"+p, "ID")
	}
	outcome = strings.ReplaceAll(outcome, m.tag, "ID")
	// A temporary destination's name holds the broker's connection id; and
	// ActiveMQ checks a STOMP /temp-queue/ SUBSCRIBE twice (admin to create
	// the queue, read to consume it) on two paths that race, so either
	// text can come first.
	outcome = secTempName.ReplaceAllString(outcome, "User $1 is not authorized to (create|read from): temp-queue://TEMP")
	m.lines = append(m.lines, strings.ReplaceAll(name, m.tag, "ID")+"\t"+outcome)
}

// TestConformanceSecurityMatrix runs the whole matrix and compares it with
// matrix.golden, listing every cell that differs.
func TestConformanceSecurityMatrix(t *testing.T) {
	tg := secStartTarget(t)
	m := &secMatrix{tag: "x" + runID}
	secColdConnects(t, tg, m)
	v := newSecVerifier(t, tg, m.tag)
	defer v.close()
	secSTOMPCells(t, tg, v, m, "stomp", tg.stomp, false)
	secMQTTCells(t, tg, v, m, "mqtt", tg.mqtt, wire.Version311)
	if tg.wsAddr != "" {
		secSTOMPCells(t, tg, v, m, "stompws", tg.wsAddr, true)
		secMQTTCells(t, tg, v, m, "mqttws", "ws://"+tg.wsAddr, wire.Version311)
	}
	if !tg.activeMQ {
		// ActiveMQ 5.17 has neither MQTT 5 nor (in Debian) AMQP: these
		// cells are compared with the MQTT 3.1.1 and STOMP cells by kind
		// (accepted or refused, and what the verifier found).
		secMQTTCells(t, tg, v, m, "mqtt5", tg.mqtt, wire.Version5)
		secAMQPCells(t, tg, v, m)
	}
	secJMSCells(t, tg, v, m)

	got := strings.Join(m.lines, "\n") + "\n"
	t.Logf("security matrix (%d cells):\n%s", len(m.lines), got)
	// The comparison indexes cells by name: a repeated name would hide
	// all but its last outcome.
	names := map[string]bool{}
	for _, l := range m.lines {
		k, _, _ := strings.Cut(l, "\t")
		if names[k] {
			t.Errorf("cell %q recorded twice: cell names must be unique", k)
		}
		names[k] = true
	}
	if tg.activeMQ && os.Getenv(envSecUpdate) == "1" {
		if err := os.WriteFile(secGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(secGolden)
	if err != nil {
		t.Fatalf("%v (run run.sh with %s=1 to record ActiveMQ's outcomes)", err, envSecUpdate)
	}
	side := "Wharf"
	if tg.activeMQ {
		side = "this ActiveMQ run"
	}
	known := secKnownDifferences(t, tg)
	var unexpected, expected strings.Builder
	seen := map[string]bool{}
	for _, d := range secDeltas(string(want), got, side) {
		if reason, ok := known[d.key]; ok {
			seen[d.key] = true
			fmt.Fprintf(&expected, "%s    (%s)\n", d.text, reason)
		} else {
			unexpected.WriteString(d.text)
		}
	}
	if expected.Len() > 0 {
		t.Logf("known differences from ActiveMQ 5.17 (%s):\n%s", secKnown, expected.String())
	}
	for k := range known {
		if !seen[k] {
			t.Logf("%s: %q now matches ActiveMQ 5.17; remove it from the list", secKnown, k)
		}
	}
	if unexpected.Len() > 0 {
		t.Errorf("cells that differ from ActiveMQ 5.17 (%s):\n%s", secGolden, unexpected.String())
	}
}

// secDiff lists, cell by cell, the lines of got that differ from want.
// A golden outcome may list alternatives separated by " || ": ActiveMQ
// races in a few cells (see conformance/README.md) and any of them matches.
func secDiff(want, got, side string) string {
	var b strings.Builder
	for _, d := range secDeltas(want, got, side) {
		b.WriteString(d.text)
	}
	return b.String()
}

// secDelta is one cell that differs, and how.
type secDelta struct{ key, text string }

// secDeltas lists the differing cells of got, in order.
func secDeltas(want, got, side string) []secDelta {
	same := func(w, g string) bool {
		for _, alt := range strings.Split(w, " || ") {
			if alt == g {
				return true
			}
		}
		return false
	}
	index := func(s string) (map[string]string, []string) {
		m := map[string]string{}
		var order []string
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			k, v, _ := strings.Cut(l, "\t")
			if _, dup := m[k]; !dup {
				order = append(order, k)
			}
			m[k] = v
		}
		return m, order
	}
	w, order := index(want)
	g, gorder := index(got)
	var out []secDelta
	add := func(k, format string, args ...any) {
		out = append(out, secDelta{k, fmt.Sprintf(format, args...)})
	}
	for _, k := range order {
		if gv, ok := g[k]; !ok {
			add(k, "%s\n    ActiveMQ: %s\n    %s: (cell not run)\n", k, w[k], side)
		} else if !same(w[k], gv) {
			add(k, "%s\n    ActiveMQ: %s\n    %s: %s\n", k, w[k], side, gv)
		}
	}
	for _, k := range gorder {
		proto, rest, _ := strings.Cut(k, "/")
		// Protocols ActiveMQ 5.17 lacks compare by kind with one it has.
		if like, ok := secLike[proto]; ok {
			if wv, ok := w[like+"/"+rest]; ok && secKind(g[k]) != secKind(strings.Split(wv, " || ")[0]) {
				add(k, "%s\n    ActiveMQ (%s, by kind %s): %s\n    %s (kind %s): %s\n", k, like, secKind(wv), wv, side, secKind(g[k]), g[k])
			}
			continue
		}
		// WebSocket cells compare with the same protocol's TCP cells.
		if tcp, ok := strings.CutSuffix(proto, "ws"); ok {
			if wv, ok := w[tcp+"/"+rest]; ok && !same(wv, g[k]) {
				add(k, "%s\n    ActiveMQ (%s over TCP): %s\n    %s: %s\n", k, tcp, wv, side, g[k])
			}
			continue
		}
		if _, ok := w[k]; !ok {
			add(k, "%s\n    ActiveMQ: (no such cell)\n    %s: %s\n", k, side, g[k])
		}
	}
	return out
}

// secColdConnects connects every user over STOMP before any admin has
// touched the broker: on ActiveMQ with seed 000's map a non-admin cannot,
// because the broker would have to create ActiveMQ.Advisory.Connection in
// the user's name.
func secColdConnects(t *testing.T, tg *secTarget, m *secMatrix) {
	// Cell names must be unique (the comparison indexes them): the
	// connects after ops's are "warm".
	for i, u := range []string{"orders-svc", "fulfilment", "ops", "orders-svc", "fulfilment"} {
		su := secUserNamed(u)
		c, out := dialSecSTOMP(tg.stomp, su, "")
		if c != nil {
			c.disconnect()
		}
		phase := "cold"
		if i > 2 {
			phase = "warm"
		}
		m.cell(phase+"/stomp/"+u+"/connect", out)
	}
}

func secUserNamed(name string) secUser {
	for _, u := range secUsers {
		if u.name == name {
			return u
		}
	}
	panic("no user " + name)
}

// ---- STOMP client tolerant of ERROR and close ----

type secFrame struct {
	cmd     string
	headers map[string]string
	body    []byte
}

func (f *secFrame) text() string {
	var b strings.Builder
	b.WriteString(f.cmd)
	for k, v := range f.headers {
		b.WriteString(" " + k + ":" + v)
	}
	b.WriteString(" ")
	b.Write(f.body)
	return b.String()
}

type secSTOMP struct {
	nc     net.Conn
	r      *bufio.Reader
	n      int
	msgs   map[string][]*secFrame // by subscription id
	closed bool
}

// dialSecSTOMP connects as u; the outcome is "ok", "ERROR <message>"
// (plus " +closed" when the broker then closes) or a dial failure. The
// connection is nil unless the outcome is "ok".
func dialSecSTOMP(addr string, u secUser, clientID string) (*secSTOMP, string) {
	nc, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		return nil, "dial: " + err.Error()
	}
	return connectSecSTOMP(nc, u, clientID)
}

func connectSecSTOMP(nc net.Conn, u secUser, clientID string) (*secSTOMP, string) {
	c := &secSTOMP{nc: nc, r: bufio.NewReader(nc), msgs: map[string][]*secFrame{}}
	h := []string{"accept-version:1.2", "host:localhost", "heart-beat:0,0"}
	if u.login != "" {
		h = append(h, "login:"+u.login, "passcode:"+u.pass)
	}
	if clientID != "" {
		h = append(h, "client-id:"+clientID)
	}
	c.write("CONNECT", h, nil)
	f, err := c.read()
	if err != nil {
		nc.Close()
		return nil, "no CONNECTED: " + secErrKind(err)
	}
	switch f.cmd {
	case "CONNECTED":
		return c, "ok"
	case "ERROR":
		out := "ERROR " + f.headers["message"] + c.closedSuffix()
		nc.Close()
		return nil, out
	}
	nc.Close()
	return nil, "unexpected " + f.cmd
}

func secErrKind(err error) string {
	var ne net.Error
	var we *websocket.CloseError
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), conform.IsReset(err), errors.As(err, &we):
		// A WebSocket close frame is the connection closing.
		return "closed"
	}
	return err.Error()
}

// closedSuffix reports whether the broker closed the connection after an
// ERROR: a receipted DISCONNECT is the probe (an answer of any kind means
// open; it is the connection's last frame anyway).
func (c *secSTOMP) closedSuffix() string {
	c.write("DISCONNECT", []string{"receipt:probe"}, nil)
	for {
		f, err := c.read()
		if err != nil {
			c.closed = true
			if k := secErrKind(err); k != "closed" {
				return " +" + k
			}
			return " +closed"
		}
		if f.cmd != "MESSAGE" {
			c.closed = true // DISCONNECTed
			return " +open"
		}
	}
}

func (c *secSTOMP) write(cmd string, headers []string, body []byte) {
	c.nc.SetWriteDeadline(time.Now().Add(wait))
	if _, err := c.nc.Write(conform.EncodeRaw(cmd, headers, body)); err != nil {
		c.closed = true
	}
}

// read returns the next frame within wait (skipping heart-beat EOLs).
func (c *secSTOMP) read() (*secFrame, error) {
	c.nc.SetReadDeadline(time.Now().Add(wait))
	var line string
	for line == "" {
		l, err := c.r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(l, "\r\n")
	}
	f := &secFrame{cmd: line, headers: map[string]string{}}
	for {
		l, err := c.r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		l = strings.TrimRight(l, "\r\n")
		if l == "" {
			break
		}
		k, v, _ := strings.Cut(l, ":")
		if _, ok := f.headers[k]; !ok {
			f.headers[k] = conform.Unescape(v)
		}
	}
	if n, err := strconv.Atoi(f.headers["content-length"]); err == nil {
		f.body = make([]byte, n+1)
		if _, err := io.ReadFull(c.r, f.body); err != nil {
			return nil, err
		}
		f.body = f.body[:n]
		return f, nil
	}
	body, err := c.r.ReadBytes(0)
	if err != nil {
		return nil, err
	}
	f.body = body[:len(body)-1]
	return f, nil
}

// do sends a frame with a receipt and returns "ok" (RECEIPT), "ERROR
// <message>" (and whether the connection stays open) or "closed";
// MESSAGE frames read meanwhile are kept for next.
func (c *secSTOMP) do(cmd string, headers ...string) string {
	if c.closed {
		return "closed"
	}
	c.n++
	id := "r" + strconv.Itoa(c.n)
	c.write(cmd, append(headers, "receipt:"+id), []byte(secBodyFor(cmd, headers)))
	for {
		f, err := c.read()
		if err != nil {
			c.closed = true
			return secErrKind(err)
		}
		switch f.cmd {
		case "RECEIPT":
			if f.headers["receipt-id"] == id {
				return "ok"
			}
		case "ERROR":
			return "ERROR " + f.headers["message"] + c.closedSuffix()
		case "MESSAGE":
			s := f.headers["subscription"]
			c.msgs[s] = append(c.msgs[s], f)
		}
	}
}

// secBodyFor is the body of a SEND: its "body:" pseudo-header.
func secBodyFor(cmd string, headers []string) string {
	if cmd != "SEND" {
		return ""
	}
	for _, h := range headers {
		if b, ok := strings.CutPrefix(h, "body:"); ok {
			return b
		}
	}
	return ""
}

// next returns the next MESSAGE of subscription sub.
func (c *secSTOMP) next(sub string) (*secFrame, error) {
	for len(c.msgs[sub]) == 0 {
		if c.closed {
			return nil, io.EOF
		}
		f, err := c.read()
		if err != nil {
			c.closed = true
			return nil, err
		}
		switch f.cmd {
		case "MESSAGE":
			s := f.headers["subscription"]
			c.msgs[s] = append(c.msgs[s], f)
		case "ERROR":
			return nil, fmt.Errorf("ERROR %s", f.headers["message"])
		}
	}
	f := c.msgs[sub][0]
	c.msgs[sub] = c.msgs[sub][1:]
	return f, nil
}

func (c *secSTOMP) disconnect() {
	if !c.closed {
		c.do("DISCONNECT")
	}
	c.nc.Close()
}

// ---- the verifier: ops, over STOMP, proves what was stored or created ----

// secVerifier is an admin connection that checks, after each refused or
// accepted operation, how many of the operation's messages a destination
// holds and whether a destination was created. It proves absence with
// markers: it sends its own marker after the operation was answered and
// reads up to it.
type secVerifier struct {
	t      *testing.T
	tg     *secTarget
	c      *secSTOMP
	tag    string
	n      int
	topics map[string]string // topic name → subscription id
}

func newSecVerifier(t *testing.T, tg *secTarget, tag string) *secVerifier {
	t.Helper()
	c, out := dialSecSTOMP(tg.stomp, secUserNamed("ops"), "")
	if out != "ok" {
		t.Fatalf("verifier (ops) connect: %s", out)
	}
	v := &secVerifier{t: t, tg: tg, c: c, tag: tag, topics: map[string]string{}}
	if out := c.do("SUBSCRIBE", "id:adv", "destination:/topic/ActiveMQ.Advisory.Queue", "ack:auto"); out != "ok" {
		t.Fatalf("verifier subscribe to ActiveMQ.Advisory.Queue: %s", out)
	}
	// Advisories for the queues that exist already.
	v.created("")
	return v
}

func (v *secVerifier) close() { v.c.disconnect() }

func (v *secVerifier) marker() string {
	v.n++
	return fmt.Sprintf("marker-%s-%d", v.tag, v.n)
}

// queue creates a queue (if needed) and empties it.
func (v *secVerifier) queue(name string) { v.stored(name, "") }

// stored returns how many messages whose body contains mark the queue
// holds, and empties it; it consumes up to its own markers. It returns -1
// when its markers do not arrive within wait.
func (v *secVerifier) stored(name, mark string) int {
	v.t.Helper()
	// ActiveMQ's queue cursor keeps persistent and non-persistent messages
	// apart (StoreQueueCursor) and may dispatch one kind before older ones
	// of the other: one marker of each kind, and every message before both.
	mk := v.marker()
	markers := map[string]bool{mk + "-p": true, mk + "-n": true}
	if out := v.c.do("SEND", "destination:/queue/"+name, "persistent:true", "body:"+mk+"-p"); out != "ok" {
		v.t.Fatalf("verifier send to %s: %s", name, out)
	}
	if out := v.c.do("SEND", "destination:/queue/"+name, "body:"+mk+"-n"); out != "ok" {
		v.t.Fatalf("verifier send to %s: %s", name, out)
	}
	sub := "q" + strconv.Itoa(v.n)
	if out := v.c.do("SUBSCRIBE", "id:"+sub, "destination:/queue/"+name, "ack:auto"); out != "ok" {
		v.t.Fatalf("verifier subscribe to %s: %s", name, out)
	}
	count := 0
	for len(markers) > 0 {
		f, err := v.c.next(sub)
		if err != nil {
			// Something else holds the markers (a consumer the broker
			// kept although it refused it): recorded as -1.
			v.t.Logf("verifier reading %s up to its markers: %v", name, err)
			v.c.closed = false
			v.c.do("UNSUBSCRIBE", "id:"+sub)
			return -1
		}
		if markers[string(f.body)] {
			delete(markers, string(f.body))
			continue
		}
		if mark != "" && bytes.Contains(f.body, []byte(mark)) {
			count++
		}
	}
	if out := v.c.do("UNSUBSCRIBE", "id:"+sub); out != "ok" {
		v.t.Fatalf("verifier unsubscribe from %s: %s", name, out)
	}
	return count
}

// topic subscribes the verifier to a topic (creating it).
func (v *secVerifier) topic(name string) {
	v.t.Helper()
	if _, ok := v.topics[name]; ok {
		return
	}
	sub := "t" + strconv.Itoa(len(v.topics))
	if out := v.c.do("SUBSCRIBE", "id:"+sub, "destination:/topic/"+name, "ack:auto"); out != "ok" {
		v.t.Fatalf("verifier subscribe to topic %s: %s", name, out)
	}
	v.topics[name] = sub
}

// published returns how many messages containing mark the verifier's
// subscription to topic name received before its marker.
func (v *secVerifier) published(name, mark string) int {
	v.t.Helper()
	sub, ok := v.topics[name]
	if !ok {
		v.t.Fatalf("verifier is not subscribed to topic %s", name)
	}
	mk := v.marker()
	if out := v.c.do("SEND", "destination:/topic/"+name, "body:"+mk); out != "ok" {
		v.t.Fatalf("verifier send to topic %s: %s", name, out)
	}
	count := 0
	for {
		f, err := v.c.next(sub)
		if err != nil {
			v.t.Fatalf("verifier reading topic %s up to its marker: %v", name, err)
		}
		if string(f.body) == mk {
			return count
		}
		if bytes.Contains(f.body, []byte(mark)) {
			count++
		}
	}
}

// created reports whether an ActiveMQ.Advisory.Queue advisory naming the
// queue arrived since the last call: the verifier creates a marker queue
// and reads advisories up to the marker queue's.
func (v *secVerifier) created(name string) bool {
	v.t.Helper()
	mq := "other." + v.tag + "." + v.marker()
	if out := v.c.do("SEND", "destination:/queue/"+mq, "body:x"); out != "ok" {
		v.t.Fatalf("verifier send to %s: %s", mq, out)
	}
	seen := false
	for {
		f, err := v.c.next("adv")
		if err != nil {
			v.t.Fatalf("verifier reading ActiveMQ.Advisory.Queue up to %s: %v", mq, err)
		}
		text := f.text()
		if strings.Contains(text, `"`+mq+`"`) || strings.Contains(text, "queue://"+mq) || strings.Contains(text, "/queue/"+mq) {
			return seen
		}
		if name != "" && (strings.Contains(text, `"`+name+`"`) || strings.Contains(text, "queue://"+name) || strings.Contains(text, "/queue/"+name)) {
			seen = true
		}
	}
}

// secDests are one protocol's destinations in the matrix.
type secDests struct {
	orders, dlq, other, topic, events string
}

func secDestsFor(tag, proto string) secDests {
	p := tag + "_" + proto
	return secDests{
		orders: "orders." + p + ".in",
		dlq:    "DLQ." + p,
		other:  "other." + p,
		topic:  "t." + p,
		events: "events." + p,
	}
}

// secSTOMPCells runs the STOMP cells of every user.
func secSTOMPCells(t *testing.T, tg *secTarget, v *secVerifier, m *secMatrix, proto, addr string, ws bool) {
	d := secDestsFor(v.tag, proto)
	for _, q := range []string{d.orders, d.dlq, d.other, "orders.fanout.copy", "audit.fanout"} {
		v.queue(q)
	}
	v.topic(d.topic)
	for _, u := range secUsers {
		cellName := func(op string) string { return proto + "/" + u.name + "/" + op }
		dial := func(clientID string) (*secSTOMP, string) {
			if ws {
				nc, err := dialSecWS(addr, "v12.stomp")
				if err != nil {
					return nil, "dial: " + err.Error()
				}
				return connectSecSTOMP(nc, u, clientID)
			}
			return dialSecSTOMP(addr, u, clientID)
		}
		// run does one operation on a fresh connection and records it
		// with what verify says afterwards.
		run := func(op, clientID string, do func(c *secSTOMP) string, verify func() string) {
			c, out := dial(clientID)
			if c != nil {
				out = do(c)
				c.disconnect()
			} else {
				out = "connect: " + out
			}
			if verify != nil {
				out += " | " + verify()
			}
			m.cell(cellName(op), out)
		}
		c, out := dial("")
		if c != nil {
			c.disconnect()
		}
		m.cell(cellName("connect"), out)
		if out != "ok" {
			continue
		}
		mark := "m-" + proto + "-" + u.name + "-"
		send := func(op, dest string, count func(mark string) int) {
			mk := mark + op
			run("send "+op, "", func(c *secSTOMP) string {
				return c.do("SEND", "destination:"+dest, "body:"+mk)
			}, func() string { return "stored=" + strconv.Itoa(count(mk)) })
		}
		queueCount := func(name string) func(string) int {
			return func(mk string) int { return v.stored(name, mk) }
		}
		send("orders.in", "/queue/"+d.orders, queueCount(d.orders))
		send("DLQ", "/queue/"+d.dlq, queueCount(d.dlq))
		send("other", "/queue/"+d.other, queueCount(d.other))
		send("topic", "/topic/"+d.topic, func(mk string) int { return v.published(d.topic, mk) })

		// Consume and browse orders.in: the verifier puts a message there
		// first; a refused subscriber must not get it (it stays queued).
		for _, browse := range []bool{false, true} {
			op := "consume orders.in"
			h := []string{"id:s", "destination:/queue/" + d.orders, "ack:auto"}
			if browse {
				op = "browse orders.in"
				h = append(h, "browser:true")
			}
			mk := mark + op
			if out := v.c.do("SEND", "destination:/queue/"+d.orders, "body:"+mk); out != "ok" {
				t.Fatalf("verifier send: %s", out)
			}
			run(op, "", func(c *secSTOMP) string {
				out := c.do("SUBSCRIBE", h...)
				if out != "ok" {
					return out
				}
				f, err := c.next("s")
				if err != nil {
					return out + " then " + err.Error()
				}
				return out + " got=" + strconv.FormatBool(string(f.body) == mk)
			}, func() string {
				// A browser leaves it; a refused consumer must have too.
				return "left=" + strconv.Itoa(v.stored(d.orders, mk))
			})
		}

		run("durable subscribe topic", "cid-"+v.tag+"-"+proto+"-"+u.name, func(c *secSTOMP) string {
			return c.do("SUBSCRIBE", "id:d", "destination:/topic/"+d.topic, "ack:auto",
				"activemq.subscriptionName:sub-"+u.name)
		}, nil)

		for _, q := range []string{"orders." + v.tag + "_" + proto + ".new-" + u.name, "other." + v.tag + "_" + proto + ".new-" + u.name} {
			q := q
			op := "create by send " + strings.SplitN(q, ".", 2)[0]
			run(op, "", func(c *secSTOMP) string {
				return c.do("SEND", "destination:/queue/"+q, "body:"+mark+op)
			}, func() string { return "created=" + strconv.FormatBool(v.created(q)) })
			op = "create by subscribe " + strings.SplitN(q, ".", 2)[0]
			q2 := q + "-sub"
			run(op, "", func(c *secSTOMP) string {
				return c.do("SUBSCRIBE", "id:c", "destination:/queue/"+q2, "ack:auto")
			}, func() string { return "created=" + strconv.FormatBool(v.created(q2)) })
		}

		run("temp queue", "", func(c *secSTOMP) string {
			out := c.do("SUBSCRIBE", "id:tmp", "destination:/temp-queue/r", "ack:auto")
			if out != "ok" {
				return "subscribe " + out
			}
			out = c.do("SEND", "destination:/temp-queue/r", "body:"+mark+"temp")
			if out != "ok" {
				return "send " + out
			}
			f, err := c.next("tmp")
			if err != nil {
				return "receive " + err.Error()
			}
			return "ok got=" + strconv.FormatBool(string(f.body) == mark+"temp")
		}, nil)

		run("advisory subscribe ActiveMQ.Advisory.Queue", "", func(c *secSTOMP) string {
			return c.do("SUBSCRIBE", "id:a", "destination:/topic/ActiveMQ.Advisory.Queue", "ack:auto")
		}, nil)

		// Composite: orders.fanout forwards to orders.fanout.copy and
		// audit.fanout.
		mk := mark + "fanout"
		run("send composite orders.fanout", "", func(c *secSTOMP) string {
			return c.do("SEND", "destination:/queue/orders.fanout", "body:"+mk)
		}, func() string {
			return fmt.Sprintf("orders.fanout.copy=%d audit.fanout=%d",
				v.stored("orders.fanout.copy", mk), v.stored("audit.fanout", mk))
		})

		// Virtual topic: events.<p> reaches queue orders.<user>.events.<p>
		// once the user's consumer queue exists.
		cq := "orders." + u.name + "." + d.events
		run("virtual topic consume "+"orders.USER."+"events", "", func(c *secSTOMP) string {
			out := c.do("SUBSCRIBE", "id:vt", "destination:/queue/"+cq, "ack:auto")
			if out != "ok" {
				return out
			}
			if out := v.c.do("SEND", "destination:/topic/"+d.events, "body:"+mark+"vt"); out != "ok" {
				return out + " (verifier send to the virtual topic: " + out + ")"
			}
			f, err := c.next("vt")
			if err != nil {
				return out + " then " + err.Error()
			}
			return out + " got=" + strconv.FormatBool(string(f.body) == mark+"vt")
		}, nil)
		mk = mark + "vtsend"
		run("send virtual topic events", "", func(c *secSTOMP) string {
			return c.do("SEND", "destination:/topic/"+d.events, "body:"+mk)
		}, func() string { return "stored=" + strconv.Itoa(v.stored(cq, mk)) })
	}
}

// ---- MQTT 3.1.1 ----

// secMQTT is a raw MQTT 3.1.1 client that records what the broker answers.
type secMQTT struct {
	v     byte // wire.Version311 or wire.Version5
	nc    net.Conn
	dec   *wire.Decoder
	queue []wire.Packet
	id    uint16
}

func dialSecMQTT(addr string, v byte, u secUser, clientID string, clean bool) (*secMQTT, string) {
	var nc net.Conn
	var err error
	if ws, ok := strings.CutPrefix(addr, "ws://"); ok {
		nc, err = dialSecWS(ws, "mqtt")
	} else {
		nc, err = net.DialTimeout("tcp", addr, wait)
	}
	if err != nil {
		return nil, "dial: " + err.Error()
	}
	dec := wire.NewDecoder(wire.DefaultLimits())
	dec.SetVersion(v)
	c := &secMQTT{v: v, nc: nc, dec: dec}
	cn := &wire.Connect{ProtocolName: wire.ProtocolName, ProtocolLevel: v, CleanSession: clean, ClientID: clientID}
	if u.login != "" {
		cn.UsernameFlag, cn.Username = true, u.login
		cn.PasswordFlag, cn.Password = true, []byte(u.pass)
	}
	c.send(&wire.Packet{Type: wire.CONNECT, Connect: cn})
	p, err := c.read()
	if err != nil {
		nc.Close()
		return nil, "no CONNACK: " + secErrKind(err)
	}
	if p.Type != wire.CONNACK {
		nc.Close()
		return nil, "got " + p.Type.String()
	}
	if p.ReasonCode != 0 {
		out := fmt.Sprintf("CONNACK %d", p.ReasonCode)
		if v == wire.Version5 {
			out = fmt.Sprintf("CONNACK %#x", p.ReasonCode)
		}
		out += c.closedSuffix()
		nc.Close()
		return nil, out
	}
	return c, "ok"
}

func (c *secMQTT) send(p *wire.Packet) {
	c.nc.SetWriteDeadline(time.Now().Add(wait))
	c.nc.Write(wire.AppendPacket(nil, p, c.v))
}

func (c *secMQTT) read() (*wire.Packet, error) {
	buf := make([]byte, 4096)
	deadline := time.Now().Add(wait)
	for len(c.queue) == 0 {
		c.nc.SetReadDeadline(deadline)
		n, err := c.nc.Read(buf)
		if n > 0 {
			var derr error
			if c.queue, derr = c.dec.Feed(buf[:n], c.queue); derr != nil {
				return nil, derr
			}
		}
		if err != nil && len(c.queue) == 0 {
			return nil, err
		}
	}
	p := c.queue[0]
	c.queue = c.queue[1:]
	return &p, nil
}

// closedSuffix reports whether the broker closed the connection: a
// PINGREQ is the probe.
func (c *secMQTT) closedSuffix() string {
	c.send(&wire.Packet{Type: wire.PINGREQ})
	if _, err := c.read(); err != nil {
		if k := secErrKind(err); k != "closed" {
			return " +" + k
		}
		return " +closed"
	}
	return " +open"
}

// subscribe returns the SUBACK return code, or how the connection ended.
func (c *secMQTT) subscribe(filter string, qos byte) string {
	c.id++
	id := c.id
	c.send(&wire.Packet{Type: wire.SUBSCRIBE, PacketID: id, Subscriptions: []wire.Subscription{{Filter: filter, QoS: qos}}})
	for {
		p, err := c.read()
		if err != nil {
			return secErrKind(err)
		}
		if p.Type == wire.SUBACK && p.PacketID == id {
			return fmt.Sprintf("SUBACK %#x", p.ReasonCodes)
		}
	}
}

// publish sends a QoS 1 PUBLISH and then a SUBSCRIBE as a barrier: the
// broker answers commands of one connection in order, so a PUBACK comes
// before the SUBACK or not at all.
func (c *secMQTT) publish(topic, payload string) string {
	c.id++
	id := c.id
	c.send(&wire.Packet{Type: wire.PUBLISH, QoS: 1, PacketID: id, Topic: topic, Payload: []byte(payload)})
	c.id++
	bid := c.id
	c.send(&wire.Packet{Type: wire.SUBSCRIBE, PacketID: bid, Subscriptions: []wire.Subscription{{Filter: "ActiveMQ/Advisory/Queue", QoS: 0}}})
	acked := false
	var reason byte
	for {
		p, err := c.read()
		if err != nil {
			if acked {
				return "PUBACK then " + secErrKind(err)
			}
			return "no PUBACK, " + secErrKind(err)
		}
		switch {
		case p.Type == wire.PUBACK && p.PacketID == id:
			acked = true
			reason = p.ReasonCode
		case p.Type == wire.SUBACK && p.PacketID == bid:
			if acked && c.v == wire.Version5 {
				return fmt.Sprintf("PUBACK %#x", reason)
			}
			if acked {
				return "PUBACK"
			}
			return "no PUBACK (barrier SUBACK arrived)"
		}
	}
}

func (c *secMQTT) disconnect() {
	c.send(&wire.Packet{Type: wire.DISCONNECT})
	c.nc.Close()
}

// secMQTTCells runs the MQTT 3.1.1 cells: MQTT addresses topics only
// (a/b is topic a.b), so its sends are topic sends.
func secMQTTCells(t *testing.T, tg *secTarget, v *secVerifier, m *secMatrix, proto, addr string, version byte) {
	d := secDestsFor(v.tag, proto)
	v.topic(d.topic)
	v.topic(d.orders)
	mqttName := func(dest string) string { return strings.ReplaceAll(dest, ".", "/") }
	for _, u := range secUsers {
		cellName := func(op string) string { return proto + "/" + u.name + "/" + op }
		run := func(op string, clientID string, clean bool, do func(c *secMQTT) string, verify func() string) {
			c, out := dialSecMQTT(addr, version, u, clientID, clean)
			if c != nil {
				out = do(c)
				c.disconnect()
			} else {
				out = "connect: " + out
			}
			if verify != nil {
				out += " | " + verify()
			}
			m.cell(cellName(op), out)
		}
		c, out := dialSecMQTT(addr, version, u, "c-"+v.tag+"-"+u.name, true)
		if c != nil {
			c.disconnect()
		}
		m.cell(cellName("connect"), out)
		if out != "ok" {
			continue
		}
		mark := "m-" + proto + "-" + u.name + "-"
		for _, dest := range []string{d.topic, d.orders} {
			op := "publish topic " + strings.SplitN(dest, ".", 2)[0]
			mk := mark + op
			run(op, "p-"+v.tag+"-"+u.name, true, func(c *secMQTT) string {
				return c.publish(mqttName(dest), mk)
			}, func() string { return "delivered=" + strconv.Itoa(v.published(dest, mk)) })
		}
		run("subscribe topic t", "s-"+v.tag+"-"+u.name, true, func(c *secMQTT) string {
			return c.subscribe(mqttName(d.topic), 1)
		}, nil)
		run("durable subscribe topic t", "d-"+v.tag+"-"+u.name, false, func(c *secMQTT) string {
			return c.subscribe(mqttName(d.topic), 1)
		}, nil)
		run("subscribe ActiveMQ/Advisory/Queue", "a-"+v.tag+"-"+u.name, true, func(c *secMQTT) string {
			return c.subscribe("ActiveMQ/Advisory/Queue", 0)
		}, nil)
		mk := mark + "vt"
		cq := "orders." + u.name + "." + d.events
		v.queue(cq)
		run("publish virtual topic events", "v-"+v.tag+"-"+u.name, true, func(c *secMQTT) string {
			return c.publish(mqttName(d.events), mk)
		}, func() string { return "stored=" + strconv.Itoa(v.stored(cq, mk)) })
	}
}

// dialSecWS opens a WebSocket to Wharf's ws connector with subprotocol sub
// ("v12.stomp" or "mqtt").
func dialSecWS(addr, sub string) (net.Conn, error) {
	d := websocket.Dialer{Subprotocols: []string{sub}, HandshakeTimeout: wait}
	c, _, err := d.Dial("ws://"+addr+"/", nil)
	if err != nil {
		return nil, err
	}
	return &wsConn{Conn: c}, nil
}

// TestConformanceSecurityMatrixDiff checks the comparison itself: a cell
// that differs is listed with both outcomes, an alternative in the golden
// file matches, WebSocket cells compare with their TCP cells, and missing
// or extra cells are listed.
func TestConformanceSecurityMatrixDiff(t *testing.T) {
	want := "a/u/op\tok\nb/u/op\tCONNACK 5 || closed\nstomp/u/send\tERROR x\nc/u/gone\tok\n"
	got := "a/u/op\tERROR y\nb/u/op\tclosed\nstomp/u/send\tERROR x\nstompws/u/send\tok\nd/u/new\tok\n"
	diff := secDiff(want, got, "Wharf")
	for _, s := range []string{"a/u/op\n    ActiveMQ: ok\n    Wharf: ERROR y", "c/u/gone", "(cell not run)",
		"stompws/u/send\n    ActiveMQ (stomp over TCP): ERROR x\n    Wharf: ok", "d/u/new", "(no such cell)"} {
		if !strings.Contains(diff, s) {
			t.Errorf("diff lacks %q:\n%s", s, diff)
		}
	}
	if strings.Contains(diff, "b/u/op") || strings.Contains(diff, "stomp/u/send\n") {
		t.Errorf("diff lists matching cells:\n%s", diff)
	}
	same := "a/u/op\tok\nstomp/u/send\tok\nstompws/u/send\tok\n"
	if d := secDiff(same, same, "Wharf"); d != "" {
		t.Errorf("identical tables differ:\n%s", d)
	}
}
