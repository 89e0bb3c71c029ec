package wire

// Command structs. Field order in each marshal method is the wire order of
// the OpenWire vN marshallers (reference §7, version deltas §12).

// BrokerInfo (type 2) describes a broker to clients and network peers.
type BrokerInfo struct {
	BaseCommand
	BrokerId                   *BrokerId
	BrokerURL                  string
	PeerBrokerInfos            []*BrokerInfo
	BrokerName                 string
	SlaveBroker                bool
	MasterBroker               bool
	FaultTolerantConfiguration bool
	DuplexConnection           bool  // v2+
	NetworkConnection          bool  // v2+
	ConnectionId               int64 // v2+
	BrokerUploadUrl            string
	NetworkProperties          string // v3+
}

// ConnectionInfo (type 3) opens a connection.
type ConnectionInfo struct {
	BaseCommand
	ConnectionId          *ConnectionId
	ClientId              string
	Password              string
	UserName              string
	BrokerPath            []*BrokerId
	BrokerMasterConnector bool
	Manageable            bool
	ClientMaster          bool   // v2+
	FaultTolerant         bool   // v6+
	FailoverReconnect     bool   // v6+
	ClientIp              string // v8+
}

// SessionInfo (type 4) opens a session.
type SessionInfo struct {
	BaseCommand
	SessionId *SessionId
}

// ConsumerInfo (type 5) opens a consumer.
type ConsumerInfo struct {
	BaseCommand
	ConsumerId                 *ConsumerId
	Browser                    bool
	Destination                *Destination
	PrefetchSize               int32 // messages
	MaximumPendingMessageLimit int32 // messages
	DispatchAsync              bool
	Selector                   string
	ClientId                   string // v10+
	SubscriptionName           string
	NoLocal                    bool
	Exclusive                  bool
	Retroactive                bool
	Priority                   int8
	BrokerPath                 []*BrokerId
	AdditionalPredicate        DataStructure // a *NetworkBridgeFilter in practice
	NetworkSubscription        bool
	OptimizedAcknowledge       bool
	NoRangeAcks                bool
	NetworkConsumerPath        []*ConsumerId // v4+
}

// ProducerInfo (type 6) opens a producer.
type ProducerInfo struct {
	BaseCommand
	ProducerId    *ProducerId
	Destination   *Destination
	BrokerPath    []*BrokerId
	DispatchAsync bool  // v2+
	WindowSize    int32 // bytes, v3+
}

// TransactionInfo.Type values.
const (
	TransactionBegin          byte = 0
	TransactionPrepare        byte = 1
	TransactionCommitOnePhase byte = 2
	TransactionCommitTwoPhase byte = 3
	TransactionRollback       byte = 4
	TransactionRecover        byte = 5
	TransactionForget         byte = 6
	TransactionEnd            byte = 7
)

// TransactionInfo (type 7) drives a local or XA transaction.
type TransactionInfo struct {
	BaseCommand
	ConnectionId  *ConnectionId
	TransactionId TransactionId
	Type          byte
}

// DestinationInfo.OperationType values.
const (
	DestinationAdd    byte = 0
	DestinationRemove byte = 1
)

// DestinationInfo (type 8) creates or deletes a (temporary) destination.
type DestinationInfo struct {
	BaseCommand
	ConnectionId  *ConnectionId
	Destination   *Destination
	OperationType byte
	Timeout       int64 // milliseconds
	BrokerPath    []*BrokerId
}

// RemoveSubscriptionInfo (type 9) deletes a durable subscription.
type RemoveSubscriptionInfo struct {
	BaseCommand
	ConnectionId     *ConnectionId
	SubscriptionName string
	ClientId         string
}

// KeepAliveInfo (type 10) is the inactivity-monitor heartbeat.
type KeepAliveInfo struct{ BaseCommand }

// ShutdownInfo (type 11) is an orderly close.
type ShutdownInfo struct{ BaseCommand }

// RemoveInfo (type 12) closes a connection, session, consumer or producer.
type RemoveInfo struct {
	BaseCommand
	// ObjectId is a *ConnectionId, *SessionId, *ConsumerId or *ProducerId.
	ObjectId DataStructure
	// LastDeliveredSequenceId (v5+): -1 unset, -2 unknown.
	LastDeliveredSequenceId int64
}

// ControlCommand (type 14) carries a textual control command.
type ControlCommand struct {
	BaseCommand
	Command string
}

