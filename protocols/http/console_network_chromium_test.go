package http_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"wharf/cmd/wharf/wiring"
	"wharf/engine"
	"wharf/engine/brokertest"
	"wharf/engine/config"
	httpserver "wharf/protocols/http"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// networkConnector loads a network connector from YAML, with the
// loader's defaults.
func networkConnector(t *testing.T, yml string) config.NetworkConnector {
	t.Helper()
	p := filepath.Join(t.TempDir(), "wharf.yaml")
	if err := os.WriteFile(p, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := config.LoadFile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.NetworkConnectors[0]
}

// bridgeUp waits until e's first bridge is up (or down, with up false).
func bridgeUp(t *testing.T, e *engine.Engine, up bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if v := e.Network(); v != nil {
			if ncs := v.NetworkConnectors(); len(ncs) > 0 && len(ncs[0].Bridges) > 0 && ncs[0].Bridges[0].Up == up {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the bridge is not up=%v after 30 s", up)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func owSession(t *testing.T, addr string) *client.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, addr, client.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := c.Session(false)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A browser reads network.jsp of broker A, bridged (package cluster, in
// process) to broker B: the bridge up, B's name, the demand of B's
// consumer, the messages forwarded; then, B stopped, the bridge down.
func TestConsoleChromiumNetwork(t *testing.T) {
	b := brokertest.Start(t, wiring.Factories(), brokertest.WithConfig(func(c *config.Config) { c.BrokerName = "web-b" }))
	nc := networkConnector(t, fmt.Sprintf("network_connectors:\n  - {name: web, uri: \"static:(tcp://%s)?initialReconnectDelay=100\"}\n", b.Addr("openwire")))
	a := brokertest.Start(t, wiring.Factories(), brokertest.WithConfig(func(c *config.Config) {
		c.BrokerName = "web-a"
		c.NetworkConnectors = []config.NetworkConnector{nc}
	}))
	bridgeUp(t, a.Engine(), true)
	s := startServer(t, httpserver.Options{Authenticate: true, Auth: func(user, password string) ([]string, error) {
		if user == "admin" && password == "secret" {
			return []string{"admin"}, nil
		}
		return nil, fmt.Errorf("bad login")
	}})
	s.Ready(a.Engine())
	v := &consoleEnv{t: t, e: a.Engine(), s: s, base: "http://" + s.Addr().String()}
	ctx := chromium(t, v)

	k, err := owSession(t, b.Addr("openwire").String()).Consumer(wire.NewQueue("web.orders"), client.ConsumerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The demand is there once the page lists it.
	if err := chromedp.Do(ctx, chromedp.Navigate(v.base+"/admin/network.jsp"), chromedp.WaitVisible(chromedp.CSS(".bridge-up"))); err != nil {
		t.Fatal(err)
	}
	for {
		if err := chromedp.Do(ctx, chromedp.Navigate(v.base+"/admin/network.jsp"), chromedp.WaitVisible(chromedp.CSS(".bridge"))); err != nil {
			t.Fatal(err)
		}
		if n, _ := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS(".demand-dest"), chromedp.AtLeast(0))); len(n) > 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("network.jsp never listed the demand")
		}
	}
	css := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}
	if got := css(".remote-broker"); got != "web-b" {
		t.Errorf("remote broker %q, want web-b", got)
	}
	if got := css(".demand-dest"); got != "queue://web.orders" {
		t.Errorf("demand on %q, want queue://web.orders", got)
	}

	p, err := owSession(t, a.Addr("openwire").String()).Producer(wire.NewQueue("web.orders"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		m := client.NewTextMessage(fmt.Sprint("web", i))
		m.Persistent = true
		if err := p.Send(ctx, m, true); err != nil {
			t.Fatal(err)
		}
		if _, err := k.Receive(ctx); err != nil {
			t.Fatalf("B's consumer, message %d: %v", i, err)
		}
	}
	for css(".dequeued") != "3" {
		if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(".bridge"))); err != nil {
			t.Fatalf("network.jsp never counted 3 forwarded: %v", err)
		}
	}
	if got := css(".enqueued"); got != "3" {
		t.Errorf("enqueued %q, want 3", got)
	}

	b.Broker.Close()
	bridgeUp(t, a.Engine(), false)
	if err := chromedp.Do(ctx, chromedp.Navigate(v.base+"/admin/network.jsp"), chromedp.WaitVisible(chromedp.CSS(".bridge-down"))); err != nil {
		t.Fatalf("no bridge down once B stopped: %v", err)
	}
}
