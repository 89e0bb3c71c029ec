package wire

import (
	"math"
	"time"
)

// Performative is the body of a frame: one of the nine AMQP performatives
// (AMQP 1.0 §2.7) or one of the five SASL frame bodies (§5.3.3).
type Performative interface {
	Composite
	frameType() FrameType
}

// Role is a link endpoint's role (AMQP 1.0 §2.8.1): false for the sender,
// true for the receiver.
type Role bool

// Roles (§2.8.1).
const (
	RoleSender   Role = false
	RoleReceiver Role = true
)

// SndSettleMode is the sender settle mode of a link (§2.8.2).
type SndSettleMode uint8

// Sender settle modes (§2.8.2).
const (
	// SndSettleUnsettled: the sender sends all deliveries unsettled.
	SndSettleUnsettled SndSettleMode = 0
	// SndSettleSettled: the sender sends all deliveries settled.
	SndSettleSettled SndSettleMode = 1
	// SndSettleMixed: the sender may send a mixture; the spec's default.
	SndSettleMixed SndSettleMode = 2
)

// RcvSettleMode is the receiver settle mode of a link (§2.8.3).
type RcvSettleMode uint8

// Receiver settle modes (§2.8.3).
const (
	// RcvSettleFirst: the receiver settles spontaneously; the default.
	RcvSettleFirst RcvSettleMode = 0
	// RcvSettleSecond: the receiver settles only after the sender has.
	RcvSettleSecond RcvSettleMode = 1
)

// Open is the first frame on a connection (AMQP 1.0 §2.7.1). Decoding fills
// absent fields with their spec defaults; NewOpen does the same for a new
// value, since MaxFrameSize and ChannelMax default to non-zero values.
type Open struct {
	// ContainerID identifies the source container. Mandatory.
	ContainerID string
	// Hostname is the name of the target host; "" when absent.
	Hostname string
	// MaxFrameSize is the largest frame the sender accepts (bytes).
	// Default 4294967295; the spec's minimum is MinMaxFrameSize.
	MaxFrameSize uint32
	// ChannelMax is the highest channel number that may be used.
	// Default 65535.
	ChannelMax uint16
	// IdleTimeOut is the sender's idle timeout (sent in milliseconds);
	// 0 when absent (no timeout).
	IdleTimeOut time.Duration
	// OutgoingLocales and IncomingLocales are IETF language tags.
	OutgoingLocales []Symbol
	IncomingLocales []Symbol
	// OfferedCapabilities and DesiredCapabilities are extension
	// capabilities (ActiveMQ offers ANONYMOUS-RELAY, DELAYED_DELIVERY).
	OfferedCapabilities []Symbol
	DesiredCapabilities []Symbol
	// Properties are connection properties (symbol keys); nil when absent.
	Properties *Map
}

// NewOpen returns an Open with the spec's defaults: MaxFrameSize
// 4294967295 and ChannelMax 65535.
func NewOpen(containerID string) *Open {
	return &Open{ContainerID: containerID, MaxFrameSize: math.MaxUint32, ChannelMax: math.MaxUint16}
}

// Descriptor returns 0x10.
func (*Open) Descriptor() uint64   { return codeOpen }
func (*Open) frameType() FrameType { return FrameAMQP }

func decodeOpen(r *reader) (Composite, error) {
	f, err := r.composite("open", 10)
	if err != nil {
		return nil, err
	}
	o := &Open{}
	o.ContainerID = f.mandString("container-id")
	o.Hostname = f.string("hostname")
	o.MaxFrameSize = f.uint("max-frame-size", math.MaxUint32)
	o.ChannelMax = math.MaxUint16
	if v, ok := f.ushort("channel-max"); ok {
		o.ChannelMax = v
	}
	o.IdleTimeOut = f.millis("idle-time-out")
	o.OutgoingLocales = f.symbols("outgoing-locales")
	o.IncomingLocales = f.symbols("incoming-locales")
	o.OfferedCapabilities = f.symbols("offered-capabilities")
	o.DesiredCapabilities = f.symbols("desired-capabilities")
	o.Properties = f.fieldsMap("properties")
	return o, f.finish()
}

