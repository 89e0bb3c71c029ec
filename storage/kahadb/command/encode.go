package command

import "fmt"

// Wire types of the protobuf encoding (proto2).
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// Encode appends the journal payload of c to dst and returns the extended
// slice: the KahaEntryType byte, the varint length of the message, and the
// message (MessageDatabase.toByteSequence). See the package comment for which
// fields are written. Encode does not validate values; c must be one of this
// package's command types, and a nil or foreign Command is a programming
// error that panics.
func Encode(dst []byte, c Command) []byte {
	dst = append(dst, byte(c.Type()))
	switch c := c.(type) {
	case *Trace:
		dst = appendVarint(dst, uint64(sizeTrace(c)))
		return appendTrace(dst, c)
	case *AddMessage:
		dst = appendVarint(dst, uint64(sizeAddMessage(c)))
		return appendAddMessage(dst, c)
	case *RemoveMessage:
		dst = appendVarint(dst, uint64(sizeRemoveMessage(c)))
		return appendRemoveMessage(dst, c)
	case *Prepare:
		return appendTxCommand(dst, &c.Transaction)
	case *Commit:
		return appendTxCommand(dst, &c.Transaction)
	case *Rollback:
		return appendTxCommand(dst, &c.Transaction)
	case *RemoveDestination:
		n := sizeDestination(&c.Destination)
		dst = appendVarint(dst, uint64(sizeMessageField(n)))
		return appendDestinationField(dst, 1, &c.Destination, n)
	case *Subscription:
		dst = appendVarint(dst, uint64(sizeSubscription(c)))
		return appendSubscription(dst, c)
	case *ProducerAudit:
		dst = appendVarint(dst, uint64(sizeBytesField(len(c.Audit))))
		return appendBytesField(dst, 1, c.Audit)
	case *AckMessageFileMap:
		dst = appendVarint(dst, uint64(sizeBytesField(len(c.AckMessageFileMap))))
		return appendBytesField(dst, 1, c.AckMessageFileMap)
	case *UpdateMessage:
		n := sizeAddMessage(&c.Message)
		dst = appendVarint(dst, uint64(sizeMessageField(n)))
		dst = appendKey(dst, 1, wireBytes)
		dst = appendVarint(dst, uint64(n))
		return appendAddMessage(dst, &c.Message)
	case *AddScheduledJob:
		dst = appendVarint(dst, uint64(sizeAddScheduledJob(c)))
		return appendAddScheduledJob(dst, c)
	case *RescheduleJob:
		dst = appendVarint(dst, uint64(sizeRescheduleJob(c)))
		return appendRescheduleJob(dst, c)
	case *RemoveScheduledJob:
		dst = appendVarint(dst, uint64(sizeRemoveScheduledJob(c)))
		return appendRemoveScheduledJob(dst, c)
	case *RemoveScheduledJobs:
		dst = appendVarint(dst, uint64(sizeRemoveScheduledJobs(c)))
		return appendRemoveScheduledJobs(dst, c)
	case *DestroyScheduler:
		dst = appendVarint(dst, uint64(sizeStringField(c.Scheduler)))
		return appendStringField(dst, 1, c.Scheduler)
	case *RewrittenDataFile:
		dst = appendVarint(dst, uint64(sizeRewrittenDataFile(c)))
		return appendRewrittenDataFile(dst, c)
	}
	panic(fmt.Sprintf("kahadb command: Encode of unsupported command %T", c))
}

