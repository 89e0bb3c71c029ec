package http_test

import (
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"strings"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

// Every console action changes what the broker holds as it says.
func TestConsoleActions(t *testing.T) {
	v := startConsole(t)
	q := message.QueueDest("work")

	// Send: headers, properties, persistence, a count.
	n := v.admin("sendMessage.action", neturl.Values{
		"JMSDestination": {"work"}, "JMSDestinationType": {"queue"}, "JMSCorrelationID": {"corr-1"}, "JMSType": {"order"},
		"JMSPriority": {"7"}, "JMSProperties": {"region=emea\ncolour = red"}, "JMSText": {"hello"}, "JMSMessageCount": {"3"},
	})
	if !strings.Contains(n, "Sent 3 messages") {
		t.Errorf("send notice %q", n)
	}
	msgs, err := v.e.Browse(q, nil, 10)
	if err != nil || len(msgs) != 3 {
		t.Fatalf("browse after the send: %d messages, %v", len(msgs), err)
	}
	m := msgs[0].Msg
	region, _ := m.Props.Get("region")
	colour, _ := m.Props.Get("colour")
	if m.CorrelationID != "corr-1" || m.Type != "order" || m.Priority != 7 || m.Persistent || string(m.Body) != "hello" || region.Text() != "emea" || colour.Text() != "red" {
		t.Errorf("sent message %+v (persistent unticked: want non-persistent)", m)
	}

	// A delayed send is a scheduled job; the console lists and removes it.
	v.admin("sendMessage.action", neturl.Values{"JMSDestination": {"later"}, "JMSPersistent": {"on"}, "AMQ_SCHEDULED_DELAY": {"3600000"}, "JMSText": {"in an hour"}})
	jobs := v.e.ScheduledJobList()
	if len(jobs) != 1 || v.size("later") != 0 {
		t.Fatalf("after a delayed send: %d jobs, queue later holds %d; want 1 job and an empty queue", len(jobs), v.size("later"))
	}
	if _, body := v.get("/admin/scheduled.jsp"); !strings.Contains(body, jobs[0].ID) || !strings.Contains(body, "in an hour") {
		t.Errorf("scheduled.jsp does not list job %s", jobs[0].ID)
	}
	v.admin("deleteJob.action", neturl.Values{"jobId": {jobs[0].ID}})
	if n := len(v.e.ScheduledJobList()); n != 0 {
		t.Errorf("jobs after the removal: %d", n)
	}

	// Bad input is refused with a notice naming what was wrong.
	tok := v.token("admin", "secret")
	for _, tc := range []struct {
		action string
		form   neturl.Values
		want   string
	}{
		{"sendMessage.action", neturl.Values{"JMSDestination": {"work"}, "JMSPriority": {"12"}}, "priority"},
		{"sendMessage.action", neturl.Values{"JMSDestination": {"work"}, "JMSProperties": {"novalue"}}, "name=value"},
		{"sendMessage.action", neturl.Values{"JMSDestination": {""}}, "no destination"},
		{"moveMessage.action", neturl.Values{"JMSDestination": {"work"}, "destination": {"x"}, "selector": {"a = "}}, "selector"},
		{"purgeDestination.action", neturl.Values{"JMSDestination": {"missing"}}, "no such destination"},
		{"deleteJob.action", neturl.Values{"jobId": {"nope"}}, "no such scheduled job"},
	} {
		tc.form.Set("secret", tok)
		code, _, notice := v.post("admin", "secret", tc.action, tc.form)
		if code != 303 || !strings.HasPrefix(notice, "err:") || !strings.Contains(notice, tc.want) {
			t.Errorf("%s %v: HTTP %d notice %q, want an error mentioning %q", tc.action, tc.form, code, notice, tc.want)
		}
	}
	if got := v.size("work"); got != 3 {
		t.Fatalf("work holds %d after refused actions, want 3", got)
	}

	// Copy one, move all matching a selector, delete one.
	one := msgs[0].Msg.ID
	v.admin("copyMessage.action", neturl.Values{"JMSDestination": {"work"}, "messageId": {one}, "destination": {"copies"}})
	v.admin("moveMessage.action", neturl.Values{"JMSDestination": {"work"}, "selector": {"region = 'emea'"}, "destination": {"queue://moved"}})
	if w, c, mv := v.size("work"), v.size("copies"), v.size("moved"); w != 0 || c != 1 || mv != 3 {
		t.Errorf("after copy one and move all: work %d, copies %d, moved %d; want 0, 1, 3", w, c, mv)
	}
	_, loc, _ := v.post("admin", "secret", "deleteMessage.action", neturl.Values{"JMSDestination": {"moved"}, "messageId": {one}, "secret": {tok}})
	if v.size("moved") != 2 || !strings.Contains(loc, "browse.jsp?JMSDestination=moved") {
		t.Errorf("after deleting one: moved holds %d (want 2), back to %q", v.size("moved"), loc)
	}

	// DLQ replay: one, then those matching a selector, then the rest.
	v.dlq("orders", 4)
	dl := message.QueueDest("ActiveMQ.DLQ")
	dead, _ := v.e.Browse(dl, nil, 10)
	v.admin("retryMessages.action", neturl.Values{"JMSDestination": {dl.Name}, "messageId": {dead[0].Msg.ID}})
	if v.size("orders") != 1 || v.size(dl.Name) != 3 {
		t.Errorf("after replaying one: orders %d, DLQ %d; want 1, 3", v.size("orders"), v.size(dl.Name))
	}
	v.admin("retryMessages.action", neturl.Values{"JMSDestination": {dl.Name}, "selector": {"n = 3"}})
	if v.size("orders") != 2 || v.size(dl.Name) != 2 {
		t.Errorf("after replaying n = 3: orders %d, DLQ %d; want 2, 2", v.size("orders"), v.size(dl.Name))
	}
	if n := v.admin("retryMessages.action", neturl.Values{"JMSDestination": {dl.Name}}); !strings.Contains(n, "Replayed 2 messages") {
		t.Errorf("replay all notice %q", n)
	}
	if v.size("orders") != 4 || v.size(dl.Name) != 0 {
		t.Errorf("after replaying all: orders %d, DLQ %d; want 4, 0", v.size("orders"), v.size(dl.Name))
	}

	// Destinations: create and delete.
	v.admin("createDestination.action", neturl.Values{"JMSDestination": {"fresh"}, "JMSDestinationType": {"topic"}})
	if !v.e.Stats(message.TopicDest("fresh")).Exists {
		t.Error("the topic was not created")
	}
	v.admin("deleteDestination.action", neturl.Values{"JMSDestination": {"copies"}})
	if v.e.Stats(message.QueueDest("copies")).Exists {
		t.Error("the queue was not deleted")
	}

	// Durable subscriptions: create (inactive), list, delete.
	v.admin("createSubscriber.action", neturl.Values{"clientId": {"c1"}, "subscriberName": {"s1"}, "topic": {"prices"}, "selector": {"x > 1"}})
	subs := v.e.DurableSubsInfo()
	if len(subs) != 1 || subs[0].Active || subs[0].Destination.Name != "prices" || subs[0].Selector != "x > 1" {
		t.Fatalf("durable subscriptions after create: %+v", subs)
	}
	if _, body := v.get("/admin/subscribers.jsp"); !strings.Contains(body, "s1") || !strings.Contains(body, "offline") {
		t.Errorf("subscribers.jsp does not list s1 as offline")
	}
	v.admin("deleteSubscriber.action", neturl.Values{"clientId": {"c1"}, "subscriberName": {"s1"}})
	if subs := v.e.DurableSubsInfo(); len(subs) != 0 {
		t.Errorf("durable subscriptions after delete: %+v", subs)
	}

	// Connections: listed with protocol, client id, address, user; closed.
	c, err := v.e.Connect(engine.Credentials{Protocol: "stomp", ClientID: "app-7", Username: "alice", Remote: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 9), Port: 4242}})
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	c.SetCloser(func() { c.Close(); close(closed) })
	_, body := v.get("/admin/connections.jsp")
	for _, want := range []string{"app-7", "alice", "127.0.0.9:4242", "stomp", c.ID()} {
		if !strings.Contains(body, want) {
			t.Errorf("connections.jsp lacks %q", want)
		}
	}
	v.admin("closeConnection.action", neturl.Values{"connectionID": {c.ID()}})
	<-closed
	for _, ci := range v.e.Connections() {
		if ci.ID == c.ID() {
			t.Errorf("connection %s still open", c.ID())
		}
	}
	code, _, notice := v.post("admin", "secret", "closeConnection.action", neturl.Values{"connectionID": {c.ID()}, "secret": {tok}})
	if code != 303 || !strings.Contains(notice, "no such connection") {
		t.Errorf("closing it again: HTTP %d %q", code, notice)
	}
	if err := v.e.RemoveScheduledJob("x"); !errors.Is(err, engine.ErrNoSuchJob) {
		t.Errorf("RemoveScheduledJob: %v", err)
	}
}

