package wire

import (
	"fmt"
	"strings"
	"unicode/utf16"
)

// emojiText matches Interop.EMOJI_TEXT: Latin-1, CJK, a non-BMP emoji and NUL.
const emojiText = "h\u00e9llo \u4e16\u754c \U0001F600 nul[\x00]"

func sampleException() *Throwable {
	return &Throwable{
		ClassName: "javax.jms.InvalidDestinationException",
		Message:   "no such destination: queue://x",
		StackTrace: []StackTraceElement{
			{DeclaringClass: "org.apache.activemq.broker.Region", MethodName: "lookup", FileName: "Region.java", LineNumber: 123},
		},
		Cause: &Throwable{
			ClassName: "java.lang.IllegalStateException",
			Message:   "inner \u00fc",
			StackTrace: []StackTraceElement{
				{DeclaringClass: "org.example.Inner", MethodName: "run", FileName: "Inner.java", LineNumber: 7},
				{DeclaringClass: "org.example.Native", MethodName: "call", LineNumber: -2},
			},
		},
	}
}

// Indices of the messages in sampleCommands that Interop.describe reports.
const (
	sampleTextIndex      = 20
	sampleBytesIndex     = 21
	sampleMapIndex       = 22
	sampleExceptionIndex = 36
)

// sampleCommands returns one or more values of every type the version
// supports, with every field set to something non-zero somewhere.
func sampleCommands(version int) []DataStructure {
	conn := &ConnectionId{Value: "ID:host-1234-1700000000000-1:1"}
	sess := &SessionId{ConnectionId: conn.Value, Value: 1}
	cons := &ConsumerId{ConnectionId: conn.Value, SessionId: 1, Value: 1}
	prod := &ProducerId{ConnectionId: conn.Value, SessionId: 1, Value: 1}
	queue := NewQueue("orders.in")
	topic := NewTopic("ActiveMQ.Advisory.TempQueue,ActiveMQ.Advisory.TempTopic")
	broker := &BrokerId{Value: "ID:broker-1-1700000000000-0:1"}
	ltx := &LocalTransactionId{Value: 5, ConnectionId: conn}
	xtx := &XATransactionId{FormatId: 0x1234, GlobalTransactionId: []byte{1, 2, 3, 4}, BranchQualifier: []byte{9, 8}}
	mid := func(seq int64) *MessageId { return &MessageId{ProducerId: prod, ProducerSequenceId: seq} }

	o := DefaultOptions()
	o.Version = version
	o.MaxFrameSize = 104857600
	wfi, err := NewWireFormatInfo(o)
	if err != nil {
		panic(err)
	}
	nbf := &NetworkBridgeFilter{NetworkBrokerId: broker}
	if version >= 10 {
		nbf.MessageTTL, nbf.ConsumerTTL = 3, 2
	} else {
		nbf.NetworkTTL = 3
	}
	cinfo := &ConsumerInfo{
		BaseCommand: BaseCommand{CommandId: 4, ResponseRequired: true},
		ConsumerId:  cons, Destination: queue, PrefetchSize: 100, MaximumPendingMessageLimit: 10,
		Selector: "color = 'red' AND weight > 5", ClientId: "client-\u00e9", SubscriptionName: "durable-1",
		Exclusive: true, Priority: -5, BrokerPath: []*BrokerId{broker}, AdditionalPredicate: nbf,
		NetworkSubscription: true, NoRangeAcks: true,
		NetworkConsumerPath: []*ConsumerId{{ConnectionId: conn.Value, SessionId: 1, Value: 99}},
	}
	if version < 10 {
		cinfo.ClientId = ""
	}

	text := &Message{
		BaseCommand: BaseCommand{CommandId: 6, ResponseRequired: true},
		ProducerId:  prod, Destination: queue, MessageId: mid(1), Persistent: true, Priority: 4,
		Timestamp: 1700000000123, CorrelationId: "corr-\U0001F600", Type: "greeting", GroupID: "group-a",
		GroupSequence: 1, ReplyTo: NewTempQueue("ID:host-1234-1700000000000-1:1:1"),
	}
	text.SetText(emojiText, false)
	if err := text.SetProperties(map[string]any{
		"bool": true, "char": Char('x'), "int": int32(7), "string": "v\u00e4lue \U0001F600",
	}); err != nil {
		panic(err)
	}
	bytesMsg := &Message{ProducerId: prod, Destination: queue, MessageId: mid(2), TransactionId: ltx}
	bytesMsg.SetBytes([]byte{0, 1, 2, 0xff}, false)
	mapMsg := &Message{ProducerId: prod, Destination: queue, MessageId: mid(3)}
	if err := mapMsg.SetMap(map[string]any{"name": "\u4e16\u754c", "count": int32(3), "raw": []byte{5, 6}}, false); err != nil {
		panic(err)
	}
	streamMsg := &Message{ProducerId: prod, Destination: queue, MessageId: mid(4)}
	if err := streamMsg.SetStream([]any{"first", int32(42), false, 3.5, []byte{7}}, false); err != nil {
		panic(err)
	}
	objMsg := &Message{Kind: TypeActiveMQObjectMessage, ProducerId: prod, Destination: queue, MessageId: mid(5),
		Content: []byte{0xAC, 0xED, 0x00, 0x05, 0x74, 0x00, 0x01, 'x'}}
	ztext := &Message{ProducerId: prod, Destination: queue, MessageId: mid(6)}
	ztext.SetText(strings.Repeat("compress me ", 100), true)
	zbytes := &Message{ProducerId: prod, Destination: queue, MessageId: mid(7)}
	zbytes.SetBytes([]byte(strings.Repeat("compress me ", 100)), true)
	plain := &Message{
		Kind: TypeActiveMQMessage, ProducerId: prod, Destination: topic,
		MessageId:     &MessageId{ProducerId: prod, ProducerSequenceId: 8, BrokerSequenceId: 1 << 33},
		DataStructure: cinfo, TargetConsumerId: cons, BrokerPath: []*BrokerId{broker, {Value: "ID:other"}},
		Cluster: []*BrokerId{}, BrokerInTime: 1700000000200, BrokerOutTime: 1700000000300, Arrival: 1 << 40,
		UserID: "system", RedeliveryCounter: 2, OriginalDestination: queue, OriginalTransactionId: xtx,
		Droppable: true, RecievedByDFBridge: true, Expiration: -1,
		JMSXGroupFirstForConsumer: version >= 10,
	}
	if version >= 10 {
		plain.MessageId.TextView = "ID:custom-text-view"
	}
	if err := plain.SetProperties(map[string]any{"big": strings.Repeat("abcdefghijklmnopqrstuvwxyz", 350),
		"nested": map[string]any{"l": []any{int16(-3), float32(1.5), nil}}, "byte": int8(-1), "long": int64(-9000000000)}); err != nil {
		panic(err)
	}
	blob := &Message{Kind: TypeActiveMQBlobMessage, ProducerId: prod, Destination: queue, MessageId: mid(9),
		RemoteBlobUrl: "http://blob/1", MimeType: "application/octet-stream", DeletedByBroker: true}

	ack := &MessageAck{BaseCommand: BaseCommand{CommandId: 9}, Destination: queue, ConsumerId: cons,
		AckType: AckStandard, FirstMessageId: mid(1), LastMessageId: mid(3), MessageCount: 3}
	poison := &MessageAck{Destination: queue, ConsumerId: cons, TransactionId: ltx, AckType: AckPoison,
		LastMessageId: mid(4), MessageCount: 1}
	if version >= 7 {
		poison.PoisonCause = sampleException()
	}

	l := []DataStructure{
		wfi, // 0
		&BrokerInfo{BrokerId: broker, BrokerURL: "tcp://localhost:61616", BrokerName: "localhost", ConnectionId: 7,
			NetworkProperties: "a=b", SlaveBroker: true, DuplexConnection: true, BrokerUploadUrl: "http://up",
			PeerBrokerInfos: []*BrokerInfo{{BrokerId: &BrokerId{Value: "ID:peer"}, BrokerName: "peer"}}},
		&ConnectionInfo{BaseCommand: BaseCommand{CommandId: 1, ResponseRequired: true}, ConnectionId: conn,
			ClientId: "client-\u00e9", UserName: "system", Password: "manager", Manageable: true, ClientMaster: true,
			ClientIp: "tcp://127.0.0.1:5000", BrokerPath: []*BrokerId{broker}, FailoverReconnect: true},
		&SessionInfo{BaseCommand: BaseCommand{CommandId: 2}, SessionId: sess},
		&ConsumerInfo{BaseCommand: BaseCommand{CommandId: 3, ResponseRequired: true},
			ConsumerId: &ConsumerId{ConnectionId: conn.Value, SessionId: -1, Value: 1}, Destination: topic,
			PrefetchSize: 1000, NoLocal: true, Browser: true, DispatchAsync: true, Retroactive: true, OptimizedAcknowledge: true},
		cinfo, // 5
		&ProducerInfo{BaseCommand: BaseCommand{CommandId: 5}, ProducerId: prod, Destination: queue, WindowSize: 65536,
			DispatchAsync: true, BrokerPath: []*BrokerId{}},
		&TransactionInfo{ConnectionId: conn, TransactionId: ltx, Type: TransactionBegin},
		&TransactionInfo{ConnectionId: conn, TransactionId: xtx, Type: TransactionPrepare},
		&DestinationInfo{ConnectionId: conn, Destination: NewTempQueue("ID:host-1234-1700000000000-1:1:1"),
			OperationType: DestinationAdd, Timeout: 70000, BrokerPath: []*BrokerId{broker}},
		&RemoveSubscriptionInfo{ConnectionId: conn, SubscriptionName: "durable-1", ClientId: "client-\u00e9"}, // 10
		&KeepAliveInfo{BaseCommand{ResponseRequired: true}},
		&ShutdownInfo{},
		&FlushCommand{},
		&RemoveInfo{ObjectId: cons, LastDeliveredSequenceId: -1},
		&RemoveInfo{ObjectId: sess}, // 15
		&ControlCommand{Command: "shutdown"},
		&ConnectionError{Exception: &Throwable{ClassName: "java.io.IOException", Message: "connection reset"}, ConnectionId: conn},
		&ConsumerControl{ConsumerId: cons, Destination: queue, Prefetch: 0, Stop: true, Close: true, Flush: true, Start: true},
		&ConnectionControl{FaultTolerant: true, ConnectedBrokers: "tcp://a:1,tcp://b:2", ReconnectTo: "tcp://b:2",
			Token: []byte{0x0a, 0x0b}, Close: true, Exit: true, Resume: true, Suspend: true, RebalanceConnection: true},
		text,     // 20
		bytesMsg, // 21
		mapMsg,   // 22
		streamMsg,
		objMsg,
		ztext, // 25
		zbytes,
		plain,
		blob,
		&MessageDispatch{ConsumerId: cons, Destination: queue, Message: text, RedeliveryCounter: 1},
		&MessageDispatch{ConsumerId: cons, Destination: queue}, // 30
		ack,
		poison,
		&ProducerAck{ProducerId: prod, Size: 1234},
		&MessagePull{ConsumerId: cons, Destination: queue, Timeout: -1, CorrelationId: "corr-1", MessageId: mid(3)},
		&Response{CorrelationId: 1}, // 35
		&ExceptionResponse{Response: Response{CorrelationId: 2}, Exception: sampleException()},
		&DataResponse{Response: Response{CorrelationId: 3}, Data: wfi},
		&DataArrayResponse{Response: Response{CorrelationId: 4}, Data: []DataStructure{xtx, ltx, nil}},
		&IntegerResponse{Response: Response{CorrelationId: 5}, Result: 3},
		&DiscoveryEvent{ServiceName: "tcp://host:61616", BrokerName: "b1"}, // 40
		&JournalTopicAck{Destination: topic, MessageId: mid(10), MessageSequenceId: 77, SubscritionName: "sub",
			ClientId: "cid", TransactionId: ltx},
		&JournalQueueAck{Destination: queue, MessageAck: ack},
		&JournalTrace{Message: "trace"},
		&JournalTransaction{TransactionId: xtx, Type: 2, WasPrepared: true},
		&SubscriptionInfo{ClientId: "client-\u00e9", SubcriptionName: "durable-1", Destination: topic,
			SubscribedDestination: NewTopic("news"), Selector: "a > 1", NoLocal: version >= 11}, // 45
		&PartialCommand{CommandId: 11, Data: []byte{1, 2, 3}},
		&PartialCommand{Last: true, CommandId: 12, Data: []byte{}},
		&ReplayCommand{FirstNakNumber: 3, LastNakNumber: 9},
		&MessageDispatchNotification{ConsumerId: cons, Destination: queue, DeliverySequenceId: 4096, MessageId: mid(1)},
		nbf, // 50
		queue,
		NewTempTopic("ID:tt:1"),
		mid(11),
		conn, sess, cons, prod, broker, ltx, xtx, // 54..60
	}
	if version >= 12 {
		l = append(l, &BrokerSubscriptionInfo{BrokerId: broker, BrokerName: "localhost", SubscriptionInfos: []*ConsumerInfo{cinfo, nil}})
	}
	if version < 3 {
		// No ProducerAck or BlobMessage before v3; no MessagePull before v2.
		var kept []DataStructure
		for _, ds := range l {
			if knownType(ds.DataStructureType(), version) {
				kept = append(kept, ds)
			}
		}
		l = kept
	}
	return l
}

