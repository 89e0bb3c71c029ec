package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/go-stomp/stomp/v3"
	"github.com/go-stomp/stomp/v3/frame"
)

const producerUsage = `Usage:
  wharf producer [flags]

Send messages, as "activemq producer" does, over STOMP (not the Jolokia
API): text messages "test message: N" (N from 1), or, with --messageSize,
bytes messages of that size. Prints how many were sent.

  --broker-url URL      the broker's STOMP connector (default
                        stomp://127.0.0.1:61613); user:pass@ logs in
  --user NAME           log in as NAME (default: $WHARF_USER)
  --password PASS       the password of --user (default: $WHARF_PASSWORD)
  --destination D       queue://NAME or topic://NAME (a bare NAME is a
                        queue; default queue://TEST)
  --messageCount N      messages to send (default 1000)
  --messageSize BYTES   send bytes messages of BYTES bytes (default 0: text)
  --persistent          persistent messages, each confirmed by a receipt
                        outside transactions (default true;
                        --persistent=false for non-persistent)
  --transacted          send in transactions of --transactionBatchSize
                        messages (default 1 when transacted)
  --transactionBatchSize N
                        commit every N messages; N > 0 implies --transacted
                        (as activemq producer's option of that name)

Exit status: 0 all sent; 1 a send, receipt or commit failed; 2 a bad flag;
3 the broker cannot be reached or refused the login.
`

const consumerUsage = `Usage:
  wharf consumer [flags]

Receive messages, as "activemq consumer" does, over STOMP (not the Jolokia
API), until --messageCount arrived or none arrived for --receiveTimeout.
Prints how many were received.

  --broker-url URL      the broker's STOMP connector (default
                        stomp://127.0.0.1:61613); user:pass@ logs in
  --user NAME           log in as NAME (default: $WHARF_USER)
  --password PASS       the password of --user (default: $WHARF_PASSWORD)
  --destination D       queue://NAME or topic://NAME (a bare NAME is a
                        queue; default queue://TEST)
  --messageCount N      stop after N messages (default 1000)
  --receiveTimeout D    stop when nothing arrived for D (default 3s)
  --transacted          acknowledge in transactions of
                        --transactionBatchSize messages (default 1 when
                        transacted); otherwise each message is acknowledged
                        as it arrives
  --transactionBatchSize N
                        commit every N messages; N > 0 implies --transacted

Exit status: 0 received (however many); 1 an acknowledgement or commit
failed; 2 a bad flag; 3 the broker cannot be reached or refused the login.
`

// runClient is `wharf producer` and `wharf consumer`, after ActiveMQ's
// ProducerCommand and ConsumerCommand, over STOMP.
func runClient(name string, args []string, stdout, stderr io.Writer) error {
	help := producerUsage
	if name == "consumer" {
		help = consumerUsage
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	brokerURL := fs.String("broker-url", "stomp://127.0.0.1:61613", "STOMP URL")
	user := fs.String("user", os.Getenv("WHARF_USER"), "user")
	password := fs.String("password", os.Getenv("WHARF_PASSWORD"), "password")
	dest := fs.String("destination", "queue://TEST", "destination")
	count := fs.Int("messageCount", 1000, "messages")
	transacted := fs.Bool("transacted", false, "transactions")
	batch := fs.Int("transactionBatchSize", 0, "messages per transaction")
	var size *int
	var persistent *bool
	var timeout *time.Duration
	if name == "producer" {
		size = fs.Int("messageSize", 0, "bytes")
		persistent = fs.Bool("persistent", true, "persistent")
	} else {
		timeout = fs.Duration("receiveTimeout", 3*time.Second, "idle time")
	}
	pos, err := parseAdmin(name, fs, args, help, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usageError("%s takes no arguments, got %q", name, pos)
	case *count < 0:
		return usageError("%s: --messageCount %d: want 0 or more", name, *count)
	case *batch < 0:
		return usageError("%s: --transactionBatchSize %d: want 0 or more", name, *batch)
	case size != nil && *size < 0:
		return usageError("producer: --messageSize %d: want 0 or more", *size)
	}
	if *batch > 0 {
		*transacted = true
	} else if *transacted {
		*batch = 1
	}
	stompDest, err := stompDestination(*dest)
	if err != nil {
		return err
	}
	conn, err := dialSTOMP(*brokerURL, *user, *password)
	if err != nil {
		return err
	}
	defer conn.Disconnect()
	if name == "producer" {
		n, err := produce(conn, stompDest, *count, *size, *persistent, *batch)
		fmt.Fprintf(stdout, "Sent %d messages to %s\n", n, *dest)
		return err
	}
	n, err := consume(conn, stompDest, *count, *timeout, *batch)
	fmt.Fprintf(stdout, "Received %d messages from %s\n", n, *dest)
	return err
}

// stompDestination is ActiveMQ's queue://X or topic://X as a STOMP
// destination.
func stompDestination(d string) (string, error) {
	kind, name, ok := strings.Cut(d, "://")
	if !ok {
		kind, name = "queue", d
	}
	if name == "" || kind != "queue" && kind != "topic" {
		return "", usageError("--destination %q: want queue://NAME or topic://NAME", d)
	}
	return "/" + kind + "/" + name, nil
}

// dialSTOMP connects to a stomp://[user:pass@]host:port URL.
func dialSTOMP(raw, user, password string) (*stomp.Conn, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "stomp" || u.Host == "" {
		return nil, usageError("--broker-url %q: want stomp://host:port", raw)
	}
	if u.User != nil && user == "" {
		user = u.User.Username()
		password, _ = u.User.Password()
	}
	nc, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		return nil, &exitError{code: exitUnreachable, err: err}
	}
	conn, err := stomp.Connect(nc, stomp.ConnOpt.Login(user, password), stomp.ConnOpt.Host("localhost"))
	if err != nil {
		nc.Close()
		return nil, &exitError{code: exitUnreachable, err: fmt.Errorf("%s: %w", u.Host, err)}
	}
	return conn, nil
}

