package wire

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
)

// Message bodies (reference §9.2, §9.3). Content is stored marshalled; these
// helpers decode and build it. Compression is java.util.zip Deflater /
// DeflaterOutputStream, i.e. zlib (RFC 1950) streams:
//
//   - ActiveMQBytesMessage: int32 uncompressed length + zlib stream
//     (ActiveMQBytesMessage.doCompress);
//   - every other type: the whole content as one zlib stream
//     (Message.doCompress, ActiveMQTextMessage/MapMessage storeContent).
//
// Properties are never compressed.

// Properties decodes MarshalledProperties; nil when there are none.
func (m *Message) Properties(lim Limits) (map[string]any, error) {
	if m.MarshalledProperties == nil {
		return nil, nil
	}
	p, err := UnmarshalPrimitiveMap(m.MarshalledProperties, lim)
	if err != nil {
		return nil, fmt.Errorf("properties: %w", err)
	}
	return p, nil
}

// SetProperties replaces MarshalledProperties; a nil or empty map clears them.
func (m *Message) SetProperties(p map[string]any) error {
	if len(p) == 0 {
		m.MarshalledProperties = nil
		return nil
	}
	b, err := AppendPrimitiveMap(nil, p)
	if err != nil {
		return fmt.Errorf("properties: %w", err)
	}
	m.MarshalledProperties = b
	return nil
}

// inflate decompresses a zlib stream, refusing output beyond max bytes.
func inflate(b []byte, max int64) ([]byte, error) {
	zr, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptBody, err)
	}
	defer zr.Close()
	out, err := io.ReadAll(io.LimitReader(zr, max+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptBody, err)
	}
	if int64(len(out)) > max {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, max)
	}
	return out, nil
}

func deflate(dst, b []byte) []byte {
	buf := bytes.NewBuffer(dst)
	zw := zlib.NewWriter(buf)
	zw.Write(b) // writes to a bytes.Buffer cannot fail
	zw.Close()
	return buf.Bytes()
}

// Body returns the uncompressed content: for a BytesMessage the bytes, for
// other types the marshalled body (text, map, stream, serialized object).
func (m *Message) Body(lim Limits) ([]byte, error) {
	lim = lim.withDefaults()
	if !m.Compressed || m.Content == nil {
		if int64(len(m.Content)) > lim.MaxBodySize {
			return nil, fmt.Errorf("%w: %d bytes", ErrBodyTooLarge, len(m.Content))
		}
		return m.Content, nil
	}
	if m.DataStructureType() == TypeActiveMQBytesMessage {
		if len(m.Content) < 4 {
			return nil, fmt.Errorf("%w: compressed bytes body shorter than its length", ErrCorruptBody)
		}
		n := int64(int32(binary.BigEndian.Uint32(m.Content)))
		if n < 0 {
			return nil, fmt.Errorf("%w: length %d", ErrCorruptBody, n)
		}
		if n > lim.MaxBodySize {
			return nil, fmt.Errorf("%w: %d bytes", ErrBodyTooLarge, n)
		}
		out, err := inflate(m.Content[4:], n)
		if err != nil {
			return nil, err
		}
		if int64(len(out)) != n {
			return nil, fmt.Errorf("%w: inflated %d bytes, header says %d", ErrCorruptBody, len(out), n)
		}
		return out, nil
	}
	return inflate(m.Content, lim.MaxBodySize)
}

// setBody stores marshalled body b, compressing it as Java would when
// compress is set.
func (m *Message) setBody(b []byte, compress bool) {
	m.Compressed = compress
	if !compress {
		m.Content = b
		return
	}
	if m.DataStructureType() == TypeActiveMQBytesMessage {
		out := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(b)/2), uint32(len(b)))
		m.Content = deflate(out, b)
		return
	}
	m.Content = deflate(nil, b)
}

func (m *Message) want(t byte) error {
	if m.DataStructureType() != t {
		return fmt.Errorf("%w: %s is not %s", ErrWrongBodyType, TypeName(m.DataStructureType()), TypeName(t))
	}
	return nil
}