// javaEscape mirrors Interop.escape: UTF-16 units outside 0x20..0x7e as \uXXXX.
func javaEscape(s string) string {
	var b strings.Builder
	for _, u := range utf16.Encode([]rune(s)) {
		if u < 0x20 || u > 0x7e {
			fmt.Fprintf(&b, "\\u%04x", u)
		} else {
			b.WriteByte(byte(u))
		}
	}
	return b.String()
}

// javaCheckLines is what Interop check prints for sampleCommands.
func javaCheckLines(n int) []string {
	return []string{
		// ActiveMQ 5.17 reads property strings through UTF8Buffer, which
		// decodes standard UTF-8, so a non-BMP character written (by Java or
		// by us) as a CESU-8 surrogate pair comes out as two U+FFFD.
		javaEscape(fmt.Sprintf("%d TEXT %s props={bool=true, char=x, int=7, string=v\u00e4lue \ufffd\ufffd}", sampleTextIndex, emojiText)),
		fmt.Sprintf("%d BYTES [0, 1, 2, -1]", sampleBytesIndex),
		javaEscape(fmt.Sprintf("%d MAP {count=3, name=\u4e16\u754c, raw=[5, 6]}", sampleMapIndex)),
		javaEscape(fmt.Sprintf("%d EXCEPTION javax.jms.InvalidDestinationException no such destination: queue://x cause=java.lang.IllegalStateException: inner \u00fc", sampleExceptionIndex)),
		fmt.Sprintf("OK %d", n),
	}
}
