package wire

// Limits bound what one connection may make the decoder hold. Each is
// checked before memory is set aside for what it bounds. Zero (or negative)
// fields take the DefaultLimits value.
type Limits struct {
	// MaxPacketBytes bounds a whole packet, fixed header included (bytes).
	// It is checked as soon as the remaining length is read, before any of
	// the body is buffered. Default 256 MiB, ActiveMQ's
	// MQTTWireFormat.MAX_MESSAGE_LENGTH; the protocol's own ceiling is a
	// remaining length of 268,435,455 bytes.
	MaxPacketBytes int
	// MaxTopicsPerPacket bounds the subscriptions in a SUBSCRIBE, the topic
	// filters in an UNSUBSCRIBE and the reason codes in a SUBACK or UNSUBACK
	// (count). Default 65,535.
	//
	// DEVIATION: ActiveMQ and the specification bound these only by the
	// packet size; a 256 MiB SUBSCRIBE of 3-byte entries would decode into
	// about 2 GiB of Subscription values. 65,535 is far above any client's
	// batch and keeps a decoded SUBSCRIBE under 2 MiB of slice.
	MaxTopicsPerPacket int
	// MaxUserProperties bounds the User Properties in one property block
	// (count). Default 65,535, for the same reason as MaxTopicsPerPacket.
	MaxUserProperties int
}

// DefaultLimits returns the limits described on Limits.
func DefaultLimits() Limits {
	return Limits{
		MaxPacketBytes:     256 * 1024 * 1024,
		MaxTopicsPerPacket: 65535,
		MaxUserProperties:  65535,
	}
}

// withDefaults replaces unset (zero or negative) limits by the defaults.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxPacketBytes <= 0 {
		l.MaxPacketBytes = d.MaxPacketBytes
	}
	if l.MaxTopicsPerPacket <= 0 {
		l.MaxTopicsPerPacket = d.MaxTopicsPerPacket
	}
	if l.MaxUserProperties <= 0 {
		l.MaxUserProperties = d.MaxUserProperties
	}
	return l
}

// keepBytes is the body buffer capacity (bytes) a decoder keeps between
// packets; a larger buffer grown for one big split packet is handed to that
// packet or dropped, so an idle connection does not pin it.
const keepBytes = 64 * 1024

// keepItems is the scratch slice length (items) a decoder keeps between
// packets, for the same reason.
const keepItems = 1024

// Decoder turns an MQTT byte stream into packets. It is sans-I/O: the owner
// feeds whatever bytes it read, split anywhere, and gets the packets
// completed so far. A Decoder belongs to one connection and is used only by
// that connection's owner goroutine; it is not safe for concurrent use.
type Decoder struct {
	lim       Limits
	err       error // sticky: once set every Feed returns it
	version   byte  // protocol level in force; 0 until a CONNECT or SetVersion
	connected bool  // a CONNECT has been decoded [MQTT-3.1.0-2]

	// The packet being read. hdrLen counts the fixed-header bytes read:
	// 0 between packets, 1 after the first byte, then one more per
	// remaining-length byte. inBody is set once the remaining length is
	// complete and the body is being buffered. (The byte-sized fields
	// sit together: padding would be memory for every connection.)
	first     byte
	inBody    bool
	hdrLen    int
	remaining int    // remaining length (bytes), accumulated 7 bits at a time
	body      []byte // body bytes buffered across Feed calls

	// sc is scratch space reused from packet to packet; what a packet
	// keeps is copied out of it into exactly sized slices. It is made when
	// a packet first needs it (a property block, a SUBSCRIBE): an idle
	// connection's decoder holds none (issue 18).
	sc *scratch
}

// scratch is a Decoder's reusable scratch space.
type scratch struct {
	user   []UserProperty
	subIDs []uint32
	subs   []Subscription
	topics []string
}

// scratch returns d's scratch space, making it on first use.
func (d *Decoder) scratch() *scratch {
	if d.sc == nil {
		d.sc = new(scratch)
	}
	return d.sc
}

// NewDecoder returns a decoder for a new connection, with no protocol level
// yet (see SetVersion). Zero fields of l take their DefaultLimits value.
func NewDecoder(l Limits) *Decoder {
	return &Decoder{lim: l.withDefaults()}
}

