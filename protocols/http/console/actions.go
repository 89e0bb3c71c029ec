package console

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/engine/selector"
)

// The console's changes. Each reads its form (the request's PostForm,
// checked and parsed by action), changes the broker through the engine's
// admin API and says what it did; the redirect goes back to the form's
// page unless the action names another.

// link is the console page path with query v.
func (h *Handler) link(path string, v url.Values) string {
	if len(v) == 0 {
		return h.o.Prefix + path
	}
	return h.o.Prefix + path + "?" + v.Encode()
}

// destParam reads the destination an action names: JMSDestination, of
// JMSDestinationType queue (default) or topic.
func destParam(f url.Values) (message.Destination, error) {
	name := strings.TrimSpace(f.Get("JMSDestination"))
	if name == "" {
		return message.Destination{}, errors.New("no destination named: fill in the name")
	}
	d := message.ParseQualified(name, message.Queue)
	if f.Get("JMSDestinationType") == "topic" && !strings.Contains(name, "://") {
		d = message.TopicDest(name)
	}
	return d, nil
}

func (h *Handler) listPage(d message.Destination) string {
	if d.Type == message.Topic {
		return h.o.Prefix + "/topics.jsp"
	}
	return h.o.Prefix + "/queues.jsp"
}

func (h *Handler) createDestination(r *http.Request, e *engine.Engine) (string, string, error) {
	d, err := destParam(r.PostForm)
	if err != nil {
		return "", "", err
	}
	if err := e.AddDestination(d); err != nil {
		return "", "", fmt.Errorf("%s not created: %w", d, err)
	}
	return fmt.Sprintf("Created %s", d), h.listPage(d), nil
}

func (h *Handler) deleteDestination(r *http.Request, e *engine.Engine) (string, string, error) {
	d, err := destParam(r.PostForm)
	if err != nil {
		return "", "", err
	}
	if d.Type.IsTemp() || d.IsWildcard() || d.IsComposite() {
		return "", "", fmt.Errorf("%q is not a queue or topic name", d.String())
	}
	if !e.Stats(d).Exists {
		return "", h.listPage(d), fmt.Errorf("%s not deleted: it does not exist", d)
	}
	if err := e.RemoveDestination(d); err != nil {
		return "", "", fmt.Errorf("%s not deleted: %w", d, err)
	}
	return fmt.Sprintf("Deleted %s", d), h.listPage(d), nil
}

func (h *Handler) purgeDestination(r *http.Request, e *engine.Engine) (string, string, error) {
	d, err := queueParam(r.PostForm)
	if err != nil {
		return "", "", err
	}
	n, err := e.Purge(d)
	if err != nil {
		return "", "", fmt.Errorf("%s not purged: %w", d.Name, err)
	}
	return fmt.Sprintf("Purged %s: %s removed", d.Name, count(n, "message")), "", nil
}

func count(n int, what string) string {
	if n != 1 {
		what += "s"
	}
	return strconv.Itoa(n) + " " + what
}

// byID selects the message of that id.
func byID(id string) engine.MessageFilter {
	return func(m *message.Message, _ int32) bool { return m.ID == id }
}

// messageFilter is the messages an action acts on: the one of messageId,
// or those the selector matches, or all.
func messageFilter(f url.Values) (filter engine.MessageFilter, max int, what string, err error) {
	if id := strings.TrimSpace(f.Get("messageId")); id != "" {
		return byID(id), 1, "message " + id, nil
	}
	if text := strings.TrimSpace(f.Get("selector")); text != "" {
		sel, err := selector.Parse(text)
		if err != nil {
			return nil, 0, "", fmt.Errorf("selector %q: %w", text, err)
		}
		return sel.Matches, -1, "messages matching " + text, nil
	}
	return nil, -1, "all messages", nil
}

// afterOne goes back to the queue's browse page when the message page it
// came from is gone with the message.
func (h *Handler) afterOne(r *http.Request, d message.Destination) string {
	if r.PostForm.Get("messageId") == "" {
		return ""
	}
	return h.link("/browse.jsp", url.Values{"JMSDestination": {d.Name}})
}

func (h *Handler) deleteMessage(r *http.Request, e *engine.Engine) (string, string, error) {
	d, err := queueParam(r.PostForm)
	if err != nil {
		return "", "", err
	}
	filter, max, what, err := messageFilter(r.PostForm)
	if err != nil {
		return "", "", err
	}
	n, err := e.RemoveMessages(d, filter, max)
	if err != nil {
		return "", "", fmt.Errorf("%s of %s not deleted: %w", what, d.Name, err)
	}
	if n == 0 && max == 1 {
		return "", "", fmt.Errorf("%s not deleted: it is not on %s, or dispatched to a consumer", what, d.Name)
	}
	return fmt.Sprintf("Deleted %s from %s", count(n, "message"), d.Name), h.afterOne(r, d), nil
}

func (h *Handler) moveMessage(r *http.Request, e *engine.Engine) (string, string, error) {
	return h.relocate(r, e, true)
}

