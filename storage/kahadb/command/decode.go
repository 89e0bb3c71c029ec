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
		return c, decodeTrace(b, c)
	case KahaAddMessageCommand:
		c := &AddMessage{}
		return c, decodeAddMessage(b, c)
	case KahaRemoveMessageCommand:
		c := &RemoveMessage{}
		return c, decodeRemoveMessage(b, c)
	case KahaPrepareCommand:
		c := &Prepare{}
		return c, decodeTxCommand(b, &c.Transaction)
	case KahaCommitCommand:
		c := &Commit{}
		return c, decodeTxCommand(b, &c.Transaction)
	case KahaRollbackCommand:
		c := &Rollback{}
		return c, decodeTxCommand(b, &c.Transaction)
	case KahaRemoveDestinationCommand:
		c := &RemoveDestination{}
		return c, decodeRemoveDestination(b, c)
	case KahaSubscriptionCommand:
		c := &Subscription{}
		return c, decodeSubscription(b, c)
	case KahaProducerAuditCommand:
		c := &ProducerAudit{}
		return c, decodeSingleBytes(b, &c.Audit, "audit")
	case KahaAckMessageFileMapCommand:
		c := &AckMessageFileMap{}
		return c, decodeSingleBytes(b, &c.AckMessageFileMap, "ackMessageFileMap")
	case KahaUpdateMessageCommand:
		c := &UpdateMessage{}
		return c, decodeUpdateMessage(b, c)
	case KahaAddScheduledJobCommand:
		c := &AddScheduledJob{}
		return c, decodeAddScheduledJob(b, c)
	case KahaRescheduleJobCommand:
		c := &RescheduleJob{}
		return c, decodeRescheduleJob(b, c)
	case KahaRemoveScheduledJobCommand:
		c := &RemoveScheduledJob{}
		return c, decodeRemoveScheduledJob(b, c)
	case KahaRemoveScheduledJobsCommand:
		c := &RemoveScheduledJobs{}
		return c, decodeRemoveScheduledJobs(b, c)
	case KahaDestroySchedulerCommand:
		c := &DestroyScheduler{}
		return c, decodeDestroyScheduler(b, c)
	case KahaRewrittenDataFileCommand:
		c := &RewrittenDataFile{}
		return c, decodeRewrittenDataFile(b, c)
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

func decodeDestination(b []byte, d *Destination) error {
	var hasName bool
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		switch {
		case f.is(1, wireVarint):
			t := DestType(f.int32())
			if t < Queue || t > TempTopic {
				return fmt.Errorf("%w %d", ErrInvalidDestinationType, t)
			}
			d.Type = t
		case f.is(2, wireBytes):
			d.Name = string(f.b)
			hasName = true
		}
	}
	if !hasName {
		return missing("name")
	}
	return nil
}

func decodeLocation(b []byte, l *Location) error {
	var seen uint8
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		switch {
		case f.is(1, wireVarint):
			l.LogID, seen = f.int32(), seen|1
		case f.is(2, wireVarint):
			l.Offset, seen = f.int32(), seen|2
		}
	}
	switch {
	case seen&1 == 0:
		return missing("log_id")
	case seen&2 == 0:
		return missing("offset")
	}
	return nil
}

func decodeLocalTx(b []byte, t *LocalTransactionID) error {
	var seen uint8
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		switch {
		case f.is(1, wireBytes): // connection_id = 1, key 0x0A
			t.ConnectionID, seen = string(f.b), seen|1
		case f.is(1, wireVarint): // transaction_id = 1, key 0x08
			t.TransactionID, seen = f.int64(), seen|2
		}
	}
	switch {
	case seen&1 == 0:
		return missing("connection_id")
	case seen&2 == 0:
		return missing("transaction_id")
	}
	return nil
}

func decodeXATx(b []byte, t *XATransactionID) error {
	var seen uint8
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		switch {
		case f.is(1, wireVarint):
			t.FormatID, seen = f.int32(), seen|1
		case f.is(2, wireBytes):
			t.BranchQualifier, seen = f.bytes(), seen|2
		case f.is(3, wireBytes):
			t.GlobalTransactionID, seen = f.bytes(), seen|4
		}
	}
	switch {
	case seen&1 == 0:
		return missing("format_id")
	case seen&2 == 0:
		return missing("branch_qualifier")
	case seen&4 == 0:
		return missing("global_transaction_id")
	}
	return nil
}