// SetVersion sets the protocol level (Version31, Version311 or Version5)
// under which the packets that follow are decoded.
//
// Until a level is known, only a CONNECT may be decoded [MQTT-3.1.0-1]. A
// CONNECT is always decoded under the level it carries, and decoding it sets
// the decoder's level to that level, so packets pipelined behind the CONNECT
// in the same Feed already use it; a broker session does not need to call
// SetVersion at all, and calling it after CONNECT with the same level is
// harmless. A client-side decoder (which never sees a CONNECT) calls
// SetVersion with the level it sent before feeding the CONNACK. Any other
// value of v makes the level unknown again.
func (d *Decoder) SetVersion(v byte) {
	switch v {
	case Version31, Version311, Version5:
		d.version = v
	default:
		d.version = 0
	}
}

// Version returns the protocol level in force, 0 if none. After a CONNECT
// fails to decode it is still the level that CONNECT named, as long as the
// protocol name and level themselves were valid, so that a session can
// answer a broken CONNECT in the client's own format (a v5 CONNACK with
// reason 0x81 or 0x82, a 3.1.1 close).
func (d *Decoder) Version() byte { return d.version }

// Idle reports whether d is between packets and has not failed: it holds
// no part of a packet, so the only state it carries is its limits, its
// protocol level and whether it decoded a CONNECT. An owner with many
// quiet connections may then put d in a pool and later Resume another
// decoder in its place (issue 18: an idle connection holds no decoder).
func (d *Decoder) Idle() bool { return d.err == nil && d.hdrLen == 0 && !d.inBody }

// Connected reports whether d has decoded a CONNECT [MQTT-3.1.0-2].
func (d *Decoder) Connected() bool { return d.connected }

// Resume makes d (new, or Idle and taken from a pool) the decoder of a
// connection whose previous decoder was Idle with limits l, protocol level
// version and CONNECT decoded or not (connected). Buffers d kept are
// reused.
func (d *Decoder) Resume(l Limits, version byte, connected bool) {
	d.lim = l.withDefaults()
	d.SetVersion(version)
	d.connected = connected
	d.err = nil
	d.endPacket()
	d.body = d.body[:0]
}

// Err returns the error that stopped the decoder, or nil.
func (d *Decoder) Err() error { return d.err }

// Buffered reports how many bytes of an incomplete packet the decoder holds.
func (d *Decoder) Buffered() int {
	if d.inBody {
		return d.hdrLen + len(d.body)
	}
	return d.hdrLen
}

// Feed consumes b, which may end anywhere (inside the fixed header, a
// string, a property), and appends to out every packet completed so far.
// The packets never alias b or the decoder's buffers (see Packet), so the
// caller may reuse b at once and hand the packets to other goroutines.
//
// An error is fatal: it is an *Error (see Error and ReasonFor) naming what
// was wrong, and every later Feed returns the same error and no packets.
// Packets completed before the bad one are still appended to out. The
// result does not depend on how the stream was split: the same packets and
// the same error for any split.
func (d *Decoder) Feed(b []byte, out []Packet) ([]Packet, error) {
	if d.err != nil {
		return out, d.err
	}
	out, err := d.run(b, out)
	if err != nil {
		d.err = err
		d.body, d.sc = nil, nil
	}
	return out, err
}

// run decodes b up to its end or the first error.
func (d *Decoder) run(b []byte, out []Packet) ([]Packet, error) {
	for len(b) > 0 {
		if d.inBody {
			n := min(len(b), d.remaining-len(d.body))
			d.body = appendCapped(d.body, b[:n], d.remaining)
			b = b[n:]
			if len(d.body) < d.remaining {
				continue
			}
			// A body grown to exactly its length is handed to the packet if
			// the packet keeps any of it; a reused larger buffer is copied.
			p, handed, err := d.decode(d.body, cap(d.body) != len(d.body))
			if err != nil {
				return out, err
			}
			out = append(out, p)
			if handed || cap(d.body) > keepBytes {
				d.body = nil
			}
			d.body = d.body[:0]
			d.endPacket()
			continue
		}

		c := b[0]
		b = b[1:]
		if d.hdrLen == 0 {
			if err := d.checkFirst(c); err != nil {
				return out, err
			}
			d.first, d.hdrLen, d.remaining = c, 1, 0
			continue
		}
		// Remaining length: a Variable Byte Integer of at most four bytes,
		// least significant group first (MQTT 5 §1.5.5, 3.1.1 §2.2.3).
		d.remaining |= int(c&0x7f) << (7 * (d.hdrLen - 1))
		d.hdrLen++
		if c&0x80 != 0 {
			if d.hdrLen == 5 {
				return out, malformed("%s remaining length has a continuation bit in its fourth byte (MQTT 5 §1.5.5)", Type(d.first>>4))
			}
			continue
		}
		// DEVIATION: a remaining length padded with 0x80 bytes (not the
		// minimum number of bytes, [MQTT-1.5.5-1] in MQTT 5) is accepted,
		// as ActiveMQ's MQTTCodec and mosquitto accept it; it cannot hide
		// anything, since the value is bounded by four bytes either way.
		if total := d.hdrLen + d.remaining; total > d.lim.MaxPacketBytes {
			return out, newError(ReasonPacketTooLarge, "%s packet of %d bytes exceeds the limit of %d bytes",
				Type(d.first>>4), total, d.lim.MaxPacketBytes)
		}
		if d.remaining == 0 || len(b) >= d.remaining {
			// The whole body is in b: decode it in place, no buffering.
			body := b[:d.remaining]
			b = b[d.remaining:]
			p, _, err := d.decode(body, true)
			if err != nil {
				return out, err
			}
			out = append(out, p)
			d.endPacket()
			continue
		}
		d.inBody = true
		if d.body == nil {
			// Never reserve more than has arrived plus one chunk: a
			// remaining length is a promise, not bytes received.
			d.body = make([]byte, 0, min(d.remaining, keepBytes))
		}
	}
	return out, nil
}

