package marshal

import (
	"slices"
	"testing"

	"wharf/engine/message"
	"wharf/protocols/openwire/wire"
)

// The network fields: a message's brokerPath both ways (with and without
// its original form), and a network consumer's ConsumerInfo advisory
// (networkSubscription, brokerPath) as ActiveMQ's bridges read it.
func TestOpenWireConvertNetwork(t *testing.T) {
	w := &wire.Message{Kind: wire.TypeActiveMQTextMessage, Destination: wire.NewQueue("q"),
		MessageId:  &wire.MessageId{ProducerId: &wire.ProducerId{ConnectionId: "ID:p-1", SessionId: 1, Value: 1}, ProducerSequenceId: 1},
		BrokerPath: []*wire.BrokerId{{Value: "ID:a"}, {Value: "ID:b"}}}
	m, err := ToEngine(w)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.BrokerPath, []string{"ID:a", "ID:b"}) {
		t.Fatalf("engine BrokerPath %v", m.BrokerPath)
	}
	m.Original = message.Encoded{} // re-encoded from the fields
	back, err := FromEngine(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.BrokerPath) != 2 || back.BrokerPath[0].Value != "ID:a" || back.BrokerPath[1].Value != "ID:b" {
		t.Fatalf("wire BrokerPath %v", back.BrokerPath)
	}

	adv := &message.Message{ID: "ID:x-1:0:0:1:1", Destination: message.TopicDest("ActiveMQ.Advisory.Consumer.Queue.q"),
		Advisory: &message.Advisory{Command: "ConsumerInfo", Fields: message.Properties{
			{Name: "ConsumerId", Value: message.StringValue("ID:c-1:1:1:1")},
			{Name: "Destination", Value: message.StringValue("queue://q")},
			{Name: "NetworkSubscription", Value: message.BoolValue(true)},
			{Name: "BrokerPath", Value: message.StringValue("ID:c,ID:b")},
		}}}
	aw, err := FromEngine(adv, 0)
	if err != nil {
		t.Fatal(err)
	}
	ci, ok := aw.DataStructure.(*wire.ConsumerInfo)
	if !ok || !ci.NetworkSubscription || len(ci.BrokerPath) != 2 || ci.BrokerPath[0].Value != "ID:c" || ci.BrokerPath[1].Value != "ID:b" {
		t.Fatalf("advisory payload %T %+v", aw.DataStructure, aw.DataStructure)
	}
	// And back: an advisory received over OpenWire keeps them.
	a2, err := convAdvisoryToEngine(ci, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := a2.Fields.Get("BrokerPath"); v.Str() != "ID:c,ID:b" {
		t.Fatalf("BrokerPath field %q", v.Str())
	}
	if v, _ := a2.Fields.Get("NetworkSubscription"); !v.Bool() {
		t.Fatal("NetworkSubscription field lost")
	}
}
