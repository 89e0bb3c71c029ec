package wire

// MQTT 5 property identifiers (MQTT 5 §2.2.2.2, Table 2-4).
const (
	propPayloadFormat        = 0x01
	propMessageExpiry        = 0x02
	propContentType          = 0x03
	propResponseTopic        = 0x08
	propCorrelationData      = 0x09
	propSubscriptionID       = 0x0B
	propSessionExpiry        = 0x11
	propAssignedClientID     = 0x12
	propServerKeepAlive      = 0x13
	propAuthMethod           = 0x15
	propAuthData             = 0x16
	propRequestProblemInfo   = 0x17
	propWillDelay            = 0x18
	propRequestResponseInfo  = 0x19
	propResponseInfo         = 0x1A
	propServerReference      = 0x1C
	propReasonString         = 0x1F
	propReceiveMaximum       = 0x21
	propTopicAliasMaximum    = 0x22
	propTopicAlias           = 0x23
	propMaximumQoS           = 0x24
	propRetainAvailable      = 0x25
	propUser                 = 0x26
	propMaximumPacketSize    = 0x27
	propWildcardSubAvailable = 0x28
	propSubIDAvailable       = 0x29
	propSharedSubAvailable   = 0x2A
)

// willScope stands for the will properties of a CONNECT in propAllowed:
// packet type 0 is reserved, so its bit is free.
const willScope Type = 0

// propInfo is one row of Table 2-4: the property's name and where it may
// appear.
type propInfo struct {
	name string
	in   typeSet
}

// propTable is MQTT 5 §2.2.2.2 Table 2-4. A property in a packet its row does
// not list makes the packet malformed (§2.2.2.2).
var propTable = [propSharedSubAvailable + 1]propInfo{
	propPayloadFormat:        {"Payload Format Indicator", types(PUBLISH, willScope)},
	propMessageExpiry:        {"Message Expiry Interval", types(PUBLISH, willScope)},
	propContentType:          {"Content Type", types(PUBLISH, willScope)},
	propResponseTopic:        {"Response Topic", types(PUBLISH, willScope)},
	propCorrelationData:      {"Correlation Data", types(PUBLISH, willScope)},
	propSubscriptionID:       {"Subscription Identifier", types(PUBLISH, SUBSCRIBE)},
	propSessionExpiry:        {"Session Expiry Interval", types(CONNECT, CONNACK, DISCONNECT)},
	propAssignedClientID:     {"Assigned Client Identifier", types(CONNACK)},
	propServerKeepAlive:      {"Server Keep Alive", types(CONNACK)},
	propAuthMethod:           {"Authentication Method", types(CONNECT, CONNACK, AUTH)},
	propAuthData:             {"Authentication Data", types(CONNECT, CONNACK, AUTH)},
	propRequestProblemInfo:   {"Request Problem Information", types(CONNECT)},
	propWillDelay:            {"Will Delay Interval", types(willScope)},
	propRequestResponseInfo:  {"Request Response Information", types(CONNECT)},
	propResponseInfo:         {"Response Information", types(CONNACK)},
	propServerReference:      {"Server Reference", types(CONNACK, DISCONNECT)},
	propReasonString:         {"Reason String", types(CONNACK, PUBACK, PUBREC, PUBREL, PUBCOMP, SUBACK, UNSUBACK, DISCONNECT, AUTH)},
	propReceiveMaximum:       {"Receive Maximum", types(CONNECT, CONNACK)},
	propTopicAliasMaximum:    {"Topic Alias Maximum", types(CONNECT, CONNACK)},
	propTopicAlias:           {"Topic Alias", types(PUBLISH)},
	propMaximumQoS:           {"Maximum QoS", types(CONNACK)},
	propRetainAvailable:      {"Retain Available", types(CONNACK)},
	propUser:                 {"User Property", types(CONNECT, CONNACK, PUBLISH, willScope, PUBACK, PUBREC, PUBREL, PUBCOMP, SUBSCRIBE, SUBACK, UNSUBSCRIBE, UNSUBACK, DISCONNECT, AUTH)},
	propMaximumPacketSize:    {"Maximum Packet Size", types(CONNECT, CONNACK)},
	propWildcardSubAvailable: {"Wildcard Subscription Available", types(CONNACK)},
	propSubIDAvailable:       {"Subscription Identifier Available", types(CONNACK)},
	propSharedSubAvailable:   {"Shared Subscription Available", types(CONNACK)},
}

