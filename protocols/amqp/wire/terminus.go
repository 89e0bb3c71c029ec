package wire

import "time"

// Terminus is the source or target of a link: *Source, *Target or
// *Coordinator (AMQP 1.0 §3.5, §4.5.1).
type Terminus interface {
	Composite
	terminus()
}

// TerminusDurability says what state of a terminus is retained durably
// (AMQP 1.0 §3.5.5).
type TerminusDurability uint32

// Terminus durabilities (§3.5.5).
const (
	// DurableNone: no terminus state is retained durably; the default.
	DurableNone TerminusDurability = 0
	// DurableConfiguration: only the existence and configuration of the
	// terminus is retained durably.
	DurableConfiguration TerminusDurability = 1
	// DurableUnsettledState: the terminus and its unsettled state are
	// retained durably (ActiveMQ: a durable topic subscription).
	DurableUnsettledState TerminusDurability = 2
)

// Terminus expiry policies (AMQP 1.0 §3.5.6).
const (
	ExpiryLinkDetach      Symbol = "link-detach"
	ExpirySessionEnd      Symbol = "session-end" // the default
	ExpiryConnectionClose Symbol = "connection-close"
	ExpiryNever           Symbol = "never"
)

// Distribution modes of a source (AMQP 1.0 §3.5.7). ActiveMQ browses a
// queue for a source with DistModeCopy.
const (
	DistModeMove Symbol = "move"
	DistModeCopy Symbol = "copy"
)

func validExpiry(s Symbol) bool {
	switch s {
	case ExpiryLinkDetach, ExpirySessionEnd, ExpiryConnectionClose, ExpiryNever:
		return true
	}
	return false
}

// Source is the source of a link (AMQP 1.0 §3.5.3).
type Source struct {
	// Address of the source; "" when absent (a dynamic source request).
	Address string
	// Durable defaults to DurableNone.
	Durable TerminusDurability
	// ExpiryPolicy is one of the Expiry* symbols; decoding gives
	// ExpirySessionEnd when absent, and encoding omits "" and
	// ExpirySessionEnd alike.
	ExpiryPolicy Symbol
	// Timeout is how long an expiring source is retained (sent in
	// seconds); 0 by default.
	Timeout time.Duration
	// Dynamic asks the peer to create a node.
	Dynamic bool
	// DynamicNodeProperties are the properties of a dynamic node (symbol
	// keys); nil when absent.
	DynamicNodeProperties *Map
	// DistributionMode is DistModeMove, DistModeCopy or "" when absent.
	DistributionMode Symbol
	// Filter is the filter-set (symbol keys, described filter values, as
	// apache.org:selector-filter:string); nil when absent.
	Filter *Map
	// DefaultOutcome is the outcome for unsettled transfers; nil when
	// absent.
	DefaultOutcome DeliveryState
	// Outcomes are the descriptors of the outcomes that may be chosen.
	Outcomes []Symbol
	// Capabilities of the source.
	Capabilities []Symbol
}

// Descriptor returns 0x28.
func (*Source) Descriptor() uint64 { return codeSource }
func (*Source) terminus()          {}

func decodeSource(r *reader) (Composite, error) {
	f, err := r.composite("source", 11)
	if err != nil {
		return nil, err
	}
	s := &Source{}
	s.Address = addressField(&f)
	s.Durable = durableField(&f)
	s.ExpiryPolicy = expiryField(&f)
	s.Timeout = time.Duration(f.uint("timeout", 0)) * time.Second
	s.Dynamic = f.bool("dynamic")
	s.DynamicNodeProperties = f.fieldsMap("dynamic-node-properties")
	s.DistributionMode = f.symbol("distribution-mode")
	s.Filter = f.fieldsMap("filter")
	s.DefaultOutcome = deliveryState(f.composite("default-outcome", outcomeCodes...))
	s.Outcomes = f.symbols("outcomes")
	s.Capabilities = f.symbols("capabilities")
	return s, f.finish()
}

func (s *Source) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeSource)
	dst = w.string(dst, s.Address, false)
	dst = w.uint(dst, uint32(s.Durable), s.Durable == DurableNone)
	dst = w.expiry(dst, s.ExpiryPolicy)
	dst = w.uint(dst, durationUnits(s.Timeout, time.Second), s.Timeout < time.Second)
	dst = w.bool(dst, s.Dynamic)
	dst = w.mapv(dst, s.DynamicNodeProperties)
	dst = w.symbol(dst, s.DistributionMode, false)
	dst = w.mapv(dst, s.Filter)
	dst = w.composite(dst, s.DefaultOutcome)
	dst = w.symbols(dst, s.Outcomes, false)
	dst = w.symbols(dst, s.Capabilities, false)
	return w.end(dst)
}

