package kahadb

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"

	"wharf/engine/message"
	"wharf/storage/kahadb/command"
	"wharf/storage/kahadb/journal"
)

// Report is what Inspect finds in one KahaDB directory (wharf kahadb).
type Report struct {
	Dir           string
	Files         []int
	Records       int
	ByType        map[string]int
	Undecodable   int
	Damage        []string
	Messages      int // pending after replay
	Subscriptions int
	Jobs          int
	Pins          []Pin // per journal file, what keeps it from cleanup
	// Destinations hold pending messages or durable subscriptions after
	// replay, sorted by their qualified names (queue://a, topic://b).
	Destinations []message.Destination
}

// Pin says why a journal file cannot be deleted: the pending messages of
// each destination it holds, and the durable subscriptions recorded in it.
type Pin struct {
	File          int
	Messages      map[string]int // destination → pending messages in this file
	Subscriptions []string
	Jobs          int
}

// Dirs lists the KahaDB directories of a store directory: itself when it
// holds a journal, else its shard-* children.
func Dirs(dir string) ([]string, error) {
	if m, _ := filepath.Glob(filepath.Join(dir, "db-*.log")); len(m) > 0 {
		return []string{dir}, nil
	}
	m, err := filepath.Glob(filepath.Join(dir, "shard-*"))
	if err != nil {
		return nil, err
	}
	if len(m) > 0 {
		sort.Strings(m)
		return m, nil
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	// An mKahaDB directory: one child KahaDB per filter or destination
	// (queue#3a#2f#2f..., topic#3a..., wharf-jobs), each a journal or a
	// set of shards.
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if m, _ := filepath.Glob(filepath.Join(sub, "db-*.log")); len(m) > 0 {
			out = append(out, sub)
			continue
		}
		shards, _ := filepath.Glob(filepath.Join(sub, "shard-*"))
		sort.Strings(shards)
		out = append(out, shards...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("kahadb: %s holds no journal (no db-*.log, no shard-* directories, no mKahaDB children)", dir)
	}
	return out, nil
}

// Inspect reads a KahaDB directory without changing it: every record (to
// dump, when not nil), the damage found, and the state a replay rebuilds.
func Inspect(dir string, dump func(l journal.Location, c command.Command, err error), log *slog.Logger) (*Report, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	j, err := journal.Open(journal.Options{Dir: dir, ReadOnly: true, MaxWriteBatchSize: 1 << 30, Logger: log})
	if err != nil {
		return nil, err
	}
	defer j.Close()
	r := &Report{Dir: dir, Files: j.Files(), ByType: map[string]int{}, Damage: j.Damage()}
	err = j.Replay(journal.Location{}, func(l journal.Location, payload []byte) error {
		r.Records++
		c, err := command.Decode(payload)
		if err != nil {
			r.Undecodable++
		} else {
			r.ByType[c.Type().String()]++
		}
		if dump != nil {
			dump(l, c, err)
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	ss := newShardStore(&Store{log: log}, j, dir, log)
	if _, err := ss.replay(context.Background(), journal.Location{}); err != nil {
		return r, err
	}
	r.Messages, r.Subscriptions, r.Jobs = len(ss.msgs), len(ss.subs), len(ss.jobs)
	pins := map[int]*Pin{}
	pin := func(f int) *Pin {
		p := pins[f]
		if p == nil {
			p = &Pin{File: f, Messages: map[string]int{}}
			pins[f] = p
		}
		return p
	}
	for k, s := range ss.msgs {
		pin(s.file).Messages[k.dest.String()]++
	}
	for key, s := range ss.subs {
		p := pin(s.file)
		p.Subscriptions = append(p.Subscriptions, key.String())
	}
	for _, jr := range ss.jobs {
		pin(jr.file).Jobs++
	}
	dests := map[message.Destination]bool{}
	for k := range ss.msgs {
		dests[k.dest] = true
	}
	for _, s := range ss.subs {
		dests[s.sub.Destination] = true
	}
	for d := range dests {
		r.Destinations = append(r.Destinations, d)
	}
	sort.Slice(r.Destinations, func(a, b int) bool { return r.Destinations[a].String() < r.Destinations[b].String() })
	for _, p := range pins {
		sort.Strings(p.Subscriptions)
		r.Pins = append(r.Pins, *p)
	}
	sort.Slice(r.Pins, func(a, b int) bool { return r.Pins[a].File < r.Pins[b].File })
	return r, nil
}