// scopeName names where a property block sits, for messages.
func scopeName(scope Type) string {
	if scope == willScope {
		return "CONNECT will properties"
	}
	return scope.String()
}

// readProps reads an MQTT 5 property block (Property Length, then the
// properties; MQTT 5 §2.2.2) for scope, a packet type or willScope. It
// returns nil when the block is empty or holds only empty strings (see
// Properties). User and SubscriptionIDs are gathered in the decoder's
// scratch slices and copied out once, exactly sized.
func (d *Decoder) readProps(r *reader, scope Type) (*Properties, error) {
	n, err := r.vbi("property length")
	if err != nil {
		return nil, err
	}
	if int(n) > r.left() {
		return nil, malformed("%s property length %d runs past the end of the packet", scopeName(scope), n)
	}
	if n == 0 {
		return nil, nil
	}
	outer := r.end
	r.end = r.i + int(n)
	// Parsed in place: a property block is almost never all empty strings,
	// so allocating before knowing is cheaper than parsing into scratch
	// and copying the struct out.
	p := new(Properties)
	sc := d.scratch()
	user, subIDs := sc.user[:0], sc.subIDs[:0]
	keep, err := d.readPropList(r, scope, p, &user, &subIDs)
	r.end = outer
	if err == nil && keep {
		if len(user) > 0 {
			p.User = append(make([]UserProperty, 0, len(user)), user...)
		}
		if len(subIDs) > 0 {
			p.SubscriptionIDs = append(make([]uint32, 0, len(subIDs)), subIDs...)
		}
	} else {
		p = nil
	}
	sc.user, sc.subIDs = keepScratch(user), keepScratch(subIDs)
	return p, err
}

