package wire

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// Limits bound what one connection may make the decoder hold. Every length and
// count read from the wire is checked against them before memory is set aside
// for it. The defaults are ActiveMQ 5.17's StompWireFormat constants.
type Limits struct {
	// MaxCommandBytes bounds the command line, EOL excluded (bytes).
	// ActiveMQ MAX_COMMAND_LENGTH = 1024.
	MaxCommandBytes int
	// MaxHeaderLineBytes bounds one raw (still escaped) header line, EOL
	// excluded (bytes). ActiveMQ MAX_HEADER_LENGTH = 10240.
	MaxHeaderLineBytes int
	// MaxHeaders bounds the number of header lines in one frame (count).
	// ActiveMQ MAX_HEADERS = 1000.
	MaxHeaders int
	// MaxBodyBytes bounds the body, whether announced by content-length or
	// read up to the NUL (bytes). ActiveMQ maxDataLength = 100 MiB.
	MaxBodyBytes int
	// MaxFrameBytes bounds a whole frame: command line, header lines, EOLs,
	// body and NUL (bytes). 0 means no cap beyond the others; this is
	// ActiveMQ's transport wireFormat.maxFrameSize.
	MaxFrameBytes int
}

// DefaultLimits returns ActiveMQ 5.17's limits (see Limits).
func DefaultLimits() Limits {
	return Limits{
		MaxCommandBytes:    1024,
		MaxHeaderLineBytes: 10 * 1024,
		MaxHeaders:         1000,
		MaxBodyBytes:       100 * 1024 * 1024,
	}
}

// withDefaults replaces unset (zero or negative) limits by the defaults.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxCommandBytes <= 0 {
		l.MaxCommandBytes = d.MaxCommandBytes
	}
	if l.MaxHeaderLineBytes <= 0 {
		l.MaxHeaderLineBytes = d.MaxHeaderLineBytes
	}
	if l.MaxHeaders <= 0 {
		l.MaxHeaders = d.MaxHeaders
	}
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = d.MaxBodyBytes
	}
	if l.MaxFrameBytes < 0 {
		l.MaxFrameBytes = 0
	}
	return l
}

// Decoder states.
const (
	stCommand = iota // between frames, or reading the command line
	stHeaders        // reading header lines up to the blank line
	stBody           // reading the body
	stNUL            // content-length body read; expecting its NUL
)

// keepBytes is the buffer capacity (bytes) a decoder keeps between frames;
// larger buffers grown for one big frame are released so that an idle
// connection does not pin them.
const keepBytes = 64 * 1024

// Decoder turns a STOMP byte stream into frames. It is sans-I/O: the owner
// feeds whatever bytes it read, split anywhere, and gets the frames completed
// so far. A Decoder is used by one goroutine (the connection's owner); it is
// not safe for concurrent use.
type Decoder struct {
	lim     Limits
	version ver
	err     error // sticky: once set every Feed returns it
	state   int

	// head holds the raw command line and header lines of the frame being
	// read, each stored without its LF; ends[i] is the end offset of line i
	// (line 0 is the command). lineStart is where the current line began.
	head      []byte
	ends      []int
	lineStart int

	frameBytes int // raw bytes of the current frame consumed so far

	frame   Frame
	length  int    // content-length of the current frame, -1 if absent
	body    []byte // content-length body, exact capacity, handed to the frame
	scratch []byte // body read up to a NUL across several Feed calls

	text    []byte // scratch: decoded command and header text
	offs    []int  // scratch: offsets into text
	pending []byte // input held back after a connect-family frame
}

// NewDecoder returns a decoder for a new connection: version 1.0 rules until
// SetVersion is called. Zero fields of l take the DefaultLimits value
// (MaxFrameBytes 0 stays "no cap").
func NewDecoder(l Limits) *Decoder {
	return &Decoder{lim: l.withDefaults(), length: -1}
}

