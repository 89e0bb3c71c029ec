package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"wharf/protocols/openwire/wire"
)

// Conn is one OpenWire connection (a JMS Connection). Its methods, and those
// of its sessions, producers and consumers, are safe for concurrent use
// unless they say otherwise.
type Conn struct {
	opts     Options
	log      *slog.Logger
	nc       net.Conn
	id       *wire.ConnectionId
	clientID string
	format   wire.Format
	remote   wire.Options

	nextCommandID  atomic.Int32
	nextSessionID  atomic.Int64
	nextConsumerID atomic.Int64
	nextProducerID atomic.Int64
	nextTxID       atomic.Int64
	nextTempID     atomic.Int64

	// wmu serialises writers: it guards enc, pend, spare and flushed (the
	// encoder owns the outbound marshal cache, so frames must be encoded
	// in the order they are written) and every transacted Session's tx, so
	// that a BEGIN is on the wire before any frame naming its transaction.
	// Callers encode their frames into pend; the flusher goroutine writes
	// what collected there, so frames that pile up while a write is in the
	// kernel go out together in the next one (the same frames, in the same
	// order, as one write each would send). Callers block while pend holds
	// maxPending bytes or more: flow control still reaches them as TCP
	// back-pressure, as in the Java client. wmu is never held while taking
	// another lock.
	wmu       sync.Mutex
	wcond     *sync.Cond // on wmu: pend was taken, a write ended, or the flusher quit
	enc       *wire.Encoder
	pend      []byte // encoded frames not yet handed to the socket
	spare     []byte // the flusher's previous buffer, for reuse
	writing   bool   // the flusher is writing a buffer it took from pend
	flushed   bool   // the flusher quit: nothing more will be written
	kick      chan struct{}
	flushDone chan struct{} // closed when the flusher quits

	// mu guards the maps below and closing. The reader goroutine and every
	// API caller touch them; the critical sections are map operations only.
	mu        sync.Mutex
	pending   map[int32]chan wire.DataStructure
	consumers map[consumerKey]*Consumer
	sessions  map[*Session]struct{}
	closing   bool

	brokerInfo     *wire.BrokerInfo // written once by the reader before gotBrokerInfo closes
	gotBrokerInfo  chan struct{}
	brokerInfoOnce sync.Once

	done       chan struct{} // closed by fail
	failOnce   sync.Once
	err        error // why done was closed; written before close(done)
	readerDone chan struct{}
	readerUp   bool // the reader goroutine was started (set by Dial only)

	// attachWrite, set by Attach only, writes a frame on a connection a
	// server accepted (attach.go); such a Conn has no socket, reader,
	// flusher or monitor of its own.
	attachWrite func(wire.DataStructure) error

	lastRead     atomic.Int64 // unix nanoseconds
	wroteSince   atomic.Bool  // a frame was written since the last write check
	keepAliveIn  atomic.Int64 // KeepAliveInfo frames received
	keepAliveOut atomic.Int64 // KeepAliveInfo frames sent by the inactivity monitor
}

type consumerKey struct{ session, value int64 }

func keyOf(id *wire.ConsumerId) consumerKey {
	if id == nil {
		return consumerKey{}
	}
	return consumerKey{id.SessionId, id.Value}
}

