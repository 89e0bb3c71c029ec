package kahadb_test

import (
	"fmt"
	"slices"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
)

// A durable subscription whose name holds a colon — every MQTT persistent
// session's ("AT_LEAST_ONCE:topic"), and any STOMP activemq.subscriptionName
// or JMS name with one — keeps its acknowledgements, its removal and its
// prepared acks across a crash. Found by a kill test of a paho persistent
// session: the replay split the journal's "clientId:name" key at its last
// colon, matched no subscription, and dropped every ack written since the
// last checkpoint, so the whole history came back. The delivery marks
// (which messages were handed out, for MQTT's DUP) survive the crash too.
func TestKahaDBCrashKeepsAcksOfSubNameWithColon(t *testing.T) {
	topic := message.TopicDest("sensors.t1")
	mqtt := engine.DurableSub{Key: engine.SubKey{ClientID: "paho-1", Name: "AT_LEAST_ONCE:sensors/t1"}, Destination: topic}
	stomp := engine.DurableSub{Key: engine.SubKey{ClientID: "ID:host-1:2", Name: "app:audit"}, Destination: topic}
	gone := engine.DurableSub{Key: engine.SubKey{ClientID: "paho-2", Name: "EXACTLY_ONCE:sensors/t1"}, Destination: topic}
	keys := []engine.SubKey{mqtt.Key, stomp.Key, gone.Key}
	for _, full := range []bool{false, true} {
		name := "index+tail"
		if full {
			name = "full replay"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			o := kahadb.Options{}
			if full {
				o.CheckpointInterval = -1
			}
			c := openCP(t, dir, o)
			c.apply(t, engine.StoreOp{Kind: engine.OpAddSub, Dest: topic, Sub: mqtt},
				engine.StoreOp{Kind: engine.OpAddSub, Dest: topic, Sub: stomp},
				engine.StoreOp{Kind: engine.OpAddSub, Dest: topic, Sub: gone})
			for i := 1; i <= 10; i++ {
				c.apply(t, engine.StoreOp{Kind: engine.OpAdd, Dest: topic, Seq: uint64(i), Msg: cpMsg(topic, i), Subs: keys})
			}
			mark := func(k engine.SubKey, seq uint64) engine.StoreOp {
				return engine.StoreOp{Kind: engine.OpDelivered, Dest: topic, Seq: seq, Sub: engine.DurableSub{Key: k}}
			}
			c.apply(t, mark(stomp.Key, 5))
			if !full {
				kahadb.CheckpointForTest(c.ss, false) // the tail below is what a crash replays
			}
			c.apply(t, mark(mqtt.Key, 7), mark(mqtt.Key, 8))
			for i := 1; i <= 6; i++ {
				c.apply(t, engine.StoreOp{Kind: engine.OpAck, Dest: topic, Seq: uint64(i), Sub: mqtt})
			}
			for i := 1; i <= 3; i++ {
				c.apply(t, engine.StoreOp{Kind: engine.OpAck, Dest: topic, Seq: uint64(i), Sub: stomp})
			}
			c.apply(t, engine.StoreOp{Kind: engine.OpRemoveSub, Dest: topic, Sub: engine.DurableSub{Key: gone.Key}})
			x := engine.XID{FormatID: 1, GlobalID: []byte("colon")}
			c.apply(t, engine.StoreOp{Kind: engine.OpPrepare, Tx: &engine.PreparedTx{XID: x,
				Acks: []engine.TxAck{{Dest: topic, Seq: 7, Sub: mqtt.Key}}}})
			want := c.state(t)
			crashed := crashCopy(t, dir)
			c.close(t)

			c = openCP(t, crashed, o)
			defer c.close(t)
			sameState(t, "after a crash", c.state(t), want)
			// The state prints keys as "clientId:name", which hides where
			// the split fell: the prepared ack must name the very key.
			// The delivery marks: stomp's (in the index) covers 4 and 5,
			// mqtt's (in the tail) 7 and 8.
			var got []string
			c.ss.Recover(func(it engine.RecoveredItem) error {
				if it.Tx != nil && (len(it.Tx.Acks) != 1 || it.Tx.Acks[0].Sub != mqtt.Key) {
					t.Errorf("prepared acks %+v, want one of %#v", it.Tx.Acks, mqtt.Key)
				}
				for _, k := range it.Delivered {
					got = append(got, fmt.Sprintf("%d:%s", it.Seq, k.ClientID))
				}
				return nil
			})
			slices.Sort(got)
			if want := []string{"4:ID:host-1:2", "5:ID:host-1:2", "7:paho-1", "8:paho-1"}; !slices.Equal(got, want) {
				t.Errorf("recovered as delivered %q, want %q", got, want)
			}
		})
	}
}
