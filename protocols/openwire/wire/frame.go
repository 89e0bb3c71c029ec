package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Framing (reference §2): int32 size (unless SizePrefixDisabled), type byte,
// body. The size counts the type byte and body. A null command is size 1,
// type 0.

// Encoder appends frames to byte slices. It owns the writer side of the
// marshal cache, so one Encoder serves one connection direction and is not
// safe for concurrent use.
type Encoder struct {
	f       Format
	wc      *marshalCache
	bits    bitWriter
	scratch []byte
	lim     Limits
	c       codec // reused: marshal methods take it through an interface
}

// NewEncoder returns an Encoder for format f. Connections start with
// InitialFormat and switch with SetFormat after negotiation.
func NewEncoder(f Format) *Encoder {
	e := &Encoder{}
	e.SetFormat(f)
	return e
}

// Format returns the encoder's format.
func (e *Encoder) Format() Format { return e.f }

// SetFormat switches format and starts a fresh marshal cache, as
// renegotiateWireFormat does.
func (e *Encoder) SetFormat(f Format) {
	e.f = f
	e.wc = nil
	if f.CacheEnabled {
		e.wc = newMarshalCache(f.CacheSize)
	}
}

// Append appends the frame for ds (nil: a null command) to dst. On error dst
// is returned unchanged and the cache is as before the call.
func (e *Encoder) Append(dst []byte, ds DataStructure) ([]byte, error) {
	f := e.f
	if isNil(ds) {
		if f.SizePrefixDisabled {
			return append(dst, TypeNull), nil
		}
		return append(dst, 0, 0, 0, 1, TypeNull), nil
	}
	t := ds.DataStructureType()
	if f.Version < MinVersion || f.Version > MaxVersion {
		return dst, fmt.Errorf("encode %s: %w: %d", TypeName(t), ErrUnsupportedVersion, f.Version)
	}
	if !knownType(t, f.Version) {
		return dst, fmt.Errorf("encode %s: %w in v%d", TypeName(t), ErrUnknownType, f.Version)
	}
	if e.wc != nil {
		e.wc.begin()
	}
	e.lim = DefaultLimits()
	e.lim.MaxNestingDepth = maxEncodeDepth
	e.c = codec{
		enc: true, tight: f.TightEncodingEnabled, cacheOn: f.CacheEnabled,
		stackTrace: f.StackTraceEnabled, version: f.Version, lim: &e.lim,
		wc: e.wc, typ: t,
	}
	c := &e.c
	defer func() { e.c.data, e.c.bits = nil, nil }()
	start := len(dst)
	if f.TightEncodingEnabled {
		e.bits.reset()
		c.bits = &e.bits
		c.data = e.scratch[:0]
		ds.marshal(c)
		e.scratch = c.data[:0]
		if c.err == nil && len(e.bits.data) > maxBooleanStreamBytes {
			c.fail(ErrBooleanStream)
		}
		if c.err == nil {
			size := int64(1 + e.bits.marshalledSize() + len(c.data))
			if err := e.checkSize(size); err != nil {
				c.err = err
			} else {
				if !f.SizePrefixDisabled {
					dst = binary.BigEndian.AppendUint32(dst, uint32(size))
				}
				dst = append(dst, t)
				dst = e.bits.appendTo(dst)
				dst = append(dst, c.data...)
			}
		}
	} else {
		if !f.SizePrefixDisabled {
			dst = append(dst, 0, 0, 0, 0)
		}
		dst = append(dst, t)
		c.data = dst
		ds.marshal(c)
		dst = c.data
		if c.err == nil && !f.SizePrefixDisabled {
			size := int64(len(dst) - start - 4)
			if err := e.checkSize(size); err != nil {
				c.err = err
			} else {
				binary.BigEndian.PutUint32(dst[start:], uint32(size))
			}
		}
	}
	if c.err != nil {
		if e.wc != nil {
			e.wc.rollback()
		}
		return dst[:start], fmt.Errorf("encode %s: %w", TypeName(t), c.err)
	}
	return dst, nil
}

func (e *Encoder) checkSize(size int64) error {
	if size > 1<<31-1 || (e.f.MaxFrameSize > 0 && size > e.f.MaxFrameSize) {
		return fmt.Errorf("%w: %d bytes", ErrFrameTooLarge, size)
	}
	return nil
}

