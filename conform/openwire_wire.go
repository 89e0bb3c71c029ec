package conform

import (
	"net"
	"time"

	"wharf/protocols/openwire/wire"
)

// OpenWire cases at the command level, with the project's codec
// (protocols/openwire/wire): what a JMS client sends, byte for byte.

// OpenWireConn is a minimal OpenWire connection with the project's codec:
// the handshake, then commands one at a time.
type OpenWireConn struct {
	net.Conn
	dec *wire.Decoder
	enc *wire.Encoder
	seq int32
}

func OpenWireHandshake(t TB, addr string) *OpenWireConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	o := &OpenWireConn{Conn: c, dec: wire.NewDecoder(wire.InitialFormat(wire.MaxVersion), wire.DefaultLimits()), enc: wire.NewEncoder(wire.InitialFormat(wire.MaxVersion))}
	opts := wire.DefaultOptions()
	wfi, _ := wire.NewWireFormatInfo(opts)
	b, err := o.enc.Append(nil, wfi)
	if err != nil {
		t.Fatal(err)
	}
	c.Write(b)
	theirs, ok := o.ReadCommand(t).(*wire.WireFormatInfo)
	if !ok {
		t.Fatal("the broker's first command is not WireFormatInfo")
	}
	remote, err := theirs.Options()
	if err != nil {
		t.Fatal(err)
	}
	f, err := wire.Negotiate(opts, remote)
	if err != nil {
		t.Fatal(err)
	}
	o.dec.SetFormat(f)
	o.enc.SetFormat(f)
	return o
}

func (o *OpenWireConn) ReadCommand(t TB) wire.DataStructure {
	t.Helper()
	buf := make([]byte, 64<<10)
	o.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer o.SetReadDeadline(time.Time{})
	for {
		ds, err := o.dec.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ds != nil {
			return ds
		}
		n, err := o.Conn.Read(buf)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		o.dec.Feed(buf[:n])
	}
}

// request sends c with the next command id, asking for a response, and
// returns that id.
func (o *OpenWireConn) Request(t TB, c wire.Command) int32 {
	t.Helper()
	c.Base().ResponseRequired = true
	return o.Oneway(t, c)
}

