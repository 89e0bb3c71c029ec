// Package wiring is the one list that names every protocol and store
// package Wharf is built with. cmd/wharf runs brokers with it and the
// conformance harness starts its test brokers with it; nothing else imports
// the concrete packages.
package wiring

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"

	"wharf/engine"
	"wharf/engine/broker"
	"wharf/engine/config"
	"wharf/protocols/mqtt"
	"wharf/protocols/openwire"
	"wharf/protocols/stomp"
	"wharf/protocols/transport"
	"wharf/storage/kahadb"
	"wharf/storage/memory"
)

// Factories returns the listener and store factories of this build.
func Factories() broker.Factories {
	return broker.Factories{
		Listeners: map[string]broker.ListenerFactory{
			"stomp":     stompListener,
			"stomp+nio": stompListener,
			"mqtt":      mqttListener,
			"mqtt+nio":  mqttListener,
			"tcp":       openwireListener,
			"nio":       openwireListener,
		},
		Stores: map[string]broker.StoreFactory{
			config.KindMemory: memoryStore,
			config.KindKahaDB: kahaDBStore,
		},
	}
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

func memoryStore(*config.Config, *slog.Logger) (engine.Store, error) {
	return memory.New(), nil
}

// kahaDBStore opens the KahaDB-compatible store. A directory that is a
// single KahaDB journal (ActiveMQ's, or a one-shard Wharf's) makes the
// broker run one shard, so that ActiveMQ's pending messages are recovered
// without the user having to know about shards.
func kahaDBStore(c *config.Config, log *slog.Logger) (engine.Store, error) {
	k := c.Persistence.KahaDB
	dir := k.Directory
	if dir == "" {
		dir = filepath.Join(c.DataDirectory, "kahadb")
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "db-*.log")); len(matches) > 0 && c.Shards != 1 {
		log.Info("a single KahaDB journal: running one shard", "dir", dir)
		c.Shards = 1
	}
	return kahadb.Open(context.Background(), kahadb.Options{
		Dir:                    dir,
		JournalMaxFileLength:   k.JournalMaxFileLength,
		EnableJournalDiskSyncs: k.EnableJournalDiskSyncs,
		CleanupInterval:        k.CleanupInterval,
		ArchiveDataLogs:        k.ArchiveDataLogs,
		Logger:                 log.With("store", "kahadb"),
	})
}
