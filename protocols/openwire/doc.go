// Package openwire is Wharf's OpenWire adapter: what ActiveMQ's JMS client
// (and the .NET and C++ clients, and network bridges) speak. A session
// negotiates the wire format, then turns commands (ConnectionInfo,
// SessionInfo, ProducerInfo, ConsumerInfo, messages, MessageAck,
// TransactionInfo, ...) into engine operations, and engine deliveries into
// MessageDispatch, as ActiveMQ 5.17's TransportConnection does.
//
// Threading. The transport calls OnData and OnClose from one goroutine at
// a time; the session's connection state (sessions, producers, consumers,
// transactions) is touched only there. Deliveries and send completions
// arrive on shard goroutines. Everything written to the socket goes through
// one Encoder under writeMu, held across encoding and the transport Write:
// with the marshal cache on, the bytes must reach the wire in the order the
// cache was updated. A consumer's list of dispatched-but-unacknowledged
// messages is shared between Deliver and MessageAck and has its own mutex.
package openwire