func (h *Handler) copyMessage(r *http.Request, e *engine.Engine) (string, string, error) {
	return h.relocate(r, e, false)
}

// relocate moves or copies the messages messageFilter names to the
// destination "destination" (queue://, topic://, or a queue's name).
func (h *Handler) relocate(r *http.Request, e *engine.Engine, move bool) (string, string, error) {
	d, err := queueParam(r.PostForm)
	if err != nil {
		return "", "", err
	}
	target := strings.TrimSpace(r.PostForm.Get("destination"))
	if target == "" {
		return "", "", errors.New("no target destination: fill in where to")
	}
	to := message.ParseQualified(target, message.Queue)
	filter, max, what, err := messageFilter(r.PostForm)
	if err != nil {
		return "", "", err
	}
	verb, op := "Copied", e.CopyMessages
	if move {
		verb, op = "Moved", e.MoveMessages
	}
	n, err := op(d, filter, to, max)
	if err != nil {
		return "", "", fmt.Errorf("%s of %s not %s: %w", what, d.Name, strings.ToLower(verb), err)
	}
	back := ""
	if move {
		back = h.afterOne(r, d)
	}
	return fmt.Sprintf("%s %s from %s to %s", verb, count(n, "message"), d.Name, to), back, nil
}

// retryMessages is the DLQ replay: every message of the queue (or the one
// of messageId, or those matching selector) goes back to the destination
// it was dead-lettered from, in one action.
func (h *Handler) retryMessages(r *http.Request, e *engine.Engine) (string, string, error) {
	d, err := queueParam(r.PostForm)
	if err != nil {
		return "", "", err
	}
	filter, max, what, err := messageFilter(r.PostForm)
	if err != nil {
		return "", "", err
	}
	n, err := e.RetryMessages(d, filter, max)
	if err != nil {
		return "", "", fmt.Errorf("%s of %s not replayed: %w", what, d.Name, err)
	}
	if n == 0 && max == 1 {
		return "", "", fmt.Errorf("%s not replayed: it is not on %s, is dispatched, or names no original destination", what, d.Name)
	}
	return fmt.Sprintf("Replayed %s from %s to their original destinations", count(n, "message"), d.Name), h.afterOne(r, d), nil
}

// connect opens an engine connection as the request's login, as the REST
// message API does: the broker's own authentication and authorization
// apply to what the console sends and subscribes.
func connect(e *engine.Engine, r *http.Request, clientID string) (*engine.Conn, error) {
	user, password, _ := r.BasicAuth()
	cr := engine.Credentials{Username: user, Password: password, Protocol: "http", ClientID: clientID}
	if addr, err := net.ResolveTCPAddr("tcp", r.RemoteAddr); err == nil {
		cr.Remote = addr
	}
	return e.Connect(cr)
}

// maxSendCount bounds the copies one send makes.
const maxSendCount = 10_000

// sendMessage is send.jsp's action: a text message with the headers,
// properties, persistence and delay (AMQ_SCHEDULED_*) of the form, sent
// JMSMessageCount times.
func (h *Handler) sendMessage(r *http.Request, e *engine.Engine) (string, string, error) {
	f := r.PostForm
	d, err := destParam(f)
	if err != nil {
		return "", "", err
	}
	n := 1
	if v := strings.TrimSpace(f.Get("JMSMessageCount")); v != "" {
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > maxSendCount {
			return "", "", fmt.Errorf("message count %q is not a number from 1 to %d", v, maxSendCount)
		}
	}
	tmpl, err := formMessage(f, d)
	if err != nil {
		return "", "", err
	}
	conn, err := connect(e, r, "")
	if err != nil {
		return "", "", fmt.Errorf("not sent: %w", err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	sent := make(done, n)
	for i := range n {
		m := tmpl.Clone()
		m.ID = conn.NextMessageID()
		m.Timestamp = time.Now().UnixMilli()
		if err := conn.Send(m, "", sent, uint64(i)); err != nil {
			return "", "", fmt.Errorf("%s sent, then: %w", count(i, "message"), err)
		}
	}
	for i := range n {
		select {
		case err := <-sent:
			if err != nil {
				return "", "", fmt.Errorf("not every message was stored: %w", err)
			}
		case <-ctx.Done():
			return "", "", fmt.Errorf("%s of %d stored before the wait ran out", count(i, "message"), n)
		}
	}
	back := h.link("/send.jsp", url.Values{"JMSDestination": {d.Name}, "JMSDestinationType": {strings.ToLower(d.Type.String())}})
	return fmt.Sprintf("Sent %s to %s", count(n, "message"), d), back, nil
}

// done is a Completion handing results to a channel.
type done chan error

func (d done) Complete(_ uint64, err error) { d <- err }

// formMessage builds the message send.jsp describes.
func formMessage(f url.Values, d message.Destination) (*message.Message, error) {
	body := f.Get("JMSText")
	if !utf8.ValidString(body) {
		return nil, errors.New("the body is not UTF-8 text")
	}
	m := &message.Message{
		Destination: d, BodyType: message.TextBody, Body: []byte(body),
		Persistent: f.Get("JMSPersistent") != "", Priority: message.DefaultPriority,
		CorrelationID: strings.TrimSpace(f.Get("JMSCorrelationID")), Type: strings.TrimSpace(f.Get("JMSType")),
	}
	if v := strings.TrimSpace(f.Get("JMSReplyTo")); v != "" {
		m.ReplyTo = message.ParseQualified(v, message.Queue)
	}
	if v := strings.TrimSpace(f.Get("JMSPriority")); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 0 || p > 9 {
			return nil, fmt.Errorf("priority %q is not a number from 0 to 9", v)
		}
		m.Priority = uint8(p)
	}
	if v := strings.TrimSpace(f.Get("JMSTimeToLive")); v != "" {
		ttl, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ttl < 0 {
			return nil, fmt.Errorf("time to live %q is not a number of milliseconds", v)
		}
		if ttl > 0 {
			m.Expiration = time.Now().UnixMilli() + ttl
		}
	}
	// Properties: one name=value a line, as strings.
	for i, line := range strings.Split(f.Get("JMSProperties"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("property line %d %q is not name=value", i+1, line)
		}
		m.Props.Set(name, message.StringValue(strings.TrimSpace(value)))
	}
	for _, p := range []string{engine.ScheduledDelay, engine.ScheduledPeriod} {
		if v := strings.TrimSpace(f.Get(p)); v != "" {
			ms, err := strconv.ParseInt(v, 10, 64)
			if err != nil || ms < 0 {
				return nil, fmt.Errorf("%s %q is not a number of milliseconds", p, v)
			}
			if ms > 0 {
				m.Props.Set(p, message.LongValue(ms))
			}
		}
	}
	if v := strings.TrimSpace(f.Get(engine.ScheduledRepeat)); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%s %q is not a number", engine.ScheduledRepeat, v)
		}
		if n != 0 {
			m.Props.Set(engine.ScheduledRepeat, message.IntValue(int32(n)))
		}
	}
	if v := strings.TrimSpace(f.Get(engine.ScheduledCron)); v != "" {
		m.Props.Set(engine.ScheduledCron, message.StringValue(v))
	}
	return m, nil
}

