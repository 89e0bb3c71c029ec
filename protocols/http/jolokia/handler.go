package jolokia

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	"wharf/engine"
	"wharf/internal/version"
	"wharf/protocols/http/internal/samesite"
)

// Options configure the Jolokia handler. The zero value of each field
// means its default.
type Options struct {
	// BrokerName is the brokerName key of every ObjectName; "" takes the
	// engine's.
	BrokerName string
	// CanWrite decides whether the request may exec an operation or write
	// an attribute. Every operation needs it, browse too: message bodies
	// are the users' data, not the broker's figures. nil refuses them
	// all: the server that mounts the handler says who is an
	// administrator.
	CanWrite func(*http.Request) bool
	// Prefix is the path the handler is mounted at ("/api/jolokia"); a
	// request path that does not start with it is taken as already
	// stripped of it.
	Prefix string
	// MaxBodyBytes bounds a POST body (1 MiB); a larger one is refused
	// with HTTP 413 before it is parsed.
	MaxBodyBytes int64
	// MaxBulkRequests bounds the requests in one bulk POST (100).
	MaxBulkRequests int
	// MaxBrowseMessages bounds what one browse returns (400, ActiveMQ's
	// maxBrowsePageSize).
	MaxBrowseMessages int
	// Started is when the broker started, for Uptime; zero is the time New
	// is called.
	Started time.Time
	// Stop, when not nil, is the Broker bean's stop operation
	// (BrokerViewMBean.stop): it asks the broker to shut down as a SIGTERM
	// does and returns at once, before the shutdown. nil serves no stop
	// operation.
	Stop func()
	// Connectors are the broker's transport connectors, each served as a
	// ConnectorViewMBean; none when empty.
	Connectors []Connector
	// PersistenceAdapter is the broker's KahaDB store, served as
	// service=PersistenceAdapter; nil (the memory store, mKahaDB) serves
	// none, as ActiveMQ registers the bean for KahaDB only.
	PersistenceAdapter *PersistenceAdapter
	// Now returns the time; nil is time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Handler serves the Jolokia protocol over the engine's MBeans. It keeps
// no state between requests: each one reads the engine afresh. Safe for
// concurrent use.
type Handler struct {
	e       *engine.Engine
	opts    Options
	name    string
	started time.Time
	now     func() time.Time
	log     *slog.Logger
}

// New returns the Jolokia API of engine e, to be mounted at Options.Prefix.
func New(e *engine.Engine, opts Options) http.Handler {
	if opts.Prefix == "" {
		opts.Prefix = "/api/jolokia"
	}
	opts.Prefix = strings.TrimSuffix(opts.Prefix, "/")
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.MaxBulkRequests <= 0 {
		opts.MaxBulkRequests = 100
	}
	if opts.MaxBrowseMessages <= 0 {
		opts.MaxBrowseMessages = 400
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Started.IsZero() {
		opts.Started = opts.Now()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{e: e, opts: opts, name: opts.BrokerName, started: opts.Started, now: opts.Now, log: opts.Logger}
	if h.name == "" {
		h.name = e.BrokerName()
	}
	return h
}

// ServeHTTP answers GET and POST as Jolokia's agent servlet does: HTTP
// 200 with the request's own status in the body, so that one bulk answer
// can carry many. Two refusals are HTTP errors as well, as ActiveMQ's
// Jetty in front of Jolokia makes them: a single request that is not
// allowed to write (403), and a body over the limit (413).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		p := strings.TrimPrefix(r.URL.EscapedPath(), h.opts.Prefix)
		if alt := r.URL.Query().Get("p"); alt != "" {
			p = alt // Jolokia's ?p=/read/... form, for paths a proxy would mangle
		}
		q, err := parseGET(p, r.URL.Query())
		if err != nil {
			h.reply(w, r, http.StatusOK, h.errorResponse(nil, "", err))
			return
		}
		resp := h.do(r, &snapshot{h: h}, q)
		h.reply(w, r, httpStatus(resp), resp)
	case http.MethodPost:
		body, err := io.ReadAll(io.LimitReader(r.Body, h.opts.MaxBodyBytes+1))
		if err != nil {
			h.reply(w, r, http.StatusBadRequest, h.errorResponse(nil, "", badRequest("reading the request body: %v", err)))
			return
		}
		if int64(len(body)) > h.opts.MaxBodyBytes {
			h.reply(w, r, http.StatusRequestEntityTooLarge, h.errorResponse(nil, "", tooLarge(h.opts.MaxBodyBytes)))
			return
		}
		reqs, errs, bulk, err := parsePOST(body, h.opts.MaxBulkRequests)
		if err != nil {
			h.reply(w, r, http.StatusOK, h.errorResponse(nil, "", err))
			return
		}
		snap := &snapshot{h: h}
		out := make([]any, len(reqs))
		query := r.URL.Query()
		for i, q := range reqs {
			if errs[i] != nil {
				out[i] = h.errorResponse(nil, "", errs[i])
				continue
			}
			// As Jolokia's agent does, the query parameters are processing
			// parameters of every POSTed request too (hawtio sends
			// ?canonicalNaming=false so), the request's own config winning.
			for k, v := range query {
				if _, set := q.config[k]; !set && len(v) > 0 {
					q.config[k] = v[0]
				}
			}
			out[i] = h.do(r, snap, q)
		}
		if bulk {
			h.reply(w, r, http.StatusOK, out)
			return
		}
		resp := out[0].(map[string]any)
		h.reply(w, r, httpStatus(resp), resp)
	default:
		w.Header().Set("Allow", "GET, POST")
		h.reply(w, r, http.StatusMethodNotAllowed, h.errorResponse(nil, "", &jmxError{status: 405, typ: "java.lang.UnsupportedOperationException", msg: "HTTP method " + r.Method + " is not supported"}))
	}
}

// httpStatus is the HTTP status of a single answer: 200 but for a
// refused write.
func httpStatus(resp map[string]any) int {
	if resp["status"] == http.StatusForbidden {
		return http.StatusForbidden
	}
	return http.StatusOK
}

func (h *Handler) reply(w http.ResponseWriter, r *http.Request, status int, v any) {
	mime := "text/plain" // Jolokia 1.x's default, which browsers show rather than download
	if r.URL.Query().Get("mimeType") == "application/json" {
		mime = "application/json"
	}
	w.Header().Set("Content-Type", mime+"; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	if err := enc.Encode(v); err != nil {
		h.log.Debug("jolokia response not written", "remote", r.RemoteAddr, "err", err)
	}
}

// do runs one request and returns its response object.
func (h *Handler) do(r *http.Request, snap *snapshot, q *request) map[string]any {
	var on objectName
	mbean := ""
	if q.mbean != "" {
		var err error
		if on, err = parseObjectName(q.mbean); err != nil {
			return h.errorResponse(q, q.mbean, err)
		}
		mbean = h.nameString(q, on)
	}
	var v any
	var err error
	switch q.typ {
	case "version":
		v = h.version()
	case "read":
		v, err = h.read(snap, q, on)
	case "search":
		v = h.search(snap, q, on)
	case "list":
		v, err = h.list(snap, q)
	case "exec":
		v, err = h.exec(r, snap, q, on)
	case "write":
		v, err = h.write(r, snap, q, on)
	}
	if err == nil && len(q.pathParts()) > 0 && q.typ != "list" {
		v, err = navigate(v, q.pathParts())
	}
	if err != nil {
		return h.errorResponse(q, mbean, err)
	}
	return map[string]any{"request": q.echo(mbean), "value": v, "timestamp": h.now().Unix(), "status": http.StatusOK}
}

// errorResponse is Jolokia's error object. Stack traces are never sent:
// they would tell a client about the server's insides.
func (h *Handler) errorResponse(q *request, mbean string, err error) map[string]any {
	var je *jmxError
	if !errors.As(err, &je) {
		je = operationFailed(err)
	}
	resp := map[string]any{"error_type": je.typ, "error": je.Error(), "status": je.status}
	if q != nil {
		resp["request"] = q.echo(mbean)
	}
	return resp
}

// nameString writes an ObjectName in the answer: canonical unless the
// request asked for canonicalNaming=false.
func (h *Handler) nameString(q *request, on objectName) string {
	if q.config["canonicalNaming"] == "false" {
		return on.String()
	}
	return on.canonical()
}

// version is the answer to a version request: Jolokia 1.7's agent and
// protocol versions (what ActiveMQ 5.17 ships), the product Wharf.
func (h *Handler) version() map[string]any {
	return map[string]any{
		"agent":    "1.7.1",
		"protocol": "7.2",
		"config": map[string]any{
			"agentContext":      h.opts.Prefix,
			"canonicalNaming":   "true",
			"includeStackTrace": "false",
			"maxBulkRequests":   h.opts.MaxBulkRequests,
			"maxBodyBytes":      h.opts.MaxBodyBytes,
		},
		"info": map[string]any{"product": "wharf", "vendor": "Wharf", "version": version.Broker},
	}
}

func (h *Handler) read(snap *snapshot, q *request, on objectName) (any, error) {
	beans := snap.find(on)
	if on.isPattern() {
		out := map[string]any{}
		for _, b := range beans {
			vals := map[string]any{}
			if len(q.attrs) == 0 {
				for _, a := range b.attrs {
					vals[a.name] = a.get()
				}
			}
			for _, name := range q.attrs {
				// A bean without the attribute is left out of a pattern
				// read, as Jolokia does.
				if a := b.attr(name); a != nil {
					vals[name] = a.get()
				}
			}
			if len(vals) > 0 {
				out[h.nameString(q, b.name)] = vals
			}
		}
		if len(out) == 0 {
			if len(beans) == 0 {
				return nil, instanceNotFound("No MBean with pattern %s found for reading attributes", on)
			}
			// Jolokia's ReadHandler: beans match, none has the attributes.
			var names []string
			for _, b := range beans {
				names = append(names, b.name.String())
			}
			return nil, badRequest("No matching attributes [%s] found on MBeans [%s]", strings.Join(q.attrs, ", "), strings.Join(names, ", "))
		}
		return out, nil
	}
	if len(beans) == 0 {
		return nil, instanceNotFound("%s", on.canonical())
	}
	b := beans[0]
	if len(q.attrs) == 0 {
		vals := map[string]any{}
		for _, a := range b.attrs {
			vals[a.name] = a.get()
		}
		return vals, nil
	}
	vals := map[string]any{}
	for _, name := range q.attrs {
		a := b.attr(name)
		if a == nil {
			return nil, attributeNotFound(name, on)
		}
		vals[name] = a.get()
	}
	if !q.multi {
		return vals[q.attrs[0]], nil
	}
	return vals, nil
}

// search lists the names matching a pattern; none is an empty list, not
// an error.
func (h *Handler) search(snap *snapshot, q *request, on objectName) any {
	out := []string{}
	for _, b := range snap.find(on) {
		out = append(out, h.nameString(q, b.name))
	}
	sort.Strings(out)
	return out
}

func (h *Handler) exec(r *http.Request, snap *snapshot, q *request, on objectName) (any, error) {
	if on.isPattern() {
		return nil, badRequest("exec needs one MBean, not the pattern %s", on.canonical())
	}
	beans := snap.find(on)
	if len(beans) == 0 {
		return nil, instanceNotFound("%s", on.canonical())
	}
	b := beans[0]
	op, err := pickOperation(b, q.op, len(q.args))
	if err != nil {
		return nil, err
	}
	if err := h.mayWrite(r, "operation "+op.name+" on "+on.canonical()); err != nil {
		return nil, err
	}
	if !op.changes {
		return op.run(q.args)
	}
	h.log.Info("jolokia operation", "mbean", b.name.canonical(), "op", op.signature(), "remote", r.RemoteAddr)
	defer snap.reset()
	return op.run(q.args)
}

// mayWrite checks that r may exec or write: CanWrite must allow it, and
// the request must not come from another site's page (samesite.Foreign).
func (h *Handler) mayWrite(r *http.Request, what string) error {
	if why, foreign := samesite.Foreign(r); foreign {
		return forbidden(what + " from " + why)
	}
	if h.opts.CanWrite == nil || !h.opts.CanWrite(r) {
		return forbidden(what)
	}
	return nil
}

// pickOperation finds the operation a request names: by signature
// ("purge(long)") or, when the name alone is given, the one overload with
// as many parameters as there are arguments.
func pickOperation(b *mbean, name string, nargs int) (*operation, error) {
	sig := strings.ReplaceAll(name, " ", "")
	base, _, hasSig := strings.Cut(sig, "(")
	var named []*operation
	ops := b.operations()
	for i := range ops {
		if ops[i].name == base {
			named = append(named, &ops[i])
		}
	}
	if len(named) == 0 {
		return nil, badRequest("No operation %s found on MBean %s", base, b.name.canonical())
	}
	var fit []*operation
	for _, op := range named {
		if hasSig && op.signature() == sig || !hasSig && len(op.args) == nargs {
			fit = append(fit, op)
		}
	}
	var sigs []string
	for _, op := range named {
		sigs = append(sigs, op.signature())
	}
	switch {
	case len(fit) == 1 && len(fit[0].args) == nargs:
		return fit[0], nil
	case len(fit) == 1:
		return nil, badRequest("Invalid number of operation arguments. Operation %s on %s requires %d parameters, not %d as given",
			fit[0].signature(), b.name.canonical(), len(fit[0].args), nargs)
	case hasSig && len(fit) == 0:
		// Jolokia's words for a signature the MBean does not have.
		return nil, badRequest("No operation %s on MBean %s exists. Known signatures: %s",
			sig, b.name.canonical(), strings.Join(sigs, ", "))
	case len(named) == 1 && !hasSig:
		return nil, badRequest("Invalid number of operation arguments. Operation %s on %s requires %d parameters, not %d as given",
			named[0].signature(), b.name.canonical(), len(named[0].args), nargs)
	}
	return nil, badRequest("Operation %s on MBean %s is overloaded. Signatures found: %s. Use a signature when specifying the operation.",
		name, b.name.canonical(), strings.Join(sigs, ", "))
}

// write sets an attribute that ActiveMQ lets JMX set and returns its
// value before, as Jolokia does. Any other attribute is read-only, which
// JMX reports as AttributeNotFoundException "Read-only attribute: X" (a
// standard MBean with a getter and no setter).
func (h *Handler) write(r *http.Request, snap *snapshot, q *request, on objectName) (any, error) {
	name := q.attrs[0]
	if err := h.mayWrite(r, "write of "+name+" on "+on.canonical()); err != nil {
		return nil, err
	}
	beans := snap.find(on)
	if on.isPattern() || len(beans) == 0 {
		return nil, instanceNotFound("%s", on.canonical())
	}
	b := beans[0]
	a := b.attr(name)
	if a == nil {
		return nil, attributeNotFound(name, on)
	}
	set := b.setters[name]
	if set == nil {
		return nil, &jmxError{status: 404, typ: "javax.management.AttributeNotFoundException", msg: "Read-only attribute: " + name}
	}
	v, err := typedArg(a.typ, q.value)
	if err != nil {
		return nil, err
	}
	old := a.get()
	h.log.Info("jolokia write", "mbean", b.name.canonical(), "attribute", name, "value", v, "remote", r.RemoteAddr)
	defer snap.reset()
	if err := set(v); err != nil {
		return nil, err
	}
	return old, nil
}

// navigate follows a Jolokia inner path into a value: map keys and list
// indexes.
func navigate(v any, parts []string) (any, error) {
	for _, p := range parts {
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[p]
			if !ok {
				return nil, badRequest("Invalid path: no key %q", p)
			}
			v = next
		case []any:
			i, err := intArg(p)
			if err != nil || i < 0 || int(i) >= len(x) {
				return nil, badRequest("Invalid path: no index %q", p)
			}
			v = x[i]
		default:
			return nil, badRequest("Invalid path: %q goes below a simple value", p)
		}
	}
	return v, nil
}
