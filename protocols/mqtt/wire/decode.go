package wire

import (
	"bytes"
	"unicode/utf8"
	"unsafe"
)

// reader reads one packet body. The strings and byte slices a packet keeps
// are cut from own: the body itself when the decoder may hand it over, a
// copy of it otherwise, made on first need so that a packet keeping nothing
// (PUBACK, PINGREQ) costs no allocation and one keeping anything costs
// exactly one.
type reader struct {
	b        []byte // the packet body (remaining length bytes)
	i        int    // read position in b
	end      int    // read limit: len(b), or the end of the property block being read
	t        Type   // packet type, for messages
	v        byte   // protocol level the packet is decoded under
	borrowed bool   // b is not ours to keep: copy it before handing out parts
	own      []byte // b or a copy of it; nil until first needed
}

func (r *reader) left() int { return r.end - r.i }

// owned returns the packet's own copy of the body.
func (r *reader) owned() []byte {
	if r.own == nil {
		if r.borrowed {
			// append, unlike make and copy, does not zero the bytes
			// it is about to overwrite.
			r.own = append([]byte(nil), r.b...)
		} else {
			r.own = r.b
		}
	}
	return r.own
}

// str returns body bytes [s, e) as a string owned by the packet. The bytes
// are never written again (every []byte handed out covers other offsets),
// so the string may share them.
func (r *reader) str(s, e int) string {
	if s == e {
		return ""
	}
	o := r.owned()
	return unsafe.String(&o[s], e-s)
}

// bin returns body bytes [s, e) owned by the packet, capped so that an
// append cannot overwrite what follows; nil when empty.
func (r *reader) bin(s, e int) []byte {
	if s == e {
		return nil
	}
	return r.owned()[s:e:e]
}

func (r *reader) short(what string) error {
	return malformed("%s %s runs past the end of the packet", r.t, what)
}

func (r *reader) u8(what string) (byte, error) {
	if r.i >= r.end {
		return 0, r.short(what)
	}
	c := r.b[r.i]
	r.i++
	return c, nil
}

func (r *reader) u16(what string) (uint16, error) {
	if r.end-r.i < 2 {
		return 0, r.short(what)
	}
	v := uint16(r.b[r.i])<<8 | uint16(r.b[r.i+1])
	r.i += 2
	return v, nil
}

func (r *reader) u32(what string) (uint32, error) {
	if r.end-r.i < 4 {
		return 0, r.short(what)
	}
	b := r.b[r.i : r.i+4]
	r.i += 4
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]), nil
}

// vbi reads a Variable Byte Integer of at most four bytes, encoded in the
// minimum number of bytes [MQTT-1.5.5-1].
func (r *reader) vbi(what string) (uint32, error) {
	var v uint32
	for n := range 4 {
		if r.i >= r.end {
			return 0, r.short(what)
		}
		c := r.b[r.i]
		r.i++
		v |= uint32(c&0x7f) << (7 * n)
		if c&0x80 == 0 {
			if n > 0 && c == 0 {
				return 0, malformed("%s %s is not encoded in the minimum number of bytes [MQTT-1.5.5-1]", r.t, what)
			}
			return v, nil
		}
	}
	return 0, malformed("%s %s has a continuation bit in its fourth byte (MQTT 5 §1.5.5)", r.t, what)
}

// binRange reads Binary Data (two-byte length, then bytes; MQTT 5 §1.5.6)
// and returns its offsets in the body.
func (r *reader) binRange(what string) (int, int, error) {
	if r.end-r.i < 2 {
		return 0, 0, r.short(what)
	}
	n := int(r.b[r.i])<<8 | int(r.b[r.i+1])
	s := r.i + 2
	if r.end-s < n {
		return 0, 0, r.short(what)
	}
	r.i = s + n
	return s, s + n, nil
}

// utf8Range reads a UTF-8 Encoded String (MQTT 5 §1.5.4, 3.1.1 §1.5.3) and
// returns its offsets in the body.
func (r *reader) utf8Range(what string) (int, int, error) {
	s, e, err := r.binRange(what)
	if err != nil {
		return 0, 0, err
	}
	return s, e, r.checkUTF8(r.b[s:e], what)
}

