package command

import "strconv"

// EntryType is journal-data.proto's KahaEntryType: the first byte of a journal
// payload, naming the protobuf message that follows.
type EntryType uint8

// The KahaEntryType values (journal-data.proto, enum KahaEntryType).
const (
	KahaTraceCommand               EntryType = 0
	KahaAddMessageCommand          EntryType = 1
	KahaRemoveMessageCommand       EntryType = 2
	KahaPrepareCommand             EntryType = 3
	KahaCommitCommand              EntryType = 4
	KahaRollbackCommand            EntryType = 5
	KahaRemoveDestinationCommand   EntryType = 6
	KahaSubscriptionCommand        EntryType = 7
	KahaProducerAuditCommand       EntryType = 8
	KahaAckMessageFileMapCommand   EntryType = 9
	KahaUpdateMessageCommand       EntryType = 10
	KahaAddScheduledJobCommand     EntryType = 11
	KahaRescheduleJobCommand       EntryType = 12
	KahaRemoveScheduledJobCommand  EntryType = 13
	KahaRemoveScheduledJobsCommand EntryType = 14
	KahaDestroySchedulerCommand    EntryType = 15
	KahaRewrittenDataFileCommand   EntryType = 16
)

var entryTypeNames = [...]string{
	"KahaTraceCommand", "KahaAddMessageCommand", "KahaRemoveMessageCommand",
	"KahaPrepareCommand", "KahaCommitCommand", "KahaRollbackCommand",
	"KahaRemoveDestinationCommand", "KahaSubscriptionCommand",
	"KahaProducerAuditCommand", "KahaAckMessageFileMapCommand",
	"KahaUpdateMessageCommand", "KahaAddScheduledJobCommand",
	"KahaRescheduleJobCommand", "KahaRemoveScheduledJobCommand",
	"KahaRemoveScheduledJobsCommand", "KahaDestroySchedulerCommand",
	"KahaRewrittenDataFileCommand",
}

// String returns the proto message name, e.g. "KahaAddMessageCommand".
func (t EntryType) String() string {
	if int(t) < len(entryTypeNames) {
		return entryTypeNames[t]
	}
	return "KahaEntryType(" + strconv.Itoa(int(t)) + ")"
}

// DestType is KahaDestination.DestinationType.
type DestType int32

// The KahaDestination.DestinationType values.
const (
	Queue     DestType = 0
	Topic     DestType = 1
	TempQueue DestType = 2
	TempTopic DestType = 3
)

// String returns the proto enum name, e.g. "TOPIC".
func (t DestType) String() string {
	switch t {
	case Queue:
		return "QUEUE"
	case Topic:
		return "TOPIC"
	case TempQueue:
		return "TEMP_QUEUE"
	case TempTopic:
		return "TEMP_TOPIC"
	}
	return "DestinationType(" + strconv.Itoa(int(t)) + ")"
}

// Destination is KahaDestination. Both fields are required and always written.
// Encode writes Type as given; Decode rejects values other than the four
// declared ones.
type Destination struct {
	Type DestType // field 1
	Name string   // field 2: physical name, no "queue://" prefix
}

// Location is KahaLocation, a journal position.
type Location struct {
	LogID  int32 // field 1: data file id (db-<LogID>.log)
	Offset int32 // field 2: byte offset of the record in that file
}

// LocalTransactionID is KahaLocalTransactionId. Both of its fields carry
// number 1: connection_id is written as key 0x0A (length-delimited),
// transaction_id as key 0x08 (varint), in that order.
type LocalTransactionID struct {
	ConnectionID  string
	TransactionID int64
}

// XATransactionID is KahaXATransactionId; all three fields are required.
type XATransactionID struct {
	FormatID            int32  // field 1
	BranchQualifier     []byte // field 2
	GlobalTransactionID []byte // field 3
}

// TransactionInfo is KahaTransactionInfo. ActiveMQ sets exactly one of the two
// ids and reads the local one first when both are present; Decode rejects a
// TransactionInfo with neither. PreviousEntry is declared by the proto but
// never written by ActiveMQ 5.17.
type TransactionInfo struct {
	LocalTransactionID *LocalTransactionID // field 1
	XATransactionID    *XATransactionID    // field 2
	PreviousEntry      *Location           // field 3
}

// Command is one decoded journal command. The implementations are the
// pointer types of this package (*AddMessage, *Trace, ...).
type Command interface {
	// Type returns the KahaEntryType written before the message.
	Type() EntryType
	isCommand()
}

