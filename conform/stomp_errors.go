package conform

import (
	"strconv"
	"strings"
)

// Fatal protocol errors (ActiveMQ ProtocolException(fatal=true) and
// StompWireFormat's StompFrameError): ERROR, then the broker closes the
// connection. A neighbour connection carries on.
func stompFatalErrors(t *T) {
	addr := t.Addr(STOMP)
	cases := []struct {
		name string
		raw  string // after a 1.2 CONNECT
		// msg is the start of ActiveMQ's message header (StompWireFormat's
		// words for the decoder's faults).
		msg string
	}{
		{name: "unknown command", raw: "FROB\n\n\x00", msg: "Unknown STOMP action: FROB"},
		{name: "content-length not a number", raw: "SEND\ndestination:/queue/x\ncontent-length:abc\n\nhello\x00", msg: "Specified content-length is not a valid integer"},
		{name: "no NUL after content-length body", raw: "SEND\ndestination:/queue/x\ncontent-length:2\n\nhello\x00", msg: "content-length bytes were read and there was no trailing null byte"},
		{name: "invalid heart-beat header", raw: "", msg: "Invalid heart-beat header"},
	}
	neighbour, _ := connectRaw(t, addr, "1.2")
	for _, tc := range cases {
		t.Run(tc.name, func(t *T) {
			var c *rawConn
			if tc.raw == "" {
				// The heart-beat header is checked at CONNECT.
				c = dialRaw(t, addr)
				c.send("CONNECT", []string{"accept-version:1.2", "host:" + t.STOMPHost(), "heart-beat:x,1"}, nil)
			} else {
				c, _ = connectRaw(t, addr, "1.2")
				c.write([]byte(tc.raw))
			}
			f := c.expect("ERROR")
			t.Logf("ERROR message: %q", f.Must(t, "message"))
			if msg := f.Must(t, "message"); tc.msg != "" && !strings.HasPrefix(msg, tc.msg) {
				t.Fatalf("ERROR message: got %q, want it to start with %q", msg, tc.msg)
			}
			c.expectClosed(wait)
			neighbour.mustSync()
		})
	}
}

// A header line without a colon.
//
// DEVIATION (documented difference): ActiveMQ 5.17's StompWireFormat takes
// the whole line as a header name with an empty value and carries on; Wharf's
// decoder rejects the frame as every STOMP BNF requires the colon
// (protocols/stomp/wire, ErrBadHeaderLine). The case branches on T.ActiveMQBehaviour.
func stompHeaderLineWithoutColon(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	c, _ := connectRaw(t, addr, "1.2")
	c.write([]byte("SEND\ndestination:" + q + "\nnocolonhere\nreceipt:r1\n\nhello\x00"))
	if t.ActiveMQBehaviour() {
		c.expectReceipt("r1")
		c.subscribe("s", q)
		m := c.expectMessage("hello")
		if v, ok := m.Get("nocolonhere"); !ok || v != "" {
			t.Fatalf("header without colon: got %q (present %v), want an empty property", v, ok)
		}
		return
	}
	c.expect("ERROR")
	c.expectClosed(wait)
}

