package conform

import (
	"errors"
	"io"
	"net"
	"time"

	"wharf/protocols/mqtt/wire"
)

// Raw MQTT cases: what a client library never sends, built with Wharf's own
// encoder (or by hand) and read back with its decoder.

// RawMQTT is a byte-level MQTT connection: packets encoded and decoded
// with protocols/mqtt/wire.
type RawMQTT struct {
	t   TB
	nc  net.Conn
	dec *wire.Decoder
	// Version is the protocol level CONNECT sends and packets are encoded
	// for: 3.1.1 unless set before Connect.
	Version byte
	queue   []wire.Packet
}

func DialRawMQTT(t TB, addr string) *RawMQTT {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	// A client-side decoder never sees CONNECT: it is told the level.
	dec := wire.NewDecoder(wire.DefaultLimits())
	dec.SetVersion(wire.Version311)
	return &RawMQTT{t: t, nc: nc, dec: dec, Version: wire.Version311}
}

func (r *RawMQTT) Write(b []byte) {
	r.t.Helper()
	if _, err := r.nc.Write(b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

func (r *RawMQTT) Send(p *wire.Packet) { r.Write(wire.AppendPacket(nil, p, r.Version)) }

func (r *RawMQTT) Connect(id string, clean bool, keepAlive uint16, props *wire.Properties) *wire.Packet {
	r.t.Helper()
	name := wire.ProtocolName
	if r.Version == wire.Version31 {
		name = wire.ProtocolName31
	}
	cn := &wire.Connect{ProtocolName: name, ProtocolLevel: r.Version, CleanSession: clean, KeepAlive: keepAlive, ClientID: id}
	if u, p := credentials(r.t); u != "" {
		cn.UsernameFlag, cn.Username = true, u
		cn.PasswordFlag, cn.Password = true, []byte(p)
	}
	r.Send(&wire.Packet{Type: wire.CONNECT, Props: props, Connect: cn})
	r.dec.SetVersion(r.Version)
	return r.Read()
}

// read returns the next packet the broker sends, failing after wait.
func (r *RawMQTT) Read() *wire.Packet {
	r.t.Helper()
	p, err := r.TryRead(wait)
	if err != nil {
		r.t.Fatalf("read: %v", err)
	}
	return p
}

func (r *RawMQTT) TryRead(d time.Duration) (*wire.Packet, error) {
	buf := make([]byte, 4096)
	deadline := time.Now().Add(d)
	for len(r.queue) == 0 {
		r.nc.SetReadDeadline(deadline)
		n, err := r.nc.Read(buf)
		if n > 0 {
			var derr error
			r.queue, derr = r.dec.Feed(buf[:n], r.queue)
			if derr != nil {
				return nil, derr
			}
		}
		if err != nil && len(r.queue) == 0 {
			return nil, err
		}
	}
	p := r.queue[0]
	r.queue = r.queue[1:]
	return &p, nil
}

// closed asserts the broker closes the connection, after any packets in
// want (by type) and nothing else.
func (r *RawMQTT) Closed(want ...wire.Type) {
	r.t.Helper()
	for {
		p, err := r.TryRead(wait)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				r.t.Fatal("the broker did not close the connection")
			}
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !IsReset(err) {
				r.t.Fatalf("read: %v", err)
			}
			if len(want) > 0 {
				r.t.Fatalf("closed before %v", want)
			}
			return
		}
		if len(want) == 0 || p.Type != want[0] {
			r.t.Fatalf("got %s before the close, want %v", p.Type, want)
		}
		want = want[1:]
	}
}

func IsReset(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe)
}

// alive checks that a connection still works: PINGREQ gets PINGRESP.
func (r *RawMQTT) Alive() {
	r.t.Helper()
	r.Send(&wire.Packet{Type: wire.PINGREQ})
	if p := r.Read(); p.Type != wire.PINGRESP {
		r.t.Fatalf("PINGREQ answered with %s", p.Type)
	}
}