// FlushCommand (type 15).
type FlushCommand struct{ BaseCommand }

// ConnectionError (type 16) reports an asynchronous failure.
type ConnectionError struct {
	BaseCommand
	Exception    *Throwable
	ConnectionId *ConnectionId
}

// ConsumerControl (type 17) changes a consumer's prefetch or state.
type ConsumerControl struct {
	BaseCommand
	Destination *Destination // v6+
	Close       bool
	ConsumerId  *ConsumerId
	Prefetch    int32 // messages
	Flush       bool  // v2+
	Start       bool  // v2+
	Stop        bool  // v2+
}

// ConnectionControl (type 18) is sent by the broker to steer a connection.
type ConnectionControl struct {
	BaseCommand
	Close               bool
	Exit                bool
	FaultTolerant       bool
	Resume              bool
	Suspend             bool
	ConnectedBrokers    string // v6+
	ReconnectTo         string // v6+
	RebalanceConnection bool   // v6+
	Token               []byte // v8+
}

// ProducerAck (type 19, v3+) frees producer window space.
type ProducerAck struct {
	BaseCommand
	ProducerId *ProducerId
	Size       int32 // bytes
}

// MessagePull (type 20, v2+) asks for one message for a prefetch-0 consumer.
type MessagePull struct {
	BaseCommand
	ConsumerId    *ConsumerId
	Destination   *Destination
	Timeout       int64      // milliseconds: 0 wait, -1 no wait
	CorrelationId string     // v3+
	MessageId     *MessageId // v3+
}

// MessageDispatch (type 21) delivers a message to a consumer; a nil Message
// ends a browse or times out a pull.
type MessageDispatch struct {
	BaseCommand
	ConsumerId        *ConsumerId
	Destination       *Destination
	Message           *Message
	RedeliveryCounter int32
}

// MessageAck.AckType values.
const (
	AckDelivered   byte = 0
	AckPoison      byte = 1
	AckStandard    byte = 2
	AckRedelivered byte = 3
	AckIndividual  byte = 4
	AckUnmatched   byte = 5
	AckExpired     byte = 6
)

// MessageAck (type 22) acknowledges a range of dispatched messages.
type MessageAck struct {
	BaseCommand
	Destination    *Destination
	TransactionId  TransactionId
	ConsumerId     *ConsumerId
	AckType        byte
	FirstMessageId *MessageId
	LastMessageId  *MessageId
	MessageCount   int32
	PoisonCause    *Throwable // v7+
}

// Response (type 30) answers a command with ResponseRequired.
type Response struct {
	BaseCommand
	CorrelationId int32
}

// ExceptionResponse (type 31) is a failed Response.
type ExceptionResponse struct {
	Response
	Exception *Throwable
}

// DataResponse (type 32) is a Response carrying one object.
type DataResponse struct {
	Response
	Data DataStructure
}

// DataArrayResponse (type 33) is a Response carrying objects (XA recover).
type DataArrayResponse struct {
	Response
	Data []DataStructure
}

// IntegerResponse (type 34) is a Response carrying an int (XA prepare).
type IntegerResponse struct {
	Response
	Result int32
}

// DiscoveryEvent (type 40).
type DiscoveryEvent struct {
	ServiceName string
	BrokerName  string
}

// JournalTopicAck (type 50), a record of the old journal stores.
type JournalTopicAck struct {
	Destination       *Destination
	MessageId         *MessageId
	MessageSequenceId int64
	SubscritionName   string // (sic)
	ClientId          string
	TransactionId     TransactionId
}

// JournalQueueAck (type 52).
type JournalQueueAck struct {
	Destination *Destination
	MessageAck  *MessageAck
}

// JournalTrace (type 53).
type JournalTrace struct {
	Message string
}

// JournalTransaction (type 54).
type JournalTransaction struct {
	TransactionId TransactionId
	Type          byte
	WasPrepared   bool
}

// SubscriptionInfo (type 55) describes a durable subscription.
type SubscriptionInfo struct {
	ClientId              string
	Destination           *Destination
	Selector              string
	SubcriptionName       string       // (sic, as the Java getter)
	SubscribedDestination *Destination // v3+
	NoLocal               bool         // v11+
}

// PartialCommand (type 60) and LastPartialCommand (type 61, Last=true)
// carry a fragment of a command over datagram transports.
type PartialCommand struct {
	Last      bool
	CommandId int32
	Data      []byte
}

