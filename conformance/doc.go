// Package conformance drives a real Wharf broker over loopback with real
// protocol clients and checks ActiveMQ 5.17's observable behaviour. It has
// no code of its own outside its tests: each protocol's cases live in
// <protocol>_*_test.go and are named TestConformance<PROTOCOL>....
//
// By default every test starts its own in-process broker (engine/brokertest).
// With WHARF_CONFORMANCE_STOMP_ADDR=host:port the STOMP tests run against
// that broker instead, which is how conformance/activemq/run.sh runs the
// same cases against Apache ActiveMQ 5.17 for a differential check; tests
// that need broker internals (counters, an injected clock, a restart) skip
// there. README.md lists the known differences.
package conformance
