// Package records is the record encoding storage/lsm and storage/jdbc
// share: the OpenWire StoreFormat frame a message is kept as (KahaDB's
// stored form), and the small length-prefixed records of scheduled jobs
// and prepared transactions (badger values in storage/lsm, the bytea
// columns of WHARF_JOBS and WHARF_TXS in storage/jdbc). Nothing here
// owns state; every function is safe from any goroutine.
package records

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/openwire/marshal"
	"wharf/protocols/openwire/wire"
)

// Version is the version byte that starts a job or transaction record.
const Version = 1

// ErrCorrupt is returned for a stored record that does not decode. The
// stores export it as their own ErrCorrupt.
var ErrCorrupt = errors.New("corrupt stored record")

// Enc builds a record: uvarint-prefixed strings and bytes, fixed
// big-endian numbers. B is the record so far.
type Enc struct{ B []byte }

// Byte appends v.
func (e *Enc) Byte(v byte) { e.B = append(e.B, v) }

// U64 appends v, 8 bytes big-endian.
func (e *Enc) U64(v uint64) { e.B = binary.BigEndian.AppendUint64(e.B, v) }

// I64 appends v, 8 bytes big-endian.
func (e *Enc) I64(v int64) { e.U64(uint64(v)) }

// I32 appends v, 4 bytes big-endian.
func (e *Enc) I32(v int32) { e.B = binary.BigEndian.AppendUint32(e.B, uint32(v)) }

// Count appends n as a uvarint (the number of entries that follow).
func (e *Enc) Count(n int) { e.B = binary.AppendUvarint(e.B, uint64(n)) }

// Bytes appends v with its uvarint length.
func (e *Enc) Bytes(v []byte) {
	e.Count(len(v))
	e.B = append(e.B, v...)
}

// Str appends v with its uvarint length.
func (e *Enc) Str(v string) {
	e.Count(len(v))
	e.B = append(e.B, v...)
}

// Dest appends a destination: its type byte and name.
func (e *Enc) Dest(d message.Destination) { e.Byte(byte(d.Type)); e.Str(d.Name) }

// Bool appends v as one byte.
func (e *Enc) Bool(v bool) {
	if v {
		e.Byte(1)
	} else {
		e.Byte(0)
	}
}

// Msg appends a message with its destination (the frame of a job or
// transaction send names where it was sent, which the engine may have
// changed) and redelivery counter.
func (e *Enc) Msg(m *message.Message) error {
	f, err := MarshalMessage(m)
	if err != nil {
		return err
	}
	e.Dest(m.Destination)
	e.I32(m.RedeliveryCounter)
	e.Bytes(f)
	return nil
}

// Dec reads what Enc wrote from B; the first error sticks in Err and
// every later read returns zero.
type Dec struct {
	B   []byte
	Err error
}

func (d *Dec) fail() {
	if d.Err == nil {
		d.Err = ErrCorrupt
	}
	d.B = nil
}

// Byte reads one byte.
func (d *Dec) Byte() byte {
	if len(d.B) < 1 {
		d.fail()
		return 0
	}
	v := d.B[0]
	d.B = d.B[1:]
	return v
}

// U64 reads 8 bytes big-endian.
func (d *Dec) U64() uint64 {
	if len(d.B) < 8 {
		d.fail()
		return 0
	}
	v := binary.BigEndian.Uint64(d.B)
	d.B = d.B[8:]
	return v
}

// I64 reads 8 bytes big-endian.
func (d *Dec) I64() int64 { return int64(d.U64()) }

// I32 reads 4 bytes big-endian.
func (d *Dec) I32() int32 {
	if len(d.B) < 4 {
		d.fail()
		return 0
	}
	v := binary.BigEndian.Uint32(d.B)
	d.B = d.B[4:]
	return int32(v)
}

// Bytes reads a length-prefixed byte string; the result aliases B.
func (d *Dec) Bytes() []byte {
	n, k := binary.Uvarint(d.B)
	if k <= 0 || uint64(len(d.B)-k) < n {
		d.fail()
		return nil
	}
	v := d.B[k : k+int(n)]
	d.B = d.B[k+int(n):]
	return v
}

// Str reads a length-prefixed string.
func (d *Dec) Str() string { return string(d.Bytes()) }

// Bool reads one byte, non-zero true.
func (d *Dec) Bool() bool { return d.Byte() != 0 }

// Dest reads a destination.
func (d *Dec) Dest() message.Destination {
	t := d.Byte()
	return message.Destination{Type: message.DestType(t), Name: d.Str()}
}

// Count reads an entry count. A count larger than the bytes left cannot
// be honest (every entry takes at least one byte): it fails, so that a
// corrupt count does not make the caller allocate for it.
func (d *Dec) Count() int {
	n, k := binary.Uvarint(d.B)
	if k <= 0 || n > uint64(len(d.B)) {
		d.fail()
		return 0
	}
	d.B = d.B[k:]
	return int(n)
}

