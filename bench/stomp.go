package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The STOMP client of `wharf bench`: just what the scenarios need, with
// frames pipelined through a buffered writer that a flusher goroutine
// drains, so that a producer does not pay a system call per message.
// Frame syntax: STOMP 1.2 "Augmented BNF"; ActiveMQ extensions:
// activemq.prefetchSize on SUBSCRIBE, persistent:true on SEND.

// Limits on what the client accepts from the broker.
const (
	stompMaxHeaders   = 1000
	stompMaxLineBytes = 64 << 10
	stompMaxBodyBytes = 256 << 20
)

type stompFrame struct {
	command string
	headers map[string]string // raw (still escaped) values; first wins
	body    []byte
}

// readSTOMPFrame reads one frame, skipping heart-beat EOLs before it.
func readSTOMPFrame(br *bufio.Reader) (stompFrame, error) {
	var f stompFrame
	line, err := readSTOMPLine(br)
	for err == nil && line == "" {
		line, err = readSTOMPLine(br)
	}
	if err != nil {
		return f, err
	}
	f.command = line
	f.headers = make(map[string]string, 8)
	for {
		line, err := readSTOMPLine(br)
		if err != nil {
			return f, err
		}
		if line == "" {
			break
		}
		if len(f.headers) >= stompMaxHeaders {
			return f, fmt.Errorf("%w: more than %d headers", errSTOMPFrame, stompMaxHeaders)
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return f, fmt.Errorf("%w: header line %q has no colon", errSTOMPFrame, line)
		}
		// STOMP 1.2 "Repeated Header Entries": the first one counts.
		if _, dup := f.headers[k]; !dup {
			f.headers[k] = v
		}
	}
	if cl, ok := f.headers["content-length"]; ok {
		n, err := strconv.Atoi(cl)
		if err != nil || n < 0 || n > stompMaxBodyBytes {
			return f, fmt.Errorf("%w: content-length %q", errSTOMPFrame, cl)
		}
		f.body = make([]byte, n+1)
		if _, err := io.ReadFull(br, f.body); err != nil {
			return f, err
		}
		if f.body[n] != 0 {
			return f, fmt.Errorf("%w: no NUL after %d body bytes", errSTOMPFrame, n)
		}
		f.body = f.body[:n]
		return f, nil
	}
	for {
		chunk, err := br.ReadSlice(0)
		f.body = append(f.body, chunk...)
		if err == nil {
			f.body = f.body[:len(f.body)-1]
			return f, nil
		}
		if err != bufio.ErrBufferFull {
			return f, err
		}
		if len(f.body) > stompMaxBodyBytes {
			return f, fmt.Errorf("%w: body over %d bytes", errSTOMPFrame, stompMaxBodyBytes)
		}
	}
}

// readSTOMPLine reads a line without its EOL (LF or CRLF).
func readSTOMPLine(br *bufio.Reader) (string, error) {
	b, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull || len(b) > stompMaxLineBytes {
		return "", fmt.Errorf("%w: line over %d bytes", errSTOMPFrame, br.Size())
	}
	if err != nil {
		return "", err
	}
	b = bytes.TrimSuffix(b[:len(b)-1], []byte("\r"))
	return string(b), nil
}

// stompDest is the ActiveMQ STOMP destination name of d.
func stompDest(d dest) string {
	if d.topic {
		return "/topic/" + d.name
	}
	return "/queue/" + d.name
}

// parseSTOMPDest reads a reply-to header back; names without a known
// prefix are taken as queues, as ActiveMQ does.
func parseSTOMPDest(s string) dest {
	if n, ok := strings.CutPrefix(s, "/topic/"); ok {
		return dest{name: n, topic: true}
	}
	if n, ok := strings.CutPrefix(s, "/queue/"); ok {
		return dest{name: n}
	}
	return dest{name: s}
}

// stompSession is one STOMP connection. A reader goroutine owns the
// bufio.Reader and routes frames: MESSAGE to its subscription's queue,
// RECEIPT to the waiter. Writers append frames to bw under wmu and wake
// the flusher. mu guards receipts and subs. wmu and mu are never held
// together.
type stompSession struct {
	nc         net.Conn
	version    string
	persistent bool
	transacted bool

	wmu    sync.Mutex
	bw     *bufio.Writer
	kick   chan struct{}
	wbuf   []byte // frame being built, under wmu
	closed bool   // under wmu: no more writes

	mu       sync.Mutex
	receipts map[string]chan struct{}
	subs     map[string]*stompSub
	next     int // last receipt / subscription number

	// owned by the session's goroutine
	tx   string // current transaction, "" none
	txns int

	failOnce sync.Once
	err      error // set before doneCh closes
	doneCh   chan struct{}
	readDone chan struct{}
}

