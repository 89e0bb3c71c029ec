package http_test

import (
	"context"
	"encoding/base64"
	"net"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"wharf/engine"
	"wharf/engine/message"
)

// chromium starts a headless Chromium (Debian's chromium package, which
// `make test-deps` installs) logged in to v's console as admin, or skips
// the test naming what to install.
func chromium(t *testing.T, v *consoleEnv) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Skip("no Chromium: install Debian's chromium package (make test-deps)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.WindowSize(1280, 860),
		// Chromium refuses to run as root with its sandbox (CI runs as
		// root), and a container has no user namespaces for it anyway.
		chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	// Accept the console's confirm() dialogs (purge, delete).
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	// Every request logs in (the Basic challenge has no dialog to fill in
	// headless).
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:secret"))
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Authorization": auth}}); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// notice waits for the page a form's redirect lands on and returns its
// notice.
func notice(t *testing.T, ctx context.Context) string {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("notice"))); err != nil {
		t.Fatalf("no notice: %v", err)
	}
	return text(t, ctx, chromedp.ID("notice"))
}

// text reads an element's text.
func text(t *testing.T, ctx context.Context, sel chromedp.ID) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(sel))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// A browser clicks through send → browse → DLQ replay → purge, and the
// broker holds what each step says.
func TestConsoleChromiumClickThrough(t *testing.T) {
	v := startConsole(t)
	ctx := chromium(t, v)
	run := func(what string, acts ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, acts...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	// Send three messages with a property from send.jsp.
	run("send", chromedp.Navigate(v.base+"/admin/send.jsp"),
		chromedp.SendKeys(chromedp.ID("send-dest"), "orders"),
		chromedp.SetValue(chromedp.ID("send-count"), "3"),
		chromedp.SetValue(chromedp.ID("send-props"), "region=emea"),
		chromedp.SendKeys(chromedp.ID("send-body"), "hello from chromium"),
		chromedp.Click(chromedp.ID("send-button")))
	if n := notice(t, ctx); !strings.Contains(n, "Sent 3 messages to queue://orders") {
		t.Fatalf("send notice %q", n)
	}
	if got := v.size("orders"); got != 3 {
		t.Fatalf("orders holds %d after the send, want 3", got)
	}

	// Browse: from the queue list to the queue, then to one message.
	run("browse", chromedp.Navigate(v.base+"/admin/queues.jsp"),
		chromedp.Click(chromedp.Search(`//table[@id="queues"]//a[text()="orders"]`)),
		chromedp.WaitVisible(chromedp.ID("messages")))
	list := text(t, ctx, chromedp.ID("messages"))
	run("message", chromedp.Click(chromedp.CSS(`#messages tbody tr:first-child td a`)))
	run("message wait", chromedp.WaitVisible(chromedp.ID("properties")))
	props := text(t, ctx, chromedp.ID("properties"))
	if strings.Count(list, "hello from chromium") != 3 {
		t.Errorf("browse.jsp lists:\n%s\nwant the 3 messages", list)
	}
	if !strings.Contains(props, "region") || !strings.Contains(props, "emea") {
		t.Errorf("message.jsp properties %q, want region=emea", props)
	}

	// A consumer rejects them: they die onto ActiveMQ.DLQ. Replay them
	// all to orders in one click.
	v.poison("orders", 3)
	if v.size("orders") != 0 || v.size("ActiveMQ.DLQ") != 3 {
		t.Fatalf("before the replay: orders %d, DLQ %d", v.size("orders"), v.size("ActiveMQ.DLQ"))
	}
	run("replay", chromedp.Navigate(v.base+"/admin/browse.jsp?JMSDestination=ActiveMQ.DLQ"),
		chromedp.Click(chromedp.ID("replay-all")))
	if n := notice(t, ctx); !strings.Contains(n, "Replayed 3 messages") {
		t.Fatalf("replay notice %q", n)
	}
	if o, d := v.size("orders"), v.size("ActiveMQ.DLQ"); o != 3 || d != 0 {
		t.Fatalf("after the replay: orders %d, DLQ %d; want 3, 0", o, d)
	}
	back, err := v.e.Browse(message.QueueDest("orders"), nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, qm := range back {
		if r, _ := qm.Msg.Props.Get("region"); string(qm.Msg.Body) != "hello from chromium" || r.Text() != "emea" {
			t.Errorf("replayed message %q region %q", qm.Msg.Body, r.Text())
		}
	}

	// Purge orders from its browse page (the confirm dialog accepted).
	run("purge", chromedp.Navigate(v.base+"/admin/browse.jsp?JMSDestination=orders"),
		chromedp.Click(chromedp.ID("purge-button")))
	if n := notice(t, ctx); !strings.Contains(n, "Purged orders: 3 messages removed") {
		t.Fatalf("purge notice %q", n)
	}
	if got := v.size("orders"); got != 0 {
		t.Fatalf("orders holds %d after the purge, want 0", got)
	}
	if size := text(t, ctx, chromedp.ID("queue-size")); size != "0" {
		t.Errorf("browse.jsp after the purge says %q messages", size)
	}
}

// With WHARF_CONSOLE_SCREENSHOTS=dir (make console-screenshots), a
// browser photographs each console page of a broker with some traffic
// into dir, for the README.
func TestConsoleScreenshots(t *testing.T) {
	dir := os.Getenv("WHARF_CONSOLE_SCREENSHOTS")
	if dir == "" {
		t.Skip("set WHARF_CONSOLE_SCREENSHOTS=dir to write the console's screenshots")
	}
	v := startConsole(t)
	ctx := chromium(t, v)
	for _, q := range []string{"orders", "invoices", "shipments.eu", "shipments.us", "audit"} {
		v.send(message.QueueDest(q), len(q)%7+2, `{"id": 1042, "customer": "ACME", "total": 99.5}`)
	}
	v.dlq("payments", 3)
	for _, tp := range []string{"prices", "alerts"} {
		if err := v.e.AddDestination(message.TopicDest(tp)); err != nil {
			t.Fatal(err)
		}
	}
	for i, cid := range []string{"billing-service", "warehouse", "web-frontend"} {
		c, err := v.e.Connect(engine.Credentials{Protocol: []string{"openwire", "stomp", "amqp"}[i], ClientID: cid, Username: "app",
			Remote: &net.TCPAddr{IP: net.IPv4(10, 0, 3, byte(20+i)), Port: 51000 + i}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if i == 0 {
			spec := engine.SubSpec{Destination: message.TopicDest("prices"), DurableName: "billing", Prefetch: 10, AckMode: engine.AckClient}
			if _, err := c.Subscribe(spec, sinkFunc(func(engine.Delivery) {})); err != nil {
				t.Fatal(err)
			}
		}
	}
	v.admin("createSubscriber.action", neturl.Values{"clientId": {"reporting"}, "subscriberName": {"daily"}, "topic": {"alerts"}})
	v.admin("sendMessage.action", neturl.Values{"JMSDestination": {"reports"}, "JMSPersistent": {"on"}, "AMQ_SCHEDULED_DELAY": {"3600000"}, "JMSText": {"nightly report"}})
	dead, _ := v.e.Browse(message.QueueDest("ActiveMQ.DLQ"), nil, 1)
	shots := []struct{ name, path, wait string }{
		{"overview", "/admin/", "#uptime"},
		{"queues", "/admin/queues.jsp", "#queues"},
		{"topics", "/admin/topics.jsp", "#topics"},
		{"browse-dlq", "/admin/browse.jsp?JMSDestination=ActiveMQ.DLQ", "#messages"},
		{"message", "/admin/message.jsp?JMSDestination=ActiveMQ.DLQ&id=" + neturl.QueryEscape(dead[0].Msg.ID), "#body"},
		{"send", "/admin/send.jsp?JMSDestination=orders", "#send"},
		{"connections", "/admin/connections.jsp", "#connections"},
		{"subscribers", "/admin/subscribers.jsp", "#subscribers"},
		{"scheduled", "/admin/scheduled.jsp", "#jobs"},
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range shots {
		if err := chromedp.Do(ctx, chromedp.Navigate(v.base+s.path), chromedp.WaitVisible(chromedp.CSS(s.wait))); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