// readPropList reads properties up to r.end into p (User and SubscriptionIDs
// into *user and *subIDs) and reports whether any of them is worth keeping.
func (d *Decoder) readPropList(r *reader, scope Type, p *Properties, user *[]UserProperty, subIDs *[]uint32) (keep bool, err error) {
	var seen uint64 // bit id: property id already read
	for r.i < r.end {
		id := r.b[r.i]
		r.i++
		if int(id) >= len(propTable) || !propTable[id].in.has(scope) {
			if int(id) < len(propTable) && propTable[id].name != "" {
				return false, malformed("%s may not carry property 0x%02X (%s) (MQTT 5 §2.2.2.2)", scopeName(scope), id, propTable[id].name)
			}
			return false, malformed("%s has unknown property identifier 0x%02X (MQTT 5 §2.2.2.2)", scopeName(scope), id)
		}
		name := propTable[id].name
		// User Property may repeat anywhere, Subscription Identifier in
		// PUBLISH only (§3.3.2.3.8); every other repeat is a protocol error
		// ("It is a Protocol Error to include ... more than once").
		if id != propUser && (id != propSubscriptionID || scope != PUBLISH) {
			if seen&(1<<id) != 0 {
				return false, protocolErr("%s has %s more than once (MQTT 5 §2.2.2.2)", scopeName(scope), name)
			}
			seen |= 1 << id
		}
		switch id {
		case propPayloadFormat:
			// Values other than 0 and 1 are kept: the specification
			// defines two values but names no error for others, and the
			// server must forward the indicator unaltered [MQTT-3.3.2-4].
			p.PayloadFormat, err = r.u8(name)
			p.HasPayloadFormat = true
		case propMessageExpiry:
			p.MessageExpiry, err = r.u32(name)
			p.HasMessageExpiry = true
		case propContentType:
			p.ContentType, err = readPropString(r, name)
		case propResponseTopic:
			var s, e int
			if s, e, err = r.utf8Range(name); err == nil {
				if i := indexWildcard(r.b[s:e]); i >= 0 {
					return false, protocolErr("%s Response Topic %q contains wildcard %q [MQTT-3.3.2-14]", scopeName(scope), clip(string(r.b[s:e])), r.b[s+i])
				}
				p.ResponseTopic = r.str(s, e)
			}
		case propCorrelationData:
			p.CorrelationData, err = readPropBinary(r, name)
		case propSubscriptionID:
			var v uint32
			if v, err = r.vbi(name); err == nil && v == 0 {
				return false, protocolErr("%s Subscription Identifier is 0 (MQTT 5 §3.8.2.1.2)", scopeName(scope))
			}
			*subIDs = append(*subIDs, v)
		case propSessionExpiry:
			p.SessionExpiry, err = r.u32(name)
			p.HasSessionExpiry = true
		case propAssignedClientID:
			p.AssignedClientID, err = readPropString(r, name)
		case propServerKeepAlive:
			p.ServerKeepAlive, err = r.u16(name)
			p.HasServerKeepAlive = true
		case propAuthMethod:
			p.AuthMethod, err = readPropString(r, name)
		case propAuthData:
			p.AuthData, err = readPropBinary(r, name)
		case propRequestProblemInfo:
			p.RequestProblemInfo, err = readPropFlag(r, scope, name)
			p.HasRequestProblemInfo = true
		case propWillDelay:
			p.WillDelay, err = r.u32(name)
			p.HasWillDelay = true
		case propRequestResponseInfo:
			p.RequestResponseInfo, err = readPropFlag(r, scope, name)
			p.HasRequestResponseInfo = true
		case propResponseInfo:
			p.ResponseInfo, err = readPropString(r, name)
		case propServerReference:
			p.ServerReference, err = readPropString(r, name)
		case propReasonString:
			p.ReasonString, err = readPropString(r, name)
		case propReceiveMaximum:
			if p.ReceiveMaximum, err = r.u16(name); err == nil && p.ReceiveMaximum == 0 {
				return false, protocolErr("%s Receive Maximum is 0 (MQTT 5 §3.1.2.11.3)", scopeName(scope))
			}
			p.HasReceiveMaximum = true
		case propTopicAliasMaximum:
			p.TopicAliasMaximum, err = r.u16(name)
			p.HasTopicAliasMaximum = true
		case propTopicAlias:
			if p.TopicAlias, err = r.u16(name); err == nil && p.TopicAlias == 0 {
				return false, newError(ReasonTopicAliasInvalid, "PUBLISH Topic Alias is 0 [MQTT-3.3.2-8]")
			}
			p.HasTopicAlias = true
		case propMaximumQoS:
			p.MaximumQoS, err = readPropFlag(r, scope, name)
			p.HasMaximumQoS = true
		case propRetainAvailable:
			p.RetainAvailable, err = readPropFlag(r, scope, name)
			p.HasRetainAvailable = true
		case propUser:
			if len(*user) == d.lim.MaxUserProperties {
				return false, newError(ReasonQuotaExceeded, "%s has more than %d User Properties", scopeName(scope), d.lim.MaxUserProperties)
			}
			var ks, ke, vs, ve int
			if ks, ke, err = r.utf8Range("User Property name"); err == nil {
				if vs, ve, err = r.utf8Range("User Property value"); err == nil {
					*user = append(*user, UserProperty{Key: r.str(ks, ke), Value: r.str(vs, ve)})
				}
			}
		case propMaximumPacketSize:
			if p.MaximumPacketSize, err = r.u32(name); err == nil && p.MaximumPacketSize == 0 {
				return false, protocolErr("%s Maximum Packet Size is 0 (MQTT 5 §3.1.2.11.4)", scopeName(scope))
			}
			p.HasMaximumPacketSize = true
		case propWildcardSubAvailable:
			p.WildcardSubAvailable, err = readPropFlag(r, scope, name)
			p.HasWildcardSubAvailable = true
		case propSubIDAvailable:
			p.SubIDAvailable, err = readPropFlag(r, scope, name)
			p.HasSubIDAvailable = true
		case propSharedSubAvailable:
			p.SharedSubAvailable, err = readPropFlag(r, scope, name)
			p.HasSharedSubAvailable = true
		}
		if err != nil {
			return false, err
		}
	}
	// An empty Authentication Method is no method (see Properties).
	if p.AuthData != nil && p.AuthMethod == "" && scope == CONNECT {
		return false, protocolErr("CONNECT has Authentication Data without an Authentication Method (MQTT 5 §3.1.2.11.10)")
	}
	return len(*user) > 0 || len(*subIDs) > 0 || !p.onlyEmptyStrings(), nil
}