// Dial connects to the OpenWire listener at addr (host:port) and opens a
// connection: TCP connect, WireFormatInfo exchange and negotiation
// (reference §3), ConnectionInfo answered by Response, and the broker's
// BrokerInfo. A refused ConnectionInfo returns a *BrokerError, e.g. class
// javax.jms.InvalidClientIDException for a client id already connected.
func Dial(ctx context.Context, addr string, o Options) (*Conn, error) {
	o = o.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, o.DialTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("openwire client: dial %s: %w", addr, err)
	}
	if o.TLS != nil {
		conf := o.TLS
		if conf.ServerName == "" {
			conf = conf.Clone()
			conf.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(nc, conf)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("openwire client: tls handshake with %s: %w", addr, err)
		}
		nc = tc
	}
	cid := o.ConnectionID
	if cid == "" {
		cid = newID(connectionIDs)
	}
	c := &Conn{
		opts:          o,
		nc:            nc,
		id:            &wire.ConnectionId{Value: cid},
		clientID:      o.ClientID,
		pending:       make(map[int32]chan wire.DataStructure),
		consumers:     make(map[consumerKey]*Consumer),
		sessions:      make(map[*Session]struct{}),
		gotBrokerInfo: make(chan struct{}),
		done:          make(chan struct{}),
		readerDone:    make(chan struct{}),
		kick:          make(chan struct{}, 1),
		flushDone:     make(chan struct{}),
	}
	c.wcond = sync.NewCond(&c.wmu)
	if c.clientID == "" {
		c.clientID = newID(clientIDs)
	}
	c.log = o.Logger.With("proto", "openwire", "remote", addr, "client_id", c.clientID)
	if err := c.open(ctx, addr); err != nil {
		c.fail(err)
		if c.readerUp {
			<-c.readerDone
			<-c.flushDone
		}
		return nil, fmt.Errorf("openwire client: connect %s: %w", addr, err)
	}
	c.log.Debug("connected", "conn", c.id.Value, "version", c.format.Version,
		"tight", c.format.TightEncodingEnabled, "cache", c.format.CacheEnabled)
	return c, nil
}

// open runs the handshake. On error the caller fails the connection.
func (c *Conn) open(ctx context.Context, addr string) error {
	// The context bounds every read and write of the handshake, including
	// the reader goroutine's, through the socket deadline.
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if dl, ok := ctx.Deadline(); ok {
		c.nc.SetDeadline(dl)
	}

	o := c.opts
	local := wire.DefaultOptions()
	local.Version = o.Version
	local.TightEncodingEnabled = o.TightEncoding
	local.CacheEnabled = o.CacheEnabled
	local.CacheSize = o.CacheSize
	local.MaxInactivityDuration = o.MaxInactivityDuration
	local.MaxInactivityDurationInitalDelay = o.MaxInactivityDurationInitalDelay
	if host, _, err := net.SplitHostPort(addr); err == nil {
		local.Host = host
	}
	// Reference §3.1: both sides send WireFormatInfo first, loose and
	// uncached whatever they prefer.
	c.enc = wire.NewEncoder(wire.InitialFormat(o.Version))
	dec := wire.NewDecoder(wire.InitialFormat(o.Version), o.Limits)
	wfi, err := wire.NewWireFormatInfo(local)
	if err != nil {
		return err
	}
	frame, err := c.enc.Append(nil, wfi)
	if err != nil {
		return err
	}
	if _, err := c.nc.Write(frame); err != nil {
		return fmt.Errorf("write WireFormatInfo: %w", ctxErr(ctx, err))
	}
	remoteInfo, err := readWireFormatInfo(ctx, c.nc, dec)
	if err != nil {
		return err
	}
	remote, err := remoteInfo.Options()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrHandshake, err)
	}
	f, err := wire.Negotiate(local, remote)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrHandshake, err)
	}
	c.remote, c.format = remote, f
	c.enc.SetFormat(f)
	// Frames the broker sent after its WireFormatInfo (BrokerInfo) may be
	// buffered already; SetFormat decodes them with the negotiated format.
	dec.SetFormat(f)
	c.lastRead.Store(time.Now().UnixNano())
	c.readerUp = true
	go c.readLoop(dec)
	go c.flushLoop()
	if f.MaxInactivityDuration > 0 {
		go c.monitor(f.MaxInactivityDuration, f.MaxInactivityDurationInitalDelay)
	}

	// The Java client sends Manageable and ClientMaster true; the broker
	// answers Manageable with a ConnectionControl (ignored here).
	if o.BrokerInfo != nil {
		bi := *o.BrokerInfo
		if err := c.oneway(&bi); err != nil {
			return ctxErr(ctx, err)
		}
		if o.BrokerSubscriptionInfo != nil && f.Version >= 12 {
			bsi := *o.BrokerSubscriptionInfo
			if err := c.oneway(&bsi); err != nil {
				return ctxErr(ctx, err)
			}
		}
	}
	info := &wire.ConnectionInfo{
		ConnectionId: c.id,
		ClientId:     c.clientID,
		UserName:     o.Username,
		Password:     o.Password,
		Manageable:   true,
		ClientMaster: true,
		// A failover transport's reconnection says so
		// (FailoverTransport's ConnectionStateTracker restores the
		// ConnectionInfo with failoverReconnect set).
		FailoverReconnect: c.opts.FailoverReconnect,
	}
	if _, err := c.request(ctx, info); err != nil {
		return ctxErr(ctx, err)
	}
	select {
	case <-c.gotBrokerInfo:
	case <-c.done:
		return ctxErr(ctx, c.err)
	case <-ctx.Done():
		return fmt.Errorf("%w: no BrokerInfo: %w", ErrHandshake, ctx.Err())
	}
	if !stop() {
		return ctx.Err()
	}
	c.nc.SetDeadline(time.Time{})
	return nil
}

