package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/http/internal/samesite"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configure a Handler.
type Options struct {
	// Prefix is where the console is mounted ("/admin"), without a
	// trailing slash.
	Prefix string
	// Engine returns the broker shown; nil while it starts or stops (the
	// pages answer 503 then).
	Engine func() *engine.Engine
	// Started returns when the broker started, for its uptime.
	Started func() time.Time
	// Login returns who made a request and whether they hold the admin
	// role; the server has authenticated the request already.
	Login func(*http.Request) (user string, admin bool)
	// Secret keys the CSRF tokens; a random one when empty (the tokens of
	// one process are then refused by the next: a reload fixes that).
	Secret []byte
	// PageSize is the rows a list shows per page (50).
	PageSize int
	// Now is the clock (time.Now).
	Now func() time.Time
	// Logger; nil discards.
	Logger *slog.Logger
}

// Handler serves the console. Safe for concurrent use.
type Handler struct {
	o     Options
	log   *slog.Logger
	mux   *http.ServeMux
	pages map[string]*template.Template
	rates rateSampler
}

// New builds the console.
func New(o Options) (*Handler, error) {
	if o.PageSize <= 0 {
		o.PageSize = 50
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Started == nil {
		t := o.Now()
		o.Started = func() time.Time { return t }
	}
	if len(o.Secret) == 0 {
		o.Secret = make([]byte, 32)
		rand.Read(o.Secret)
	}
	if o.Login == nil {
		o.Login = func(*http.Request) (string, bool) { return "", false }
	}
	h := &Handler{o: o, log: o.Logger, mux: http.NewServeMux(), pages: map[string]*template.Template{}}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", n, err)
		}
		h.pages[base] = t
	}
	p := o.Prefix
	static, _ := fs.Sub(staticFS, "static")
	h.mux.Handle("GET "+p+"/static/", http.StripPrefix(p+"/static/", staticHandler(http.FileServerFS(static))))
	get := func(path string, f func(w http.ResponseWriter, r *http.Request, e *engine.Engine) (*view, error), admin bool) {
		h.mux.HandleFunc("GET "+p+path, h.page(f, admin))
	}
	h.mux.HandleFunc("GET "+p+"/{$}", h.page(h.overview, false))
	get("/index.jsp", h.overview, false)
	get("/queues.jsp", h.queues, false)
	get("/topics.jsp", h.topics, false)
	get("/browse.jsp", h.browse, true)
	get("/message.jsp", h.message, true)
	get("/send.jsp", h.sendForm, true)
	get("/connections.jsp", h.connections, false)
	get("/subscribers.jsp", h.subscribers, false)
	get("/scheduled.jsp", h.scheduled, false)
	get("/network.jsp", h.network, false)
	for name, f := range map[string]actionFunc{
		"createDestination": h.createDestination,
		"deleteDestination": h.deleteDestination,
		"purgeDestination":  h.purgeDestination,
		"sendMessage":       h.sendMessage,
		"deleteMessage":     h.deleteMessage,
		"moveMessage":       h.moveMessage,
		"copyMessage":       h.copyMessage,
		"retryMessages":     h.retryMessages,
		"closeConnection":   h.closeConnection,
		"createSubscriber":  h.createSubscriber,
		"deleteSubscriber":  h.deleteSubscriber,
		"deleteJob":         h.deleteJob,
	} {
		h.mux.HandleFunc(p+"/"+name+".action", h.action(f))
	}
	h.mux.HandleFunc(p+"/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "404 not found: the console has no page "+r.URL.Path, http.StatusNotFound)
	})
	return h, nil
}

// ServeHTTP serves the console's pages and actions.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	// Only the console's own script and stylesheet; never in a frame.
	hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
	h.mux.ServeHTTP(w, r)
}

func staticHandler(fs http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=3600")
		fs.ServeHTTP(w, r)
	})
}

// view is what a page handler gives the layout.
type view struct {
	Page  string // template name
	Title string
	Nav   string // the menu entry to highlight
	Data  any
}

// layoutData is what the templates see.
type layoutData struct {
	Prefix, Title, Nav, User, CSRF, Broker, Version string
	Admin                                           bool
	Flash                                           string
	FlashErr                                        bool
	Path                                            string // the page's path and query, to come back to
	Data                                            any
}

// page wraps a page handler: the broker must be ready, admin pages need
// the admin role, and the view is rendered in the layout.
func (h *Handler) page(f func(w http.ResponseWriter, r *http.Request, e *engine.Engine) (*view, error), admin bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		e := h.o.Engine()
		if e == nil {
			http.Error(w, "503 service unavailable: the broker is starting or stopping", http.StatusServiceUnavailable)
			return
		}
		user, isAdmin := h.o.Login(r)
		if admin && !isAdmin {
			http.Error(w, "403 forbidden: this page shows messages and needs the admin role", http.StatusForbidden)
			return
		}
		v, err := f(w, r, e)
		if err != nil {
			code := http.StatusBadRequest
			if he, ok := err.(*httpError); ok {
				code = he.code
			}
			http.Error(w, fmt.Sprintf("%d %s: %v", code, strings.ToLower(http.StatusText(code)), err), code)
			return
		}
		d := layoutData{
			Prefix: h.o.Prefix, Title: v.Title, Nav: v.Nav, User: user, Admin: isAdmin,
			CSRF: h.token(user), Broker: e.BrokerName(), Version: brokerVersion(), Path: r.URL.RequestURI(), Data: v.Data,
		}
		d.Flash, d.FlashErr = h.takeFlash(w, r)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := h.pages[v.Page].ExecuteTemplate(w, "layout", d); err != nil {
			h.log.Warn("console page not rendered", "page", v.Page, "err", err)
		}
	}
}

