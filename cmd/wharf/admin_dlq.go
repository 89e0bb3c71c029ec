package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"wharf/cmd/wharf/internal/jolokiaclient"
)

const dlqUsage = `Usage:
  wharf dlq list [flags]
  wharf dlq replay [QUEUE] [--selector S] [flags]
  wharf dlq purge [QUEUE] [flags]

The dead-letter queues: ActiveMQ.DLQ (the shared one), and the queues an
individual dead-letter strategy makes, DLQ.<name> (its default prefix) or
<name>.DLQ (its suffix form).

  list                  each dead-letter queue and its Queue Size
  replay                send the messages of QUEUE (default: of every
                        dead-letter queue) back to the destination each
                        came from; prints how many went back, per queue.
                        It goes --chunk messages per call (the queue
                        MBean's retryMessages(int), a Wharf extension),
                        each call bounded by --timeout, with a progress
                        bar on a terminal (moved/total, rate, time left;
                        nothing on a pipe or with --json).
                        A broker without the extension (ActiveMQ) gets
                        one retryMessages() per queue instead, said on
                        stderr, without progress
    --chunk N           messages per call (default 10000)
    --selector S        only the messages this JMS selector matches, e.g.
                        --selector "JMSMessageID = 'ID:host-1-1:1:1:1'";
                        they go back one by one (retryMessage), with a
                        progress line on a terminal
  purge                 remove the messages of QUEUE (default: of every
                        dead-letter queue); prints how many, per queue

Only messages not dispatched to a consumer are replayed or removed. --json
prints lists of {"name","queueSize"} (list), {"name","replayed"} (replay)
or {"name","removed"} (purge). A QUEUE that does not exist is exit status 1.
` + adminCommon

// isDLQ says whether a queue's name is a dead-letter queue's.
func isDLQ(name string) bool {
	return name == "ActiveMQ.DLQ" || strings.HasPrefix(name, "DLQ.") || strings.HasSuffix(name, ".DLQ")
}

// runDLQ is `wharf dlq list|replay|purge`.
func runDLQ(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError("dlq: want list, replay or purge (wharf dlq --help)")
	}
	sub := args[0]
	switch sub {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, dlqUsage)
		return nil
	case "list", "replay", "purge":
	default:
		return usageError("dlq: unknown subcommand %q: want list, replay or purge (wharf dlq --help)", sub)
	}
	fs := flag.NewFlagSet("dlq "+sub, flag.ContinueOnError)
	o := addAdminFlags(fs)
	var sel *string
	var chunk *int
	if sub == "replay" {
		sel = fs.String("selector", "", "JMS selector")
		chunk = fs.Int("chunk", 10000, "messages per call")
	}
	pos, err := parseAdmin("dlq "+sub, fs, args[1:], dlqUsage, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 1 || sub == "list" && len(pos) > 0 {
		return usageError("dlq %s: too many arguments: %q", sub, pos)
	}
	if chunk != nil && *chunk <= 0 {
		return usageError("dlq replay: --chunk %d: want a positive number of messages", *chunk)
	}
	p := newProgress(stderr)
	if o.json {
		p = &progress{}
	}
	return o.withTimeout(func(ctx context.Context) error {
		a, err := o.connect(ctx)
		if err != nil {
			return err
		}
		var names []string
		if len(pos) == 1 {
			if names, err = a.queues(pos[0]); err != nil {
				return err
			}
		} else {
			dlqs, err := a.dlqs()
			if err != nil {
				return err
			}
			if sub == "list" {
				return printDLQs(stdout, o.json, dlqs)
			}
			for _, d := range dlqs {
				names = append(names, d.Name)
			}
		}
		if sub == "purge" {
			rows, err := a.removeMatching(names, "", p, "purging")
			if err != nil {
				return err
			}
			return printCounts(stdout, o.json, "Removed", rows)
		}
		if *sel == "" {
			rows, err := a.replayChunked(names, *chunk, o.timeout, p, stderr)
			if err != nil {
				return err
			}
			return printCounts(stdout, o.json, "Replayed", rows)
		}
		rows, err := a.replay(names, *sel, p)
		if err != nil {
			return err
		}
		return printCounts(stdout, o.json, "Replayed", rows)
	})
}

