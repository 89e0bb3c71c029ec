package lsm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/openwire/marshal"
	"wharf/protocols/openwire/wire"
)

// Key layout of one shard's database (see the package comment). Every
// number is big-endian, so that badger's byte order is numeric order.
const (
	pMeta   = 0x00 // 0x00 'm': format and shard layout; 0x00 'n': the next id
	pDest   = 'D'  // D id(8)                  -> type(1) name
	pSub    = 'S'  // S id(8)                  -> sub reference (key, record)
	pMsg    = 'M'  // M dest(8) seq(8)          -> message (UserMeta: priority)
	pWait   = 'W'  // W dest(8) seq(8) sub(8)   -> empty: sub still needs msg
	pMark   = 'K'  // K sub(8) type(1) name     -> seq: delivery mark
	pJob    = 'J'  // J id                     -> scheduled job
	pTx     = 'T'  // T xid                    -> prepared transaction
	version = 1    // of the records and this layout
)

var (
	keyMeta   = []byte{pMeta, 'm'}
	keyNextID = []byte{pMeta, 'n'}
)

func idKey(p byte, id uint64) []byte {
	k := make([]byte, 9)
	k[0] = p
	binary.BigEndian.PutUint64(k[1:], id)
	return k
}

func msgKey(dest, seq uint64) []byte {
	k := make([]byte, 17)
	k[0] = pMsg
	binary.BigEndian.PutUint64(k[1:], dest)
	binary.BigEndian.PutUint64(k[9:], seq)
	return k
}

func waitKey(dest, seq, sub uint64) []byte {
	k := make([]byte, 25)
	k[0] = pWait
	binary.BigEndian.PutUint64(k[1:], dest)
	binary.BigEndian.PutUint64(k[9:], seq)
	binary.BigEndian.PutUint64(k[17:], sub)
	return k
}

func markKey(sub uint64, d message.Destination) []byte {
	k := make([]byte, 10, 10+len(d.Name))
	k[0] = pMark
	binary.BigEndian.PutUint64(k[1:], sub)
	k[9] = byte(d.Type)
	return append(k, d.Name...)
}

func strKey(p byte, s string) []byte { return append([]byte{p}, s...) }

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

// A message record is version(1) redeliveries(4) expiration(8) size(4)
// frame: the stored redelivery counter (OpUpdate) lives outside the
// frame, so an update rewrites four bytes of the record, not the message;
// expiration and size are what a stub needs (RecoverStubs reads the
// header, not the frame). Priority is the entry's UserMeta.
const msgHeader = 17

func encodeMsg(m *message.Message) ([]byte, error) {
	f, err := marshalMessage(m)
	if err != nil {
		return nil, err
	}
	b := make([]byte, msgHeader, msgHeader+len(f))
	b[0] = version
	binary.BigEndian.PutUint32(b[1:], uint32(m.RedeliveryCounter))
	binary.BigEndian.PutUint64(b[5:], uint64(m.Expiration))
	binary.BigEndian.PutUint32(b[13:], uint32(min(m.Size(), math.MaxInt32)))
	return append(b, f...), nil
}

// msgStub is what a record's header tells without its frame.
type msgStub struct {
	redeliveries int32
	expiration   int64
	size         int64
}

func decodeStub(b []byte) (msgStub, error) {
	if len(b) < msgHeader || b[0] != version {
		return msgStub{}, fmt.Errorf("%w: message record of %d bytes, version %v", ErrCorrupt, len(b), b[:min(1, len(b))])
	}
	return msgStub{
		redeliveries: int32(binary.BigEndian.Uint32(b[1:])),
		expiration:   int64(binary.BigEndian.Uint64(b[5:])),
		size:         int64(binary.BigEndian.Uint32(b[13:])),
	}, nil
}

// decodeMsg reads a message record stored under d.
func decodeMsg(b []byte, d message.Destination) (*message.Message, error) {
	if len(b) < msgHeader || b[0] != version {
		return nil, fmt.Errorf("%w: message record of %d bytes, version %v", ErrCorrupt, len(b), b[:min(1, len(b))])
	}
	m, err := unmarshalMessage(b[msgHeader:])
	if err != nil {
		return nil, err
	}
	m.RedeliveryCounter = int32(binary.BigEndian.Uint32(b[1:]))
	// Under engine.RetainStore, which holds the retained messages of every
	// topic of the shard, the frame's own destination names the topic:
	// it is all the engine has to find the topic by after a restart.
	if d != engine.RetainStore || !m.Destination.Type.IsTopic() {
		m.Destination = d
	}
	return m, nil
}

// subRecord: clientID name hasRecord [dest selector noLocal].
func encodeSub(r *subRef) []byte {
	var e enc
	e.byte(version)
	e.str(r.key.ClientID)
	e.str(r.key.Name)
	e.bool(r.rec != nil)
	if r.rec != nil {
		e.dest(r.rec.Destination)
		e.str(r.rec.Selector)
		e.bool(r.rec.NoLocal)
	}
	return e.b
}

func decodeSub(id uint64, b []byte) (*subRef, error) {
	d := dec{b: b}
	if d.byte() != version {
		return nil, fmt.Errorf("%w: subscription %d: version", ErrCorrupt, id)
	}
	r := &subRef{id: id}
	r.key.ClientID, r.key.Name = d.str(), d.str()
	if d.bool() {
		r.rec = &engine.DurableSub{Key: r.key, Destination: d.dest(), Selector: d.str(), NoLocal: d.bool()}
	}
	if d.err != nil {
		return nil, fmt.Errorf("subscription %d: %w", id, d.err)
	}
	return r, nil
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