// onlyEmptyStrings reports whether p, User and SubscriptionIDs aside, holds
// nothing the encoder would write: every property read was an empty string.
func (p *Properties) onlyEmptyStrings() bool {
	return !p.HasPayloadFormat && !p.HasMessageExpiry && p.ContentType == "" && p.ResponseTopic == "" &&
		p.CorrelationData == nil && !p.HasSessionExpiry && p.AssignedClientID == "" && !p.HasServerKeepAlive &&
		p.AuthMethod == "" && p.AuthData == nil && !p.HasRequestProblemInfo && !p.HasWillDelay &&
		!p.HasRequestResponseInfo && p.ResponseInfo == "" && p.ServerReference == "" && p.ReasonString == "" &&
		!p.HasReceiveMaximum && !p.HasTopicAliasMaximum && !p.HasTopicAlias && !p.HasMaximumQoS &&
		!p.HasRetainAvailable && !p.HasMaximumPacketSize && !p.HasWildcardSubAvailable &&
		!p.HasSubIDAvailable && !p.HasSharedSubAvailable
}

func readPropString(r *reader, name string) (string, error) {
	s, e, err := r.utf8Range(name)
	if err != nil {
		return "", err
	}
	return r.str(s, e), nil
}

// readPropBinary reads a binary property: non-nil even when empty, since
// presence is what nil means for CorrelationData and AuthData.
func readPropBinary(r *reader, name string) ([]byte, error) {
	s, e, err := r.binRange(name)
	if err != nil {
		return nil, err
	}
	if s == e {
		return make([]byte, 0), nil // zero-size: no allocation
	}
	return r.bin(s, e), nil
}

// readPropFlag reads a byte property whose only values are 0 and 1; any
// other is a protocol error (MQTT 5 §3.1.2.11.6, §3.1.2.11.7, §3.2.2.3.4,
// §3.2.2.3.5, §3.2.2.3.11-13).
func readPropFlag(r *reader, scope Type, name string) (byte, error) {
	v, err := r.u8(name)
	if err == nil && v > 1 {
		return 0, protocolErr("%s %s is %d, must be 0 or 1", scopeName(scope), name, v)
	}
	return v, err
}

func indexWildcard(b []byte) int {
	for i, c := range b {
		if c == '+' || c == '#' {
			return i
		}
	}
	return -1
}

// Size returns the encoded length in bytes of the properties, without the
// Property Length that precedes them; 0 for nil. AppendPacket writes exactly
// this many bytes after the Property Length.
func (p *Properties) Size() int {
	if p == nil {
		return 0
	}
	n := 0
	if p.HasPayloadFormat {
		n += 2
	}
	if p.HasMessageExpiry {
		n += 5
	}
	if p.ContentType != "" {
		n += 3 + len(p.ContentType)
	}
	if p.ResponseTopic != "" {
		n += 3 + len(p.ResponseTopic)
	}
	if p.CorrelationData != nil {
		n += 3 + len(p.CorrelationData)
	}
	for _, id := range p.SubscriptionIDs {
		n += 1 + vbiLen(int(id))
	}
	if p.HasSessionExpiry {
		n += 5
	}
	if p.AssignedClientID != "" {
		n += 3 + len(p.AssignedClientID)
	}
	if p.HasServerKeepAlive {
		n += 3
	}
	if p.AuthMethod != "" {
		n += 3 + len(p.AuthMethod)
	}
	if p.AuthData != nil {
		n += 3 + len(p.AuthData)
	}
	if p.HasRequestProblemInfo {
		n += 2
	}
	if p.HasWillDelay {
		n += 5
	}
	if p.HasRequestResponseInfo {
		n += 2
	}
	if p.ResponseInfo != "" {
		n += 3 + len(p.ResponseInfo)
	}
	if p.ServerReference != "" {
		n += 3 + len(p.ServerReference)
	}
	if p.ReasonString != "" {
		n += 3 + len(p.ReasonString)
	}
	if p.HasReceiveMaximum {
		n += 3
	}
	if p.HasTopicAliasMaximum {
		n += 3
	}
	if p.HasTopicAlias {
		n += 3
	}
	if p.HasMaximumQoS {
		n += 2
	}
	if p.HasRetainAvailable {
		n += 2
	}
	for i := range p.User {
		n += 5 + len(p.User[i].Key) + len(p.User[i].Value)
	}
	if p.HasMaximumPacketSize {
		n += 5
	}
	if p.HasWildcardSubAvailable {
		n += 2
	}
	if p.HasSubIDAvailable {
		n += 2
	}
	if p.HasSharedSubAvailable {
		n += 2
	}
	return n
}

