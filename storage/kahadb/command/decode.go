package command

import "fmt"

// Decode parses one journal payload (the bytes after a USER_RECORD header):
// the KahaEntryType byte, the varint message length and the message, which
// must end exactly at the end of payload. It returns one of this package's
// pointer types. []byte fields of the result alias payload.
//
// Unknown fields are skipped by wire type, as protobuf parsers do, but every
// required field must be present (except KahaTraceCommand.message, which
// ActiveMQ itself omits, and KahaDestination.type, which defaults to QUEUE).
// Errors wrap the sentinels of errors.go; Decode never panics.
func Decode(payload []byte) (Command, error) {
	if len(payload) == 0 {
		return nil, ErrTruncated
	}
	t := EntryType(payload[0])
	if int(t) >= len(entryTypeNames) {
		return nil, fmt.Errorf("%w %d", ErrUnknownEntryType, payload[0])
	}
	n, rest, err := readVarint(payload[1:])
	if err != nil {
		return nil, fmt.Errorf("%s: frame length: %w", t, err)
	}
	if n > uint64(len(rest)) {
		return nil, fmt.Errorf("%s: frame length %d exceeds %d remaining bytes: %w", t, n, len(rest), ErrTruncated)
	}
	if n < uint64(len(rest)) {
		return nil, fmt.Errorf("%s: %d bytes after a %d-byte message: %w", t, uint64(len(rest))-n, n, ErrTrailingBytes)
	}
	c, err := decodeBody(t, rest)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t, err)
	}
	return c, nil
}

func decodeBody(t EntryType, b []byte) (Command, error) {
	switch t {
	case KahaTraceCommand:
		c := &Trace{}
		return c, traceFields.decode(b, c)
	case KahaAddMessageCommand:
		c := &AddMessage{}
		return c, addMessageFields.decode(b, c)
	case KahaRemoveMessageCommand:
		c := &RemoveMessage{}
		return c, removeMessageFields.decode(b, c)
	case KahaPrepareCommand:
		c := &Prepare{}
		return c, txCommandFields.decode(b, &c.Transaction)
	case KahaCommitCommand:
		c := &Commit{}
		return c, txCommandFields.decode(b, &c.Transaction)
	case KahaRollbackCommand:
		c := &Rollback{}
		return c, txCommandFields.decode(b, &c.Transaction)
	case KahaRemoveDestinationCommand:
		c := &RemoveDestination{}
		return c, removeDestinationFields.decode(b, c)
	case KahaSubscriptionCommand:
		c := &Subscription{}
		return c, subscriptionFields.decode(b, c)
	case KahaProducerAuditCommand:
		c := &ProducerAudit{}
		return c, producerAuditFields.decode(b, c)
	case KahaAckMessageFileMapCommand:
		c := &AckMessageFileMap{}
		return c, ackMessageFileMapFields.decode(b, c)
	case KahaUpdateMessageCommand:
		c := &UpdateMessage{}
		return c, updateMessageFields.decode(b, c)
	case KahaAddScheduledJobCommand:
		c := &AddScheduledJob{}
		return c, addScheduledJobFields.decode(b, c)
	case KahaRescheduleJobCommand:
		c := &RescheduleJob{}
		return c, rescheduleJobFields.decode(b, c)
	case KahaRemoveScheduledJobCommand:
		c := &RemoveScheduledJob{}
		return c, removeScheduledJobFields.decode(b, c)
	case KahaRemoveScheduledJobsCommand:
		c := &RemoveScheduledJobs{}
		return c, removeScheduledJobsFields.decode(b, c)
	case KahaDestroySchedulerCommand:
		c := &DestroyScheduler{}
		return c, destroySchedulerFields.decode(b, c)
	case KahaRewrittenDataFileCommand:
		c := &RewrittenDataFile{}
		return c, rewrittenDataFileFields.decode(b, c)
	}
	return nil, ErrUnknownEntryType // unreachable: Decode checked the range
}

// --- primitives -----------------------------------------------------------

// readVarint reads a base-128 varint of at most 10 bytes whose value fits in
// 64 bits.
func readVarint(b []byte) (uint64, []byte, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		if i >= len(b) {
			return 0, nil, ErrTruncated
		}
		c := b[i]
		if i == 9 && c > 1 {
			return 0, nil, ErrMalformedVarint
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, b[i+1:], nil
		}
	}
	return 0, nil, ErrMalformedVarint
}