// Msg reads what Enc.Msg wrote.
func (d *Dec) Msg() (*message.Message, error) {
	dest, counter, f := d.Dest(), d.I32(), d.Bytes()
	if d.Err != nil {
		return nil, d.Err
	}
	m, err := UnmarshalMessage(f)
	if err != nil {
		return nil, err
	}
	m.Destination, m.RedeliveryCounter = dest, counter
	return m, nil
}

// MarshalMessage is the OpenWire StoreFormat frame kept for m, KahaDB's
// stored form: its kept OpenWire form's bytes (Encoded.Marshalled) when
// it came over OpenWire and is unchanged, else converted. A copy that a composite or virtual
// destination made keeps the bytes of the message as sent, which name
// neither where the copy is nor its OriginalDestination: it is converted.
func MarshalMessage(m *message.Message) ([]byte, error) {
	if m.Original.Protocol == "openwire" && m.Original.Kept() && m.OriginalDestination.IsZero() {
		if b := m.Original.Marshalled(); len(b) > 0 {
			return b, nil
		}
	}
	w, err := marshal.FromEngine(m, m.RedeliveryCounter)
	if err != nil {
		return nil, err
	}
	return wire.Marshal(w, wire.StoreFormat())
}

// UnmarshalFrame reads a StoreFormat frame that must hold a message.
func UnmarshalFrame(b []byte) (*wire.Message, error) {
	ds, err := wire.Unmarshal(b, wire.StoreFormat(), wire.DefaultLimits())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	w, ok := ds.(*wire.Message)
	if !ok {
		return nil, fmt.Errorf("%w: stored record holds a %s, not a message", ErrCorrupt, wire.TypeName(ds.DataStructureType()))
	}
	return w, nil
}

// UnmarshalMessage reads a frame MarshalMessage wrote; b is not kept (the
// message's original form gets its own copy).
func UnmarshalMessage(b []byte) (*message.Message, error) {
	w, err := UnmarshalFrame(b)
	if err != nil {
		return nil, err
	}
	return marshal.ToEngineStored(w, bytes.Clone(b))
}

// EncodeJob is the record of a scheduled job.
func EncodeJob(j *engine.Job) ([]byte, error) {
	var e Enc
	e.Byte(Version)
	e.Str(j.ID)
	e.Str(j.Cron)
	e.I64(j.Delay)
	e.I64(j.Period)
	e.I32(j.Repeat)
	e.I64(j.Start)
	e.I64(j.Next)
	if err := e.Msg(j.Msg); err != nil {
		return nil, fmt.Errorf("scheduled job %s: %w", j.ID, err)
	}
	return e.B, nil
}

// DecodeJob reads what EncodeJob wrote.
func DecodeJob(b []byte) (*engine.Job, error) {
	d := Dec{B: b}
	if d.Byte() != Version {
		return nil, fmt.Errorf("%w: scheduled job: version", ErrCorrupt)
	}
	j := &engine.Job{ID: d.Str(), Cron: d.Str(), Delay: d.I64(), Period: d.I64(), Repeat: d.I32(), Start: d.I64(), Next: d.I64()}
	m, err := d.Msg()
	if err != nil {
		return nil, fmt.Errorf("scheduled job %s: %w", j.ID, err)
	}
	j.Msg = m
	return j, nil
}

// EncodeTx is the record of a prepared transaction: its XID, the
// messages it sends and the acks it makes.
func EncodeTx(t *engine.PreparedTx) ([]byte, error) {
	var e Enc
	e.Byte(Version)
	e.I32(t.XID.FormatID)
	e.Bytes(t.XID.GlobalID)
	e.Bytes(t.XID.Branch)
	e.Count(len(t.Adds))
	for _, m := range t.Adds {
		if err := e.Msg(m); err != nil {
			return nil, fmt.Errorf("prepared transaction %s: %w", t.XID, err)
		}
	}
	e.Count(len(t.Acks))
	for _, a := range t.Acks {
		e.Dest(a.Dest)
		e.U64(a.Seq)
		e.Str(a.Sub.ClientID)
		e.Str(a.Sub.Name)
	}
	return e.B, nil
}

// DecodeTx reads what EncodeTx wrote.
func DecodeTx(b []byte) (*engine.PreparedTx, error) {
	d := Dec{B: b}
	if d.Byte() != Version {
		return nil, fmt.Errorf("%w: prepared transaction: version", ErrCorrupt)
	}
	t := &engine.PreparedTx{XID: engine.XID{FormatID: d.I32(), GlobalID: bytes.Clone(d.Bytes()), Branch: bytes.Clone(d.Bytes())}}
	for n := d.Count(); n > 0 && d.Err == nil; n-- {
		m, err := d.Msg()
		if err != nil {
			return nil, fmt.Errorf("prepared transaction %s: %w", t.XID, err)
		}
		t.Adds = append(t.Adds, m)
	}
	for n := d.Count(); n > 0 && d.Err == nil; n-- {
		a := engine.TxAck{Dest: d.Dest(), Seq: d.U64()}
		a.Sub.ClientID, a.Sub.Name = d.Str(), d.Str()
		t.Acks = append(t.Acks, a)
	}
	if d.Err != nil {
		return nil, fmt.Errorf("prepared transaction %s: %w", t.XID, d.Err)
	}
	return t, nil
}
