// Package wiring is the one list that names every protocol and store
// package Wharf is built with. cmd/wharf runs brokers with it and the
// conformance harness starts its test brokers with it; nothing else imports
// the concrete packages.
package wiring

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"strconv"
	"time"

	"wharf/cluster"
	"wharf/engine"
	"wharf/engine/broker"
	"wharf/engine/config"
	"wharf/protocols/amqp"
	"wharf/protocols/mqtt"
	"wharf/protocols/openwire"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
	"wharf/protocols/stomp"
	"wharf/protocols/transport"
	"wharf/protocols/transport/ws"
	"wharf/security"
	"wharf/security/enc"
	"wharf/storage/jdbc"
	"wharf/storage/kahadb"
	"wharf/storage/kahadb/journal"
	"wharf/storage/lsm"
	"wharf/storage/memory"
	"wharf/storage/tempstore"
)

// Factories returns the listener and store factories of this build.
func Factories() broker.Factories { return factories(nil) }

// FactoriesObserved is Factories whose KahaDB stores tell obs of every
// journal batch and fsync (the web server's histograms,
// protocols/http.JournalMetrics).
func FactoriesObserved(obs journal.Observer) broker.Factories { return factories(obs) }

func factories(obs journal.Observer) broker.Factories {
	return broker.Factories{
		Listeners: map[string]broker.ListenerFactory{
			"stomp":     stompListener,
			"stomp+nio": stompListener,
			"mqtt":      mqttListener,
			"mqtt+nio":  mqttListener,
			"amqp":      amqpListener,
			"amqp+nio":  amqpListener,
			"ws":        wsListener(true, true),
			"ws+nio":    wsListener(true, true),
			"stomp+ws":  wsListener(true, false),
			"mqtt+ws":   wsListener(false, true),
			"amqp+ws":   amqpWSListener,
			"tcp":       openwireListener,
			"nio":       openwireListener,
			// TLS: the same protocols over crypto/tls (transport.ListenTLS;
			// ws.Options.TLS for WebSocket), with the broker's <sslContext>.
			"ssl":           openwireListener,
			"nio+ssl":       openwireListener,
			"stomp+ssl":     stompListener,
			"stomp+nio+ssl": stompListener,
			"mqtt+ssl":      mqttListener,
			"mqtt+nio+ssl":  mqttListener,
			"amqp+ssl":      amqpListener,
			"amqp+nio+ssl":  amqpListener,
			"amqps":         amqpListener,
			"wss":           wsListener(true, true),
			"stomp+wss":     wsListener(true, false),
			"mqtt+wss":      wsListener(false, true),
			"amqp+wss":      amqpWSListener,
		},
		Stores: map[string]broker.StoreFactory{
			config.KindMemory:  memoryStore,
			config.KindKahaDB:  kahaDBStore(obs),
			config.KindMKahaDB: mKahaDBStore(obs),
			config.KindLSM:     lsmStore,
			config.KindJDBC:    jdbcStore,
		},
		Temp:     tempStore,
		Security: securityPlugin,
		Network:  networkConnectors,
	}
}

// networkConnectors runs the config's network connectors and multicast
// advertisements (package cluster).
func networkConnectors(e *engine.Engine, c *config.Config, adverts []broker.Advertised, log *slog.Logger) (broker.Service, error) {
	var ads []cluster.Advert
	for _, a := range adverts {
		ads = append(ads, cluster.Advert{Service: a.URI, Multicast: a.Discovery})
	}
	n, err := cluster.Start(e, c, log, ads...)
	if err != nil {
		return nil, err // not n: a typed nil would be a non-nil broker.Service
	}
	return n, nil
}

// securityPlugin builds the authentication and authorization plugins of
// the config's <plugins> (package security).
func securityPlugin(c *config.Config, log *slog.Logger) (broker.Security, error) {
	p, err := security.New(c, log)
	if err != nil {
		return nil, err // not p: a typed nil would be a non-nil broker.Security
	}
	return p, nil
}

// Decrypt decrypts the ENC(...) values of a configuration as ActiveMQ's
// Jasypt placeholder configurer does (config.LoadOptions.Decrypt).
func Decrypt(ciphertext, password string) (string, error) {
	return enc.Decrypt(ciphertext, password)
}

// tempStore opens the temp store non-persistent messages spill to.
func tempStore(dir string, log *slog.Logger) (engine.TempSpace, error) {
	return tempstore.Open(tempstore.Options{Dir: dir, Logger: log.With("store", "temp")})
}