// dialSTOMP connects to t (over TLS with tc, when set; the handshake
// counts against timeout) and sends CONNECT.
func dialSTOMP(ctx context.Context, t Target, tc *tls.Config, timeout time.Duration, persistent, transacted bool) (session, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var nc net.Conn
	var err error
	if tc != nil {
		d := tls.Dialer{Config: tc}
		nc, err = d.DialContext(ctx, "tcp", t.Addr)
	} else {
		var d net.Dialer
		nc, err = d.DialContext(ctx, "tcp", t.Addr)
	}
	if err != nil {
		return nil, err
	}
	dl, _ := ctx.Deadline()
	nc.SetDeadline(dl)
	host, _, _ := net.SplitHostPort(t.Addr)
	var b bytes.Buffer
	b.WriteString("CONNECT\naccept-version:1.0,1.1,1.2\nheart-beat:0,0\nhost:" + host + "\n")
	if t.User != "" {
		b.WriteString("login:" + t.User + "\npasscode:" + t.Password + "\n")
	}
	b.WriteString("\n\x00")
	br := bufio.NewReaderSize(nc, 64<<10)
	if _, err := nc.Write(b.Bytes()); err != nil {
		nc.Close()
		return nil, err
	}
	f, err := readSTOMPFrame(br)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("stomp connect: %w", err)
	}
	if f.command != "CONNECTED" {
		nc.Close()
		return nil, fmt.Errorf("%w: connect: %s %s", errSTOMPError, f.command, stompErrorText(f))
	}
	nc.SetDeadline(time.Time{})
	s := &stompSession{
		nc:         nc,
		version:    f.headers["version"],
		persistent: persistent,
		transacted: transacted,
		bw:         bufio.NewWriterSize(nc, 64<<10),
		kick:       make(chan struct{}, 1),
		receipts:   map[string]chan struct{}{},
		subs:       map[string]*stompSub{},
		doneCh:     make(chan struct{}),
		readDone:   make(chan struct{}),
	}
	if s.version == "" {
		s.version = "1.0"
	}
	go s.readLoop(br)
	go s.flushLoop()
	return s, nil
}

func stompErrorText(f stompFrame) string {
	msg := f.headers["message"]
	if body := strings.TrimSpace(string(f.body)); body != "" && len(body) < 500 {
		msg += ": " + body
	}
	return msg
}

func (s *stompSession) fail(err error) {
	s.failOnce.Do(func() {
		s.err = err
		close(s.doneCh)
		s.nc.Close()
	})
}

func (s *stompSession) done() <-chan struct{} { return s.doneCh }

func (s *stompSession) readLoop(br *bufio.Reader) {
	defer close(s.readDone)
	for {
		f, err := readSTOMPFrame(br)
		if err != nil {
			s.fail(fmt.Errorf("%w: read: %v", errClosed, err))
			return
		}
		switch f.command {
		case "MESSAGE":
			s.mu.Lock()
			sub := s.subs[f.headers["subscription"]]
			s.mu.Unlock()
			if sub != nil {
				sub.push(f)
			}
		case "RECEIPT":
			id := f.headers["receipt-id"]
			s.mu.Lock()
			ch := s.receipts[id]
			delete(s.receipts, id)
			s.mu.Unlock()
			if ch != nil {
				close(ch)
			}
		case "ERROR":
			s.fail(fmt.Errorf("%w: %s", errSTOMPError, stompErrorText(f)))
			return
		}
	}
}

// flushLoop flushes what writers buffered. Under load several frames
// collect while a flush is in progress and go out in one write.
func (s *stompSession) flushLoop() {
	for {
		select {
		case <-s.kick:
		case <-s.doneCh:
			return
		}
		s.wmu.Lock()
		err := s.bw.Flush()
		s.wmu.Unlock()
		if err != nil {
			s.fail(fmt.Errorf("%w: write: %v", errClosed, err))
			return
		}
	}
}

