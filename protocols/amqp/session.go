package amqp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"wharf/protocols/amqp/wire"
)

// incomingWindow is the session incoming-window the broker announces
// (transfers). It is large and refreshed, so that link credit, not the
// session window, paces producers, as in ActiveMQ (Proton's default).
const incomingWindow = 1<<31 - 1

// session is one AMQP session (AMQP 1.0 §2.5): a channel's links and the
// transfer numbering of both directions.
type session struct {
	c  *conn
	ch uint16

	// Transport goroutine (c.mu).
	links map[uint32]*link // by the client's handle
	// detached are the handles the broker detached (a refused attach, a
	// link detached with an error) whose answering detach from the client
	// has not come yet (AMQP 1.0 §2.6.5): that detach is expected, not an
	// unattached handle.
	detached       map[uint32]bool
	nextIncomingID uint32           // the client's next transfer id
	inWindow       uint32           // transfers the client may still send
	partial        *partialTransfer // a multi-frame delivery being received

	// Outbound state, under c.outMu.
	nextOutgoingID uint32 // our next transfer id
	nextDeliveryID uint32
	remoteNextIn   uint32 // the client's next-incoming-id as of its last flow
	remoteWindow   uint32 // the client's incoming-window as of its last flow
	backlog        []pendingTransfer
	unsettled      map[uint32]outDelivery // by delivery id
	ended          bool
}

// partialTransfer collects the frames of one delivery (§2.6.14).
type partialTransfer struct {
	l       *link
	first   *wire.Transfer
	payload []byte
}

func newSession(c *conn, ch uint16, b *wire.Begin) *session {
	return &session{
		c:              c,
		ch:             ch,
		links:          map[uint32]*link{},
		detached:       map[uint32]bool{},
		nextIncomingID: b.NextOutgoingID,
		inWindow:       incomingWindow,
		nextOutgoingID: 1,
		remoteNextIn:   1,
		remoteWindow:   b.IncomingWindow,
	}
}

// onFrame handles a frame on the session's channel.
func (s *session) onFrame(f *wire.Frame) {
	switch p := f.Body.(type) {
	case *wire.Attach:
		s.onAttach(p)
	case *wire.Flow:
		s.onFlow(p)
	case *wire.Transfer:
		s.onTransfer(p, f.Payload)
	case *wire.Disposition:
		s.onDisposition(p)
	case *wire.Detach:
		s.onDetach(p)
	case *wire.End:
		s.endLinks(false)
		delete(s.c.sessions, s.ch)
		s.c.writeFrame(s.ch, &wire.End{})
	default:
		s.c.closeWith(wire.ErrCondIllegalState, fmt.Sprintf("%T on a session", p))
	}
}

// endLinks closes every link of the session (connection or session end);
// closeDurables is false: ending a session detaches, it does not close
// durable subscriptions.
func (s *session) endLinks(closeDurables bool) {
	for h, l := range s.links {
		l.detach(closeDurables)
		delete(s.links, h)
	}
	s.c.outMu.Lock()
	s.ended = true
	s.backlog = nil
	s.c.outMu.Unlock()
}

func (s *session) onFlow(f *wire.Flow) {
	s.c.outMu.Lock()
	if f.NextIncomingID != nil {
		s.remoteNextIn = *f.NextIncomingID
	} else {
		s.remoteNextIn = 1
	}
	s.remoteWindow = f.IncomingWindow
	s.c.outMu.Unlock()
	if f.Handle != nil {
		l := s.links[*f.Handle]
		if l == nil {
			s.c.closeWith(wire.ErrCondUnattachedHandle, fmt.Sprintf("flow for handle %d, which is not attached", *f.Handle))
			return
		}
		l.onFlow(f)
	}
	s.c.outMu.Lock()
	s.flushLocked()
	s.c.outMu.Unlock()
	if f.Echo && f.Handle == nil {
		s.c.writeFrame(s.ch, s.flowFrame(nil))
	}
}

// flowFrame is a flow with the session state, and l's link state when l is
// not nil.
func (s *session) flowFrame(l *link) *wire.Flow {
	s.c.outMu.Lock()
	defer s.c.outMu.Unlock()
	return s.flowFrameLocked(l)
}

func (s *session) flowFrameLocked(l *link) *wire.Flow {
	next := s.nextIncomingID
	f := &wire.Flow{
		NextIncomingID: &next,
		IncomingWindow: s.inWindow,
		NextOutgoingID: s.nextOutgoingID,
		OutgoingWindow: 1<<31 - 1,
	}
	if l != nil {
		h, dc, cr := l.handle, l.deliveryCount, l.credit
		f.Handle, f.DeliveryCount, f.LinkCredit = &h, &dc, &cr
		f.Drain = l.drain
	}
	return f
}

