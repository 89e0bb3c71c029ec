package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"

	"wharf/storage/kahadb"
	"wharf/storage/kahadb/command"
	"wharf/storage/kahadb/journal"
)

const kahadbUsage = `Usage:
  wharf kahadb dump DIR    print every journal record
  wharf kahadb check DIR   read every file; report damage (exit status 1 if any)
  wharf kahadb pins DIR    which journal files are kept, and by which destinations

DIR is a KahaDB directory (ActiveMQ's, or Wharf's with one shard), a Wharf
store directory holding shard-* directories, or an mKahaDB directory (each
child in turn). Nothing is written.

  wharf kahadb activemq DIR
                           for a Wharf store of several shards (stop Wharf
                           first): link each shard under the name ActiveMQ's
                           mKahaDB gives its child (in DIR), and print the
                           <persistenceAdapter> with which ActiveMQ 5.17 opens
                           the store, each destination in its shard
`

func runKahaDB(args []string, stdout, stderr io.Writer) error {
	if len(args) == 1 && (args[0] == "--help" || args[0] == "-help" || args[0] == "-h" || args[0] == "help") {
		fmt.Fprint(stdout, kahadbUsage)
		return nil
	}
	// A wrong invocation is one line with a hint, as for run's flags.
	if len(args) != 2 {
		return errors.New("kahadb: want a subcommand and a directory (wharf kahadb --help lists them)")
	}
	cmd, dir := args[0], args[1]
	if cmd == "activemq" {
		return runKahaDBActiveMQ(dir, stdout, stderr)
	}
	if cmd != "dump" && cmd != "check" && cmd != "pins" {
		return fmt.Errorf("kahadb: unknown subcommand %q (wharf kahadb --help lists them)", cmd)
	}
	dirs, err := kahadb.Dirs(dir)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	bad := false
	for _, d := range dirs {
		var dump func(journal.Location, command.Command, error)
		if cmd == "dump" {
			fmt.Fprintf(stdout, "# %s\n", d)
			dump = func(l journal.Location, c command.Command, err error) {
				if err != nil {
					fmt.Fprintf(stdout, "%d:%d\tUNDECODABLE\t%v\n", l.File, l.Offset, err)
					return
				}
				fmt.Fprintf(stdout, "%d:%d\t%s\t%s\n", l.File, l.Offset, c.Type(), describe(c))
			}
		}
		r, err := kahadb.Inspect(d, dump, log)
		if err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		switch cmd {
		case "check":
			status := "ok"
			if len(r.Damage) > 0 || r.Undecodable > 0 {
				status, bad = "DAMAGED", true
			}
			fmt.Fprintf(stdout, "%s: %s: %d files, %d records (%s), %d pending messages, %d durable subscriptions, %d scheduled jobs\n",
				d, status, len(r.Files), r.Records, types(r.ByType), r.Messages, r.Subscriptions, r.Jobs)
			for _, dmg := range r.Damage {
				fmt.Fprintf(stdout, "  damage: %s\n", dmg)
			}
			if r.Undecodable > 0 {
				fmt.Fprintf(stdout, "  %d records could not be decoded\n", r.Undecodable)
			}
		case "pins":
			fmt.Fprintf(stdout, "%s: files %v\n", d, r.Files)
			for _, p := range r.Pins {
				var parts []string
				for dest, n := range p.Messages {
					parts = append(parts, fmt.Sprintf("%s: %d messages", dest, n))
				}
				sort.Strings(parts)
				if len(p.Subscriptions) > 0 {
					parts = append(parts, "durable subscriptions "+strings.Join(p.Subscriptions, ", "))
				}
				if p.Jobs > 0 {
					parts = append(parts, fmt.Sprintf("%d scheduled jobs", p.Jobs))
				}
				fmt.Fprintf(stdout, "  db-%d.log kept by %s\n", p.File, strings.Join(parts, "; "))
			}
		}
	}
	if bad {
		return errors.New("kahadb: damage found")
	}
	return nil
}

func types(m map[string]int) string {
	var out []string
	for t, n := range m {
		out = append(out, fmt.Sprintf("%s %d", t, n))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func dest(d command.Destination) string {
	return strings.ToLower(d.Type.String()) + "://" + d.Name
}

func describe(c command.Command) string {
	switch c := c.(type) {
	case *command.AddMessage:
		return fmt.Sprintf("%s %s (%d bytes)%s", dest(c.Destination), c.MessageID, len(c.Message), tx(c.Transaction))
	case *command.RemoveMessage:
		s := fmt.Sprintf("%s %s", dest(c.Destination), c.MessageID)
		if c.SubscriptionKey != "" {
			s += " sub " + c.SubscriptionKey
		}
		return s + tx(c.Transaction)
	case *command.Subscription:
		if c.SubscriptionInfo == nil {
			return fmt.Sprintf("remove %s on %s", c.SubscriptionKey, dest(c.Destination))
		}
		return fmt.Sprintf("add %s on %s", c.SubscriptionKey, dest(c.Destination))
	case *command.RemoveDestination:
		return dest(c.Destination)
	case *command.UpdateMessage:
		return fmt.Sprintf("%s %s", dest(c.Message.Destination), c.Message.MessageID)
	case *command.Trace:
		// A delivery marks record holds one mark per line: one line here.
		m := strings.ReplaceAll(c.Message, "\n", " | ")
		if len(m) > 80 {
			return m[:80] + "..."
		}
		return m
	case *command.Commit:
		return tx(&c.Transaction)
	case *command.Rollback:
		return tx(&c.Transaction)
	case *command.Prepare:
		return tx(&c.Transaction)
	}
	return ""
}

func tx(t *command.TransactionInfo) string {
	if t == nil {
		return ""
	}
	if l := t.LocalTransactionID; l != nil {
		return fmt.Sprintf(" tx %s:%d", l.ConnectionID, l.TransactionID)
	}
	if x := t.XATransactionID; x != nil {
		return fmt.Sprintf(" xa %d:%x", x.FormatID, x.GlobalTransactionID)
	}
	return ""
}
