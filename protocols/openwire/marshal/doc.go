// Package marshal converts between the engine's protocol-neutral message
// (engine/message) and OpenWire's ActiveMQMessage (protocols/openwire/wire):
// headers, properties, bodies, advisory payloads, destinations and ids.
// The OpenWire session adapter (protocols/openwire) uses it for what
// producers send and consumers receive, and the KahaDB store
// (storage/kahadb) for the stored form, the StoreFormat frame ActiveMQ's
// KahaDB keeps. It imports only the standard library, engine/message and
// protocols/openwire/wire, so that a store does not depend on the session
// adapter or a network transport; internal/layering checks it.
package marshal
