// Package client is a minimal OpenWire client for ActiveMQ Classic 5.17
// compatible brokers, built on the codec in protocols/openwire/wire. Tests,
// `wharf bench` and network bridges use it; it is not a JMS implementation,
// but it speaks to the broker the way the 5.17 Java client does
// (shared/reference/openwire.md §3, §8, §10), so that a broker that serves
// it serves the common Java traffic.
//
// # Use
//
//	c, err := client.Dial(ctx, "127.0.0.1:61616", client.DefaultOptions())
//	s, err := c.Session(false)
//	p, err := s.Producer(wire.NewQueue("orders"))
//	err = p.Send(ctx, client.NewTextMessage("hello"), true)
//	k, err := s.Consumer(wire.NewQueue("orders"), client.ConsumerOptions{})
//	m, err := k.Receive(ctx)
//	err = c.Close()
//
// # What goes on the wire
//
//   - Dial: WireFormatInfo both ways (loose, then the negotiated format),
//     ConnectionInfo with ResponseRequired, and it waits for the broker's
//     BrokerInfo. A refused ConnectionInfo is a *BrokerError.
//   - Session, Producer, Consumer, their Close, CreateTempQueue,
//     DeleteTempDestination, Unsubscribe: one command each, sent with
//     ResponseRequired, waited for. (The Java client sends SessionInfo and
//     the RemoveInfo of consumers, producers and sessions without asking
//     for a response; asking costs a round trip and makes the tests
//     deterministic: when Close returns the broker has processed it.)
//   - Send: the message, with ResponseRequired when sync.
//   - Receive: nothing, or a MessagePull for prefetch 0; then the
//     acknowledgement of the mode: STANDARD per message (auto); DELIVERED
//     once half the prefetch is delivered but unacknowledged (client,
//     individual, transacted), which lets ActiveMQ extend the prefetch
//     window. Ack sends STANDARD (range) or INDIVIDUAL. Acks are
//     asynchronous, as in the Java client.
//   - Transacted sessions: TransactionInfo BEGIN (asynchronous) before the
//     first send or consumed message; Commit writes one STANDARD ack per
//     consumer in the transaction, then COMMIT_ONE_PHASE, and waits;
//     Rollback writes ROLLBACK, waits, and redelivers the transaction's
//     messages locally with RedeliveryCounter+1 (ActiveMQ keeps them
//     dispatched to the consumer, so the client must).
//   - Close: RemoveInfo(connection) with the highest
//     LastDeliveredSequenceId, answered by Response, then ShutdownInfo.
//   - Inactivity monitor: a KeepAliveInfo after every idle third of the
//     negotiated MaxInactivityDuration; the connection fails with
//     ErrInactivity when nothing was read for the whole duration; a
//     KeepAliveInfo asking for a response is echoed.
//
// Attach makes a Conn without a socket of its own: the client side of a
// duplex network connection a broker's OpenWire server accepted, which
// writes through the server's encoder and is handed the frames that are
// its (Conn.Inbound); it speaks as ActiveMQ's responder bridge does, its
// set-up one-way (attach.go says why and what is routed).
//
// Not implemented: failover, XA, producer windows (ProducerAck), message
// compression on send (the wire helpers can build compressed bodies),
// client-side expiry checks, redelivery policies and poison acks, the Java
// client's advisory consumer for temporary destinations.
//
// # Ownership and locking
//
// One reader goroutine per connection owns the decoder: it routes
// responses to the waiting caller by CorrelationId (the CommandId of the
// request, taken from one per-connection counter) and dispatches to
// consumers. It never blocks on a caller: each consumer buffers its
// dispatches in a queue the broker bounds by the prefetch (DEVIATION from
// a channel of prefetch capacity: a rollback must put messages back at the
// head, and a reader blocked on a full consumer would also stop the
// responses; the Java client's MessageDispatchChannel is unbounded too).
// A warning is logged once if a broker dispatches beyond the prefetch.
//
// Callers of any goroutine encode frames under Conn.wmu, which also guards
// each transacted session's current transaction id so that BEGIN reaches
// the wire before any frame naming it, into a queue that one flusher
// goroutine per connection writes to the socket: frames queued while a
// write is in the kernel go out in the next one, in order (the Java client
// writes each frame with its own flush; the frames are the same). A caller
// blocks while 256 KiB are queued, so a broker that stops reading still
// stops its producers; Close writes everything queued, ShutdownInfo last,
// before it closes the socket. Conn.mu guards the routing maps;
// Session.mu and Consumer.mu their own state. No two of these locks are
// ever held together. Time is read from the system clock: this is a
// client, not the engine.
package client
