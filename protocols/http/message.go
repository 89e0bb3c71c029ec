package http

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/http/internal/samesite"
)

// This file is ActiveMQ's REST message servlet (activemq-web
// MessageServlet, mounted at /api/message/* by ActiveMQ's webapps/api):
// POST sends a text message, GET (and DELETE, as ActiveMQ's doDelete)
// consumes one. The destination is the path after /api/message/ with '/'
// read as '.', or the destination parameter, which may say
// queue://, topic:// or channel:// (a queue); otherwise the type
// parameter decides, and without one it is a topic, as the servlet's
// defaultTopicFlag. Parameters come from the query string or a form body.
//
// Each request goes through an engine.Conn opened with the request's
// login as the credentials (Credentials.Protocol "http"): the broker's
// authentication plugin checks them again and its authorization map
// applies to the user, as for any client. Every method needs the admin
// role (RequireAdmin) and is refused from another site's page.
// DEVIATION: ActiveMQ 5.17's jetty.xml lets role user reach /api/* as
// well; Wharf asks admin for every write, and a GET consumes.
//
// Clients: a request naming clientId uses the connection kept for that
// client id and login (ActiveMQ's servlet keeps a WebClient per clientId)
// and its consumer for the destination, kept between requests, so that a
// poller receives every message in order; POST action=unsubscribe with the
// clientId closes it, and it is closed after 30 idle minutes (Jetty's
// default session lifetime, which bounds ActiveMQ's per-session
// WebClients). A request without clientId connects for itself and closes
// its consumer when it ends. DEVIATION: ActiveMQ keys such clients by HTTP
// session cookie; Wharf keeps no sessions, and keys the clientId ones by
// login too, so that one user cannot read through another's consumer.

// The servlet's defaults (MessageServletSupport, MessageServlet).
const (
	// maxReadTimeout is maximumReadTimeout: a GET waits at most this long,
	// and this long when readTimeout is absent, negative or larger.
	maxReadTimeout = 20 * time.Second
	// maxMessageBytes is maxMessageSize, the largest body accepted.
	// DEVIATION: ActiveMQ cuts a longer body short silently; Wharf answers
	// 413.
	maxMessageBytes = 100_000
	// defaultPriority is the servlet's defaultMessagePriority (JMS's
	// default is 4).
	defaultPriority = 5
	// restPrefetch is each consumer's window: the message a GET will
	// return next waits in it, and no more are held from other consumers.
	restPrefetch = 1
)

// Bounds on what clients may make the server hold.
const (
	clientIdle            = 30 * time.Minute
	maxRESTClients        = 1000
	maxConsumersPerClient = 100
)

const (
	restDestinationPrefix = "/api/message"
	// restUnsubscribeAction is the action parameter that closes a client.
	restUnsubscribeAction = "unsubscribe"
	// restConcurrentConsumer is the refusal of a second GET on a consumer
	// in use, in the servlet's words.
	restConcurrentConsumer = "concurrent access to consumer is not supported"
)

// sendParams are the parameters that are not message properties
// (MessageServletSupport.appendParametersToMessage): every other one
// becomes a string property of the message sent, as in ActiveMQ.
var sendParams = map[string]bool{
	"destination": true, "type": true, "body": true,
	"JMSDeliveryMode": true, "JMSPriority": true, "JMSTimeToLive": true,
	"JMSCorrelationID": true, "JMSExpiration": true, "JMSReplyTo": true, "JMSType": true,
}

// messageAPI serves /api/message. Its methods are safe from any goroutine.
type messageAPI struct {
	s *Server
	// idle is how long a clientId's client lives unused (clientIdle;
	// tests shorten it).
	idle time.Duration
	mu   sync.Mutex
	// clients are the clients requests named by clientId.
	clients map[clientKey]*restClient
}

type clientKey struct{ user, id string }

func newMessageAPI(s *Server) *messageAPI {
	return &messageAPI{s: s, idle: clientIdle, clients: map[clientKey]*restClient{}}
}

// restClient is a connection to the engine with a consumer per
// destination. mu serialises the use of conn, which belongs to one
// goroutine at a time.
type restClient struct {
	e         *engine.Engine
	mu        sync.Mutex
	conn      *engine.Conn
	consumers map[message.Destination]*restConsumer
	// inUse counts the requests using it (guarded by messageAPI.mu); the
	// idle timer leaves a client in use alone.
	inUse int
	idle  *time.Timer // nil for a client of one request
}

