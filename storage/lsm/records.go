package lsm

// Jobs, prepared transactions and the message frame are encoded by
// storage/internal/records, as storage/jdbc encodes the same records.

import (
	"encoding/binary"
	"fmt"
	"math"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/internal/records"
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
	pAudit  = 'A'  // A dest(8) producer        -> seq(8): producer audit (audit.go)
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

// A message record is version(1) redeliveries(4) expiration(8) size(4)
// frame: the stored redelivery counter (OpUpdate) lives outside the
// frame, so an update rewrites four bytes of the record, not the message;
// expiration and size are what a stub needs (RecoverStubs reads the
// header, not the frame). Priority is the entry's UserMeta.
const msgHeader = 17

func encodeMsg(m *message.Message) ([]byte, error) {
	f, err := records.MarshalMessage(m)
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
	m, err := records.UnmarshalMessage(b[msgHeader:])
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
	var e records.Enc
	e.Byte(version)
	e.Str(r.key.ClientID)
	e.Str(r.key.Name)
	e.Bool(r.rec != nil)
	if r.rec != nil {
		e.Dest(r.rec.Destination)
		e.Str(r.rec.Selector)
		e.Bool(r.rec.NoLocal)
	}
	return e.B
}

func decodeSub(id uint64, b []byte) (*subRef, error) {
	d := records.Dec{B: b}
	if d.Byte() != version {
		return nil, fmt.Errorf("%w: subscription %d: version", ErrCorrupt, id)
	}
	r := &subRef{id: id}
	r.key.ClientID, r.key.Name = d.Str(), d.Str()
	if d.Bool() {
		r.rec = &engine.DurableSub{Key: r.key, Destination: d.Dest(), Selector: d.Str(), NoLocal: d.Bool()}
	}
	if d.Err != nil {
		return nil, fmt.Errorf("subscription %d: %w", id, d.Err)
	}
	return r, nil
}
