package command

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// h decodes space-separated hex; s is a literal string's bytes. cat joins them.
func h(x string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(x, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func s(x string) []byte { return []byte(x) }

func boolPtr(v bool) *bool { return &v }

func seq(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// subInfo is the OpenWire SubscriptionInfo of kahadb.md §10.
var subInfo = cat(h("00 00 00 27 37 01 00 04"), s("cid1"), h("01 65 01 00 06"), s("TEST.T"),
	h("00 01 00 04"), s("sub1"), h("01 65 01 00 06"), s("TEST.T"), h("00"))

// goldenCase is one row of the codec's golden table: raw is a whole journal
// payload; cmd is what it decodes to (nil when err is set). decodeOnly marks
// inputs that are valid but are not what Encode writes for cmd.
type goldenCase struct {
	name       string
	raw        []byte
	cmd        Command
	err        error
	decodeOnly bool
}

// goldenTable is hand-computed from journal-data.proto; the rows marked
// "kahadb.md §10" are records of a real ActiveMQ 5.17.2 store.
func goldenTable() []goldenCase {
	localTx := &TransactionInfo{LocalTransactionID: &LocalTransactionID{ConnectionID: "c:1", TransactionID: 5}}
	localTxBytes := cat(h("0a 09 0a 07 0a 03"), s("c:1"), h("08 05")) // transaction_info field 1
	xaTx := TransactionInfo{XATransactionID: &XATransactionID{FormatID: 42,
		BranchQualifier: h("b1 b2"), GlobalTransactionID: h("c1 c2 c3")}}
	xaTxBody := h("12 0b 08 2a 12 02 b1 b2 1a 03 c1 c2 c3")
	addQueue := AddMessage{Destination: Destination{Queue, "Q"}, MessageID: "ID:a:1:1:1",
		Message: h("01 02"), Priority: 4}
	addQueueBody := cat(h("12 05 08 00 12 01"), s("Q"), h("1a 0a"), s("ID:a:1:1:1"), h("22 02 01 02 28 04 30 00"))
	return []goldenCase{
		{
			name: "trace LOADED (kahadb.md §10)",
			raw:  cat(h("00 25 0a 23"), s("LOADED Sun Nov 29 12:22:49 UTC 2026")),
			cmd:  &Trace{Message: "LOADED Sun Nov 29 12:22:49 UTC 2026"},
		},
		{name: "trace sync marker has no field", raw: h("00 00"), cmd: &Trace{}},
		{
			name: "add to queue without transaction writes priority and prioritySupported",
			raw:  cat(h("01 1b"), addQueueBody),
			cmd:  &addQueue,
		},
		{
			name: "add to topic in local transaction",
			raw:  cat(h("01 1b"), localTxBytes, h("12 05 08 01 12 01"), s("T"), h("1a 01"), s("m"), h("22 00 28 09 30 01")),
			cmd: &AddMessage{Transaction: localTx, Destination: Destination{Topic, "T"}, MessageID: "m",
				Message: []byte{}, Priority: 9, PrioritySupported: true},
		},
		{
			name: "add in XA transaction with negative priority sign-extends to ten bytes",
			raw: cat(h("01 29 0a 0d"), xaTxBody, h("12 05 08 02 12 01"), s("X"), h("1a 01"), s("m"),
				h("22 01 ff 28 ff ff ff ff ff ff ff ff ff 01 30 00")),
			cmd: &AddMessage{Transaction: &xaTx, Destination: Destination{TempQueue, "X"}, MessageID: "m",
				Message: h("ff"), Priority: -1},
		},
		{
			name:       "add without priority decodes to the proto default 4",
			raw:        cat(h("01 0c 12 05 08 00 12 01"), s("Q"), h("1a 01"), s("m"), h("22 00")),
			cmd:        &AddMessage{Destination: Destination{Queue, "Q"}, MessageID: "m", Message: []byte{}, Priority: 4},
			decodeOnly: true,
		},
		{
			name: "remove from queue with ack",
			raw:  cat(h("02 0d 12 05 08 00 12 01"), s("Q"), h("1a 01"), s("m"), h("22 01 aa")),
			cmd:  &RemoveMessage{Destination: Destination{Queue, "Q"}, MessageID: "m", Ack: h("aa")},
		},
		{
			name: "remove for durable sub with unmatched (empty) ack",
			raw:  cat(h("02 11 12 05 08 01 12 01"), s("T"), h("1a 01"), s("m"), h("22 00 2a 03"), s("c:s")),
			cmd: &RemoveMessage{Destination: Destination{Topic, "T"}, MessageID: "m", Ack: []byte{},
				SubscriptionKey: "c:s"},
		},
		{
			name: "remove without ack omits field 4",
			raw:  cat(h("02 0a 12 05 08 00 12 01"), s("Q"), h("1a 01"), s("m")),
			cmd:  &RemoveMessage{Destination: Destination{Queue, "Q"}, MessageID: "m"},
		},
		{
			name: "prepare XA",
			raw:  cat(h("03 0f 0a 0d"), xaTxBody),
			cmd:  &Prepare{Transaction: xaTx},
		},
		{
			name: "commit local tx 1 (kahadb.md §10)",
			raw:  cat(h("04 25 0a 23 0a 21 0a 1d"), s("ID:vm-43033-1795954969663-2:1"), h("08 01")),
			cmd: &Commit{Transaction: TransactionInfo{LocalTransactionID: &LocalTransactionID{
				ConnectionID: "ID:vm-43033-1795954969663-2:1", TransactionID: 1}}},
		},
		{
			name: "rollback local",
			raw:  cat(h("05 0b"), localTxBytes),
			cmd:  &Rollback{Transaction: *localTx},
		},
		{
			name: "commit with previous_entry",
			raw:  cat(h("04 11 0a 0f 0a 07 0a 03"), s("c:1"), h("08 05 1a 04 08 02 10 07")),
			cmd: &Commit{Transaction: TransactionInfo{LocalTransactionID: localTx.LocalTransactionID,
				PreviousEntry: &Location{LogID: 2, Offset: 7}}},
		},
		{
			name: "remove destination",
			raw:  cat(h("06 07 0a 05 08 01 12 01"), s("T")),
			cmd:  &RemoveDestination{Destination: Destination{Topic, "T"}},
		},
		{
			name: "add durable subscription (kahadb.md §10)",
			raw:  cat(h("07 46 0a 0a 08 01 12 06"), s("TEST.T"), h("12 09"), s("cid1:sub1"), h("18 00 22 2b"), subInfo),
			cmd: &Subscription{Destination: Destination{Topic, "TEST.T"}, SubscriptionKey: "cid1:sub1",
				SubscriptionInfo: subInfo},
		},
		{
			name: "delete durable subscription has neither retroactive nor info",
			raw:  cat(h("07 0e 0a 05 08 01 12 01"), s("T"), h("12 05"), s("c:sub")),
			cmd:  &Subscription{Destination: Destination{Topic, "T"}, SubscriptionKey: "c:sub"},
		},
		{
			name: "producer audit",
			raw:  h("08 04 0a 02 ac ed"),
			cmd:  &ProducerAudit{Audit: h("ac ed")},
		},
		{
			name: "ack message file map",
			raw:  h("09 03 0a 01 00"),
			cmd:  &AckMessageFileMap{AckMessageFileMap: h("00")},
		},
		{
			name: "update message nests an AddMessage",
			raw:  cat(h("0a 1d 0a 1b"), addQueueBody),
			cmd:  &UpdateMessage{Message: addQueue},
		},
		{
			name: "add scheduled job",
			raw:  cat(h("0b 15 0a 01"), s("s"), h("12 01"), s("j"), h("18 01 22 00 28 02 30 03 38 04 42 01 01 48 05")),
			cmd: &AddScheduledJob{Scheduler: "s", JobID: "j", StartTime: 1, Delay: 2, Period: 3, Repeat: 4,
				Payload: h("01"), NextExecutionTime: 5},
		},
		{
			name: "reschedule job",
			raw:  cat(h("0c 0e 0a 01"), s("s"), h("12 01"), s("j"), h("18 e8 07 20 d0 0f 28 01")),
			cmd: &RescheduleJob{Scheduler: "s", JobID: "j", ExecutionTime: 1000, NextExecutionTime: 2000,
				RescheduledCount: 1},
		},
		{
			name: "remove scheduled job",
			raw:  cat(h("0d 08 0a 01"), s("s"), h("12 01"), s("j"), h("18 05")),
			cmd:  &RemoveScheduledJob{Scheduler: "s", JobID: "j", NextExecutionTime: 5},
		},
		{
			name: "remove scheduled jobs",
			raw:  cat(h("0e 07 0a 01"), s("s"), h("10 01 18 02")),
			cmd:  &RemoveScheduledJobs{Scheduler: "s", StartTime: 1, EndTime: 2},
		},
		{
			name: "destroy scheduler",
			raw:  cat(h("0f 03 0a 01"), s("s")),
			cmd:  &DestroyScheduler{Scheduler: "s"},
		},
		{
			name: "rewritten data file as ActiveMQ writes it (skip flag absent)",
			raw:  h("10 04 08 03 10 01"),
			cmd:  &RewrittenDataFile{SourceDataFileID: 3, RewriteType: 1},
		},
		{
			name: "rewritten data file with skipIfSourceExists false",
			raw:  h("10 06 08 03 10 01 18 00"),
			cmd:  &RewrittenDataFile{SourceDataFileID: 3, RewriteType: 1, SkipIfSourceExists: boolPtr(false)},
		},

		// Decoding leniency that protobuf requires.
		{
			name: "unknown fields of every wire type are skipped",
			raw: cat(h("00 16 10 05 19 01 02 03 04 05 06 07 08 25 01 02 03 04 2a 01"), s("x"),
				h("0a 01"), s("a")),
			cmd:        &Trace{Message: "a"},
			decodeOnly: true,
		},
		{
			name:       "known field number with another wire type is skipped as unknown",
			raw:        cat(h("00 05 08 07 0a 01"), s("a")),
			cmd:        &Trace{Message: "a"},
			decodeOnly: true,
		},
		{
			name:       "repeated nested message is merged",
			raw:        cat(h("07 0f 0a 05 08 01 12 01"), s("A"), h("0a 03 12 01"), s("B"), h("12 01"), s("k")),
			cmd:        &Subscription{Destination: Destination{Topic, "B"}, SubscriptionKey: "k"},
			decodeOnly: true,
		},
		{
			name:       "bool is true for any non-zero low 32 bits",
			raw:        cat(h("07 0c 0a 05 08 01 12 01"), s("T"), h("12 01"), s("k"), h("18 02")),
			cmd:        &Subscription{Destination: Destination{Topic, "T"}, SubscriptionKey: "k", Retroactive: true},
			decodeOnly: true,
		},
		{
			name:       "destination type defaults to QUEUE",
			raw:        cat(h("06 05 0a 03 12 01"), s("Q")),
			cmd:        &RemoveDestination{Destination: Destination{Queue, "Q"}},
			decodeOnly: true,
		},

		// Rejected input.
		{name: "empty payload", raw: nil, err: ErrTruncated},
		{name: "entry type 17 is unknown", raw: h("11 00"), err: ErrUnknownEntryType},
		{name: "entry type 255 is unknown", raw: h("ff 00"), err: ErrUnknownEntryType},
		{name: "missing frame length", raw: h("00"), err: ErrTruncated},
		{name: "frame length overruns payload", raw: h("00 05 0a"), err: ErrTruncated},
		{name: "bytes after the message", raw: h("00 00 00"), err: ErrTrailingBytes},
		{name: "field length overruns message", raw: h("00 02 0a 05"), err: ErrTruncated},
		{name: "truncated fixed64", raw: h("00 03 19 01 02"), err: ErrTruncated},
		{name: "truncated fixed32", raw: h("00 03 1d 01 02"), err: ErrTruncated},
		{name: "truncated varint", raw: h("00 02 10 80"), err: ErrTruncated},
		{name: "varint overflowing 64 bits", raw: h("00 0b 10 ff ff ff ff ff ff ff ff ff 02"), err: ErrMalformedVarint},
		{name: "varint longer than ten bytes", raw: h("00 0c 10 ff ff ff ff ff ff ff ff ff 81 00"), err: ErrMalformedVarint},
		{name: "field number 0", raw: h("00 02 00 00"), err: ErrInvalidKey},
		{name: "group wire type", raw: h("00 01 0b"), err: ErrInvalidKey},
		{name: "wire type 7", raw: h("00 01 0f"), err: ErrInvalidKey},
		{name: "add without destination", raw: cat(h("01 05 1a 01"), s("m"), h("22 00")), err: ErrMissingField},
		{name: "add without message", raw: cat(h("01 0a 12 05 08 00 12 01"), s("Q"), h("1a 01"), s("m")), err: ErrMissingField},
		{name: "add without messageId", raw: cat(h("01 09 12 05 08 00 12 01"), s("Q"), h("22 00")), err: ErrMissingField},
		{name: "destination without name", raw: h("06 04 0a 02 08 00"), err: ErrMissingField},
		{name: "destination type 4", raw: cat(h("06 07 0a 05 08 04 12 01"), s("T")), err: ErrInvalidDestinationType},
		{name: "destination type -1", raw: cat(h("06 10 0a 0e 08 ff ff ff ff ff ff ff ff ff 01 12 01"), s("T")), err: ErrInvalidDestinationType},
		{name: "commit without transaction_info", raw: h("04 00"), err: ErrMissingField},
		{name: "transaction_info without an id", raw: h("04 02 0a 00"), err: ErrMissingField},
		{name: "local transaction id without transaction_id", raw: cat(h("04 07 0a 05 0a 03 0a 01"), s("c")), err: ErrMissingField},
		{name: "local transaction id without connection_id", raw: h("04 06 0a 04 0a 02 08 01"), err: ErrMissingField},
		{name: "XA id without global_transaction_id", raw: h("03 08 0a 06 12 04 08 01 12 00"), err: ErrMissingField},
		{name: "previous_entry without offset", raw: cat(h("04 0f 0a 0d 0a 07 0a 03"), s("c:1"), h("08 05 1a 02 08 02")), err: ErrMissingField},
		{name: "subscription without key", raw: cat(h("07 07 0a 05 08 01 12 01"), s("T")), err: ErrMissingField},
		{name: "producer audit without audit", raw: h("08 00"), err: ErrMissingField},
		{name: "ack file map without map", raw: h("09 00"), err: ErrMissingField},
		{name: "update without message", raw: h("0a 00"), err: ErrMissingField},
		{name: "update with incomplete message", raw: h("0a 02 0a 00"), err: ErrMissingField},
		{name: "scheduled job missing next_execution_time", raw: cat(h("0b 13 0a 01"), s("s"), h("12 01"), s("j"), h("18 01 22 00 28 02 30 03 38 04 42 01 01")), err: ErrMissingField},
		{name: "reschedule missing count", raw: cat(h("0c 0c 0a 01"), s("s"), h("12 01"), s("j"), h("18 e8 07 20 d0 0f")), err: ErrMissingField},
		{name: "remove scheduled jobs missing end", raw: cat(h("0e 05 0a 01"), s("s"), h("10 01")), err: ErrMissingField},
		{name: "destroy scheduler without name", raw: h("0f 00"), err: ErrMissingField},
		{name: "rewritten data file without source", raw: h("10 02 10 01"), err: ErrMissingField},
	}
}

func TestKahaDBCommandGolden(t *testing.T) {
	for _, tc := range goldenTable() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(tc.raw)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Decode(% x) error = %v, want %v", tc.raw, err, tc.err)
				}
				if got != nil {
					t.Fatalf("Decode(% x) = %#v with error, want nil", tc.raw, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode(% x): %v", tc.raw, err)
			}
			if !reflect.DeepEqual(got, tc.cmd) {
				t.Fatalf("Decode(% x)\n got %#v\nwant %#v", tc.raw, got, tc.cmd)
			}
			if got.Type() != EntryType(tc.raw[0]) {
				t.Errorf("Type() = %v, want %v", got.Type(), EntryType(tc.raw[0]))
			}
			if tc.decodeOnly {
				return
			}
			if enc := Encode(nil, tc.cmd); !bytes.Equal(enc, tc.raw) {
				t.Fatalf("Encode(%#v)\n got % x\nwant % x", tc.cmd, enc, tc.raw)
			}
		})
	}
}

