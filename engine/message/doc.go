// Package message is Wharf's protocol-neutral message: ActiveMQ's JMS headers,
// typed properties and a typed body.
//
// Ownership: a *Message is built by one protocol session, handed to the
// engine by Send, and from then on it is immutable. The engine shares the same
// *Message between every subscription that receives it (topic fan-out, queue
// redelivery); whatever differs per delivery (the delivery count, the
// redelivered flag) travels next to it in engine.Delivery, never in it. Code
// that must change a message (a DLQ move, an expiry) works on a Clone.
package message