func mqttRawConnectRefusals(t *T) {
	addr := t.Addr(MQTT)
	bystander := DialRawMQTT(t, addr)
	if ack := bystander.Connect(t.Uniq()+"-ok", true, 0, nil); ack.Type != wire.CONNACK || ack.ReasonCode != 0 {
		t.Fatalf("plain connect: %s %#x", ack.Type, ack.ReasonCode)
	}

	t.Run("unknown protocol level gets CONNACK 0x01", func(t *T) {
		r := DialRawMQTT(t, addr)
		// CONNECT "MQTT" level 9, clean, keep-alive 0, client id "x".
		r.Write([]byte{0x10, 13, 0, 4, 'M', 'Q', 'T', 'T', 9, 0x02, 0, 0, 0, 1, 'x'})
		p := r.Read()
		if p.Type != wire.CONNACK || p.ReasonCode != wire.ConnRefusedProtocolVersion {
			t.Fatalf("got %s %#x, want CONNACK 0x01", p.Type, p.ReasonCode)
		}
		r.Closed()
	})
	t.Run("empty client id without clean session gets CONNACK 0x02", func(t *T) {
		r := DialRawMQTT(t, addr)
		p := r.Connect("", false, 0, nil)
		if p.Type != wire.CONNACK || p.ReasonCode != wire.ConnRefusedIdentifierRejected {
			t.Fatalf("got %s %#x, want CONNACK 0x02", p.Type, p.ReasonCode)
		}
		r.Closed()
	})
	t.Run("packet before CONNECT closes", func(t *T) {
		r := DialRawMQTT(t, addr)
		r.Write([]byte{0xC0, 0}) // PINGREQ
		r.Closed()
	})
	t.Run("second CONNECT closes", func(t *T) {
		r := DialRawMQTT(t, addr)
		r.Connect(t.Uniq(), true, 0, nil)
		r.Send(&wire.Packet{Type: wire.CONNECT, Connect: &wire.Connect{ProtocolName: "MQTT", ProtocolLevel: 4, CleanSession: true, ClientID: "again"}})
		r.Closed()
	})
	t.Run("MQTT 5 second CONNECT gets DISCONNECT 0x82", func(t *T) {
		needMQTT5(t)
		r := DialRawMQTT(t, addr)
		r.Version = wire.Version5
		r.Connect(t.Uniq(), true, 0, nil)
		r.Send(&wire.Packet{Type: wire.CONNECT, Connect: &wire.Connect{ProtocolName: "MQTT", ProtocolLevel: 5, CleanSession: true, ClientID: "again"}})
		p := r.Read()
		if p.Type != wire.DISCONNECT || p.ReasonCode != wire.ReasonProtocolError {
			t.Fatalf("got %s %#x, want DISCONNECT 0x82", p.Type, p.ReasonCode)
		}
		r.Closed()
	})
	t.Run("remaining length of five bytes closes", func(t *T) {
		r := DialRawMQTT(t, addr)
		r.Connect(t.Uniq(), true, 0, nil)
		r.Write([]byte{0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01})
		r.Closed()
	})
	t.Run("publish to a wildcard topic closes", func(t *T) {
		r := DialRawMQTT(t, addr)
		r.Connect(t.Uniq(), true, 0, nil)
		// PUBLISH QoS 0 topic "a/+" written by hand: the encoder would
		// not refuse it, but to be explicit about the bytes.
		r.Write([]byte{0x30, 6, 0, 3, 'a', '/', '+', 'x'})
		r.Closed()
	})
	t.Run("password without user name closes without CONNACK", func(t *T) {
		r := DialRawMQTT(t, addr)
		// flags 0x42: password + clean; 3.1.1 forbids it [MQTT-3.1.2-22].
		r.Write([]byte{0x10, 17, 0, 4, 'M', 'Q', 'T', 'T', 4, 0x42, 0, 0, 0, 1, 'x', 0, 2, 'p', 'w'})
		r.Closed()
	})
	bystander.Alive()
}

