// Package cluster runs a broker's network connectors: store-and-forward
// bridges to other brokers (Wharf or ActiveMQ Classic 5.17), driven by
// consumer demand as ActiveMQ's DemandForwardingBridge is (seed 001).
//
// # What a bridge does
//
// One bridge runs per peer of each <networkConnector uri="static:(...)">,
// one per masterslave:(...) connector (to whichever listed broker accepts,
// the live master), and one per broker a multicast:// connector hears
// advertising on its group (discovery.go, which also advertises this
// broker's connectors that have a discoveryUri).
// It is an OpenWire client of the remote broker (protocols/openwire/client)
// and an ordinary client of the local engine (engine.Conn):
//
//   - It dials the peer, introduces itself with a BrokerInfo marked
//     networkConnection, connects as "<name>_<local broker>_outbound" and
//     subscribes to the peer's consumer advisories
//     (ActiveMQ.Advisory.Consumer.>, or one topic per dynamically included
//     destination). The peer replays its current consumers first.
//   - For each remote consumer it may serve (not an advisory topic, not
//     a temporary destination unless bridgeTempDestinations, not a browser, permitted by the connector's excluded and
//     dynamically included destinations, its brokerPath shorter than
//     consumerTTL and without this broker in it), it subscribes locally on
//     the consumer's destination: one subscription per destination with
//     conduitSubscriptions (the selector ignored, as ActiveMQ's conduit
//     does), one per remote consumer (with its selector) without. The
//     local subscription is marked as a network one (engine.NetworkSpec):
//     its own Consumer advisory carries the demand's brokerPath plus the
//     peer, and the engine does not dispatch to it a message that already
//     went through the peer or crossed messageTTL brokers.
//   - Each message the local subscription receives is sent to the peer
//     with the same message id, its brokerPath extended with this broker's
//     id; persistent messages (and all with alwaysSyncSend) synchronously.
//     It is acknowledged locally only once sent (or, synchronously, once
//     the peer has it): a queue message in flight when the peer goes away
//     returns to the local queue. A message the peer refuses with a
//     SecurityException goes to the local dead letter queue (a poison
//     ack, as ActiveMQ's serviceLocalException does); any other refusal
//     restarts the connection.
//   - When the remote consumer goes (its RemoveInfo advisory), the demand
//     is dropped; the last one of a conduit closes the local subscription.
//   - A remote durable subscriber is served by a local durable
//     subscription that outlives its subscriber's connection (durable.go);
//     with syncDurableSubs the peer's offline ones are learnt on
//     connection, and durableDestinations are re-attached at start
//     (durablesync.go).
//   - A remote consumer this broker already serves through another bridge
//     (the same original consumer) is not served twice
//     (suppressDuplicate*Subscriptions, suppress.go).
//   - With useVirtualDestSubs a consumer on a peer's virtual topic
//     consumer queue or composite forwardTo is demand for the virtual
//     destination (virtual.go).
//   - The peer's temporary destinations are made here too, so a reply to
//     a JMSReplyTo on the peer crosses back (temp.go).
//   - statically included destinations are subscribed at once, whatever
//     the demand; with staticBridge no advisory is subscribed at all.
//   - A lost or refused connection is retried after initialReconnectDelay,
//     multiplied by backOffMultiplier after each failure with
//     useExponentialBackOff, up to maxReconnectDelay; after
//     maxReconnectAttempts failures in a row (when not 0) the bridge gives
//     up and says so at Error. Demand is rebuilt from the advisories the
//     peer replays on every connection.
//   - With duplex, the same connection also serves this broker's consumers
//     from the peer (duplex.go, which says how this departs from
//     ActiveMQ).
//   - A peer's duplex connector that dials this broker gets the reverse
//     bridge it asks for, run over the accepted connection with the
//     peer's connector settings (ServeDuplex, duplex_accept.go): the same
//     bridge, its remote the OpenWire server's connection (client.Attach).
//   - Each start and stop is announced on ActiveMQ.Advisory.NetworkBridge
//     (the peer's BrokerInfo, started true or false), as ActiveMQ does.
//   - Each start and stop is recorded for the views (registry.go): the
//     bridge's status, its connection's counters and, through the engine
//     (engine.NetworkView, Engine.AddPeerBroker), the management API, the
//     console and the OpenWire connectors' cluster-client lists
//     (updateClusterClients) see them.
//
// # Ownership
//
// Per connection, one goroutine reads the advisories and changes the
// demand, another forwards deliveries; the engine.Conn is shared by both
// and guarded by bridgeConn.lmu (engine.Conn wants one caller at a time).
// The engine's shards hand deliveries to a sink that only queues them
// (bounded by the subscriptions' prefetch windows) and never blocks.
package cluster