// Decoder turns a byte stream fed in arbitrary pieces into data structures.
// It does no I/O. It owns the reader side of the marshal cache and is not
// safe for concurrent use. After an error it is broken: the connection must
// be closed.
type Decoder struct {
	f   Format
	lim Limits
	rc  *unmarshalCache
	buf []byte
	r   int
	err error
	c   codec // reused: marshal methods take it through an interface
}

// NewDecoder returns a Decoder for format f with limits lim (zero fields take
// DefaultLimits).
func NewDecoder(f Format, lim Limits) *Decoder {
	d := &Decoder{lim: lim.withDefaults()}
	d.SetFormat(f)
	return d
}

// Format returns the decoder's format.
func (d *Decoder) Format() Format { return d.f }

// SetFormat switches format (after the WireFormatInfo exchange) and starts a
// fresh unmarshal cache. Bytes already buffered are decoded with the new
// format.
func (d *Decoder) SetFormat(f Format) {
	d.f = f
	d.rc = nil
	if f.CacheEnabled {
		d.rc = newUnmarshalCache(f.CacheSize)
	}
}

// Buffered returns the number of bytes fed but not yet decoded.
func (d *Decoder) Buffered() int { return len(d.buf) - d.r }

// Feed buffers p (copied). Call Next until it returns nil before feeding
// more, so that an oversized frame is refused before it is buffered.
func (d *Decoder) Feed(p []byte) {
	if d.r > 0 && d.r == len(d.buf) {
		d.buf, d.r = d.buf[:0], 0
	} else if d.r > 0 && d.r >= cap(d.buf)/2 {
		n := copy(d.buf, d.buf[d.r:])
		d.buf, d.r = d.buf[:n], 0
	}
	d.buf = append(d.buf, p...)
}

func (d *Decoder) maxFrame() int64 {
	m := d.lim.MaxFrameSize
	if d.f.MaxFrameSize > 0 && d.f.MaxFrameSize < m {
		m = d.f.MaxFrameSize
	}
	return m
}

// Next returns the next complete data structure, or (nil, nil) when more
// bytes are needed. Null commands are skipped. Decoded byte slices alias a
// buffer allocated for that frame alone, never the Decoder's buffer.
func (d *Decoder) Next() (DataStructure, error) {
	for d.err == nil {
		ds, ok, err := d.next()
		if err != nil {
			d.err = err
			break
		}
		if !ok {
			d.release()
			return nil, nil
		}
		if ds != nil {
			return ds, nil
		}
	}
	return nil, d.err
}

// release drops a large idle buffer.
func (d *Decoder) release() {
	if d.r == len(d.buf) && cap(d.buf) > 1<<16 {
		d.buf, d.r = nil, 0
	}
}

// next decodes one frame: ok=false means more bytes are needed; ds=nil with
// ok=true is a null command.
func (d *Decoder) next() (DataStructure, bool, error) {
	avail := d.buf[d.r:]
	max := d.maxFrame()
	if d.f.SizePrefixDisabled {
		if len(avail) == 0 {
			return nil, false, nil
		}
		// No size: try to decode what is buffered; running out of bytes
		// means wait. Cache writes are idempotent across attempts.
		_, n, err := d.decode(avail, false)
		if err != nil {
			if errors.Is(err, ErrTruncated) || errors.Is(err, errShortFrame) {
				if int64(len(avail)) > max {
					return nil, false, fmt.Errorf("%w: more than %d bytes without a complete command", ErrFrameTooLarge, max)
				}
				return nil, false, nil
			}
			return nil, false, err
		}
		frame := append([]byte(nil), avail[:n]...)
		d.r += n
		ds, _, err := d.decode(frame, false)
		return ds, true, err
	}
	if len(avail) < 4 {
		return nil, false, nil
	}
	size := int64(int32(binary.BigEndian.Uint32(avail)))
	if size < 1 {
		return nil, false, fmt.Errorf("%w: size %d", ErrMalformedFrame, size)
	}
	if size > max {
		return nil, false, fmt.Errorf("%w: %d > %d bytes", ErrFrameTooLarge, size, max)
	}
	if int64(len(avail)-4) < size {
		return nil, false, nil
	}
	frame := make([]byte, size)
	copy(frame, avail[4:])
	d.r += 4 + int(size)
	ds, _, err := d.decode(frame, true)
	return ds, true, err
}

var errShortFrame = errors.New("openwire: short frame")