// Non-fatal errors (ActiveMQ ProtocolException(fatal=false), or a broker
// exception answered to a frame): ERROR with the frame's receipt as
// receipt-id, and the connection stays usable.
func stompNonFatalErrors(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")

	t.Run("SEND before CONNECT", func(t *T) {
		c := dialRaw(t, addr)
		c.send("SEND", []string{"destination:" + q, "receipt:r1"}, []byte("early"))
		c.expectError("Not connected.", "r1")
		f := c.request("CONNECT", []string{"accept-version:1.2", "host:" + t.STOMPHost()}, nil)
		if f.Command != "CONNECTED" {
			t.Fatalf("CONNECT after the error: got %s, want CONNECTED", f)
		}
		c.version = "1.2"
		c.mustSync()
	})

	cases := []struct {
		name    string
		cmd     string
		headers []string
		msg     string // start of the message header ("" = any)
	}{
		{"SEND without destination", "SEND", nil, "SEND received without a Destination specified!"},
		{"SEND in an unknown transaction", "SEND", []string{"destination:" + q, "transaction:nope"}, "Invalid transaction id: nope"},
		{"COMMIT of an unknown transaction", "COMMIT", []string{"transaction:nope"}, "Invalid transaction id: nope"},
		{"ABORT of an unknown transaction", "ABORT", []string{"transaction:nope"}, "Invalid transaction id: nope"},
		{"ACK of an unknown id", "ACK", []string{"id:nope"}, "Unexpected ACK received for message-id [null]"},
		{"NACK of an unknown id", "NACK", []string{"id:nope"}, "Unexpected NACK received for message-id [null]"},
		{"SUBSCRIBE without id", "SUBSCRIBE", []string{"destination:" + q}, "SUBSCRIBE received without a subscription id!"},
		{"UNSUBSCRIBE of an unknown id", "UNSUBSCRIBE", []string{"id:nope"}, "No subscription matched."},
		{"bad selector", "SUBSCRIBE", []string{"id:sel", "destination:" + q, "selector:a = = 'b"}, "a = = 'b"}, // InvalidSelectorException: the selector itself
		{"durable subscription on a queue", "SUBSCRIBE", []string{"id:dq", "destination:" + q, "activemq.subscriptionName:d"}, "Invalid Subscription: cannot durably subscribe to a Queue destination!"},
	}
	clientID := t.Uniq()
	c, _ := connectRaw(t, addr, "1.2", "client-id:"+clientID)
	for i, tc := range cases {
		t.Run(tc.name, func(t *T) {
			r := "r" + strconv.Itoa(i)
			c.send(tc.cmd, append(tc.headers, "receipt:"+r), []byte("body"))
			f := c.expectError(tc.msg, r)
			t.Logf("ERROR message: %q", f.Must(t, "message"))
			c.mustSync()
		})
	}

	// The durable subscription texts are ActiveMQ's exactly
	// (TopicRegion.addConsumer and removeSubscription): client scripts
	// match on them.
	exactError := func(t *T, f *rawFrame, want string) {
		t.Helper()
		if msg := f.Must(t, "message"); msg != want {
			t.Fatalf("ERROR message: got %q, want %q", msg, want)
		}
	}
	tp := topic(t, "")
	t.Run("durable subscription already in use", func(t *T) {
		c.subscribe("d1", tp, "activemq.subscriptionName:dur")
		c.send("SUBSCRIBE", []string{"id:d2", "destination:" + tp, "activemq.subscriptionName:dur", "receipt:r-dup"}, nil)
		exactError(t, c.expectError("", "r-dup"), "Durable consumer is in use for client: "+clientID+" and subscriptionName: dur")
		c.mustSync()
		// The first subscription still works.
		c.sendMsg(tp, "still here")
		c.expectMessage("still here")
	})

	// UNSUBSCRIBE with activemq.subscriptionName destroys the durable
	// subscription only when no subscriber is attached to it; the
	// attached one carries on.
	t.Run("UNSUBSCRIBE of a durable subscription in use", func(t *T) {
		c.send("UNSUBSCRIBE", []string{"id:d1", "activemq.subscriptionName:dur", "receipt:r-unsub"}, nil)
		exactError(t, c.expectError("", "r-unsub"), "Durable consumer is in use")
		c.mustSync()
		c.sendMsg(tp, "kept")
		c.expectMessage("kept")
	})

	t.Run("UNSUBSCRIBE of an unknown durable subscription", func(t *T) {
		c.send("UNSUBSCRIBE", []string{"id:d1", "activemq.subscriptionName:nope", "receipt:r-unknown"}, nil)
		exactError(t, c.expectError("", "r-unknown"), "No durable subscription exists for clientID: "+clientID+" and subscriptionName: nope")
		c.mustSync()
	})

	t.Run("connection still delivers", func(t *T) {
		c.subscribe("after", q)
		c.sendMsg(q, "works")
		c.expectMessage("works")
	})
}

// A frame over wireFormat.maxFrameSize is fatal.
func stompFrameTooLarge(t *T) {
	addr := t.Addr(STOMPSmall)
	neighbour, _ := connectRaw(t, addr, "1.2")
	big := strings.Repeat("x", 2*smallFrameSize)
	cases := []struct {
		name    string
		headers []string
	}{
		{"with content-length", []string{"content-length:" + strconv.Itoa(len(big))}},
		{"without content-length", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *T) {
			c, _ := connectRaw(t, addr, "1.2")
			// Below the limit is fine.
			c.sendMsg(queue(t, ""), strings.Repeat("y", smallFrameSize/2))
			c.send("SEND", append([]string{"destination:" + queue(t, "")}, tc.headers...), []byte(big))
			t.Logf("ERROR message: %q", c.expect("ERROR").Must(t, "message"))
			// ActiveMQ's reader goes on parsing the rest of the oversized
			// body as frames while the close is under way, and may answer
			// each with another ERROR; Wharf closes after the first.
			c.skipErrors()
			c.expectClosed(wait)
			neighbour.mustSync()
		})
	}
}
