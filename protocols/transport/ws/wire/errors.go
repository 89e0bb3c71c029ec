package wire

import "errors"

// Decoding errors. Each fails the WebSocket connection with the close code
// CloseCodeFor gives (codes.go).
var (
	// ErrReservedBits means a frame set RSV1, RSV2 or RSV3 with no extension
	// negotiated [RFC 6455 §5.2].
	ErrReservedBits = errors.New("ws: reserved bits set with no extension negotiated")
	// ErrReservedOpcode means a frame used an opcode RFC 6455 reserves
	// [RFC 6455 §5.2].
	ErrReservedOpcode = errors.New("ws: reserved opcode")
	// ErrUnmasked means a client sent an unmasked frame [RFC 6455 §5.1].
	ErrUnmasked = errors.New("ws: client frame not masked")
	// ErrLengthOverflow means a 64-bit payload length had its most
	// significant bit set [RFC 6455 §5.2].
	ErrLengthOverflow = errors.New("ws: payload length has its most significant bit set")
	// ErrControlFragmented means a control frame did not have FIN set
	// [RFC 6455 §5.5].
	ErrControlFragmented = errors.New("ws: fragmented control frame")
	// ErrControlTooLong means a control frame carried more than 125 bytes
	// [RFC 6455 §5.5].
	ErrControlTooLong = errors.New("ws: control frame payload longer than 125 bytes")
	// ErrUnexpectedContinuation means a continuation frame arrived with no
	// fragmented message under way [RFC 6455 §5.4].
	ErrUnexpectedContinuation = errors.New("ws: continuation frame outside a fragmented message")
	// ErrExpectedContinuation means a new text or binary frame arrived
	// before the fragmented message under way was finished [RFC 6455 §5.4].
	ErrExpectedContinuation = errors.New("ws: new data frame inside a fragmented message")
	// ErrMessageTooBig means a message would exceed the configured size
	// limit; it is detected from the frame header, before the payload is
	// read [RFC 6455 §7.4.1 code 1009].
	ErrMessageTooBig = errors.New("ws: message exceeds the size limit")
	// ErrInvalidUTF8 means a text message or a close reason was not valid
	// UTF-8 [RFC 6455 §8.1].
	ErrInvalidUTF8 = errors.New("ws: invalid UTF-8 in text")
	// ErrClosePayload means a close frame's payload was one byte long, or
	// held a status code that may not be sent [RFC 6455 §5.5.1, §7.4].
	ErrClosePayload = errors.New("ws: invalid close frame payload")
)