// Target is the target of a link (AMQP 1.0 §3.5.4).
type Target struct {
	// Address of the target; "" when absent (a dynamic target request, or
	// ActiveMQ's anonymous relay).
	Address string
	// Durable defaults to DurableNone.
	Durable TerminusDurability
	// ExpiryPolicy: as Source.ExpiryPolicy.
	ExpiryPolicy Symbol
	// Timeout is how long an expiring target is retained (sent in
	// seconds).
	Timeout time.Duration
	// Dynamic asks the peer to create a node.
	Dynamic bool
	// DynamicNodeProperties (symbol keys); nil when absent.
	DynamicNodeProperties *Map
	// Capabilities of the target (ActiveMQ reads "temporary-topic" etc.).
	Capabilities []Symbol
}

// Descriptor returns 0x29.
func (*Target) Descriptor() uint64 { return codeTarget }
func (*Target) terminus()          {}

func decodeTarget(r *reader) (Composite, error) {
	f, err := r.composite("target", 7)
	if err != nil {
		return nil, err
	}
	t := &Target{}
	t.Address = addressField(&f)
	t.Durable = durableField(&f)
	t.ExpiryPolicy = expiryField(&f)
	t.Timeout = time.Duration(f.uint("timeout", 0)) * time.Second
	t.Dynamic = f.bool("dynamic")
	t.DynamicNodeProperties = f.fieldsMap("dynamic-node-properties")
	t.Capabilities = f.symbols("capabilities")
	return t, f.finish()
}

func (t *Target) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeTarget)
	dst = w.string(dst, t.Address, false)
	dst = w.uint(dst, uint32(t.Durable), t.Durable == DurableNone)
	dst = w.expiry(dst, t.ExpiryPolicy)
	dst = w.uint(dst, durationUnits(t.Timeout, time.Second), t.Timeout < time.Second)
	dst = w.bool(dst, t.Dynamic)
	dst = w.mapv(dst, t.DynamicNodeProperties)
	dst = w.symbols(dst, t.Capabilities, false)
	return w.end(dst)
}

// expiry writes an expiry policy; "" and the default are omitted.
func (w *listWriter) expiry(dst []byte, v Symbol) []byte {
	if v == "" || v == ExpirySessionEnd {
		return w.null(dst)
	}
	return w.kept(appendSymbol(dst, v))
}

// addressField reads an address. AMQP 1.0 §3.5.3 types it "*" requiring
// address; address-string is the only address type the spec defines and the
// only one ActiveMQ (Proton-J's Source.getAddress) accepts.
func addressField(f *fields) string {
	c, ok := f.next()
	if !ok {
		return ""
	}
	if c != codeStr8 && c != codeStr32 {
		f.wrongType("address", "string", c)
		return ""
	}
	s, err := f.r.stringOf(c)
	f.check(err)
	return s
}

func durableField(f *fields) TerminusDurability {
	v := f.uint("durable", 0)
	if v > uint32(DurableUnsettledState) {
		f.invalid("durable", "%d is not a terminus durability", v)
	}
	return TerminusDurability(v)
}

func expiryField(f *fields) Symbol {
	s, ok := f.symbolField("expiry-policy")
	if !ok {
		return ExpirySessionEnd
	}
	if !validExpiry(s) {
		f.invalid("expiry-policy", "%q is not a terminus expiry policy", string(s))
	}
	return s
}

// Coordinator is the target of a transaction controller's link (AMQP 1.0
// §4.5.1).
type Coordinator struct {
	// Capabilities: the transaction capabilities the controller desires
	// (amqp:local-transactions, ...).
	Capabilities []Symbol
}

// Descriptor returns 0x30.
func (*Coordinator) Descriptor() uint64 { return codeCoordinator }
func (*Coordinator) terminus()          {}

func decodeCoordinator(r *reader) (Composite, error) {
	f, err := r.composite("coordinator", 1)
	if err != nil {
		return nil, err
	}
	c := &Coordinator{Capabilities: f.symbols("capabilities")}
	return c, f.finish()
}

func (c *Coordinator) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeCoordinator)
	dst = w.symbols(dst, c.Capabilities, false)
	return w.end(dst)
}

// DeliveryState is the state of a delivery (AMQP 1.0 §2.6.12, §3.4):
// *Received, or an outcome (*Accepted, *Rejected, *Released, *Modified,
// *Declared), or *TransactionalState.
type DeliveryState interface {
	Composite
	deliveryState()
}

