package openwire

import (
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"wharf/engine"
	"wharf/protocols/openwire/wire"
	"wharf/protocols/transport"
	"wharf/storage/memory"
)

var ccSeq atomic.Int64

// connectionControl connects to addr over a real socket as a JMS client
// does (WireFormatInfo, then a manageable ConnectionInfo, a failover
// client's reconnection when failoverReconnect) and returns the
// ConnectionControl the broker sends.
func connectionControl(t *testing.T, addr string, failoverReconnect bool) *wire.ConnectionControl {
	t.Helper()
	// A client id of its own: the previous call's connection may not be
	// gone from the broker yet, and a client id in use is refused.
	id := "cc-" + strconv.FormatInt(ccSeq.Add(1), 10)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o := wire.DefaultOptions()
	o.MaxInactivityDuration = 0
	enc := wire.NewEncoder(wire.InitialFormat(o.Version))
	dec := wire.NewDecoder(wire.InitialFormat(o.Version), wire.DefaultLimits())
	wfi, err := wire.NewWireFormatInfo(o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := enc.Append(nil, wfi)
	if err != nil {
		t.Fatal(err)
	}
	f, err := wire.Negotiate(DefaultOptions().Local, o)
	if err != nil {
		t.Fatal(err)
	}
	enc.SetFormat(f)
	b, err = enc.Append(b, &wire.ConnectionInfo{BaseCommand: wire.BaseCommand{CommandId: 1, ResponseRequired: true},
		ConnectionId: &wire.ConnectionId{Value: id}, ClientId: id, Manageable: true, FailoverReconnect: failoverReconnect})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 64<<10)
	negotiated := false
	for {
		ds, err := dec.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ds == nil {
			n, err := c.Read(buf)
			if err != nil {
				t.Fatalf("no ConnectionControl before %v", err)
			}
			dec.Feed(buf[:n])
			continue
		}
		switch x := ds.(type) {
		case *wire.WireFormatInfo:
			if !negotiated {
				dec.SetFormat(f)
				negotiated = true
			}
		case *wire.ConnectionControl:
			return x
		}
	}
}

// TestOpenWireConnectionControl: every manageable connection gets its
// connector's ConnectionControl: with updateClusterClients it names the
// connected brokers, with rebalanceClusterClients it asks for a rebalance
// unless the connection is a failover client's reconnection
// (ConnectionInfo.failoverReconnect); without either it names nothing and
// asks nothing.
func TestOpenWireConnectionControl(t *testing.T) {
	e, err := engine.New(engine.Options{Shards: 1, Store: memory.New(), TickInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	listen := func(o Options) string {
		srv, err := NewServer(e, o)
		if err != nil {
			t.Fatal(err)
		}
		l, err := transport.Listen("127.0.0.1:0", srv.Handler, transport.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l.Addr().String()
	}
	plain := listen(DefaultOptions())
	o := DefaultOptions()
	o.ConnectedBrokers, o.RebalanceClients = "tcp://127.0.0.1:61616", true
	cluster := listen(o)
	for _, c := range []struct {
		name, addr, brokers  string
		reconnect, rebalance bool
	}{
		{"plain", plain, "", false, false},
		{"cluster", cluster, "tcp://127.0.0.1:61616", false, true},
		{"cluster, failover reconnection", cluster, "tcp://127.0.0.1:61616", true, false},
	} {
		cc := connectionControl(t, c.addr, c.reconnect)
		if cc.ConnectedBrokers != c.brokers || cc.RebalanceConnection != c.rebalance || cc.ReconnectTo != "" || cc.FaultTolerant || cc.Close || cc.Exit || cc.Suspend || cc.Resume {
			t.Errorf("%s: %+v, want connectedBrokers %q, rebalance %v and nothing else", c.name, cc, c.brokers, c.rebalance)
		}
	}
}