// ctxErr prefers the context's error when the context ended, since a
// deadline surfaces as an I/O timeout otherwise.
func ctxErr(ctx context.Context, err error) error {
	cerr := ctx.Err()
	var ne net.Error
	if dl, ok := ctx.Deadline(); cerr == nil && ok && errors.As(err, &ne) && ne.Timeout() && !time.Now().Before(dl) {
		cerr = context.DeadlineExceeded // the socket deadline beat the context's timer
	}
	if cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	return err
}

func readWireFormatInfo(ctx context.Context, nc net.Conn, dec *wire.Decoder) (*wire.WireFormatInfo, error) {
	buf := make([]byte, 4096)
	for {
		ds, err := dec.Next()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrHandshake, err)
		}
		if ds != nil {
			w, ok := ds.(*wire.WireFormatInfo)
			if !ok {
				return nil, fmt.Errorf("%w: first frame is %s, not WireFormatInfo", ErrHandshake, wire.TypeName(ds.DataStructureType()))
			}
			if !w.Valid() {
				return nil, fmt.Errorf("%w: %w", ErrHandshake, wire.ErrBadMagic)
			}
			return w, nil
		}
		n, err := nc.Read(buf)
		dec.Feed(buf[:n])
		if err != nil && n == 0 {
			return nil, fmt.Errorf("%w: read WireFormatInfo: %w", ErrHandshake, ctxErr(ctx, err))
		}
	}
}

// ConnectionID returns the connection's id.
func (c *Conn) ConnectionID() *wire.ConnectionId { return c.id }

// ClientID returns the client id sent in ConnectionInfo.
func (c *Conn) ClientID() string { return c.clientID }

// BrokerInfo returns the BrokerInfo received during Dial.
func (c *Conn) BrokerInfo() *wire.BrokerInfo { return c.brokerInfo }

// Format returns the negotiated wire format.
func (c *Conn) Format() wire.Format { return c.format }

// RemoteOptions returns what the broker advertised in its WireFormatInfo.
func (c *Conn) RemoteOptions() wire.Options { return c.remote }

// Done is closed when the connection ends (Close or failure).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended (ErrClosed after Close), or nil
// while it is open.
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// fail ends the connection once: every waiter sees err.
func (c *Conn) fail(err error) {
	c.failOnce.Do(func() {
		c.mu.Lock()
		if c.closing {
			err = ErrClosed
		}
		c.mu.Unlock()
		c.err = err
		close(c.done)
		if c.nc != nil {
			c.nc.Close()
		}
		if !errors.Is(err, ErrClosed) {
			c.log.Info("connection lost", "err", err)
		}
	})
}

func (c *Conn) doneErr() error {
	<-c.done
	return c.err
}