func decodeTxInfo(b []byte, t *TransactionInfo) error {
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		switch {
		case f.is(1, wireBytes):
			if t.LocalTransactionID == nil {
				t.LocalTransactionID = &LocalTransactionID{}
			}
			if err := decodeLocalTx(f.b, t.LocalTransactionID); err != nil {
				return fmt.Errorf("local_transaction_id: %w", err)
			}
		case f.is(2, wireBytes):
			if t.XATransactionID == nil {
				t.XATransactionID = &XATransactionID{}
			}
			if err := decodeXATx(f.b, t.XATransactionID); err != nil {
				return fmt.Errorf("xa_transaction_id: %w", err)
			}
		case f.is(3, wireBytes):
			if t.PreviousEntry == nil {
				t.PreviousEntry = &Location{}
			}
			if err := decodeLocation(f.b, t.PreviousEntry); err != nil {
				return fmt.Errorf("previous_entry: %w", err)
			}
		}
	}
	// TransactionIdConversion.convert reads the XA id when there is no local
	// one; a transaction_info with neither cannot be replayed.
	if t.LocalTransactionID == nil && t.XATransactionID == nil {
		return missing("local_transaction_id or xa_transaction_id")
	}
	return nil
}

// --- commands -------------------------------------------------------------

func decodeTrace(b []byte, c *Trace) error {
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		if f.is(1, wireBytes) {
			c.Message = string(f.b)
		}
	}
	return nil
}

func decodeAddMessage(b []byte, c *AddMessage) error {
	c.Priority = 4 // [default = 4]
	var seen uint8
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		switch {
		case f.is(1, wireBytes):
			if c.Transaction == nil {
				c.Transaction = &TransactionInfo{}
			}
			if err := decodeTxInfo(f.b, c.Transaction); err != nil {
				return fmt.Errorf("transaction_info: %w", err)
			}
		case f.is(2, wireBytes):
			if err := decodeDestination(f.b, &c.Destination); err != nil {
				return fmt.Errorf("destination: %w", err)
			}
			seen |= 1
		case f.is(3, wireBytes):
			c.MessageID, seen = string(f.b), seen|2
		case f.is(4, wireBytes):
			c.Message, seen = f.bytes(), seen|4
		case f.is(5, wireVarint):
			c.Priority = f.int32()
		case f.is(6, wireVarint):
			c.PrioritySupported = f.bool()
		}
	}
	switch {
	case seen&1 == 0:
		return missing("destination")
	case seen&2 == 0:
		return missing("messageId")
	case seen&4 == 0:
		return missing("message")
	}
	return nil
}

func decodeRemoveMessage(b []byte, c *RemoveMessage) error {
	var seen uint8
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		switch {
		case f.is(1, wireBytes):
			if c.Transaction == nil {
				c.Transaction = &TransactionInfo{}
			}
			if err := decodeTxInfo(f.b, c.Transaction); err != nil {
				return fmt.Errorf("transaction_info: %w", err)
			}
		case f.is(2, wireBytes):
			if err := decodeDestination(f.b, &c.Destination); err != nil {
				return fmt.Errorf("destination: %w", err)
			}
			seen |= 1
		case f.is(3, wireBytes):
			c.MessageID, seen = string(f.b), seen|2
		case f.is(4, wireBytes):
			c.Ack = f.bytes()
		case f.is(5, wireBytes):
			c.SubscriptionKey = string(f.b)
		}
	}
	switch {
	case seen&1 == 0:
		return missing("destination")
	case seen&2 == 0:
		return missing("messageId")
	}
	return nil
}

func decodeTxCommand(b []byte, t *TransactionInfo) error {
	var seen bool
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		if f.is(1, wireBytes) {
			if err := decodeTxInfo(f.b, t); err != nil {
				return fmt.Errorf("transaction_info: %w", err)
			}
			seen = true
		}
	}
	if !seen {
		return missing("transaction_info")
	}
	return nil
}

func decodeRemoveDestination(b []byte, c *RemoveDestination) error {
	var seen bool
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		if f.is(1, wireBytes) {
			if err := decodeDestination(f.b, &c.Destination); err != nil {
				return fmt.Errorf("destination: %w", err)
			}
			seen = true
		}
	}
	if !seen {
		return missing("destination")
	}
	return nil
}

func decodeSubscription(b []byte, c *Subscription) error {
	var seen uint8
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		switch {
		case f.is(1, wireBytes):
			if err := decodeDestination(f.b, &c.Destination); err != nil {
				return fmt.Errorf("destination: %w", err)
			}
			seen |= 1
		case f.is(2, wireBytes):
			c.SubscriptionKey, seen = string(f.b), seen|2
		case f.is(3, wireVarint):
			c.Retroactive = f.bool()
		case f.is(4, wireBytes):
			c.SubscriptionInfo = f.bytes()
		}
	}
	switch {
	case seen&1 == 0:
		return missing("destination")
	case seen&2 == 0:
		return missing("subscriptionKey")
	}
	return nil
}