// ReplayCommand (type 65) asks a datagram peer to resend.
type ReplayCommand struct {
	BaseCommand
	FirstNakNumber int32
	LastNakNumber  int32
}

// MessageDispatchNotification (type 90) tells a slave/network peer about a
// dispatch.
type MessageDispatchNotification struct {
	BaseCommand
	ConsumerId         *ConsumerId
	Destination        *Destination
	DeliverySequenceId int64
	MessageId          *MessageId
}

// NetworkBridgeFilter (type 91) is ConsumerInfo.AdditionalPredicate for
// network bridges.
type NetworkBridgeFilter struct {
	NetworkTTL      int32 // v1..v9 only
	NetworkBrokerId *BrokerId
	MessageTTL      int32 // v10+
	ConsumerTTL     int32 // v10+
}

// BrokerSubscriptionInfo (type 92, v12) lists durable subscriptions for a
// network bridge.
type BrokerSubscriptionInfo struct {
	BaseCommand
	BrokerId          *BrokerId
	BrokerName        string
	SubscriptionInfos []*ConsumerInfo // (sic: ConsumerInfo in 5.17)
}

// DataStructureType implements DataStructure.
func (*BrokerInfo) DataStructureType() byte { return TypeBrokerInfo }

// DataStructureType implements DataStructure.
func (*ConnectionInfo) DataStructureType() byte { return TypeConnectionInfo }

// DataStructureType implements DataStructure.
func (*SessionInfo) DataStructureType() byte { return TypeSessionInfo }

// DataStructureType implements DataStructure.
func (*ConsumerInfo) DataStructureType() byte { return TypeConsumerInfo }

// DataStructureType implements DataStructure.
func (*ProducerInfo) DataStructureType() byte { return TypeProducerInfo }

// DataStructureType implements DataStructure.
func (*TransactionInfo) DataStructureType() byte { return TypeTransactionInfo }

// DataStructureType implements DataStructure.
func (*DestinationInfo) DataStructureType() byte { return TypeDestinationInfo }

// DataStructureType implements DataStructure.
func (*RemoveSubscriptionInfo) DataStructureType() byte { return TypeRemoveSubscriptionInfo }

// DataStructureType implements DataStructure.
func (*KeepAliveInfo) DataStructureType() byte { return TypeKeepAliveInfo }

// DataStructureType implements DataStructure.
func (*ShutdownInfo) DataStructureType() byte { return TypeShutdownInfo }

// DataStructureType implements DataStructure.
func (*RemoveInfo) DataStructureType() byte { return TypeRemoveInfo }

// DataStructureType implements DataStructure.
func (*ControlCommand) DataStructureType() byte { return TypeControlCommand }

// DataStructureType implements DataStructure.
func (*FlushCommand) DataStructureType() byte { return TypeFlushCommand }

// DataStructureType implements DataStructure.
func (*ConnectionError) DataStructureType() byte { return TypeConnectionError }

// DataStructureType implements DataStructure.
func (*ConsumerControl) DataStructureType() byte { return TypeConsumerControl }

// DataStructureType implements DataStructure.
func (*ConnectionControl) DataStructureType() byte { return TypeConnectionControl }

// DataStructureType implements DataStructure.
func (*ProducerAck) DataStructureType() byte { return TypeProducerAck }

// DataStructureType implements DataStructure.
func (*MessagePull) DataStructureType() byte { return TypeMessagePull }

// DataStructureType implements DataStructure.
func (*MessageDispatch) DataStructureType() byte { return TypeMessageDispatch }

// DataStructureType implements DataStructure.
func (*MessageAck) DataStructureType() byte { return TypeMessageAck }

// DataStructureType implements DataStructure.
func (*Response) DataStructureType() byte { return TypeResponse }

// DataStructureType implements DataStructure.
func (*ExceptionResponse) DataStructureType() byte { return TypeExceptionResponse }

// DataStructureType implements DataStructure.
func (*DataResponse) DataStructureType() byte { return TypeDataResponse }

// DataStructureType implements DataStructure.
func (*DataArrayResponse) DataStructureType() byte { return TypeDataArrayResponse }

// DataStructureType implements DataStructure.
func (*IntegerResponse) DataStructureType() byte { return TypeIntegerResponse }

// DataStructureType implements DataStructure.
func (*DiscoveryEvent) DataStructureType() byte { return TypeDiscoveryEvent }

// DataStructureType implements DataStructure.
func (*JournalTopicAck) DataStructureType() byte { return TypeJournalTopicAck }

