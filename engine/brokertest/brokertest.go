// Package brokertest starts real brokers for tests, as net/http/httptest
// starts servers: every connector on 127.0.0.1 port 0, storage in the test's
// temporary directory, stopped by t.Cleanup. Import it only from tests and
// the conformance harness.
package brokertest

import (
	"context"
	"log/slog"
	"net"
	"os"
	"testing"

	"wharf/engine"
	"wharf/engine/broker"
	"wharf/engine/config"
)

// Broker is a running test broker.
type Broker struct {
	*broker.Broker
	t    testing.TB
	cfg  *config.Config
	opts broker.Options
}

// Option changes the config or options before the broker starts.
type Option func(*config.Config, *broker.Options)

// WithEngine adjusts the engine options (inject a clock, a shard count).
func WithEngine(fn func(*engine.Options)) Option {
	return func(_ *config.Config, o *broker.Options) { o.Engine = fn }
}

// WithConfig adjusts the config.
func WithConfig(fn func(*config.Config)) Option {
	return func(c *config.Config, _ *broker.Options) { fn(c) }
}

// WithKahaDB runs the broker on a KahaDB store (the store `wharf run` uses
// by default) in the test's data directory, enableJournalDiskSyncs on as
// by default; Restart then closes it and reopens it from disk, so that a
// restart test checks what the store recovers. It applies after the
// options before it (a WithConfig that replaces the whole config comes
// first); the KahaDB directory it leaves as they set it, or the default
// <dataDirectory>/kahadb.
func WithKahaDB() Option {
	return func(c *config.Config, _ *broker.Options) {
		c.Persistent = true
		c.Persistence.Kind = config.KindKahaDB
	}
}

// WithLSM runs the broker on the LSM store (<wharfLSM>, storage/lsm) in
// the test's data directory, syncWrites on as by default; Restart then
// closes it and reopens it from disk, as WithKahaDB does.
func WithLSM() Option {
	return func(c *config.Config, _ *broker.Options) {
		c.Persistent = true
		c.Persistence.Kind = config.KindLSM
	}
}

// WithJDBC runs the broker on ActiveMQ's JDBC store (storage/jdbc) on
// the PostgreSQL database db at host:port as user (trust
// authentication: no password), creating its tables; Restart then
// closes the store and reopens it on the same database, as WithKahaDB
// does.
func WithJDBC(host string, port int, db, user string) Option {
	return func(c *config.Config, _ *broker.Options) {
		c.Persistent = true
		c.Persistence.Kind = config.KindJDBC
		j := &c.Persistence.JDBC
		j.Host, j.Port, j.Database, j.User = host, port, db, user
		j.CreateTablesOnStartup = true
		j.UseLock = false
	}
}

// Start starts a broker with every connector f serves among the default
// ones, on loopback port 0, and returns once they accept connections.
func Start(t testing.TB, f broker.Factories, opts ...Option) *Broker {
	t.Helper()
	cfg := config.Default()
	cfg.DataDirectory = t.TempDir()
	cfg.Persistence.Kind = config.KindMemory
	for _, tr := range config.DefaultTransports() {
		if f.Listeners[tr.Scheme] != nil {
			tr.Port = 0
			cfg.Transports = append(cfg.Transports, tr)
		}
	}
	o := broker.Options{Factories: f, AnyPort: true}
	if testing.Verbose() || os.Getenv("WHARF_TEST_LOG") != "" {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	for _, opt := range opts {
		opt(&cfg, &o)
	}
	b := &Broker{t: t, cfg: &cfg, opts: o}
	b.start()
	t.Cleanup(func() {
		if b.Broker != nil {
			b.Broker.Close()
		}
	})
	return b
}

func (b *Broker) start() {
	b.t.Helper()
	bk, err := broker.Start(b.cfg, b.opts)
	if err != nil {
		b.t.Fatalf("start broker: %v", err)
	}
	b.Broker = bk
}

// STOMPAddr is the STOMP connector's address ("127.0.0.1:port").
func (b *Broker) STOMPAddr() string { return addrString(b.Addr("stomp")) }

func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}

// Restart stops the broker and starts it again on the same store (new
// ports), as a restarted broker reopens its data directory. A store on
// disk (WithKahaDB) is closed and opened again: what comes back is what
// it recovers. The memory store keeps its state when closed, so the same
// instance is handed to the next start: persistent state survives, but
// nothing is recovered from a disk; a restart test meant to check
// recovery runs on KahaDB.
func (b *Broker) Restart() {
	b.t.Helper()
	st := b.Broker.Store()
	if err := b.Broker.Close(); err != nil {
		b.t.Fatalf("stop broker: %v", err)
	}
	if b.onMemory() {
		stores := map[string]broker.StoreFactory{}
		for k, f := range b.opts.Factories.Stores {
			stores[k] = f
		}
		stores[config.KindMemory] = func(context.Context, *config.Config, *slog.Logger) (engine.Store, error) { return st, nil }
		b.opts.Factories.Stores = stores
	}
	b.start()
}

// onMemory reports whether the broker runs on the memory store.
func (b *Broker) onMemory() bool {
	return !b.cfg.Persistent || b.cfg.Persistence.Kind == config.KindMemory
}

// MQTTAddr is the MQTT connector's address ("127.0.0.1:port").
func (b *Broker) MQTTAddr() string { return addrString(b.Addr("mqtt")) }

// AMQPAddr is the AMQP connector's address ("127.0.0.1:port").
func (b *Broker) AMQPAddr() string { return addrString(b.Addr("amqp")) }
