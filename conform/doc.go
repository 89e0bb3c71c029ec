// Package conform is Wharf's ActiveMQ conformance suite as a library: a
// registry of black-box cases, each of which drives a broker only through
// its network addresses with real protocol clients and pins one observable
// behaviour of Apache ActiveMQ Classic 5.17, and a runner that executes
// them against any broker and reports the outcome (a table, JSON, JUnit
// XML, or the differences between two brokers).
//
// The cases used to be _test.go files in conformance/ that only `go test`
// in a checkout could run. Here they are linked into the binary (`wharf
// conform`), and conformance/conform_test.go runs every registered case
// against an in-process Wharf, so each is written once.
//
// Ownership: a case runs on its own goroutine with its own T; everything a
// case creates (connections, durable subscriptions, temporary
// destinations) is registered with T.Cleanup and released when the case
// ends, in reverse order, even when it fails or exceeds its time bound.
// Destination names carry the run's prefix (Target.Prefix) and the case's
// sequence number, so runs against one broker never see each other's
// messages. The package depends on no engine, store or protocol adapter
// package of Wharf (internal/layering checks it): it is a client.
//
// Its protocol clients (RawConn, RawMQTT, RawAMQP, OpenWireConn,
// MQTT5Client, the MQTT* Paho helpers) are exported and take a TB, which
// *T and *testing.T both satisfy: the tests of conformance/ that need
// Wharf's internals drive the broker with them rather than with copies.
package conform
