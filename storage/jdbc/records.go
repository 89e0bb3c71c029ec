package jdbc

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/openwire/marshal"
	"wharf/protocols/openwire/wire"
)

// version of the records of WHARF_JOBS and WHARF_TXS (the encoding
// storage/lsm uses for the same records).
const version = 1

// enc builds a record: uvarint-prefixed strings and bytes, fixed numbers.
type enc struct{ b []byte }

func (e *enc) byte(v byte)  { e.b = append(e.b, v) }
func (e *enc) u64(v uint64) { e.b = binary.BigEndian.AppendUint64(e.b, v) }
func (e *enc) i64(v int64)  { e.u64(uint64(v)) }
func (e *enc) i32(v int32)  { e.b = binary.BigEndian.AppendUint32(e.b, uint32(v)) }
func (e *enc) bytes(v []byte) {
	e.b = binary.AppendUvarint(e.b, uint64(len(v)))
	e.b = append(e.b, v...)
}
func (e *enc) str(v string)               { e.b = binary.AppendUvarint(e.b, uint64(len(v))); e.b = append(e.b, v...) }
func (e *enc) dest(d message.Destination) { e.byte(byte(d.Type)); e.str(d.Name) }
func (e *enc) bool(v bool) {
	if v {
		e.byte(1)
	} else {
		e.byte(0)
	}
}

// dec reads what enc wrote; the first error sticks.
type dec struct {
	b   []byte
	err error
}

func (d *dec) fail() {
	if d.err == nil {
		d.err = ErrCorrupt
	}
	d.b = nil
}

func (d *dec) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *dec) u64() uint64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.BigEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *dec) i64() int64 { return int64(d.u64()) }

func (d *dec) i32() int32 {
	if len(d.b) < 4 {
		d.fail()
		return 0
	}
	v := binary.BigEndian.Uint32(d.b)
	d.b = d.b[4:]
	return int32(v)
}

func (d *dec) bytes() []byte {
	n, k := binary.Uvarint(d.b)
	if k <= 0 || uint64(len(d.b)-k) < n {
		d.fail()
		return nil
	}
	v := d.b[k : k+int(n)]
	d.b = d.b[k+int(n):]
	return v
}

func (d *dec) str() string { return string(d.bytes()) }
func (d *dec) bool() bool  { return d.byte() != 0 }

func (d *dec) dest() message.Destination {
	t := d.byte()
	return message.Destination{Type: message.DestType(t), Name: d.str()}
}

// marshalMessage is the OpenWire StoreFormat frame kept for m, KahaDB's
// stored form: the bytes it arrived with when it came over OpenWire and
// is unchanged, else converted. A copy that a composite or virtual
// destination made keeps the bytes of the message as sent, which name
// neither where the copy is nor its OriginalDestination: it is converted.
func marshalMessage(m *message.Message) ([]byte, error) {
	if m.Original.Protocol == "openwire" && len(m.Original.Bytes) > 0 && m.OriginalDestination.IsZero() {
		return m.Original.Bytes, nil
	}
	w, err := marshal.FromEngine(m, m.RedeliveryCounter)
	if err != nil {
		return nil, err
	}
	return wire.Marshal(w, wire.StoreFormat())
}

// unmarshalMessage reads a frame marshalMessage wrote; b is not kept (the
// message's original form gets its own copy).
func unmarshalMessage(b []byte) (*message.Message, error) {
	ds, err := wire.Unmarshal(b, wire.StoreFormat(), wire.DefaultLimits())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	w, ok := ds.(*wire.Message)
	if !ok {
		return nil, fmt.Errorf("%w: stored record holds a %s, not a message", ErrCorrupt, wire.TypeName(ds.DataStructureType()))
	}
	return marshal.ToEngineStored(w, bytes.Clone(b))
}

// putMsg appends a message with its destination (the frame of a job or
// transaction send names where it was sent, which the engine may have
// changed).
func (e *enc) msg(m *message.Message) error {
	f, err := marshalMessage(m)
	if err != nil {
		return err
	}
	e.dest(m.Destination)
	e.i32(m.RedeliveryCounter)
	e.bytes(f)
	return nil
}

func (d *dec) msg() (*message.Message, error) {
	dest, counter, f := d.dest(), d.i32(), d.bytes()
	if d.err != nil {
		return nil, d.err
	}
	m, err := unmarshalMessage(f)
	if err != nil {
		return nil, err
	}
	m.Destination, m.RedeliveryCounter = dest, counter
	return m, nil
}

func encodeJob(j *engine.Job) ([]byte, error) {
	var e enc
	e.byte(version)
	e.str(j.ID)
	e.str(j.Cron)
	e.i64(j.Delay)
	e.i64(j.Period)
	e.i32(j.Repeat)
	e.i64(j.Start)
	e.i64(j.Next)
	if err := e.msg(j.Msg); err != nil {
		return nil, fmt.Errorf("scheduled job %s: %w", j.ID, err)
	}
	return e.b, nil
}

