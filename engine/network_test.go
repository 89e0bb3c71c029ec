package engine_test

import (
	"slices"
	"testing"

	"wharf/engine"
)

type fakeNetwork []engine.NetworkConnectorInfo

func (f fakeNetwork) NetworkConnectors() []engine.NetworkConnectorInfo { return f }
func (f fakeNetwork) ResetBridgeStats(string, string) bool             { return false }

// TestPeerBrokers: a peer broker is listed while any bridge to it is up
// (one AddPeerBroker per bridge, one RemovePeerBroker each); watchers are
// told of every call, in order, until they stop watching; the network
// view is the one registered, nil once unregistered.
func TestPeerBrokers(t *testing.T) {
	e := start(t, nil).e
	if e.Network() != nil || len(e.PeerBrokers()) != 0 {
		t.Fatal("a new engine has a network")
	}
	var told []string
	stop := e.WatchPeerBrokers(func(p engine.PeerBroker, added bool) {
		if added {
			told = append(told, "+"+p.Name)
		} else {
			told = append(told, "-"+p.Name)
		}
	})
	b := engine.PeerBroker{Name: "b", ID: "ID:b", URL: "tcp://b:1"}
	e.AddPeerBroker(b)
	e.AddPeerBroker(b) // a second bridge to b
	e.RemovePeerBroker(b)
	if ps := e.PeerBrokers(); len(ps) != 1 || ps[0] != b {
		t.Fatalf("with one of two bridges to b up: %v", ps)
	}
	e.RemovePeerBroker(b)
	if ps := e.PeerBrokers(); len(ps) != 0 {
		t.Fatalf("with no bridge up: %v", ps)
	}
	stop()
	e.AddPeerBroker(b)
	if want := []string{"+b", "+b", "-b", "-b"}; !slices.Equal(told, want) {
		t.Fatalf("watcher told %v, want %v", told, want)
	}
	v := fakeNetwork{{Name: "nc"}}
	e.SetNetworkView(v)
	if got := e.Network().NetworkConnectors(); len(got) != 1 || got[0].Name != "nc" {
		t.Fatalf("registered view answers %v", got)
	}
	e.SetNetworkView(nil)
	if e.Network() != nil {
		t.Fatal("view still registered")
	}
}