// restConsumer is a subscription and the deliveries waiting for a GET.
type restConsumer struct {
	sub  *engine.Subscription
	busy atomic.Bool // a GET is waiting on it
	mu   sync.Mutex
	got  []engine.Delivery
	more chan struct{} // signalled when got grows
}

// Deliver is the engine.Sink: it queues and never blocks (the window
// bounds the queue).
func (c *restConsumer) Deliver(d engine.Delivery) {
	c.mu.Lock()
	c.got = append(c.got, d)
	c.mu.Unlock()
	select {
	case c.more <- struct{}{}:
	default:
	}
}

func (c *restConsumer) take() (engine.Delivery, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.got) == 0 {
		return engine.Delivery{}, false
	}
	d := c.got[0]
	c.got = slices.Delete(c.got, 0, 1)
	return d, true
}

// httpError is an answer other than success: a status and its text.
type httpError struct {
	code int
	text string
}

func (e *httpError) Error() string { return e.text }

func badRequest(format string, args ...any) *httpError {
	return &httpError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// engineError maps an engine refusal to its HTTP status, with the text
// ActiveMQ gives a client for it.
func engineError(err error) *httpError {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, engine.ErrNotAuthorized), errors.Is(err, engine.ErrBadCredentials):
		code = http.StatusForbidden
	case errors.Is(err, engine.ErrBadDestination), errors.Is(err, engine.ErrWildcardSend),
		errors.Is(err, engine.ErrBadSelector), errors.Is(err, engine.ErrTempGone):
		code = http.StatusBadRequest
	case errors.Is(err, engine.ErrClosed), errors.Is(err, engine.ErrConnClosed):
		code = http.StatusServiceUnavailable
	}
	return &httpError{code, engine.ClientText(err)}
}

func (a *messageAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	err := a.serve(w, r)
	if err == nil {
		return
	}
	if r.Context().Err() != nil {
		// The client has gone: nobody reads an answer.
		a.s.log.Debug("rest message request abandoned", "remote", r.RemoteAddr, "method", r.Method, "err", err)
		return
	}
	var he *httpError
	if !errors.As(err, &he) {
		he = &httpError{http.StatusInternalServerError, err.Error()}
	}
	if he.code >= 500 {
		a.s.log.Warn("rest message request failed", "remote", r.RemoteAddr, "method", r.Method, "err", he.text)
	}
	http.Error(w, fmt.Sprintf("%d %s: %s", he.code, strings.ToLower(http.StatusText(he.code)), he.text), he.code)
}

func (a *messageAPI) serve(w http.ResponseWriter, r *http.Request) error {
	switch r.Method {
	case http.MethodGet, http.MethodPost, http.MethodDelete:
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		return &httpError{http.StatusMethodNotAllowed, "use POST to send, GET or DELETE to receive"}
	}
	if err := sameSite(r); err != nil {
		return err
	}
	e := a.s.engine.Load()
	if e == nil {
		return &httpError{http.StatusServiceUnavailable, "the broker is starting or stopping"}
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxMessageBytes)
	if err := r.ParseForm(); err != nil {
		return bodyError(err)
	}
	clientID, keyed := r.Form["clientId"]
	if r.Method == http.MethodPost && keyed && r.Form.Get("action") == restUnsubscribeAction {
		a.unsubscribe(clientKey{LoginFrom(r).User, clientID[0]})
		return nil
	}
	d, err := restDestination(r)
	if err != nil {
		return err
	}
	var c *restClient
	if keyed {
		key := clientKey{LoginFrom(r).User, clientID[0]}
		if c, err = a.client(e, key, r); err != nil {
			return err
		}
		defer a.release(key, c)
	} else {
		if c, err = connect(e, r); err != nil {
			return err
		}
		defer c.close()
	}
	if r.Method == http.MethodPost {
		return a.send(w, r, c, d)
	}
	return a.receive(w, r, c, d)
}

// sameSite refuses a request another site's page makes a browser send
// with the operator's cached credentials, as the Jolokia API does.
func sameSite(r *http.Request) error {
	if why, foreign := samesite.Foreign(r); foreign {
		return &httpError{http.StatusForbidden, "refused from " + why}
	}
	return nil
}

func bodyError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &httpError{http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is over %d bytes", maxMessageBytes)}
	}
	return badRequest("reading the request: %v", err)
}

