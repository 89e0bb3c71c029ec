package wire

import (
	"errors"
	"fmt"
	"strings"
)

// Error conditions of AMQP 1.0 (§2.8.15 amqp-error, §2.8.16 connection-error,
// §2.8.17 session-error, §2.8.18 link-error; §4.5.8 transaction-error). They
// go in the condition field of an Error.
const (
	// ErrCondInternalError: an internal error occurred; the operator may
	// need to intervene.
	ErrCondInternalError Symbol = "amqp:internal-error"
	// ErrCondNotFound: a peer attempted to work with a remote entity that
	// does not exist.
	ErrCondNotFound Symbol = "amqp:not-found"
	// ErrCondUnauthorizedAccess: a peer attempted to work with a remote
	// entity to which it has no access due to security settings.
	ErrCondUnauthorizedAccess Symbol = "amqp:unauthorized-access"
	// ErrCondDecodeError: data could not be decoded.
	ErrCondDecodeError Symbol = "amqp:decode-error"
	// ErrCondResourceLimitExceeded: a peer exceeded its resource allocation.
	ErrCondResourceLimitExceeded Symbol = "amqp:resource-limit-exceeded"
	// ErrCondNotAllowed: the peer tried to use a frame in a manner that is
	// inconsistent with the semantics defined in the specification.
	ErrCondNotAllowed Symbol = "amqp:not-allowed"
	// ErrCondInvalidField: an invalid field was passed in a frame body, and
	// the operation could not proceed.
	ErrCondInvalidField Symbol = "amqp:invalid-field"
	// ErrCondNotImplemented: the peer tried to use functionality that is not
	// implemented in its partner.
	ErrCondNotImplemented Symbol = "amqp:not-implemented"
	// ErrCondResourceLocked: the client attempted to work with a server
	// entity to which it has no access because another client is working
	// with it.
	ErrCondResourceLocked Symbol = "amqp:resource-locked"
	// ErrCondPreconditionFailed: the client made a request that was not
	// allowed because some precondition failed.
	ErrCondPreconditionFailed Symbol = "amqp:precondition-failed"
	// ErrCondResourceDeleted: a server entity the client is working with has
	// been deleted.
	ErrCondResourceDeleted Symbol = "amqp:resource-deleted"
	// ErrCondIllegalState: the peer sent a frame that is not permitted in the
	// current state.
	ErrCondIllegalState Symbol = "amqp:illegal-state"
	// ErrCondFrameSizeTooSmall: the peer cannot send a frame because the
	// smallest encoding of the performative with the currently valid values
	// would be too large to fit within a frame of the agreed maximum size.
	ErrCondFrameSizeTooSmall Symbol = "amqp:frame-size-too-small"

	// ErrCondConnectionForced: an operator intervened to close the connection.
	ErrCondConnectionForced Symbol = "amqp:connection:forced"
	// ErrCondFramingError: a valid frame header cannot be formed from the
	// incoming byte stream.
	ErrCondFramingError Symbol = "amqp:connection:framing-error"
	// ErrCondConnectionRedirect: the container is no longer available on the
	// current connection.
	ErrCondConnectionRedirect Symbol = "amqp:connection:redirect"

	// ErrCondWindowViolation: the peer violated incoming window for the session.
	ErrCondWindowViolation Symbol = "amqp:session:window-violation"
	// ErrCondErrantLink: input was received for a link that was detached
	// with an error.
	ErrCondErrantLink Symbol = "amqp:session:errant-link"
	// ErrCondHandleInUse: an attach was received using a handle that is
	// already in use for an attached link.
	ErrCondHandleInUse Symbol = "amqp:session:handle-in-use"
	// ErrCondUnattachedHandle: a frame (other than attach) was received
	// referencing a handle which is not currently in use of an attached link.
	ErrCondUnattachedHandle Symbol = "amqp:session:unattached-handle"

	// ErrCondDetachForced: an operator intervened to detach for some reason.
	ErrCondDetachForced Symbol = "amqp:link:detach-forced"
	// ErrCondTransferLimitExceeded: the peer sent more message transfers
	// than currently allowed on the link.
	ErrCondTransferLimitExceeded Symbol = "amqp:link:transfer-limit-exceeded"
	// ErrCondMessageSizeExceeded: the peer sent a larger message than is
	// supported on the link.
	ErrCondMessageSizeExceeded Symbol = "amqp:link:message-size-exceeded"
	// ErrCondLinkRedirect: the address provided cannot be resolved to a
	// terminus at the current container.
	ErrCondLinkRedirect Symbol = "amqp:link:redirect"
	// ErrCondStolen: the link has been attached elsewhere, causing the
	// existing attachment to be forcibly closed.
	ErrCondStolen Symbol = "amqp:link:stolen"

	// ErrCondTransactionUnknownID: the specified txn-id does not exist.
	ErrCondTransactionUnknownID Symbol = "amqp:transaction:unknown-id"
	// ErrCondTransactionRollback: the transaction was rolled back for an
	// unspecified reason.
	ErrCondTransactionRollback Symbol = "amqp:transaction:rollback"
	// ErrCondTransactionTimeout: the work represented by this transaction
	// took too long.
	ErrCondTransactionTimeout Symbol = "amqp:transaction:timeout"
)