func (s *session) onTransfer(t *wire.Transfer, payload []byte) {
	s.nextIncomingID++
	s.inWindow--
	if s.inWindow < incomingWindow/2 {
		s.inWindow = incomingWindow
		s.c.writeFrame(s.ch, s.flowFrame(nil))
	}
	l := s.links[t.Handle]
	if l == nil {
		s.c.closeWith(wire.ErrCondUnattachedHandle, fmt.Sprintf("transfer on handle %d, which is not attached", t.Handle))
		return
	}
	if !l.receiving {
		s.c.closeWith(wire.ErrCondIllegalState, fmt.Sprintf("transfer from the client on its receiving link %q", l.name))
		return
	}
	if s.partial != nil && s.partial.l != l {
		s.c.closeWith(wire.ErrCondIllegalState, "transfer on another link while a multi-frame delivery is incomplete")
		return
	}
	if s.partial == nil {
		if t.DeliveryID == nil {
			s.c.closeWith(wire.ErrCondInvalidField, "first transfer of a delivery without a delivery-id")
			return
		}
		if !t.More && !t.Aborted {
			// A delivery in one frame (the usual one): handled as it is,
			// with no partial delivery to gather it in.
			if len(payload) > s.c.srv.opts.MaxMessageSize {
				l.detachWith(wire.ErrCondMessageSizeExceeded, fmt.Sprintf("message over %d bytes", s.c.srv.opts.MaxMessageSize))
				return
			}
			l.onDelivery(t, payload)
			return
		}
		// The decoder reuses t after this Feed (ReuseBodies): a delivery
		// that spans frames keeps a copy of its first transfer.
		s.partial = &partialTransfer{l: l, first: t.Clone()}
	}
	p := s.partial
	if t.Aborted {
		s.partial = nil // §2.6.14: the delivery is discarded
		l.used()
		return
	}
	if len(p.payload)+len(payload) > s.c.srv.opts.MaxMessageSize {
		s.partial = nil
		l.detachWith(wire.ErrCondMessageSizeExceeded, fmt.Sprintf("message over %d bytes", s.c.srv.opts.MaxMessageSize))
		return
	}
	if p.payload == nil && !t.More {
		p.payload = payload // one frame: no copy
	} else {
		p.payload = append(p.payload, payload...)
	}
	if t.More {
		return
	}
	s.partial = nil
	if t.State != nil && p.first.State == nil {
		p.first.State = t.State
	}
	if t.Settled != nil && p.first.Settled == nil {
		p.first.Settled = t.Settled
	}
	l.onDelivery(p.first, p.payload)
}

// transfer sends one delivery on l, or holds it while the client's
// incoming window is shut. Called with c.outMu held.
func (s *session) transferLocked(l *link, d outDelivery, payload []byte) {
	if s.ended {
		return
	}
	if len(s.backlog) > 0 || s.windowLeftLocked() == 0 {
		s.backlog = append(s.backlog, pendingTransfer{l: l, d: d, payload: bytes.Clone(payload)})
		return
	}
	s.sendLocked(l, d, payload)
}

// xferScratch is a transfer performative being written and the values it
// points to.
type xferScratch struct {
	t       wire.Transfer
	id      uint32
	format  uint32
	settled bool
	tag     [8]byte
}

// pendingTransfer is a delivery held back by the session window.
type pendingTransfer struct {
	l       *link
	d       outDelivery
	payload []byte
}

func (s *session) windowLeftLocked() uint32 {
	used := s.nextOutgoingID - s.remoteNextIn
	if used >= s.remoteWindow {
		return 0
	}
	return s.remoteWindow - used
}

// flushLocked sends what the window held back. Called with c.outMu held.
func (s *session) flushLocked() {
	for len(s.backlog) > 0 && s.windowLeftLocked() > 0 && !s.ended {
		p := s.backlog[0]
		s.backlog[0] = pendingTransfer{}
		s.backlog = s.backlog[1:]
		if p.l.closed.Load() {
			continue
		}
		s.sendLocked(p.l, p.d, p.payload)
	}
	if len(s.backlog) == 0 {
		s.backlog = nil
	}
}

