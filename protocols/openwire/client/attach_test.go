package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"wharf/protocols/openwire/wire"
)

// attached returns a Conn attached to a fake server whose writer hands
// every frame to the returned channel.
func attached(t *testing.T) (*Conn, chan wire.DataStructure) {
	t.Helper()
	out := make(chan wire.DataStructure, 64)
	o := DefaultOptions()
	o.ClientID, o.Username, o.Password = "dup_B_outbound", "u", "p"
	c, err := Attach(o, &wire.BrokerInfo{BrokerId: &wire.BrokerId{Value: "ID:a"}, BrokerName: "A"}, func(ds wire.DataStructure) error {
		out <- ds
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, out
}

func written[T wire.Command](t *testing.T, out chan wire.DataStructure) T {
	t.Helper()
	select {
	case ds := <-out:
		x, ok := ds.(T)
		if !ok {
			t.Fatalf("wrote %s", wire.TypeName(ds.DataStructureType()))
		}
		if x.Base().ResponseRequired {
			t.Fatalf("%s asks for a response", wire.TypeName(ds.DataStructureType()))
		}
		return x
	case <-time.After(5 * time.Second):
		var zero T
		t.Fatal("nothing written")
		return zero
	}
}

// An attached Conn writes its set-up one-way and returns at once, waits
// for the Response of a synchronous forward (routed by Inbound), takes
// the forwarded advisories for its advisory consumer and acknowledges
// them with that consumer's id, leaves every other frame to the server,
// writes nothing on Close, and ends with Detach.
func TestOpenWireClientAttached(t *testing.T) {
	c, out := attached(t)
	if !c.Attached() || c.BrokerInfo().BrokerName != "A" {
		t.Fatalf("Attached %v, BrokerInfo %+v", c.Attached(), c.BrokerInfo())
	}
	ci := written[*wire.ConnectionInfo](t, out)
	if ci.ClientId != "dup_B_outbound" || ci.UserName != "u" || ci.Password != "p" {
		t.Fatalf("ConnectionInfo %+v", ci)
	}
	s, err := c.Session(false)
	if err != nil {
		t.Fatal(err)
	}
	written[*wire.SessionInfo](t, out)
	p, err := s.Producer(nil)
	if err != nil {
		t.Fatal(err)
	}
	written[*wire.ProducerInfo](t, out)
	adv, err := s.Consumer(wire.NewTopic("ActiveMQ.Advisory.Consumer.>"), ConsumerOptions{Prefetch: 1000})
	if err != nil {
		t.Fatal(err)
	}
	info := written[*wire.ConsumerInfo](t, out)

	// A synchronous forward waits for the initiator's answer.
	for _, answer := range []func(corr int32) wire.DataStructure{
		func(corr int32) wire.DataStructure { return &wire.Response{CorrelationId: corr} },
		func(corr int32) wire.DataStructure {
			return &wire.ExceptionResponse{Response: wire.Response{CorrelationId: corr},
				Exception: &wire.Throwable{ClassName: "java.lang.SecurityException", Message: "no"}}
		},
	} {
		m := NewTextMessage("x")
		m.MessageId = &wire.MessageId{ProducerId: &wire.ProducerId{ConnectionId: "ID:b", SessionId: 1, Value: 1}, ProducerSequenceId: 1}
		m.Destination = wire.NewQueue("Q")
		done := make(chan error, 1)
		go func() { done <- p.Forward(context.Background(), m, true) }()
		var fm *wire.Message
		select {
		case ds := <-out:
			fm = ds.(*wire.Message)
		case <-time.After(5 * time.Second):
			t.Fatal("forward not written")
		}
		if !fm.ResponseRequired {
			t.Fatal("a sync forward does not ask for a response")
		}
		if !c.Inbound(answer(fm.CommandId)) {
			t.Fatal("Inbound refused the Response")
		}
		err := <-done
		var be *BrokerError
		if _, exc := answer(0).(*wire.ExceptionResponse); exc != errors.As(err, &be) {
			t.Fatalf("forward answered by %T: %v", answer(0), err)
		}
	}

	// Advisories forwarded as messages go to the advisory consumer.
	am := &wire.Message{Destination: wire.NewTopic("ActiveMQ.Advisory.Consumer.Queue.Q"),
		MessageId:     &wire.MessageId{ProducerId: &wire.ProducerId{ConnectionId: "ID:a", SessionId: 1, Value: 1}, ProducerSequenceId: 7},
		DataStructure: &wire.ConsumerInfo{ConsumerId: &wire.ConsumerId{ConnectionId: "ID:a-app", SessionId: 1, Value: 1}, Destination: wire.NewQueue("Q")}}
	if !c.Inbound(am) {
		t.Fatal("Inbound refused a forwarded consumer advisory")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	got, err := adv.Receive(ctx)
	cancel()
	if err != nil || got != am {
		t.Fatalf("advisory consumer got %v, %v", got, err)
	}
	ack := written[*wire.MessageAck](t, out)
	if ack.ConsumerId.String() != info.ConsumerId.String() || ack.LastMessageId.String() != am.MessageId.String() {
		t.Fatalf("ack %+v", ack)
	}
	// The server's frames stay the server's.
	for _, ds := range []wire.DataStructure{
		&wire.Message{Destination: wire.NewQueue("Q")},
		&wire.Message{Destination: wire.NewTopic("ActiveMQ.Advisory.Producer.Queue.Q")},
		&wire.MessageAck{ConsumerId: &wire.ConsumerId{ConnectionId: "ID:a-app", SessionId: 1, Value: 1}},
		&wire.ConsumerControl{ConsumerId: &wire.ConsumerId{ConnectionId: "ID:a-app", SessionId: 1, Value: 1}},
		&wire.KeepAliveInfo{},
		&wire.ConsumerInfo{},
	} {
		if c.Inbound(ds) {
			t.Errorf("Inbound took a %s for the server", wire.TypeName(ds.DataStructureType()))
		}
	}

	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case ds := <-out:
		t.Fatalf("Close wrote %s", wire.TypeName(ds.DataStructureType()))
	default:
	}
	<-c.Done()
}

func TestOpenWireClientAttachedDetach(t *testing.T) {
	c, _ := attached(t)
	c.Detach(errors.New("socket closed"))
	<-c.Done()
	if !errors.Is(c.Err(), ErrConnectionLost) {
		t.Fatalf("Err %v, want ErrConnectionLost", c.Err())
	}
	if _, err := c.Session(false); err == nil {
		t.Fatal("a session after Detach")
	}
}

func TestOpenWireClientBridgeAdvisory(t *testing.T) {
	for name, want := range map[string]bool{
		"ActiveMQ.Advisory.Consumer.Queue.Q":                                    true,
		"ActiveMQ.Advisory.Consumer.>":                                          true,
		"ActiveMQ.Advisory.VirtualDestination.Consumer.Queue.Q":                 true,
		"ActiveMQ.Advisory.TempQueue":                                           true,
		"ActiveMQ.Advisory.TempQueue,ActiveMQ.Advisory.TempTopic":               true,
		"ActiveMQ.Advisory.TempQueue,ActiveMQ.Advisory.Producer.>":              false,
		"ActiveMQ.Advisory.Producer.Queue.Q,ActiveMQ.Advisory.Consumer.Queue.Q": true,
		"ActiveMQ.Advisory.Producer.Queue.Q":                                    false,
		"ActiveMQ.Advisory.TempQueueX":                                          false,
		"Q":                                                                     false,
	} {
		if got := BridgeAdvisory(wire.NewTopic(name)); got != want {
			t.Errorf("topic %s: %v, want %v", name, got, want)
		}
	}
	if BridgeAdvisory(wire.NewQueue("ActiveMQ.Advisory.Consumer.Queue.Q")) {
		t.Error("a queue is an advisory topic")
	}
}
