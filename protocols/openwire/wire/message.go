package wire

// Message is every ActiveMQ message type (type codes 23..29, which share
// one layout; ActiveMQBlobMessage adds three fields). Kind selects the
// type code; the zero Kind encodes as ActiveMQMessage.
//
// Content and MarshalledProperties are kept as the exact bytes received
// (possibly compressed), so a broker or store can pass a message on without
// re-encoding its body or properties; see body.go for helpers that decode
// them.
type Message struct {
	BaseCommand
	// Kind is the data structure type code, TypeActiveMQMessage ..
	// TypeActiveMQBlobMessage.
	Kind byte

	ProducerId            *ProducerId
	Destination           *Destination
	TransactionId         TransactionId
	OriginalDestination   *Destination
	MessageId             *MessageId
	OriginalTransactionId TransactionId
	GroupID               string
	GroupSequence         int32
	CorrelationId         string
	Persistent            bool
	Expiration            int64 // milliseconds since the epoch, 0 = never
	Priority              byte
	ReplyTo               *Destination
	Timestamp             int64 // milliseconds since the epoch
	Type                  string
	// Content is the marshalled body (body.go), deflated when Compressed.
	Content []byte
	// MarshalledProperties is a primitive map (primitive.go).
	MarshalledProperties []byte
	// DataStructure is an advisory payload.
	DataStructure      DataStructure
	TargetConsumerId   *ConsumerId
	Compressed         bool
	RedeliveryCounter  int32
	BrokerPath         []*BrokerId
	Arrival            int64 // milliseconds since the epoch
	UserID             string
	RecievedByDFBridge bool // (sic)
	Droppable          bool // v2+
	Cluster            []*BrokerId
	BrokerInTime       int64 // milliseconds since the epoch, v3+
	BrokerOutTime      int64 // milliseconds since the epoch, v3+
	// JMSXGroupFirstForConsumer is on the wire from v10.
	JMSXGroupFirstForConsumer bool

	// ActiveMQBlobMessage only (v3+).
	RemoteBlobUrl   string
	MimeType        string
	DeletedByBroker bool

	// Raw is the frame (type byte and body, without size prefix) this
	// message was decoded from when it was a top-level frame; nil otherwise.
	// It is only valid to resend on a connection with the same negotiated
	// format and the cache disabled.
	Raw []byte
}

// DataStructureType implements DataStructure.
func (m *Message) DataStructureType() byte {
	if m.Kind < TypeActiveMQMessage || m.Kind > TypeActiveMQBlobMessage {
		return TypeActiveMQMessage
	}
	return m.Kind
}

func (m *Message) marshal(c *codec) {
	m.marshalBase(c)
	cobjField(c, "ProducerId", &m.ProducerId)
	cobjField(c, "Destination", &m.Destination)
	cobjField(c, "TransactionId", &m.TransactionId)
	cobjField(c, "OriginalDestination", &m.OriginalDestination)
	objField(c, "MessageId", &m.MessageId)
	cobjField(c, "OriginalTransactionId", &m.OriginalTransactionId)
	c.str("GroupID", &m.GroupID)
	c.int32("GroupSequence", &m.GroupSequence)
	c.str("CorrelationId", &m.CorrelationId)
	c.bool("Persistent", &m.Persistent)
	c.int64("Expiration", &m.Expiration)
	c.byte("Priority", &m.Priority)
	objField(c, "ReplyTo", &m.ReplyTo)
	c.int64("Timestamp", &m.Timestamp)
	c.str("Type", &m.Type)
	c.bytes("Content", &m.Content)
	c.bytes("MarshalledProperties", &m.MarshalledProperties)
	c.obj("DataStructure", &m.DataStructure)
	cobjField(c, "TargetConsumerId", &m.TargetConsumerId)
	c.bool("Compressed", &m.Compressed)
	c.int32("RedeliveryCounter", &m.RedeliveryCounter)
	objArray(c, "BrokerPath", &m.BrokerPath)
	c.int64("Arrival", &m.Arrival)
	c.str("UserID", &m.UserID)
	c.bool("RecievedByDFBridge", &m.RecievedByDFBridge)
	if c.version >= 2 {
		c.bool("Droppable", &m.Droppable)
	}
	if c.version >= 3 {
		objArray(c, "Cluster", &m.Cluster)
		c.int64("BrokerInTime", &m.BrokerInTime)
		c.int64("BrokerOutTime", &m.BrokerOutTime)
	}
	if c.version >= 10 {
		c.bool("JMSXGroupFirstForConsumer", &m.JMSXGroupFirstForConsumer)
	}
	if m.DataStructureType() == TypeActiveMQBlobMessage {
		c.str("RemoteBlobUrl", &m.RemoteBlobUrl)
		c.str("MimeType", &m.MimeType)
		c.bool("DeletedByBroker", &m.DeletedByBroker)
	}
}