func (h *Handler) closeConnection(r *http.Request, e *engine.Engine) (string, string, error) {
	id := strings.TrimSpace(r.PostForm.Get("connectionID"))
	if id == "" {
		return "", "", errors.New("no connection named: give connectionID")
	}
	if err := e.CloseConnection(id); err != nil {
		return "", "", fmt.Errorf("not closed: %w", err)
	}
	return "Closing connection " + id, "", nil
}

// nopSink takes no deliveries: the subscription createSubscriber makes is
// paused and closed at once.
type nopSink struct{}

func (nopSink) Deliver(engine.Delivery) {}

// createSubscriber makes an inactive durable subscription
// (BrokerView.createDurableSubscriber): it subscribes as client id
// clientId with a closed window and leaves, as a client that subscribed
// and went away.
func (h *Handler) createSubscriber(r *http.Request, e *engine.Engine) (string, string, error) {
	f := r.PostForm
	cid, name := strings.TrimSpace(f.Get("clientId")), strings.TrimSpace(f.Get("subscriberName"))
	topic := strings.TrimPrefix(strings.TrimSpace(f.Get("topic")), "topic://")
	switch {
	case cid == "":
		return "", "", errors.New("no client id: fill it in")
	case name == "":
		return "", "", errors.New("no subscription name: fill it in")
	case topic == "":
		return "", "", errors.New("no topic: fill it in")
	}
	conn, err := connect(e, r, cid)
	if err != nil {
		return "", "", fmt.Errorf("subscription not created: %w", err)
	}
	defer conn.Close()
	spec := engine.SubSpec{Destination: message.TopicDest(topic), DurableName: name, Selector: strings.TrimSpace(f.Get("selector")), Paused: true, AckMode: engine.AckClient}
	if _, err := conn.Subscribe(spec, nopSink{}); err != nil {
		return "", "", fmt.Errorf("subscription not created: %w", err)
	}
	return fmt.Sprintf("Created durable subscription %s of client %s on topic %s", name, cid, topic), "", nil
}

func (h *Handler) deleteSubscriber(r *http.Request, e *engine.Engine) (string, string, error) {
	cid, name := r.PostForm.Get("clientId"), r.PostForm.Get("subscriberName")
	if err := e.Unsubscribe(engine.SubKey{ClientID: cid, Name: name}); err != nil {
		return "", "", fmt.Errorf("subscription not deleted: %w", err)
	}
	return fmt.Sprintf("Deleted durable subscription %s of client %s", name, cid), "", nil
}

func (h *Handler) deleteJob(r *http.Request, e *engine.Engine) (string, string, error) {
	id := strings.TrimSpace(r.PostForm.Get("jobId"))
	if id == "" {
		return "", "", errors.New("no job named: give jobId")
	}
	if err := e.RemoveScheduledJob(id); err != nil {
		return "", "", fmt.Errorf("job not removed: %w", err)
	}
	return "Removed scheduled job " + id, "", nil
}
