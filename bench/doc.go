// Package bench holds Wharf's end-to-end benchmarks (real brokers on
// loopback, real sockets) and the engine of `wharf bench`, a load generator
// for any broker that speaks STOMP, OpenWire, MQTT 3.1.1 or AMQP 1.0 (Wharf, ActiveMQ
// Classic, Mosquitto). bench/compare runs it against Wharf and reference
// brokers side by side (`make bench-compare`).
//
// # Runs
//
// Run takes a validated Config and drives one scenario against the broker
// at Config.URL: queue (N producers, M consumers on one queue), topic (one
// or more publishers, K subscribers, each subscriber must see every
// message), reqreply (requesters send to a queue with a reply-to; responders
// echo the body back) and connections (open N connections, hold them,
// close them). Every run is bounded: sends stop at Config.Count or
// Config.Duration, whichever comes first, and receivers stop when every
// message has arrived or nothing arrived for Config.Drain.
//
// Over MQTT every destination is a topic (mqtt.go): the queue scenario is
// refused, since MQTT 3.1.1 has no shared subscriptions, and a request's
// reply goes to a fixed topic per requester found from the stamp, since
// MQTT 3.1.1 messages carry no reply-to.
//
// # What a message carries
//
// Each body starts with a 24-byte stamp (payload.go): a magic, the producer
// index, a per-producer sequence number from 1, and the send time in
// nanoseconds on the run's monotonic clock. Producers and consumers run in
// this process, so latency needs no synchronised clocks. In open loop
// (Config.Rate > 0) the stamp is the time the message was due by the
// schedule, not the time it went out, so a stalled broker shows up as
// latency instead of as a quieter schedule (coordinated omission,
// clock.go).
//
// # Ownership
//
// Each producer and consumer is a goroutine owning its connection. What
// they share is the recorder (recorder.go): one mutex over the latency
// histogram, the exactly-once checkers and the counters. Its critical
// section is a few arithmetic operations per message; per-goroutine state
// would have to be merged to find duplicates that two consumers of a queue
// both received, and the progress line reads it once a second. The
// recorder also keeps per-second counts of sends and deliveries
// (timeline.go) for --plot (plot.go): bounded, whatever the run's length,
// by doubling the bucket width past an hour; producers count their sends
// locally and take the lock once a second.
package bench
