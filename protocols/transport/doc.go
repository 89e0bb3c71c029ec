// Package transport accepts TCP connections for the protocol sessions and
// moves bytes; it knows nothing of any protocol. Plain TCP listeners run on
// gnet/v2 event loops (Listen); TLS listeners run on crypto/tls with a
// goroutine per connection (ListenTLS, see "TLS" below); a session sees its
// connection only as a Conn and is itself a Handler built by a
// HandlerFactory.
//
// # Threading contract
//
// A Listener runs one gnet engine: an acceptor goroutine and NumEventLoop
// event-loop goroutines. Every accepted connection is owned by exactly one
// event loop for its whole life, and that loop alone calls
//
//   - the HandlerFactory (from gnet's OnOpen),
//   - Handler.OnData, with the bytes of each read (gnet's OnTraffic),
//   - Handler.OnClose, exactly once (gnet's OnClose),
//   - WriteNotify callbacks.
//
// So a Handler needs no locks for its own state, but everything above shares
// the loop with the other connections of that loop and must not block:
// decode, copy out what must outlive the call, post to the engine, return
// (STYLE §3). The bytes passed to OnData are gnet's read buffer, valid only
// during the call.
//
// Conn.Write, WriteNotify, Close, PauseReading, ResumeReading, ID,
// RemoteAddr and LocalAddr are safe from any goroutine, including from
// inside the Handler's own methods.
// Listener.Addr, Conns and Close are safe from any goroutine, but Close must
// not be called from a Handler method (it waits for the loops to exit).
//
// # Write path and ordering
//
// Write copies b into the connection's outbound queue (a list of pooled
// 64 KiB chunks guarded by a mutex: the one lock of the package, see
// conn.mu; a burst adds chunks and never copies what is queued) and, if no
// flush is pending, posts a flush task to the owning loop with gnet's
// EventLoop.Execute. The loop takes the whole queue at once and hands it to
// gnet's Conn.Writev (one writev for up to 1,024 chunks), then returns the
// chunks to the pool; gnet writes what the kernel accepts and
// copies the rest into its own outbound buffer, flushed in order on writable
// events. Because every write goes through the one queue, writes are sent in
// one total order that respects each goroutine's program order; writes from
// different goroutines interleave only at Write-call granularity. Bytes
// written during OnData are flushed when OnData returns, without a posted
// task, so a request/response exchange costs one write syscall per read.
//
// WriteNotify callbacks wait for their bytes to leave gnet's outbound
// buffer, not just to be given to gnet: the loop counts the bytes it hands
// to gnet, and the bytes sent are that count minus
// OutboundBuffered. When a flush leaves bytes in gnet's buffer, the
// flushed batch's callbacks join a per-connection waiting list (in write
// order, each with the byte offset its bytes end at); every later flush
// (a Write, the end of OnData) runs those whose offset is reached, and
// while any wait the loop polls with back-off (1 ms doubling to 50 ms,
// back to 1 ms when a callback runs), gnet having no drained or writable
// callback. So credit returned through WriteNotify stops once the kernel's
// socket buffers are full, and a prefetch window bounds gnet's buffer.
//
// gnet's own AsyncWrite is not used: it does not copy the buffer, it costs a
// task and a syscall per call, and its tasks and gnet's Close run at
// different priorities, which gnet does not order against each other.
//
// # Outbound cap
//
// Options.MaxOutboundBytes bounds the bytes of a connection held in user
// space: Wharf's queue plus gnet's outbound buffer. Write checks the queue
// it can see and returns ErrOutboundFull at once when b would overflow it;
// the loop checks the sum after each flush (gnet's buffer can only be read
// there) and cuts the connection if it is over, so the next Write returns
// ErrOutboundFull. A cut connection is closed without draining and its
// Handler gets OnClose(ErrOutboundFull). The kernel's socket buffer comes on
// top and is bounded by the kernel.
//
// # Read pause
//
// PauseReading is producer flow control: the socket of a paused connection
// is not read, so a producer that keeps sending fills the kernel's buffers
// and is throttled by TCP, not buffered in the broker. gnet has no API for
// it (it reads every readable socket, keeps what OnTraffic leaves unconsumed
// in an unbounded inbound buffer, and has no call to change a connection's
// poller interest), so on Linux the loop takes the socket out of its epoll
// interest set itself (EPOLL_CTL_MOD to no events, on the epoll descriptor
// read from gnet's event loop by reflection; readctl_linux.go). EPOLLERR
// and EPOLLHUP still arrive, so a reset peer still closes the connection;
// a peer's FIN is not seen until reading resumes, after the input before it.
//
// The pause is applied on the loop: by a posted task, or at once by
// OnTraffic if a read lands first. That read, at most gnet's 64 KiB read
// buffer, stays unconsumed in gnet's inbound buffer, which is all the
// transport holds for a paused connection; ResumeReading restores gnet's
// interest set and delivers it at once (a posted task calling OnData, as
// no event would announce it), before anything read later.
//
// A paused socket does not watch EPOLLOUT either: gnet's write paths set
// EPOLLIN back whenever they touch the poller (when its outbound buffer
// turns non-empty or empty), and gnet flushes that buffer only on EPOLLOUT.
// So while paused, flush drives gnet's buffer with gnet's Flush, polled
// with the usual back-off while it holds bytes, and clears the interest set
// again before the loop polls: no read slips in. Writes thus keep flowing
// to a paused connection.
//
// Where the poller cannot be reached (off Linux; gnet built with poll_opt,
// which stores a pointer, not the descriptor, in epoll's event data; a gnet
// whose internals differ, checked type by type) the pause only holds input:
// gnet keeps reading into its inbound buffer, and beyond 4 MiB held
// (maxHeldInboundBytes) the connection is cut with ErrInboundFull. A
// warning says so, at most every 10 s per listener.
//
// # Close
//
// Conn.Close marks the connection closing (further writes get ErrClosed),
// then the loop flushes the queue, waits for gnet's outbound buffer to empty
// (polling with the same back-off, since gnet has no drained callback;
// at most 30 s, then ErrDrainTimeout) and closes the socket. Input is read
// and dropped meanwhile, so the close is a FIN and not an RST; a paused
// connection is resumed for this, and the close also waits (within the same
// 30 s) until the input the kernel queued while it was paused has been read.
// The socket is then half-closed (a FIN after the last byte) and OnClose
// runs; the loop keeps reading and dropping input until the peer closes
// its side or 5 s pass, and only then closes the socket, because input
// still in flight when a socket closes makes the kernel answer with an RST
// that destroys the peer's unread replies (a lingering close). A non-nil
// error from OnData closes the same way, after the error frame the handler
// queued. When a connection is gone, its waiting and queued WriteNotify
// callbacks run once each, in order: nil for those whose bytes had left
// gnet's buffer, the close error for the others; then OnClose. A panic in
// a Handler method or a WriteNotify callback is
// recovered, logged once with the connection ID and remote address, and
// closes that connection at once; the listener and the other connections
// carry on (STYLE §6). Every connection type calls its session through
// internal/guard, which does that recovering and logging once for all.
//
// Listener.Close stops the engine: gnet closes every connection on its loop
// (OnClose(ErrListenerClosed)), making one non-blocking attempt to send what
// is queued, and Close returns when gnet.Run has returned, i.e. all loops
// have exited. Nothing of a closed listener keeps running.
//
// # TLS
//
// gnet has no TLS, so ListenTLS (ssl://, nio+ssl://, stomp+ssl://,
// stomp+nio+ssl://, mqtt+ssl://, mqtt+nio+ssl://, amqp+ssl://, amqps://)
// serves crypto/tls over a net.Listener, on the same code as the WebSocket
// transport (package ws; the connection machinery and the accept gate are
// internal/streamconn, only reading, writing and the end of a connection's
// direction differ): an accept goroutine; per connection a reader
// goroutine that completes the handshake, then calls the HandlerFactory,
// reads (one TLS record, at most 16 KiB of plaintext, per read) and calls
// OnData, and at the end OnClose; and a writer goroutine, started when the
// outbound queue turns non-empty and gone when it is empty, which hands
// the whole queue to tls.Conn.Write and runs the batch's WriteNotify
// callbacks. Handler calls and callbacks hold a per-connection mutex, so a
// session still sees them one at a time, but on two goroutines, not on an
// event loop (lock order: that mutex, then the queue's). The Conn contract
// is the same, with these differences:
//
//   - Costs: a goroutine (8 KiB stack, growing) and a 16 KiB read buffer
//     per connection, a second goroutine while bytes are queued, and
//     crypto/tls's buffers; the Go runtime's netpoller replaces gnet's
//     loops. Per connection it costs more memory than gnet, but an OnData
//     that blocks holds up only its own connection. Round trips over one
//     connection are as fast as gnet's (BenchmarkTransportTLSEcho against
//     BenchmarkTransportTCPEcho); a full handshake (ECDSA P-256, TLS 1.3)
//     takes about 1.7 ms of client and server CPU together, some 600 per
//     second on two cores (BenchmarkTransportTLSHandshake).
//   - Handshake first: the factory runs after a completed handshake, so
//     the Conn is a TLSConn and PeerCertificates gives the verified client
//     chain. A handshake must finish within Options.TLSHandshakeTimeout
//     (10 s). One that fails (plain text on the port, a client certificate
//     missing, expired or untrusted, the client refusing ours, a stall) is
//     logged at Warn (Info when the client just hung up) with the remote
//     address and crypto/tls's reason, at most 20 lines per 10 s per
//     listener, closes only that socket, and makes no Handler.
//   - Floods: MaxConnections is checked when a socket is accepted, before
//     any TLS byte is read (handshaking connections count), and at most
//     Options.MaxPendingHandshakes (256) handshakes run at once; a socket
//     accepted beyond either bound is closed at once, logged at Warn at
//     most every 10 s. So a handshake flood holds at most that many
//     goroutines, each for at most the handshake timeout.
//   - WriteNotify: done runs on the writer goroutine once tls.Conn.Write
//     has returned, i.e. the kernel took every encrypted byte; there is no
//     polling. The outbound cap counts the queue plus the batch being
//     written.
//   - PauseReading: the reader stops calling Read, so TCP throttles the
//     peer; what is held is one record (16 KiB) plus what crypto/tls read
//     ahead, on every platform (no ErrInboundFull).
//   - Close: after the queue, a TLS close_notify alert and a TCP FIN; input
//     is read and dropped until the peer closes its side (at most 5 s), so
//     the close is not a reset. A cut (ErrOutboundFull, a panic, the
//     listener closing) closes the socket without close_notify.
//   - Listener.Close closes every connection, established or
//     handshaking, drops what is queued, and returns when every goroutine
//     has finished.
//
// # gnet notes
//
//   - gnet reports the listener's configured address as each connection's
//     local address (port 0 stays 0); Wharf asks the kernel (getsockname).
//   - SO_REUSEPORT is left off: with it gnet binds one socket per loop by
//     re-resolving the address, so port 0 would bind several ports.
//   - gnet keeps a process-wide default logger, replaced at every engine
//     start; its lines are routed to the slog.Logger of the last listener.
//   - gnet reads each readable socket once per event (level-triggered,
//     64 KiB), appends what OnTraffic leaves unconsumed to an unbounded
//     inbound buffer, and sets a socket's epoll interest (EPOLLIN|EPOLLPRI,
//     plus EPOLLOUT while its outbound buffer is non-empty) only from its
//     own write paths. Conn.Wake would also re-run OnTraffic, but Wharf
//     delivers held input from its own task instead. See "Read pause".
//   - gnet reports EPOLLHUP/EPOLLERR on a socket it was not reading as
//     io.EOF, so a paused connection reset by its peer gets OnClose(nil).
//   - gnet.Stop(ctx, addr) (the package function) finds engines by address
//     string in a global map; with port 0 several listeners share one key.
//     Never call it; Listener.Close uses the engine it was booted with.
package transport