func mqttRawKeepAlive(t *T) {
	addr := t.Addr(MQTT)
	r := DialRawMQTT(t, addr)
	r.Connect(t.Uniq(), true, 1, nil)
	start := time.Now()
	r.Closed() // 1.5 s of silence
	if d := time.Since(start); d < time.Second {
		t.Fatalf("closed after %v, before 1.5 times a keep-alive of 1 s", d)
	}
}

func mqttRawReceiveMaximumWindow(t *T) {
	needMQTT5(t)
	addr := t.Addr(MQTT)
	base := t.Uniq()
	r := DialRawMQTT(t, addr)
	r.Version = wire.Version5
	r.Connect(base, true, 0, &wire.Properties{ReceiveMaximum: 2, HasReceiveMaximum: true})
	r.Send(&wire.Packet{Type: wire.SUBSCRIBE, PacketID: 1, Subscriptions: []wire.Subscription{{Filter: base + "/w", QoS: 1}}})
	if p := r.Read(); p.Type != wire.SUBACK || len(p.ReasonCodes) != 1 || p.ReasonCodes[0] != 1 {
		t.Fatalf("SUBACK: %s %v", p.Type, p.ReasonCodes)
	}
	pub := DialRawMQTT(t, addr)
	pub.Version = wire.Version5
	pub.Connect(base+"-p", true, 0, nil)
	for i := 1; i <= 5; i++ {
		pub.Send(&wire.Packet{Type: wire.PUBLISH, QoS: 1, PacketID: uint16(i), Topic: base + "/w", Payload: []byte{byte('0' + i)}})
		if a := pub.Read(); a.Type != wire.PUBACK || a.PacketID != uint16(i) {
			t.Fatalf("publisher got %s %d", a.Type, a.PacketID)
		}
	}
	var ids []uint16
	for i := 0; i < 2; i++ {
		p := r.Read()
		if p.Type != wire.PUBLISH || p.QoS != 1 {
			t.Fatalf("got %s qos %d", p.Type, p.QoS)
		}
		ids = append(ids, p.PacketID)
	}
	// Two unacknowledged: the third waits for a PUBACK.
	if p, err := r.TryRead(300 * time.Millisecond); err == nil {
		t.Fatalf("a third PUBLISH (%q) arrived beyond the receive maximum of 2", p.Payload)
	}
	r.Send(&wire.Packet{Type: wire.PUBACK, PacketID: ids[0]})
	if p := r.Read(); p.Type != wire.PUBLISH || string(p.Payload) != "3" {
		t.Fatalf("after one PUBACK got %s %q, want PUBLISH 3", p.Type, p.Payload)
	}
}

func mqttRawBrokenV5ConnectGetsConnack(t *T) {
	needMQTT5(t)
	addr := t.Addr(MQTT)
	r := DialRawMQTT(t, addr)
	r.dec.SetVersion(wire.Version5)
	// MQTT 5 CONNECT with the reserved flag bit 0 set: malformed.
	r.Write([]byte{0x10, 14, 0, 4, 'M', 'Q', 'T', 'T', 5, 0x03, 0, 0, 0, 0, 1, 'x'})
	p := r.Read()
	if p.Type != wire.CONNACK || p.ReasonCode != wire.ReasonMalformedPacket {
		t.Fatalf("got %s %#x, want CONNACK 0x81", p.Type, p.ReasonCode)
	}
	r.Closed()
}