// Sentinel errors. Every error the decoders return is an *Error whose
// Condition is the one to send to the peer and which wraps one of these, so
// callers test the cause with errors.Is and get the condition with errors.As.
var (
	// ErrProtocolHeader reports a protocol header that is not one of
	// HeaderAMQP, HeaderSASL or HeaderTLS. AMQP 1.0 §2.2: the server then
	// writes the header it supports and closes the socket, without any
	// Close frame (no connection exists yet).
	ErrProtocolHeader = errors.New("amqp: unsupported protocol header")
	// ErrFrameTooLarge reports a frame larger than Limits.MaxFrameSize.
	ErrFrameTooLarge = errors.New("amqp: frame larger than max-frame-size")
	// ErrMalformedFrame reports a frame header that cannot be valid: size
	// below 8, doff below 2 or past the frame's end, an unknown frame type,
	// a SASL frame outside the SASL exchange or an AMQP frame inside it.
	ErrMalformedFrame = errors.New("amqp: malformed frame")
	// ErrMalformed reports bytes that are not a valid encoding: an unknown
	// constructor, a value running past its end, a compound whose size or
	// count disagrees with its contents, invalid UTF-8 in a string, a
	// non-ASCII symbol, a map with an odd count.
	ErrMalformed = errors.New("amqp: malformed encoding")
	// ErrNestingTooDeep reports values nested deeper than Limits.MaxNesting.
	ErrNestingTooDeep = errors.New("amqp: nesting too deep")
	// ErrTooManyElements reports a list, map or array with more elements
	// than Limits.MaxContainerCount.
	ErrTooManyElements = errors.New("amqp: too many elements")
	// ErrInvalidField reports a well-formed value that does not fit its
	// place: a performative or section field of the wrong type, a missing
	// mandatory field, too many fields, an unknown or unexpected descriptor,
	// an enumerated value out of range, sections out of order.
	ErrInvalidField = errors.New("amqp: invalid field")
)

// Error is the AMQP error composite (AMQP 1.0 §2.8.14, amqp:error:list),
// carried by Close, End, Detach and Rejected. It is also the Go error every
// decoder in this package returns: Condition is what the session sends back,
// Description says what was wrong, and Unwrap yields one of the Err*
// sentinels. Errors decoded from the wire unwrap to nil.
type Error struct {
	// Condition is a symbolic error code, e.g. ErrCondDecodeError.
	// Mandatory.
	Condition Symbol
	// Description is human readable text; "" when absent.
	Description string
	// Info carries supplementary details (fields: symbol keys); nil when
	// absent. For invalid fields ActiveMQ and this package put the field
	// name under the key "invalid-field".
	Info *Map

	err error // sentinel cause; nil for errors decoded from the wire
}

// Error returns "amqp: " followed by the condition without its "amqp:"
// namespace and the description, e.g.
// "amqp: decode-error: open.max-frame-size: uint expected, got string".
func (e *Error) Error() string {
	c := strings.TrimPrefix(string(e.Condition), "amqp:")
	if e.Description == "" {
		return "amqp: " + c
	}
	return "amqp: " + c + ": " + e.Description
}

// Unwrap returns the sentinel this error was built from, or nil.
func (e *Error) Unwrap() error { return e.err }

// Descriptor returns the error composite's descriptor code 0x1d.
func (*Error) Descriptor() uint64 { return codeError }

// newError builds a decode error with its condition and sentinel.
func newError(cond Symbol, sentinel error, format string, args ...any) *Error {
	return &Error{Condition: cond, Description: fmt.Sprintf(format, args...), err: sentinel}
}

// invalidFieldInfo is the Info ActiveMQ attaches to amqp:invalid-field
// errors: {invalid-field: <field name>}.
func invalidFieldInfo(field string) *Map {
	return &Map{Entries: []MapEntry{{Key: Symbol("invalid-field"), Value: Symbol(field)}}}
}
