package conform

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"strings"
	"time"
)

// Target is the broker the cases run against.
type Target struct {
	// Endpoints maps the endpoint names (STOMP, STOMPSmall, OpenWire,
	// MQTT, ...: Endpoints()) to a host:port.
	Endpoints map[string]string
	// User and Password log in, when given.
	User, Password string
	// RestartCmd restarts the broker (run by "sh -c"); cases that need a
	// restart are skipped without it.
	RestartCmd string
	// Restarter, when set, restarts the broker instead of RestartCmd (an
	// in-process broker in tests); it may change Endpoints.
	Restarter func(ctx context.Context) error
	// Prefix makes this run's destination names unique; NewPrefix makes one.
	Prefix string
	// STOMPHost is the host header of STOMP CONNECT frames, "" meaning
	// "localhost" (a virtual host name for some brokers: RabbitMQ wants
	// "/").
	STOMPHost string
	// Refusal is the STOMP frame that refused Identify's CONNECT, if any.
	Refusal string
	// Server is how the broker names itself (the STOMP CONNECTED server
	// header), filled in by Identify.
	Server string
}

// NewPrefix returns a random run prefix.
func NewPrefix() string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// AddURL adds a broker URL to the target: stomp://, tcp:// (or nio://,
// OpenWire), mqtt://, amqp://. A URL whose query holds one of the
// connector options some cases need names that connector instead of the
// protocol's plain one, as the connector's uri in ConfigXML does:
// stomp://...?wireFormat.maxFrameSize=4096 (stomp-small),
// mqtt://...?wireFormat.maxFrameSize=1024 (mqtt-small),
// mqtt://...?transport.publishDollarTopics=true (mqtt-dollar),
// amqp://...?wireFormat.idleTimeout=500 (amqp-idle). Any other query is
// refused. user:pass@ in the URL sets the credentials when none are set
// yet.
func (tg *Target) AddURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %q: %v", ErrBadURL, raw, err)
	}
	if u.Host == "" || u.Port() == "" {
		return fmt.Errorf("%w: %q: want scheme://host:port", ErrBadURL, raw)
	}
	var ep string
	switch u.Scheme {
	case "stomp", "stomp+nio":
		ep = STOMP
	case "tcp", "nio":
		ep = OpenWire
	case "mqtt", "mqtt+nio":
		ep = MQTT
	case "amqp", "amqp+nio":
		ep = AMQP
	default:
		return fmt.Errorf("%w: %q: scheme %q (want stomp, tcp, nio, mqtt or amqp)", ErrBadURL, raw, u.Scheme)
	}
	if q := u.Query(); len(q) > 0 {
		var known []string
		found := ""
		for _, o := range endpointOptions {
			if o.scheme != ep {
				continue
			}
			known = append(known, o.key+"="+o.value)
			if len(q) == 1 && q.Get(o.key) == o.value {
				found = o.endpoint
			}
		}
		if found == "" {
			want := "no query"
			if len(known) > 0 {
				want = "one of " + strings.Join(known, ", ")
			}
			return fmt.Errorf("%w: %q: query %q names no connector the cases use (a %s URL takes %s)", ErrBadURL, raw, u.RawQuery, u.Scheme, want)
		}
		ep = found
	}
	if tg.Endpoints == nil {
		tg.Endpoints = map[string]string{}
	}
	if old, ok := tg.Endpoints[ep]; ok {
		return fmt.Errorf("%w: %q: a %s endpoint is already given (%s)", ErrBadURL, raw, ep, old)
	}
	tg.Endpoints[ep] = u.Host
	if u.User != nil && tg.User == "" {
		tg.User = u.User.Username()
		tg.Password, _ = u.User.Password()
	}
	return nil
}

// Status is a case's outcome.
type Status string