// checkOpen refuses new work once Close has started or the connection died.
func (c *Conn) checkOpen() error {
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if closing {
		return ErrClosed
	}
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// nextID returns a fresh CommandId. Ids are taken before the writer lock,
// so they can reach the wire out of order across goroutines; brokers use
// them only for correlation.
func (c *Conn) nextID() int32 { return c.nextCommandID.Add(1) }

// maxPending is how many encoded bytes may wait for the flusher before
// writers block until it takes them.
const maxPending = 256 << 10

// maxSpare bounds the buffer the flusher keeps for reuse.
const maxSpare = 1 << 20

// locked runs fn holding the writer lock; fn writes with writeLocked. It
// returns once what fn wrote is queued for the socket, after waiting while
// the queue is full.
func (c *Conn) locked(fn func() error) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.done:
		return c.err
	default:
	}
	err := fn()
	for len(c.pend) >= maxPending && !c.flushed {
		c.wcond.Wait()
	}
	return err
}

// writeLocked encodes one frame and queues it for the flusher; c.wmu must
// be held. An encode error leaves the connection usable; a write error
// ends it, and the callers waiting for a response see it.
func (c *Conn) writeLocked(ds wire.DataStructure) error {
	if c.attachWrite != nil {
		// In order: the caller holds wmu, and the server's writer keeps
		// the order of its callers.
		if c.opts.Trace != nil {
			c.opts.Trace(true, ds)
		}
		if err := c.attachWrite(ds); err != nil {
			return fmt.Errorf("openwire client: %w", err)
		}
		return nil
	}
	if c.flushed {
		return c.doneErr()
	}
	n := len(c.pend)
	buf, err := c.enc.Append(c.pend, ds)
	if err != nil {
		if cap(buf) > cap(c.pend) {
			c.pend = buf[:n]
		}
		return fmt.Errorf("openwire client: %w", err)
	}
	c.pend = buf
	if c.opts.Trace != nil {
		c.opts.Trace(true, ds)
	}
	c.wroteSince.Store(true)
	if n == 0 && !c.writing {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

// flushLoop is the connection's only socket writer: it writes whatever
// collected in pend, one write per batch, until the connection ends.
func (c *Conn) flushLoop() {
	defer close(c.flushDone)
	defer func() {
		c.wmu.Lock()
		c.flushed = true
		c.wcond.Broadcast()
		c.wmu.Unlock()
	}()
	for {
		select {
		case <-c.kick:
		case <-c.done:
			return
		}
		c.wmu.Lock()
		for len(c.pend) > 0 {
			buf := c.pend
			c.pend, c.spare = c.spare[:0], nil
			c.writing = true
			c.wcond.Broadcast()
			c.wmu.Unlock()
			_, err := c.nc.Write(buf)
			c.wmu.Lock()
			c.writing = false
			if cap(buf) <= maxSpare {
				c.spare = buf[:0]
			}
			c.wcond.Broadcast()
			if err != nil {
				c.wmu.Unlock()
				c.fail(fmt.Errorf("%w: write: %v", ErrConnectionLost, err))
				return
			}
		}
		c.wmu.Unlock()
	}
}

// flush waits until every frame queued so far is written, the connection
// ends, or ctx ends.
func (c *Conn) flush(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		c.wmu.Lock()
		c.wcond.Broadcast()
		c.wmu.Unlock()
	})
	defer stop()
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for (len(c.pend) > 0 || c.writing) && !c.flushed {
		if err := ctx.Err(); err != nil {
			return err
		}
		c.wcond.Wait()
	}
	if c.flushed && (len(c.pend) > 0 || c.writing) {
		return c.doneErr()
	}
	return nil
}

// oneway writes cmd without asking for a response.
func (c *Conn) oneway(cmd wire.Command) error {
	b := cmd.Base()
	b.CommandId, b.ResponseRequired = c.nextID(), false
	return c.locked(func() error { return c.writeLocked(cmd) })
}

// expect registers a waiter for the response to command id.
func (c *Conn) expect(id int32) (chan wire.DataStructure, error) {
	ch := make(chan wire.DataStructure, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.done:
		return nil, c.err
	default:
	}
	c.pending[id] = ch
	return ch, nil
}

