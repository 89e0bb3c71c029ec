// Package stomp is Wharf's STOMP 1.0/1.1/1.2 adapter: a session state
// machine between STOMP frames (protocols/stomp/wire) and engine commands,
// mapping headers, destinations, acks and errors the way ActiveMQ 5.17's
// ProtocolConverter and LegacyFrameTranslator do (reference/mappings.md §1).
//
// Threading. The transport calls OnData and OnClose from one goroutine at a
// time; everything a session keeps for frame handling is touched only
// there. Deliveries arrive on shard goroutines (Deliver), possibly several
// at once for a wildcard subscription, and the completions of SENDs
// (Complete) and of ACKs/NACKs with a receipt (ackDone: their RECEIPT waits
// for the store's synced write) likewise: what they share with frame handling — the per-subscription
// list of messages awaiting ACK, the receipts awaiting a store write, the
// temporary destination names — is guarded by small mutexes, each noted
// where it is declared. Heart-beat timers run on their own goroutines and
// touch only atomics and the transport connection, which is safe from any
// goroutine.
package stomp