// checkUTF8 refuses ill-formed UTF-8 (surrogates included: utf8.Valid
// rejects them) [MQTT-1.5.4-1] and U+0000 [MQTT-1.5.4-2]; both are
// malformed packets. U+FEFF and non-characters are kept [MQTT-1.5.4-3].
func (r *reader) checkUTF8(b []byte, what string) error {
	if bytes.IndexByte(b, 0) >= 0 {
		return malformed("%s %s contains U+0000 %s", r.t, what, tag(r.v, "[MQTT-1.5.3-2]", "[MQTT-1.5.4-2]"))
	}
	if !utf8.Valid(b) {
		return malformed("%s %s is not well-formed UTF-8 %s", r.t, what, tag(r.v, "[MQTT-1.5.3-1]", "[MQTT-1.5.4-1]"))
	}
	return nil
}

// packetID reads a Packet Identifier, which is never 0 [MQTT-2.3.1-1].
func (r *reader) packetID() (uint16, error) {
	id, err := r.u16("packet identifier")
	if err == nil && id == 0 {
		return 0, protocolErr("%s packet identifier is 0 %s", r.t, tag(r.v, "[MQTT-2.3.1-1]", "[MQTT-2.2.1-3]"))
	}
	return id, err
}

// decode decodes one packet body of d.first's type. handed reports that the
// packet kept body itself (borrowed false), which the caller must then
// forget.
func (d *Decoder) decode(body []byte, borrowed bool) (p Packet, handed bool, err error) {
	r := reader{b: body, end: len(body), t: Type(d.first >> 4), v: d.version, borrowed: borrowed}
	p.Type = r.t
	flags := d.first & 0x0f
	switch r.t {
	case CONNECT:
		err = d.decodeConnect(&r, &p, flags)
	case CONNACK:
		err = d.decodeConnack(&r, &p)
	case PUBLISH:
		err = d.decodePublish(&r, &p, flags)
	case PUBACK, PUBREC, PUBREL, PUBCOMP:
		err = d.decodeAck(&r, &p)
	case SUBSCRIBE:
		err = d.decodeSubscribe(&r, &p)
	case SUBACK:
		err = d.decodeSuback(&r, &p)
	case UNSUBSCRIBE:
		err = d.decodeUnsubscribe(&r, &p)
	case UNSUBACK:
		err = d.decodeUnsuback(&r, &p)
	case PINGREQ, PINGRESP:
		// No variable header and no payload (MQTT 5 §3.12, §3.13).
	case DISCONNECT, AUTH:
		err = d.decodeReasonOnly(&r, &p)
	}
	if err == nil && r.i != r.end {
		err = malformed("%s has %d bytes after its last field", r.t, r.end-r.i)
	}
	if err != nil {
		return Packet{}, false, err
	}
	if r.t == CONNECT {
		d.connected = true
	}
	return p, r.own != nil && !borrowed, nil
}