// DataStructureType implements DataStructure.
func (*JournalQueueAck) DataStructureType() byte { return TypeJournalQueueAck }

// DataStructureType implements DataStructure.
func (*JournalTrace) DataStructureType() byte { return TypeJournalTrace }

// DataStructureType implements DataStructure.
func (*JournalTransaction) DataStructureType() byte { return TypeJournalTransaction }

// DataStructureType implements DataStructure.
func (*SubscriptionInfo) DataStructureType() byte { return TypeSubscriptionInfo }

// DataStructureType implements DataStructure.
func (x *PartialCommand) DataStructureType() byte {
	if x.Last {
		return TypeLastPartialCommand
	}
	return TypePartialCommand
}

// DataStructureType implements DataStructure.
func (*ReplayCommand) DataStructureType() byte { return TypeReplayCommand }

// DataStructureType implements DataStructure.
func (*MessageDispatchNotification) DataStructureType() byte { return TypeMessageDispatchNotification }

// DataStructureType implements DataStructure.
func (*NetworkBridgeFilter) DataStructureType() byte { return TypeNetworkBridgeFilter }

// DataStructureType implements DataStructure.
func (*BrokerSubscriptionInfo) DataStructureType() byte { return TypeBrokerSubscriptionInfo }

func (x *BrokerInfo) marshal(c *codec) {
	x.marshalBase(c)
	cobjField(c, "BrokerId", &x.BrokerId)
	c.str("BrokerURL", &x.BrokerURL)
	objArray(c, "PeerBrokerInfos", &x.PeerBrokerInfos)
	c.str("BrokerName", &x.BrokerName)
	c.bool("SlaveBroker", &x.SlaveBroker)
	c.bool("MasterBroker", &x.MasterBroker)
	c.bool("FaultTolerantConfiguration", &x.FaultTolerantConfiguration)
	if c.version >= 2 {
		c.bool("DuplexConnection", &x.DuplexConnection)
		c.bool("NetworkConnection", &x.NetworkConnection)
		c.int64("ConnectionId", &x.ConnectionId)
	}
	if c.version >= 3 {
		c.str("BrokerUploadUrl", &x.BrokerUploadUrl)
		c.str("NetworkProperties", &x.NetworkProperties)
	}
}

func (x *ConnectionInfo) marshal(c *codec) {
	x.marshalBase(c)
	cobjField(c, "ConnectionId", &x.ConnectionId)
	c.str("ClientId", &x.ClientId)
	c.str("Password", &x.Password)
	c.str("UserName", &x.UserName)
	objArray(c, "BrokerPath", &x.BrokerPath)
	c.bool("BrokerMasterConnector", &x.BrokerMasterConnector)
	c.bool("Manageable", &x.Manageable)
	if c.version >= 2 {
		c.bool("ClientMaster", &x.ClientMaster)
	}
	if c.version >= 6 {
		c.bool("FaultTolerant", &x.FaultTolerant)
		c.bool("FailoverReconnect", &x.FailoverReconnect)
	}
	if c.version >= 8 {
		c.str("ClientIp", &x.ClientIp)
	}
}

func (x *SessionInfo) marshal(c *codec) {
	x.marshalBase(c)
	cobjField(c, "SessionId", &x.SessionId)
}

func (x *ConsumerInfo) marshal(c *codec) {
	x.marshalBase(c)
	cobjField(c, "ConsumerId", &x.ConsumerId)
	c.bool("Browser", &x.Browser)
	cobjField(c, "Destination", &x.Destination)
	c.int32("PrefetchSize", &x.PrefetchSize)
	c.int32("MaximumPendingMessageLimit", &x.MaximumPendingMessageLimit)
	c.bool("DispatchAsync", &x.DispatchAsync)
	c.str("Selector", &x.Selector)
	if c.version >= 10 {
		c.str("ClientId", &x.ClientId)
	}
	c.str("SubscriptionName", &x.SubscriptionName)
	c.bool("NoLocal", &x.NoLocal)
	c.bool("Exclusive", &x.Exclusive)
	c.bool("Retroactive", &x.Retroactive)
	c.int8("Priority", &x.Priority)
	objArray(c, "BrokerPath", &x.BrokerPath)
	c.obj("AdditionalPredicate", &x.AdditionalPredicate)
	c.bool("NetworkSubscription", &x.NetworkSubscription)
	c.bool("OptimizedAcknowledge", &x.OptimizedAcknowledge)
	c.bool("NoRangeAcks", &x.NoRangeAcks)
	if c.version >= 4 {
		objArray(c, "NetworkConsumerPath", &x.NetworkConsumerPath)
	}
}