// SetVersion selects the header rules for the frames that follow:
//
//   - "1.0": no escaping; a trailing CR is removed from each line and values
//     are trimmed of surrounding whitespace, as ActiveMQ does for 1.0.
//   - "1.1": \\ \n \c escapes; lines end at LF only, so a CR before the LF is
//     part of the value (STOMP 1.1 "Augmented BNF"; ActiveMQ also keeps it).
//   - "1.2": as 1.1 plus the \r escape, and a line may end in CRLF
//     (STOMP 1.2 "Augmented BNF").
//
// Any other string selects 1.0. CONNECT, STOMP and CONNECTED frames always
// use the 1.0 rules (see Feed).
func (d *Decoder) SetVersion(v string) { d.version = parseVersion(v) }

// Version returns the version whose rules are in force.
func (d *Decoder) Version() string { return d.version.String() }

// Buffered reports how many input bytes Feed held back after a CONNECT,
// STOMP or CONNECTED frame (see Feed).
func (d *Decoder) Buffered() int { return len(d.pending) }

// Err returns the error that stopped the decoder, or nil.
func (d *Decoder) Err() error { return d.err }

// Feed consumes b, which may end anywhere (even inside a CRLF or an escape),
// and appends to out every frame completed so far. The frames never alias b
// or the decoder's buffers, so the caller may reuse b at once. heartbeats
// counts the bare EOLs seen between frames (STOMP 1.2 "Heart-beating": "an
// EOL" is a heart-beat; the "\n" ActiveMQ writes after each frame's NUL counts
// too); they are read activity, not frames.
//
// Feed returns right after a CONNECT, STOMP or CONNECTED frame and keeps the
// rest of b, because the frames after it must be decoded under the version
// that frame negotiates. Those frames are read with the 1.0 rules (no
// unescaping, trimmed values) whatever the version: STOMP 1.2 "Value
// Encoding" exempts them from escaping, and ActiveMQ decodes CONNECT before any
// version is set. The session then calls SetVersion and Feed(nil, out) to
// decode the held bytes; Buffered tells whether any are held.
//
// An error is fatal: it wraps one of the Err* sentinels with what was wrong,
// and every later Feed returns the same error and no frames.
func (d *Decoder) Feed(b []byte, out []Frame) (frames []Frame, heartbeats int, err error) {
	if d.err != nil {
		return out, 0, d.err
	}
	in := b
	if len(d.pending) > 0 {
		in = append(d.pending, b...)
		d.pending = nil
	}
	var rest []byte
	out, rest, heartbeats, err = d.run(in, out)
	if err != nil {
		d.err = err
		d.reset()
		d.head, d.ends, d.text, d.offs = nil, nil, nil, nil
		return out, heartbeats, err
	}
	if len(rest) > 0 {
		d.pending = append([]byte(nil), rest...)
	}
	return out, heartbeats, nil
}