// roundTripCommands has one or more values of every command type, with the
// edge values of each field kind.
func roundTripCommands() []Command {
	local := &TransactionInfo{LocalTransactionID: &LocalTransactionID{ConnectionID: "ID:c-1", TransactionID: -1}}
	xa := &TransactionInfo{XATransactionID: &XATransactionID{FormatID: -7, BranchQualifier: []byte{},
		GlobalTransactionID: seq(300)}, PreviousEntry: &Location{LogID: 1 << 30, Offset: -1}}
	big := seq(70000) // three-byte length varints at two nesting levels
	add := AddMessage{Transaction: xa, Destination: Destination{TempTopic, "ID:tmp-τ"}, MessageID: "ID:x:1:1:1:1",
		Message: big, Priority: 9, PrioritySupported: true}
	return []Command{
		&Trace{}, &Trace{Message: "LOADED"},
		&AddMessage{Destination: Destination{Queue, ""}, Message: []byte{}},
		&AddMessage{Transaction: local, Destination: Destination{Topic, "T"}, MessageID: "m", Message: h("00"),
			Priority: -2147483648},
		&add,
		&RemoveMessage{Destination: Destination{Queue, "Q"}, MessageID: "m"},
		&RemoveMessage{Transaction: xa, Destination: Destination{Topic, "T"}, MessageID: "m", Ack: big,
			SubscriptionKey: "cid:sub"},
		&Prepare{Transaction: *xa}, &Commit{Transaction: *local}, &Rollback{Transaction: TransactionInfo{
			LocalTransactionID: local.LocalTransactionID, XATransactionID: xa.XATransactionID}},
		&RemoveDestination{Destination: Destination{TempQueue, "ID:tmp"}},
		&Subscription{Destination: Destination{Topic, "T"}, SubscriptionKey: "a:b", Retroactive: true},
		&Subscription{Destination: Destination{Topic, "T"}, SubscriptionKey: "a:b", SubscriptionInfo: []byte{}},
		&ProducerAudit{Audit: []byte{}}, &AckMessageFileMap{AckMessageFileMap: big},
		&UpdateMessage{Message: add},
		&AddScheduledJob{Scheduler: "JMS", JobID: "j", StartTime: -1, CronEntry: "* * * * *", Delay: 1 << 62,
			Period: -1 << 63, Repeat: -1, Payload: []byte{}, NextExecutionTime: 1<<63 - 1},
		&RescheduleJob{Scheduler: "JMS", JobID: "j", ExecutionTime: 1, NextExecutionTime: 2, RescheduledCount: 3},
		&RemoveScheduledJob{Scheduler: "JMS", JobID: "j", NextExecutionTime: 4},
		&RemoveScheduledJobs{Scheduler: "JMS", StartTime: 5, EndTime: 6},
		&DestroyScheduler{},
		&RewrittenDataFile{SourceDataFileID: -1, RewriteType: 2147483647, SkipIfSourceExists: boolPtr(true)},
	}
}