var deliveryStateCodes = []uint64{codeAccepted, codeReceived, codeRejected, codeReleased,
	codeModified, codeDeclared, codeTransactionalState}

// outcomeCodes are the delivery states that are outcomes (§3.4, §4.5.5).
var outcomeCodes = []uint64{codeAccepted, codeRejected, codeReleased, codeModified, codeDeclared}

func deliveryState(c Composite) DeliveryState {
	s, _ := c.(DeliveryState)
	return s
}

// Received is the partial state of a delivery (AMQP 1.0 §3.4.1).
type Received struct {
	// SectionNumber of the first section not fully received. Mandatory.
	SectionNumber uint32
	// SectionOffset of the first byte not yet received in that section.
	// Mandatory.
	SectionOffset uint64
}

// Descriptor returns 0x23.
func (*Received) Descriptor() uint64 { return codeReceived }
func (*Received) deliveryState()     {}

func decodeReceived(r *reader) (Composite, error) {
	f, err := r.composite("received", 2)
	if err != nil {
		return nil, err
	}
	s := &Received{}
	s.SectionNumber = f.mandUint("section-number")
	v, ok := f.ulong("section-offset")
	if !ok {
		f.missing("section-offset")
	}
	s.SectionOffset = v
	return s, f.finish()
}

func (s *Received) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeReceived)
	dst = w.uint(dst, s.SectionNumber, false)
	dst = w.ulong(dst, s.SectionOffset, false)
	return w.end(dst)
}

// Accepted is the outcome of a message that was processed (§3.4.2).
type Accepted struct{}

// Descriptor returns 0x24.
func (*Accepted) Descriptor() uint64 { return codeAccepted }
func (*Accepted) deliveryState()     {}

func decodeAccepted(r *reader) (Composite, error) {
	f, err := r.composite("accepted", 0)
	if err != nil {
		return nil, err
	}
	return &Accepted{}, f.finish()
}

func (*Accepted) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeAccepted)
	return w.end(dst)
}

// Rejected is the outcome of an invalid, unprocessable message (§3.4.3);
// ActiveMQ sends the message to the DLQ.
type Rejected struct {
	// Error says why; nil when absent.
	Error *Error
}

// Descriptor returns 0x25.
func (*Rejected) Descriptor() uint64 { return codeRejected }
func (*Rejected) deliveryState()     {}

func decodeRejected(r *reader) (Composite, error) {
	f, err := r.composite("rejected", 1)
	if err != nil {
		return nil, err
	}
	s := &Rejected{Error: errorField(&f)}
	return s, f.finish()
}

func (s *Rejected) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeRejected)
	dst = w.errorField(dst, s.Error)
	return w.end(dst)
}

// Released is the outcome of a message that was not and will not be
// processed (§3.4.4); it may be redelivered without counting an attempt.
type Released struct{}

// Descriptor returns 0x26.
func (*Released) Descriptor() uint64 { return codeReleased }
func (*Released) deliveryState()     {}

func decodeReleased(r *reader) (Composite, error) {
	f, err := r.composite("released", 0)
	if err != nil {
		return nil, err
	}
	return &Released{}, f.finish()
}

func (*Released) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeReleased)
	return w.end(dst)
}

// Modified is the outcome of a message that was modified but not processed
// (§3.4.5).
type Modified struct {
	// DeliveryFailed counts the delivery as an unsuccessful attempt.
	DeliveryFailed bool
	// UndeliverableHere asks not to redeliver to this link.
	UndeliverableHere bool
	// MessageAnnotations to merge into the message (symbol or ulong
	// keys); nil when absent.
	MessageAnnotations *Map
}

// Descriptor returns 0x27.
func (*Modified) Descriptor() uint64 { return codeModified }
func (*Modified) deliveryState()     {}

func decodeModified(r *reader) (Composite, error) {
	f, err := r.composite("modified", 3)
	if err != nil {
		return nil, err
	}
	s := &Modified{}
	s.DeliveryFailed = f.bool("delivery-failed")
	s.UndeliverableHere = f.bool("undeliverable-here")
	s.MessageAnnotations = f.mapField("message-annotations", annotationKey)
	return s, f.finish()
}

func (s *Modified) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeModified)
	dst = w.bool(dst, s.DeliveryFailed)
	dst = w.bool(dst, s.UndeliverableHere)
	dst = w.mapv(dst, s.MessageAnnotations)
	return w.end(dst)
}

