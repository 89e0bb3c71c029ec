// Package ws serves the broker's protocols over WebSocket (RFC 6455), as
// ActiveMQ's ws:// connector does: STOMP (subprotocols v12.stomp,
// v11.stomp, v10.stomp, stomp) and MQTT (mqttv3.1, mqtt) on one port,
// chosen by the subprotocol the client offers, or mounted on a path of an
// HTTP server. Each WebSocket connection is a transport.Conn, so the
// protocol sessions written for TCP run on it unchanged; the framing is in
// protocols/transport/ws/wire (standard library only, fuzzed).
//
// # Goroutines and ownership
//
// A connection is served by the net/http goroutine that upgraded it (the
// reader): it runs the HandlerFactory, reads the socket, decodes frames,
// calls Handler.OnData with each chunk of message data (text or binary,
// fragmented or not, in order: a message may hold several protocol frames
// and a protocol frame may span messages), answers pings, and at the end
// calls Handler.OnClose, exactly once. Writes are queued, already framed,
// in one buffer under the connection's mutex; a writer goroutine, started
// when the queue turns non-empty and gone when it is empty again, hands
// the whole queue to the socket in one write and then runs the batch's
// WriteNotify callbacks. So Write never blocks, bursts cost one syscall,
// and an idle connection costs one goroutine.
//
// Handler methods and WriteNotify callbacks run on those two goroutines
// but never at the same time: a per-connection mutex (conn.cb) is held
// around each, which keeps the transport contract that a session sees
// them one at a time. Lock order: conn.cb, then conn.mu (a session calls
// Write from OnData); conn.mu is never held across socket I/O or a
// Handler call.
//
// # Limits
//
// Every incoming message is bounded (Options.MaxTextMessageBytes,
// MaxBinaryMessageBytes; 64 KiB as in ActiveMQ/Jetty): the frame header
// that would cross the limit fails the connection with 1009 before its
// payload is read. Outbound bytes queued and not yet written are capped
// per connection (Options.MaxOutboundBytes) as for TCP: the Write that
// crosses it cuts the connection and returns transport.ErrOutboundFull.
// PauseReading stops the reader, so a producer's sends back up in TCP;
// at most one read (16 KiB) is held.
//
// # TLS (wss)
//
// With Options.TLS, Listen serves wss:// (ActiveMQ's wss, stomp+wss,
// mqtt+wss connectors) and admits sockets as transport.ListenTLS does
// (see its doc, "TLS"): the http.Server serves a listener of this package
// (wssListener) that applies MaxConnections when a TCP socket is
// accepted, before any TLS byte is read (handshaking sockets, HTTP
// requests not yet upgraded and WebSocket connections all count), and
// lets at most Options.MaxPendingHandshakes (256) handshakes run at once.
// A socket beyond either bound is closed at once, logged at Warn at most
// every 10 s ("connection limit reached, connection refused", "too many
// pending tls handshakes, connection refused"). Each admitted socket is
// handshaken on its own goroutine within Options.TLSHandshakeTimeout
// (10 s), then handed to http.Server, whose upgrade request has its own
// 10 s header bound; so a handshake flood holds at most that many
// goroutines, each for at most the timeout. A failed handshake closes
// only that socket (a plain-text HTTP request first gets net/http's 400
// "Client sent an HTTP request to an HTTPS server") and is logged as
// "tls handshake failed, connection closed" with remote, reason and err,
// at Warn (Info when the client just hung up), at most 20 lines per 10 s
// per listener, the next line counting those held back (suppressed). A
// slot is given back when its socket closes or, for a WebSocket
// connection, once its OnClose has run. Listener.Conns counts the
// admitted sockets. HTTP/2 is not offered.
//
// On a ws:// port nothing changes: MaxConnections counts connections from
// the upgrade on and an upgrade beyond it is answered 503.
//
// net/http's own error lines (a malformed request, an Accept error, a
// handler panic), on either scheme, are logged as "http server error"
// with the net/http text in err, at Warn (Error for a panic), at most 20
// per 10 s per listener.
//
// A connection upgraded over TLS, here or on an HTTPS server a Server is
// mounted on, is handed to its session as a transport.TLSConn, so
// transport.PeerCertificates gives the verified client chain. A Server
// mounted on another HTTP server leaves admission, handshakes and their
// logs to that server; MaxConnections then counts upgrades (503 beyond).
//
// # Close
//
// Conn.Close queues a close frame (1000) after what is queued; the socket
// closes when the peer answers (within 5 s) or, if the queue cannot be
// written within 30 s, with transport.ErrDrainTimeout. A peer's close
// frame is answered with its own code after what is queued. A framing
// error sends the matching close code (1002, 1007, 1009) and closes at
// once. OnClose gets nil for an orderly close (1000, 1001, or no code,
// from either side), a *CloseError for another code from the peer,
// ErrAbnormalClosure when the TCP connection ended without a close frame,
// or the transport package's errors.
package ws