// decodeSingleBytes decodes a message whose only field is a required bytes
// field number 1 (KahaProducerAuditCommand, KahaAckMessageFileMapCommand).
func decodeSingleBytes(b []byte, dst *[]byte, name string) error {
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		if f.is(1, wireBytes) {
			*dst = f.bytes()
		}
	}
	if *dst == nil {
		return missing(name)
	}
	return nil
}

func decodeUpdateMessage(b []byte, c *UpdateMessage) error {
	var seen bool
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		if f.is(1, wireBytes) {
			if err := decodeAddMessage(f.b, &c.Message); err != nil {
				return fmt.Errorf("message: %w", err)
			}
			seen = true
		}
	}
	if !seen {
		return missing("message")
	}
	return nil
}

func decodeAddScheduledJob(b []byte, c *AddScheduledJob) error {
	var seen uint16
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		switch {
		case f.is(1, wireBytes):
			c.Scheduler, seen = string(f.b), seen|1<<1
		case f.is(2, wireBytes):
			c.JobID, seen = string(f.b), seen|1<<2
		case f.is(3, wireVarint):
			c.StartTime, seen = f.int64(), seen|1<<3
		case f.is(4, wireBytes):
			c.CronEntry, seen = string(f.b), seen|1<<4
		case f.is(5, wireVarint):
			c.Delay, seen = f.int64(), seen|1<<5
		case f.is(6, wireVarint):
			c.Period, seen = f.int64(), seen|1<<6
		case f.is(7, wireVarint):
			c.Repeat, seen = f.int32(), seen|1<<7
		case f.is(8, wireBytes):
			c.Payload, seen = f.bytes(), seen|1<<8
		case f.is(9, wireVarint):
			c.NextExecutionTime, seen = f.int64(), seen|1<<9
		}
	}
	return checkSeen(seen, "scheduler", "job_id", "start_time", "cron_entry",
		"delay", "period", "repeat", "payload", "next_execution_time")
}

func decodeRescheduleJob(b []byte, c *RescheduleJob) error {
	var seen uint16
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		switch {
		case f.is(1, wireBytes):
			c.Scheduler, seen = string(f.b), seen|1<<1
		case f.is(2, wireBytes):
			c.JobID, seen = string(f.b), seen|1<<2
		case f.is(3, wireVarint):
			c.ExecutionTime, seen = f.int64(), seen|1<<3
		case f.is(4, wireVarint):
			c.NextExecutionTime, seen = f.int64(), seen|1<<4
		case f.is(5, wireVarint):
			c.RescheduledCount, seen = f.int32(), seen|1<<5
		}
	}
	return checkSeen(seen, "scheduler", "job_id", "execution_time",
		"next_execution_time", "rescheduled_count")
}

func decodeRemoveScheduledJob(b []byte, c *RemoveScheduledJob) error {
	var seen uint16
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		switch {
		case f.is(1, wireBytes):
			c.Scheduler, seen = string(f.b), seen|1<<1
		case f.is(2, wireBytes):
			c.JobID, seen = string(f.b), seen|1<<2
		case f.is(3, wireVarint):
			c.NextExecutionTime, seen = f.int64(), seen|1<<3
		}
	}
	return checkSeen(seen, "scheduler", "job_id", "next_execution_time")
}

func decodeRemoveScheduledJobs(b []byte, c *RemoveScheduledJobs) error {
	var seen uint16
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		switch {
		case f.is(1, wireBytes):
			c.Scheduler, seen = string(f.b), seen|1<<1
		case f.is(2, wireVarint):
			c.StartTime, seen = f.int64(), seen|1<<2
		case f.is(3, wireVarint):
			c.EndTime, seen = f.int64(), seen|1<<3
		}
	}
	return checkSeen(seen, "scheduler", "start_time", "end_time")
}

func decodeDestroyScheduler(b []byte, c *DestroyScheduler) error {
	var seen uint16
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		if f.is(1, wireBytes) {
			c.Scheduler, seen = string(f.b), seen|1<<1
		}
	}
	return checkSeen(seen, "scheduler")
}

func decodeRewrittenDataFile(b []byte, c *RewrittenDataFile) error {
	var seen bool
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		switch {
		case f.is(1, wireVarint):
			c.SourceDataFileID, seen = f.int32(), true
		case f.is(2, wireVarint):
			c.RewriteType = f.int32()
		case f.is(3, wireVarint):
			v := f.bool()
			c.SkipIfSourceExists = &v
		}
	}
	if !seen {
		return missing("sourceDataFileId")
	}
	return nil
}

// checkSeen reports the first of names (field numbers 1, 2, ...) whose bit
// (1 << number) is not set in seen.
func checkSeen(seen uint16, names ...string) error {
	for i, name := range names {
		if seen&(1<<(i+1)) == 0 {
			return missing(name)
		}
	}
	return nil
}