func (x *ProducerInfo) marshal(c *codec) {
	x.marshalBase(c)
	cobjField(c, "ProducerId", &x.ProducerId)
	cobjField(c, "Destination", &x.Destination)
	objArray(c, "BrokerPath", &x.BrokerPath)
	if c.version >= 2 {
		c.bool("DispatchAsync", &x.DispatchAsync)
	}
	if c.version >= 3 {
		c.int32("WindowSize", &x.WindowSize)
	}
}

func (x *TransactionInfo) marshal(c *codec) {
	x.marshalBase(c)
	cobjField(c, "ConnectionId", &x.ConnectionId)
	cobjField(c, "TransactionId", &x.TransactionId)
	c.byte("Type", &x.Type)
}

func (x *DestinationInfo) marshal(c *codec) {
	x.marshalBase(c)
	cobjField(c, "ConnectionId", &x.ConnectionId)
	cobjField(c, "Destination", &x.Destination)
	c.byte("OperationType", &x.OperationType)
	c.int64("Timeout", &x.Timeout)
	objArray(c, "BrokerPath", &x.BrokerPath)
}

func (x *RemoveSubscriptionInfo) marshal(c *codec) {
	x.marshalBase(c)
	cobjField(c, "ConnectionId", &x.ConnectionId)
	c.str("SubscriptionName", &x.SubscriptionName)
	c.str("ClientId", &x.ClientId)
}

func (x *KeepAliveInfo) marshal(c *codec) { x.marshalBase(c) }
func (x *ShutdownInfo) marshal(c *codec)  { x.marshalBase(c) }
func (x *FlushCommand) marshal(c *codec)  { x.marshalBase(c) }

func (x *RemoveInfo) marshal(c *codec) {
	x.marshalBase(c)
	c.cobj("ObjectId", &x.ObjectId)
	if c.version >= 5 {
		c.int64("LastDeliveredSequenceId", &x.LastDeliveredSequenceId)
	}
}

func (x *ControlCommand) marshal(c *codec) {
	x.marshalBase(c)
	c.str("Command", &x.Command)
}

func (x *ConnectionError) marshal(c *codec) {
	x.marshalBase(c)
	c.throwable("Exception", &x.Exception)
	objField(c, "ConnectionId", &x.ConnectionId)
}

func (x *ConsumerControl) marshal(c *codec) {
	x.marshalBase(c)
	if c.version >= 6 {
		objField(c, "Destination", &x.Destination)
	}
	c.bool("Close", &x.Close)
	objField(c, "ConsumerId", &x.ConsumerId)
	c.int32("Prefetch", &x.Prefetch)
	if c.version >= 2 {
		c.bool("Flush", &x.Flush)
		c.bool("Start", &x.Start)
		c.bool("Stop", &x.Stop)
	}
}

func (x *ConnectionControl) marshal(c *codec) {
	x.marshalBase(c)
	c.bool("Close", &x.Close)
	c.bool("Exit", &x.Exit)
	c.bool("FaultTolerant", &x.FaultTolerant)
	c.bool("Resume", &x.Resume)
	c.bool("Suspend", &x.Suspend)
	if c.version >= 6 {
		c.str("ConnectedBrokers", &x.ConnectedBrokers)
		c.str("ReconnectTo", &x.ReconnectTo)
		c.bool("RebalanceConnection", &x.RebalanceConnection)
	}
	if c.version >= 8 {
		c.bytes("Token", &x.Token)
	}
}

func (x *ProducerAck) marshal(c *codec) {
	x.marshalBase(c)
	objField(c, "ProducerId", &x.ProducerId)
	c.int32("Size", &x.Size)
}

func (x *MessagePull) marshal(c *codec) {
	x.marshalBase(c)
	cobjField(c, "ConsumerId", &x.ConsumerId)
	cobjField(c, "Destination", &x.Destination)
	c.int64("Timeout", &x.Timeout)
	if c.version >= 3 {
		c.str("CorrelationId", &x.CorrelationId)
		objField(c, "MessageId", &x.MessageId)
	}
}

func (x *MessageDispatch) marshal(c *codec) {
	x.marshalBase(c)
	cobjField(c, "ConsumerId", &x.ConsumerId)
	cobjField(c, "Destination", &x.Destination)
	objField(c, "Message", &x.Message)
	c.int32("RedeliveryCounter", &x.RedeliveryCounter)
}