// write queues one frame built by build; a full buffer is written out
// by the caller (back-pressure from the socket).
func (s *stompSession) write(build func(b []byte) []byte) error {
	s.wmu.Lock()
	if s.closed {
		s.wmu.Unlock()
		return s.errOr(errClosed)
	}
	s.wbuf = build(s.wbuf[:0])
	_, err := s.bw.Write(s.wbuf)
	s.wmu.Unlock()
	if err != nil {
		s.fail(fmt.Errorf("%w: write: %v", errClosed, err))
		return s.errOr(err)
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return nil
}

func (s *stompSession) errOr(err error) error {
	select {
	case <-s.doneCh:
		return s.err
	default:
		return err
	}
}

// expectReceipt registers a receipt id to wait for.
func (s *stompSession) expectReceipt() (string, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	id := "r" + strconv.Itoa(s.next)
	ch := make(chan struct{})
	s.receipts[id] = ch
	return id, ch
}

func (s *stompSession) await(ctx context.Context, id string, ch chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-s.doneCh:
		select {
		case <-ch: // the receipt came in before the end
			return nil
		default:
			return s.err
		}
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.receipts, id)
		s.mu.Unlock()
		return fmt.Errorf("stomp receipt %s: %w", id, ctx.Err())
	}
}

// begin starts a transaction if the session is transacted and none is
// open. BEGIN goes without a receipt: the frames that name the
// transaction follow it on the same connection.
func (s *stompSession) begin() error {
	if !s.transacted || s.tx != "" {
		return nil
	}
	s.txns++
	s.tx = "tx" + strconv.Itoa(s.txns)
	return s.write(func(b []byte) []byte {
		return append(append(append(b, "BEGIN\ntransaction:"...), s.tx...), "\n\n\x00"...)
	})
}

func (s *stompSession) send(ctx context.Context, to dest, body []byte, replyTo *dest, sync bool) error {
	return s.sendHeaders(ctx, to, body, replyTo, sync)
}

// sendHeaders is send with extra headers, each "name:value" (already
// escaped): the soak test's scheduled (AMQ_SCHEDULED_DELAY) and expiring
// (expires) messages.
func (s *stompSession) sendHeaders(ctx context.Context, to dest, body []byte, replyTo *dest, sync bool, headers ...string) error {
	if err := s.begin(); err != nil {
		return err
	}
	var receipt string
	var ch chan struct{}
	if sync {
		receipt, ch = s.expectReceipt()
	}
	err := s.write(func(b []byte) []byte {
		b = append(b, "SEND\ndestination:"...)
		b = append(b, stompDest(to)...)
		b = append(b, "\ncontent-length:"...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		if s.persistent {
			b = append(b, "\npersistent:true"...)
		}
		if replyTo != nil {
			b = append(append(b, "\nreply-to:"...), stompDest(*replyTo)...)
		}
		if s.tx != "" {
			b = append(append(b, "\ntransaction:"...), s.tx...)
		}
		if receipt != "" {
			b = append(append(b, "\nreceipt:"...), receipt...)
		}
		for _, h := range headers {
			b = append(append(b, '\n'), h...)
		}
		b = append(b, "\n\n"...)
		b = append(b, body...)
		return append(b, 0)
	})
	if err != nil || !sync {
		return err
	}
	return s.await(ctx, receipt, ch)
}

func (s *stompSession) subscribe(ctx context.Context, from dest, o subOptions) (subscription, error) {
	ack := map[AckMode]string{AckAuto: "auto", AckClient: "client", AckIndividual: "client-individual"}[o.ack]
	if s.transacted {
		// Only acknowledged messages belong to a STOMP transaction
		// (STOMP 1.2 "ACK"): a transacted consumer acknowledges each
		// message in the transaction and commits.
		ack = "client-individual"
		if s.version == "1.0" {
			ack = "client"
		}
	}
	s.mu.Lock()
	s.next++
	id := "s" + strconv.Itoa(s.next)
	sub := &stompSub{s: s, id: id, ackMode: ack, notify: make(chan struct{}, 1)}
	s.subs[id] = sub
	s.mu.Unlock()
	receipt, ch := s.expectReceipt()
	err := s.write(func(b []byte) []byte {
		b = append(append(b, "SUBSCRIBE\nid:"...), id...)
		b = append(append(b, "\ndestination:"...), stompDest(from)...)
		b = append(append(b, "\nack:"...), ack...)
		if o.prefetch > 0 {
			b = append(b, "\nactivemq.prefetchSize:"...)
			b = strconv.AppendInt(b, int64(o.prefetch), 10)
		}
		b = append(append(b, "\nreceipt:"...), receipt...)
		return append(b, "\n\n\x00"...)
	})
	if err == nil {
		err = s.await(ctx, receipt, ch)
	}
	if err != nil {
		return nil, err
	}
	return sub, nil
}

func (s *stompSession) commit(ctx context.Context) error {
	if s.tx == "" {
		return nil
	}
	tx := s.tx
	s.tx = ""
	receipt, ch := s.expectReceipt()
	err := s.write(func(b []byte) []byte {
		b = append(append(b, "COMMIT\ntransaction:"...), tx...)
		b = append(append(b, "\nreceipt:"...), receipt...)
		return append(b, "\n\n\x00"...)
	})
	if err != nil {
		return err
	}
	return s.await(ctx, receipt, ch)
}

// close sends DISCONNECT with a receipt (STOMP 1.2 "Connection
// Lingering"), waits for it a while, and closes the socket.
func (s *stompSession) close() error {
	select {
	case <-s.doneCh:
		<-s.readDone
		return nil
	default:
	}
	receipt, ch := s.expectReceipt()
	err := s.write(func(b []byte) []byte {
		return append(append(append(b, "DISCONNECT\nreceipt:"...), receipt...), "\n\n\x00"...)
	})
	s.wmu.Lock()
	s.closed = true
	s.wmu.Unlock()
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		err = s.await(ctx, receipt, ch)
		cancel()
	}
	s.fail(errClosed)
	<-s.readDone
	if err == errClosed {
		err = nil
	}
	return err
}