// run decodes from b until b is used up, an error, or a connect-family frame;
// it returns the unused rest of b.
func (d *Decoder) run(b []byte, out []Frame) ([]Frame, []byte, int, error) {
	hb := 0
	for len(b) > 0 {
		switch d.state {
		case stCommand:
			if len(d.head) == 0 {
				// Between frames: skip heart-beat LFs, and NULs, which
				// ActiveMQ's StompCodec skips as well ("skip repeating
				// nulls") and some clients send as keep-alives.
				i := 0
				for i < len(b) && (b[i] == '\n' || b[i] == 0) {
					if b[i] == '\n' {
						hb++
					}
					i++
				}
				b = b[i:]
				if len(b) == 0 {
					break
				}
			}
			n, done, err := d.readLine(b, d.lim.MaxCommandBytes)
			b = b[n:]
			if err == errLimit {
				return out, nil, hb, fmt.Errorf("%w: more than %d bytes", ErrCommandTooLong, d.lim.MaxCommandBytes)
			}
			if err != nil {
				return out, nil, hb, err
			}
			if !done {
				continue
			}
			if len(trimSpace(d.head)) == 0 {
				// A whitespace-only line, typically "\r\n", is a
				// heart-beat: STOMP 1.2 "Heart-beating" allows EOL = CRLF,
				// and ActiveMQ's parseAction skips blank command lines.
				hb++
				d.reset()
				continue
			}
			if err := d.checkFrame(); err != nil {
				return out, nil, hb, err
			}
			d.state = stHeaders
		case stHeaders:
			n, done, err := d.readLine(b, d.lim.MaxHeaderLineBytes)
			b = b[n:]
			if err == errLimit {
				return out, nil, hb, fmt.Errorf("%w: %s frame has a header line of more than %d bytes",
					ErrHeaderTooLong, d.commandForError(), d.lim.MaxHeaderLineBytes)
			}
			if err != nil {
				return out, nil, hb, err
			}
			if !done {
				continue
			}
			// The frame limit is checked per complete line: a line is
			// already bounded by its own limit, and checking here keeps
			// the error independent of how the stream was split.
			if err := d.checkFrame(); err != nil {
				return out, nil, hb, err
			}
			last := d.head[d.ends[len(d.ends)-2]:]
			if len(last) == 0 || (len(last) == 1 && last[0] == '\r') {
				// The blank line (LF or CRLF in every version, as in
				// ActiveMQ's StompCodec) ends the headers.
				d.ends = d.ends[:len(d.ends)-1]
				if err := d.parseHead(); err != nil {
					return out, nil, hb, err
				}
				continue
			}
			if len(d.ends)-1 > d.lim.MaxHeaders {
				return out, nil, hb, fmt.Errorf("%w: %s frame has more than %d headers",
					ErrTooManyHeaders, d.commandForError(), d.lim.MaxHeaders)
			}
		case stBody:
			if d.length >= 0 {
				n := min(len(b), d.length-len(d.body))
				d.body = appendCapped(d.body, b[:n], d.length)
				d.frameBytes += n
				b = b[n:]
				if len(d.body) == d.length {
					d.state = stNUL
				}
				continue
			}
			i := bytes.IndexByte(b, 0)
			chunk := b
			if i >= 0 {
				chunk = b[:i]
			}
			if err := d.checkBodyChunk(len(chunk), i >= 0); err != nil {
				return out, nil, hb, err
			}
			d.frameBytes += len(chunk)
			if i < 0 {
				d.scratch = append(d.scratch, chunk...)
				b = b[len(b):]
				continue
			}
			if len(d.scratch) == 0 {
				if len(chunk) > 0 {
					d.frame.Body = append([]byte(nil), chunk...)
				}
			} else {
				d.frame.Body = append(make([]byte, 0, len(d.scratch)+len(chunk)), d.scratch...)
				d.frame.Body = append(d.frame.Body, chunk...)
			}
			b = b[i+1:]
			out = append(out, d.frame)
			if d.finishFrame() {
				return out, b, hb, nil
			}
		case stNUL:
			if b[0] != 0 {
				return out, nil, hb, fmt.Errorf("%w: %s frame with content-length %d is followed by byte %q",
					ErrMissingNUL, d.frame.Command, d.length, b[0])
			}
			b = b[1:]
			if len(d.body) > 0 {
				d.frame.Body = d.body
				d.body = nil // handed over: exact size, owned by the frame
			}
			out = append(out, d.frame)
			if d.finishFrame() {
				return out, b, hb, nil
			}
		}
	}
	return out, nil, hb, nil
}

