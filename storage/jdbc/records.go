package jdbc

// The records of WHARF_JOBS and WHARF_TXS and the MSG column are encoded
// by storage/internal/records, as storage/lsm encodes the same records.

import (
	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/openwire/marshal"
	"wharf/protocols/openwire/wire"
	"wharf/storage/internal/records"
)

// decodeStored reads the MSG column of a message stored under d, with
// the redelivery counter Wharf keeps beside it (WHARF_MSGS). The
// frame's own counter counts when it is higher: a message ActiveMQ
// stored (and Wharf adopted with 0 beside it) has its counter there
// alone.
func decodeStored(b []byte, d message.Destination, redeliveries int32) (*message.Message, error) {
	m, err := records.UnmarshalMessage(b)
	if err != nil {
		return nil, err
	}
	m.RedeliveryCounter = max(m.RedeliveryCounter, redeliveries)
	// Under engine.RetainStore, which holds the retained messages of every
	// topic of the shard, the frame's own destination names the topic:
	// it is all the engine has to find the topic by after a restart.
	if d != engine.RetainStore || !m.Destination.Type.IsTopic() {
		m.Destination = d
	}
	return m, nil
}

// producerKey splits a message id as ActiveMQ's MSGID_PROD and MSGID_SEQ
// columns hold it: the producer id and the producer sequence id. An id
// of another shape (from AMQP, say) is the producer part whole, sequence 0.
func producerKey(id string) (string, int64) {
	mid := marshal.MessageIDFromEngine(id)
	if mid == nil || mid.ProducerId == nil {
		return id, 0
	}
	if mid.TextView != "" {
		return id, 0
	}
	return mid.ProducerId.String(), mid.ProducerSequenceId
}

// withRedeliveries is the stored frame b with its redelivery counter
// set to n.
func withRedeliveries(b []byte, n int32) ([]byte, error) {
	w, err := records.UnmarshalFrame(b)
	if err != nil {
		return nil, err
	}
	w.RedeliveryCounter = n
	return wire.Marshal(w, wire.StoreFormat())
}