func (o *Open) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeOpen)
	dst = w.string(dst, o.ContainerID, true)
	dst = w.string(dst, o.Hostname, false)
	dst = w.uint(dst, o.MaxFrameSize, o.MaxFrameSize == math.MaxUint32)
	dst = w.ushort(dst, o.ChannelMax, o.ChannelMax == math.MaxUint16)
	dst = w.millis(dst, o.IdleTimeOut)
	dst = w.symbols(dst, o.OutgoingLocales, false)
	dst = w.symbols(dst, o.IncomingLocales, false)
	dst = w.symbols(dst, o.OfferedCapabilities, false)
	dst = w.symbols(dst, o.DesiredCapabilities, false)
	dst = w.mapv(dst, o.Properties)
	return w.end(dst)
}

// Begin begins a session on a channel (AMQP 1.0 §2.7.2).
type Begin struct {
	// RemoteChannel is the remote channel of the session being answered;
	// nil when the sender initiates the session.
	RemoteChannel *uint16
	// NextOutgoingID is the transfer-id of the sender's next outgoing
	// transfer. Mandatory.
	NextOutgoingID uint32
	// IncomingWindow is the initial incoming window (transfers). Mandatory.
	IncomingWindow uint32
	// OutgoingWindow is the initial outgoing window (transfers). Mandatory.
	OutgoingWindow uint32
	// HandleMax is the highest handle value that may be used on the
	// session. Default 4294967295.
	HandleMax uint32
	// OfferedCapabilities and DesiredCapabilities are session capabilities.
	OfferedCapabilities []Symbol
	DesiredCapabilities []Symbol
	// Properties are session properties (symbol keys); nil when absent.
	Properties *Map
}

// NewBegin returns a Begin with the spec's default HandleMax 4294967295.
func NewBegin(nextOutgoingID, incomingWindow, outgoingWindow uint32) *Begin {
	return &Begin{NextOutgoingID: nextOutgoingID, IncomingWindow: incomingWindow, OutgoingWindow: outgoingWindow, HandleMax: math.MaxUint32}
}

// Descriptor returns 0x11.
func (*Begin) Descriptor() uint64   { return codeBegin }
func (*Begin) frameType() FrameType { return FrameAMQP }

func decodeBegin(r *reader) (Composite, error) {
	f, err := r.composite("begin", 8)
	if err != nil {
		return nil, err
	}
	b := &Begin{}
	if v, ok := f.ushort("remote-channel"); ok {
		b.RemoteChannel = &v
	}
	b.NextOutgoingID = f.mandUint("next-outgoing-id")
	b.IncomingWindow = f.mandUint("incoming-window")
	b.OutgoingWindow = f.mandUint("outgoing-window")
	b.HandleMax = f.uint("handle-max", math.MaxUint32)
	b.OfferedCapabilities = f.symbols("offered-capabilities")
	b.DesiredCapabilities = f.symbols("desired-capabilities")
	b.Properties = f.fieldsMap("properties")
	return b, f.finish()
}

func (b *Begin) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeBegin)
	if b.RemoteChannel == nil {
		dst = w.null(dst)
	} else {
		dst = w.ushort(dst, *b.RemoteChannel, false)
	}
	dst = w.uint(dst, b.NextOutgoingID, false)
	dst = w.uint(dst, b.IncomingWindow, false)
	dst = w.uint(dst, b.OutgoingWindow, false)
	dst = w.uint(dst, b.HandleMax, b.HandleMax == math.MaxUint32)
	dst = w.symbols(dst, b.OfferedCapabilities, false)
	dst = w.symbols(dst, b.DesiredCapabilities, false)
	dst = w.mapv(dst, b.Properties)
	return w.end(dst)
}