// streamListener serves one protocol on a TCP connector (gnet) or a TLS
// one (crypto/tls): the connector's options are split between the
// transport and the protocol, parse reads the protocol's (unknown ones are
// an error naming them) and serve builds the protocol's server.
func streamListener[O any](parse func(map[string]string) (O, error),
	serve func(e *engine.Engine, o O, t config.Transport, addr string, log *slog.Logger) (transport.HandlerFactory, error)) broker.ListenerFactory {
	return func(e *engine.Engine, t config.Transport, addr string, log *slog.Logger) (broker.Listener, error) {
		opts, to, tc, err := transportOptions(t)
		if err != nil {
			return nil, err
		}
		o, err := parse(opts)
		if err != nil {
			return nil, err
		}
		h, err := serve(e, o, t, addr, log)
		if err != nil {
			return nil, err
		}
		to.Logger = log
		return listen(addr, h, to, tc)
	}
}

var (
	stompListener = streamListener(stomp.ParseOptions, func(e *engine.Engine, o stomp.Options, _ config.Transport, _ string, log *slog.Logger) (transport.HandlerFactory, error) {
		o.Logger = log
		return stomp.NewServer(e, o).Handler, nil
	})
	mqttListener = streamListener(mqtt.ParseOptions, func(e *engine.Engine, o mqtt.Options, _ config.Transport, _ string, log *slog.Logger) (transport.HandlerFactory, error) {
		o.Logger = log
		return mqtt.NewServer(e, o).Handler, nil
	})
	amqpListener = streamListener(amqp.ParseOptions, func(e *engine.Engine, o amqp.Options, _ config.Transport, _ string, log *slog.Logger) (transport.HandlerFactory, error) {
		o.Logger, o.BrokerName = log, e.BrokerName()
		return amqp.NewServer(e, o).Handler, nil
	})
	openwireListener = streamListener(openwire.ParseOptions, func(e *engine.Engine, o openwire.Options, t config.Transport, addr string, log *slog.Logger) (transport.HandlerFactory, error) {
		o.Logger = log
		o.BrokerURL = t.Scheme + "://" + addr
		if t.ClusterClients.Update {
			// This broker's URI, then those of the brokers its network
			// bridges connect to that updateClusterFilter matches.
			o.ConnectedBrokers = t.ClusterClients.URI
			o.ClusterFilter = t.ClusterClients.Matches
			o.UpdateClusterClientsOnRemove = t.ClusterClients.UpdateOnRemove
		}
		o.RebalanceClients = t.ClusterClients.Rebalance
		// A remote broker's duplex network connector: this broker runs
		// the reverse bridge over the accepted connection.
		o.Duplex = func(peer *wire.BrokerInfo, attach func(client.Options) (*client.Conn, error)) error {
			return cluster.ServeDuplex(e, log, peer, attach)
		}
		o.AuditNetworkProducers = t.AuditNetworkProducers
		srv, err := openwire.NewServer(e, o)
		if err != nil {
			return nil, err
		}
		return srv.Handler, nil
	})
)

// wsListener serves ActiveMQ's ws:// connector: STOMP and/or MQTT over
// WebSocket on one port, chosen by the subprotocol the client offers.
func wsListener(withSTOMP, withMQTT bool) broker.ListenerFactory {
	return func(e *engine.Engine, t config.Transport, addr string, log *slog.Logger) (broker.Listener, error) {
		tc, opts, err := tlsConfig(t)
		if err != nil {
			return nil, err
		}
		wo, rest, err := ws.ParseOptions(opts)
		if err != nil {
			return nil, err
		}
		wo.Logger, wo.TLS = log, tc
		// Each protocol gets the options it knows; one that neither knows
		// is an error naming it.
		stompOpts, mqttOpts := map[string]string{}, map[string]string{}
		for k, v := range rest {
			_, serr := stomp.ParseOptions(map[string]string{k: v})
			_, merr := mqtt.ParseOptions(map[string]string{k: v})
			if !(withSTOMP && serr == nil) && !(withMQTT && merr == nil) {
				return nil, errors.Join(serr, merr)
			}
			if serr == nil {
				stompOpts[k] = v
			}
			if merr == nil {
				mqttOpts[k] = v
			}
		}
		protos := map[string]transport.HandlerFactory{}
		if withSTOMP {
			so, err := stomp.ParseOptions(stompOpts)
			if err != nil {
				return nil, err
			}
			so.Logger = log
			maps.Copy(protos, ws.Subprotocols(stomp.NewServer(e, so).Handler, ws.STOMPSubprotocols...))
		}
		if withMQTT {
			mo, err := mqtt.ParseOptions(mqttOpts)
			if err != nil {
				return nil, err
			}
			mo.Logger = log
			maps.Copy(protos, ws.Subprotocols(mqtt.NewServer(e, mo).Handler, ws.MQTTSubprotocols...))
			if !withSTOMP {
				wo.DefaultSubprotocol = "mqtt"
			}
		}
		return ws.Listen(addr, protos, wo)
	}
}

