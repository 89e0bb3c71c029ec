package tempstore

import "errors"

var (
	// ErrCorrupt is wrapped when a record read back is not the one written.
	ErrCorrupt = errors.New("tempstore: record corrupt")
	// ErrUnknownRecord is wrapped when a reference names no live segment.
	ErrUnknownRecord = errors.New("tempstore: unknown record")
	// ErrTooLarge is wrapped when a record cannot fit in a segment file.
	ErrTooLarge = errors.New("tempstore: record too large")
)