// httpError is a page error with its status.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func notFound(format string, a ...any) error {
	return &httpError{http.StatusNotFound, fmt.Sprintf(format, a...)}
}

// token is the CSRF token of user's forms: an HMAC under the process's
// key, which another site's page cannot compute.
func (h *Handler) token(user string) string {
	m := hmac.New(sha256.New, h.o.Secret)
	m.Write([]byte("wharf console csrf\x00"))
	m.Write([]byte(user))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// actionFunc does a change and returns the notice to show and where to go
// back to (the form's "redirect" when empty).
type actionFunc func(r *http.Request, e *engine.Engine) (notice, back string, err error)

// tokenField is the form field that carries the CSRF token (the name
// ActiveMQ's console gives it).
const tokenField = "secret"

// maxFormBytes bounds an action's form (a sent message's body included).
const maxFormBytes = 4 << 20

// action wraps an action: POST only, admin role, same-site and CSRF
// token, then the change, a notice and a redirect (303) back.
func (h *Handler) action(f actionFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, "405 method not allowed: console actions are POSTs from its forms", http.StatusMethodNotAllowed)
			return
		}
		user, admin := h.o.Login(r)
		if !admin {
			http.Error(w, "403 forbidden: this needs the admin role", http.StatusForbidden)
			return
		}
		if why, foreign := samesite.Foreign(r); foreign {
			h.log.Warn("console action refused: cross-site", "path", r.URL.Path, "why", why, "remote", r.RemoteAddr)
			http.Error(w, "403 forbidden: cross-site request refused ("+why+")", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if err := r.ParseMultipartForm(maxFormBytes); err != nil && err != http.ErrNotMultipart {
			http.Error(w, "400 bad request: the form cannot be read: "+err.Error(), http.StatusBadRequest)
			return
		}
		if got := r.PostForm.Get(tokenField); !hmac.Equal([]byte(got), []byte(h.token(user))) {
			h.log.Warn("console action refused: CSRF token", "path", r.URL.Path, "remote", r.RemoteAddr, "user", user)
			http.Error(w, "403 forbidden: the form's CSRF token is missing or wrong (reload the page and try again)", http.StatusForbidden)
			return
		}
		e := h.o.Engine()
		if e == nil {
			http.Error(w, "503 service unavailable: the broker is starting or stopping", http.StatusServiceUnavailable)
			return
		}
		notice, back, err := f(r, e)
		if back == "" {
			back = h.back(r)
		}
		if err != nil {
			h.log.Info("console action failed", "path", r.URL.Path, "user", user, "err", err)
			h.setFlash(w, err.Error(), true)
		} else {
			h.log.Info("console action", "path", r.URL.Path, "user", user, "done", notice)
			h.setFlash(w, notice, false)
		}
		http.Redirect(w, r, back, http.StatusSeeOther)
	}
}

// back is where an action returns: the form's redirect when it is one of
// the console's pages, else the overview.
func (h *Handler) back(r *http.Request) string {
	b := r.PostForm.Get("redirect")
	if strings.HasPrefix(b, h.o.Prefix+"/") && !strings.HasPrefix(b, "//") && !strings.Contains(b, "\\") && !strings.Contains(b, "://") {
		return b
	}
	return h.o.Prefix + "/"
}

const flashCookie = "wharf_console_notice"

func (h *Handler) setFlash(w http.ResponseWriter, msg string, isErr bool) {
	v := "ok:" + msg
	if isErr {
		v = "err:" + msg
	}
	if len(v) > 1000 {
		v = v[:1000]
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: url.QueryEscape(v), Path: h.o.Prefix + "/", MaxAge: 60, HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

func (h *Handler) takeFlash(w http.ResponseWriter, r *http.Request) (string, bool) {
	c, err := r.Cookie(flashCookie)
	if err != nil {
		return "", false
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: "", Path: h.o.Prefix + "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	v, err := url.QueryUnescape(c.Value)
	if err != nil {
		return "", false
	}
	if m, ok := strings.CutPrefix(v, "err:"); ok {
		return m, true
	}
	m, _ := strings.CutPrefix(v, "ok:")
	return m, false
}

// rateSampler keeps one earlier reading of every destination's enqueue
// and dequeue counters, so that a list can show messages per second
// since then without a sampling goroutine: a reading at least a second
// old gives the rates; one older than 10 s is replaced by the current.
type rateSampler struct {
	mu   sync.Mutex
	at   time.Time
	seen map[message.Destination][2]int64
}

func (s *rateSampler) rates(now time.Time, cur map[message.Destination][2]int64) (prev map[message.Destination][2]int64, secs float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen != nil {
		secs = now.Sub(s.at).Seconds()
		prev = s.seen
	}
	if s.seen == nil || secs >= 10 {
		s.at, s.seen = now, cur
	}
	if secs < 1 {
		return nil, 0
	}
	return prev, secs
}
