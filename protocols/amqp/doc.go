// Package amqp is Wharf's AMQP 1.0 adapter: what Qpid JMS, Qpid Proton
// and the other AMQP 1.0 clients speak, on the shared engine, mapped as
// ActiveMQ 5.17's activemq-amqp maps it (reference/mappings.md §3).
//
// # Layers
//
// The codec, protocols/amqp/wire, turns bytes into protocol headers, frames,
// performatives and messages and back; it does no I/O and imports only the
// standard library (see its doc.go).
//
// The state machines, from the outside in:
//
//   - conn (conn.go): one connection. Its phase walks header, SASL
//     (PLAIN, ANONYMOUS and, with a client certificate, EXTERNAL),
//     AMQP header, Open, opened, closed. Authentication runs once: at
//     sasl-init, or at Open when wireFormat.allowNonSaslConnections lets a
//     client skip SASL. Open connects the engine connection (engine.Conn);
//     idle-time-out and heartbeats are timers (§2.4.5). A decode error or
//     an illegal frame ends the connection with a Close carrying the
//     condition; the client's Close is answered with one.
//   - session (session.go): one channel's Begin/End (§2.5), the transfer
//     numbering and windows of both directions, multi-frame deliveries being
//     received, deliveries held back by the client's incoming-window, and
//     dispositions from the client.
//   - link (link.go): one attached link (§2.6). A link on which the client
//     sends (receiving, for the broker) goes to a destination, to the
//     anonymous relay (properties.to decides) or to the transaction
//     coordinator (§4.5, Declare and Discharge); the broker grants it
//     transport.producerCredit and tops it up at half. A link on which the
//     client receives is an engine.Subscription (queue, topic, durable
//     topic subscription named by the link name, browser for
//     distribution-mode copy, dynamic temporary node), paced by the
//     client's link credit, with drain.
//
// Conversion (convert.go, convert_in.go, convert_out.go) maps messages
// between AMQP and the engine's JMS-shaped message as ActiveMQ's
// JMSMappingInboundTransformer (ToMessage) and JMSMappingOutboundTransformer
// (FromMessage) do; both are pure. Addresses (address.go) follow
// ActiveMQDestination's "queue://", "topic://" prefixes.
//
// # Goroutines
//
// The transport calls OnData and OnClose from one goroutine at a time.
// conn.mu is held while frames are handled and in OnClose; the connection's
// phase, sessions, links (their receiving-side state), open transactions and
// the decoder are touched only under it. The connect-timeout and idle-check
// timers (protocols/internal/timers, each on its own goroutine) take conn.mu
// before they close anything; the heartbeat timer touches only atomics and
// the transport connection, which is safe from any goroutine.
//
// Shard goroutines call a sending link's Deliver (a wildcard subscription
// from several shards at once), a receiving link's Complete when a message
// the client sent is stored, and settleJoin.Complete when the outcomes of a
// disposition are (the transport goroutine calls it too, for outcomes
// complete at once). These never take conn.mu. Everything they share with
// the transport goroutine (the output buffer, the client's max-frame-size,
// the sessions' outgoing numbering, windows, backlog and unsettled
// deliveries, a sending link's credit, delivery-count, attached flag and
// early deliveries) is under conn.outMu, and every frame is encoded and
// written under it (writeFrame, writeFrameLocked), so frames never
// interleave; the protocol headers and the heartbeat are single Writes of
// their own. The lock order is conn.mu → conn.outMu (LOCKS.md), and
// conn.outMu is never held while calling the engine, so a shard waiting for
// a connection never waits for a connection waiting for that shard.
//
// # Invariants
//
//   - Persist before you promise: an unsettled message from the client is
//     accepted only in Complete, after the engine stored it; the broker
//     settles what it receives at once (rcv-settle-mode first, said in its
//     Attach). For a client in rcv-settle-mode second, the broker's
//     settling disposition goes out only when every outcome of the range is
//     durable (settleJoin); if one failed the connection is closed instead.
//   - No transfer precedes the broker's Attach of its link: deliveries the
//     engine hands over first (a browser starts at once) wait in link.early
//     (§2.6.3).
//   - The client's session incoming-window is honoured: transfers beyond it
//     wait in the session's backlog until a Flow opens it. The broker's own
//     incoming-window is large and refreshed, so that link credit, not the
//     session window, paces producers.
//   - One multi-frame delivery at a time per session, bounded by
//     MaxMessageSize (wireFormat.maxFrameSize) across its frames; an aborted
//     one is dropped (§2.6.14).
//   - The decoder reuses the Transfer and Disposition performatives of
//     one OnData in the next (wire.Decoder.ReuseBodies): what outlives the
//     frame's handling copies them (a multi-frame delivery's first
//     transfer, Transfer.Clone; a settleJoin's range end).
//   - A message from the client aliases the frame's payload (ToMessage
//     shares byte slices with the decoded message), so that payload is not
//     reused once the message is sent to the engine. Deliver encodes into
//     the connection's buffer under conn.outMu and copies only what is held
//     back.
package amqp
