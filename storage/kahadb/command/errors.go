package command

import "errors"

var (
	// ErrTruncated reports a payload that ends inside a key, a value or a
	// length-delimited field, or is empty.
	ErrTruncated = errors.New("kahadb command: truncated record")
	// ErrUnknownEntryType reports a KahaEntryType byte outside 0..16.
	ErrUnknownEntryType = errors.New("kahadb command: unknown entry type")
	// ErrMalformedVarint reports a varint longer than 10 bytes or overflowing 64 bits.
	ErrMalformedVarint = errors.New("kahadb command: malformed varint")
	// ErrInvalidKey reports a field key with field number 0 or an unsupported
	// wire type (groups, 6, 7); journal-data.proto uses none of them.
	ErrInvalidKey = errors.New("kahadb command: invalid field key")
	// ErrMissingField reports a required field (or transaction id) that is absent.
	ErrMissingField = errors.New("kahadb command: missing required field")
	// ErrInvalidDestinationType reports a KahaDestination.type outside QUEUE..TEMP_TOPIC.
	ErrInvalidDestinationType = errors.New("kahadb command: invalid destination type")
	// ErrTrailingBytes reports bytes after the framed message; ActiveMQ sizes
	// every journal record exactly, so they mean corruption.
	ErrTrailingBytes = errors.New("kahadb command: trailing bytes after message")
)