// restDestination is the destination a request names
// (MessageServletSupport.getDestination).
//
// DEVIATION: ActiveMQ takes a type other than "topic" for a queue; Wharf
// refuses a type that is neither "queue" nor "topic", so that a typo does
// not send to a queue nobody reads.
func restDestination(r *http.Request) (message.Destination, error) {
	topic := true
	switch typ := r.Form.Get("type"); {
	case typ == "" || strings.EqualFold(typ, "topic"):
	case strings.EqualFold(typ, "queue"):
		topic = false
	default:
		return message.Destination{}, badRequest("unknown type %q: queue or topic", typ)
	}
	name := r.Form.Get("destination")
	if name == "" {
		name = strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, restDestinationPrefix), "/")
		name = strings.ReplaceAll(name, "/", ".")
	}
	if scheme, rest, ok := strings.Cut(name, "://"); ok {
		switch scheme {
		case "topic":
			topic = true
		case "queue", "channel":
			topic = false
		}
		name = rest
	}
	if name == "" {
		return message.Destination{}, badRequest("no destination: name it after %s/ or in the destination parameter", restDestinationPrefix)
	}
	if topic {
		return message.TopicDest(name), nil
	}
	return message.QueueDest(name), nil
}

// connect opens a connection to the engine as the request's login.
func connect(e *engine.Engine, r *http.Request) (*restClient, error) {
	user, password, _ := r.BasicAuth()
	cr := engine.Credentials{Username: user, Password: password, Protocol: "http"}
	if addr, err := net.ResolveTCPAddr("tcp", r.RemoteAddr); err == nil {
		cr.Remote = addr
	}
	conn, err := e.Connect(cr)
	if err != nil {
		return nil, engineError(err)
	}
	return &restClient{e: e, conn: conn, consumers: map[message.Destination]*restConsumer{}}, nil
}

func (c *restClient) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.conn.Close()
}

// client returns the client key names, connecting it on first use (or
// again after the broker restarted), and counts the request in.
func (a *messageAPI) client(e *engine.Engine, key clientKey, r *http.Request) (*restClient, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.clients[key]
	if c != nil && c.e != e {
		a.dropLocked(key, c)
		c = nil
	}
	if c == nil {
		if len(a.clients) >= maxRESTClients {
			a.s.log.Warn("rest clients limit reached", "limit", maxRESTClients)
			return nil, &httpError{http.StatusServiceUnavailable, fmt.Sprintf("%d clients are open (the limit): unsubscribe one first", maxRESTClients)}
		}
		var err error
		if c, err = connect(e, r); err != nil {
			return nil, err
		}
		c.idle = time.AfterFunc(a.idle, func() { a.expire(key, c) })
		a.clients[key] = c
	}
	c.inUse++
	return c, nil
}

// release counts a request out of c and restarts its idle time.
func (a *messageAPI) release(key clientKey, c *restClient) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c.inUse--
	if a.clients[key] == c {
		c.idle.Reset(a.idle)
	}
}

// expire closes a client idle for a.idle.
func (a *messageAPI) expire(key clientKey, c *restClient) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.clients[key] != c {
		return
	}
	if c.inUse > 0 {
		c.idle.Reset(a.idle)
		return
	}
	a.s.log.Debug("rest client expired", "client_id", key.id, "user", key.user)
	a.dropLocked(key, c)
}

func (a *messageAPI) unsubscribe(key clientKey) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.clients[key]; c != nil {
		a.s.log.Debug("rest client unsubscribed", "client_id", key.id, "user", key.user)
		a.dropLocked(key, c)
	}
}

// dropLocked forgets and closes a client: its consumers' unacknowledged
// messages go back to their queues.
func (a *messageAPI) dropLocked(key clientKey, c *restClient) {
	delete(a.clients, key)
	c.idle.Stop()
	c.close()
}

// closeAll closes every client (the broker is stopping, or the server).
func (a *messageAPI) closeAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, c := range a.clients {
		a.dropLocked(k, c)
	}
}

// done is a Completion handing the result to a channel.
type done chan error

func (d done) Complete(_ uint64, err error) { d <- err }

// send builds the text message a POST describes and answers once the
// engine has taken it (stored, for a persistent one): 200 "Message sent"
// with its id in the messageID header.
func (a *messageAPI) send(w http.ResponseWriter, r *http.Request, c *restClient, d message.Destination) error {
	m, err := restMessage(r, d)
	if err != nil {
		return err
	}
	sent := make(done, 1)
	c.mu.Lock()
	err = c.conn.Send(m, "", sent, 0)
	c.mu.Unlock()
	if err != nil {
		return engineError(err)
	}
	select {
	case err = <-sent:
	case <-r.Context().Done():
		return r.Context().Err()
	}
	if err != nil {
		return engineError(err)
	}
	w.Header()["messageID"] = []string{m.ID}
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, "Message sent")
	return nil
}

