package kahadb

import (
	"slices"
	"strconv"
	"strings"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb/command"
)

// Delivery marks (engine.OpDelivered): the highest sequence each durable
// subscription was handed on each topic, so that after a crash the
// messages it had been handed and not acknowledged come back flagged
// redelivered (MQTT's DUP). One KahaTraceCommand record at the end of a
// batch holds the batch's marks; ActiveMQ's replay ignores it, as it
// ignores the sequence trace. The checkpoint index holds every mark, so a
// mark needs no journal file kept for it.
//
// DEVIATION: ActiveMQ has no such record. Marks do not keep journal files:
// a start without a usable index (lost, or checkpoints off) after cleanup
// removed the files holding the last marks does without them, and those
// messages come back without the flag, as they would from ActiveMQ. A mark
// is kept while its subscription and topic are (one per pair).

// deliveredPrefix starts the trace record of a batch's marks: then one
// line per mark, "<clientId> <name> <destination type> <destination> <seq>"
// with the three strings Go-quoted (exact for any bytes).
const deliveredPrefix = "wharf:delivered:"

type markKey struct {
	sub  engine.SubKey
	dest message.Destination
}

// noteMark records op's mark; in a batch being written, for its trace
// record. Called by encode.
func (ss *shardStore) noteMark(op *engine.StoreOp) {
	k := markKey{op.Sub.Key, op.Dest}
	if seq, ok := ss.marks[k]; ok && seq >= op.Seq {
		return
	}
	ss.marks[k] = op.Seq
	if !ss.replaying {
		ss.batchMarks = append(ss.batchMarks, k)
	}
}

// dropMarks forgets the marks for which drop is true (a subscription or
// a topic removed).
func (ss *shardStore) dropMarks(drop func(markKey) bool) {
	for k := range ss.marks {
		if drop(k) {
			delete(ss.marks, k)
		}
	}
}

// addMarksRecord adds the trace record of the marks the batch raised (as
// they stand at its end) to the batch's records.
func (ss *shardStore) addMarksRecord() {
	if len(ss.batchMarks) == 0 {
		return
	}
	var b strings.Builder
	b.WriteString(deliveredPrefix)
	seen := make(map[markKey]bool, len(ss.batchMarks))
	n := 0
	for _, k := range ss.batchMarks {
		seq, ok := ss.marks[k]
		if !ok || seen[k] {
			continue // removed later in the batch, or written already
		}
		seen[k] = true
		if n > 0 {
			b.WriteByte('\n')
		}
		n++
		b.WriteString(strconv.Quote(k.sub.ClientID))
		b.WriteByte(' ')
		b.WriteString(strconv.Quote(k.sub.Name))
		b.WriteByte(' ')
		b.WriteString(strconv.Itoa(int(k.dest.Type)))
		b.WriteByte(' ')
		b.WriteString(strconv.Quote(k.dest.Name))
		b.WriteByte(' ')
		b.WriteString(strconv.FormatUint(seq, 10))
	}
	clear(ss.batchMarks)
	ss.batchMarks = ss.batchMarks[:0]
	if n > 0 {
		ss.add(command.Encode(nil, &command.Trace{Message: b.String()}), nil)
	}
}

// decodeMarks parses a marks trace record into OpDelivered operations.
func decodeMarks(s string) ([]engine.StoreOp, error) {
	var ops []engine.StoreOp
	for _, line := range strings.Split(strings.TrimPrefix(s, deliveredPrefix), "\n") {
		p := markParser{rest: line}
		client, name := p.quoted(), p.quoted()
		typ := p.uint()
		dest := p.quoted()
		seq := p.uint()
		if p.bad || p.rest != "" || typ > uint64(message.TempTopic) || !message.DestType(typ).IsTopic() {
			return nil, errBadMark
		}
		ops = append(ops, engine.StoreOp{Kind: engine.OpDelivered, Seq: seq,
			Dest: message.Destination{Type: message.DestType(typ), Name: dest},
			Sub:  engine.DurableSub{Key: engine.SubKey{ClientID: client, Name: name}}})
	}
	return ops, nil
}

// markParser reads the space-separated fields of one mark; the first
// error sticks.
type markParser struct {
	rest string
	bad  bool
}

func (p *markParser) field() string {
	f, rest, _ := strings.Cut(p.rest, " ")
	p.rest = rest
	return f
}

func (p *markParser) quoted() string {
	q, err := strconv.QuotedPrefix(p.rest)
	if err != nil {
		p.bad = true
		return ""
	}
	s, err := strconv.Unquote(q)
	if err != nil {
		p.bad = true
	}
	p.rest = strings.TrimPrefix(p.rest[len(q):], " ")
	return s
}

func (p *markParser) uint() uint64 {
	n, err := strconv.ParseUint(p.field(), 10, 64)
	if err != nil {
		p.bad = true
	}
	return n
}

// snapshotMarks copies the marks out for the checkpoint index, in a
// stable order.
func (ss *shardStore) snapshotMarks() []indexMark {
	out := make([]indexMark, 0, len(ss.marks))
	for k, seq := range ss.marks {
		out = append(out, indexMark{k, seq})
	}
	slices.SortFunc(out, func(a, b indexMark) int {
		return strings.Compare(a.k.sub.String()+"\x00"+a.k.dest.String(), b.k.sub.String()+"\x00"+b.k.dest.String())
	})
	return out
}

type indexMark struct {
	k   markKey
	seq uint64
}