// field is one decoded key and value. For wireVarint, wireFixed32 and
// wireFixed64 the value is in v; for wireBytes it is in b.
type field struct {
	num int
	typ int
	v   uint64
	b   []byte
}

func (f *field) is(num, typ int) bool { return f.num == num && f.typ == typ }

// nextField consumes one field, known or not, and returns it and the rest.
// Length-delimited values are bounds-checked before they are sliced.
func nextField(b []byte) (field, []byte, error) {
	k, b, err := readVarint(b)
	if err != nil {
		return field{}, nil, fmt.Errorf("field key: %w", err)
	}
	f := field{typ: int(k & 7)}
	if k>>3 == 0 || k>>3 > 1<<29-1 {
		return f, nil, fmt.Errorf("%w 0x%x", ErrInvalidKey, k)
	}
	f.num = int(k >> 3)
	switch f.typ {
	case wireVarint:
		f.v, b, err = readVarint(b)
		if err != nil {
			return f, nil, fmt.Errorf("field %d: %w", f.num, err)
		}
	case wireFixed64:
		if len(b) < 8 {
			return f, nil, fmt.Errorf("field %d: %w", f.num, ErrTruncated)
		}
		for i := 7; i >= 0; i-- {
			f.v = f.v<<8 | uint64(b[i])
		}
		b = b[8:]
	case wireFixed32:
		if len(b) < 4 {
			return f, nil, fmt.Errorf("field %d: %w", f.num, ErrTruncated)
		}
		f.v = uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24
		b = b[4:]
	case wireBytes:
		var n uint64
		n, b, err = readVarint(b)
		if err != nil {
			return f, nil, fmt.Errorf("field %d length: %w", f.num, err)
		}
		if n > uint64(len(b)) {
			return f, nil, fmt.Errorf("field %d length %d exceeds %d remaining bytes: %w", f.num, n, len(b), ErrTruncated)
		}
		f.b = b[:n:n]
		b = b[n:]
	default:
		// Groups (3, 4) and wire types 6, 7: not used by journal-data.proto.
		return f, nil, fmt.Errorf("%w 0x%x (wire type %d)", ErrInvalidKey, k, f.typ)
	}
	return f, b, nil
}

// int32 and enum fields keep the low 32 bits of the varint, as
// CodedInputStream.readRawVarint32 does; bool is "low 32 bits non-zero".
func (f *field) int32() int32 { return int32(uint32(f.v)) }
func (f *field) int64() int64 { return int64(f.v) }
func (f *field) bool() bool   { return uint32(f.v) != 0 }

// bytes returns the value as a non-nil slice, so that a present but empty
// field stays distinguishable from an absent one.
func (f *field) bytes() []byte {
	if f.b == nil {
		return []byte{}
	}
	return f.b
}

func missing(name string) error { return fmt.Errorf("%w %s", ErrMissingField, name) }

// --- nested messages ------------------------------------------------------

var destinationFields = fieldTable[Destination]{fields: []fieldDecoder[Destination]{
	funcField(1, wireVarint, "type", optional, func(d *Destination, f field) error {
		t := DestType(f.int32())
		if t < Queue || t > TempTopic {
			return fmt.Errorf("%w %d", ErrInvalidDestinationType, t)
		}
		d.Type = t
		return nil
	}),
	stringField(2, "name", required, func(d *Destination) *string { return &d.Name }),
}}

var locationFields = fieldTable[Location]{fields: []fieldDecoder[Location]{
	int32Field(1, "log_id", required, func(l *Location) *int32 { return &l.LogID }),
	int32Field(2, "offset", required, func(l *Location) *int32 { return &l.Offset }),
}}

// Both fields are number 1: connection_id is key 0x0A (length-delimited),
// transaction_id key 0x08 (varint).
var localTxFields = fieldTable[LocalTransactionID]{fields: []fieldDecoder[LocalTransactionID]{
	stringField(1, "connection_id", required, func(t *LocalTransactionID) *string { return &t.ConnectionID }),
	int64Field(1, "transaction_id", required, func(t *LocalTransactionID) *int64 { return &t.TransactionID }),
}}

var xaTxFields = fieldTable[XATransactionID]{fields: []fieldDecoder[XATransactionID]{
	int32Field(1, "format_id", required, func(t *XATransactionID) *int32 { return &t.FormatID }),
	bytesField(2, "branch_qualifier", required, func(t *XATransactionID) *[]byte { return &t.BranchQualifier }),
	bytesField(3, "global_transaction_id", required, func(t *XATransactionID) *[]byte { return &t.GlobalTransactionID }),
}}