func (c *Conn) unexpect(id int32) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// request writes cmd with ResponseRequired and waits for its Response. An
// ExceptionResponse becomes a *BrokerError.
func (c *Conn) request(ctx context.Context, cmd wire.Command) (wire.DataStructure, error) {
	if _, msg := cmd.(*wire.Message); c.attachWrite != nil && !msg {
		// Attached: the initiating bridge answers messages only.
		if err := c.oneway(cmd); err != nil {
			return nil, err
		}
		return &wire.Response{}, nil
	}
	b := cmd.Base()
	b.CommandId, b.ResponseRequired = c.nextID(), true
	ch, err := c.expect(b.CommandId)
	if err != nil {
		return nil, err
	}
	if err := c.locked(func() error { return c.writeLocked(cmd) }); err != nil {
		c.unexpect(b.CommandId)
		return nil, err
	}
	return c.await(ctx, cmd, ch)
}

// await waits for the response to cmd (already written).
func (c *Conn) await(ctx context.Context, cmd wire.Command, ch chan wire.DataStructure) (wire.DataStructure, error) {
	answer := func(r wire.DataStructure) (wire.DataStructure, error) {
		if er, ok := r.(*wire.ExceptionResponse); ok {
			return nil, brokerError(wire.TypeName(cmd.DataStructureType()), er.Exception)
		}
		return r, nil
	}
	select {
	case r := <-ch:
		return answer(r)
	case <-ctx.Done():
		c.unexpect(cmd.Base().CommandId)
		return nil, ctx.Err()
	case <-c.done:
		// The reader resolves a response before it fails the connection,
		// so a broker that answers and then closes (a refused
		// ConnectionInfo) has put its answer in ch already: select picks
		// among ready cases at random, so look before reporting the loss.
		select {
		case r := <-ch:
			return answer(r)
		default:
		}
		return nil, c.err
	}
}

// requestTimeout bounds the synchronous commands whose methods take no
// context.
const requestTimeout = 30 * time.Second

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

func (c *Conn) requestDefault(cmd wire.Command) (wire.DataStructure, error) {
	ctx, cancel := contextWithTimeout(requestTimeout)
	defer cancel()
	return c.request(ctx, cmd)
}

// readLoop is the connection's only reader; it owns dec.
func (c *Conn) readLoop(dec *wire.Decoder) {
	defer close(c.readerDone)
	buf := make([]byte, 64<<10)
	for {
		for {
			ds, err := dec.Next()
			if err != nil {
				c.fail(fmt.Errorf("%w: %v", ErrConnectionLost, err))
				return
			}
			if ds == nil {
				break
			}
			c.handle(ds)
		}
		n, err := c.nc.Read(buf)
		if n > 0 {
			c.lastRead.Store(time.Now().UnixNano())
			dec.Feed(buf[:n])
			continue // decode what arrived before reporting err; Read repeats it
		}
		if err != nil {
			c.fail(fmt.Errorf("%w: %v", ErrConnectionLost, err))
			return
		}
	}
}

// handle processes one inbound frame on the reader goroutine; it never
// blocks on a consumer or a caller.
func (c *Conn) handle(ds wire.DataStructure) {
	if c.opts.Trace != nil {
		c.opts.Trace(false, ds)
	}
	if c.log.Enabled(context.Background(), slog.LevelDebug) {
		c.log.Debug("frame in", "type", wire.TypeName(ds.DataStructureType()))
	}
	switch x := ds.(type) {
	case *wire.Response:
		c.resolve(x.CorrelationId, x)
	case *wire.ExceptionResponse:
		c.resolve(x.CorrelationId, x)
	case *wire.DataResponse:
		c.resolve(x.CorrelationId, x)
	case *wire.DataArrayResponse:
		c.resolve(x.CorrelationId, x)
	case *wire.IntegerResponse:
		c.resolve(x.CorrelationId, x)
	case *wire.MessageDispatch:
		if k := c.consumer(x.ConsumerId); k != nil {
			k.dispatch(x)
		} else {
			// A dispatch racing the consumer's RemoveInfo; the broker
			// redelivers it (Java logs and drops it too).
			c.log.Debug("dispatch for unknown consumer", "sub", fmt.Sprint(x.ConsumerId))
		}
	case *wire.KeepAliveInfo:
		c.keepAliveIn.Add(1)
		if x.ResponseRequired {
			// Reference §3.4: echo as a KeepAliveInfo, not a Response.
			// From another goroutine: the reader must not wait on writers.
			go c.oneway(&wire.KeepAliveInfo{})
		}
	case *wire.BrokerInfo:
		c.brokerInfoOnce.Do(func() {
			c.brokerInfo = x
			close(c.gotBrokerInfo)
		})
	case *wire.ConnectionError:
		c.onError(brokerError("ConnectionError", x.Exception))
	case *wire.ConsumerControl:
		if k := c.consumer(x.ConsumerId); k != nil {
			k.control(x)
		}
	case *wire.ConnectionControl:
		// Failover hints (ConnectedBrokers, ReconnectTo, Rebalance) mean
		// nothing to a client without failover.
	case *wire.ShutdownInfo:
		c.fail(fmt.Errorf("%w: broker sent ShutdownInfo", ErrConnectionLost))
	case *wire.ProducerAck, *wire.WireFormatInfo:
		// Producers here declare no window; a repeated WireFormatInfo
		// cannot renegotiate an established connection.
	default:
		if c.opts.OnCommand != nil {
			c.opts.OnCommand(ds)
			return
		}
		c.log.Debug("unexpected frame", "type", wire.TypeName(ds.DataStructureType()))
	}
}