func mqtt5WillDelayAndMaximumPacketSize(t *T) {
	needMQTT5(t)
	addr := t.Addr(MQTT)
	base := t.Uniq()
	watch := DialRawMQTT(t, addr)
	watch.Connect(base+"-w", true, 0, nil)
	watch.Send(&wire.Packet{Type: wire.SUBSCRIBE, PacketID: 1, Subscriptions: []wire.Subscription{{Filter: base + "/will/+"}}})
	watch.Read()

	connectWithWill := func(id, which string) *RawMQTT {
		r := DialRawMQTT(t, addr)
		r.Version = wire.Version5
		r.Send(&wire.Packet{Type: wire.CONNECT, Props: &wire.Properties{SessionExpiry: 60, HasSessionExpiry: true}, Connect: &wire.Connect{
			ProtocolName: "MQTT", ProtocolLevel: 5, CleanSession: true, ClientID: id,
			WillFlag: true, WillTopic: base + "/will/" + which, WillPayload: []byte(which),
			WillProps: &wire.Properties{WillDelay: 1, HasWillDelay: true},
		}})
		r.dec.SetVersion(wire.Version5)
		if p := r.Read(); p.Type != wire.CONNACK || p.ReasonCode != 0 {
			t.Fatalf("CONNACK %s %#x", p.Type, p.ReasonCode)
		}
		return r
	}
	// Dropped and not back: the will comes after its delay.
	gone := connectWithWill(base+"-gone", "gone")
	start := time.Now()
	gone.nc.Close()
	p := watch.Read()
	if p.Type != wire.PUBLISH || string(p.Payload) != "gone" {
		t.Fatalf("got %s %q, want the delayed will", p.Type, p.Payload)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Fatalf("will published after %v, before its 1 s delay", d)
	}
	// Dropped and back within the delay: no will [MQTT-3.1.3-9]; also when
	// the new connection comes before the broker noticed the old one is
	// gone (a takeover), as here.
	back := connectWithWill(base+"-back", "back")
	back.nc.Close()
	again := DialRawMQTT(t, addr)
	again.Version = wire.Version5
	again.Connect(base+"-back", false, 0, &wire.Properties{SessionExpiry: 60, HasSessionExpiry: true})
	if p, err := watch.TryRead(1500 * time.Millisecond); err == nil {
		t.Fatalf("will of a client that came back was published: %s %q", p.Type, p.Payload)
	}

	// Taken over while still connected: a session that goes on sends no
	// will; one that a clean start ends sends it at once.
	connectWithWill(base+"-keep", "keep")
	cont := DialRawMQTT(t, addr)
	cont.Version = wire.Version5
	cont.Connect(base+"-keep", false, 0, &wire.Properties{SessionExpiry: 60, HasSessionExpiry: true})
	if p, err := watch.TryRead(1500 * time.Millisecond); err == nil {
		t.Fatalf("will of a session taken over and continued: %s %q", p.Type, p.Payload)
	}
	connectWithWill(base+"-clean", "clean")
	fresh := DialRawMQTT(t, addr)
	fresh.Version = wire.Version5
	start = time.Now()
	fresh.Connect(base+"-clean", true, 0, nil)
	if p := watch.Read(); p.Type != wire.PUBLISH || string(p.Payload) != "clean" {
		t.Fatalf("got %s %q, want the will of the session the clean start ended", p.Type, p.Payload)
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Fatalf("will of an ended session after %v, want it at once", d)
	}

	// A client's Maximum Packet Size: a message over it is not sent
	// [MQTT-3.1.2-25]; smaller ones are.
	small := DialRawMQTT(t, addr)
	small.Version = wire.Version5
	small.Connect(base+"-small", true, 0, &wire.Properties{MaximumPacketSize: 100, HasMaximumPacketSize: true})
	small.Send(&wire.Packet{Type: wire.SUBSCRIBE, PacketID: 1, Subscriptions: []wire.Subscription{{Filter: base + "/size", QoS: 1}}})
	small.Read()
	pub := DialRawMQTT(t, addr)
	pub.Connect(base+"-pub", true, 0, nil)
	for i, n := range []int{500, 10} {
		pub.Send(&wire.Packet{Type: wire.PUBLISH, QoS: 1, PacketID: uint16(i + 1), Topic: base + "/size", Payload: make([]byte, n)})
		pub.Read()
	}
	if p := small.Read(); p.Type != wire.PUBLISH || len(p.Payload) != 10 {
		t.Fatalf("got %s with %d bytes, want only the 10-byte message", p.Type, len(p.Payload))
	}
}