// Declare asks a coordinator to declare a transaction (AMQP 1.0 §4.5.2). It
// arrives as the AmqpValue body of a message on a coordinator link; see
// DecodeComposite.
type Declare struct {
	// GlobalID is a global transaction id (distributed transactions are
	// not defined by the spec); nil when absent.
	GlobalID any
}

// Descriptor returns 0x31.
func (*Declare) Descriptor() uint64 { return codeDeclare }

func decodeDeclare(r *reader) (Composite, error) {
	f, err := r.composite("declare", 1)
	if err != nil {
		return nil, err
	}
	d := &Declare{GlobalID: f.value("global-id")}
	return d, f.finish()
}

func (d *Declare) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeDeclare)
	dst = w.value(dst, d.GlobalID)
	return w.end(dst)
}

// Discharge asks a coordinator to commit or roll back a transaction (AMQP
// 1.0 §4.5.3), as the AmqpValue body of a message on a coordinator link.
type Discharge struct {
	// TxnID identifies the transaction. Mandatory.
	TxnID []byte
	// Fail asks for a rollback.
	Fail bool
}

// Descriptor returns 0x32.
func (*Discharge) Descriptor() uint64 { return codeDischarge }

func decodeDischarge(r *reader) (Composite, error) {
	f, err := r.composite("discharge", 2)
	if err != nil {
		return nil, err
	}
	d := &Discharge{}
	d.TxnID = f.mandBinary("txn-id")
	d.Fail = f.bool("fail")
	return d, f.finish()
}

func (d *Discharge) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeDischarge)
	dst = w.binary(dst, d.TxnID, true)
	dst = w.bool(dst, d.Fail)
	return w.end(dst)
}

// Declared is the outcome of a successful Declare (AMQP 1.0 §4.5.4).
type Declared struct {
	// TxnID is the new transaction's id. Mandatory. ActiveMQ sends the
	// 8-byte big-endian LocalTransactionId value.
	TxnID []byte
}

// Descriptor returns 0x33.
func (*Declared) Descriptor() uint64 { return codeDeclared }
func (*Declared) deliveryState()     {}

func decodeDeclared(r *reader) (Composite, error) {
	f, err := r.composite("declared", 1)
	if err != nil {
		return nil, err
	}
	d := &Declared{TxnID: f.mandBinary("txn-id")}
	return d, f.finish()
}

func (d *Declared) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeDeclared)
	dst = w.binary(dst, d.TxnID, true)
	return w.end(dst)
}

// TransactionalState is the state of a transactional delivery (AMQP 1.0
// §4.5.5).
type TransactionalState struct {
	// TxnID identifies the transaction. Mandatory.
	TxnID []byte
	// Outcome is the provisional outcome; nil when absent.
	Outcome DeliveryState
}

// Descriptor returns 0x34.
func (*TransactionalState) Descriptor() uint64 { return codeTransactionalState }
func (*TransactionalState) deliveryState()     {}

func decodeTransactionalState(r *reader) (Composite, error) {
	f, err := r.composite("transactional-state", 2)
	if err != nil {
		return nil, err
	}
	s := &TransactionalState{}
	s.TxnID = f.mandBinary("txn-id")
	s.Outcome = deliveryState(f.composite("outcome", outcomeCodes...))
	return s, f.finish()
}

func (s *TransactionalState) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeTransactionalState)
	dst = w.binary(dst, s.TxnID, true)
	dst = w.composite(dst, s.Outcome)
	return w.end(dst)
}

// isNilComposite reports an interface holding a nil pointer, which encodes
// as an absent field.
func isNilComposite(c Composite) bool {
	switch x := c.(type) {
	case *Open:
		return x == nil
	case *Begin:
		return x == nil
	case *Attach:
		return x == nil
	case *Flow:
		return x == nil
	case *Transfer:
		return x == nil
	case *Disposition:
		return x == nil
	case *Detach:
		return x == nil
	case *End:
		return x == nil
	case *Close:
		return x == nil
	case *Error:
		return x == nil
	case *Source:
		return x == nil
	case *Target:
		return x == nil
	case *Coordinator:
		return x == nil
	case *Received:
		return x == nil
	case *Accepted:
		return x == nil
	case *Rejected:
		return x == nil
	case *Released:
		return x == nil
	case *Modified:
		return x == nil
	case *Declare:
		return x == nil
	case *Discharge:
		return x == nil
	case *Declared:
		return x == nil
	case *TransactionalState:
		return x == nil
	case *SASLMechanisms:
		return x == nil
	case *SASLInit:
		return x == nil
	case *SASLChallenge:
		return x == nil
	case *SASLResponse:
		return x == nil
	case *SASLOutcome:
		return x == nil
	}
	return false
}
