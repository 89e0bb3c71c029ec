// Package version holds the broker's version, the one value that
// `wharf version`, the startup log line and the protocols' greetings (STOMP
// CONNECTED's server header, AMQP Open's version property) report. It
// imports nothing, so any package may use it without taking on a protocol.
package version

// Broker is Wharf's version.
const Broker = "0.1.0"