// needMQTT5 skips the case (or subtest) on a broker that does not accept
// an MQTT 5 CONNECT: ActiveMQ 5.17 closes the connection, or answers as
// MQTT 3.1.1 with "unacceptable protocol version".
func needMQTT5(t *T) { needMQTT5At(t, t.Addr(MQTT)) }

// needMQTT5At is needMQTT5 for the MQTT connector at addr.
func needMQTT5At(t *T, addr string) {
	r := DialRawMQTT(t, addr)
	r.Version = wire.Version5
	r.dec.SetVersion(wire.Version5)
	cn := &wire.Connect{ProtocolName: wire.ProtocolName, ProtocolLevel: wire.Version5, CleanSession: true, ClientID: t.Uniq() + "-probe"}
	if u := t.User(); u != "" {
		cn.UsernameFlag, cn.Username = true, u
		cn.PasswordFlag, cn.Password = true, []byte(t.Password())
	}
	r.Send(&wire.Packet{Type: wire.CONNECT, Connect: cn})
	p, err := r.TryRead(wait)
	if err != nil || p.Type != wire.CONNACK || p.ReasonCode != 0 {
		if t.Wharf() {
			t.Fatalf("Wharf refused an MQTT 5 CONNECT: %v %v", p, err)
		}
		t.Skipf("the broker does not speak MQTT 5: CONNECT at protocol level 5 answered %v, %v", p, err)
	}
	r.Send(&wire.Packet{Type: wire.DISCONNECT})
}

func init() {
	mq := []string{MQTT}
	register(
		Case{Name: "mqtt/connect/refusals", Needs: mq, Run: mqttRawConnectRefusals,
			Pins:   "unknown level: CONNACK 1; empty id without clean session: CONNACK 2; packets before or after CONNECT, bad lengths, wildcard PUBLISH close",
			Source: "[MQTT-3.1.2-2], [MQTT-3.1.3-8], [MQTT-3.1.0-1], [MQTT-3.1.0-2], [MQTT-3.3.2-2]; MQTTProtocolConverter.onMQTTConnect"},
		Case{Name: "mqtt/connect/keep-alive", Needs: mq, Run: mqttRawKeepAlive,
			Pins:   "a client silent for 1.5 times its keep-alive is disconnected, not before its keep-alive",
			Source: "[MQTT-3.1.2-24]; MQTTInactivityMonitor"},
		Case{Name: "mqtt5/flow/receive-maximum-window", Needs: mq, Run: mqttRawReceiveMaximumWindow, Extension: mqtt5Extension,
			Pins:   "with Receive Maximum 2 a third QoS 1 PUBLISH waits for a PUBACK",
			Source: "[MQTT-3.3.4-9] MQTT 5.0 §3.1.2.11.3"},
		Case{Name: "mqtt5/connect/malformed-gets-connack", Needs: mq, Run: mqttRawBrokenV5ConnectGetsConnack, Extension: mqtt5Extension,
			Pins:   "an MQTT 5 CONNECT with the reserved flag set gets CONNACK 0x81 (malformed) and the close",
			Source: "[MQTT-3.1.2-3] MQTT 5.0 §4.13.1"},
		Case{Name: "mqtt5/session/will-delay-and-maximum-packet-size", Needs: mq, Run: mqtt5WillDelayAndMaximumPacketSize, Extension: mqtt5Extension,
			Pins:   "a Will Delay Interval holds the will (a reconnect cancels it); Maximum Packet Size drops larger publications for that client",
			Source: "MQTT 5.0 §3.1.3.2.2, [MQTT-3.1.2-24]"},
	)
}