// appendProps appends the Property Length n (from p.Size()) and the
// properties, in identifier order.
func appendProps(dst []byte, p *Properties, n int) []byte {
	dst = appendVBI(dst, n)
	if n == 0 {
		return dst
	}
	if p.HasPayloadFormat {
		dst = append(dst, propPayloadFormat, p.PayloadFormat)
	}
	if p.HasMessageExpiry {
		dst = appendU32(append(dst, propMessageExpiry), p.MessageExpiry)
	}
	if p.ContentType != "" {
		dst = appendString(append(dst, propContentType), p.ContentType)
	}
	if p.ResponseTopic != "" {
		dst = appendString(append(dst, propResponseTopic), p.ResponseTopic)
	}
	if p.CorrelationData != nil {
		dst = appendBinary(append(dst, propCorrelationData), p.CorrelationData)
	}
	for _, id := range p.SubscriptionIDs {
		dst = appendVBI(append(dst, propSubscriptionID), int(id))
	}
	if p.HasSessionExpiry {
		dst = appendU32(append(dst, propSessionExpiry), p.SessionExpiry)
	}
	if p.AssignedClientID != "" {
		dst = appendString(append(dst, propAssignedClientID), p.AssignedClientID)
	}
	if p.HasServerKeepAlive {
		dst = appendU16(append(dst, propServerKeepAlive), p.ServerKeepAlive)
	}
	if p.AuthMethod != "" {
		dst = appendString(append(dst, propAuthMethod), p.AuthMethod)
	}
	if p.AuthData != nil {
		dst = appendBinary(append(dst, propAuthData), p.AuthData)
	}
	if p.HasRequestProblemInfo {
		dst = append(dst, propRequestProblemInfo, p.RequestProblemInfo)
	}
	if p.HasWillDelay {
		dst = appendU32(append(dst, propWillDelay), p.WillDelay)
	}
	if p.HasRequestResponseInfo {
		dst = append(dst, propRequestResponseInfo, p.RequestResponseInfo)
	}
	if p.ResponseInfo != "" {
		dst = appendString(append(dst, propResponseInfo), p.ResponseInfo)
	}
	if p.ServerReference != "" {
		dst = appendString(append(dst, propServerReference), p.ServerReference)
	}
	if p.ReasonString != "" {
		dst = appendString(append(dst, propReasonString), p.ReasonString)
	}
	if p.HasReceiveMaximum {
		dst = appendU16(append(dst, propReceiveMaximum), p.ReceiveMaximum)
	}
	if p.HasTopicAliasMaximum {
		dst = appendU16(append(dst, propTopicAliasMaximum), p.TopicAliasMaximum)
	}
	if p.HasTopicAlias {
		dst = appendU16(append(dst, propTopicAlias), p.TopicAlias)
	}
	if p.HasMaximumQoS {
		dst = append(dst, propMaximumQoS, p.MaximumQoS)
	}
	if p.HasRetainAvailable {
		dst = append(dst, propRetainAvailable, p.RetainAvailable)
	}
	for i := range p.User {
		dst = appendString(append(dst, propUser), p.User[i].Key)
		dst = appendString(dst, p.User[i].Value)
	}
	if p.HasMaximumPacketSize {
		dst = appendU32(append(dst, propMaximumPacketSize), p.MaximumPacketSize)
	}
	if p.HasWildcardSubAvailable {
		dst = append(dst, propWildcardSubAvailable, p.WildcardSubAvailable)
	}
	if p.HasSubIDAvailable {
		dst = append(dst, propSubIDAvailable, p.SubIDAvailable)
	}
	if p.HasSharedSubAvailable {
		dst = append(dst, propSharedSubAvailable, p.SharedSubAvailable)
	}
	return dst
}