// decodeConnect decodes a CONNECT body (MQTT 5 §3.1, 3.1.1 §3.1, 3.1 §3.1)
// under the level it carries, and makes that level the decoder's.
func (d *Decoder) decodeConnect(r *reader, p *Packet, flags byte) error {
	ns, ne, err := r.utf8Range("protocol name")
	if err != nil {
		return err
	}
	name := r.b[ns:ne]
	level, err := r.u8("protocol level")
	if err != nil {
		return err
	}
	c := &Connect{ProtocolLevel: level}
	switch {
	case level == Version31 && string(name) == ProtocolName31:
		c.ProtocolName = ProtocolName31
	case (level == Version311 || level == Version5) && string(name) == ProtocolName:
		c.ProtocolName = ProtocolName
	case string(name) == ProtocolName || string(name) == ProtocolName31:
		return newError(ReasonUnsupportedProtocolVersion,
			"CONNECT protocol level %d with protocol name %q is not supported [MQTT-3.1.2-2]", level, name)
	default:
		// [MQTT-3.1.2-1]: the server MAY close; ActiveMQ closes ("Invalid
		// CONNECT encoding") without a CONNACK, so the session should too.
		return protocolErr("CONNECT protocol name %q is neither MQTT nor MQIsdp [MQTT-3.1.2-1]", clip(string(name)))
	}
	d.version = level // see Decoder.Version: kept even if the rest fails
	r.v = level
	if level >= Version311 && flags != 0 {
		return malformed("CONNECT fixed header flags 0x%X, must be 0 %s", flags, tag(level, "[MQTT-2.2.2-2]", "[MQTT-2.1.3-1]"))
	}
	cf, err := r.u8("connect flags")
	if err != nil {
		return err
	}
	// MQTT 3.1 calls bit 0 unused without requiring it to be 0.
	if cf&0x01 != 0 && level >= Version311 {
		return malformed("CONNECT reserved flag is set [MQTT-3.1.2-3]")
	}
	c.CleanSession = cf&0x02 != 0
	c.WillFlag = cf&0x04 != 0
	c.WillQoS = cf >> 3 & 3
	c.WillRetain = cf&0x20 != 0
	c.PasswordFlag = cf&0x40 != 0
	c.UsernameFlag = cf&0x80 != 0
	switch {
	case !c.WillFlag && c.WillQoS != 0:
		return malformed("CONNECT will QoS %d without the will flag %s", c.WillQoS, tag(level, "[MQTT-3.1.2-13]", "[MQTT-3.1.2-11]"))
	case !c.WillFlag && c.WillRetain:
		return malformed("CONNECT will retain without the will flag %s", tag(level, "[MQTT-3.1.2-15]", "[MQTT-3.1.2-13]"))
	case c.WillQoS == 3:
		return malformed("CONNECT will QoS 3 is malformed %s", tag(level, "[MQTT-3.1.2-14]", "[MQTT-3.1.2-12]"))
	case level == Version311 && c.PasswordFlag && !c.UsernameFlag:
		// MQTT 5 allows a password alone (§3.1.2.9); 3.1 does not say.
		return protocolErr("CONNECT password flag without the user name flag [MQTT-3.1.2-22]")
	}
	if c.KeepAlive, err = r.u16("keep alive"); err != nil {
		return err
	}
	if level == Version5 {
		if p.Props, err = d.readProps(r, CONNECT); err != nil {
			return err
		}
	}
	s, e, err := r.utf8Range("client identifier")
	if err != nil {
		return err
	}
	c.ClientID = r.str(s, e)
	if c.WillFlag {
		if level == Version5 {
			if c.WillProps, err = d.readProps(r, willScope); err != nil {
				return err
			}
		}
		if s, e, err = r.utf8Range("will topic"); err != nil {
			return err
		}
		c.WillTopic = r.str(s, e)
		if s, e, err = r.binRange("will payload"); err != nil {
			return err
		}
		c.WillPayload = r.bin(s, e)
	}
	// MQTT 3.1 clients exist that set a flag and omit its field at the end
	// of the packet; like mosquitto, take the flag back for 3.1 only.
	if c.UsernameFlag {
		if level == Version31 && r.left() == 0 {
			c.UsernameFlag = false
		} else {
			if s, e, err = r.utf8Range("user name"); err != nil {
				return err
			}
			c.Username = r.str(s, e)
		}
	}
	if c.PasswordFlag {
		if level == Version31 && r.left() == 0 {
			c.PasswordFlag = false
		} else {
			// Binary Data in 3.1.1 and 5; a UTF-8 string in 3.1, with the
			// same framing, and not checked: a password is opaque.
			if s, e, err = r.binRange("password"); err != nil {
				return err
			}
			c.Password = r.bin(s, e)
		}
	}
	p.Connect = c
	return nil
}

