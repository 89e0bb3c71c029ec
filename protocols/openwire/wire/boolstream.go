package wire

// BooleanStream (tight encoding only): every boolean of a frame, including
// those of nested objects, in depth-first field order, packed LSB-first and
// written once right after the type byte. OpenWire v12 BooleanStream.

const maxBooleanStreamBytes = 1<<15 - 1 // Java writes the length as a short

type bitWriter struct {
	data []byte
	n    int // bits written
}

func (w *bitWriter) reset() { w.data, w.n = w.data[:0], 0 }

func (w *bitWriter) write(v bool) {
	if w.n&7 == 0 {
		w.data = append(w.data, 0)
	}
	if v {
		w.data[w.n>>3] |= 1 << (w.n & 7)
	}
	w.n++
}

// marshalledSize is the header plus data length, as BooleanStream.marshalledSize.
func (w *bitWriter) marshalledSize() int {
	switch n := len(w.data); {
	case n < 64:
		return 1 + n
	case n < 256:
		return 2 + n
	default:
		return 3 + n
	}
}

func (w *bitWriter) appendTo(dst []byte) []byte {
	switch n := len(w.data); {
	case n < 64:
		dst = append(dst, byte(n))
	case n < 256:
		dst = append(dst, 0xC0, byte(n))
	default:
		dst = append(dst, 0x80, byte(n>>8), byte(n))
	}
	return append(dst, w.data...)
}

type bitReader struct {
	data []byte
	pos  int // bit index
}

// parseBits reads a BooleanStream header and data from b and returns the
// number of bytes consumed. Like Java, header bytes other than 0x80 and 0xC0
// are themselves the length.
func parseBits(b []byte) (bitReader, int, error) {
	if len(b) < 1 {
		return bitReader{}, 0, ErrTruncated
	}
	n, h := int(b[0]), 1
	switch b[0] {
	case 0xC0:
		if len(b) < 2 {
			return bitReader{}, 0, ErrTruncated
		}
		n, h = int(b[1]), 2
	case 0x80:
		if len(b) < 3 {
			return bitReader{}, 0, ErrTruncated
		}
		n, h = int(int16(uint16(b[1])<<8|uint16(b[2]))), 3
		if n < 0 {
			return bitReader{}, 0, ErrNegativeLength
		}
	}
	if len(b)-h < n {
		return bitReader{}, 0, ErrTruncated
	}
	return bitReader{data: b[h : h+n]}, h + n, nil
}

func (r *bitReader) read() (bool, bool) {
	if r.pos>>3 >= len(r.data) {
		return false, false
	}
	v := r.data[r.pos>>3]>>(r.pos&7)&1 != 0
	r.pos++
	return v, true
}

// remaining is the number of unread bits.
func (r *bitReader) remaining() int { return len(r.data)*8 - r.pos }
