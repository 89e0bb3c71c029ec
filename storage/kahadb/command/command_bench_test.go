package command

import (
	"strings"
	"testing"
)

// benchCommands are the records a broker writes most (a message, its ack,
// a transaction's end) plus the widest one (a scheduled job, nine fields):
// the cost of Encode on the send path and of Decode during replay.
func benchCommands() []Command {
	tx := &TransactionInfo{LocalTransactionID: &LocalTransactionID{ConnectionID: "ID:bench-43033-1795954969663-2:1", TransactionID: 7}}
	dest := Destination{Type: Queue, Name: "orders.incoming"}
	return []Command{
		&AddMessage{Destination: dest, MessageID: "ID:bench-43033-1795954969663-2:1:1:1:42",
			Message: make([]byte, 1024), Priority: 4, PrioritySupported: true},
		&AddMessage{Transaction: tx, Destination: dest, MessageID: "ID:bench-43033-1795954969663-2:1:1:1:43",
			Message: make([]byte, 1024), Priority: 4, PrioritySupported: true},
		&RemoveMessage{Destination: dest, MessageID: "ID:bench-43033-1795954969663-2:1:1:1:42", Ack: make([]byte, 120)},
		&Commit{Transaction: *tx},
		&AddScheduledJob{Scheduler: "JMS", JobID: "ID:bench-43033-1795954969663-2:1:1:1:44", StartTime: 1795954969663,
			CronEntry: "* * * * *", Delay: 1000, Period: 60000, Repeat: 10, Payload: make([]byte, 1024),
			NextExecutionTime: 1795954970663},
	}
}

func benchName(c Command) string {
	name := strings.TrimPrefix(strings.TrimSuffix(c.Type().String(), "Command"), "Kaha")
	if a, ok := c.(*AddMessage); ok && a.Transaction != nil {
		name += "InTx"
	}
	return name
}

// benchEach runs loop as one sub-benchmark per benchCommands entry, with
// the command's encoded payload.
func benchEach(b *testing.B, loop func(b *testing.B, c Command, payload []byte)) {
	for _, c := range benchCommands() {
		payload := Encode(nil, c)
		b.Run(benchName(c), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(payload)))
			loop(b, c, payload)
		})
	}
}

func BenchmarkKahaDBCommandDecode(b *testing.B) {
	benchEach(b, func(b *testing.B, _ Command, payload []byte) {
		for b.Loop() {
			if _, err := Decode(payload); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkKahaDBCommandEncode(b *testing.B) {
	benchEach(b, func(b *testing.B, c Command, buf []byte) {
		for b.Loop() {
			buf = Encode(buf[:0], c)
		}
	})
}