// decodeConnack decodes a CONNACK body (MQTT 5 §3.2, 3.1.1 §3.2).
func (d *Decoder) decodeConnack(r *reader, p *Packet) error {
	af, err := r.u8("acknowledge flags")
	if err != nil {
		return err
	}
	code, err := r.u8("return code")
	if err != nil {
		return err
	}
	// In 3.1 the first byte is unused ("Topic Name Compression Response").
	if r.v >= Version311 {
		if af&0xFE != 0 {
			return malformed("CONNACK acknowledge flags 0x%02X have reserved bits 7-1 set %s", af,
				tag(r.v, "(MQTT 3.1.1 §3.2.2.1)", "[MQTT-3.2.2-1]"))
		}
		p.SessionPresent = af&1 != 0
	}
	p.ReasonCode = code
	if r.v < Version5 {
		if !validConnReturn(code) {
			return protocolErr("CONNACK return code 0x%02X is reserved (MQTT 3.1.1 §3.2.2.3)", code)
		}
	} else {
		if !ValidReason(CONNACK, code) {
			return protocolErr("CONNACK reason code 0x%02X is not a Connect Reason Code [MQTT-3.2.2-8]", code)
		}
		if p.Props, err = d.readProps(r, CONNACK); err != nil {
			return err
		}
	}
	if p.SessionPresent && code != 0 {
		return protocolErr("CONNACK has Session Present with code 0x%02X %s", code, tag(r.v, "[MQTT-3.2.2-4]", "[MQTT-3.2.2-6]"))
	}
	return nil
}

// decodePublish decodes a PUBLISH body (MQTT 5 §3.3, 3.1.1 §3.3). The fixed
// header flags were checked by checkFirst.
func (d *Decoder) decodePublish(r *reader, p *Packet, flags byte) error {
	p.Dup = flags&0x08 != 0
	p.QoS = flags >> 1 & 3
	p.Retain = flags&0x01 != 0
	ts, te, err := r.binRange("topic name")
	if err != nil {
		return err
	}
	if err := r.checkTopicName(r.b[ts:te]); err != nil {
		return err
	}
	if p.QoS > 0 {
		if p.PacketID, err = r.packetID(); err != nil {
			return err
		}
	}
	if r.v == Version5 {
		if p.Props, err = d.readProps(r, PUBLISH); err != nil {
			return err
		}
	}
	if ts == te {
		switch {
		case r.v < Version5:
			return newError(ReasonTopicNameInvalid, "PUBLISH topic name is empty [MQTT-4.7.3-1]")
		case p.Props == nil || !p.Props.HasTopicAlias:
			return protocolErr("PUBLISH has an empty topic name and no Topic Alias (MQTT 5 §3.3.2.1)")
		}
	}
	p.Topic = r.str(ts, te)
	p.Payload = r.bin(r.i, r.end)
	r.i = r.end
	return nil
}

// checkTopicName applies the UTF-8 string rules and [MQTT-3.3.2-2] to a
// PUBLISH topic name in one pass over its ASCII bytes. The empty name is
// judged by the caller, which knows about Topic Alias.
func (r *reader) checkTopicName(b []byte) error {
	ascii := true
	for _, c := range b {
		switch {
		case c == '+' || c == '#':
			if err := r.checkUTF8(b, "topic name"); err != nil {
				return err // a NUL or bad UTF-8 is malformed, which says more
			}
			return newError(ReasonTopicNameInvalid, "PUBLISH topic name %q contains wildcard %q [MQTT-3.3.2-2]", clip(string(b)), c)
		case c == 0 || c >= 0x80:
			ascii = false
		}
	}
	if ascii {
		return nil
	}
	return r.checkUTF8(b, "topic name")
}

// decodeAck decodes PUBACK, PUBREC, PUBREL and PUBCOMP (MQTT 5 §3.4-§3.7,
// 3.1.1 §3.4-§3.7). In MQTT 5 the reason code may be left out when it is 0
// and there are no properties, and the property length when there are no
// properties (§3.4.2.1).
func (d *Decoder) decodeAck(r *reader, p *Packet) error {
	var err error
	if p.PacketID, err = r.packetID(); err != nil {
		return err
	}
	if r.v < Version5 || r.left() == 0 {
		return nil
	}
	if p.ReasonCode, err = d.readReason(r); err != nil {
		return err
	}
	if r.left() > 0 {
		p.Props, err = d.readProps(r, r.t)
	}
	return err
}

