package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"time"
)

const stopUsage = `Usage:
  wharf stop [flags]

Stops the broker cleanly, as "activemq stop" does: runs the stop operation
of its Broker MBean over the Jolokia API (a login with the admin role),
then waits until its web server stops answering, which it does last, once
the connectors are closed and the store is closed. The broker's "wharf
run" then exits with status 0, as after SIGTERM. --json prints
{"broker": NAME, "stopped": true}.

The wait is bounded by --timeout as the API request is; a broker still
answering then is exit status 1 (it goes on stopping).
` + adminCommon

// stopPoll is how often stop asks the web server whether it is still
// there.
const stopPoll = 100 * time.Millisecond

// runStop is `wharf stop`.
func runStop(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("stop", flag.ContinueOnError)
	o := addAdminFlags(fs)
	pos, err := parseAdmin("stop", fs, args, stopUsage, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("stop takes no arguments, got %q", pos)
	}
	return o.withTimeout(func(ctx context.Context) error {
		a, err := o.connect(ctx)
		if err != nil {
			return err
		}
		if _, err := a.c.Exec(ctx, a.brokerBean(""), "stop"); err != nil {
			return fmt.Errorf("stop broker %s: %w", a.broker, err)
		}
		if err := awaitGone(ctx, o); err != nil {
			return &exitError{code: exitFailed, err: fmt.Errorf("broker %s accepted the stop but %w", a.broker, err)}
		}
		if o.json {
			return printJSON(stdout, map[string]any{"broker": a.broker, "stopped": true})
		}
		fmt.Fprintf(stdout, "Broker %s stopped\n", a.broker)
		return nil
	})
}

// awaitGone polls the web server's /healthz, each time on a new
// connection, until a request fails because nothing listens any more (the
// server has closed its listeners, the broker's last step) or ctx ends.
func awaitGone(ctx context.Context, o *adminOpts) error {
	hc := o.httpClient()
	tr, _ := hc.Transport.(*http.Transport)
	if tr == nil {
		tr = http.DefaultTransport.(*http.Transport)
	}
	tr = tr.Clone()
	tr.DisableKeepAlives = true
	poll := &http.Client{Transport: tr, Timeout: 2 * time.Second}
	url := strings.TrimSuffix(o.url, "/") + "/healthz"
	t := time.NewTicker(stopPoll)
	defer t.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := poll.Do(req)
		if err != nil && closed(err) {
			return nil
		}
		if err == nil {
			resp.Body.Close()
		}
		// An answer, or a failure that does not say the port is closed
		// (a request that timed out): still there, ask again.
		select {
		case <-ctx.Done():
		case <-t.C:
			continue
		}
		break
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("its web server still answers after --timeout %s", o.timeout)
	}
	return ctx.Err()
}

// closed says whether err, from a request on a new connection, means the
// server no longer listens or cut the connection: refused, reset, or
// closed before an answer.
func closed(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
