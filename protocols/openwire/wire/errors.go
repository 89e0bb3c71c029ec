package wire

import "errors"

// Sentinel errors. Decoders wrap them with the command type and field that
// failed, so callers test with errors.Is.
var (
	// ErrFrameTooLarge: a size prefix (or buffered unprefixed data) exceeds
	// the negotiated MaxFrameSize or the configured limit.
	ErrFrameTooLarge = errors.New("openwire: frame exceeds max frame size")
	// ErrMalformedFrame: a size prefix smaller than the type byte.
	ErrMalformedFrame = errors.New("openwire: malformed frame")
	// ErrTruncated: a field runs past the end of its frame.
	ErrTruncated = errors.New("openwire: truncated data")
	// ErrTrailingBytes: bytes left in a frame after its command was decoded.
	ErrTrailingBytes = errors.New("openwire: trailing bytes after command")
	// ErrUnknownType: a data structure type code with no marshaller in the
	// negotiated version.
	ErrUnknownType = errors.New("openwire: unknown data structure type")
	// ErrUnexpectedType: a nested object of a type the field cannot hold.
	ErrUnexpectedType = errors.New("openwire: unexpected data structure type")
	// ErrNegativeLength: a negative length or count where Java would throw.
	ErrNegativeLength = errors.New("openwire: negative length")
	// ErrTooDeep: nested objects, throwable causes or primitive maps nest
	// deeper than Limits.MaxNestingDepth.
	ErrTooDeep = errors.New("openwire: nesting too deep")
	// ErrTooManyElements: an array, stack trace, map or list is longer than
	// the configured limit.
	ErrTooManyElements = errors.New("openwire: too many elements")
	// ErrStringTooLong: a string does not fit its encoding's length field.
	ErrStringTooLong = errors.New("openwire: string too long")
	// ErrInvalidUTF8: malformed Java modified UTF-8.
	ErrInvalidUTF8 = errors.New("openwire: malformed modified utf-8")
	// ErrCacheIndex: a marshal-cache index outside the negotiated cache.
	ErrCacheIndex = errors.New("openwire: cache index out of range")
	// ErrBooleanStream: a tight frame consumed more booleans than it carries,
	// or wrote more than a BooleanStream can hold.
	ErrBooleanStream = errors.New("openwire: boolean stream exhausted")
	// ErrBadMagic: a WireFormatInfo whose magic is not "ActiveMQ".
	ErrBadMagic = errors.New("openwire: bad wire format magic")
	// ErrUnsupportedVersion: an OpenWire version outside 1..12.
	ErrUnsupportedVersion = errors.New("openwire: unsupported version")
	// ErrUnsupportedPrimitive: a Go value with no primitive-map type tag.
	ErrUnsupportedPrimitive = errors.New("openwire: unsupported primitive value")
	// ErrUnknownPrimitiveType: an unknown primitive-map type tag.
	ErrUnknownPrimitiveType = errors.New("openwire: unknown primitive type tag")
	// ErrBodyTooLarge: a (decompressed) body larger than the caller's limit.
	ErrBodyTooLarge = errors.New("openwire: body exceeds limit")
	// ErrCorruptBody: a message body that cannot be decoded for its type.
	ErrCorruptBody = errors.New("openwire: corrupt message body")
	// ErrWrongBodyType: a body helper used on another message type.
	ErrWrongBodyType = errors.New("openwire: wrong message type for body")
)
