package wire

import (
	"encoding/hex"
	"strconv"
	"strings"
)

// ConnectionId identifies a connection (type 120).
type ConnectionId struct {
	Value string
}

// SessionId identifies a session (type 121).
type SessionId struct {
	ConnectionId string
	Value        int64
}

// ConsumerId identifies a consumer (type 122). Wire order: ConnectionId,
// SessionId, Value.
type ConsumerId struct {
	ConnectionId string
	SessionId    int64
	Value        int64
}

// ProducerId identifies a producer (type 123). Wire order: ConnectionId,
// Value, SessionId (OpenWire v12 ProducerIdMarshaller).
type ProducerId struct {
	ConnectionId string
	Value        int64
	SessionId    int64
}

// BrokerId identifies a broker (type 124).
type BrokerId struct {
	Value string
}

// MessageId identifies a message (type 110). TextView is on the wire from
// v10 (first field).
type MessageId struct {
	TextView           string
	ProducerId         *ProducerId
	ProducerSequenceId int64
	BrokerSequenceId   int64
}

// TransactionId is a *LocalTransactionId or an *XATransactionId.
type TransactionId interface {
	DataStructure
	transactionId()
}

// LocalTransactionId identifies a JMS local transaction (type 111).
type LocalTransactionId struct {
	Value        int64
	ConnectionId *ConnectionId
}

// XATransactionId is an XA Xid (type 112).
type XATransactionId struct {
	FormatId            int32
	GlobalTransactionId []byte
	BranchQualifier     []byte
}

// Destination is an ActiveMQQueue, ActiveMQTopic, ActiveMQTempQueue or
// ActiveMQTempTopic; Kind is its type code (100..103). Composite
// destinations are comma-separated physical names.
type Destination struct {
	Kind         byte
	PhysicalName string
}

// NewQueue returns an ActiveMQQueue.
func NewQueue(name string) *Destination {
	return &Destination{Kind: TypeActiveMQQueue, PhysicalName: name}
}

// NewTopic returns an ActiveMQTopic.
func NewTopic(name string) *Destination {
	return &Destination{Kind: TypeActiveMQTopic, PhysicalName: name}
}

// NewTempQueue returns an ActiveMQTempQueue.
func NewTempQueue(name string) *Destination {
	return &Destination{Kind: TypeActiveMQTempQueue, PhysicalName: name}
}

// NewTempTopic returns an ActiveMQTempTopic.
func NewTempTopic(name string) *Destination {
	return &Destination{Kind: TypeActiveMQTempTopic, PhysicalName: name}
}

// DataStructureType implements DataStructure.
func (x *ConnectionId) DataStructureType() byte { return TypeConnectionId }

// DataStructureType implements DataStructure.
func (x *SessionId) DataStructureType() byte { return TypeSessionId }

// DataStructureType implements DataStructure.
func (x *ConsumerId) DataStructureType() byte { return TypeConsumerId }

// DataStructureType implements DataStructure.
func (x *ProducerId) DataStructureType() byte { return TypeProducerId }

// DataStructureType implements DataStructure.
func (x *BrokerId) DataStructureType() byte { return TypeBrokerId }

// DataStructureType implements DataStructure.
func (x *MessageId) DataStructureType() byte { return TypeMessageId }

// DataStructureType implements DataStructure.
func (x *LocalTransactionId) DataStructureType() byte { return TypeLocalTransactionId }

// DataStructureType implements DataStructure.
func (x *XATransactionId) DataStructureType() byte { return TypeXATransactionId }

// DataStructureType implements DataStructure.
func (x *Destination) DataStructureType() byte {
	if x.Kind == 0 {
		return TypeActiveMQQueue
	}
	return x.Kind
}

func (x *LocalTransactionId) transactionId() {}
func (x *XATransactionId) transactionId()    {}

func (x *ConnectionId) marshal(c *codec) { c.str("Value", &x.Value) }
func (x *BrokerId) marshal(c *codec)     { c.str("Value", &x.Value) }

func (x *SessionId) marshal(c *codec) {
	c.str("ConnectionId", &x.ConnectionId)
	c.int64("Value", &x.Value)
}

func (x *ConsumerId) marshal(c *codec) {
	c.str("ConnectionId", &x.ConnectionId)
	c.int64("SessionId", &x.SessionId)
	c.int64("Value", &x.Value)
}