func (x *MessageAck) marshal(c *codec) {
	x.marshalBase(c)
	cobjField(c, "Destination", &x.Destination)
	cobjField(c, "TransactionId", &x.TransactionId)
	cobjField(c, "ConsumerId", &x.ConsumerId)
	c.byte("AckType", &x.AckType)
	objField(c, "FirstMessageId", &x.FirstMessageId)
	objField(c, "LastMessageId", &x.LastMessageId)
	c.int32("MessageCount", &x.MessageCount)
	if c.version >= 7 {
		c.throwable("PoisonCause", &x.PoisonCause)
	}
}

func (x *Response) marshal(c *codec) {
	x.marshalBase(c)
	c.int32("CorrelationId", &x.CorrelationId)
}

func (x *ExceptionResponse) marshal(c *codec) {
	x.Response.marshal(c)
	c.throwable("Exception", &x.Exception)
}

func (x *DataResponse) marshal(c *codec) {
	x.Response.marshal(c)
	c.obj("Data", &x.Data)
}

func (x *DataArrayResponse) marshal(c *codec) {
	x.Response.marshal(c)
	objArray(c, "Data", &x.Data)
}

func (x *IntegerResponse) marshal(c *codec) {
	x.Response.marshal(c)
	c.int32("Result", &x.Result)
}

func (x *DiscoveryEvent) marshal(c *codec) {
	c.str("ServiceName", &x.ServiceName)
	c.str("BrokerName", &x.BrokerName)
}

func (x *JournalTopicAck) marshal(c *codec) {
	objField(c, "Destination", &x.Destination)
	objField(c, "MessageId", &x.MessageId)
	c.int64("MessageSequenceId", &x.MessageSequenceId)
	c.str("SubscritionName", &x.SubscritionName)
	c.str("ClientId", &x.ClientId)
	objField(c, "TransactionId", &x.TransactionId)
}

func (x *JournalQueueAck) marshal(c *codec) {
	objField(c, "Destination", &x.Destination)
	objField(c, "MessageAck", &x.MessageAck)
}

func (x *JournalTrace) marshal(c *codec) { c.str("Message", &x.Message) }

func (x *JournalTransaction) marshal(c *codec) {
	objField(c, "TransactionId", &x.TransactionId)
	c.byte("Type", &x.Type)
	c.bool("WasPrepared", &x.WasPrepared)
}

func (x *SubscriptionInfo) marshal(c *codec) {
	c.str("ClientId", &x.ClientId)
	cobjField(c, "Destination", &x.Destination)
	c.str("Selector", &x.Selector)
	c.str("SubcriptionName", &x.SubcriptionName)
	if c.version >= 3 {
		objField(c, "SubscribedDestination", &x.SubscribedDestination)
	}
	if c.version >= 11 {
		c.bool("NoLocal", &x.NoLocal)
	}
}

func (x *PartialCommand) marshal(c *codec) {
	c.int32("CommandId", &x.CommandId)
	c.bytes("Data", &x.Data)
}

func (x *ReplayCommand) marshal(c *codec) {
	x.marshalBase(c)
	c.int32("FirstNakNumber", &x.FirstNakNumber)
	c.int32("LastNakNumber", &x.LastNakNumber)
}

func (x *MessageDispatchNotification) marshal(c *codec) {
	x.marshalBase(c)
	cobjField(c, "ConsumerId", &x.ConsumerId)
	cobjField(c, "Destination", &x.Destination)
	c.int64("DeliverySequenceId", &x.DeliverySequenceId)
	objField(c, "MessageId", &x.MessageId)
}

func (x *NetworkBridgeFilter) marshal(c *codec) {
	if c.version < 10 {
		c.int32("NetworkTTL", &x.NetworkTTL)
		cobjField(c, "NetworkBrokerId", &x.NetworkBrokerId)
		return
	}
	cobjField(c, "NetworkBrokerId", &x.NetworkBrokerId)
	c.int32("MessageTTL", &x.MessageTTL)
	c.int32("ConsumerTTL", &x.ConsumerTTL)
}

func (x *BrokerSubscriptionInfo) marshal(c *codec) {
	x.marshalBase(c)
	objField(c, "BrokerId", &x.BrokerId)
	c.str("BrokerName", &x.BrokerName)
	objArray(c, "SubscriptionInfos", &x.SubscriptionInfos)
}
