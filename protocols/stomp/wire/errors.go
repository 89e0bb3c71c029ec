package wire

import "errors"

// Sentinel errors returned (wrapped with the frame's context) by Decoder.Feed
// and Unescape. Compare with errors.Is. Every one of them is fatal for the
// connection: STOMP 1.2 "ERROR" says the server closes the connection after a
// frame it cannot parse, and ActiveMQ's StompCodec does the same with a
// ProtocolException(fatal=true). The wrapped text says what was wrong and is
// meant to be placed in the ERROR frame's `message` header.
var (
	// ErrCommandTooLong reports a command line longer than Limits.MaxCommandBytes.
	ErrCommandTooLong = errors.New("stomp: command line too long")
	// ErrHeaderTooLong reports a header line longer than Limits.MaxHeaderLineBytes.
	ErrHeaderTooLong = errors.New("stomp: header line too long")
	// ErrTooManyHeaders reports more than Limits.MaxHeaders header lines.
	ErrTooManyHeaders = errors.New("stomp: too many headers")
	// ErrBodyTooLarge reports a body (announced or received) larger than
	// Limits.MaxBodyBytes.
	ErrBodyTooLarge = errors.New("stomp: frame body too large")
	// ErrFrameTooLarge reports a frame larger than Limits.MaxFrameBytes.
	ErrFrameTooLarge = errors.New("stomp: frame too large")
	// ErrBadContentLength reports a content-length that is not a decimal
	// number of bytes.
	ErrBadContentLength = errors.New("stomp: invalid content-length")
	// ErrMissingNUL reports that the byte after a content-length body is not NUL.
	ErrMissingNUL = errors.New("stomp: missing NUL after frame body")
	// ErrBadHeaderLine reports a header line without a colon.
	ErrBadHeaderLine = errors.New("stomp: header line without a colon")
	// ErrBadEscape reports an undefined escape sequence in a 1.1/1.2 header.
	ErrBadEscape = errors.New("stomp: undefined escape sequence in header")
)