func (x *ProducerId) marshal(c *codec) {
	c.str("ConnectionId", &x.ConnectionId)
	c.int64("Value", &x.Value)
	c.int64("SessionId", &x.SessionId)
}

func (x *MessageId) marshal(c *codec) {
	if c.version >= 10 {
		c.str("TextView", &x.TextView)
	}
	cobjField(c, "ProducerId", &x.ProducerId)
	c.int64("ProducerSequenceId", &x.ProducerSequenceId)
	c.int64("BrokerSequenceId", &x.BrokerSequenceId)
}

func (x *LocalTransactionId) marshal(c *codec) {
	c.int64("Value", &x.Value)
	cobjField(c, "ConnectionId", &x.ConnectionId)
}

func (x *XATransactionId) marshal(c *codec) {
	c.int32("FormatId", &x.FormatId)
	c.bytes("GlobalTransactionId", &x.GlobalTransactionId)
	c.bytes("BranchQualifier", &x.BranchQualifier)
}

func (x *Destination) marshal(c *codec) { c.str("PhysicalName", &x.PhysicalName) }

// String returns the Java toString form.
func (x *ConnectionId) String() string { return x.Value }

// String returns the Java toString form.
func (x *BrokerId) String() string { return x.Value }

// String returns the Java toString form ("conn:session").
func (x *SessionId) String() string {
	return x.ConnectionId + ":" + strconv.FormatInt(x.Value, 10)
}

// String returns the Java toString form ("conn:session:consumer").
func (x *ConsumerId) String() string {
	return string(x.AppendString(make([]byte, 0, 64)))
}

// AppendString appends String's form to dst: a lookup by
// string(x.AppendString(buf[:0])) allocates nothing.
func (x *ConsumerId) AppendString(dst []byte) []byte {
	dst = append(dst, x.ConnectionId...)
	dst = strconv.AppendInt(append(dst, ':'), x.SessionId, 10)
	return strconv.AppendInt(append(dst, ':'), x.Value, 10)
}

// String returns the Java toString form ("conn:session:producer").
func (x *ProducerId) String() string {
	return string(x.AppendString(make([]byte, 0, 64)))
}

// AppendString appends String's form to dst.
func (x *ProducerId) AppendString(dst []byte) []byte {
	dst = append(dst, x.ConnectionId...)
	dst = strconv.AppendInt(append(dst, ':'), x.SessionId, 10)
	return strconv.AppendInt(append(dst, ':'), x.Value, 10)
}

// String returns the JMSMessageID: TextView if set (prefixed "ID:" when
// missing), else "producerId:sequence".
func (x *MessageId) String() string {
	if strings.HasPrefix(x.TextView, "ID:") {
		return x.TextView
	}
	return string(x.AppendString(make([]byte, 0, 80)))
}

// AppendString appends String's form to dst: a comparison or a lookup by
// string(x.AppendString(buf[:0])) allocates nothing.
func (x *MessageId) AppendString(dst []byte) []byte {
	if x.TextView != "" {
		if !strings.HasPrefix(x.TextView, "ID:") {
			dst = append(dst, "ID:"...)
		}
		return append(dst, x.TextView...)
	}
	if x.ProducerId != nil {
		dst = x.ProducerId.AppendString(dst)
	}
	return strconv.AppendInt(append(dst, ':'), x.ProducerSequenceId, 10)
}

// String returns "TX:conn:value".
func (x *LocalTransactionId) String() string {
	conn := ""
	if x.ConnectionId != nil {
		conn = x.ConnectionId.Value
	}
	return "TX:" + conn + ":" + strconv.FormatInt(x.Value, 10)
}

// String returns "XID:[formatId,globalId=hex,branchId=hex]".
func (x *XATransactionId) String() string {
	return "XID:[" + strconv.Itoa(int(x.FormatId)) + ",globalId=" + hex.EncodeToString(x.GlobalTransactionId) +
		",branchId=" + hex.EncodeToString(x.BranchQualifier) + "]"
}

// String returns the qualified name, e.g. "queue://orders".
func (x *Destination) String() string {
	switch x.DataStructureType() {
	case TypeActiveMQTopic:
		return "topic://" + x.PhysicalName
	case TypeActiveMQTempQueue:
		return "temp-queue://" + x.PhysicalName
	case TypeActiveMQTempTopic:
		return "temp-topic://" + x.PhysicalName
	}
	return "queue://" + x.PhysicalName
}