// readLine appends bytes of the current line from b to d.head, up to and
// excluding the LF. It returns the bytes of b consumed and whether the line is
// complete; a complete line's end offset is pushed to d.ends. The limit
// excludes the EOL, so one byte more is tolerated when it is (or may yet be)
// the CR of a CRLF. It returns errLimit when the line is too long.
func (d *Decoder) readLine(b []byte, limit int) (n int, done bool, err error) {
	i := bytes.IndexByte(b, '\n')
	seg := b
	if i >= 0 {
		seg = b[:i]
	}
	cur := len(d.head) - d.lineStart + len(seg)
	if cur > limit+1 || (cur == limit+1 && lastByte(d.head, seg) != '\r') {
		return 0, false, errLimit
	}
	used := len(seg)
	if i >= 0 {
		used++
	}
	d.frameBytes += used
	d.head = append(d.head, seg...)
	if i < 0 {
		return used, false, nil
	}
	d.ends = append(d.ends, len(d.head))
	d.lineStart = len(d.head)
	return used, true, nil
}

// errLimit is an internal marker that callers turn into their limit error.
var errLimit = errors.New("limit")

func lastByte(head, seg []byte) byte {
	if len(seg) > 0 {
		return seg[len(seg)-1]
	}
	return head[len(head)-1]
}

// checkFrame checks the bytes of the current frame against MaxFrameBytes.
func (d *Decoder) checkFrame() error {
	if d.lim.MaxFrameBytes > 0 && d.frameBytes > d.lim.MaxFrameBytes {
		return d.frameTooLarge()
	}
	return nil
}

func (d *Decoder) frameTooLarge() error {
	return fmt.Errorf("%w: %s frame exceeds the limit of %d bytes",
		ErrFrameTooLarge, d.commandForError(), d.lim.MaxFrameBytes)
}

// checkBodyChunk checks n more body bytes read up to a NUL (and the NUL when
// nul is set) against MaxBodyBytes and MaxFrameBytes. When both are exceeded
// it reports the one crossed at the earlier byte, so the error does not
// depend on how the stream was split.
func (d *Decoder) checkBodyChunk(n int, nul bool) error {
	bodyAt := -1 // index in the chunk of the first byte over the body limit
	if allow := d.lim.MaxBodyBytes - len(d.scratch); n > allow {
		bodyAt = allow
	}
	frameAt := -1 // same for the frame limit; the NUL counts
	if d.lim.MaxFrameBytes > 0 {
		total := n
		if nul {
			total++
		}
		if allow := d.lim.MaxFrameBytes - d.frameBytes; total > allow {
			frameAt = allow
		}
	}
	switch {
	case bodyAt >= 0 && (frameAt < 0 || bodyAt <= frameAt):
		return fmt.Errorf("%w: %s frame body exceeds the limit of %d bytes",
			ErrBodyTooLarge, d.frame.Command, d.lim.MaxBodyBytes)
	case frameAt >= 0:
		return d.frameTooLarge()
	}
	return nil
}

// commandForError names the frame being read in an error message.
func (d *Decoder) commandForError() string {
	if d.frame.Command != "" {
		return d.frame.Command
	}
	if len(d.ends) == 0 {
		return "unnamed"
	}
	cmd := trimSpace(d.head[:d.ends[0]])
	if c := knownCommand(cmd); c != "" {
		return c
	}
	return quote(cmd)
}