// dlqRow is a dead-letter queue in dlq list; its JSON is --json's.
type dlqRow struct {
	Name      string `json:"name"`
	QueueSize int64  `json:"queueSize"`
}

// dlqs are the broker's dead-letter queues, sorted by name, read in one
// request.
func (a *admin) dlqs() ([]dlqRow, error) {
	beans, err := a.c.ReadAll(a.ctx, a.queueBean("*", true), "Name", "QueueSize")
	if err != nil {
		return nil, err
	}
	out := []dlqRow{}
	for _, b := range beans {
		if n, _ := b["Name"].(string); isDLQ(n) {
			out = append(out, dlqRow{n, integer(b["QueueSize"])})
		}
	}
	slices.SortFunc(out, func(x, y dlqRow) int { return strings.Compare(x.Name, y.Name) })
	return out, nil
}

// printDLQs prints rows as a table of Name and Queue Size, or JSON.
func printDLQs(w io.Writer, asJSON bool, rows []dlqRow) error {
	if asJSON {
		return printJSON(w, rows)
	}
	table := make([][]string, len(rows))
	for i, r := range rows {
		table[i] = []string{r.Name, strconv.FormatInt(r.QueueSize, 10)}
	}
	printTable(w, []string{"Name", "Queue Size"}, table, func(col int) bool { return col == 1 })
	return nil
}

// replayChunked sends the messages of each queue of names back to their
// original destinations, at most chunk per call of retryMessages(int),
// each call with its own timeout, drawing a progress bar against the
// queue's size when it began: it stops when that many went back or a
// call moved fewer than it asked for (the rest has no destination to go
// back to, or is in flight). A broker without retryMessages(int) gets one
// retryMessages() per queue, which stderr is told once.
func (a *admin) replayChunked(names []string, chunk int, timeout time.Duration, p *progress, stderr io.Writer) ([]countRow, error) {
	defer p.done()
	// call runs one request with its own deadline: the command as a
	// whole has none, so a replay of millions is bounded per chunk.
	call := func(f func(ctx context.Context) error) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return f(ctx)
	}
	exec := func(n, op string, args ...any) (int64, error) {
		var count int64
		err := call(func(ctx context.Context) error {
			v, err := a.c.Exec(ctx, a.queueBean(n, false), op, args...)
			if err != nil {
				return err
			}
			if err := json.Unmarshal(v, &count); err != nil {
				return fmt.Errorf("%s returned %s", op, v)
			}
			return nil
		})
		return count, err
	}
	fallback := false
	rows := []countRow{}
	for _, n := range names {
		if fallback {
			count, err := exec(n, "retryMessages()")
			if err != nil {
				return nil, a.queueError(n, err)
			}
			rows = append(rows, countRow{Name: n, Count: count})
			continue
		}
		var total int64
		if err := call(func(ctx context.Context) error {
			beans, err := a.c.ReadAll(ctx, a.queueBean(n, false), "QueueSize")
			for _, attrs := range beans {
				total = integer(attrs["QueueSize"])
			}
			return err
		}); err != nil {
			return nil, a.queueError(n, err)
		}
		bar := replayBar{name: n, total: total, start: time.Now()}
		var done int64
		for done < total {
			ask := min(int64(chunk), total-done)
			moved, err := exec(n, "retryMessages(int)", ask)
			if err != nil && done == 0 && noRetryChunks(err) {
				fallback = true
				fmt.Fprintf(stderr, "wharf: the broker has no retryMessages(int) (a Wharf extension; %v): replaying each queue with one retryMessages(), without progress, each bounded by --timeout %s\n", err, timeout)
				if done, err = exec(n, "retryMessages()"); err != nil {
					return nil, a.queueError(n, err)
				}
				break
			}
			if err != nil && done > 0 {
				err = fmt.Errorf("after %d of %d messages went back: %w", done, total, err)
			}
			if err != nil {
				return nil, a.queueError(n, err)
			}
			done += moved
			p.update("%s", bar.line(done, time.Now()))
			if moved < ask {
				break
			}
		}
		rows = append(rows, countRow{Name: n, Count: done})
	}
	return rows, nil
}