// decodeReasonOnly decodes DISCONNECT and AUTH: empty below MQTT 5; in 5 an
// optional reason code, then optional properties (§3.14.2, §3.15.2).
func (d *Decoder) decodeReasonOnly(r *reader, p *Packet) error {
	if r.v < Version5 || r.left() == 0 {
		return nil
	}
	var err error
	if p.ReasonCode, err = d.readReason(r); err != nil {
		return err
	}
	if r.left() > 0 {
		p.Props, err = d.readProps(r, r.t)
	}
	return err
}

// reasonTags are the rules that make the sender use its packet's reason
// codes.
var reasonTags = [...]string{
	PUBACK: "[MQTT-3.4.2-1]", PUBREC: "[MQTT-3.5.2-1]", PUBREL: "[MQTT-3.6.2-1]", PUBCOMP: "[MQTT-3.7.2-1]",
	SUBACK: "[MQTT-3.9.3-2]", UNSUBACK: "[MQTT-3.11.3-2]", DISCONNECT: "[MQTT-3.14.2-1]", AUTH: "[MQTT-3.15.2-1]",
}

// readReason reads an MQTT 5 reason code and checks that r.t may carry it.
func (d *Decoder) readReason(r *reader) (byte, error) {
	code, err := r.u8("reason code")
	if err == nil && !ValidReason(r.t, code) {
		return 0, protocolErr("%s reason code 0x%02X is not one of its reason codes %s", r.t, code, reasonTags[r.t])
	}
	return code, err
}

// decodeSubscribe decodes a SUBSCRIBE body (MQTT 5 §3.8, 3.1.1 §3.8).
// Filters are not validated (see Subscription.Filter).
func (d *Decoder) decodeSubscribe(r *reader, p *Packet) error {
	var err error
	if p.PacketID, err = r.packetID(); err != nil {
		return err
	}
	if r.v == Version5 {
		if p.Props, err = d.readProps(r, SUBSCRIBE); err != nil {
			return err
		}
	}
	sc := d.scratch()
	subs := sc.subs[:0]
	defer func() { sc.subs = keepScratch(subs) }()
	for r.left() > 0 {
		if len(subs) == d.lim.MaxTopicsPerPacket {
			return newError(ReasonQuotaExceeded, "SUBSCRIBE has more than %d topic filters", d.lim.MaxTopicsPerPacket)
		}
		s, e, err := r.utf8Range("topic filter")
		if err != nil {
			return err
		}
		o, err := r.u8("subscription options")
		if err != nil {
			return err
		}
		sub := Subscription{QoS: o & 3}
		if r.v < Version5 {
			if o&0xFC != 0 {
				return malformed("SUBSCRIBE requested QoS byte 0x%02X has reserved bits set [MQTT-3-8.3-4]", o)
			}
			if sub.QoS == 3 {
				return malformed("SUBSCRIBE requested QoS 3 is malformed [MQTT-3-8.3-4]")
			}
		} else {
			if o&0xC0 != 0 {
				return malformed("SUBSCRIBE subscription options 0x%02X have reserved bits set [MQTT-3.8.3-5]", o)
			}
			if sub.QoS == 3 {
				return protocolErr("SUBSCRIBE maximum QoS 3 (MQTT 5 §3.8.3.1)")
			}
			sub.NoLocal = o&0x04 != 0
			sub.RetainAsPublished = o&0x08 != 0
			sub.RetainHandling = o >> 4 & 3
			if sub.RetainHandling == 3 {
				return protocolErr("SUBSCRIBE retain handling 3 (MQTT 5 §3.8.3.1)")
			}
			if sub.NoLocal && e-s >= len(sharePrefix) && string(r.b[s:s+len(sharePrefix)]) == sharePrefix {
				return protocolErr("SUBSCRIBE sets No Local on shared subscription %q [MQTT-3.8.3-4]", clip(string(r.b[s:e])))
			}
		}
		sub.Filter = r.str(s, e)
		subs = append(subs, sub)
	}
	if len(subs) == 0 {
		return protocolErr("SUBSCRIBE has no topic filters %s", tag(r.v, "[MQTT-3.8.3-3]", "[MQTT-3.8.3-2]"))
	}
	p.Subscriptions = append(make([]Subscription, 0, len(subs)), subs...)
	return nil
}