// Oneway sends c with the next command id, as it is (without asking for
// a response unless c does), and returns that id.
func (o *OpenWireConn) Oneway(t TB, c wire.Command) int32 {
	t.Helper()
	o.seq++
	c.Base().CommandId = o.seq
	b, err := o.enc.Append(nil, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Write(b); err != nil {
		t.Fatalf("write %s: %v", wire.TypeName(c.DataStructureType()), err)
	}
	return o.seq
}

// Ping sends a KeepAliveInfo asking for a response and waits for the
// answer: a KeepAliveInfo echoed by the inactivity monitor (ActiveMQ's
// default), or a Response when the connection has none.
func (o *OpenWireConn) Ping(t TB) {
	t.Helper()
	id := o.Request(t, &wire.KeepAliveInfo{})
	for {
		switch r := o.ReadCommand(t).(type) {
		case *wire.KeepAliveInfo:
			return
		case *wire.Response:
			if r.CorrelationId == id {
				return
			}
		}
	}
}

// Transaction refusals carry ActiveMQ's words exactly (TransactionBroker,
// TransportConnection): a COMMIT of a transaction never begun, a PREPARE of
// an XA transaction never begun; a BEGIN of one already begun is no error.
func openWireTransactionErrors(t *T) {
	addr := t.Addr(OpenWire)
	o := OpenWireHandshake(t, addr)
	defer o.Close()
	connID := &wire.ConnectionId{Value: "ID:" + t.Uniq() + "-1"}
	// answer reads up to the response to id, skipping what the broker
	// sends unasked (BrokerInfo, ConnectionControl, keep-alives).
	answer := func(id int32) wire.DataStructure {
		t.Helper()
		for {
			switch r := o.ReadCommand(t).(type) {
			case *wire.Response:
				if r.CorrelationId == id {
					return r
				}
			case *wire.ExceptionResponse:
				if r.CorrelationId == id {
					return r
				}
			}
		}
	}
	if r, ok := answer(o.Request(t, &wire.ConnectionInfo{ConnectionId: connID, ClientId: t.Uniq()})).(*wire.Response); !ok {
		t.Fatalf("ConnectionInfo answered %#v", r)
	}
	refused := func(what string, info *wire.TransactionInfo, want string) {
		t.Helper()
		info.ConnectionId = connID
		er, ok := answer(o.Request(t, info)).(*wire.ExceptionResponse)
		if !ok || er.Exception == nil {
			t.Fatalf("%s: answered without an exception, want %q", what, want)
		}
		if er.Exception.Message != want {
			t.Fatalf("%s: exception %s %q, want %q", what, er.Exception.ClassName, er.Exception.Message, want)
		}
	}
	begun := &wire.LocalTransactionId{ConnectionId: connID, Value: 1}
	if r, ok := answer(o.Request(t, &wire.TransactionInfo{ConnectionId: connID, TransactionId: begun, Type: wire.TransactionBegin})).(*wire.Response); !ok {
		t.Fatalf("BEGIN answered %#v", r)
	}
	// A second BEGIN is a replay, answered and ignored
	// (TransportConnection.processBeginTransaction).
	if r, ok := answer(o.Request(t, &wire.TransactionInfo{ConnectionId: connID, TransactionId: begun, Type: wire.TransactionBegin})).(*wire.Response); !ok {
		t.Fatalf("second BEGIN answered %#v, want a Response", r)
	}
	never := &wire.LocalTransactionId{ConnectionId: connID, Value: 2}
	refused("COMMIT of a transaction never begun", &wire.TransactionInfo{TransactionId: never, Type: wire.TransactionCommitOnePhase},
		"Transaction '"+never.String()+"' has not been started.")
	xid := &wire.XATransactionId{FormatId: 1, GlobalTransactionId: []byte{0xab, 0x01}, BranchQualifier: []byte{0x02}}
	refused("PREPARE of an XA transaction never begun", &wire.TransactionInfo{TransactionId: xid, Type: wire.TransactionPrepare},
		// ActiveMQ writes each id byte with Integer.toHexString.
		"Cannot prepare a transaction that had not been started or previously returned XA_RDONLY: XID:[1,globalId=ffffffab1,branchId=2]")
}

// A manageable connection (every JMS client's) is sent a ConnectionControl
// after its ConnectionInfo, as ActiveMQ's TransportConnection does; with no
// cluster updates configured it names no brokers, asks for no rebalance and
// says the broker is not fault tolerant. A connection that is not
// manageable gets none. A ConnectionInfo without a client id is refused
// with InvalidClientIDException, and a KeepAliveInfo asking for a response
// is echoed as a KeepAliveInfo by the inactivity monitor.
func openWireConnectionControl(t *T) {
	addr := t.Addr(OpenWire)
	name := t.Uniq()
	checkNoClientIDAndKeepAlive(t, addr)
	for _, manageable := range []bool{true, false} {
		o := OpenWireHandshake(t, addr)
		connID := &wire.ConnectionId{Value: "ID:cc-test-" + name}
		ciID := o.Request(t, &wire.ConnectionInfo{ConnectionId: connID, ClientId: name, Manageable: manageable})
		var controls []*wire.ConnectionControl
		for answered := false; !answered; {
			switch c := o.ReadCommand(t).(type) {
			case *wire.ConnectionControl:
				controls = append(controls, c)
			case *wire.Response:
				answered = c.CorrelationId == ciID
			case *wire.ExceptionResponse:
				t.Fatalf("ConnectionInfo refused: %+v", c)
			}
		}
		// ActiveMQ dispatches the control asynchronously, so it may
		// follow the response: a second round trip (a SessionInfo)
		// gives it time, and a manageable connection also waits for
		// it (read fails the test after 5 s).
		siID := o.Request(t, &wire.SessionInfo{SessionId: &wire.SessionId{ConnectionId: connID.Value, Value: 1}})
		for answered := false; !answered || (manageable && len(controls) == 0); {
			switch c := o.ReadCommand(t).(type) {
			case *wire.ConnectionControl:
				controls = append(controls, c)
			case *wire.Response:
				answered = answered || c.CorrelationId == siID
			}
		}
		// Close as a JMS client does, so the next round may reuse
		// the client id: a bare socket close is processed by the
		// broker asynchronously, and a ConnectionInfo racing it is
		// refused as "already connected" (by ActiveMQ too).
		rmID := o.Request(t, &wire.RemoveInfo{ObjectId: connID, LastDeliveredSequenceId: -1})
		for answered := false; !answered; {
			if r, ok := o.ReadCommand(t).(*wire.Response); ok {
				answered = r.CorrelationId == rmID
			}
		}
		o.Close()
		if !manageable {
			if len(controls) != 0 {
				t.Errorf("not manageable: got %d ConnectionControl, want none", len(controls))
			}
			continue
		}
		if len(controls) != 1 {
			t.Fatalf("manageable: got %d ConnectionControl, want 1", len(controls))
		}
		c := controls[0]
		if c.ConnectedBrokers != "" || c.ReconnectTo != "" || c.RebalanceConnection || c.FaultTolerant || c.Close || c.Exit || c.Suspend || c.Resume {
			t.Errorf("ConnectionControl %+v, want every field empty or false", c)
		}
	}
}

func checkNoClientIDAndKeepAlive(t *T, addr string) {
	t.Helper()
	o := OpenWireHandshake(t, addr)
	defer o.Close()
	o.Request(t, &wire.KeepAliveInfo{})
	for done := false; !done; {
		switch c := o.ReadCommand(t).(type) {
		case *wire.KeepAliveInfo:
			done = true
		case *wire.Response:
			t.Fatalf("KeepAliveInfo answered with a Response (correlation %d), want a KeepAliveInfo", c.CorrelationId)
		}
	}
	o.Request(t, &wire.ConnectionInfo{ConnectionId: &wire.ConnectionId{Value: "ID:cc-noclient"}, Manageable: true})
	for {
		switch c := o.ReadCommand(t).(type) {
		case *wire.Response:
			t.Fatal("ConnectionInfo without a client id accepted")
		case *wire.ExceptionResponse:
			if c.Exception == nil || c.Exception.ClassName != "javax.jms.InvalidClientIDException" ||
				c.Exception.Message != "No clientID specified for connection request" {
				t.Fatalf("refused with %+v, want InvalidClientIDException: No clientID specified for connection request", c.Exception)
			}
			return
		}
	}
}
