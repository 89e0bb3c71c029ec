package wire

// SASL frame bodies (AMQP 1.0 §5.3.3). They travel in SASL frames (type
// 0x01) between the "AMQP" 3 1 0 0 header and the sasl-outcome; the
// decoder accepts them only there.

// SASLCode is the outcome of a SASL exchange (AMQP 1.0 §5.3.3.6).
type SASLCode uint8

// SASL outcome codes (§5.3.3.6).
const (
	// SASLOK: the authentication succeeded.
	SASLOK SASLCode = 0
	// SASLAuth: the authentication failed because of bad credentials.
	SASLAuth SASLCode = 1
	// SASLSys: the authentication failed because of a system error.
	SASLSys SASLCode = 2
	// SASLSysPerm: a system error that is unlikely to be corrected
	// without intervention.
	SASLSysPerm SASLCode = 3
	// SASLSysTemp: a transient system error.
	SASLSysTemp SASLCode = 4
)

// SASLMechanisms advertises the server's mechanisms (§5.3.3.1).
type SASLMechanisms struct {
	// Mechanisms offered, in order of preference (ActiveMQ: PLAIN,
	// ANONYMOUS). Mandatory.
	Mechanisms []Symbol
}

// Descriptor returns 0x40.
func (*SASLMechanisms) Descriptor() uint64   { return codeSASLMechanisms }
func (*SASLMechanisms) frameType() FrameType { return FrameSASL }

func decodeSASLMechanisms(r *reader) (Composite, error) {
	f, err := r.composite("sasl-mechanisms", 1)
	if err != nil {
		return nil, err
	}
	m := &SASLMechanisms{Mechanisms: f.mandSymbols("sasl-server-mechanisms")}
	return m, f.finish()
}

func (m *SASLMechanisms) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeSASLMechanisms)
	dst = w.symbols(dst, m.Mechanisms, true)
	return w.end(dst)
}

// SASLInit selects a mechanism and carries the initial response (§5.3.3.2).
type SASLInit struct {
	// Mechanism selected by the client. Mandatory.
	Mechanism Symbol
	// InitialResponse: for PLAIN, authzid NUL authcid NUL password; nil
	// when absent.
	InitialResponse []byte
	// Hostname the client connects to; "" when absent.
	Hostname string
}

// Descriptor returns 0x41.
func (*SASLInit) Descriptor() uint64   { return codeSASLInit }
func (*SASLInit) frameType() FrameType { return FrameSASL }

func decodeSASLInit(r *reader) (Composite, error) {
	f, err := r.composite("sasl-init", 3)
	if err != nil {
		return nil, err
	}
	i := &SASLInit{}
	i.Mechanism = f.mandSymbol("mechanism")
	i.InitialResponse = f.binary("initial-response")
	i.Hostname = f.string("hostname")
	return i, f.finish()
}

func (i *SASLInit) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeSASLInit)
	dst = w.symbol(dst, i.Mechanism, true)
	dst = w.binary(dst, i.InitialResponse, false)
	dst = w.string(dst, i.Hostname, false)
	return w.end(dst)
}

// SASLChallenge carries a server challenge (§5.3.3.3).
type SASLChallenge struct {
	// Challenge data. Mandatory.
	Challenge []byte
}

// Descriptor returns 0x42.
func (*SASLChallenge) Descriptor() uint64   { return codeSASLChallenge }
func (*SASLChallenge) frameType() FrameType { return FrameSASL }

func decodeSASLChallenge(r *reader) (Composite, error) {
	f, err := r.composite("sasl-challenge", 1)
	if err != nil {
		return nil, err
	}
	c := &SASLChallenge{Challenge: f.mandBinary("challenge")}
	return c, f.finish()
}

func (c *SASLChallenge) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeSASLChallenge)
	dst = w.binary(dst, c.Challenge, true)
	return w.end(dst)
}

// SASLResponse carries the client's response to a challenge (§5.3.3.4).
type SASLResponse struct {
	// Response data. Mandatory.
	Response []byte
}

// Descriptor returns 0x43.
func (*SASLResponse) Descriptor() uint64   { return codeSASLResponse }
func (*SASLResponse) frameType() FrameType { return FrameSASL }

func decodeSASLResponse(r *reader) (Composite, error) {
	f, err := r.composite("sasl-response", 1)
	if err != nil {
		return nil, err
	}
	c := &SASLResponse{Response: f.mandBinary("response")}
	return c, f.finish()
}

func (c *SASLResponse) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeSASLResponse)
	dst = w.binary(dst, c.Response, true)
	return w.end(dst)
}

// SASLOutcome ends the SASL exchange (§5.3.3.5).
type SASLOutcome struct {
	// Code is the outcome. Mandatory.
	Code SASLCode
	// AdditionalData for the client; nil when absent.
	AdditionalData []byte
}

// Descriptor returns 0x44.
func (*SASLOutcome) Descriptor() uint64   { return codeSASLOutcome }
func (*SASLOutcome) frameType() FrameType { return FrameSASL }

func decodeSASLOutcome(r *reader) (Composite, error) {
	f, err := r.composite("sasl-outcome", 2)
	if err != nil {
		return nil, err
	}
	o := &SASLOutcome{}
	v, ok := f.ubyte("code")
	if !ok {
		f.missing("code")
	} else if v > uint8(SASLSysTemp) {
		f.invalid("code", "%d is not a SASL code", v)
	}
	o.Code = SASLCode(v)
	o.AdditionalData = f.binary("additional-data")
	return o, f.finish()
}

func (o *SASLOutcome) appendComposite(dst []byte) []byte {
	dst, w := beginList(dst, codeSASLOutcome)
	dst = w.ubyte(dst, uint8(o.Code), false)
	dst = w.binary(dst, o.AdditionalData, false)
	return w.end(dst)
}
