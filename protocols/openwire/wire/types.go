package wire

import (
	"reflect"
	"strconv"
)

// Data structure type codes (CommandTypes.java). The marshaller for a frame
// or nested object is chosen by this code and the negotiated version only.
const (
	TypeNull                        byte = 0
	TypeWireFormatInfo              byte = 1
	TypeBrokerInfo                  byte = 2
	TypeConnectionInfo              byte = 3
	TypeSessionInfo                 byte = 4
	TypeConsumerInfo                byte = 5
	TypeProducerInfo                byte = 6
	TypeTransactionInfo             byte = 7
	TypeDestinationInfo             byte = 8
	TypeRemoveSubscriptionInfo      byte = 9
	TypeKeepAliveInfo               byte = 10
	TypeShutdownInfo                byte = 11
	TypeRemoveInfo                  byte = 12
	TypeControlCommand              byte = 14
	TypeFlushCommand                byte = 15
	TypeConnectionError             byte = 16
	TypeConsumerControl             byte = 17
	TypeConnectionControl           byte = 18
	TypeProducerAck                 byte = 19
	TypeMessagePull                 byte = 20
	TypeMessageDispatch             byte = 21
	TypeMessageAck                  byte = 22
	TypeActiveMQMessage             byte = 23
	TypeActiveMQBytesMessage        byte = 24
	TypeActiveMQMapMessage          byte = 25
	TypeActiveMQObjectMessage       byte = 26
	TypeActiveMQStreamMessage       byte = 27
	TypeActiveMQTextMessage         byte = 28
	TypeActiveMQBlobMessage         byte = 29
	TypeResponse                    byte = 30
	TypeExceptionResponse           byte = 31
	TypeDataResponse                byte = 32
	TypeDataArrayResponse           byte = 33
	TypeIntegerResponse             byte = 34
	TypeDiscoveryEvent              byte = 40
	TypeJournalTopicAck             byte = 50
	TypeJournalQueueAck             byte = 52
	TypeJournalTrace                byte = 53
	TypeJournalTransaction          byte = 54
	TypeSubscriptionInfo            byte = 55
	TypePartialCommand              byte = 60
	TypeLastPartialCommand          byte = 61
	TypeReplayCommand               byte = 65
	TypeMessageDispatchNotification byte = 90
	TypeNetworkBridgeFilter         byte = 91
	TypeBrokerSubscriptionInfo      byte = 92
	TypeActiveMQQueue               byte = 100
	TypeActiveMQTopic               byte = 101
	TypeActiveMQTempQueue           byte = 102
	TypeActiveMQTempTopic           byte = 103
	TypeMessageId                   byte = 110
	TypeLocalTransactionId          byte = 111
	TypeXATransactionId             byte = 112
	TypeConnectionId                byte = 120
	TypeSessionId                   byte = 121
	TypeConsumerId                  byte = 122
	TypeProducerId                  byte = 123
	TypeBrokerId                    byte = 124
)

// Versions this package can encode and decode.
const (
	MinVersion = 1
	MaxVersion = 12 // CommandTypes.PROTOCOL_VERSION in 5.17
	// StoreVersion is the version KahaDB marshals messages with
	// (CommandTypes.PROTOCOL_STORE_VERSION).
	StoreVersion = 11
)

// DataStructure is anything OpenWire can marshal: commands, ids,
// destinations. Only types of this package implement it.
type DataStructure interface {
	// DataStructureType returns the type code written before the body.
	DataStructureType() byte
	marshal(c *codec)
}

// Command is a DataStructure that starts with BaseCommand fields.
type Command interface {
	DataStructure
	// Base returns the embedded BaseCommand.
	Base() *BaseCommand
}

// BaseCommand holds the fields every command except WireFormatInfo starts with.
type BaseCommand struct {
	// CommandId is the sender's sequence number (Java clients start at 1,
	// broker-originated commands use 0).
	CommandId int32
	// ResponseRequired asks for a Response with CorrelationId = CommandId.
	ResponseRequired bool
}

// Base returns b.
func (b *BaseCommand) Base() *BaseCommand { return b }

