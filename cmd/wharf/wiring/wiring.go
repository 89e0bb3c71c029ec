// Package wiring is the one list that names every protocol and store
// package Wharf is built with. cmd/wharf runs brokers with it and the
// conformance harness starts its test brokers with it; nothing else imports
// the concrete packages.
package wiring

import (
	"fmt"
	"log/slog"
	"strconv"

	"wharf/engine"
	"wharf/engine/broker"
	"wharf/engine/config"
	"wharf/protocols/openwire"
	"wharf/protocols/stomp"
	"wharf/protocols/transport"
	"wharf/storage/memory"
)

// Factories returns the listener and store factories of this build.
func Factories() broker.Factories {
	return broker.Factories{
		Listeners: map[string]broker.ListenerFactory{
			"stomp":     stompListener,
			"stomp+nio": stompListener,
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
	stompOpts := map[string]string{}
	var to transport.Options
	for k, v := range t.Options {
		if k == "maximumConnections" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("maximumConnections=%q: not a count", v)
			}
			to.MaxConnections = n
			continue
		}
		stompOpts[k] = v
	}
	so, err := stomp.ParseOptions(stompOpts)
	if err != nil {
		return nil, err
	}
	so.Logger = log
	to.Logger = log
	return transport.Listen(addr, stomp.NewServer(e, so).Handler, to)
}

func openwireListener(e *engine.Engine, t config.Transport, addr string, log *slog.Logger) (broker.Listener, error) {
	owOpts := map[string]string{}
	var to transport.Options
	for k, v := range t.Options {
		if k == "maximumConnections" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("maximumConnections=%q: not a count", v)
			}
			to.MaxConnections = n
			continue
		}
		owOpts[k] = v
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

// kahaDBStore stands in for the KahaDB store until it lands (issue 4): the
// memory store serves behind the same interface, and the log says plainly
// that persistent messages do not survive a restart.
func kahaDBStore(c *config.Config, log *slog.Logger) (engine.Store, error) {
	log.Warn("KahaDB store not available in this build: persistent messages are kept in memory and lost on restart",
		"directory", c.Persistence.KahaDB.Directory)
	return memory.New(), nil
}