func TestKahaDBCommandRoundTrip(t *testing.T) {
	for _, c := range roundTripCommands() {
		t.Run(c.Type().String(), func(t *testing.T) {
			prefix := []byte("prefix")
			enc := Encode(prefix, c)
			if !bytes.HasPrefix(enc, []byte("prefix")) {
				t.Fatalf("Encode did not append to dst")
			}
			payload := enc[len(prefix):]
			got, err := Decode(payload)
			if err != nil {
				t.Fatalf("Decode(Encode(%#v)): %v", c, err)
			}
			if !reflect.DeepEqual(got, c) {
				t.Fatalf("round trip\n got %#v\nwant %#v", got, c)
			}
			if again := Encode(nil, got); !bytes.Equal(again, payload) {
				t.Fatalf("re-encode differs\n got % x\nwant % x", again, payload)
			}
		})
	}
}

func TestKahaDBCommandEveryEntryTypeCovered(t *testing.T) {
	seen := map[EntryType]bool{}
	for _, c := range roundTripCommands() {
		seen[c.Type()] = true
	}
	for et := KahaTraceCommand; et <= KahaRewrittenDataFileCommand; et++ {
		if !seen[et] {
			t.Errorf("no round-trip case for %v", et)
		}
	}
}

func TestKahaDBCommandEveryTruncationFails(t *testing.T) {
	for _, c := range roundTripCommands() {
		payload := Encode(nil, c)
		for n := 0; n < len(payload); n++ {
			if _, err := Decode(payload[:n]); err == nil {
				t.Fatalf("%v: Decode of %d of %d bytes succeeded", c.Type(), n, len(payload))
			}
		}
	}
}

func TestKahaDBCommandDecodeAliasesPayload(t *testing.T) {
	payload := Encode(nil, &ProducerAudit{Audit: h("01 02 03")})
	c, err := Decode(payload)
	if err != nil {
		t.Fatal(err)
	}
	audit := c.(*ProducerAudit).Audit
	if &audit[0] != &payload[len(payload)-3] {
		t.Errorf("Audit does not alias the payload")
	}
	if cap(audit) != len(audit) {
		t.Errorf("cap(Audit) = %d, want %d so that appends cannot overwrite the payload", cap(audit), len(audit))
	}
}

func TestKahaDBCommandStrings(t *testing.T) {
	check := func(got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	check(KahaAddMessageCommand.String(), "KahaAddMessageCommand")
	check(KahaRewrittenDataFileCommand.String(), "KahaRewrittenDataFileCommand")
	check(EntryType(17).String(), "KahaEntryType(17)")
	check(TempTopic.String(), "TEMP_TOPIC")
	check(DestType(9).String(), "DestinationType(9)")
	if !(&RewrittenDataFile{}).Skip() || (&RewrittenDataFile{SkipIfSourceExists: boolPtr(false)}).Skip() {
		t.Errorf("Skip() does not default to true")
	}
}
