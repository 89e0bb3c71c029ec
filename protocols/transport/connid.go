package transport

// NextConnID returns a new connection ID from the counter Listen's
// connections take theirs from, so that transports built outside this
// package (WebSocket) hand out IDs unique among all connections of the
// process, as Conn.ID promises. Safe from any goroutine.
func NextConnID() uint64 { return connSeq.Add(1) }
