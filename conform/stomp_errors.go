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
	neighbour, _ := ConnectRaw(t, addr, "1.2")
	for _, tc := range cases {
		t.Run(tc.name, func(t *T) {
			var c *RawConn
			if tc.raw == "" {
				// The heart-beat header is checked at CONNECT.
				c = DialRaw(t, addr)
				c.Send("CONNECT", []string{"accept-version:1.2", "host:" + t.STOMPHost(), "heart-beat:x,1"}, nil)
			} else {
				c, _ = ConnectRaw(t, addr, "1.2")
				c.Write([]byte(tc.raw))
			}
			f := c.Expect("ERROR")
			t.Logf("ERROR message: %q", f.Must(t, "message"))
			if msg := f.Must(t, "message"); tc.msg != "" && !strings.HasPrefix(msg, tc.msg) {
				t.Fatalf("ERROR message: got %q, want it to start with %q", msg, tc.msg)
			}
			c.ExpectClosed(wait)
			neighbour.MustSync()
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
	c, _ := ConnectRaw(t, addr, "1.2")
	c.Write([]byte("SEND\ndestination:" + q + "\nnocolonhere\nreceipt:r1\n\nhello\x00"))
	if t.ActiveMQBehaviour() {
		c.ExpectReceipt("r1")
		c.Subscribe("s", q)
		m := c.ExpectMessage("hello")
		if v, ok := m.Get("nocolonhere"); !ok || v != "" {
			t.Fatalf("header without colon: got %q (present %v), want an empty property", v, ok)
		}
		return
	}
	c.Expect("ERROR")
	c.ExpectClosed(wait)
}

// Non-fatal errors (ActiveMQ ProtocolException(fatal=false), or a broker
// exception answered to a frame): ERROR with the frame's receipt as
// receipt-id, and the connection stays usable.
func stompNonFatalErrors(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")

	t.Run("SEND before CONNECT", func(t *T) {
		c := DialRaw(t, addr)
		c.Send("SEND", []string{"destination:" + q, "receipt:r1"}, []byte("early"))
		c.ExpectError("Not connected.", "r1")
		f := c.Request("CONNECT", []string{"accept-version:1.2", "host:" + t.STOMPHost()}, nil)
		if f.Command != "CONNECTED" {
			t.Fatalf("CONNECT after the error: got %s, want CONNECTED", f)
		}
		c.version = "1.2"
		c.MustSync()
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
	c, _ := ConnectRaw(t, addr, "1.2", "client-id:"+clientID)
	for i, tc := range cases {
		t.Run(tc.name, func(t *T) {
			r := "r" + strconv.Itoa(i)
			c.Send(tc.cmd, append(tc.headers, "receipt:"+r), []byte("body"))
			f := c.ExpectError(tc.msg, r)
			t.Logf("ERROR message: %q", f.Must(t, "message"))
			c.MustSync()
		})
	}

	// The durable subscription texts are ActiveMQ's exactly
	// (TopicRegion.addConsumer and removeSubscription): client scripts
	// match on them.
	exactError := func(t *T, f *RawFrame, want string) {
		t.Helper()
		if msg := f.Must(t, "message"); msg != want {
			t.Fatalf("ERROR message: got %q, want %q", msg, want)
		}
	}
	tp := topic(t, "")
	t.Run("durable subscription already in use", func(t *T) {
		c.Subscribe("d1", tp, "activemq.subscriptionName:dur")
		c.Send("SUBSCRIBE", []string{"id:d2", "destination:" + tp, "activemq.subscriptionName:dur", "receipt:r-dup"}, nil)
		exactError(t, c.ExpectError("", "r-dup"), "Durable consumer is in use for client: "+clientID+" and subscriptionName: dur")
		c.MustSync()
		// The first subscription still works.
		c.SendMsg(tp, "still here")
		c.ExpectMessage("still here")
	})

	// UNSUBSCRIBE with activemq.subscriptionName destroys the durable
	// subscription only when no subscriber is attached to it; the
	// attached one carries on.
	t.Run("UNSUBSCRIBE of a durable subscription in use", func(t *T) {
		c.Send("UNSUBSCRIBE", []string{"id:d1", "activemq.subscriptionName:dur", "receipt:r-unsub"}, nil)
		exactError(t, c.ExpectError("", "r-unsub"), "Durable consumer is in use")
		c.MustSync()
		c.SendMsg(tp, "kept")
		c.ExpectMessage("kept")
	})

	t.Run("UNSUBSCRIBE of an unknown durable subscription", func(t *T) {
		c.Send("UNSUBSCRIBE", []string{"id:d1", "activemq.subscriptionName:nope", "receipt:r-unknown"}, nil)
		exactError(t, c.ExpectError("", "r-unknown"), "No durable subscription exists for clientID: "+clientID+" and subscriptionName: nope")
		c.MustSync()
	})

	t.Run("connection still delivers", func(t *T) {
		c.Subscribe("after", q)
		c.SendMsg(q, "works")
		c.ExpectMessage("works")
	})
}

// A frame over wireFormat.maxFrameSize is fatal.
func stompFrameTooLarge(t *T) {
	addr := t.Addr(STOMPSmall)
	neighbour, _ := ConnectRaw(t, addr, "1.2")
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
			c, _ := ConnectRaw(t, addr, "1.2")
			// Below the limit is fine.
			c.SendMsg(queue(t, ""), strings.Repeat("y", smallFrameSize/2))
			c.Send("SEND", append([]string{"destination:" + queue(t, "")}, tc.headers...), []byte(big))
			t.Logf("ERROR message: %q", c.Expect("ERROR").Must(t, "message"))
			// ActiveMQ's reader goes on parsing the rest of the oversized
			// body as frames while the close is under way, and may answer
			// each with another ERROR; Wharf closes after the first.
			c.SkipErrors()
			c.ExpectClosed(wait)
			neighbour.MustSync()
		})
	}
}
