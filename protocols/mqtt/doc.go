// Package mqtt is Wharf's MQTT adapter: MQTT 3.1, 3.1.1 and 5 sessions on
// the shared engine, mapped as ActiveMQ 5.17's activemq-mqtt maps them
// (reference/mappings.md §2): topic a/b/+ is JMS topic a.b.*, a PUBLISH is a
// BytesMessage with ActiveMQ.MQTT.QoS, a subscription of a persistent
// session with QoS 1 or 2 is a durable topic subscription named
// "<QoS>:<filter>" of the client id, and a RETAIN publish becomes the
// topic's retained message (engine/retained.go).
//
// Ownership. A session is driven by its transport goroutine (OnData,
// OnClose). Its mu is held while a packet is handled and while the session
// is released; a session that takes over a client id locks the older
// session's mu to release it (newer before older: never the other way).
// Deliveries and completions arrive on shard goroutines and touch only the
// outbound state, under outMu, which is never held while calling the
// engine.
package mqtt
