// Package conformance drives a real Wharf broker over loopback with real
// protocol clients and checks ActiveMQ 5.17's observable behaviour. It has
// no code of its own outside its tests: each protocol's cases live in
// <protocol>_*_test.go and are named TestConformance<PROTOCOL>....
//
// The black-box cases (those that need only a broker's addresses) live in
// wharf/conform, which `wharf conform` runs against any broker;
// TestConformanceCases runs every one of them here against an in-process
// Wharf, and `make conform-ref` runs them against Apache ActiveMQ 5.17.
// What stays here needs the broker's internals (counters, an injected
// clock, a restart in process, its configuration) or external tools.
//
// By default every test starts its own in-process broker (engine/brokertest).
// With WHARF_CONFORMANCE_STOMP_ADDR=host:port (and the OpenWire and MQTT
// variables of jms_test.go) the JMS suite runs against that broker instead,
// which is how conformance/activemq/run.sh runs it against ActiveMQ 5.17;
// tests that need broker internals skip there. README.md lists the known
// differences.
package conformance