// restMessage is the message a POST sends: the body parameter, or else
// the request body when it has a content type; JMS headers from the
// JMSDeliveryMode (persistent unless it says otherwise), JMSPriority (5
// by default), JMSTimeToLive (ms), JMSCorrelationID, JMSReplyTo and
// JMSType parameters; each other single-valued parameter a string
// property. JMSExpiration is checked and, as in ActiveMQ, has no effect:
// the send sets the expiration from the time to live.
//
// DEVIATION: ActiveMQ reads a request body line by line and ends every
// line with "\n"; Wharf keeps the body's bytes as sent. It refuses a body
// that is not UTF-8 (the message is a TextMessage) and a non-numeric
// number, which ActiveMQ answers with a 500.
func restMessage(r *http.Request, d message.Destination) (*message.Message, error) {
	var body []byte
	if v, ok := r.Form["body"]; ok {
		body = []byte(v[0])
	} else if r.Header.Get("Content-Type") != "" {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			return nil, bodyError(err)
		}
	}
	if !utf8.Valid(body) {
		return nil, badRequest("the message body is not UTF-8 text")
	}
	now := time.Now().UnixMilli()
	m := &message.Message{
		Destination: d, BodyType: message.TextBody, Body: body,
		Persistent: true, Priority: defaultPriority, Timestamp: now,
		CorrelationID: r.Form.Get("JMSCorrelationID"), Type: r.Form.Get("JMSType"),
	}
	if v, ok := r.Form["JMSDeliveryMode"]; ok {
		m.Persistent = strings.EqualFold(strings.TrimSpace(v[0]), "persistent")
	}
	if v, ok := r.Form["JMSPriority"]; ok {
		p, err := strconv.Atoi(v[0])
		if err != nil || p < 0 || p > 9 {
			return nil, badRequest("JMSPriority %q is not a priority from 0 to 9", v[0])
		}
		m.Priority = uint8(p)
	}
	if v, ok := r.Form["JMSTimeToLive"]; ok {
		ttl, err := strconv.ParseInt(v[0], 10, 64)
		if err != nil {
			return nil, badRequest("JMSTimeToLive %q is not a number of milliseconds", v[0])
		}
		if ttl > 0 {
			m.Expiration = now + ttl
		}
	}
	if v, ok := r.Form["JMSExpiration"]; ok {
		if _, err := strconv.ParseInt(v[0], 10, 64); err != nil {
			return nil, badRequest("JMSExpiration %q is not a number", v[0])
		}
	}
	if v := r.Form.Get("JMSReplyTo"); v != "" {
		m.ReplyTo = message.ParseQualified(v, message.Queue)
	}
	names := make([]string, 0, len(r.Form))
	for name := range r.Form {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if vs := r.Form[name]; !sendParams[name] && len(vs) == 1 {
			m.Props.Set(name, message.StringValue(vs[0]))
		}
	}
	return m, nil
}

// receive answers a GET or DELETE with the next message of d, waiting up
// to readTimeout ms for one (MessageServlet.doMessages): 200 with the
// message, or 204 No Content when none came.
func (a *messageAPI) receive(w http.ResponseWriter, r *http.Request, c *restClient, d message.Destination) error {
	wait := maxReadTimeout
	if v := r.Form.Get("readTimeout"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return badRequest("readTimeout %q is not a number of milliseconds", v)
		}
		if ms >= 0 && time.Duration(ms) <= maxReadTimeout/time.Millisecond {
			wait = time.Duration(ms) * time.Millisecond
		}
	}
	cons, err := c.consumer(d, r.Header.Get("selector"))
	if err != nil {
		return err
	}
	if !cons.busy.CompareAndSwap(false, true) {
		return &httpError{http.StatusConflict, restConcurrentConsumer}
	}
	defer cons.busy.Store(false)
	if strings.EqualFold(r.Form.Get("oneShot"), "true") {
		defer c.closeConsumer(d)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		if dl, ok := cons.take(); ok {
			if err := c.ack(cons, dl); err != nil {
				return err
			}
			writeMessage(w, r, dl.Msg)
			return nil
		}
		select {
		case <-cons.more:
		case <-timer.C:
			w.WriteHeader(http.StatusNoContent)
			return nil
		case <-r.Context().Done():
			return r.Context().Err()
		}
	}
}

