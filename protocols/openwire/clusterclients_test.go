package openwire

import (
	"net"
	"strconv"
	"testing"
	"time"

	"wharf/engine"
	"wharf/protocols/openwire/wire"
	"wharf/protocols/transport"
	"wharf/storage/memory"
)

// ccClient is a JMS connection over a real socket that stays open and
// reads what the broker sends it.
type ccClient struct {
	t   *testing.T
	c   net.Conn
	enc *wire.Encoder
	dec *wire.Decoder
	buf []byte
	seq int32
}

// dialCC connects to addr as a JMS client does, faultTolerant as a
// failover: client says it is.
func dialCC(t *testing.T, addr string, faultTolerant bool) *ccClient {
	t.Helper()
	id := "ft-" + strconv.FormatInt(ccSeq.Add(1), 10)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	o := wire.DefaultOptions()
	o.MaxInactivityDuration = 0
	cc := &ccClient{t: t, c: c, enc: wire.NewEncoder(wire.InitialFormat(o.Version)),
		dec: wire.NewDecoder(wire.InitialFormat(o.Version), wire.DefaultLimits()), buf: make([]byte, 64<<10)}
	wfi, err := wire.NewWireFormatInfo(o)
	if err != nil {
		t.Fatal(err)
	}
	cc.write(wfi)
	f, err := wire.Negotiate(DefaultOptions().Local, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cc.next().(*wire.WireFormatInfo); !ok {
		t.Fatal("no WireFormatInfo first")
	}
	cc.enc.SetFormat(f)
	cc.dec.SetFormat(f)
	cc.write(&wire.ConnectionInfo{BaseCommand: wire.BaseCommand{CommandId: cc.id(), ResponseRequired: true},
		ConnectionId: &wire.ConnectionId{Value: id}, ClientId: id, Manageable: true, FaultTolerant: faultTolerant})
	return cc
}

func (cc *ccClient) id() int32 { cc.seq++; return cc.seq }

func (cc *ccClient) write(ds wire.DataStructure) {
	cc.t.Helper()
	b, err := cc.enc.Append(nil, ds)
	if err != nil {
		cc.t.Fatal(err)
	}
	if _, err := cc.c.Write(b); err != nil {
		cc.t.Fatal(err)
	}
}

// next is the next command the broker sends but BrokerInfo (10 s at
// most).
func (cc *ccClient) next() wire.DataStructure {
	cc.t.Helper()
	cc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		ds, err := cc.dec.Next()
		if err != nil {
			cc.t.Fatal(err)
		}
		if ds == nil {
			n, err := cc.c.Read(cc.buf)
			if err != nil {
				cc.t.Fatalf("read: %v", err)
			}
			cc.dec.Feed(cc.buf[:n])
			continue
		}
		if _, ok := ds.(*wire.BrokerInfo); !ok {
			return ds
		}
	}
}

// control is the next ConnectionControl, skipping responses.
func (cc *ccClient) control() *wire.ConnectionControl {
	cc.t.Helper()
	for {
		switch x := cc.next().(type) {
		case *wire.ConnectionControl:
			return x
		case *wire.Response:
		default:
			cc.t.Fatalf("got %T, want a ConnectionControl", x)
		}
	}
}

// barrier asks for a response and fails on anything else before it: the
// broker sent this connection nothing since the last read.
func (cc *ccClient) barrier() {
	cc.t.Helper()
	id := cc.id()
	cc.write(&wire.SessionInfo{BaseCommand: wire.BaseCommand{CommandId: id, ResponseRequired: true},
		SessionId: &wire.SessionId{ConnectionId: "x", Value: int64(id)}})
	for {
		switch x := cc.next().(type) {
		case *wire.Response:
			if x.CorrelationId == id {
				return
			}
		default:
			cc.t.Fatalf("got %T before the barrier's response, want nothing", x)
		}
	}
}

// TestOpenWireClusterClientsNetwork: with updateClusterClients the
// connectedBrokers list starts with this broker's URI and grows by the
// brokerURL of each peer broker a bridge connects to whose name
// updateClusterFilter matches; each change is pushed at once to the
// fault-tolerant connections only; with updateClusterClientsOnRemove a
// peer whose bridge stops is taken out again (and pushed); with
// rebalanceClusterClients each ConnectionControl turns the list by one.
func TestOpenWireClusterClientsNetwork(t *testing.T) {
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
	o := DefaultOptions()
	o.ConnectedBrokers, o.UpdateClusterClientsOnRemove = "tcp://self:1", true
	o.ClusterFilter = func(name string) bool { return name == "east-1" || name == "east-2" }
	addr := listen(o)
	ft, plain := dialCC(t, addr, true), dialCC(t, addr, false)
	for who, c := range map[string]*ccClient{"fault-tolerant": ft, "plain": plain} {
		if cc := c.control(); cc.ConnectedBrokers != "tcp://self:1" || cc.RebalanceConnection {
			t.Fatalf("%s connection's first control %+v, want this broker only", who, cc)
		}
	}
	ft.barrier()
	east1 := engine.PeerBroker{Name: "east-1", ID: "ID:east-1", URL: "tcp://e1:2"}
	e.AddPeerBroker(engine.PeerBroker{Name: "west-1", ID: "ID:west-1", URL: "tcp://w1:3"}) // filtered out
	e.AddPeerBroker(east1)
	if cc := ft.control(); cc.ConnectedBrokers != "tcp://self:1,tcp://e1:2" {
		t.Fatalf("pushed %q, want this broker and east-1 (not west-1)", cc.ConnectedBrokers)
	}
	plain.barrier() // a connection that is not fault-tolerant is not told
	if cc := dialCC(t, addr, false).control(); cc.ConnectedBrokers != "tcp://self:1,tcp://e1:2" {
		t.Fatalf("a new connection is told %q", cc.ConnectedBrokers)
	}
	e.RemovePeerBroker(east1)
	if cc := ft.control(); cc.ConnectedBrokers != "tcp://self:1" {
		t.Fatalf("after east-1's bridge stopped, pushed %q", cc.ConnectedBrokers)
	}
	ft.barrier()

	// Without updateClusterClientsOnRemove the peer stays; rebalancing
	// turns the list for each control.
	r := DefaultOptions()
	r.ConnectedBrokers, r.RebalanceClients = "tcp://self:9", true
	raddr := listen(r)
	e.AddPeerBroker(engine.PeerBroker{Name: "east-2", ID: "ID:east-2", URL: "tcp://e2:4"})
	e.RemovePeerBroker(engine.PeerBroker{Name: "east-2", ID: "ID:east-2", URL: "tcp://e2:4"})
	// The update that east-2's bridge caused filled a control too (for
	// no client), which turned the list once already, as ActiveMQ's
	// updateClientClusterInfo does.
	first, second := dialCC(t, raddr, false).control(), dialCC(t, raddr, false).control()
	if first.ConnectedBrokers != "tcp://e2:4,tcp://self:9" || second.ConnectedBrokers != "tcp://self:9,tcp://e2:4" || !first.RebalanceConnection || !second.RebalanceConnection {
		t.Fatalf("rebalancing: %+v then %+v, want the list turned by one", first, second)
	}
}