// Trace is KahaTraceCommand. ActiveMQ writes "LOADED <date>" at start-up and,
// with a periodic disk-sync strategy, an empty Trace (no field at all,
// although the proto marks message required) as a sync marker. Encode writes
// field 1 only when Message is not empty, which reproduces both.
type Trace struct {
	Message string // field 1
}

// AddMessage is KahaAddMessageCommand: a persistent message sent to a
// destination. Encode always writes priority and prioritySupported, as
// KahaDBStore.addMessage and updateMessage do; Decode yields Priority 4 (the
// proto default) when the field is absent.
type AddMessage struct {
	Transaction       *TransactionInfo // field 1, absent when nil
	Destination       Destination      // field 2
	MessageID         string           // field 3: MessageId.toProducerKey()
	Message           []byte           // field 4: OpenWire v11 loose, size-prefixed frame
	Priority          int32            // field 5: JMS priority 0..9
	PrioritySupported bool             // field 6
}

// RemoveMessage is KahaRemoveMessageCommand: an acknowledgement.
type RemoveMessage struct {
	Transaction *TransactionInfo // field 1, absent when nil
	Destination Destination      // field 2
	MessageID   string           // field 3
	// Ack is field 4, an OpenWire MessageAck frame. nil means absent; a
	// non-nil empty slice is ActiveMQ's UNMATCHED ack (a durable subscriber
	// whose selector did not match) and is written as an empty field.
	Ack []byte
	// SubscriptionKey is field 5, "clientId:subscriptionName"; its presence
	// makes this a durable topic ack. Written only when not empty (ActiveMQ
	// never writes an empty key).
	SubscriptionKey string
}

// Prepare is KahaPrepareCommand (XA prepare).
type Prepare struct {
	Transaction TransactionInfo // field 1, required
}

// Commit is KahaCommitCommand.
type Commit struct {
	Transaction TransactionInfo // field 1, required
}

// Rollback is KahaRollbackCommand.
type Rollback struct {
	Transaction TransactionInfo // field 1, required
}

// RemoveDestination is KahaRemoveDestinationCommand.
type RemoveDestination struct {
	Destination Destination // field 1
}

// Subscription is KahaSubscriptionCommand: adds (SubscriptionInfo non-nil) or
// deletes (SubscriptionInfo nil) a durable subscription. ActiveMQ writes
// retroactive only when adding; Encode writes field 3 when SubscriptionInfo is
// non-nil or Retroactive is true.
type Subscription struct {
	Destination      Destination // field 1
	SubscriptionKey  string      // field 2: "clientId:subscriptionName"
	Retroactive      bool        // field 3
	SubscriptionInfo []byte      // field 4: OpenWire SubscriptionInfo frame; nil = absent
}

// ProducerAudit is KahaProducerAuditCommand: a Java-serialized
// ActiveMQMessageAuditNoSync, kept opaque.
type ProducerAudit struct {
	Audit []byte // field 1, required
}

// AckMessageFileMap is KahaAckMessageFileMapCommand: a Java-serialized
// HashMap<Integer, Set<Integer>>, kept opaque.
type AckMessageFileMap struct {
	AckMessageFileMap []byte // field 1, required
}

// UpdateMessage is KahaUpdateMessageCommand: replaces the stored copy of a
// message.
type UpdateMessage struct {
	Message AddMessage // field 1, required
}

// AddScheduledJob is KahaAddScheduledJobCommand (job scheduler store). All
// fields are required; times are epoch milliseconds, Delay and Period
// milliseconds.
type AddScheduledJob struct {
	Scheduler         string // field 1
	JobID             string // field 2
	StartTime         int64  // field 3
	CronEntry         string // field 4
	Delay             int64  // field 5
	Period            int64  // field 6
	Repeat            int32  // field 7
	Payload           []byte // field 8: OpenWire message frame
	NextExecutionTime int64  // field 9
}

// RescheduleJob is KahaRescheduleJobCommand (job scheduler store).
type RescheduleJob struct {
	Scheduler         string // field 1
	JobID             string // field 2
	ExecutionTime     int64  // field 3: epoch ms
	NextExecutionTime int64  // field 4: epoch ms
	RescheduledCount  int32  // field 5
}