// noRetryChunks says whether err is a broker's answer that it has no
// retryMessages(int): Jolokia's "No operation retryMessages(int) on
// MBean ... exists" (ActiveMQ), or its "No operation retryMessages found"
// for a bean without the name.
func noRetryChunks(err error) bool {
	var e *jolokiaclient.Error
	return errors.As(err, &e) && e.Status == 400 && strings.Contains(e.Message, "No operation retryMessages")
}

// replayBar is the progress line of a chunked replay of one queue.
type replayBar struct {
	name  string
	total int64
	start time.Time
}

// line is the bar after done messages at now: the queue, a bar of 20
// cells, moved/total, the percentage, the rate since the start and the
// time left at that rate.
func (b replayBar) line(done int64, now time.Time) string {
	const cells = 20
	frac := 1.0
	if b.total > 0 {
		frac = min(float64(done)/float64(b.total), 1)
	}
	full := int(frac * cells)
	elapsed := now.Sub(b.start).Seconds()
	rate, eta := 0.0, "?"
	if elapsed > 0 && done > 0 {
		rate = float64(done) / elapsed
		eta = (time.Duration(float64(max(b.total-done, 0))/rate) * time.Second).Round(time.Second).String()
	}
	return fmt.Sprintf("replaying %s [%s%s] %d/%d %3.0f%% %.0f msg/s ETA %s",
		b.name, strings.Repeat("#", full), strings.Repeat("-", cells-full), done, b.total, frac*100, rate, eta)
}

// replay sends the messages of each queue of names that the selector sel
// matches back to their original destinations, each with retryMessage,
// until a browse finds none left that can go back.
func (a *admin) replay(names []string, sel string, p *progress) ([]countRow, error) {
	defer p.done()
	rows := []countRow{}
	for _, n := range names {
		bean := a.queueBean(n, false)
		var done int64
		for {
			// A browse returns at most the broker's limit (400 on
			// Wharf and ActiveMQ): browse again until nothing moves.
			msgs, err := a.browse(n, sel)
			if err != nil {
				return nil, err
			}
			ids := make([]string, 0, len(msgs))
			for _, m := range msgs {
				if id, ok := m["JMSMessageID"].(string); ok {
					ids = append(ids, id)
				}
			}
			base := done
			moved, err := a.retryEach(bean, ids, func(k int) {
				p.update("replaying %s: %d messages", n, base+int64(k))
			})
			done += int64(moved)
			if err != nil {
				return nil, a.queueError(n, err)
			}
			if moved == 0 {
				break
			}
		}
		rows = append(rows, countRow{Name: n, Count: done})
	}
	return rows, nil
}

// replayWorkers is how many retryMessage operations retryEach keeps in
// flight: a persistent message's move waits for the store's sync, and
// moves that arrive together share one.
const replayWorkers = 8

// retryEach sends each message of ids on the queue MBean bean back to its
// original destination (retryMessage), replayWorkers at a time, calling
// moved with the running count of those that went back. It stops at the
// first error and returns how many went back.
func (a *admin) retryEach(bean string, ids []string, moved func(n int)) (int, error) {
	ctx, cancel := context.WithCancel(a.ctx)
	defer cancel()
	type result struct {
		back bool
		err  error
	}
	jobs, results := make(chan string), make(chan result)
	go func() {
		defer close(jobs)
		for _, id := range ids {
			select {
			case jobs <- id:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range min(replayWorkers, len(ids)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range jobs {
				v, err := a.c.Exec(ctx, bean, "retryMessage(java.lang.String)", id)
				results <- result{back: err == nil && string(v) == "true", err: err}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(results)
	}()
	n := 0
	var first error
	for r := range results {
		if r.err != nil && first == nil {
			first = r.err
			cancel()
		}
		if r.back {
			n++
			moved(n)
		}
	}
	return n, first
}