// Attach attaches a link to a session (AMQP 1.0 §2.7.3).
type Attach struct {
	// Name is the link name. Mandatory.
	Name string
	// Handle is the handle for the link while attached. Mandatory.
	Handle uint32
	// Role is the role of the sender of this frame. Mandatory.
	Role Role
	// SndSettleMode defaults to SndSettleMixed (see NewAttach).
	SndSettleMode SndSettleMode
	// RcvSettleMode defaults to RcvSettleFirst.
	RcvSettleMode RcvSettleMode
	// Source is the source for messages; nil when absent (a re-attach to a
	// durable subscription by name, for ActiveMQ).
	Source *Source
	// Target is the target for messages: a *Target, a *Coordinator for a
	// transaction controller's link, or nil.
	Target Terminus
	// Unsettled maps delivery-tags (binary) to delivery states, which are
	// left as generic values (Described); nil when absent.
	Unsettled *Map
	// IncompleteUnsettled reports that Unsettled is not complete.
	IncompleteUnsettled bool
	// InitialDeliveryCount is set by a sender; nil when absent.
	InitialDeliveryCount *uint32
	// MaxMessageSize is the largest message accepted on the link (bytes);
	// 0 when absent, meaning no limit.
	MaxMessageSize uint64
	// OfferedCapabilities and DesiredCapabilities are link capabilities.
	OfferedCapabilities []Symbol
	DesiredCapabilities []Symbol
	// Properties are link properties (symbol keys); nil when absent.
	Properties *Map
}

// NewAttach returns an Attach with the spec's default SndSettleMode,
// SndSettleMixed.
func NewAttach(name string, handle uint32, role Role) *Attach {
	return &Attach{Name: name, Handle: handle, Role: role, SndSettleMode: SndSettleMixed}
}

// Descriptor returns 0x12.
func (*Attach) Descriptor() uint64   { return codeAttach }
func (*Attach) frameType() FrameType { return FrameAMQP }

func decodeAttach(r *reader) (Composite, error) {
	f, err := r.composite("attach", 14)
	if err != nil {
		return nil, err
	}
	a := &Attach{}
	a.Name = f.mandString("name")
	a.Handle = f.mandUint("handle")
	role, ok := f.boolField("role")
	if !ok {
		f.missing("role")
	}
	a.Role = Role(role)
	a.SndSettleMode = SndSettleMixed
	if v, ok := f.ubyte("snd-settle-mode"); ok {
		if v > uint8(SndSettleMixed) {
			f.invalid("snd-settle-mode", "%d is not a sender settle mode", v)
		}
		a.SndSettleMode = SndSettleMode(v)
	}
	if v, ok := f.ubyte("rcv-settle-mode"); ok {
		if v > uint8(RcvSettleSecond) {
			f.invalid("rcv-settle-mode", "%d is not a receiver settle mode", v)
		}
		a.RcvSettleMode = RcvSettleMode(v)
	}
	if s, ok := f.composite("source", codeSource).(*Source); ok {
		a.Source = s
	}
	if t, ok := f.composite("target", codeTarget, codeCoordinator).(Terminus); ok {
		a.Target = t
	}
	a.Unsettled = f.mapField("unsettled", nil)
	a.IncompleteUnsettled = f.bool("incomplete-unsettled")
	a.InitialDeliveryCount = f.optUint("initial-delivery-count")
	a.MaxMessageSize, _ = f.ulong("max-message-size")
	a.OfferedCapabilities = f.symbols("offered-capabilities")
	a.DesiredCapabilities = f.symbols("desired-capabilities")
	a.Properties = f.fieldsMap("properties")
	return a, f.finish()
}

func (a *Attach) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeAttach)
	dst = w.string(dst, a.Name, true)
	dst = w.uint(dst, a.Handle, false)
	dst = w.mandBool(dst, bool(a.Role))
	dst = w.ubyte(dst, uint8(a.SndSettleMode), a.SndSettleMode == SndSettleMixed)
	dst = w.ubyte(dst, uint8(a.RcvSettleMode), a.RcvSettleMode == RcvSettleFirst)
	if a.Source == nil {
		dst = w.null(dst)
	} else {
		dst = w.composite(dst, a.Source)
	}
	dst = w.composite(dst, a.Target)
	dst = w.mapv(dst, a.Unsettled)
	dst = w.bool(dst, a.IncompleteUnsettled)
	dst = w.optUint(dst, a.InitialDeliveryCount)
	dst = w.ulong(dst, a.MaxMessageSize, a.MaxMessageSize == 0)
	dst = w.symbols(dst, a.OfferedCapabilities, false)
	dst = w.symbols(dst, a.DesiredCapabilities, false)
	dst = w.mapv(dst, a.Properties)
	return w.end(dst)
}

