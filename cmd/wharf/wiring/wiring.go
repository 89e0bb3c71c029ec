// Package wiring is the one list that names every protocol and store
// package Wharf is built with. cmd/wharf runs brokers with it and the
// conformance harness starts its test brokers with it; nothing else imports
// the concrete packages.
package wiring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"strconv"
	"time"

	"wharf/engine"
	"wharf/engine/broker"
	"wharf/engine/config"
	"wharf/protocols/amqp"
	"wharf/protocols/mqtt"
	"wharf/protocols/openwire"
	"wharf/protocols/stomp"
	"wharf/protocols/transport"
	"wharf/protocols/transport/ws"
	"wharf/storage/kahadb"
	"wharf/storage/memory"
	"wharf/storage/tempstore"
)

// Factories returns the listener and store factories of this build.
func Factories() broker.Factories {
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
		},
		Stores: map[string]broker.StoreFactory{
			config.KindMemory:  memoryStore,
			config.KindKahaDB:  kahaDBStore,
			config.KindMKahaDB: mKahaDBStore,
		},
		Temp: tempStore,
	}
}

// tempStore opens the temp store non-persistent messages spill to.
func tempStore(dir string, log *slog.Logger) (engine.TempSpace, error) {
	return tempstore.Open(tempstore.Options{Dir: dir, Logger: log.With("store", "temp")})
}

func stompListener(e *engine.Engine, t config.Transport, addr string, log *slog.Logger) (broker.Listener, error) {
	stompOpts, to, err := transportOptions(t)
	if err != nil {
		return nil, err
	}
	so, err := stomp.ParseOptions(stompOpts)
	if err != nil {
		return nil, err
	}
	so.Logger = log
	to.Logger = log
	return transport.Listen(addr, stomp.NewServer(e, so).Handler, to)
}

func mqttListener(e *engine.Engine, t config.Transport, addr string, log *slog.Logger) (broker.Listener, error) {
	mqttOpts, to, err := transportOptions(t)
	if err != nil {
		return nil, err
	}
	mo, err := mqtt.ParseOptions(mqttOpts)
	if err != nil {
		return nil, err
	}
	mo.Logger = log
	to.Logger = log
	return transport.Listen(addr, mqtt.NewServer(e, mo).Handler, to)
}

func amqpListener(e *engine.Engine, t config.Transport, addr string, log *slog.Logger) (broker.Listener, error) {
	amqpOpts, to, err := transportOptions(t)
	if err != nil {
		return nil, err
	}
	ao, err := amqp.ParseOptions(amqpOpts)
	if err != nil {
		return nil, err
	}
	ao.Logger = log
	ao.BrokerName = e.BrokerName()
	to.Logger = log
	return transport.Listen(addr, amqp.NewServer(e, ao).Handler, to)
}

// wsListener serves ActiveMQ's ws:// connector: STOMP and/or MQTT over
// WebSocket on one port, chosen by the subprotocol the client offers.
func wsListener(withSTOMP, withMQTT bool) broker.ListenerFactory {
	return func(e *engine.Engine, t config.Transport, addr string, log *slog.Logger) (broker.Listener, error) {
		wo, rest, err := ws.ParseOptions(t.Options)
		if err != nil {
			return nil, err
		}
		wo.Logger = log
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
	wo, rest, err := ws.ParseOptions(t.Options)
	if err != nil {
		return nil, err
	}
	ao, err := amqp.ParseOptions(rest)
	if err != nil {
		return nil, err
	}
	ao.Logger, ao.BrokerName = log, e.BrokerName()
	wo.Logger = log
	wo.DefaultSubprotocol = "amqp"
	return ws.Listen(addr, ws.Subprotocols(amqp.NewServer(e, ao).Handler, "amqp"), wo)
}

// transportOptions splits a connector's options into the transport's own
// and the protocol's.
func transportOptions(t config.Transport) (map[string]string, transport.Options, error) {
	opts := map[string]string{}
	var to transport.Options
	for k, v := range t.Options {
		if k == "maximumConnections" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, to, fmt.Errorf("maximumConnections=%q: not a count", v)
			}
			to.MaxConnections = n
			continue
		}
		opts[k] = v
	}
	return opts, to, nil
}

func openwireListener(e *engine.Engine, t config.Transport, addr string, log *slog.Logger) (broker.Listener, error) {
	owOpts, to, err := transportOptions(t)
	if err != nil {
		return nil, err
	}
	oo, err := openwire.ParseOptions(owOpts)
	if err != nil {
		return nil, err
	}
	oo.Logger = log
	oo.BrokerURL = t.Scheme + "://" + addr
	srv, err := openwire.NewServer(e, oo)
	if err != nil {
		return nil, err
	}
	to.Logger = log
	return transport.Listen(addr, srv.Handler, to)
}

func memoryStore(context.Context, *config.Config, *slog.Logger) (engine.Store, error) {
	return memory.New(), nil
}

// kahaDBStore opens the KahaDB-compatible store. A directory that is a
// single KahaDB journal (ActiveMQ's, or a one-shard Wharf's) makes the
// broker run one shard, so that ActiveMQ's pending messages are recovered
// without the user having to know about shards.
func kahaDBStore(ctx context.Context, c *config.Config, log *slog.Logger) (engine.Store, error) {
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
	}
}

// mKahaDBStore opens <mKahaDB>: one KahaDB store per filter (or per
// destination), each laid out by shard like a plain KahaDB store.
func mKahaDBStore(ctx context.Context, c *config.Config, log *slog.Logger) (engine.Store, error) {
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
		o.Filters = append(o.Filters, kahadb.Filter{Dest: f.Destination(), PerDestination: f.PerDestination, Options: ko})
	}
	return kahadb.OpenMulti(ctx, o)
}