// The outcomes. Skip is expected (the target lacks what the case needs);
// Fail is not.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Result is the outcome of one case against one broker.
type Result struct {
	Case     string        `json:"case"`
	Status   Status        `json:"status"`
	Reason   string        `json:"reason,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	// Deviation is set when the broker showed Wharf's documented deviation
	// from ActiveMQ instead of ActiveMQ's behaviour.
	Deviation    string        `json:"deviation,omitempty"`
	Observations []Observation `json:"observations,omitempty"`
	// Missing lists what the target lacked for the case to run (endpoints,
	// "restart"); the case was skipped without touching the broker.
	Missing []string `json:"missing,omitempty"`
}

// Missing returns the endpoints a case needs that the target lacks, and
// "restart" when it needs a restart command.
func (tg *Target) Missing(c *Case) []string {
	var out []string
	for _, n := range c.Needs {
		if tg.Endpoints[n] == "" {
			out = append(out, n)
		}
	}
	if c.Restart && tg.RestartCmd == "" && tg.Restarter == nil {
		out = append(out, "restart")
	}
	return out
}

// RunCase runs one case against the target and returns its result. It
// returns by the case's time bound (plus a few seconds for clean-up).
func RunCase(ctx context.Context, c *Case, tg *Target) Result {
	res := Result{Case: c.Name}
	if miss := tg.Missing(c); len(miss) > 0 {
		res.Status = Skip
		res.Missing = miss
		res.Reason = "needs " + strings.Join(miss, ", ")
		var how []string
		for _, m := range miss {
			if m == "restart" {
				how = append(how, "--restart-cmd")
			} else if u := EndpointURL(m, "host:port"); strings.Contains(u, "?") {
				// An optioned connector: say which one of ConfigXML.
				how = append(how, fmt.Sprintf("--url '%s', the %s connector of --print-config", u, m))
			}
		}
		if len(how) > 0 {
			res.Reason += " (" + strings.Join(how, "; ") + ")"
		}
		return res
	}
	if tg.Prefix == "" {
		tg.Prefix = NewPrefix()
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	t := &T{name: c.Name, run: &runState{target: tg, deviation: c.Deviation}, ctx: ctx}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer t.runCleanups()
		defer t.recoverPanic()
		c.Run(t)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		t.fail(fmt.Sprintf("exceeded its time bound of %v", c.timeout()))
		// Closing the case's connections ends its blocked reads.
		t.runCleanups()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Observe("runner", "case goroutine still running after clean-up; abandoned")
		}
	}
	res.Duration = time.Since(start)
	t.mu.Lock()
	failed, skipped, reasons := t.failed, t.skipped, t.reasons
	t.mu.Unlock()
	switch {
	case failed:
		res.Status = Fail
	case skipped:
		res.Status = Skip
	default:
		res.Status = Pass
	}
	res.Reason = strings.Join(reasons, "; ")
	t.run.mu.Lock()
	res.Observations = t.run.obs
	res.Deviation = strings.Join(t.run.devs, "; ")
	t.run.mu.Unlock()
	return res
}

// Run runs cases one after the other against the target, calling progress
// (when not nil) before each case and with each result.
func Run(ctx context.Context, cases []*Case, tg *Target, progress func(i int, c *Case, r *Result)) []Result {
	out := make([]Result, 0, len(cases))
	for i, c := range cases {
		if progress != nil {
			progress(i, c, nil)
		}
		if err := ctx.Err(); err != nil {
			out = append(out, Result{Case: c.Name, Status: Skip, Reason: "run interrupted"})
			continue
		}
		r := RunCase(ctx, c, tg)
		out = append(out, r)
		if progress != nil {
			progress(i, c, &r)
		}
		runtime.Gosched()
	}
	return out
}

// Identify asks the broker for its name: the server header of a STOMP
// CONNECTED frame, when the target has a STOMP endpoint. It leaves Server
// empty otherwise.
//
// A broker that has just opened its port may close a connection before
// its STOMP transport is ready (ActiveMQ right after start-up): an empty
// answer is retried until timeout.
func (tg *Target) Identify(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := tg.identify(time.Until(deadline))
		if err == nil || !errors.Is(err, errNoAnswer) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond) // retry interval
	}
}

var errNoAnswer = errors.New("no answer")

func (tg *Target) identify(timeout time.Duration) error {
	addr := tg.Endpoints[STOMP]
	if addr == "" {
		return nil
	}
	if timeout < time.Second {
		timeout = time.Second
	}
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return fmt.Errorf("conform: identify %s: %w", addr, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	h := "CONNECT\naccept-version:1.2\nhost:" + tg.stompHost() + "\n"
	if tg.User != "" {
		h += "login:" + tg.User + "\npasscode:" + tg.Password + "\n"
	}
	if _, err := c.Write([]byte(h + "\n\x00")); err != nil {
		return fmt.Errorf("conform: identify %s: %w", addr, err)
	}
	buf := make([]byte, 4096)
	n := 0
	for n < len(buf) {
		m, err := c.Read(buf[n:])
		n += m
		if strings.Contains(string(buf[:n]), "\x00") || err != nil {
			break
		}
	}
	frame := string(buf[:n])
	if n == 0 {
		return fmt.Errorf("conform: identify %s: %w to CONNECT", addr, errNoAnswer)
	}
	if !strings.HasPrefix(frame, "CONNECTED") {
		// Refused (a login, a virtual host): the cases will say more;
		// the broker stays unnamed.
		first, _, _ := strings.Cut(frame, "\n")
		tg.Server = ""
		tg.Refusal = strings.TrimSpace(first + " " + strings.ReplaceAll(frame[len(first):], "\n", " "))
		return nil
	}
	for _, l := range strings.Split(frame, "\n") {
		if v, ok := strings.CutPrefix(l, "server:"); ok {
			tg.Server = strings.TrimSpace(v)
		}
	}
	c.Write([]byte("DISCONNECT\n\n\x00"))
	return nil
}

func (tg *Target) stompHost() string {
	if tg.STOMPHost == "" {
		return "localhost"
	}
	return tg.STOMPHost
}