// Flow updates link and session flow-control state (AMQP 1.0 §2.7.4).
// Optional numbers whose absence means something are pointers; Go 1.26's
// new(v) makes one in place.
type Flow struct {
	// NextIncomingID is nil until the sender has seen the peer's Begin.
	NextIncomingID *uint32
	// IncomingWindow (transfers). Mandatory.
	IncomingWindow uint32
	// NextOutgoingID. Mandatory.
	NextOutgoingID uint32
	// OutgoingWindow (transfers). Mandatory.
	OutgoingWindow uint32
	// Handle is nil for a session-only flow.
	Handle *uint32
	// DeliveryCount, LinkCredit and Available are link flow state; nil
	// when absent.
	DeliveryCount *uint32
	LinkCredit    *uint32
	Available     *uint32
	// Drain asks the sender to use up its credit.
	Drain bool
	// Echo asks the peer to reply with its own flow state.
	Echo bool
	// Properties are link state properties (symbol keys); nil when absent.
	Properties *Map
}

// Descriptor returns 0x13.
func (*Flow) Descriptor() uint64   { return codeFlow }
func (*Flow) frameType() FrameType { return FrameAMQP }

// flowBox holds a Flow and the targets of its pointer fields, so decoding
// one costs a single allocation.
type flowBox struct {
	f                                                Flow
	nextIncomingID, handle, count, credit, available uint32
}

func decodeFlow(r *reader) (Composite, error) {
	f, err := r.composite("flow", 11)
	if err != nil {
		return nil, err
	}
	box := &flowBox{}
	fl := &box.f
	if v, ok := f.uintField("next-incoming-id"); ok {
		box.nextIncomingID, fl.NextIncomingID = v, &box.nextIncomingID
	}
	fl.IncomingWindow = f.mandUint("incoming-window")
	fl.NextOutgoingID = f.mandUint("next-outgoing-id")
	fl.OutgoingWindow = f.mandUint("outgoing-window")
	if v, ok := f.uintField("handle"); ok {
		box.handle, fl.Handle = v, &box.handle
	}
	if v, ok := f.uintField("delivery-count"); ok {
		box.count, fl.DeliveryCount = v, &box.count
	}
	if v, ok := f.uintField("link-credit"); ok {
		box.credit, fl.LinkCredit = v, &box.credit
	}
	if v, ok := f.uintField("available"); ok {
		box.available, fl.Available = v, &box.available
	}
	fl.Drain = f.bool("drain")
	fl.Echo = f.bool("echo")
	fl.Properties = f.fieldsMap("properties")
	return fl, f.finish()
}

func (fl *Flow) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeFlow)
	dst = w.optUint(dst, fl.NextIncomingID)
	dst = w.uint(dst, fl.IncomingWindow, false)
	dst = w.uint(dst, fl.NextOutgoingID, false)
	dst = w.uint(dst, fl.OutgoingWindow, false)
	dst = w.optUint(dst, fl.Handle)
	dst = w.optUint(dst, fl.DeliveryCount)
	dst = w.optUint(dst, fl.LinkCredit)
	dst = w.optUint(dst, fl.Available)
	dst = w.bool(dst, fl.Drain)
	dst = w.bool(dst, fl.Echo)
	dst = w.mapv(dst, fl.Properties)
	return w.end(dst)
}

// Transfer transfers (part of) a message over a link (AMQP 1.0 §2.7.5).
// The frame's Payload holds the message bytes. A message split over several
// frames has More set on all but the last (§2.6.14); continuation frames
// may omit DeliveryID, DeliveryTag and MessageFormat, and joining them is
// the session's work, as is discarding an Aborted delivery.
type Transfer struct {
	// Handle of the link. Mandatory.
	Handle uint32
	// DeliveryID is nil on continuation frames.
	DeliveryID *uint32
	// DeliveryTag is nil when absent (continuation frames).
	DeliveryTag []byte
	// MessageFormat is nil when absent; 0 is the standard AMQP format.
	MessageFormat *uint32
	// Settled is nil when absent: false on a first frame, inherited on
	// continuation frames.
	Settled *bool
	// More is set when further frames of the delivery follow.
	More bool
	// RcvSettleMode overrides the link's mode for this delivery; nil when
	// absent.
	RcvSettleMode *RcvSettleMode
	// State is the delivery state; nil when absent.
	State DeliveryState
	// Resume marks a resumed delivery.
	Resume bool
	// Aborted tells the receiver to discard the delivery.
	Aborted bool
	// Batchable hints that the peer may delay the disposition.
	Batchable bool
}