// amqpWSListener serves AMQP 1.0 over WebSocket (amqp+ws://, subprotocol
// "amqp", binary frames), as ActiveMQ's amqp+ws connector does.
func amqpWSListener(e *engine.Engine, t config.Transport, addr string, log *slog.Logger) (broker.Listener, error) {
	tc, opts, err := tlsConfig(t)
	if err != nil {
		return nil, err
	}
	wo, rest, err := ws.ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	wo.TLS = tc
	ao, err := amqp.ParseOptions(rest)
	if err != nil {
		return nil, err
	}
	ao.Logger, ao.BrokerName = log, e.BrokerName()
	wo.Logger = log
	wo.DefaultSubprotocol = "amqp"
	return ws.Listen(addr, ws.Subprotocols(amqp.NewServer(e, ao).Handler, "amqp"), wo)
}

// tlsConfig builds the TLS server configuration of a TLS connector from
// the broker's <sslContext> and the connector's TLS options (parsed by
// the loader), and returns the options left for the transport and the
// protocol. For a plain connector it returns a nil config and the options
// unchanged.
func tlsConfig(t config.Transport) (*tls.Config, map[string]string, error) {
	if !config.IsTLSScheme(t.Scheme) {
		return nil, t.Options, nil
	}
	tc, err := security.ServerTLS(t.TLS, t.TLSOptions)
	if err != nil {
		return nil, nil, err
	}
	return tc, config.NonTLSOptions(t.Options), nil
}

// listen starts the transport of a connector: gnet event loops for a plain
// one, crypto/tls over net for a TLS one (gnet has no TLS; see
// protocols/transport's doc, "TLS").
func listen(addr string, f transport.HandlerFactory, to transport.Options, tc *tls.Config) (broker.Listener, error) {
	if tc != nil {
		return transport.ListenTLS(addr, f, to, tc)
	}
	return transport.Listen(addr, f, to)
}

// transportOptions splits a connector's options into the transport's own
// and the protocol's, and builds its TLS configuration when it is a TLS
// connector (nil otherwise).
func transportOptions(t config.Transport) (map[string]string, transport.Options, *tls.Config, error) {
	opts := map[string]string{}
	var to transport.Options
	tc, rest, err := tlsConfig(t)
	if err != nil {
		return nil, to, nil, err
	}
	for k, v := range rest {
		if k == "maximumConnections" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, to, nil, fmt.Errorf("maximumConnections=%q: not a count", v)
			}
			to.MaxConnections = n
			continue
		}
		opts[k] = v
	}
	return opts, to, tc, nil
}

func memoryStore(context.Context, *config.Config, *slog.Logger) (engine.Store, error) {
	return memory.New(), nil
}

// lsmStore opens Wharf's LSM store (<wharfLSM>, storage/lsm).
func lsmStore(_ context.Context, c *config.Config, log *slog.Logger) (engine.Store, error) {
	s := c.Persistence.LSM
	dir := s.Directory
	if dir == "" {
		dir = filepath.Join(c.DataDirectory, "lsm")
	}
	return lsm.Open(lsm.Options{
		Dir:              dir,
		SyncWrites:       s.SyncWrites,
		CleanupInterval:  s.CleanupInterval,
		MemTableSize:     s.MemTableSize,
		ValueThreshold:   s.ValueThreshold,
		ValueLogFileSize: s.ValueLogFileSize,
		MinFreeDisk:      s.MinFreeDisk,
		Logger:           log.With("store", "lsm"),
	})
}