// Text decodes a TextMessage body: int32 byte length (-1 = null text) and
// modified UTF-8 (MarshallingSupport.writeUTF8). ok is false for null text.
func (m *Message) Text(lim Limits) (text string, ok bool, err error) {
	if err := m.want(TypeActiveMQTextMessage); err != nil {
		return "", false, err
	}
	b, err := m.Body(lim)
	if err != nil || b == nil {
		return "", false, err
	}
	if len(b) < 4 {
		return "", false, fmt.Errorf("%w: text body of %d bytes", ErrCorruptBody, len(b))
	}
	n := int(int32(binary.BigEndian.Uint32(b)))
	if n < 0 {
		return "", false, nil
	}
	if n > len(b)-4 {
		return "", false, fmt.Errorf("%w: text length %d exceeds body", ErrCorruptBody, n)
	}
	s, err := DecodeModifiedUTF8(b[4 : 4+n])
	if err != nil {
		return "", false, fmt.Errorf("text body: %w", err)
	}
	return s, true, nil
}

// SetText makes m a TextMessage holding s.
func (m *Message) SetText(s string, compress bool) {
	m.Kind = TypeActiveMQTextMessage
	m.setBody(AppendUTF8(make([]byte, 0, 4+len(s)), s), compress)
}

// Bytes returns a BytesMessage body.
func (m *Message) Bytes(lim Limits) ([]byte, error) {
	if err := m.want(TypeActiveMQBytesMessage); err != nil {
		return nil, err
	}
	return m.Body(lim)
}

// SetBytes makes m a BytesMessage holding b.
func (m *Message) SetBytes(b []byte, compress bool) {
	m.Kind = TypeActiveMQBytesMessage
	m.setBody(b, compress)
}

// Map decodes a MapMessage body (a primitive map); nil for no body.
func (m *Message) Map(lim Limits) (map[string]any, error) {
	if err := m.want(TypeActiveMQMapMessage); err != nil {
		return nil, err
	}
	b, err := m.Body(lim)
	if err != nil || b == nil {
		return nil, err
	}
	v, err := UnmarshalPrimitiveMap(b, lim)
	if err != nil {
		return nil, fmt.Errorf("map body: %w", err)
	}
	return v, nil
}

// SetMap makes m a MapMessage holding v. Java leaves the content null for an
// empty map.
func (m *Message) SetMap(v map[string]any, compress bool) error {
	m.Kind = TypeActiveMQMapMessage
	if len(v) == 0 {
		m.Content, m.Compressed = nil, false
		return nil
	}
	b, err := AppendPrimitiveMap(nil, v)
	if err != nil {
		return fmt.Errorf("map body: %w", err)
	}
	m.setBody(b, compress)
	return nil
}

// Stream decodes a StreamMessage body: tagged primitives until the end.
func (m *Message) Stream(lim Limits) ([]any, error) {
	if err := m.want(TypeActiveMQStreamMessage); err != nil {
		return nil, err
	}
	lim = lim.withDefaults()
	b, err := m.Body(lim)
	if err != nil || b == nil {
		return nil, err
	}
	var out []any
	for len(b) > 0 {
		if len(out) >= lim.MaxMapEntries {
			return nil, fmt.Errorf("stream body: %w", ErrTooManyElements)
		}
		v, n, err := UnmarshalPrimitive(b, lim)
		if err != nil {
			return nil, fmt.Errorf("stream body element %d: %w", len(out), err)
		}
		out = append(out, v)
		b = b[n:]
	}
	return out, nil
}

// SetStream makes m a StreamMessage holding vs.
func (m *Message) SetStream(vs []any, compress bool) error {
	m.Kind = TypeActiveMQStreamMessage
	var b []byte
	var err error
	for i, v := range vs {
		if b, err = AppendPrimitive(b, v); err != nil {
			return fmt.Errorf("stream body element %d: %w", i, err)
		}
	}
	if b == nil {
		b = []byte{}
	}
	m.setBody(b, compress)
	return nil
}

// ObjectBytes returns an ObjectMessage body: a Java serialization stream,
// never deserialized here.
func (m *Message) ObjectBytes(lim Limits) ([]byte, error) {
	if err := m.want(TypeActiveMQObjectMessage); err != nil {
		return nil, err
	}
	return m.Body(lim)
}