func decodeJob(b []byte) (*engine.Job, error) {
	d := dec{b: b}
	if d.byte() != version {
		return nil, fmt.Errorf("%w: scheduled job: version", ErrCorrupt)
	}
	j := &engine.Job{ID: d.str(), Cron: d.str(), Delay: d.i64(), Period: d.i64(), Repeat: d.i32(), Start: d.i64(), Next: d.i64()}
	m, err := d.msg()
	if err != nil {
		return nil, fmt.Errorf("scheduled job %s: %w", j.ID, err)
	}
	j.Msg = m
	return j, nil
}

func encodeTx(t *engine.PreparedTx) ([]byte, error) {
	var e enc
	e.byte(version)
	e.i32(t.XID.FormatID)
	e.bytes(t.XID.GlobalID)
	e.bytes(t.XID.Branch)
	e.b = binary.AppendUvarint(e.b, uint64(len(t.Adds)))
	for _, m := range t.Adds {
		if err := e.msg(m); err != nil {
			return nil, fmt.Errorf("prepared transaction %s: %w", t.XID, err)
		}
	}
	e.b = binary.AppendUvarint(e.b, uint64(len(t.Acks)))
	for _, a := range t.Acks {
		e.dest(a.Dest)
		e.u64(a.Seq)
		e.str(a.Sub.ClientID)
		e.str(a.Sub.Name)
	}
	return e.b, nil
}

func (d *dec) count() int {
	n, k := binary.Uvarint(d.b)
	if k <= 0 || n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return int(n)
}

func decodeTx(b []byte) (*engine.PreparedTx, error) {
	d := dec{b: b}
	if d.byte() != version {
		return nil, fmt.Errorf("%w: prepared transaction: version", ErrCorrupt)
	}
	t := &engine.PreparedTx{XID: engine.XID{FormatID: d.i32(), GlobalID: bytes.Clone(d.bytes()), Branch: bytes.Clone(d.bytes())}}
	for n := d.count(); n > 0 && d.err == nil; n-- {
		m, err := d.msg()
		if err != nil {
			return nil, fmt.Errorf("prepared transaction %s: %w", t.XID, err)
		}
		t.Adds = append(t.Adds, m)
	}
	for n := d.count(); n > 0 && d.err == nil; n-- {
		a := engine.TxAck{Dest: d.dest(), Seq: d.u64()}
		a.Sub.ClientID, a.Sub.Name = d.str(), d.str()
		t.Acks = append(t.Acks, a)
	}
	if d.err != nil {
		return nil, fmt.Errorf("prepared transaction %s: %w", t.XID, d.err)
	}
	return t, nil
}

// decodeStored reads the MSG column of a message stored under d, with
// the redelivery counter Wharf keeps beside it (WHARF_MSGS). The
// frame's own counter counts when it is higher: a message ActiveMQ
// stored (and Wharf adopted with 0 beside it) has its counter there
// alone.
func decodeStored(b []byte, d message.Destination, redeliveries int32) (*message.Message, error) {
	m, err := unmarshalMessage(b)
	if err != nil {
		return nil, err
	}
	m.RedeliveryCounter = max(m.RedeliveryCounter, redeliveries)
	// Under engine.RetainStore, which holds the retained messages of every
	// topic of the shard, the frame's own destination names the topic:
	// it is all the engine has to find the topic by after a restart.
	if d != engine.RetainStore || !m.Destination.Type.IsTopic() {
		m.Destination = d
	}
	return m, nil
}

// producerKey splits a message id as ActiveMQ's MSGID_PROD and MSGID_SEQ
// columns hold it: the producer id and the producer sequence id. An id
// of another shape (from AMQP, say) is the producer part whole, sequence 0.
func producerKey(id string) (string, int64) {
	mid := marshal.MessageIDFromEngine(id)
	if mid == nil || mid.ProducerId == nil {
		return id, 0
	}
	if mid.TextView != "" {
		return id, 0
	}
	return mid.ProducerId.String(), mid.ProducerSequenceId
}

// withRedeliveries is the stored frame b with its redelivery counter
// set to n.
func withRedeliveries(b []byte, n int32) ([]byte, error) {
	ds, err := wire.Unmarshal(b, wire.StoreFormat(), wire.DefaultLimits())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	w, ok := ds.(*wire.Message)
	if !ok {
		return nil, fmt.Errorf("%w: stored record holds a %s, not a message", ErrCorrupt, wire.TypeName(ds.DataStructureType()))
	}
	w.RedeliveryCounter = n
	return wire.Marshal(w, wire.StoreFormat())
}