// jdbcStore opens ActiveMQ's JDBC store on PostgreSQL
// (<jdbcPersistenceAdapter>, storage/jdbc), taking its lock first with
// useLock (a slave waits there until it is master).
func jdbcStore(ctx context.Context, c *config.Config, log *slog.Logger) (engine.Store, error) {
	j := c.Persistence.JDBC
	log = log.With("store", "jdbc")
	o := jdbc.Options{
		URL:           j.URL(),
		MaxConns:      j.MaxConnections,
		MinConns:      j.MinConnections,
		TablePrefix:   j.TablePrefix,
		CreateTables:  j.CreateTablesOnStartup,
		Isolation:     j.TransactionIsolation,
		CleanupPeriod: j.CleanupPeriod,
		Logger:        log,
	}
	if j.UseLock {
		o.Locker = jdbc.LockDatabase
		if j.Locker == config.LockerLease {
			o.Locker = jdbc.LockLease
		}
		o.LockAcquireSleepInterval = j.LockAcquireSleepInterval
		o.LockKeepAlivePeriod = j.LockKeepAlivePeriod
		o.LeaseHolderID = j.LeaseHolderID
		if o.LeaseHolderID == "" {
			o.LeaseHolderID = c.BrokerName // LeaseDatabaseLocker's default
		}
		o.MaxAllowableDiffFromDBTime = j.MaxAllowableDiffFromDBTime
	}
	s, err := jdbc.OpenContext(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("jdbcPersistenceAdapter on %s: %w", j.Redacted(), err)
	}
	return s, nil
}

// kahaDBStore opens the KahaDB-compatible store. A directory that is a
// single KahaDB journal (ActiveMQ's, or a one-shard Wharf's) makes the
// broker run one shard, so that ActiveMQ's pending messages are recovered
// without the user having to know about shards.
func kahaDBStore(obs journal.Observer) broker.StoreFactory {
	return func(ctx context.Context, c *config.Config, log *slog.Logger) (engine.Store, error) {
		return openKahaDB(ctx, c, obs, log)
	}
}

func openKahaDB(ctx context.Context, c *config.Config, obs journal.Observer, log *slog.Logger) (engine.Store, error) {
	k := c.Persistence.KahaDB
	dir := k.Directory
	if dir == "" {
		dir = filepath.Join(c.DataDirectory, "kahadb")
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "db-*.log")); len(matches) > 0 && c.Shards != 1 {
		log.Info("a single KahaDB journal: running one shard", "dir", dir)
		c.Shards = 1
	}
	o := kahaDBOptions(k)
	o.Dir = dir
	o.Logger = log.With("store", "kahadb")
	o.JournalObserver = obs
	return kahadb.Open(ctx, o)
}

// kahaDBOptions are the store options of a <kahaDB>.
func kahaDBOptions(k config.KahaDB) kahadb.Options {
	var periodic time.Duration
	if k.JournalDiskSyncStrategy == config.SyncPeriodic {
		periodic = k.JournalDiskSyncInterval
	}
	return kahadb.Options{
		Dir:                     k.Directory,
		JournalMaxFileLength:    k.JournalMaxFileLength,
		EnableJournalDiskSyncs:  k.EnableJournalDiskSyncs,
		JournalDiskSyncInterval: periodic,
		CleanupInterval:         k.CleanupInterval,
		NoCleanupOnStop:         !k.CleanupOnStop,
		CheckpointInterval:      k.CheckpointInterval,
		NoPeriodicCheckpoint:    k.CheckpointInterval == 0,
		ArchiveDataLogs:         k.ArchiveDataLogs,
		EnableAckCompaction:     k.EnableAckCompaction,
		// 0 in ActiveMQ compacts at every cycle, as 1 does (the count
		// is incremented, then compared); the store reads 0 as 10.
		CompactAcksAfterNoGC:          max(k.CompactAcksAfterNoGC, 1),
		CompactAcksIgnoresStoreGrowth: k.CompactAcksIgnoresStoreGrowth,
		LockRetry:                     k.LockAcquireSleepInterval,
		LockKeepAlivePeriod:           k.LockKeepAlivePeriod,
	}
}

// mKahaDBStore opens <mKahaDB>: one KahaDB store per filter (or per
// destination), each laid out by shard like a plain KahaDB store.
func mKahaDBStore(obs journal.Observer) broker.StoreFactory {
	return func(ctx context.Context, c *config.Config, log *slog.Logger) (engine.Store, error) {
		return openMKahaDB(ctx, c, obs, log)
	}
}

func openMKahaDB(ctx context.Context, c *config.Config, obs journal.Observer, log *slog.Logger) (engine.Store, error) {
	m := c.Persistence.MKahaDB
	dir := m.Directory
	if dir == "" {
		dir = filepath.Join(c.DataDirectory, "mkahadb")
	}
	lg := log.With("store", "mkahadb")
	o := kahadb.MultiOptions{Dir: dir, Logger: lg}
	for _, f := range m.Filters {
		ko := kahaDBOptions(f.KahaDB)
		ko.Logger = lg
		ko.JournalObserver = obs
		o.Filters = append(o.Filters, kahadb.Filter{Dest: f.Destination(), PerDestination: f.PerDestination, Options: ko})
	}
	return kahadb.OpenMulti(ctx, o)
}