// RemoveScheduledJob is KahaRemoveScheduledJobCommand (job scheduler store).
type RemoveScheduledJob struct {
	Scheduler         string // field 1
	JobID             string // field 2
	NextExecutionTime int64  // field 3: epoch ms
}

// RemoveScheduledJobs is KahaRemoveScheduledJobsCommand (job scheduler store).
type RemoveScheduledJobs struct {
	Scheduler string // field 1
	StartTime int64  // field 2: epoch ms
	EndTime   int64  // field 3: epoch ms
}

// DestroyScheduler is KahaDestroySchedulerCommand (declared, unused by 5.17).
type DestroyScheduler struct {
	Scheduler string // field 1
}

// RewrittenDataFile is KahaRewrittenDataFileCommand, the first record of an
// ack-compaction file.
type RewrittenDataFile struct {
	SourceDataFileID int32 // field 1, required
	RewriteType      int32 // field 2, always written (ActiveMQ always sets it)
	// SkipIfSourceExists is field 3; nil means absent, which ActiveMQ reads
	// as the proto default true (and is what ActiveMQ writes).
	SkipIfSourceExists *bool
}

// Skip reports the effective skipIfSourceExists value (default true).
func (c *RewrittenDataFile) Skip() bool {
	return c.SkipIfSourceExists == nil || *c.SkipIfSourceExists
}

// Type returns KahaTraceCommand.
func (*Trace) Type() EntryType { return KahaTraceCommand }

// Type returns KahaAddMessageCommand.
func (*AddMessage) Type() EntryType { return KahaAddMessageCommand }

// Type returns KahaRemoveMessageCommand.
func (*RemoveMessage) Type() EntryType { return KahaRemoveMessageCommand }

// Type returns KahaPrepareCommand.
func (*Prepare) Type() EntryType { return KahaPrepareCommand }

// Type returns KahaCommitCommand.
func (*Commit) Type() EntryType { return KahaCommitCommand }

// Type returns KahaRollbackCommand.
func (*Rollback) Type() EntryType { return KahaRollbackCommand }

// Type returns KahaRemoveDestinationCommand.
func (*RemoveDestination) Type() EntryType { return KahaRemoveDestinationCommand }

// Type returns KahaSubscriptionCommand.
func (*Subscription) Type() EntryType { return KahaSubscriptionCommand }

// Type returns KahaProducerAuditCommand.
func (*ProducerAudit) Type() EntryType { return KahaProducerAuditCommand }

// Type returns KahaAckMessageFileMapCommand.
func (*AckMessageFileMap) Type() EntryType { return KahaAckMessageFileMapCommand }

// Type returns KahaUpdateMessageCommand.
func (*UpdateMessage) Type() EntryType { return KahaUpdateMessageCommand }

// Type returns KahaAddScheduledJobCommand.
func (*AddScheduledJob) Type() EntryType { return KahaAddScheduledJobCommand }

// Type returns KahaRescheduleJobCommand.
func (*RescheduleJob) Type() EntryType { return KahaRescheduleJobCommand }

// Type returns KahaRemoveScheduledJobCommand.
func (*RemoveScheduledJob) Type() EntryType { return KahaRemoveScheduledJobCommand }

// Type returns KahaRemoveScheduledJobsCommand.
func (*RemoveScheduledJobs) Type() EntryType { return KahaRemoveScheduledJobsCommand }

// Type returns KahaDestroySchedulerCommand.
func (*DestroyScheduler) Type() EntryType { return KahaDestroySchedulerCommand }

// Type returns KahaRewrittenDataFileCommand.
func (*RewrittenDataFile) Type() EntryType { return KahaRewrittenDataFileCommand }

func (*Trace) isCommand()               {}
func (*AddMessage) isCommand()          {}
func (*RemoveMessage) isCommand()       {}
func (*Prepare) isCommand()             {}
func (*Commit) isCommand()              {}
func (*Rollback) isCommand()            {}
func (*RemoveDestination) isCommand()   {}
func (*Subscription) isCommand()        {}
func (*ProducerAudit) isCommand()       {}
func (*AckMessageFileMap) isCommand()   {}
func (*UpdateMessage) isCommand()       {}
func (*AddScheduledJob) isCommand()     {}
func (*RescheduleJob) isCommand()       {}
func (*RemoveScheduledJob) isCommand()  {}
func (*RemoveScheduledJobs) isCommand() {}
func (*DestroyScheduler) isCommand()    {}
func (*RewrittenDataFile) isCommand()   {}
