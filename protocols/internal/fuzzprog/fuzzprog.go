// Package fuzzprog reads a fuzz input as a program of choices, for the
// structure-aware session fuzzers: the input picks which frames to build
// from valid templates, what to put in their fields, whether to damage the
// bytes, and where to split the stream, so that most inputs get past the
// handshake and the framing and reach the session's state machine, while
// the mutator still reaches every byte value.
//
// A Prog never fails: once the input is used up every choice is 0, so any
// input is a valid, finite program.
package fuzzprog

// Prog is a fuzz input being read as choices. Not safe for concurrent use.
type Prog struct {
	b []byte
	// Damaged is set once Damage changed the bytes of a frame: the
	// stream's framing may then be lost, and a target must not expect an
	// answer to what follows.
	Damaged bool
}

// New reads b.
func New(b []byte) *Prog { return &Prog{b: b} }

// More reports whether input is left.
func (p *Prog) More() bool { return len(p.b) > 0 }

// Byte is the next byte, 0 when the input is used up.
func (p *Prog) Byte() byte {
	if len(p.b) == 0 {
		return 0
	}
	c := p.b[0]
	p.b = p.b[1:]
	return c
}

// Intn is a choice in [0, n); n must be in 1..256.
func (p *Prog) Intn(n int) int { return int(p.Byte()) % n }

// Bool is a choice.
func (p *Prog) Bool() bool { return p.Byte()&1 == 1 }

// Uint16 is the next two bytes, big-endian.
func (p *Prog) Uint16() uint16 { return uint16(p.Byte())<<8 | uint16(p.Byte()) }

// Uint32 is the next four bytes, big-endian.
func (p *Prog) Uint32() uint32 { return uint32(p.Uint16())<<16 | uint32(p.Uint16()) }

// Bytes is a length byte (at most max) and that many bytes (fewer when the
// input ends).
func (p *Prog) Bytes(max int) []byte {
	n := min(p.Intn(max+1), len(p.b))
	out := p.b[:n:n]
	p.b = p.b[n:]
	return out
}

// Pick is one of list, or, one time in eight, raw bytes from the input (so
// that the values no template lists are reached too).
func (p *Prog) Pick(list ...string) string {
	c := p.Byte()
	if c&7 == 7 {
		return string(p.Bytes(32))
	}
	return list[int(c>>3)%len(list)]
}

// Damage returns frame as it is three times in four; otherwise with one
// byte changed, a run of bytes inserted, or its end cut off, and marks the
// program Damaged.
func (p *Prog) Damage(frame []byte) []byte {
	c := p.Byte()
	if c&3 != 3 || len(frame) == 0 {
		return frame
	}
	p.Damaged = true
	at := int(p.Uint16()) % len(frame)
	out := append([]byte(nil), frame...)
	switch (c >> 2) % 3 {
	case 0:
		out[at] ^= p.Byte() | 1
	case 1:
		ins := p.Bytes(16)
		out = append(out[:at], append(append([]byte(nil), ins...), out[at:]...)...)
	default:
		out = out[:at]
	}
	return out
}

// Splits cuts stream into the pieces OnData is given: at most 8 cuts, at
// offsets the input picks, so that frames arrive split anywhere.
func (p *Prog) Splits(stream []byte) [][]byte {
	var out [][]byte
	for n := p.Intn(9); n > 0 && len(stream) > 1; n-- {
		at := 1 + int(p.Uint16())%(len(stream)-1)
		out = append(out, stream[:at])
		stream = stream[at:]
	}
	return append(out, stream)
}
