package kahadb_test

import (
	"bytes"
	"testing"

	"wharf/protocols/openwire/marshal"
	"wharf/protocols/openwire/wire"
	"wharf/storage/internal/records"
	"wharf/storage/kahadb"
)

// A message sent over OpenWire is kept as its producer's connection decoded
// it (marshal.ToEngine makes no StoreFormat bytes any more); KahaDB must
// still store exactly the bytes that marshalling the producer's message in
// wire.StoreFormat gives, which ActiveMQ reads.
func TestKahaDBStoresOpenWireMessageAsMarshalled(t *testing.T) {
	prod := &wire.ProducerId{ConnectionId: "ID:host-1234-1700000000000-1:1", SessionId: 1, Value: 1}
	src := &wire.Message{
		Kind: wire.TypeActiveMQTextMessage, ProducerId: prod, Destination: wire.NewQueue("orders.in"),
		MessageId: &wire.MessageId{ProducerId: prod, ProducerSequenceId: 7}, Priority: 4, Persistent: true,
		Timestamp: 1700000000123, Expiration: 1700000060123, CorrelationId: "c-1", Type: "t",
		ReplyTo:    wire.NewTopic("replies"),
		BrokerPath: []*wire.BrokerId{{Value: "ID:peer-1"}}, RedeliveryCounter: 1,
	}
	src.SetText("grüß 😀", false)
	if err := src.SetProperties(map[string]any{"region": "eu", "n": int32(3), "b": []byte{1, 2}}); err != nil {
		t.Fatal(err)
	}
	// As a Java client sends it: tight, with the marshal cache.
	f := wire.Format{Version: 12, TightEncodingEnabled: true, CacheEnabled: true, CacheSize: 1024}
	frame, err := wire.NewEncoder(f).Append(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	d := wire.NewDecoder(f, wire.Limits{})
	d.Feed(frame)
	ds, err := d.Next()
	if err != nil {
		t.Fatal(err)
	}
	sent := ds.(*wire.Message)
	want, err := wire.Marshal(sent, wire.StoreFormat())
	if err != nil {
		t.Fatal(err)
	}
	m, err := marshal.ToEngine(sent)
	if err != nil {
		t.Fatal(err)
	}
	got, err := kahadb.MarshalForTest(m)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("KahaDB record = %x (%v)\nwant %x", got, err, want)
	}
	if got, err := records.MarshalMessage(m); err != nil || !bytes.Equal(got, want) {
		t.Errorf("records.MarshalMessage = %x (%v)\nwant %x", got, err, want)
	}
	// And what is read back is delivered as the kept form is.
	back, err := marshal.ToEngineStored(sent, want)
	if err != nil {
		t.Fatal(err)
	}
	a, err1 := marshal.FromEngine(m, 1)
	b, err2 := marshal.FromEngine(back, 1)
	ea, _ := wire.Marshal(a, f)
	eb, _ := wire.Marshal(b, f)
	if err1 != nil || err2 != nil || len(ea) == 0 || !bytes.Equal(ea, eb) {
		t.Errorf("dispatch of the kept form %x (%v)\nof the stored one %x (%v)", ea, err1, eb, err2)
	}
}