func (b *BaseCommand) marshalBase(c *codec) {
	c.int32("CommandId", &b.CommandId)
	c.bool("ResponseRequired", &b.ResponseRequired)
}

// minVersion is the first OpenWire version with a marshaller for the type
// (openwire/vN/MarshallerFactory).
func minVersion(t byte) int {
	switch t {
	case TypeMessagePull:
		return 2
	case TypeProducerAck, TypeActiveMQBlobMessage:
		return 3
	case TypeBrokerSubscriptionInfo:
		return 12
	}
	return 1
}

// newDataStructure returns an empty value for type code t, or nil when the
// version has no marshaller for it.
func newDataStructure(t byte, version int) DataStructure {
	if version < minVersion(t) {
		return nil
	}
	switch t {
	case TypeWireFormatInfo:
		return &WireFormatInfo{}
	case TypeBrokerInfo:
		return &BrokerInfo{}
	case TypeConnectionInfo:
		return &ConnectionInfo{}
	case TypeSessionInfo:
		return &SessionInfo{}
	case TypeConsumerInfo:
		return &ConsumerInfo{}
	case TypeProducerInfo:
		return &ProducerInfo{}
	case TypeTransactionInfo:
		return &TransactionInfo{}
	case TypeDestinationInfo:
		return &DestinationInfo{}
	case TypeRemoveSubscriptionInfo:
		return &RemoveSubscriptionInfo{}
	case TypeKeepAliveInfo:
		return &KeepAliveInfo{}
	case TypeShutdownInfo:
		return &ShutdownInfo{}
	case TypeRemoveInfo:
		return &RemoveInfo{}
	case TypeControlCommand:
		return &ControlCommand{}
	case TypeFlushCommand:
		return &FlushCommand{}
	case TypeConnectionError:
		return &ConnectionError{}
	case TypeConsumerControl:
		return &ConsumerControl{}
	case TypeConnectionControl:
		return &ConnectionControl{}
	case TypeProducerAck:
		return &ProducerAck{}
	case TypeMessagePull:
		return &MessagePull{}
	case TypeMessageDispatch:
		return &MessageDispatch{}
	case TypeMessageAck:
		return &MessageAck{}
	case TypeActiveMQMessage, TypeActiveMQBytesMessage, TypeActiveMQMapMessage,
		TypeActiveMQObjectMessage, TypeActiveMQStreamMessage, TypeActiveMQTextMessage,
		TypeActiveMQBlobMessage:
		return &Message{Kind: t}
	case TypeResponse:
		return &Response{}
	case TypeExceptionResponse:
		return &ExceptionResponse{}
	case TypeDataResponse:
		return &DataResponse{}
	case TypeDataArrayResponse:
		return &DataArrayResponse{}
	case TypeIntegerResponse:
		return &IntegerResponse{}
	case TypeDiscoveryEvent:
		return &DiscoveryEvent{}
	case TypeJournalTopicAck:
		return &JournalTopicAck{}
	case TypeJournalQueueAck:
		return &JournalQueueAck{}
	case TypeJournalTrace:
		return &JournalTrace{}
	case TypeJournalTransaction:
		return &JournalTransaction{}
	case TypeSubscriptionInfo:
		return &SubscriptionInfo{}
	case TypePartialCommand:
		return &PartialCommand{}
	case TypeLastPartialCommand:
		return &PartialCommand{Last: true}
	case TypeReplayCommand:
		return &ReplayCommand{}
	case TypeMessageDispatchNotification:
		return &MessageDispatchNotification{}
	case TypeNetworkBridgeFilter:
		return &NetworkBridgeFilter{}
	case TypeBrokerSubscriptionInfo:
		return &BrokerSubscriptionInfo{}
	case TypeActiveMQQueue, TypeActiveMQTopic, TypeActiveMQTempQueue, TypeActiveMQTempTopic:
		return &Destination{Kind: t}
	case TypeMessageId:
		return &MessageId{}
	case TypeLocalTransactionId:
		return &LocalTransactionId{}
	case TypeXATransactionId:
		return &XATransactionId{}
	case TypeConnectionId:
		return &ConnectionId{}
	case TypeSessionId:
		return &SessionId{}
	case TypeConsumerId:
		return &ConsumerId{}
	case TypeProducerId:
		return &ProducerId{}
	case TypeBrokerId:
		return &BrokerId{}
	}
	return nil
}