// Descriptor returns 0x14.
func (*Transfer) Descriptor() uint64   { return codeTransfer }
func (*Transfer) frameType() FrameType { return FrameAMQP }

// transferBox holds a Transfer and the targets of its pointer fields, so
// decoding one costs a single allocation.
type transferBox struct {
	t               Transfer
	deliveryID, fmt uint32
	settled         bool
	rcvSettleMode   RcvSettleMode
}

func decodeTransfer(r *reader) (Composite, error) {
	f, err := r.composite("transfer", 11)
	if err != nil {
		return nil, err
	}
	var box *transferBox
	if r.arena != nil {
		box = r.arena.transfer()
	} else {
		box = &transferBox{}
	}
	t := &box.t
	t.Handle = f.mandUint("handle")
	if v, ok := f.uintField("delivery-id"); ok {
		box.deliveryID, t.DeliveryID = v, &box.deliveryID
	}
	t.DeliveryTag = f.binary("delivery-tag")
	if v, ok := f.uintField("message-format"); ok {
		box.fmt, t.MessageFormat = v, &box.fmt
	}
	if v, ok := f.boolField("settled"); ok {
		box.settled, t.Settled = v, &box.settled
	}
	t.More = f.bool("more")
	if v, ok := f.ubyte("rcv-settle-mode"); ok {
		if v > uint8(RcvSettleSecond) {
			f.invalid("rcv-settle-mode", "%d is not a receiver settle mode", v)
		}
		box.rcvSettleMode, t.RcvSettleMode = RcvSettleMode(v), &box.rcvSettleMode
	}
	t.State = deliveryState(f.composite("state", deliveryStateCodes...))
	t.Resume = f.bool("resume")
	t.Aborted = f.bool("aborted")
	t.Batchable = f.bool("batchable")
	return t, f.finish()
}

// Clone returns a copy of t whose pointer fields point to values of its
// own (a decoder with ReuseBodies reuses t's); DeliveryTag and State are
// shared, being the frame's own.
func (t *Transfer) Clone() *Transfer {
	box := &transferBox{t: *t}
	c := &box.t
	if t.DeliveryID != nil {
		box.deliveryID, c.DeliveryID = *t.DeliveryID, &box.deliveryID
	}
	if t.MessageFormat != nil {
		box.fmt, c.MessageFormat = *t.MessageFormat, &box.fmt
	}
	if t.Settled != nil {
		box.settled, c.Settled = *t.Settled, &box.settled
	}
	if t.RcvSettleMode != nil {
		box.rcvSettleMode, c.RcvSettleMode = *t.RcvSettleMode, &box.rcvSettleMode
	}
	return c
}

func (t *Transfer) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeTransfer)
	dst = w.uint(dst, t.Handle, false)
	dst = w.optUint(dst, t.DeliveryID)
	dst = w.binary(dst, t.DeliveryTag, false)
	dst = w.optUint(dst, t.MessageFormat)
	dst = w.optBool(dst, t.Settled)
	dst = w.bool(dst, t.More)
	if t.RcvSettleMode == nil {
		dst = w.null(dst)
	} else {
		dst = w.ubyte(dst, uint8(*t.RcvSettleMode), false)
	}
	dst = w.composite(dst, t.State)
	dst = w.bool(dst, t.Resume)
	dst = w.bool(dst, t.Aborted)
	dst = w.bool(dst, t.Batchable)
	return w.end(dst)
}

// Disposition informs the peer of delivery state changes (AMQP 1.0 §2.7.6).
type Disposition struct {
	// Role of the sender of this frame. Mandatory.
	Role Role
	// First is the lower bound of the deliveries. Mandatory.
	First uint32
	// Last is the upper bound; nil means First.
	Last *uint32
	// Settled marks the deliveries settled.
	Settled bool
	// State is the new delivery state; nil when absent.
	State DeliveryState
	// Batchable hints that the peer may delay its reply.
	Batchable bool
}

// Descriptor returns 0x15.
func (*Disposition) Descriptor() uint64   { return codeDisposition }
func (*Disposition) frameType() FrameType { return FrameAMQP }

// dispositionBox holds a Disposition and the target of Last, so that
// decoding one costs a single allocation, or none from an arena.
type dispositionBox struct {
	d    Disposition
	last uint32
}