// consumer returns c's consumer of d, subscribing it when there is none.
// A consumer keeps the selector it was made with.
func (c *restClient) consumer(d message.Destination, selector string) (*restConsumer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cons := c.consumers[d]; cons != nil {
		return cons, nil
	}
	if len(c.consumers) >= maxConsumersPerClient {
		return nil, &httpError{http.StatusServiceUnavailable, fmt.Sprintf("the client has %d consumers (the limit)", maxConsumersPerClient)}
	}
	cons := &restConsumer{more: make(chan struct{}, 1)}
	sub, err := c.conn.Subscribe(engine.SubSpec{Destination: d, Selector: selector, Prefetch: restPrefetch, AckMode: engine.AckIndividual}, cons)
	if err != nil {
		return nil, engineError(err)
	}
	cons.sub = sub
	c.consumers[d] = cons
	return cons, nil
}

// ack acknowledges a delivery and waits until the store has the
// acknowledgement: the message is consumed before it is answered, as the
// servlet's auto-acknowledging session does.
func (c *restClient) ack(cons *restConsumer, d engine.Delivery) error {
	acked := make(done, 1)
	c.mu.Lock()
	err := c.conn.AckDurable(cons.sub, d.ID, "", acked, 0)
	c.mu.Unlock()
	if err == nil {
		err = <-acked
	}
	if err != nil {
		return engineError(err)
	}
	return nil
}

// closeConsumer closes c's consumer of d (oneShot): what it holds goes
// back to the queue.
func (c *restClient) closeConsumer(d message.Destination) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cons := c.consumers[d]; cons != nil {
		delete(c.consumers, d)
		c.conn.CloseSubscription(cons.sub)
	}
}

// writeMessage writes a consumed message as MessageServlet.writeResponse
// does: no caching; the content type the xml or json parameter asks for,
// else application/xml for text that starts with '<' and text/plain for
// other text; headers destination, id and one per property; the text
// without its XML declaration.
//
// DEVIATION: ActiveMQ writes nothing for a message that is not text (or
// an object's toString()); Wharf writes a bytes message's bytes, as
// application/octet-stream, rather than lose them. Map, stream and object
// bodies are still left out. Text goes out in UTF-8 whatever the type.
func writeMessage(w http.ResponseWriter, r *http.Request, m *message.Message) {
	h := w.Header()
	h.Set("Cache-Control", "no-cache, no-store, must-revalidate")
	h.Set("Pragma", "no-cache")
	h.Set("Expires", "Thu, 01 Jan 1970 00:00:00 GMT")
	var body []byte
	if m.BodyType == message.TextBody || m.BodyType == message.BytesBody {
		body = m.Body
	}
	ct := "text/plain;charset=UTF-8"
	switch {
	case strings.EqualFold(r.Form.Get("xml"), "true"):
		ct = "application/xml;charset=UTF-8"
	case strings.EqualFold(r.Form.Get("json"), "true"):
		ct = "application/json;charset=UTF-8"
	case m.BodyType == message.BytesBody:
		ct = "application/octet-stream"
	case m.BodyType == message.TextBody && len(body) > 0 && body[0] == '<':
		ct = "application/xml;charset=UTF-8"
	}
	h.Set("Content-Type", ct)
	if m.BodyType == message.TextBody && len(body) > 1 && body[0] == '<' && body[1] == '?' {
		if i := strings.Index(string(body), "?>"); i >= 0 {
			body = body[i+2:]
		}
	}
	// Named as the servlet names them (HTTP names are case-blind, JMS
	// property names are not).
	h["destination"] = []string{m.Destination.String()}
	h["id"] = []string{m.ID}
	for _, p := range m.Props {
		if token(p.Name) && !reservedHeaders[http.CanonicalHeaderKey(p.Name)] {
			h[p.Name] = append(h[p.Name], p.Value.Text())
		}
	}
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// reservedHeaders are the headers a message property may not set: those
// that frame the response or that the server sets itself.
var reservedHeaders = map[string]bool{
	"Content-Length": true, "Content-Type": true, "Content-Encoding": true, "Transfer-Encoding": true,
	"Connection": true, "Keep-Alive": true, "Te": true, "Trailer": true, "Upgrade": true,
	"Cache-Control": true, "Pragma": true, "Expires": true, "Date": true, "Set-Cookie": true,
	"Www-Authenticate": true, "Destination": true, "Id": true,
}

// token reports whether s can be an HTTP header name (RFC 9110 token): a
// property that cannot is left out of the headers.
func token(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