// sendLocked writes the transfer frames of d. Called with c.outMu held.
func (s *session) sendLocked(l *link, d outDelivery, payload []byte) {
	c := s.c
	c.flushAcceptedLocked()
	id := s.nextDeliveryID
	s.nextDeliveryID++
	d.deliveryID = id
	// The performative and the fields it points to are the connection's
	// scratch (outMu), so that a transfer allocates nothing.
	x := &c.xfer
	x.id, x.format, x.settled = id, d.format, d.presettled
	binary.BigEndian.PutUint64(x.tag[:], uint64(id))
	x.t = wire.Transfer{Handle: l.handle, DeliveryID: &x.id, DeliveryTag: x.tag[:], MessageFormat: &x.format, Settled: &x.settled}
	start := len(c.out)
	out, err := wire.AppendTransfer(c.out[:start], s.ch, &x.t, payload, c.maxFrame)
	if err != nil {
		c.log.Warn("delivery cannot be framed", "err", err)
		return
	}
	c.out = out
	// Count the frames written: each advances the transfer id.
	for i := start; i+4 <= len(out); {
		s.nextOutgoingID++
		i += int(binary.BigEndian.Uint32(out[i:]))
	}
	if !d.presettled {
		if s.unsettled == nil {
			s.unsettled = map[uint32]outDelivery{}
		}
		s.unsettled[id] = d
	}
	c.writeRaw(out[start:])
	c.out = out[:0]
}

func (s *session) onDisposition(d *wire.Disposition) {
	if d.Role == wire.RoleSender {
		// The client settles deliveries it sent: nothing to do, the broker
		// settles inbound deliveries itself.
		return
	}
	last := d.First
	if d.Last != nil {
		last = *d.Last
	}
	if last-d.First > 1<<20 {
		s.c.closeWith(wire.ErrCondInvalidField, "disposition range too large")
		return
	}
	// A disposition usually settles one delivery, or a few: room for them
	// on the stack.
	var doneBuf [8]outDelivery
	done := doneBuf[:0]
	s.c.outMu.Lock()
	for id := d.First; ; id++ {
		if od, ok := s.unsettled[id]; ok {
			if d.Settled || d.State != nil {
				delete(s.unsettled, id)
				done = append(done, od)
			}
		}
		if id == last {
			break
		}
	}
	s.c.outMu.Unlock()
	if d.Settled || len(done) == 0 {
		// Settled by the client: the broker confirms nothing, and the
		// outcomes take the fast path (written without a disk sync).
		for i := range done {
			done[i].l.settle(&done[i], d.State, nil)
		}
		return
	}
	// rcv-settle-mode second: the client waits for the broker to settle
	// after its outcome (§2.6.12), and forgets the delivery then. The
	// settling disposition goes out once every outcome of the range is on
	// disk (settleJoin), so that a crash cannot bring back a message whose
	// acceptance the broker settled (issue 13 item 9; ActiveMQ syncs a
	// queue ack that asked for a response).
	j := &settleJoin{s: s, reply: wire.Disposition{Role: wire.RoleSender, First: d.First, Settled: true, State: d.State}}
	if d.Last != nil {
		// d is the decoder's until the next Feed (ReuseBodies).
		j.last = *d.Last
		j.reply.Last = &j.last
	}
	j.left.Store(int32(len(done)) + 1) // + 1: held until all are posted
	for i := range done {
		if !done[i].l.settle(&done[i], d.State, j) {
			j.Complete(0, nil)
		}
	}
	j.Complete(0, nil)
}

// settleJoin is the engine.Completion of the outcomes of one disposition
// the client left unsettled: the last to complete writes the broker's
// settling disposition, reply. If the store failed for one of them the
// connection is closed instead: the broker never settles an outcome the
// store may not have. It runs on a shard's writer goroutine (or the
// connection's, for the hold and outcomes stored at once): it takes
// outMu only and calls nothing in the engine.
type settleJoin struct {
	s      *session
	reply  wire.Disposition
	last   uint32 // reply.Last points here when set
	left   atomic.Int32
	failed atomic.Bool
}

// Complete counts one outcome stored, or failed with err.
func (j *settleJoin) Complete(_ uint64, err error) {
	if err != nil {
		j.failed.Store(true)
	}
	if j.left.Add(-1) != 0 {
		return
	}
	c := j.s.c
	if c.live.Closed() {
		return
	}
	if j.failed.Load() {
		c.log.Warn("outcome not stored, closing")
		c.tc.Close()
		return
	}
	c.outMu.Lock()
	defer c.outMu.Unlock()
	if !j.s.ended {
		c.writeFrameLocked(j.s.ch, &j.reply)
	}
}