// parseHead decodes the command and header lines held in d.head into
// d.frame, then prepares the body state. All decoded text is copied into one
// string, so a frame costs one allocation for its text, one for its header
// slice and one for its body.
func (d *Decoder) parseHead() error {
	cmdRaw := trimSpace(d.head[:d.ends[0]])
	cmd := knownCommand(cmdRaw)
	v := d.version
	if isConnectFamily(cmd) {
		v = ver10
	}
	text := d.text[:0]
	offs := d.offs[:0]
	if cmd == "" {
		text = append(text, cmdRaw...)
	}
	offs = append(offs, len(text))
	start := d.ends[0]
	for _, end := range d.ends[1:] {
		line := d.head[start:end]
		start = end
		if v != ver11 && len(line) > 0 && line[len(line)-1] == '\r' {
			// 1.0 and 1.2: CRLF is an EOL (ActiveMQ readHeaderLine strips
			// the CR for exactly these two versions).
			line = line[:len(line)-1]
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			// DEVIATION: ActiveMQ takes a line without a colon as a header
			// name with an empty value (and ends the headers at a one-byte
			// line). Every STOMP BNF requires the colon; a line without
			// one is almost always a frame whose blank line was lost, so
			// it is refused rather than guessed at.
			d.text, d.offs = text, offs
			return fmt.Errorf("%w: %s in %s frame", ErrBadHeaderLine, quote(line), commandName(cmd, cmdRaw))
		}
		// An empty name (":value") is accepted, as ActiveMQ accepts it; the
		// session decides whether such a header means anything.
		name, value := line[:colon], line[colon+1:]
		if v == ver10 {
			// ActiveMQ trims 1.0 values (String.trim: bytes <= 0x20).
			value = trimSpace(value)
			text = append(text, name...)
			offs = append(offs, len(text))
			text = append(text, value...)
			offs = append(offs, len(text))
			continue
		}
		var bad int
		if text, bad = appendUnescaped(text, name, v); bad >= 0 {
			return fmt.Errorf("%w (%s frame)", escapeError(string(name), bad), commandName(cmd, cmdRaw))
		}
		offs = append(offs, len(text))
		if text, bad = appendUnescaped(text, value, v); bad >= 0 {
			return fmt.Errorf("%w (%s frame)", escapeError(string(value), bad), commandName(cmd, cmdRaw))
		}
		offs = append(offs, len(text))
	}
	d.text, d.offs = text, offs

	s := string(text) // the frame's one text allocation
	if cmd == "" {
		cmd = s[:offs[0]]
	}
	d.frame.Command = cmd
	if n := (len(offs) - 1) / 2; n > 0 {
		hs := make([]Header, n)
		for i := range hs {
			hs[i] = Header{Name: s[offs[2*i]:offs[2*i+1]], Value: s[offs[2*i+1]:offs[2*i+2]]}
		}
		d.frame.Headers = hs
	}

	// STOMP 1.2 "Header content-length": the first occurrence decides.
	// DEVIATION: ActiveMQ honours content-length on SEND and MESSAGE only;
	// the specification allows it on every frame, and honouring it
	// everywhere keeps a NUL inside a declared body from splitting a frame.
	d.length = -1
	if cl, ok := d.frame.Get(HdrContentLength); ok {
		n, err := d.parseContentLength(cl)
		if err != nil {
			return err
		}
		d.length = n
	}
	d.state = stBody
	if d.length == 0 {
		d.state = stNUL
	}
	if d.length > 0 {
		// Never set aside more than has arrived plus one chunk: a
		// content-length is a promise, not bytes received.
		d.body = make([]byte, 0, min(d.length, keepBytes))
	}
	return nil
}

func commandName(cmd string, raw []byte) string {
	if cmd != "" {
		return cmd
	}
	return quote(raw)
}

// parseContentLength reads a content-length value: decimal digits with
// optional surrounding whitespace and an optional '+', as Java's
// Integer.parseInt(value.trim()) accepts in ActiveMQ. The value is checked
// against MaxBodyBytes and MaxFrameBytes before any body memory is reserved.
func (d *Decoder) parseContentLength(s string) (int, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimPrefix(t, "+")
	if t == "" {
		return 0, fmt.Errorf("%w: %s in %s frame is not a number of bytes", ErrBadContentLength, quote(s), d.frame.Command)
	}
	n := 0
	over := false
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: %s in %s frame is not a number of bytes", ErrBadContentLength, quote(s), d.frame.Command)
		}
		if !over {
			n = n*10 + int(c-'0')
			if n > d.lim.MaxBodyBytes {
				over = true // keep validating the digits, stop counting
			}
		}
	}
	if over {
		if len(t) <= 18 {
			n = 0
			for i := 0; i < len(t); i++ {
				n = n*10 + int(t[i]-'0')
			}
			return 0, fmt.Errorf("%w: %s frame body of %d bytes exceeds the limit of %d bytes",
				ErrBodyTooLarge, d.frame.Command, n, d.lim.MaxBodyBytes)
		}
		return 0, fmt.Errorf("%w: %s frame body of %s bytes exceeds the limit of %d bytes",
			ErrBodyTooLarge, d.frame.Command, quote(t), d.lim.MaxBodyBytes)
	}
	if d.lim.MaxFrameBytes > 0 && d.frameBytes+n+1 > d.lim.MaxFrameBytes {
		return 0, fmt.Errorf("%w: %s frame of %d bytes exceeds the limit of %d bytes",
			ErrFrameTooLarge, d.frame.Command, d.frameBytes+n+1, d.lim.MaxFrameBytes)
	}
	return n, nil
}

