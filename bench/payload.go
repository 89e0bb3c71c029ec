package bench

import (
	"encoding/binary"
	"time"
)

// The stamp at the head of every body:
//
//	0  4  magic "WHB1"
//	4  4  producer index, big-endian
//	8  8  sequence number from 1, per producer
//	16 8  send time, nanoseconds on the run's clock (intended time in open loop)
//
// The rest of the body is filler. A responder echoes the body, so a reply
// carries its request's stamp.
const stampBytes = 24

var stampMagic = [4]byte{'W', 'H', 'B', '1'}

// stamp is what a message carries.
type stamp struct {
	producer int
	seq      uint64
	sent     time.Duration
}

// newBody returns a body of size bytes (at least stampBytes) with filler
// after the stamp; putStamp fills the stamp in.
func newBody(size int) []byte {
	b := make([]byte, size)
	for i := stampBytes; i < size; i++ {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

func putStamp(b []byte, s stamp) {
	copy(b, stampMagic[:])
	binary.BigEndian.PutUint32(b[4:], uint32(s.producer))
	binary.BigEndian.PutUint64(b[8:], s.seq)
	binary.BigEndian.PutUint64(b[16:], uint64(s.sent))
}

func readStamp(b []byte) (stamp, error) {
	if len(b) < stampBytes || [4]byte(b[:4]) != stampMagic {
		return stamp{}, errBadStamp
	}
	return stamp{
		producer: int(binary.BigEndian.Uint32(b[4:])),
		seq:      binary.BigEndian.Uint64(b[8:]),
		sent:     time.Duration(binary.BigEndian.Uint64(b[16:])),
	}, nil
}
