package wire

// AppendPacket appends the wire form of p under protocol level version
// (Version31, Version311 or Version5) to dst and returns the extended slice.
// It does not allocate when dst has room for PacketSize(p, version) more
// bytes. It is a pure function, safe from any goroutine.
//
// The remaining length and every Variable Byte Integer are written in the
// minimum number of bytes. Below version 5 nothing of MQTT 5 is written:
// no properties, no reason codes outside CONNACK and SUBACK, no subscription
// options beyond the QoS, and CONNACK's Session Present only from 3.1.1 on.
// In version 5 the short forms are used whenever they say the same thing:
// PUBACK, PUBREC, PUBREL and PUBCOMP without properties and with reason 0
// are 2 bytes, DISCONNECT and AUTH then have no body; with a non-zero
// reason and no properties the Property Length is left out.
//
// A CONNECT is written under its own Connect.ProtocolLevel when that is set
// (version otherwise), with Connect.ProtocolName or, if empty, the name of
// that level; a nil Connect is written as an empty one. AUTH exists only in
// MQTT 5 and is always written in its MQTT 5 form. A Type outside 1..15
// appends nothing.
//
// AppendPacket writes what p says without judging it: the caller keeps
// QoS, flags, reason codes and properties legal for the packet type, packet
// identifiers non-zero, and every string and binary field under 65,536
// bytes (the wire cannot carry more; a longer one would corrupt the
// packet). A packet the Decoder returned always re-encodes to one it
// decodes as equal.
func AppendPacket(dst []byte, p *Packet, version byte) []byte {
	n, pn, wpn := bodySize(p, version)
	if n < 0 {
		return dst
	}
	dst = append(dst, firstByte(p))
	dst = appendVBI(dst, n)
	v5 := version == Version5
	switch p.Type {
	case CONNECT:
		c := connectOf(p)
		level := connectLevel(c, version)
		dst = appendString(dst, connectName(c, level))
		dst = append(dst, level, connectFlags(c))
		dst = appendU16(dst, c.KeepAlive)
		if level == Version5 {
			dst = appendProps(dst, p.Props, pn)
		}
		dst = appendString(dst, c.ClientID)
		if c.WillFlag {
			if level == Version5 {
				dst = appendProps(dst, c.WillProps, wpn)
			}
			dst = appendString(dst, c.WillTopic)
			dst = appendBinary(dst, c.WillPayload)
		}
		if c.UsernameFlag {
			dst = appendString(dst, c.Username)
		}
		if c.PasswordFlag {
			dst = appendBinary(dst, c.Password)
		}
	case CONNACK:
		var af byte
		if p.SessionPresent && version >= Version311 {
			af = 1
		}
		dst = append(dst, af, p.ReasonCode)
		if v5 {
			dst = appendProps(dst, p.Props, pn)
		}
	case PUBLISH:
		dst = appendString(dst, p.Topic)
		if p.QoS > 0 {
			dst = appendU16(dst, p.PacketID)
		}
		if v5 {
			dst = appendProps(dst, p.Props, pn)
		}
		dst = append(dst, p.Payload...)
	case PUBACK, PUBREC, PUBREL, PUBCOMP:
		dst = appendU16(dst, p.PacketID)
		if n > 2 {
			dst = append(dst, p.ReasonCode)
			if n > 3 {
				dst = appendProps(dst, p.Props, pn)
			}
		}
	case SUBSCRIBE:
		dst = appendU16(dst, p.PacketID)
		if v5 {
			dst = appendProps(dst, p.Props, pn)
		}
		for i := range p.Subscriptions {
			s := &p.Subscriptions[i]
			dst = appendString(dst, s.Filter)
			o := s.QoS & 3
			if v5 {
				o |= s.RetainHandling & 3 << 4
				if s.NoLocal {
					o |= 0x04
				}
				if s.RetainAsPublished {
					o |= 0x08
				}
			}
			dst = append(dst, o)
		}
	case SUBACK:
		dst = appendU16(dst, p.PacketID)
		if v5 {
			dst = appendProps(dst, p.Props, pn)
		}
		dst = append(dst, p.ReasonCodes...)
	case UNSUBSCRIBE:
		dst = appendU16(dst, p.PacketID)
		if v5 {
			dst = appendProps(dst, p.Props, pn)
		}
		for _, t := range p.Topics {
			dst = appendString(dst, t)
		}
	case UNSUBACK:
		dst = appendU16(dst, p.PacketID)
		if v5 {
			dst = appendProps(dst, p.Props, pn)
			dst = append(dst, p.ReasonCodes...)
		}
	case DISCONNECT, AUTH:
		if n > 0 {
			dst = append(dst, p.ReasonCode)
			if n > 1 {
				dst = appendProps(dst, p.Props, pn)
			}
		}
	}
	return dst
}

// PacketSize returns the number of bytes AppendPacket(nil, p, version)
// writes, fixed header included: what a session compares with the peer's
// Maximum Packet Size [MQTT-3.1.2-24] before sending. 0 for a Type outside
// 1..15.
func PacketSize(p *Packet, version byte) int {
	n, _, _ := bodySize(p, version)
	if n < 0 {
		return 0
	}
	return 1 + vbiLen(n) + n
}

