package storetest

import (
	"fmt"
	"math"

	"wharf/engine"
	"wharf/engine/message"
)

// Operation constructors.

func add(d message.Destination, seq uint64, m *message.Message, subs ...engine.SubKey) engine.StoreOp {
	return engine.StoreOp{Kind: engine.OpAdd, Dest: d, Seq: seq, Msg: m, Subs: subs}
}

func remove(d message.Destination, seq uint64) engine.StoreOp {
	return engine.StoreOp{Kind: engine.OpRemove, Dest: d, Seq: seq}
}

func ack(d message.Destination, seq uint64, k engine.SubKey) engine.StoreOp {
	return engine.StoreOp{Kind: engine.OpAck, Dest: d, Seq: seq, Sub: engine.DurableSub{Key: k}}
}

func addSub(s engine.DurableSub) engine.StoreOp {
	return engine.StoreOp{Kind: engine.OpAddSub, Dest: s.Destination, Sub: s}
}

func removeSub(s engine.DurableSub) engine.StoreOp {
	return engine.StoreOp{Kind: engine.OpRemoveSub, Dest: s.Destination, Sub: engine.DurableSub{Key: s.Key}}
}

func update(d message.Destination, seq uint64, count int32) engine.StoreOp {
	return engine.StoreOp{Kind: engine.OpUpdate, Dest: d, Seq: seq, Count: count}
}

func removeDest(d message.Destination) engine.StoreOp {
	return engine.StoreOp{Kind: engine.OpRemoveDest, Dest: d}
}

func addDest(d message.Destination) engine.StoreOp {
	return engine.StoreOp{Kind: engine.OpAddDest, Dest: d}
}

func addJob(j engine.Job) engine.StoreOp {
	return engine.StoreOp{Kind: engine.OpAddJob, Job: &j}
}

func removeJob(id string) engine.StoreOp {
	return engine.StoreOp{Kind: engine.OpRemoveJob, JobID: id}
}

// scheduledJob is a job numbered n on d, every field set.
func scheduledJob(d message.Destination, n int) engine.Job {
	m := fullMessage(d, 100+n)
	m.BodyType, m.Body = message.TextBody, []byte(fmt.Sprintf("scheduled %d", n))
	m.Props = append(m.Props,
		message.Property{Name: "AMQ_SCHEDULED_DELAY", Value: message.LongValue(5000)},
		message.Property{Name: "AMQ_SCHEDULED_CRON", Value: message.StringValue("*/5 * * * *")})
	return engine.Job{
		ID:     fmt.Sprintf("ID:storetest-1234-1:1:1:%d", 1000+n),
		Msg:    m,
		Cron:   "*/5 * * * *",
		Delay:  5000,
		Period: 250,
		Repeat: int32(n),
		Start:  1_700_000_000_000 + int64(n),
		Next:   1_700_000_005_000 + int64(n),
	}
}

func durable(clientID, name string, topic message.Destination) engine.DurableSub {
	return engine.DurableSub{Key: engine.SubKey{ClientID: clientID, Name: name}, Destination: topic}
}

// everyKind holds one value of every Kind, with awkward contents: negative
// numbers, non-ASCII text, a zero byte.
func everyKind() []message.Value {
	return []message.Value{
		{}, // Null
		message.BoolValue(true),
		message.ByteValue(-7),
		message.ShortValue(-300),
		message.IntValue(1 << 20),
		message.LongValue(-1 << 40),
		message.FloatValue(3.5),
		message.DoubleValue(math.Pi),
		message.StringValue("héllo ✓"),
		message.BytesValue([]byte{0, 1, 2, 0xff}),
		message.CharValue('Ж'),
	}
}

func everyKindProps(prefix string) message.Properties {
	var ps message.Properties
	for _, v := range everyKind() {
		ps = append(ps, message.Property{Name: prefix + v.Kind.String(), Value: v})
	}
	return ps
}

// fullMessage has every header set and one property of every kind.
func fullMessage(d message.Destination, n int) *message.Message {
	return &message.Message{
		ID:                  fmt.Sprintf("ID:storetest-1234-1:1:1:%d", n),
		Destination:         d,
		ReplyTo:             message.TopicDest("replies.here"),
		CorrelationID:       fmt.Sprintf("corr-%d", n),
		Type:                "storetest.Type",
		Priority:            7,
		Persistent:          true,
		Timestamp:           1_700_000_000_000 + int64(n),
		Expiration:          4_000_000_000_000,
		UserID:              "alice",
		GroupID:             "group-a",
		GroupSeq:            int32(n),
		OriginalDestination: message.QueueDest("original.queue"),
		Props:               everyKindProps("p_"),
	}
}

// bodyMessages returns one full message of every body kind.
func bodyMessages(d message.Destination) []*message.Message {
	var ms []*message.Message
	for i, bt := range []message.BodyType{message.TextBody, message.BytesBody, message.MapBody, message.StreamBody, message.ObjectBody, message.NoBody} {
		m := fullMessage(d, i+1)
		m.BodyType = bt
		switch bt {
		case message.TextBody:
			m.Body = []byte("hello, wharf ✓")
		case message.BytesBody:
			m.Body = []byte{0, 1, 2, 0xfe, 0xff, 0}
		case message.MapBody:
			m.Map = everyKindProps("m_")
		case message.StreamBody:
			m.List = everyKind()
		case message.ObjectBody:
			// A Java serialization stream header and a short payload.
			m.Body = []byte{0xac, 0xed, 0x00, 0x05, 0x74, 0x00, 0x02, 'h', 'i'}
		}
		ms = append(ms, m)
	}
	return ms
}

// textMessage is a small persistent text message numbered n.
func textMessage(d message.Destination, n int) *message.Message {
	return &message.Message{
		ID:          fmt.Sprintf("ID:storetest-1234-1:1:1:%d", n),
		Destination: d,
		Priority:    message.DefaultPriority,
		Persistent:  true,
		Timestamp:   1_700_000_000_000 + int64(n),
		BodyType:    message.TextBody,
		Body:        []byte(fmt.Sprintf("message %d", n)),
	}
}
