package main

import (
	"context"
	"flag"
	"io"
	"slices"
	"strconv"
	"strings"
)

const dstatUsage = `Usage:
  wharf dstat [queues|topics] [flags]

A table of every queue and topic (queues or topics alone when named), as
"activemq dstat" prints it: Name, Queue Size, Producer #, Consumer #,
Enqueue #, Dequeue #, Forward # and Memory %, sorted by name. Temporary
destinations are left out, as ActiveMQ's dstat leaves them. Producer #
counts OpenWire producers only (the other protocols' are anonymous);
Forward # is what a network bridge forwarded, 0 on Wharf, which has none.
--json prints a list of objects with the same figures.
` + adminCommon

// dstatRow is one destination's line of dstat; its JSON is --json's.
type dstatRow struct {
	Name          string `json:"name"`
	Type          string `json:"type"`
	QueueSize     int64  `json:"queueSize"`
	ProducerCount int64  `json:"producerCount"`
	ConsumerCount int64  `json:"consumerCount"`
	EnqueueCount  int64  `json:"enqueueCount"`
	DequeueCount  int64  `json:"dequeueCount"`
	ForwardCount  int64  `json:"forwardCount"`
	MemoryPercent int64  `json:"memoryPercentUsage"`
}

// runDstat is `wharf dstat`, after ActiveMQ's DstatCommand.
func runDstat(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dstat", flag.ContinueOnError)
	o := addAdminFlags(fs)
	pos, err := parseAdmin("dstat", fs, args, dstatUsage, stdout)
	if err != nil {
		return err
	}
	types := []string{"Queue", "Topic"}
	switch {
	case len(pos) > 1:
		return usageError("dstat: want at most one of queues or topics, got %q", pos)
	case len(pos) == 0:
	case pos[0] == "queues":
		types = types[:1]
	case pos[0] == "topics":
		types = types[1:]
	default:
		return usageError("dstat: %q: want queues or topics (or nothing, for both)", pos[0])
	}
	return o.withTimeout(func(ctx context.Context) error {
		a, err := o.connect(ctx)
		if err != nil {
			return err
		}
		var rows []dstatRow
		for _, t := range types {
			// Every attribute: ForwardCount is ActiveMQ's, which Wharf
			// does not serve, and a named list would leave such beans out.
			beans, err := a.c.ReadAll(ctx, a.brokerBean("destinationType="+t+",destinationName=*"))
			if err != nil {
				return err
			}
			for _, b := range beans {
				name, _ := b["Name"].(string)
				rows = append(rows, dstatRow{
					Name: name, Type: t,
					QueueSize: integer(b["QueueSize"]), ProducerCount: integer(b["ProducerCount"]),
					ConsumerCount: integer(b["ConsumerCount"]), EnqueueCount: integer(b["EnqueueCount"]),
					DequeueCount: integer(b["DequeueCount"]), ForwardCount: integer(b["ForwardCount"]),
					MemoryPercent: integer(b["MemoryPercentUsage"]),
				})
			}
		}
		slices.SortFunc(rows, func(x, y dstatRow) int {
			if x.Name != y.Name {
				return strings.Compare(x.Name, y.Name)
			}
			return strings.Compare(x.Type, y.Type)
		})
		if o.json {
			if rows == nil {
				rows = []dstatRow{}
			}
			return printJSON(stdout, rows)
		}
		table := make([][]string, len(rows))
		for i, r := range rows {
			table[i] = []string{r.Name}
			for _, n := range []int64{r.QueueSize, r.ProducerCount, r.ConsumerCount, r.EnqueueCount, r.DequeueCount, r.ForwardCount, r.MemoryPercent} {
				table[i] = append(table[i], strconv.FormatInt(n, 10))
			}
		}
		printTable(stdout, []string{"Name", "Queue Size", "Producer #", "Consumer #", "Enqueue #", "Dequeue #", "Forward #", "Memory %"},
			table, func(col int) bool { return col > 0 })
		return nil
	})
}