func (c *Conn) resolve(corr int32, r wire.DataStructure) {
	c.mu.Lock()
	ch := c.pending[corr]
	delete(c.pending, corr)
	c.mu.Unlock()
	if ch == nil {
		c.log.Debug("response without request", "correlation_id", corr)
		return
	}
	ch <- r // buffered, one response per request
}

func (c *Conn) onError(err error) {
	if c.opts.OnError != nil {
		c.opts.OnError(err)
		return
	}
	c.log.Warn("broker reported error", "err", err)
}

func (c *Conn) consumer(id *wire.ConsumerId) *Consumer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.consumers[keyOf(id)]
}

// monitor is the inactivity monitor (reference §3.4): after the initial
// delay, every d/3 it sends KeepAliveInfo if nothing was written since the
// last check, and fails the connection if nothing was read for d.
func (c *Conn) monitor(d, initialDelay time.Duration) {
	t := time.NewTimer(initialDelay)
	defer t.Stop()
	select {
	case <-c.done:
		return
	case <-t.C:
	}
	period := max(d/3, time.Millisecond)
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-c.done:
			return
		case now := <-tick.C:
			if idle := now.Sub(time.Unix(0, c.lastRead.Load())); idle > d {
				c.fail(fmt.Errorf("%w: nothing read for %v (max %v)", ErrInactivity, idle.Round(time.Millisecond), d))
				return
			}
			if !c.wroteSince.Swap(false) {
				if err := c.oneway(&wire.KeepAliveInfo{}); err != nil {
					return
				}
				c.keepAliveOut.Add(1)
				c.wroteSince.Store(false) // the keep-alive itself does not count
			}
		}
	}
}

// Close closes the connection: RemoveInfo for the connection (answered by
// Response), then ShutdownInfo, then the socket. The broker redelivers
// unacknowledged messages, counting as redelivered those up to the last one
// Receive returned (RemoveInfo.LastDeliveredSequenceId). The orderly part
// is bounded by Options.CloseTimeout. Close is idempotent; it returns nil
// when the connection had already failed (see Err).
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		<-c.readerDone
		<-c.flushDone
		return nil
	}
	c.closing = true
	sessions := make([]*Session, 0, len(c.sessions))
	for s := range c.sessions {
		sessions = append(sessions, s)
	}
	c.mu.Unlock()
	if c.attachWrite != nil {
		// Attached: nothing goes on the wire (attach.go).
		for _, s := range sessions {
			s.dispose()
		}
		c.fail(ErrClosed)
		return nil
	}
	select {
	case <-c.done:
		<-c.readerDone
		<-c.flushDone
		return nil
	default:
	}
	last := int64(-1)
	for _, s := range sessions {
		last = max(last, s.dispose())
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.CloseTimeout)
	defer cancel()
	orderly := make(chan error, 1)
	go func() {
		_, err := c.request(ctx, &wire.RemoveInfo{ObjectId: c.id, LastDeliveredSequenceId: last})
		if err == nil {
			err = c.oneway(&wire.ShutdownInfo{})
		}
		if err == nil {
			err = c.flush(ctx) // the ShutdownInfo goes out before the socket closes
		}
		orderly <- err
	}()
	var err error
	select {
	case err = <-orderly:
	case <-ctx.Done():
		err = ctx.Err()
	}
	c.fail(ErrClosed)
	<-c.readerDone
	<-c.flushDone
	if err != nil && !errors.Is(err, ErrClosed) {
		return fmt.Errorf("openwire client: close: %w", err)
	}
	return nil
}

