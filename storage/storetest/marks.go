package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

func delivered(d message.Destination, seq uint64, k engine.SubKey) engine.StoreOp {
	return engine.StoreOp{Kind: engine.OpDelivered, Dest: d, Seq: seq, Sub: engine.DurableSub{Key: k}}
}

// deliveredState renders, per recovered topic message, the subscriptions
// recovered as having been handed it: "topic#seq=key,key".
func (h *harness) deliveredState(shard int) string {
	h.t.Helper()
	var out []string
	for _, it := range h.recoverAll(shard) {
		if it.Msg == nil || !it.Dest.Type.IsTopic() {
			continue
		}
		keys := sortedKeys(slices.Clone(it.Delivered))
		for _, k := range keys {
			if !slices.Contains(it.Subs, k) {
				h.t.Errorf("%s seq %d: delivered to %s, which does not hold it (subs %s)", it.Dest, it.Seq, k, keysString(it.Subs))
			}
		}
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = k.String()
		}
		out = append(out, fmt.Sprintf("%s#%d=%s", it.Dest.Name, it.Seq, strings.Join(names, ",")))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// Delivery marks: the highest sequence per subscription and topic, kept
// across restarts, at or below which the messages a subscription still
// holds are recovered as delivered; lower marks, and a removed
// subscription's or topic's marks, change nothing.
func testDeliveredMarks(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 1)
	a, b := durable("c1", "AT_LEAST_ONCE:storetest/news", topicA), durable("c2", "s2", message.TopicDest("storetest.>"))
	h.apply(0, addSub(a), addSub(b))
	for i := 1; i <= 4; i++ {
		h.apply(0, add(topicA, uint64(i), textMessage(topicA, i), a.Key, b.Key), add(topicB, uint64(i), textMessage(topicB, i), b.Key))
	}
	check := func(what, want string) {
		t.Helper()
		if got := h.deliveredState(0); got != want {
			t.Fatalf("%s: delivered\n got %s\nwant %s", what, got, want)
		}
	}
	check("no marks", "storetest.news#1= storetest.news#2= storetest.news#3= storetest.news#4= storetest.sport#1= storetest.sport#2= storetest.sport#3= storetest.sport#4=")

	// Marks in one batch with an ack; a lower mark after a higher one; a
	// mark of a subscription this store has no record of.
	h.apply(0, delivered(topicA, 1, a.Key), delivered(topicA, 2, a.Key), ack(topicA, 1, a.Key),
		delivered(topicB, 3, b.Key), delivered(topicB, 1, b.Key), delivered(topicA, 4, durable("nobody", "x", topicA).Key))
	want := "storetest.news#1= storetest.news#2=c1:AT_LEAST_ONCE:storetest/news storetest.news#3= storetest.news#4= " +
		"storetest.sport#1=c2:s2 storetest.sport#2=c2:s2 storetest.sport#3=c2:s2 storetest.sport#4="
	check("marks", want)
	h.restart()
	check("marks after a restart", want)

	// Removing b drops its marks; adding it again does not bring them back.
	h.apply(0, removeSub(b))
	h.apply(0, addSub(b), add(topicB, 5, textMessage(topicB, 5), b.Key))
	want = "storetest.news#2=c1:AT_LEAST_ONCE:storetest/news storetest.news#3= storetest.news#4= storetest.sport#5="
	check("after the subscription was removed", want)
	h.restart()
	check("after the subscription was removed, restarted", want)

	// Removing the topic drops its marks (and its subscription a).
	h.apply(0, delivered(topicA, 3, a.Key), removeDest(topicA))
	h.apply(0, addSub(a), add(topicA, 10, textMessage(topicA, 10), a.Key))
	want = "storetest.news#10= storetest.sport#5="
	check("after the topic was removed", want)
	h.restart()
	check("after the topic was removed, restarted", want)
}