// decodeSuback decodes a SUBACK body (MQTT 5 §3.9, 3.1.1 §3.9).
func (d *Decoder) decodeSuback(r *reader, p *Packet) error {
	var err error
	if p.PacketID, err = r.packetID(); err != nil {
		return err
	}
	if r.v == Version5 {
		if p.Props, err = d.readProps(r, SUBACK); err != nil {
			return err
		}
	}
	if err := d.checkCodes(r); err != nil {
		return err
	}
	for _, c := range r.b[r.i:r.end] {
		if r.v < Version5 && !validSubackReturn3(c) {
			return protocolErr("SUBACK return code 0x%02X is reserved [MQTT-3.9.3-2]", c)
		}
		if r.v == Version5 && !ValidReason(SUBACK, c) {
			return protocolErr("SUBACK reason code 0x%02X is not a Subscribe Reason Code [MQTT-3.9.3-2]", c)
		}
	}
	p.ReasonCodes = r.bin(r.i, r.end)
	r.i = r.end
	return nil
}

// checkCodes checks the count of SUBACK or UNSUBACK codes left in r: one
// per topic filter of the request, so at least one (§3.9.3, §3.11.3).
func (d *Decoder) checkCodes(r *reader) error {
	switch n := r.left(); {
	case n == 0:
		return malformed("%s has no reason codes", r.t)
	case n > d.lim.MaxTopicsPerPacket:
		return newError(ReasonQuotaExceeded, "%s has more than %d reason codes", r.t, d.lim.MaxTopicsPerPacket)
	}
	return nil
}

// decodeUnsubscribe decodes an UNSUBSCRIBE body (MQTT 5 §3.10, 3.1.1 §3.10).
func (d *Decoder) decodeUnsubscribe(r *reader, p *Packet) error {
	var err error
	if p.PacketID, err = r.packetID(); err != nil {
		return err
	}
	if r.v == Version5 {
		if p.Props, err = d.readProps(r, UNSUBSCRIBE); err != nil {
			return err
		}
	}
	sc := d.scratch()
	topics := sc.topics[:0]
	defer func() { sc.topics = keepScratch(topics) }()
	for r.left() > 0 {
		if len(topics) == d.lim.MaxTopicsPerPacket {
			return newError(ReasonQuotaExceeded, "UNSUBSCRIBE has more than %d topic filters", d.lim.MaxTopicsPerPacket)
		}
		s, e, err := r.utf8Range("topic filter")
		if err != nil {
			return err
		}
		topics = append(topics, r.str(s, e))
	}
	if len(topics) == 0 {
		return protocolErr("UNSUBSCRIBE has no topic filters [MQTT-3.10.3-2]")
	}
	p.Topics = append(make([]string, 0, len(topics)), topics...)
	return nil
}

// decodeUnsuback decodes an UNSUBACK body (MQTT 5 §3.11, 3.1.1 §3.11):
// only the packet identifier below 5.
func (d *Decoder) decodeUnsuback(r *reader, p *Packet) error {
	var err error
	if p.PacketID, err = r.packetID(); err != nil {
		return err
	}
	if r.v < Version5 {
		return nil
	}
	if p.Props, err = d.readProps(r, UNSUBACK); err != nil {
		return err
	}
	if err := d.checkCodes(r); err != nil {
		return err
	}
	for _, c := range r.b[r.i:r.end] {
		if !ValidReason(UNSUBACK, c) {
			return protocolErr("UNSUBACK reason code 0x%02X is not an Unsubscribe Reason Code [MQTT-3.11.3-2]", c)
		}
	}
	p.ReasonCodes = r.bin(r.i, r.end)
	r.i = r.end
	return nil
}

// keepScratch clears a scratch slice, so it pins no packet's memory, and
// keeps it for the next packet unless it grew past keepItems.
func keepScratch[T any](s []T) []T {
	if cap(s) > keepItems {
		return nil
	}
	clear(s)
	return s[:0]
}
