// Package bench holds Wharf's end-to-end benchmarks (real brokers on
// loopback, real sockets). The `wharf bench` load generator and the
// side-by-side ActiveMQ comparison will live here too.
package bench
