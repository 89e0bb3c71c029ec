package broker_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/broker"
	"wharf/engine/config"
	"wharf/engine/message"
	"wharf/security"
	"wharf/storage/memory"
)

func memoryOnly() broker.Factories {
	return broker.Factories{Stores: map[string]broker.StoreFactory{
		config.KindMemory: func(context.Context, *config.Config, *slog.Logger) (engine.Store, error) { return memory.New(), nil },
	}}
}

func parse(t *testing.T, xml string) *config.Config {
	t.Helper()
	c, err := config.ParseXML(strings.NewReader(xml), "activemq.xml", map[string]string{"activemq.data": t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestBrokerRefusesWhatItCannotServe(t *testing.T) {
	c := parse(t, `<broker xmlns="http://activemq.apache.org/schema/core" persistent="false">
  <transportConnectors><transportConnector name="openwire" uri="tcp://127.0.0.1:61616"/></transportConnectors>
</broker>`)
	_, err := broker.Start(c, broker.Options{Factories: memoryOnly(), AnyPort: true})
	if !errors.Is(err, broker.ErrUnsupported) || !strings.Contains(err.Error(), `"openwire"`) {
		t.Fatalf("openwire connector: %v, want ErrUnsupported naming it", err)
	}
	c = parse(t, `<broker xmlns="http://activemq.apache.org/schema/core"/>`)
	_, err = broker.Start(c, broker.Options{Factories: memoryOnly()})
	if !errors.Is(err, broker.ErrUnsupported) || !strings.Contains(err.Error(), "kahaDB") {
		t.Fatalf("kahaDB without a factory: %v, want ErrUnsupported naming it", err)
	}
}

type sink chan engine.Delivery

func (s sink) Deliver(d engine.Delivery) { s <- d }

// TestBrokerPolicyFromConfig runs an activemq.xml dead-letter policy through
// to the engine: a poisoned message lands where the config says.
func TestBrokerPolicyFromConfig(t *testing.T) {
	c := parse(t, `<broker xmlns="http://activemq.apache.org/schema/core" persistent="false">
  <destinationPolicy><policyMap><policyEntries>
    <policyEntry queue="orders.>" blockedProducerWarningInterval="5000">
      <deadLetterStrategy>
        <individualDeadLetterStrategy queuePrefix="DLQ." useQueueForQueueMessages="true" processExpired="false"/>
      </deadLetterStrategy>
    </policyEntry>
  </policyEntries></policyMap></destinationPolicy>
</broker>`)
	b, err := broker.Start(c, broker.Options{Factories: memoryOnly()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	e := b.Engine()
	conn, err := e.Connect(engine.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	q := message.QueueDest("orders.eu")
	ch := make(sink, 10)
	s, err := conn.Subscribe(engine.SubSpec{Destination: q, Prefetch: 10, AckMode: engine.AckIndividual}, ch)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Send(&message.Message{Destination: q, Persistent: true, Body: []byte("x")}, "", nil, 0); err != nil {
		t.Fatal(err)
	}
	d := recv(t, ch)
	if err := conn.Nack(s, d.ID, engine.NackPoison, ""); err != nil {
		t.Fatal(err)
	}
	dlq := message.QueueDest("DLQ.orders.eu")
	dch := make(sink, 10)
	if _, err := conn.Subscribe(engine.SubSpec{Destination: dlq, Prefetch: 10}, dch); err != nil {
		t.Fatal(err)
	}
	got := recv(t, dch).Msg
	if got.OriginalDestination != q {
		t.Fatalf("DLQ copy's original destination %v, want %v", got.OriginalDestination, q)
	}
	if st := e.Stats(message.QueueDest("ActiveMQ.DLQ")); st.Exists {
		t.Fatal("the shared DLQ was used despite the individual strategy")
	}
	p := broker.Policy(c.PolicyFor(q))
	if p.DeadLetter.ProcessExpired {
		t.Fatal("processExpired=false not carried to the engine policy")
	}
	if p.BlockedProducerWarningInterval != 5*time.Second {
		t.Fatalf("blockedProducerWarningInterval=5000 reached the engine policy as %v", p.BlockedProducerWarningInterval)
	}
}

func recv(t *testing.T, ch sink) engine.Delivery {
	t.Helper()
	select {
	case d := <-ch:
		return d
	case <-time.After(5 * time.Second):
		t.Fatal("no delivery within 5s")
		return engine.Delivery{}
	}
}

// KahaDB attributes about ActiveMQ's page file, which Wharf has no use for,
// are accepted and said to be so at start-up when set; defaults say
// nothing.
func TestBrokerWarnsKahaDBPageFileSettings(t *testing.T) {
	start := func(kaha string) string {
		t.Helper()
		c := parse(t, `<broker xmlns="http://activemq.apache.org/schema/core">
  <persistenceAdapter>`+kaha+`</persistenceAdapter>
</broker>`)
		f := memoryOnly()
		f.Stores[config.KindKahaDB] = f.Stores[config.KindMemory]
		var logs bytes.Buffer
		b, err := broker.Start(c, broker.Options{Factories: f, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		b.Close()
		return logs.String()
	}
	logs := start(`<kahaDB directory="${activemq.data}/k" indexCacheSize="500" checksumJournalFiles="false"/>`)
	for _, want := range []string{`setting="kahaDB indexCacheSize"`, `setting="kahaDB checksumJournalFiles=false"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("no warning %s in:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "indexWriteBatchSize") {
		t.Errorf("a default attribute was warned about:\n%s", logs)
	}
	if logs := start(`<kahaDB directory="${activemq.data}/k"/>`); strings.Contains(logs, "setting=\"kahaDB") {
		t.Errorf("defaults warned about:\n%s", logs)
	}
}

// TestBrokerSaysLoopbackOnlyWithoutAuthentication: secure by default
// (issue 14), a broker without an authentication plugin says at start-up
// that every client may do anything and that its connectors therefore
// listen on loopback only, and what to add; a trusted-network broker warns
// instead; a broker with authentication says neither.
func TestBrokerSaysLoopbackOnlyWithoutAuthentication(t *testing.T) {
	start := func(c *config.Config, sf broker.SecurityFactory) string {
		t.Helper()
		f := memoryOnly()
		f.Security = sf
		var logs bytes.Buffer
		b, err := broker.Start(c, broker.Options{Factories: f, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		b.Close()
		return logs.String()
	}
	const open = "no authentication configured: every client may connect and do anything, so connectors listen on loopback only; add an authentication plugin to <plugins> to listen elsewhere"
	const trusted = "no authentication configured and the network is declared trusted"
	plain := `<broker xmlns="http://activemq.apache.org/schema/core" persistent="false"/>`
	logs := start(parse(t, plain), nil)
	if !strings.Contains(logs, "level=INFO msg=\""+open+"\"") || strings.Contains(logs, trusted) {
		t.Errorf("without authentication: want the INFO line %q, got:\n%s", open, logs)
	}
	c := parse(t, plain)
	c.TrustedNetwork = true
	logs = start(c, nil)
	if !strings.Contains(logs, "level=WARN msg=\""+trusted) || strings.Contains(logs, open) {
		t.Errorf("trusted network: want the WARN line %q, got:\n%s", trusted, logs)
	}
	c = parse(t, `<broker xmlns="http://activemq.apache.org/schema/core" persistent="false">
  <plugins><simpleAuthenticationPlugin><users>
    <authenticationUser username="u" password="p" groups="g"/>
  </users></simpleAuthenticationPlugin></plugins>
</broker>`)
	logs = start(c, func(c *config.Config, log *slog.Logger) (broker.Security, error) {
		p, err := security.New(c, log)
		if err != nil {
			return nil, err
		}
		return p, nil
	})
	if strings.Contains(logs, "no authentication configured") || !strings.Contains(logs, `msg="authentication configured" plugin=simple`) {
		t.Errorf("with authentication: got:\n%s", logs)
	}
}