// Session opens a session (SessionInfo). A transacted session groups its
// sends and acknowledgements in local transactions ended by Commit or
// Rollback.
func (c *Conn) Session(transacted bool) (*Session, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	s := &Session{
		c:          c,
		id:         &wire.SessionId{ConnectionId: c.id.Value, Value: c.nextSessionID.Add(1)},
		transacted: transacted,
		consumers:  make(map[*Consumer]struct{}),
		producers:  make(map[*Producer]struct{}),
	}
	if _, err := c.requestDefault(&wire.SessionInfo{SessionId: s.id}); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.sessions[s] = struct{}{}
	c.mu.Unlock()
	return s, nil
}

// CreateTempQueue creates a temporary queue named "<connection id>:<n>"
// (DestinationInfo ADD); it lives until DeleteTempDestination or the end of
// the connection, and only this connection may consume from it.
func (c *Conn) CreateTempQueue() (*wire.Destination, error) {
	return c.createTemp(wire.TypeActiveMQTempQueue)
}

// CreateTempTopic creates a temporary topic, as CreateTempQueue.
func (c *Conn) CreateTempTopic() (*wire.Destination, error) {
	return c.createTemp(wire.TypeActiveMQTempTopic)
}

func (c *Conn) createTemp(kind byte) (*wire.Destination, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	d := &wire.Destination{Kind: kind, PhysicalName: c.id.Value + ":" + strconv.FormatInt(c.nextTempID.Add(1), 10)}
	if _, err := c.requestDefault(&wire.DestinationInfo{ConnectionId: c.id, Destination: d, OperationType: wire.DestinationAdd}); err != nil {
		return nil, err
	}
	return d, nil
}

// DeleteTempDestination deletes a temporary destination (DestinationInfo
// REMOVE). ActiveMQ refuses while it has consumers.
func (c *Conn) DeleteTempDestination(d *wire.Destination) error {
	if err := c.checkOpen(); err != nil {
		return err
	}
	_, err := c.requestDefault(&wire.DestinationInfo{ConnectionId: c.id, Destination: d, OperationType: wire.DestinationRemove})
	return err
}

// Unsubscribe deletes the durable subscription name of this connection's
// client id (RemoveSubscriptionInfo). ActiveMQ refuses while a consumer is
// active on it and answers javax.jms.InvalidDestinationException when it
// does not exist.
func (c *Conn) Unsubscribe(name string) error {
	if err := c.checkOpen(); err != nil {
		return err
	}
	_, err := c.requestDefault(&wire.RemoveSubscriptionInfo{ConnectionId: c.id, SubscriptionName: name, ClientId: c.clientID})
	return err
}

// Ids follow the Java client's shape, "ID:<host>-<n>-<start ms>-<k>:<seq>",
// because ActiveMQ parses message ids (MessageId(String)) by their last
// colon.
type idGenerator struct {
	prefix string
	seq    atomic.Int64
}

var (
	idBase        = idPrefix()
	connectionIDs = &idGenerator{prefix: idBase + "-0:"}
	clientIDs     = &idGenerator{prefix: idBase + "-1:"}
)

func idPrefix() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	host = strings.Map(func(r rune) rune {
		if r == ':' || r == ' ' {
			return '-'
		}
		return r
	}, host)
	return "ID:" + host + "-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixMilli(), 10)
}

func newID(g *idGenerator) string {
	return g.prefix + strconv.FormatInt(g.seq.Add(1), 10)
}
