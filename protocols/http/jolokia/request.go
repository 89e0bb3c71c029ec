package jolokia

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// request is one Jolokia request, from a GET path or a POST object.
type request struct {
	typ    string // read, write, exec, search, list, version
	mbean  string // as given; parsed by the handler (its error is per request)
	attrs  []string
	multi  bool     // attribute given as an array or a comma list: the answer is a map
	path   string   // the inner path as written ("!/" a slash inside an element)
	parts  []string // the inner path's elements
	op     string
	args   []any // strings from GET; JSON values (json.Number for numbers) from POST
	value  any   // write
	config map[string]string
}

// maxArgs bounds the arguments of one exec, maxAttrs the attribute list
// of one read: far above any operation or MBean here, far below a
// request that only wants to cost us memory.
const (
	maxArgs  = 32
	maxAttrs = 256
)

// echo is the "request" member of the response, as Jolokia echoes the
// request it understood.
func (q *request) echo(mbean string) map[string]any {
	m := map[string]any{"type": q.typ}
	if mbean != "" {
		m["mbean"] = mbean
	}
	switch {
	case q.multi:
		m["attribute"] = q.attrs
	case len(q.attrs) == 1:
		m["attribute"] = q.attrs[0]
	}
	if q.path != "" {
		m["path"] = q.path
	}
	if q.op != "" {
		m["operation"] = q.op
		args := q.args
		if args == nil {
			args = []any{}
		}
		m["arguments"] = args
	}
	if q.typ == "write" {
		m["value"] = q.value
	}
	return m
}

// parseGET reads a request from the path after the agent's base URL
// (escaped, as on the wire) and the query parameters: the elements are
// separated by '/', "!/" is a '/' inside an element and "!!" a '!', and
// each element is then percent-decoded.
func parseGET(escapedPath string, query url.Values) (*request, error) {
	parts, err := splitPath(escapedPath)
	if err != nil {
		return nil, err
	}
	q := &request{config: map[string]string{}}
	for k, v := range query {
		if len(v) > 0 && k != "p" {
			q.config[k] = v[0]
		}
	}
	if len(parts) == 0 {
		q.typ = "version" // the agent's base URL answers with its version
		return q, nil
	}
	q.typ, parts = parts[0], parts[1:]
	need := func(n int, what string) error {
		if len(parts) < n {
			return badRequest("%s request needs %s in the path", q.typ, what)
		}
		return nil
	}
	switch q.typ {
	case "version":
	case "read":
		if err := need(1, "an MBean name"); err != nil {
			return nil, err
		}
		q.mbean = parts[0]
		if len(parts) > 1 && parts[1] != "" {
			q.attrs = splitCSV(parts[1])
			q.multi = len(q.attrs) > 1
			if len(q.attrs) > maxAttrs {
				return nil, badRequest("more than %d attributes", maxAttrs)
			}
		}
		q.setPath(parts[min(2, len(parts)):])
	case "write":
		if err := need(3, "an MBean name, an attribute and a value"); err != nil {
			return nil, err
		}
		q.mbean, q.attrs, q.value = parts[0], []string{parts[1]}, getArg(parts[2])
		q.setPath(parts[3:])
	case "exec":
		if err := need(2, "an MBean name and an operation"); err != nil {
			return nil, err
		}
		q.mbean, q.op = parts[0], parts[1]
		if len(parts)-2 > maxArgs {
			return nil, badRequest("more than %d arguments", maxArgs)
		}
		for _, a := range parts[2:] {
			q.args = append(q.args, getArg(a))
		}
	case "search":
		if err := need(1, "an MBean pattern"); err != nil {
			return nil, err
		}
		q.mbean = parts[0]
	case "list":
		q.setPath(parts)
	default:
		return nil, badRequest("unknown request type %q", q.typ)
	}
	return q, nil
}

// setPath sets the inner path from its elements.
func (q *request) setPath(parts []string) {
	if len(parts) == 0 {
		return
	}
	q.parts = parts
	esc := make([]string, len(parts))
	for i, p := range parts {
		esc[i] = strings.ReplaceAll(strings.ReplaceAll(p, "!", "!!"), "/", "!/")
	}
	q.path = strings.Join(esc, "/")
}

func (q *request) pathParts() []string { return q.parts }

// splitInner splits an inner path of a POST request: elements separated
// by '/', "!/" a slash and "!!" a '!' inside one.
func splitInner(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '!' && i+1 < len(p):
			i++
			cur.WriteByte(p[i])
		case c == '/':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(parts, cur.String())
}