// stompSub is a subscription. The reader goroutine appends to queue and
// never blocks: it must go on reading receipts while the application is
// busy (a responder waits for the receipt of its reply while more
// requests arrive). The broker bounds the queue by the prefetch.
type stompSub struct {
	s       *stompSession
	id      string
	ackMode string

	mu     sync.Mutex
	queue  []stompFrame
	head   int
	notify chan struct{}
}

func (k *stompSub) push(f stompFrame) {
	k.mu.Lock()
	k.queue = append(k.queue, f)
	k.mu.Unlock()
	select {
	case k.notify <- struct{}{}:
	default:
	}
}

func (k *stompSub) pop() (stompFrame, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.head == len(k.queue) {
		return stompFrame{}, false
	}
	f := k.queue[k.head]
	k.queue[k.head] = stompFrame{}
	k.head++
	if k.head == len(k.queue) {
		k.queue, k.head = k.queue[:0], 0
	}
	return f, true
}

func (k *stompSub) receive(ctx context.Context) (delivery, error) {
	for {
		if f, ok := k.pop(); ok {
			d := delivery{body: f.body, handle: f.headers}
			if r, ok := f.headers["reply-to"]; ok {
				rd := parseSTOMPDest(r)
				d.replyTo = &rd
			}
			return d, nil
		}
		select {
		case <-k.notify:
		case <-ctx.Done():
			return delivery{}, ctx.Err()
		case <-k.s.doneCh:
			// Deliver what arrived before the end first.
			k.mu.Lock()
			more := k.head < len(k.queue)
			k.mu.Unlock()
			if !more {
				return delivery{}, k.s.err
			}
		}
	}
}

// ack acknowledges d: STOMP 1.2 names the message by its ack header,
// 1.0 and 1.1 by message-id (and 1.1 also by subscription).
func (k *stompSub) ack(d delivery) error {
	if k.ackMode == "auto" {
		return nil
	}
	return k.settle("ACK\n", d)
}

// nack refuses d (STOMP 1.1 and 1.2): the broker redelivers it, or
// dead-letters it past its redelivery limit. The soak test's DLQ traffic.
func (k *stompSub) nack(d delivery) error { return k.settle("NACK\n", d) }

// settle writes the ACK or NACK frame (command, with its newline) for d.
func (k *stompSub) settle(command string, d delivery) error {
	h := d.handle.(map[string]string)
	s := k.s
	if err := s.begin(); err != nil {
		return err
	}
	return s.write(func(b []byte) []byte {
		b = append(b, command...)
		switch s.version {
		case "1.2":
			b = append(append(b, "id:"...), h["ack"]...)
		case "1.1":
			b = append(append(b, "message-id:"...), h["message-id"]...)
			b = append(append(b, "\nsubscription:"...), k.id...)
		default:
			b = append(append(b, "message-id:"...), h["message-id"]...)
		}
		if s.tx != "" {
			b = append(append(b, "\ntransaction:"...), s.tx...)
		}
		return append(b, "\n\n\x00"...)
	})
}