// appendCapped appends src to dst, growing dst geometrically but never
// beyond limit, so a completed content-length body has exactly its length as
// capacity.
func appendCapped(dst, src []byte, limit int) []byte {
	if need := len(dst) + len(src); need > cap(dst) {
		c := min(max(2*cap(dst), need), limit)
		n := make([]byte, len(dst), c)
		copy(n, dst)
		dst = n
	}
	return append(dst, src...)
}

// finishFrame resets for the next frame and reports whether the frame just
// emitted was a connect-family frame, after which run must stop.
func (d *Decoder) finishFrame() bool {
	stop := isConnectFamily(d.frame.Command)
	d.reset()
	return stop
}

// Idle reports whether d is between frames and has not failed: it holds no
// part of a frame and no bytes held back, so the only state it carries is
// its limits and its version. An owner with many quiet connections may
// then put d in a pool and later Resume another decoder in its place
// (issue 18: an idle connection holds no decoder).
func (d *Decoder) Idle() bool {
	return d.err == nil && d.state == stCommand && len(d.head) == 0 && len(d.pending) == 0
}

// Resume makes d (new, or Idle and taken from a pool) the decoder of a
// connection whose previous decoder was Idle with limits l and version v
// (see SetVersion). Buffers d kept are reused.
func (d *Decoder) Resume(l Limits, v string) {
	d.lim = l.withDefaults()
	d.SetVersion(v)
	d.err = nil
	d.pending = nil
	d.reset()
}

// Trim releases the buffers the decoder keeps for the frames to come,
// when it is between frames (no part of one read): a session calls it
// once its handshake is done, so that a connection that then stays idle
// holds none of what its CONNECT frame grew. Bytes held back after a
// connect-family frame are kept.
func (d *Decoder) Trim() {
	if d.state != stCommand || len(d.head) > 0 {
		return
	}
	d.head, d.ends, d.scratch, d.text, d.offs = nil, nil, nil, nil, nil
}

// reset clears the per-frame state, releasing buffers grown past keepBytes.
func (d *Decoder) reset() {
	d.state = stCommand
	d.frame = Frame{}
	d.length = -1
	d.frameBytes = 0
	d.lineStart = 0
	if cap(d.head) > keepBytes {
		d.head = nil
	}
	d.head = d.head[:0]
	d.ends = d.ends[:0]
	d.body = nil // owned by the frame it was handed to, or garbage
	if cap(d.scratch) > keepBytes {
		d.scratch = nil
	}
	d.scratch = d.scratch[:0]
	if cap(d.text) > keepBytes {
		d.text = nil
	}
	if cap(d.ends) > keepBytes/8 {
		d.ends, d.offs = nil, nil
	}
}

// trimSpace removes bytes <= 0x20 from both ends, like Java's String.trim
// that ActiveMQ applies to the command and to 1.0 header values.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && b[0] <= ' ' {
		b = b[1:]
	}
	for len(b) > 0 && b[len(b)-1] <= ' ' {
		b = b[:len(b)-1]
	}
	return b
}