// The queue list pages, filters and sorts on the server.
func TestConsoleQueueListPaging(t *testing.T) {
	v := startConsole(t)
	for i := range 120 {
		if err := v.e.AddDestination(message.QueueDest(fmt.Sprintf("q.%03d", i))); err != nil {
			t.Fatal(err)
		}
	}
	v.send(message.QueueDest("q.077"), 5, "x")
	rows := func(body string) int { return strings.Count(body, `<td class="num size">`) }
	_, body := v.get("/admin/queues.jsp?page=3")
	if rows(body) != 20 || !strings.Contains(body, "101–120 of 120") || !strings.Contains(body, ">q.119<") {
		t.Errorf("page 3: %d rows, want 20 (q.100–q.119)", rows(body))
	}
	_, body = v.get("/admin/queues.jsp?filter=q.07")
	if rows(body) != 10 || !strings.Contains(body, "1–10 of 10") {
		t.Errorf("filter q.07: %d rows, want 10", rows(body))
	}
	_, body = v.get("/admin/queues.jsp?sort=size&order=desc")
	if i, j := strings.Index(body, ">q.077<"), strings.Index(body, ">q.000<"); i < 0 || j >= 0 && j < i {
		t.Errorf("sorted by size, q.077 (5 messages) is not first")
	}
}