// getArg is a GET argument: "[null]" is null and `""` the empty string,
// as Jolokia writes them in a path.
func getArg(s string) any {
	switch s {
	case "[null]":
		return nil
	case `""`:
		return ""
	}
	return s
}

// splitPath splits an escaped URL path into its Jolokia elements.
func splitPath(p string) ([]string, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil, nil
	}
	var parts []string
	var cur strings.Builder
	flush := func() error {
		s, err := url.PathUnescape(cur.String())
		if err != nil {
			return badRequest("invalid escape in the path: %v", err)
		}
		parts = append(parts, s)
		cur.Reset()
		return nil
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '!' && i+1 < len(p):
			i++
			cur.WriteByte(p[i])
		case c == '/':
			if err := flush(); err != nil {
				return nil, err
			}
		default:
			cur.WriteByte(c)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return parts, nil
}

// splitCSV splits a comma list of attribute names; "\," is a comma
// inside a name.
func splitCSV(s string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case s[i] == ',':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(s[i])
		}
	}
	return append(out, cur.String())
}

// parsePOST reads a POST body: one request object, or an array of them
// (a bulk request), which bulk reports. A body that is not JSON fails as
// a whole; an element that is not a valid request gets its own error.
func parsePOST(body []byte, maxBulk int) (reqs []*request, errs []error, bulk bool, err error) {
	body = bytes.TrimSpace(body)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, nil, false, badRequest("Invalid JSON request: %v", err)
	}
	if dec.More() {
		return nil, nil, false, badRequest("Invalid JSON request: data after the request")
	}
	var items []any
	switch v := raw.(type) {
	case map[string]any:
		items = []any{v}
	case []any:
		bulk = true
		items = v
		if len(items) > maxBulk {
			return nil, nil, true, badRequest("bulk request of %d requests exceeds the limit of %d", len(items), maxBulk)
		}
	default:
		return nil, nil, false, badRequest("Invalid JSON request: neither an object nor an array")
	}
	reqs = make([]*request, len(items))
	errs = make([]error, len(items))
	for i, it := range items {
		obj, ok := it.(map[string]any)
		if !ok {
			errs[i] = badRequest("bulk element %d is not a request object", i)
			continue
		}
		reqs[i], errs[i] = fromJSON(obj)
	}
	return reqs, errs, bulk, nil
}

// fromJSON turns one request object into a request.
func fromJSON(obj map[string]any) (*request, error) {
	str := func(k string) (string, error) {
		v, ok := obj[k]
		if !ok || v == nil {
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", badRequest("%q must be a string", k)
		}
		return s, nil
	}
	q := &request{config: map[string]string{}}
	var err error
	if q.typ, err = str("type"); err != nil {
		return nil, err
	}
	if q.typ == "" {
		return nil, badRequest("request has no type")
	}
	if _, ok := obj["target"]; ok {
		return nil, badRequest("proxy requests (target) are not supported")
	}
	if q.mbean, err = str("mbean"); err != nil {
		return nil, err
	}
	if q.path, err = str("path"); err != nil {
		return nil, err
	}
	q.parts = splitInner(q.path)
	if q.op, err = str("operation"); err != nil {
		return nil, err
	}
	switch a := obj["attribute"].(type) {
	case nil:
	case string:
		q.attrs = []string{a}
	case []any:
		if len(a) > maxAttrs {
			return nil, badRequest("more than %d attributes", maxAttrs)
		}
		q.multi = true
		for _, x := range a {
			s, ok := x.(string)
			if !ok {
				return nil, badRequest("attribute names must be strings")
			}
			q.attrs = append(q.attrs, s)
		}
	default:
		return nil, badRequest("\"attribute\" must be a string or an array of strings")
	}
	switch a := obj["arguments"].(type) {
	case nil:
	case []any:
		if len(a) > maxArgs {
			return nil, badRequest("more than %d arguments", maxArgs)
		}
		q.args = a
	default:
		return nil, badRequest("\"arguments\" must be an array")
	}
	q.value = obj["value"]
	if c, ok := obj["config"].(map[string]any); ok {
		for k, v := range c {
			q.config[k] = fmt.Sprint(v)
		}
	}
	switch q.typ {
	case "read", "write", "exec", "search":
		if q.mbean == "" {
			return nil, badRequest("%s request has no mbean", q.typ)
		}
	case "list", "version":
	default:
		return nil, badRequest("unknown request type %q", q.typ)
	}
	if q.typ == "exec" && q.op == "" {
		return nil, badRequest("exec request has no operation")
	}
	if q.typ == "write" && len(q.attrs) != 1 {
		return nil, badRequest("write request needs exactly one attribute")
	}
	return q, nil
}
