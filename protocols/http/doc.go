// Package http is the broker's web server, on 127.0.0.1:8161 unless
// configured otherwise (ActiveMQ's jetty.xml, or YAML http): /healthz,
// /readyz, Prometheus /metrics, the mount point of the management API
// (/api/jolokia/, a handler the wiring hands in), ActiveMQ's console XML
// feeds (/admin/xml/*.jsp, feeds.go) and its REST message API
// (/api/message/, message.go).
//
// Ownership: a Server owns its listeners and net/http's goroutines. The
// broker it reports on is set once with Ready when the broker has
// started (store recovered, connectors listening) and cleared with
// NotReady when it stops; handlers read it through an atomic pointer.
// /metrics reads the engine at scrape time (engine.Engine.AllStats,
// Usage, ConnectionsByProtocol): the message path counts nothing for the
// broker and destination metrics. Only the journal histograms
// (JournalMetrics) are updated as the store writes, one atomic histogram
// update per batch and per fsync. The REST message API is a client of
// the engine like a protocol: each request, or each clientId it names,
// has an engine.Conn made with the request's login; the clients kept for a
// clientId are closed when idle, at NotReady and at Close.
//
// Security: every path but /healthz and /readyz needs a login (HTTP Basic)
// when authentication is on, checked against jetty-realm.properties or
// the broker's authentication plugin; a login holding role user or admin
// may read, writes need admin (RequireAdmin). A listener on a
// non-loopback address is refused while the login is off, nobody can log
// in, or admin/admin still can (ActiveMQ's shipped realm).
package http