var txInfoFields = fieldTable[TransactionInfo]{
	fields: []fieldDecoder[TransactionInfo]{
		messageField(1, "local_transaction_id", optional, &localTxFields,
			func(t *TransactionInfo) *LocalTransactionID { return alloc(&t.LocalTransactionID) }),
		messageField(2, "xa_transaction_id", optional, &xaTxFields,
			func(t *TransactionInfo) *XATransactionID { return alloc(&t.XATransactionID) }),
		messageField(3, "previous_entry", optional, &locationFields,
			func(t *TransactionInfo) *Location { return alloc(&t.PreviousEntry) }),
	},
	// TransactionIdConversion.convert reads the XA id when there is no local
	// one; a transaction_info with neither cannot be replayed.
	check: func(t *TransactionInfo) error {
		if t.LocalTransactionID == nil && t.XATransactionID == nil {
			return missing("local_transaction_id or xa_transaction_id")
		}
		return nil
	},
}

// --- commands -------------------------------------------------------------

// KahaTraceCommand.message is required by the proto, but ActiveMQ writes
// an empty Trace as a sync marker.
var traceFields = fieldTable[Trace]{fields: []fieldDecoder[Trace]{
	stringField(1, "message", optional, func(c *Trace) *string { return &c.Message }),
}}

var addMessageFields = fieldTable[AddMessage]{
	defaults: func(c *AddMessage) { c.Priority = 4 }, // [default = 4]
	fields: []fieldDecoder[AddMessage]{
		messageField(1, "transaction_info", optional, &txInfoFields,
			func(c *AddMessage) *TransactionInfo { return alloc(&c.Transaction) }),
		messageField(2, "destination", required, &destinationFields,
			func(c *AddMessage) *Destination { return &c.Destination }),
		stringField(3, "messageId", required, func(c *AddMessage) *string { return &c.MessageID }),
		bytesField(4, "message", required, func(c *AddMessage) *[]byte { return &c.Message }),
		int32Field(5, "priority", optional, func(c *AddMessage) *int32 { return &c.Priority }),
		boolField(6, "prioritySupported", optional, func(c *AddMessage) *bool { return &c.PrioritySupported }),
	},
}

var removeMessageFields = fieldTable[RemoveMessage]{fields: []fieldDecoder[RemoveMessage]{
	messageField(1, "transaction_info", optional, &txInfoFields,
		func(c *RemoveMessage) *TransactionInfo { return alloc(&c.Transaction) }),
	messageField(2, "destination", required, &destinationFields,
		func(c *RemoveMessage) *Destination { return &c.Destination }),
	stringField(3, "messageId", required, func(c *RemoveMessage) *string { return &c.MessageID }),
	bytesField(4, "ack", optional, func(c *RemoveMessage) *[]byte { return &c.Ack }),
	stringField(5, "subscriptionKey", optional, func(c *RemoveMessage) *string { return &c.SubscriptionKey }),
}}

// txCommandFields is KahaPrepareCommand, KahaCommitCommand and
// KahaRollbackCommand: a required transaction_info = 1 and nothing else.
var txCommandFields = fieldTable[TransactionInfo]{fields: []fieldDecoder[TransactionInfo]{
	messageField(1, "transaction_info", required, &txInfoFields,
		func(t *TransactionInfo) *TransactionInfo { return t }),
}}

var removeDestinationFields = fieldTable[RemoveDestination]{fields: []fieldDecoder[RemoveDestination]{
	messageField(1, "destination", required, &destinationFields,
		func(c *RemoveDestination) *Destination { return &c.Destination }),
}}

var subscriptionFields = fieldTable[Subscription]{fields: []fieldDecoder[Subscription]{
	messageField(1, "destination", required, &destinationFields,
		func(c *Subscription) *Destination { return &c.Destination }),
	stringField(2, "subscriptionKey", required, func(c *Subscription) *string { return &c.SubscriptionKey }),
	boolField(3, "retroactive", optional, func(c *Subscription) *bool { return &c.Retroactive }),
	bytesField(4, "subscriptionInfo", optional, func(c *Subscription) *[]byte { return &c.SubscriptionInfo }),
}}