// produce sends count messages to dest and returns how many were sent
// (committed, in transactions).
func produce(conn *stomp.Conn, dest string, count, size int, persistent bool, batch int) (int, error) {
	var tx *stomp.Transaction
	sent, pending := 0, 0
	for i := 1; i <= count; i++ {
		var body []byte
		contentType := "text/plain"
		sendOpts := []func(*frame.Frame) error{}
		if size > 0 {
			body, contentType = []byte(strings.Repeat("X", size)), "application/octet-stream"
		} else {
			body = fmt.Appendf(nil, "test message: %d", i)
			// Without content-length a STOMP message is a TextMessage.
			sendOpts = append(sendOpts, stomp.SendOpt.NoContentLength)
		}
		sendOpts = append(sendOpts, stomp.SendOpt.Header("persistent", fmt.Sprint(persistent)))
		if batch > 0 {
			if tx == nil {
				var err error
				if tx, err = conn.BeginWithError(); err != nil {
					return sent, fmt.Errorf("begin: %w", err)
				}
			}
			if err := tx.Send(dest, contentType, body, sendOpts...); err != nil {
				return sent, fmt.Errorf("send %d: %w", i, err)
			}
			if pending++; pending == batch || i == count {
				if err := tx.CommitWithReceipt(); err != nil {
					return sent, fmt.Errorf("commit: %w", err)
				}
				sent, pending, tx = sent+pending, 0, nil
			}
			continue
		}
		if persistent {
			sendOpts = append(sendOpts, stomp.SendOpt.Receipt)
		}
		if err := conn.Send(dest, contentType, body, sendOpts...); err != nil {
			return sent, fmt.Errorf("send %d: %w", i, err)
		}
		sent++
	}
	return sent, nil
}

// consume receives up to count messages from dest, until none arrives for
// idle, and returns how many it received (and acknowledged).
func consume(conn *stomp.Conn, dest string, count int, idle time.Duration, batch int) (int, error) {
	ack := stomp.AckAuto
	if batch > 0 {
		ack = stomp.AckClientIndividual
	}
	sub, err := conn.Subscribe(dest, ack)
	if err != nil {
		return 0, fmt.Errorf("subscribe %s: %w", dest, err)
	}
	defer sub.Unsubscribe()
	var tx *stomp.Transaction
	received, pending := 0, 0
	timer := time.NewTimer(idle)
	defer timer.Stop()
wait:
	for received+pending < count {
		timer.Reset(idle)
		var m *stomp.Message
		select {
		case m = <-sub.C:
		case <-timer.C:
			break wait
		}
		if m == nil || m.Err != nil {
			if m != nil {
				err = m.Err
			}
			return received, errors.Join(errors.New("subscription ended"), err)
		}
		if batch == 0 {
			received++
			continue
		}
		if tx == nil {
			if tx, err = conn.BeginWithError(); err != nil {
				return received, fmt.Errorf("begin: %w", err)
			}
		}
		if err := tx.Ack(m); err != nil {
			return received, fmt.Errorf("ack: %w", err)
		}
		if pending++; pending == batch {
			if err := tx.CommitWithReceipt(); err != nil {
				return received, fmt.Errorf("commit: %w", err)
			}
			received, pending, tx = received+pending, 0, nil
		}
	}
	if tx != nil { // the last, partial batch
		if err := tx.CommitWithReceipt(); err != nil {
			return received, fmt.Errorf("commit: %w", err)
		}
		received += pending
	}
	return received, nil
}