// --- primitives -----------------------------------------------------------

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func sizeVarint(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// Every field number in journal-data.proto is below 16, so every key is one
// byte; appendKey still encodes it as a varint.
func appendKey(b []byte, num int, typ int) []byte {
	return appendVarint(b, uint64(num)<<3|uint64(typ))
}

const keySize = 1

// int32 values are sign-extended to 64 bits, so a negative value takes ten
// bytes (CodedOutputStream.writeInt32NoTag).
func appendInt32Field(b []byte, num int, v int32) []byte {
	return appendVarint(appendKey(b, num, wireVarint), uint64(int64(v)))
}

func sizeInt32Field(v int32) int { return keySize + sizeVarint(uint64(int64(v))) }

func appendInt64Field(b []byte, num int, v int64) []byte {
	return appendVarint(appendKey(b, num, wireVarint), uint64(v))
}

func sizeInt64Field(v int64) int { return keySize + sizeVarint(uint64(v)) }

func appendBoolField(b []byte, num int, v bool) []byte {
	b = appendKey(b, num, wireVarint)
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

const boolFieldSize = keySize + 1

func appendBytesField(b []byte, num int, v []byte) []byte {
	b = appendVarint(appendKey(b, num, wireBytes), uint64(len(v)))
	return append(b, v...)
}

func appendStringField(b []byte, num int, v string) []byte {
	b = appendVarint(appendKey(b, num, wireBytes), uint64(len(v)))
	return append(b, v...)
}

func sizeBytesField(n int) int     { return keySize + sizeVarint(uint64(n)) + n }
func sizeStringField(s string) int { return sizeBytesField(len(s)) }

// sizeMessageField is the size of a length-delimited field holding a nested
// message of n bytes.
func sizeMessageField(n int) int { return sizeBytesField(n) }

// --- nested messages ------------------------------------------------------

func sizeDestination(d *Destination) int {
	return sizeInt32Field(int32(d.Type)) + sizeStringField(d.Name)
}

func appendDestinationField(b []byte, num int, d *Destination, n int) []byte {
	b = appendVarint(appendKey(b, num, wireBytes), uint64(n))
	b = appendInt32Field(b, 1, int32(d.Type)) // enum: same encoding as int32
	return appendStringField(b, 2, d.Name)
}

func sizeLocation(l *Location) int {
	return sizeInt32Field(l.LogID) + sizeInt32Field(l.Offset)
}

func sizeLocalTx(t *LocalTransactionID) int {
	return sizeStringField(t.ConnectionID) + sizeInt64Field(t.TransactionID)
}

func sizeXATx(t *XATransactionID) int {
	return sizeInt32Field(t.FormatID) + sizeBytesField(len(t.BranchQualifier)) +
		sizeBytesField(len(t.GlobalTransactionID))
}

func sizeTxInfo(t *TransactionInfo) int {
	n := 0
	if t.LocalTransactionID != nil {
		n += sizeMessageField(sizeLocalTx(t.LocalTransactionID))
	}
	if t.XATransactionID != nil {
		n += sizeMessageField(sizeXATx(t.XATransactionID))
	}
	if t.PreviousEntry != nil {
		n += sizeMessageField(sizeLocation(t.PreviousEntry))
	}
	return n
}

func appendTxInfoField(b []byte, num int, t *TransactionInfo) []byte {
	b = appendVarint(appendKey(b, num, wireBytes), uint64(sizeTxInfo(t)))
	if l := t.LocalTransactionID; l != nil {
		b = appendVarint(appendKey(b, 1, wireBytes), uint64(sizeLocalTx(l)))
		// Both fields are number 1; the wire type tells them apart.
		b = appendStringField(b, 1, l.ConnectionID)
		b = appendInt64Field(b, 1, l.TransactionID)
	}
	if x := t.XATransactionID; x != nil {
		b = appendVarint(appendKey(b, 2, wireBytes), uint64(sizeXATx(x)))
		b = appendInt32Field(b, 1, x.FormatID)
		b = appendBytesField(b, 2, x.BranchQualifier)
		b = appendBytesField(b, 3, x.GlobalTransactionID)
	}
	if p := t.PreviousEntry; p != nil {
		b = appendVarint(appendKey(b, 3, wireBytes), uint64(sizeLocation(p)))
		b = appendInt32Field(b, 1, p.LogID)
		b = appendInt32Field(b, 2, p.Offset)
	}
	return b
}

// appendTxCommand appends length and message of Prepare, Commit or Rollback,
// whose only field is a required transaction_info = 1.
func appendTxCommand(b []byte, t *TransactionInfo) []byte {
	b = appendVarint(b, uint64(sizeMessageField(sizeTxInfo(t))))
	return appendTxInfoField(b, 1, t)
}

// --- commands -------------------------------------------------------------

func sizeTrace(c *Trace) int {
	if c.Message == "" {
		return 0
	}
	return sizeStringField(c.Message)
}

func appendTrace(b []byte, c *Trace) []byte {
	if c.Message == "" {
		return b
	}
	return appendStringField(b, 1, c.Message)
}

func sizeAddMessage(c *AddMessage) int {
	n := 0
	if c.Transaction != nil {
		n += sizeMessageField(sizeTxInfo(c.Transaction))
	}
	n += sizeMessageField(sizeDestination(&c.Destination))
	n += sizeStringField(c.MessageID)
	n += sizeBytesField(len(c.Message))
	n += sizeInt32Field(c.Priority)
	n += boolFieldSize
	return n
}

func appendAddMessage(b []byte, c *AddMessage) []byte {
	if c.Transaction != nil {
		b = appendTxInfoField(b, 1, c.Transaction)
	}
	b = appendDestinationField(b, 2, &c.Destination, sizeDestination(&c.Destination))
	b = appendStringField(b, 3, c.MessageID)
	b = appendBytesField(b, 4, c.Message)
	b = appendInt32Field(b, 5, c.Priority)
	return appendBoolField(b, 6, c.PrioritySupported)
}

func sizeRemoveMessage(c *RemoveMessage) int {
	n := 0
	if c.Transaction != nil {
		n += sizeMessageField(sizeTxInfo(c.Transaction))
	}
	n += sizeMessageField(sizeDestination(&c.Destination))
	n += sizeStringField(c.MessageID)
	if c.Ack != nil {
		n += sizeBytesField(len(c.Ack))
	}
	if c.SubscriptionKey != "" {
		n += sizeStringField(c.SubscriptionKey)
	}
	return n
}

func appendRemoveMessage(b []byte, c *RemoveMessage) []byte {
	if c.Transaction != nil {
		b = appendTxInfoField(b, 1, c.Transaction)
	}
	b = appendDestinationField(b, 2, &c.Destination, sizeDestination(&c.Destination))
	b = appendStringField(b, 3, c.MessageID)
	if c.Ack != nil {
		b = appendBytesField(b, 4, c.Ack)
	}
	if c.SubscriptionKey != "" {
		b = appendStringField(b, 5, c.SubscriptionKey)
	}
	return b
}

func writesRetroactive(c *Subscription) bool { return c.SubscriptionInfo != nil || c.Retroactive }

func sizeSubscription(c *Subscription) int {
	n := sizeMessageField(sizeDestination(&c.Destination)) + sizeStringField(c.SubscriptionKey)
	if writesRetroactive(c) {
		n += boolFieldSize
	}
	if c.SubscriptionInfo != nil {
		n += sizeBytesField(len(c.SubscriptionInfo))
	}
	return n
}

func appendSubscription(b []byte, c *Subscription) []byte {
	b = appendDestinationField(b, 1, &c.Destination, sizeDestination(&c.Destination))
	b = appendStringField(b, 2, c.SubscriptionKey)
	if writesRetroactive(c) {
		b = appendBoolField(b, 3, c.Retroactive)
	}
	if c.SubscriptionInfo != nil {
		b = appendBytesField(b, 4, c.SubscriptionInfo)
	}
	return b
}

func sizeAddScheduledJob(c *AddScheduledJob) int {
	return sizeStringField(c.Scheduler) + sizeStringField(c.JobID) +
		sizeInt64Field(c.StartTime) + sizeStringField(c.CronEntry) +
		sizeInt64Field(c.Delay) + sizeInt64Field(c.Period) +
		sizeInt32Field(c.Repeat) + sizeBytesField(len(c.Payload)) +
		sizeInt64Field(c.NextExecutionTime)
}

func appendAddScheduledJob(b []byte, c *AddScheduledJob) []byte {
	b = appendStringField(b, 1, c.Scheduler)
	b = appendStringField(b, 2, c.JobID)
	b = appendInt64Field(b, 3, c.StartTime)
	b = appendStringField(b, 4, c.CronEntry)
	b = appendInt64Field(b, 5, c.Delay)
	b = appendInt64Field(b, 6, c.Period)
	b = appendInt32Field(b, 7, c.Repeat)
	b = appendBytesField(b, 8, c.Payload)
	return appendInt64Field(b, 9, c.NextExecutionTime)
}

func sizeRescheduleJob(c *RescheduleJob) int {
	return sizeStringField(c.Scheduler) + sizeStringField(c.JobID) +
		sizeInt64Field(c.ExecutionTime) + sizeInt64Field(c.NextExecutionTime) +
		sizeInt32Field(c.RescheduledCount)
}

func appendRescheduleJob(b []byte, c *RescheduleJob) []byte {
	b = appendStringField(b, 1, c.Scheduler)
	b = appendStringField(b, 2, c.JobID)
	b = appendInt64Field(b, 3, c.ExecutionTime)
	b = appendInt64Field(b, 4, c.NextExecutionTime)
	return appendInt32Field(b, 5, c.RescheduledCount)
}

func sizeRemoveScheduledJob(c *RemoveScheduledJob) int {
	return sizeStringField(c.Scheduler) + sizeStringField(c.JobID) + sizeInt64Field(c.NextExecutionTime)
}

func appendRemoveScheduledJob(b []byte, c *RemoveScheduledJob) []byte {
	b = appendStringField(b, 1, c.Scheduler)
	b = appendStringField(b, 2, c.JobID)
	return appendInt64Field(b, 3, c.NextExecutionTime)
}

func sizeRemoveScheduledJobs(c *RemoveScheduledJobs) int {
	return sizeStringField(c.Scheduler) + sizeInt64Field(c.StartTime) + sizeInt64Field(c.EndTime)
}

func appendRemoveScheduledJobs(b []byte, c *RemoveScheduledJobs) []byte {
	b = appendStringField(b, 1, c.Scheduler)
	b = appendInt64Field(b, 2, c.StartTime)
	return appendInt64Field(b, 3, c.EndTime)
}

func sizeRewrittenDataFile(c *RewrittenDataFile) int {
	n := sizeInt32Field(c.SourceDataFileID) + sizeInt32Field(c.RewriteType)
	if c.SkipIfSourceExists != nil {
		n += boolFieldSize
	}
	return n
}

func appendRewrittenDataFile(b []byte, c *RewrittenDataFile) []byte {
	b = appendInt32Field(b, 1, c.SourceDataFileID)
	b = appendInt32Field(b, 2, c.RewriteType)
	if c.SkipIfSourceExists != nil {
		b = appendBoolField(b, 3, *c.SkipIfSourceExists)
	}
	return b
}
