package conform

import (
	"fmt"
	"strconv"
	"strings"
)

// Producer flow control (broker-behaviour.md §10) on a queue with
// memoryLimit="64 kb" (policy "*.small.>"): a SEND with a receipt is a
// synchronous send, so once the queue is full the broker parks the message
// and withholds the RECEIPT (Queue.send: messagesWaitingForSpace) while the
// connection goes on; other connections are not slowed; when a consumer
// drains the queue the withheld receipts arrive and nothing is lost.
func stompProducerFlowControl(t *T) {
	addr := t.Addr(STOMP)
	small := queue(t, ".small")
	const k = 64 // 64 × 4 KiB: four times the limit
	body := strings.Repeat("x", 4096)

	p, _ := ConnectRaw(t, addr, "1.2")
	for i := 1; i <= k; i++ {
		p.Send("SEND", []string{"destination:" + small, "receipt:s" + strconv.Itoa(i), "n:" + strconv.Itoa(i)}, []byte(body))
	}
	// The same connection still works: a SEND to another queue is answered
	// while the small queue's receipts are withheld.
	p.Send("SEND", []string{"destination:" + queue(t, ""), "receipt:other"}, []byte("elsewhere"))
	in := newInbox(t)
	in.watch(p, "p")
	receipts := map[string]bool{}
	for {
		f := in.Next().f
		if f.Command != "RECEIPT" {
			t.Fatalf("got %s, want RECEIPTs", f)
		}
		id := f.Must(t, "receipt-id")
		if id == "other" {
			break
		}
		receipts[id] = true
	}
	t.Logf("%d of %d receipts before the queue filled", len(receipts), k)
	if len(receipts) == k {
		t.Fatalf("all %d sends to a queue limited to 64 kb were answered at once; want some withheld", k)
	}

	// Another connection is not blocked.
	q, _ := ConnectRaw(t, addr, "1.2")
	q.SendMsg(queue(t, ".other"), "free")

	// A consumer drains the queue: every message arrives once, in order,
	// and the withheld receipts follow.
	c, _ := ConnectRaw(t, addr, "1.2")
	c.Subscribe("drain", small)
	for i := 1; i <= k; i++ {
		f := c.Expect("MESSAGE")
		ExpectHeader(t, f, "n", strconv.Itoa(i))
	}
	for len(receipts) < k {
		f := in.Next().f
		if f.Command != "RECEIPT" {
			t.Fatalf("got %s, want RECEIPTs", f)
		}
		id := f.Must(t, "receipt-id")
		if receipts[id] {
			t.Fatalf("receipt %s twice", id)
		}
		receipts[id] = true
	}
	for i := 1; i <= k; i++ {
		if !receipts[fmt.Sprintf("s%d", i)] {
			t.Fatalf("no receipt for s%d", i)
		}
	}
	c.MustSync()
}