var typeNames = map[byte]string{
	TypeNull: "Null", TypeWireFormatInfo: "WireFormatInfo", TypeBrokerInfo: "BrokerInfo",
	TypeConnectionInfo: "ConnectionInfo", TypeSessionInfo: "SessionInfo", TypeConsumerInfo: "ConsumerInfo",
	TypeProducerInfo: "ProducerInfo", TypeTransactionInfo: "TransactionInfo", TypeDestinationInfo: "DestinationInfo",
	TypeRemoveSubscriptionInfo: "RemoveSubscriptionInfo", TypeKeepAliveInfo: "KeepAliveInfo",
	TypeShutdownInfo: "ShutdownInfo", TypeRemoveInfo: "RemoveInfo", TypeControlCommand: "ControlCommand",
	TypeFlushCommand: "FlushCommand", TypeConnectionError: "ConnectionError", TypeConsumerControl: "ConsumerControl",
	TypeConnectionControl: "ConnectionControl", TypeProducerAck: "ProducerAck", TypeMessagePull: "MessagePull",
	TypeMessageDispatch: "MessageDispatch", TypeMessageAck: "MessageAck", TypeActiveMQMessage: "ActiveMQMessage",
	TypeActiveMQBytesMessage: "ActiveMQBytesMessage", TypeActiveMQMapMessage: "ActiveMQMapMessage",
	TypeActiveMQObjectMessage: "ActiveMQObjectMessage", TypeActiveMQStreamMessage: "ActiveMQStreamMessage",
	TypeActiveMQTextMessage: "ActiveMQTextMessage", TypeActiveMQBlobMessage: "ActiveMQBlobMessage",
	TypeResponse: "Response", TypeExceptionResponse: "ExceptionResponse", TypeDataResponse: "DataResponse",
	TypeDataArrayResponse: "DataArrayResponse", TypeIntegerResponse: "IntegerResponse",
	TypeDiscoveryEvent: "DiscoveryEvent", TypeJournalTopicAck: "JournalTopicAck",
	TypeJournalQueueAck: "JournalQueueAck", TypeJournalTrace: "JournalTrace",
	TypeJournalTransaction: "JournalTransaction", TypeSubscriptionInfo: "SubscriptionInfo",
	TypePartialCommand: "PartialCommand", TypeLastPartialCommand: "LastPartialCommand",
	TypeReplayCommand: "ReplayCommand", TypeMessageDispatchNotification: "MessageDispatchNotification",
	TypeNetworkBridgeFilter: "NetworkBridgeFilter", TypeBrokerSubscriptionInfo: "BrokerSubscriptionInfo",
	TypeActiveMQQueue: "ActiveMQQueue", TypeActiveMQTopic: "ActiveMQTopic",
	TypeActiveMQTempQueue: "ActiveMQTempQueue", TypeActiveMQTempTopic: "ActiveMQTempTopic",
	TypeMessageId: "MessageId", TypeLocalTransactionId: "LocalTransactionId",
	TypeXATransactionId: "XATransactionId", TypeConnectionId: "ConnectionId", TypeSessionId: "SessionId",
	TypeConsumerId: "ConsumerId", TypeProducerId: "ProducerId", TypeBrokerId: "BrokerId",
}

// TypeName returns the ActiveMQ class name for a type code.
func TypeName(t byte) string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return "type " + strconv.Itoa(int(t))
}

// marshalAware types carry one extra (always false) BooleanStream bit when
// nested in a tight frame: every message type and WireFormatInfo
// (DataStructure.isMarshallAware in 5.17).
func marshalAware(t byte) bool {
	return t == TypeWireFormatInfo || (t >= TypeActiveMQMessage && t <= TypeActiveMQBlobMessage)
}

// isNil reports whether ds is nil or a typed nil pointer.
func isNil(ds DataStructure) bool {
	if ds == nil {
		return true
	}
	v := reflect.ValueOf(ds)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