func decodeDisposition(r *reader) (Composite, error) {
	f, err := r.composite("disposition", 6)
	if err != nil {
		return nil, err
	}
	var box *dispositionBox
	if r.arena != nil {
		box = r.arena.disposition()
	} else {
		box = &dispositionBox{}
	}
	d := &box.d
	role, ok := f.boolField("role")
	if !ok {
		f.missing("role")
	}
	d.Role = Role(role)
	d.First = f.mandUint("first")
	if v, ok := f.uintField("last"); ok {
		box.last, d.Last = v, &box.last
	}
	d.Settled = f.bool("settled")
	d.State = deliveryState(f.composite("state", deliveryStateCodes...))
	d.Batchable = f.bool("batchable")
	return d, f.finish()
}

func (d *Disposition) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeDisposition)
	dst = w.mandBool(dst, bool(d.Role))
	dst = w.uint(dst, d.First, false)
	dst = w.optUint(dst, d.Last)
	dst = w.bool(dst, d.Settled)
	dst = w.composite(dst, d.State)
	dst = w.bool(dst, d.Batchable)
	return w.end(dst)
}

// Detach detaches a link endpoint from its session (AMQP 1.0 §2.7.7).
type Detach struct {
	// Handle of the link. Mandatory.
	Handle uint32
	// Closed asks for the link to be closed, not just detached (for
	// ActiveMQ, closing a durable subscriber's link removes the
	// subscription).
	Closed bool
	// Error is the reason; nil when absent.
	Error *Error
}

// Descriptor returns 0x16.
func (*Detach) Descriptor() uint64   { return codeDetach }
func (*Detach) frameType() FrameType { return FrameAMQP }

func decodeDetach(r *reader) (Composite, error) {
	f, err := r.composite("detach", 3)
	if err != nil {
		return nil, err
	}
	d := &Detach{}
	d.Handle = f.mandUint("handle")
	d.Closed = f.bool("closed")
	d.Error = errorField(&f)
	return d, f.finish()
}

func (d *Detach) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeDetach)
	dst = w.uint(dst, d.Handle, false)
	dst = w.bool(dst, d.Closed)
	dst = w.errorField(dst, d.Error)
	return w.end(dst)
}

// End ends a session (AMQP 1.0 §2.7.8).
type End struct {
	// Error is the reason; nil when absent.
	Error *Error
}

// Descriptor returns 0x17.
func (*End) Descriptor() uint64   { return codeEnd }
func (*End) frameType() FrameType { return FrameAMQP }

func decodeEnd(r *reader) (Composite, error) {
	f, err := r.composite("end", 1)
	if err != nil {
		return nil, err
	}
	e := &End{Error: errorField(&f)}
	return e, f.finish()
}

func (e *End) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeEnd)
	dst = w.errorField(dst, e.Error)
	return w.end(dst)
}

// Close closes the connection (AMQP 1.0 §2.7.9).
type Close struct {
	// Error is the reason; nil when absent.
	Error *Error
}

// Descriptor returns 0x18.
func (*Close) Descriptor() uint64   { return codeClose }
func (*Close) frameType() FrameType { return FrameAMQP }

func decodeClose(r *reader) (Composite, error) {
	f, err := r.composite("close", 1)
	if err != nil {
		return nil, err
	}
	c := &Close{Error: errorField(&f)}
	return c, f.finish()
}

func (c *Close) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeClose)
	dst = w.errorField(dst, c.Error)
	return w.end(dst)
}

func decodeError(r *reader) (Composite, error) {
	f, err := r.composite("error", 3)
	if err != nil {
		return nil, err
	}
	e := &Error{}
	e.Condition = f.mandSymbol("condition")
	e.Description = f.string("description")
	e.Info = f.fieldsMap("info")
	return e, f.finish()
}

func (e *Error) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeError)
	dst = w.symbol(dst, e.Condition, true)
	dst = w.string(dst, e.Description, false)
	dst = w.mapv(dst, e.Info)
	return w.end(dst)
}

// errorField reads an optional error field.
func errorField(f *fields) *Error {
	e, _ := f.composite("error", codeError).(*Error)
	return e
}

func (w *listWriter) errorField(dst []byte, e *Error) []byte {
	if e == nil {
		return w.null(dst)
	}
	return w.kept(e.appendComposite(dst))
}
