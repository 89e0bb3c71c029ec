package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

const browseUsage = `Usage:
  wharf browse QUEUE [--selector S] [--max N] [flags]

List the messages on QUEUE without consuming them, as "activemq browse"
does: Message ID, Timestamp, Delivery Mode, Priority, Redelivered (the
redelivery counter) and a summary of the body (the start of a text body,
the length of a bytes body). The broker sends at most 400 messages per
browse.

  --selector S          only the messages this JMS selector matches, e.g.
                        --selector "JMSPriority > 4 AND region = 'eu'"
  --max N               print at most N messages (default 0: all that the
                        broker sends)

--json prints the messages as the broker's browse operation returns them
(every JMS header, PropertiesText, Text or BodyLength). An unknown queue is
exit status 1.
` + adminCommon

// runBrowse is `wharf browse`, after ActiveMQ's BrowseCommand, over the
// queue MBean's browse operation.
func runBrowse(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("browse", flag.ContinueOnError)
	o := addAdminFlags(fs)
	sel := fs.String("selector", "", "JMS selector")
	maxN := fs.Int("max", 0, "at most this many messages")
	pos, err := parseAdmin("browse", fs, args, browseUsage, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("browse: want one queue, got %q", pos)
	}
	if *maxN < 0 {
		return usageError("browse: --max %d: want 0 (all) or more", *maxN)
	}
	return o.withTimeout(func(ctx context.Context) error {
		a, err := o.connect(ctx)
		if err != nil {
			return err
		}
		msgs, err := a.browse(pos[0], *sel)
		if err != nil {
			return err
		}
		if *maxN > 0 && len(msgs) > *maxN {
			msgs = msgs[:*maxN]
		}
		if o.json {
			return printJSON(stdout, msgs)
		}
		rows := make([][]string, len(msgs))
		for i, m := range msgs {
			rows[i] = []string{attrText(m["JMSMessageID"]), attrText(m["JMSTimestamp"]), attrText(m["JMSDeliveryMode"]),
				attrText(m["JMSPriority"]), attrText(m["RedeliveryCounter"]), bodySummary(m)}
		}
		printTable(stdout, []string{"Message ID", "Timestamp", "Delivery Mode", "Priority", "Redelivered", "Body"}, rows,
			func(col int) bool { return col == 3 || col == 4 })
		return nil
	})
}

// browse returns the messages on the queue called name that sel matches
// (all when sel is ""), as the browse operation renders them.
func (a *admin) browse(name, sel string) ([]map[string]any, error) {
	var v json.RawMessage
	var err error
	if sel == "" {
		v, err = a.c.Exec(a.ctx, a.queueBean(name, false), "browse()")
	} else {
		v, err = a.c.Exec(a.ctx, a.queueBean(name, false), "browse(java.lang.String)", sel)
	}
	if err != nil {
		return nil, a.queueError(name, err)
	}
	msgs := []map[string]any{}
	if err := json.Unmarshal(v, &msgs); err != nil {
		return nil, fmt.Errorf("browse %s: %v", name, err)
	}
	return msgs, nil
}

// queueError names the queue in err, and makes an unknown one exit
// status 1 with a message that says so.
func (a *admin) queueError(name string, err error) error {
	if isNotFound(err) {
		return &exitError{code: exitFailed, err: fmt.Errorf("no queue %q on broker %s", name, a.broker)}
	}
	return fmt.Errorf("queue %s: %w", name, err)
}

// bodySummary is the start of a text body (one line, at most 60
// characters) or the length of another.
func bodySummary(m map[string]any) string {
	if t, ok := m["Text"].(string); ok {
		t = strings.Join(strings.Fields(t), " ")
		if r := []rune(t); len(r) > 60 {
			t = string(r[:57]) + "..."
		}
		return strconv.Quote(t)
	}
	if n, ok := m["BodyLength"].(float64); ok {
		return fmt.Sprintf("<%d bytes>", int64(n))
	}
	return ""
}

const purgeUsage = `Usage:
  wharf purge QUEUE... [--selector S] [flags]

Remove the messages of each QUEUE that are not dispatched to a consumer, as
"activemq purge" does; a name may hold the wildcards * and ?, e.g.
wharf purge 'orders.*'. Prints each queue and how many messages were
removed (--json: a list of {"name","removed"}).

  --selector S          only the messages this JMS selector matches (as
                        activemq purge --msgsel), e.g. --selector "region = 'eu'"

A queue that does not exist (a pattern that matches none) is exit status 1,
after the others are purged.
` + adminCommon

// countRow is how many messages an operation removed from (or sent back
// from) one queue.
type countRow struct {
	Name  string
	Count int64
}

// runPurge is `wharf purge`, over the queue MBean's
// removeMatchingMessages (which, unlike purge, says how many it removed).
func runPurge(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("purge", flag.ContinueOnError)
	o := addAdminFlags(fs)
	sel := fs.String("selector", "", "JMS selector")
	pos, err := parseAdmin("purge", fs, args, purgeUsage, stdout)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError("purge: want one or more queues")
	}
	return o.withTimeout(func(ctx context.Context) error {
		a, err := o.connect(ctx)
		if err != nil {
			return err
		}
		var names []string
		var missing error
		for _, p := range pos {
			qs, err := a.queues(p)
			var none *exitError // no such queue: purge the others first
			if errors.As(err, &none) {
				missing = err
				continue
			}
			if err != nil {
				return err
			}
			names = append(names, qs...)
		}
		rows, err := a.removeMatching(names, *sel, newProgress(stderr), "purging")
		if err != nil {
			return err
		}
		if err := printCounts(stdout, o.json, "Removed", rows); err != nil {
			return err
		}
		return missing
	})
}

// removeMatching removes the messages sel matches from each queue of
// names, with a progress line of the queues done.
func (a *admin) removeMatching(names []string, sel string, p *progress, verb string) ([]countRow, error) {
	defer p.done()
	rows := []countRow{}
	for i, n := range names {
		p.update("%s %d/%d queues: %s", verb, i+1, len(names), n)
		v, err := a.c.Exec(a.ctx, a.queueBean(n, false), "removeMatchingMessages(java.lang.String)", sel)
		if err != nil {
			return nil, a.queueError(n, err)
		}
		var removed int64
		if err := json.Unmarshal(v, &removed); err != nil {
			return nil, fmt.Errorf("queue %s: removeMatchingMessages returned %s", n, v)
		}
		rows = append(rows, countRow{Name: n, Count: removed})
	}
	return rows, nil
}

// printCounts prints rows as a table of Name and column, or as a JSON
// list of {"name", column in lower case}.
func printCounts(w io.Writer, asJSON bool, column string, rows []countRow) error {
	if asJSON {
		out := make([]map[string]any, len(rows))
		for i, r := range rows {
			out[i] = map[string]any{"name": r.Name, strings.ToLower(column): r.Count}
		}
		return printJSON(w, out)
	}
	table := make([][]string, len(rows))
	for i, r := range rows {
		table[i] = []string{r.Name, strconv.FormatInt(r.Count, 10)}
	}
	printTable(w, []string{"Name", column}, table, func(col int) bool { return col == 1 })
	return nil
}
