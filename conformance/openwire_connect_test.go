package conformance

import (
	"path/filepath"
	"testing"

	"wharf/protocols/openwire/wire"
)

// A manageable connection (every JMS client's) is sent a ConnectionControl
// after its ConnectionInfo, as ActiveMQ's TransportConnection does; with no
// cluster updates configured it names no brokers, asks for no rebalance and
// says the broker is not fault tolerant. A connection that is not
// manageable gets none. A ConnectionInfo without a client id is refused
// with InvalidClientIDException, and a KeepAliveInfo asking for a response
// is echoed as a KeepAliveInfo by the inactivity monitor. Checked against Wharf and, when installed, against
// ActiveMQ 5.17 itself.
func TestConformanceOpenWireConnectionControl(t *testing.T) {
	targets := map[string]func(t *testing.T) string{
		"wharf": func(t *testing.T) string {
			a := startBroker(t).Addr("openwire")
			if a == nil {
				t.Skip("no OpenWire connector in this build")
			}
			return a.String()
		},
		"activemq": func(t *testing.T) string {
			return startActiveMQ(t, filepath.Join(t.TempDir(), "kahadb")).openwire
		},
	}
	for name, addrOf := range targets {
		t.Run(name, func(t *testing.T) {
			addr := addrOf(t)
			checkNoClientIDAndKeepAlive(t, addr)
			for _, manageable := range []bool{true, false} {
				o := openwireHandshake(t, addr)
				connID := &wire.ConnectionId{Value: "ID:cc-test-" + name}
				ciID := o.request(t, &wire.ConnectionInfo{ConnectionId: connID, ClientId: "cc-test", Manageable: manageable})
				var controls []*wire.ConnectionControl
				for answered := false; !answered; {
					switch c := o.read(t).(type) {
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
				siID := o.request(t, &wire.SessionInfo{SessionId: &wire.SessionId{ConnectionId: connID.Value, Value: 1}})
				for answered := false; !answered || (manageable && len(controls) == 0); {
					switch c := o.read(t).(type) {
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
				rmID := o.request(t, &wire.RemoveInfo{ObjectId: connID, LastDeliveredSequenceId: -1})
				for answered := false; !answered; {
					if r, ok := o.read(t).(*wire.Response); ok {
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
		})
	}
}

func checkNoClientIDAndKeepAlive(t *testing.T, addr string) {
	t.Helper()
	o := openwireHandshake(t, addr)
	defer o.Close()
	o.request(t, &wire.KeepAliveInfo{})
	for done := false; !done; {
		switch c := o.read(t).(type) {
		case *wire.KeepAliveInfo:
			done = true
		case *wire.Response:
			t.Fatalf("KeepAliveInfo answered with a Response (correlation %d), want a KeepAliveInfo", c.CorrelationId)
		}
	}
	o.request(t, &wire.ConnectionInfo{ConnectionId: &wire.ConnectionId{Value: "ID:cc-noclient"}, Manageable: true})
	for {
		switch c := o.read(t).(type) {
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
