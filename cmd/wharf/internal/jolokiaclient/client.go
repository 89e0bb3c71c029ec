// Package jolokiaclient is the small Jolokia client of wharf's admin
// commands: they manage a running broker over its HTTP API only, the way
// an operator's scripts would, so that they work against any broker that
// serves ActiveMQ's MBeans over Jolokia, not only Wharf.
package jolokiaclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"slices"
	"strings"
)

// Client sends Jolokia requests to one server. It is safe from any
// goroutine.
type Client struct {
	// Base is the server's URL, such as http://127.0.0.1:8161; the
	// requests go to Base/api/jolokia/.
	Base           string
	User, Password string
	HTTP           *http.Client
}

// Error is a request the server answered with an error status: Status is
// the Jolokia status (404 for an unknown MBean, 403 for a refused
// operation, 500 for an operation that failed), Type the Java exception
// class it names.
type Error struct {
	Status  int
	Type    string
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("status %d %s", e.Status, e.Type)
	}
	return e.Message
}

// NotFound says whether err is an unknown MBean or attribute.
func NotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == 404
}

// Unreachable is a server that could not be asked or that refused the
// login: the request never reached an MBean.
type Unreachable struct {
	URL string
	Err error
}

func (e *Unreachable) Error() string { return fmt.Sprintf("broker API at %s: %v", e.URL, e.Err) }
func (e *Unreachable) Unwrap() error { return e.Err }

// response is one Jolokia answer.
type response struct {
	Status    int             `json:"status"`
	Value     json.RawMessage `json:"value"`
	ErrorType string          `json:"error_type"`
	Error     string          `json:"error"`
}

// do posts req and returns its value. A transport failure, a refused
// login or a refused operation is an *Unreachable error; an error of the
// request itself an *Error.
func (c *Client) do(ctx context.Context, req map[string]any) (json.RawMessage, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	url := strings.TrimSuffix(c.Base, "/") + "/api/jolokia/"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, &Unreachable{URL: c.Base, Err: err}
	}
	hr.Header.Set("Content-Type", "application/json")
	if c.User != "" || c.Password != "" {
		hr.SetBasicAuth(c.User, c.Password)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hr)
	if err != nil {
		var ue *neturl.Error // says the method and URL again: keep the cause
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &Unreachable{URL: c.Base, Err: fmt.Errorf("cannot reach it: %w", err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, &Unreachable{URL: c.Base, Err: err}
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized:
		if c.User == "" {
			return nil, &Unreachable{URL: c.Base, Err: errors.New("the server asks for a login: give --user and --password (or WHARF_USER and WHARF_PASSWORD)")}
		}
		return nil, &Unreachable{URL: c.Base, Err: fmt.Errorf("login refused for user %q: wrong user or password", c.User)}
	case http.StatusForbidden:
		return nil, &Unreachable{URL: c.Base, Err: fmt.Errorf("user %q may not do this (operations need the admin role)", c.User)}
	case http.StatusNotFound:
		return nil, &Unreachable{URL: c.Base, Err: fmt.Errorf("no Jolokia API at %s (HTTP 404)", url)}
	default:
		return nil, &Unreachable{URL: c.Base, Err: fmt.Errorf("HTTP %s: %s", resp.Status, firstLine(data))}
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, &Unreachable{URL: c.Base, Err: fmt.Errorf("not a Jolokia answer: %s", firstLine(data))}
	}
	switch r.Status {
	case 200:
		return r.Value, nil
	case 403:
		return nil, &Unreachable{URL: c.Base, Err: fmt.Errorf("user %q may not do this (operations need the admin role): %s", c.User, r.Error)}
	}
	return nil, &Error{Status: r.Status, Type: r.ErrorType, Message: r.Error}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// Search returns the names of the MBeans matching pattern, sorted as the
// server sent them; none is an empty list, not an error.
func (c *Client) Search(ctx context.Context, pattern string) ([]string, error) {
	v, err := c.do(ctx, map[string]any{"type": "search", "mbean": pattern})
	if err != nil {
		return nil, err
	}
	var names []string
	if err := json.Unmarshal(v, &names); err != nil {
		return nil, fmt.Errorf("search %s: %v", pattern, err)
	}
	return names, nil
}

// ReadAll reads attrs (every attribute when none) of each MBean that
// pattern matches, keyed by MBean name then attribute, in one request. A
// pattern that matches nothing, or an MBean that does not exist, is an
// empty map; so is a bean lacking one of attrs, which a pattern read
// leaves out.
func (c *Client) ReadAll(ctx context.Context, pattern string, attrs ...string) (map[string]map[string]any, error) {
	req := map[string]any{"type": "read", "mbean": pattern}
	if len(attrs) > 0 {
		req["attribute"] = attrs
	}
	v, err := c.do(ctx, req)
	if NotFound(err) {
		return map[string]map[string]any{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", pattern, err)
	}
	out := map[string]map[string]any{}
	// A pattern's answer is keyed by bean; a name's is its attributes.
	// The names callers make encode * and ? (EncodePart): a name that
	// holds one is a pattern.
	if !strings.ContainsAny(pattern, "*?") {
		var m map[string]any
		if err := json.Unmarshal(v, &m); err != nil {
			return nil, fmt.Errorf("read %s: %v", pattern, err)
		}
		out[canonical(pattern)] = m
		return out, nil
	}
	if err := json.Unmarshal(v, &out); err != nil {
		return nil, fmt.Errorf("read %s: %v", pattern, err)
	}
	return out, nil
}

// canonical is name with its key properties sorted, as a server keys
// beans (javax.management.ObjectName's canonical name). A name with a
// quoted value is left as it is.
func canonical(name string) string {
	domain, props, ok := strings.Cut(name, ":")
	if !ok || strings.Contains(props, `"`) {
		return name
	}
	ps := strings.Split(props, ",")
	slices.Sort(ps)
	return domain + ":" + strings.Join(ps, ",")
}

// Exec runs operation on mbean with args and returns its result as JSON.
func (c *Client) Exec(ctx context.Context, mbean, operation string, args ...any) (json.RawMessage, error) {
	if args == nil {
		args = []any{}
	}
	return c.do(ctx, map[string]any{"type": "exec", "mbean": mbean, "operation": operation, "arguments": args})
}
