package conformance

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wharf/conform"
	"wharf/engine/brokertest"
	"wharf/engine/config"
)

// TestConformanceCases runs every case of the conform registry (the
// black-box cases `wharf conform` runs against any broker) against an
// in-process Wharf started with activemq/activemq.xml plus an AMQP
// connector, a fresh broker per case as the tests they came from had.
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
				for _, tr := range config.DefaultTransports() {
					if tr.Scheme == "amqp" {
						tr.Port = 0
						cfg.Transports = append(cfg.Transports, tr)
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
				for ep, name := range map[string]string{
					conform.STOMP: "stomp", conform.STOMPSmall: "stomp-small",
					conform.OpenWire: "openwire", conform.MQTT: "mqtt", conform.AMQP: "amqp",
				} {
					if a := b.Addr(name); a != nil {
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