var producerAuditFields = fieldTable[ProducerAudit]{fields: []fieldDecoder[ProducerAudit]{
	bytesField(1, "audit", required, func(c *ProducerAudit) *[]byte { return &c.Audit }),
}}

var ackMessageFileMapFields = fieldTable[AckMessageFileMap]{fields: []fieldDecoder[AckMessageFileMap]{
	bytesField(1, "ackMessageFileMap", required, func(c *AckMessageFileMap) *[]byte { return &c.AckMessageFileMap }),
}}

var updateMessageFields = fieldTable[UpdateMessage]{fields: []fieldDecoder[UpdateMessage]{
	messageField(1, "message", required, &addMessageFields,
		func(c *UpdateMessage) *AddMessage { return &c.Message }),
}}

var addScheduledJobFields = fieldTable[AddScheduledJob]{fields: []fieldDecoder[AddScheduledJob]{
	stringField(1, "scheduler", required, func(c *AddScheduledJob) *string { return &c.Scheduler }),
	stringField(2, "job_id", required, func(c *AddScheduledJob) *string { return &c.JobID }),
	int64Field(3, "start_time", required, func(c *AddScheduledJob) *int64 { return &c.StartTime }),
	stringField(4, "cron_entry", required, func(c *AddScheduledJob) *string { return &c.CronEntry }),
	int64Field(5, "delay", required, func(c *AddScheduledJob) *int64 { return &c.Delay }),
	int64Field(6, "period", required, func(c *AddScheduledJob) *int64 { return &c.Period }),
	int32Field(7, "repeat", required, func(c *AddScheduledJob) *int32 { return &c.Repeat }),
	bytesField(8, "payload", required, func(c *AddScheduledJob) *[]byte { return &c.Payload }),
	int64Field(9, "next_execution_time", required, func(c *AddScheduledJob) *int64 { return &c.NextExecutionTime }),
}}

var rescheduleJobFields = fieldTable[RescheduleJob]{fields: []fieldDecoder[RescheduleJob]{
	stringField(1, "scheduler", required, func(c *RescheduleJob) *string { return &c.Scheduler }),
	stringField(2, "job_id", required, func(c *RescheduleJob) *string { return &c.JobID }),
	int64Field(3, "execution_time", required, func(c *RescheduleJob) *int64 { return &c.ExecutionTime }),
	int64Field(4, "next_execution_time", required, func(c *RescheduleJob) *int64 { return &c.NextExecutionTime }),
	int32Field(5, "rescheduled_count", required, func(c *RescheduleJob) *int32 { return &c.RescheduledCount }),
}}

var removeScheduledJobFields = fieldTable[RemoveScheduledJob]{fields: []fieldDecoder[RemoveScheduledJob]{
	stringField(1, "scheduler", required, func(c *RemoveScheduledJob) *string { return &c.Scheduler }),
	stringField(2, "job_id", required, func(c *RemoveScheduledJob) *string { return &c.JobID }),
	int64Field(3, "next_execution_time", required, func(c *RemoveScheduledJob) *int64 { return &c.NextExecutionTime }),
}}

var removeScheduledJobsFields = fieldTable[RemoveScheduledJobs]{fields: []fieldDecoder[RemoveScheduledJobs]{
	stringField(1, "scheduler", required, func(c *RemoveScheduledJobs) *string { return &c.Scheduler }),
	int64Field(2, "start_time", required, func(c *RemoveScheduledJobs) *int64 { return &c.StartTime }),
	int64Field(3, "end_time", required, func(c *RemoveScheduledJobs) *int64 { return &c.EndTime }),
}}

var destroySchedulerFields = fieldTable[DestroyScheduler]{fields: []fieldDecoder[DestroyScheduler]{
	stringField(1, "scheduler", required, func(c *DestroyScheduler) *string { return &c.Scheduler }),
}}

var rewrittenDataFileFields = fieldTable[RewrittenDataFile]{fields: []fieldDecoder[RewrittenDataFile]{
	int32Field(1, "sourceDataFileId", required, func(c *RewrittenDataFile) *int32 { return &c.SourceDataFileID }),
	int32Field(2, "rewriteType", optional, func(c *RewrittenDataFile) *int32 { return &c.RewriteType }),
	funcField(3, wireVarint, "skipIfSourceExists", optional, func(c *RewrittenDataFile, f field) error {
		v := f.bool()
		c.SkipIfSourceExists = &v // nil means absent: the default, true
		return nil
	}),
}}