// decode decodes one command from frame (type byte first). With exact set
// the command must use the whole frame.
func (d *Decoder) decode(frame []byte, exact bool) (DataStructure, int, error) {
	if len(frame) < 1 {
		return nil, 0, errShortFrame
	}
	t := frame[0]
	if t == TypeNull {
		if exact && len(frame) != 1 {
			return nil, 0, fmt.Errorf("decode Null: %w", ErrTrailingBytes)
		}
		return nil, 1, nil
	}
	if d.f.Version < MinVersion || d.f.Version > MaxVersion {
		return nil, 0, fmt.Errorf("decode %s: %w: %d", TypeName(t), ErrUnsupportedVersion, d.f.Version)
	}
	ds := newDataStructure(t, d.f.Version)
	if ds == nil {
		return nil, 0, fmt.Errorf("decode type %d: %w in v%d", t, ErrUnknownType, d.f.Version)
	}
	d.c = codec{
		tight: d.f.TightEncodingEnabled, cacheOn: d.f.CacheEnabled,
		stackTrace: d.f.StackTraceEnabled, version: d.f.Version, lim: &d.lim,
		in: frame, pos: 1, rc: d.rc, typ: t,
	}
	c := &d.c
	defer func() { d.c.in = nil }()
	if c.tight {
		br, n, err := parseBits(frame[1:])
		if err != nil {
			return nil, 0, fmt.Errorf("decode %s: BooleanStream: %w", TypeName(t), err)
		}
		c.br = br
		c.pos += n
	}
	ds.marshal(c)
	if c.err != nil {
		return nil, 0, fmt.Errorf("decode %s: %w", TypeName(t), c.err)
	}
	if exact && c.pos != len(frame) {
		return nil, 0, fmt.Errorf("decode %s: %w: %d", TypeName(t), ErrTrailingBytes, len(frame)-c.pos)
	}
	if m, ok := ds.(*Message); ok {
		m.Raw = frame[:c.pos:c.pos]
	}
	return ds, c.pos, nil
}

// Marshal encodes ds as one frame in format f with a fresh marshal cache,
// as a store does (KahaDB: StoreFormat).
func Marshal(ds DataStructure, f Format) ([]byte, error) {
	return NewEncoder(f).Append(nil, ds)
}

// Unmarshal decodes exactly one frame in format f with a fresh cache. Byte
// slices in the result alias a copy of frame.
func Unmarshal(frame []byte, f Format, lim Limits) (DataStructure, error) {
	d := NewDecoder(f, lim)
	d.Feed(frame)
	ds, err := d.Next()
	if err != nil {
		return nil, err
	}
	if ds == nil && d.Buffered() > 0 {
		return nil, fmt.Errorf("%w: incomplete frame", ErrTruncated)
	}
	if d.Buffered() != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the frame", ErrTrailingBytes, d.Buffered())
	}
	return ds, nil
}

// UnmarshalShared is Unmarshal for a size-prefixed frame that nobody
// changes afterwards (a message's kept original form): byte slices in the
// result (Content, MarshalledProperties, Raw) alias frame itself instead of
// a copy, so the frame is neither copied nor buffered. A frame in a format
// without size prefix, or with the marshal cache on, is decoded by
// Unmarshal.
func UnmarshalShared(frame []byte, f Format, lim Limits) (DataStructure, error) {
	if f.SizePrefixDisabled || f.CacheEnabled {
		return Unmarshal(frame, f, lim)
	}
	d := Decoder{f: f, lim: lim.withDefaults()}
	if len(frame) < 4 {
		return nil, fmt.Errorf("%w: incomplete frame", ErrTruncated)
	}
	size := int64(int32(binary.BigEndian.Uint32(frame)))
	if size < 1 {
		return nil, fmt.Errorf("%w: size %d", ErrMalformedFrame, size)
	}
	if max := d.maxFrame(); size > max {
		return nil, fmt.Errorf("%w: %d > %d bytes", ErrFrameTooLarge, size, max)
	}
	if int64(len(frame)-4) < size {
		return nil, fmt.Errorf("%w: incomplete frame", ErrTruncated)
	}
	if rest := int64(len(frame)-4) - size; rest != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the frame", ErrTrailingBytes, rest)
	}
	body := frame[4 : 4+size : 4+size]
	ds, _, err := d.decode(body, true)
	if err != nil {
		return nil, err
	}
	return ds, nil // nil for a null command, as Unmarshal
}