// endPacket resets the framing state for the next packet.
func (d *Decoder) endPacket() {
	d.hdrLen, d.remaining, d.inBody = 0, 0, false
}

// checkFirst checks the first byte of a fixed header (packet type and
// flags) under the level in force. CONNECT's flags are checked once its own
// level is read, in decodeConnect.
func (d *Decoder) checkFirst(c byte) error {
	t, flags := Type(c>>4), c&0x0f
	if t == 0 {
		return malformed("packet type 0 is reserved (MQTT 5 §2.1.2)")
	}
	if t == CONNECT {
		if d.connected {
			return protocolErr("second CONNECT on the connection [MQTT-3.1.0-2]")
		}
		return nil
	}
	if d.version == 0 {
		return protocolErr("%s before CONNECT: the first packet must be CONNECT [MQTT-3.1.0-1]", t)
	}
	switch t {
	case AUTH:
		if d.version < Version5 {
			return malformed("packet type 15 (AUTH) is reserved before MQTT 5 (MQTT 3.1.1 §2.2.1)")
		}
	case PUBLISH:
		qos := flags >> 1 & 3
		if qos == 3 {
			return malformed("PUBLISH QoS 3 is malformed [MQTT-3.3.1-4]")
		}
		// MQTT 3.1 has no such rule: its DUP flag was only advisory.
		if qos == 0 && flags&0x08 != 0 && d.version >= Version311 {
			return malformed("QoS 0 PUBLISH with DUP set [MQTT-3.3.1-2]")
		}
		return nil
	}
	// MQTT 3.1 gave every packet type DUP, QoS and RETAIN bits (PUBREL,
	// SUBSCRIBE and UNSUBSCRIBE at QoS 1, and DUP on their retries), so its
	// flags are not checked; 3.1.1 fixed them [MQTT-2.2.2-1].
	if d.version == Version31 {
		return nil
	}
	if want := reservedFlags(t); flags != want {
		return malformed("%s fixed header flags 0x%X, must be 0x%X %s", t, flags, want,
			tag(d.version, "[MQTT-2.2.2-2]", "[MQTT-2.1.3-1]"))
	}
	return nil
}

// reservedFlags returns the fixed header flags every packet type but
// PUBLISH must carry (MQTT 5 §2.1.3, MQTT 3.1.1 §2.2.2).
func reservedFlags(t Type) byte {
	switch t {
	case PUBREL, SUBSCRIBE, UNSUBSCRIBE:
		return 0x02
	}
	return 0
}

// tag picks the spec tag of the level in force: the 3.1.1 one for 3.1 and
// 3.1.1 (3.1 has no tags), the MQTT 5 one for 5.
func tag(v byte, t311, t5 string) string {
	if v == Version5 {
		return t5
	}
	return t311
}

// appendCapped appends src to dst, growing dst geometrically but never
// beyond limit, so a completed body has exactly its length as capacity.
func appendCapped(dst, src []byte, limit int) []byte {
	if need := len(dst) + len(src); need > cap(dst) {
		c := min(max(2*cap(dst), need), limit)
		n := make([]byte, len(dst), c)
		copy(n, dst)
		dst = n
	}
	return append(dst, src...)
}