// bodySize returns the remaining length of p under version, the size of its
// properties and of its will properties (without their Property Length), or
// n < 0 for an unknown type.
func bodySize(p *Packet, version byte) (n, pn, wpn int) {
	v5 := version == Version5
	if v5 {
		pn = p.Props.Size()
	}
	switch p.Type {
	case CONNECT:
		c := connectOf(p)
		level := connectLevel(c, version)
		pn = 0
		n = 2 + len(connectName(c, level)) + 1 + 1 + 2 + 2 + len(c.ClientID)
		if level == Version5 {
			pn = p.Props.Size()
			n += vbiLen(pn) + pn
		}
		if c.WillFlag {
			if level == Version5 {
				wpn = c.WillProps.Size()
				n += vbiLen(wpn) + wpn
			}
			n += 2 + len(c.WillTopic) + 2 + len(c.WillPayload)
		}
		if c.UsernameFlag {
			n += 2 + len(c.Username)
		}
		if c.PasswordFlag {
			n += 2 + len(c.Password)
		}
	case CONNACK:
		n = 2
		if v5 {
			n += vbiLen(pn) + pn
		}
	case PUBLISH:
		n = 2 + len(p.Topic) + len(p.Payload)
		if p.QoS > 0 {
			n += 2
		}
		if v5 {
			n += vbiLen(pn) + pn
		}
	case PUBACK, PUBREC, PUBREL, PUBCOMP:
		n = 2
		if v5 {
			n += shortReasonSize(p.ReasonCode, pn)
		}
	case SUBSCRIBE:
		n = 2
		if v5 {
			n += vbiLen(pn) + pn
		}
		for i := range p.Subscriptions {
			n += 3 + len(p.Subscriptions[i].Filter)
		}
	case SUBACK:
		n = 2 + len(p.ReasonCodes)
		if v5 {
			n += vbiLen(pn) + pn
		}
	case UNSUBSCRIBE:
		n = 2
		if v5 {
			n += vbiLen(pn) + pn
		}
		for _, t := range p.Topics {
			n += 2 + len(t)
		}
	case UNSUBACK:
		n = 2
		if v5 {
			n += vbiLen(pn) + pn + len(p.ReasonCodes)
		}
	case PINGREQ, PINGRESP:
		n = 0
	case DISCONNECT:
		if v5 {
			n = shortReasonSize(p.ReasonCode, pn)
		}
	case AUTH:
		pn = p.Props.Size()
		n = shortReasonSize(p.ReasonCode, pn)
	default:
		return -1, 0, 0
	}
	return n, pn, wpn
}

// shortReasonSize is the size of an optional reason code followed by
// optional properties of size pn: nothing when both say nothing, the code
// alone without properties (MQTT 5 §3.4.2.1, §3.14.2.1, §3.15.2.1).
func shortReasonSize(code byte, pn int) int {
	switch {
	case pn > 0:
		return 1 + vbiLen(pn) + pn
	case code != 0:
		return 1
	}
	return 0
}

var emptyConnect Connect

func connectOf(p *Packet) *Connect {
	if p.Connect == nil {
		return &emptyConnect
	}
	return p.Connect
}

func connectLevel(c *Connect, version byte) byte {
	if c.ProtocolLevel != 0 {
		return c.ProtocolLevel
	}
	return version
}

func connectName(c *Connect, level byte) string {
	switch {
	case c.ProtocolName != "":
		return c.ProtocolName
	case level == Version31:
		return ProtocolName31
	}
	return ProtocolName
}

// connectFlags builds the Connect Flags byte (MQTT 5 §3.1.2.3); bit 0 is
// reserved and written 0 [MQTT-3.1.2-3].
func connectFlags(c *Connect) byte {
	var f byte
	if c.CleanSession {
		f |= 0x02
	}
	if c.WillFlag {
		f |= 0x04
	}
	f |= c.WillQoS & 3 << 3
	if c.WillRetain {
		f |= 0x20
	}
	if c.PasswordFlag {
		f |= 0x40
	}
	if c.UsernameFlag {
		f |= 0x80
	}
	return f
}

// firstByte builds the fixed header's first byte: the type and its flags
// (MQTT 5 §2.1.3).
func firstByte(p *Packet) byte {
	b := byte(p.Type) << 4
	if p.Type == PUBLISH {
		if p.Dup {
			b |= 0x08
		}
		b |= p.QoS & 3 << 1
		if p.Retain {
			b |= 0x01
		}
		return b
	}
	return b | reservedFlags(p.Type)
}

// vbiLen is the length in bytes of n as a Variable Byte Integer.
func vbiLen(n int) int {
	switch {
	case n < 1<<7:
		return 1
	case n < 1<<14:
		return 2
	case n < 1<<21:
		return 3
	}
	return 4
}

// appendVBI appends n as a Variable Byte Integer in the minimum number of
// bytes [MQTT-1.5.5-1].
func appendVBI(dst []byte, n int) []byte {
	for n >= 0x80 {
		dst = append(dst, byte(n)|0x80)
		n >>= 7
	}
	return append(dst, byte(n))
}

func appendU16(dst []byte, v uint16) []byte {
	return append(dst, byte(v>>8), byte(v))
}

func appendU32(dst []byte, v uint32) []byte {
	return append(dst, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// appendString appends a UTF-8 Encoded String: two-byte length, then the
// bytes (MQTT 5 §1.5.4).
func appendString(dst []byte, s string) []byte {
	return append(appendU16(dst, uint16(len(s))), s...)
}

// appendBinary appends Binary Data: two-byte length, then the bytes (MQTT 5
// §1.5.6).
func appendBinary(dst []byte, b []byte) []byte {
	return append(appendU16(dst, uint16(len(b))), b...)
}
