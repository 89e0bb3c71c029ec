package conformance

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"wharf/conform"
	"wharf/engine/brokertest"
	"wharf/engine/config"
)

// TestConformanceCases runs every case of the conform registry (the
// black-box cases `wharf conform` runs against any broker) against an
// in-process Wharf started with activemq/activemq.xml plus its two AMQP
// connectors (commented out there for Debian's ActiveMQ), a fresh broker per case as the tests they came from had.
// Each case is one subtest named after it, so `-run
// 'TestConformanceCases/stomp/ack'` selects cases as --only does.
// A case that records Wharf's documented deviation passes here: that is
// the behaviour Wharf means to have.
func TestConformanceCases(t *testing.T) {
	cases := conform.Cases()
	if len(cases) == 0 {
		t.Fatal("the conform registry is empty")
	}
	prefix := conform.NewPrefix()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			opts := []brokertest.Option{brokertest.WithConfig(func(cfg *config.Config) {
				// activemq.xml's AMQP connectors, commented out there
				// for Debian's ActiveMQ (conform.ConfigXMLWithAMQP).
				for _, tr := range config.DefaultTransports() {
					if tr.Scheme == "amqp" {
						tr.Port = 0
						cfg.Transports = append(cfg.Transports, tr)
						idle := tr
						idle.Name = conform.AMQPIdle
						idle.Options = maps.Clone(tr.Options)
						if idle.Options == nil {
							idle.Options = map[string]string{}
						}
						idle.Options["wireFormat.idleTimeout"] = strconv.Itoa(int(conform.AMQPIdleTimeout / time.Millisecond))
						cfg.Transports = append(cfg.Transports, idle)
					}
				}
			})}
			if c.Restart {
				// What the restart recovers comes from the KahaDB
				// directory activemq.xml configures.
				opts = append(opts, brokertest.WithKahaDB())
			}
			b := startBroker(t, opts...)
			tg := &conform.Target{Prefix: prefix, Endpoints: map[string]string{}}
			endpoints := func() {
				// Each endpoint is the connector of its name.
				for _, ep := range conform.Endpoints() {
					if a := b.Addr(ep); a != nil {
						tg.Endpoints[ep] = a.String()
					}
				}
			}
			endpoints()
			if c.Restart {
				// The restarted broker listens on new ports; the case
				// reads its addresses after the restart.
				tg.Restarter = func(context.Context) error {
					b.Restart()
					endpoints()
					return nil
				}
			}
			if miss := tg.Missing(c); len(miss) > 0 {
				t.Fatalf("the in-process broker lacks %s", strings.Join(miss, ", "))
			}
			if err := tg.Identify(wait); err != nil {
				t.Fatal(err)
			}
			r := conform.RunCase(context.Background(), c, tg)
			for _, o := range r.Observations {
				if o.Kind == "log" || o.Kind == "fail" {
					t.Logf("%s: %s", o.Kind, o.Text)
				}
			}
			switch r.Status {
			case conform.Pass:
			case conform.Skip:
				t.Skip(r.Reason)
			default:
				t.Fatalf("%s: %s", r.Status, r.Reason)
			}
			if c.Deviation != "" && r.Deviation == "" {
				t.Errorf("case has a documented deviation but did not record it against Wharf")
			}
		})
	}
}

// TestConformanceCasesConfigXML checks that the activemq.xml `wharf
// conform --print-config` writes is the one the suite runs with.
func TestConformanceCasesConfigXML(t *testing.T) {
	b, err := os.ReadFile(filepath.FromSlash(activeMQConfig))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != conform.ConfigXML {
		t.Fatalf("conform/activemq.xml differs from %s: copy one onto the other", activeMQConfig)
	}
}
