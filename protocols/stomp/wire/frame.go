package wire

// Protocol versions accepted by SetVersion, AppendFrame and the escape helpers
// (STOMP 1.2 "Protocol Negotiation").
const (
	V10 = "1.0"
	V11 = "1.1"
	V12 = "1.2"
)

// Frame commands of STOMP 1.0, 1.1 and 1.2 (STOMP 1.2 "Client Frames",
// "Server Frames"). The decoder returns these exact strings (no allocation)
// for known commands; any other command is returned as received.
const (
	CmdConnect     = "CONNECT"
	CmdStomp       = "STOMP"
	CmdSend        = "SEND"
	CmdSubscribe   = "SUBSCRIBE"
	CmdUnsubscribe = "UNSUBSCRIBE"
	CmdAck         = "ACK"
	CmdNack        = "NACK"
	CmdBegin       = "BEGIN"
	CmdCommit      = "COMMIT"
	CmdAbort       = "ABORT"
	CmdDisconnect  = "DISCONNECT"
	CmdConnected   = "CONNECTED"
	CmdMessage     = "MESSAGE"
	CmdReceipt     = "RECEIPT"
	CmdError       = "ERROR"
)

// HdrContentLength is the header that fixes the body length
// (STOMP 1.2 "Header content-length").
const HdrContentLength = "content-length"

// Header is one decoded (unescaped) header entry.
type Header struct {
	Name  string
	Value string
}

// Frame is one STOMP frame. A Frame returned by Decoder.Feed owns its memory:
// it aliases neither the caller's input nor the decoder's buffers.
type Frame struct {
	// Command is the command line with surrounding whitespace removed
	// ("SEND", "CONNECT", ...). Unknown commands are kept as received.
	Command string
	// Headers are in wire order, decoded for the connection's version.
	// Duplicates are kept; Get returns the first (STOMP 1.2
	// "Repeated Header Entries").
	Headers []Header
	// Body is nil when the frame has no body bytes.
	Body []byte
}

// Get returns the value of the first header called name. STOMP 1.2
// "Repeated Header Entries": only the first occurrence is significant, which
// is also what ActiveMQ's StompWireFormat.parseHeaders keeps.
func (f *Frame) Get(name string) (string, bool) {
	for i := range f.Headers {
		if f.Headers[i].Name == name {
			return f.Headers[i].Value, true
		}
	}
	return "", false
}

// Set replaces the value of the first header called name, or appends the
// header when there is none.
func (f *Frame) Set(name, value string) {
	for i := range f.Headers {
		if f.Headers[i].Name == name {
			f.Headers[i].Value = value
			return
		}
	}
	f.Headers = append(f.Headers, Header{Name: name, Value: value})
}

// Del removes every header called name.
func (f *Frame) Del(name string) {
	h := f.Headers[:0]
	for _, e := range f.Headers {
		if e.Name != name {
			h = append(h, e)
		}
	}
	clear(f.Headers[len(h):])
	f.Headers = h
}

// isConnectFamily reports whether frames with this command are never escaped.
// STOMP 1.2 "Value Encoding": "The CONNECT and CONNECTED frames do not escape
// the carriage return, line feed or colon octets in order to remain backward
// compatible with STOMP 1.0 clients." STOMP is the 1.1+ alias of CONNECT.
func isConnectFamily(cmd string) bool {
	return cmd == CmdConnect || cmd == CmdStomp || cmd == CmdConnected
}

// knownCommand returns the constant for a known command, so that decoding it
// does not allocate, and "" otherwise.
func knownCommand(b []byte) string {
	switch string(b) { // no allocation: the compiler compares in place
	case CmdSend:
		return CmdSend
	case CmdMessage:
		return CmdMessage
	case CmdAck:
		return CmdAck
	case CmdNack:
		return CmdNack
	case CmdSubscribe:
		return CmdSubscribe
	case CmdUnsubscribe:
		return CmdUnsubscribe
	case CmdBegin:
		return CmdBegin
	case CmdCommit:
		return CmdCommit
	case CmdAbort:
		return CmdAbort
	case CmdConnect:
		return CmdConnect
	case CmdStomp:
		return CmdStomp
	case CmdConnected:
		return CmdConnected
	case CmdDisconnect:
		return CmdDisconnect
	case CmdReceipt:
		return CmdReceipt
	case CmdError:
		return CmdError
	}
	return ""
}
