package kahadb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"wharf/engine/message"
)

// Handing a store of several shards to ActiveMQ (wharf kahadb activemq).
//
// Each shard-<i>-of-<n> directory is a valid KahaDB directory, but ActiveMQ
// 5.17 opens several only as the children of an <mKahaDB>, and it names
// every child directory itself: MultiKahaDBPersistenceAdapter.
// configureDirectory puts the child of a filter at <mKahaDB directory>/
// <IOHelper.toFileSystemSafeName(qualified name of the filter)>, whatever
// directory the child's <kahaDB> names. So the store gets one symbolic
// link per shard, named as ActiveMQ names that shard's filter and pointing
// at the shard, and the mKahaDB directory is the store directory itself:
// its lock file is then the one Wharf locks, and the two brokers keep
// excluding each other.
//
// A filter must route every destination of a shard to that shard: the
// destination map of mKahaDB (DestinationMap.chooseValue) hands a
// destination to the filter naming it exactly, else to the most specific
// pattern, and the catch-all (matchAll, an AnyDestination) sorts last. The
// last shard is the catch-all, so destinations created under ActiveMQ
// later go there; every other shard's filter is a composite of its
// destinations ("queue://a,topic://b"), whose qualified name is its
// physical name as written (ActiveMQDestination.getQualifiedName).

// MKahaDBChild is one <filteredKahaDB> of the mKahaDB configuration with
// which ActiveMQ opens a store of several shards.
type MKahaDBChild struct {
	// Shard is the shard directory's name (shard-0-of-2).
	Shard string
	// Attr and Value are the filter: Attr is "queue" or "topic", or ""
	// for the catch-all (the last shard).
	Attr, Value string
	// Link is the name of the child directory ActiveMQ opens, a symbolic
	// link to Shard in the store directory.
	Link string
	// Destinations are those the shard holds (pending messages, durable
	// subscriptions).
	Destinations []message.Destination
}

// catchAllChild is the directory ActiveMQ 5.17 opens for the catch-all
// filter: its destination is matchAll, an AnyDestination whose physical
// name is "!0" (so that it sorts first in a DestinationMap, AMQ-5450),
// and a composite's qualified name is its physical name. ChildName gives
// it to the catch-all; OpenMulti renames a catch-all child of the older
// Wharf name (oldCatchAllChild).
var catchAllChild = safeName("!0")

var shardDirRE = regexp.MustCompile(`^shard-(\d+)-of-(\d+)$`)

// ErrNotSharded reports a directory that is not a store of several
// shards.
var ErrNotSharded = errors.New("kahadb: not a store of several shard-<i>-of-<n> directories")

// PlanMKahaDB reads the store of several shards in dir (without changing
// it) and returns the mKahaDB filters that give ActiveMQ each shard with
// the destinations it holds, in shard order. A shard holding nothing is
// left out unless it is the last (the catch-all).
func PlanMKahaDB(dir string) ([]MKahaDBChild, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	count := 0
	shards := map[int]string{}
	for _, e := range entries {
		m := shardDirRE.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			if strings.HasPrefix(e.Name(), "db-") && strings.HasSuffix(e.Name(), ".log") {
				return nil, fmt.Errorf("%w: %s is a single KahaDB journal; ActiveMQ opens it as it is, with <kahaDB directory=%q/>", ErrNotSharded, dir, dir)
			}
			continue
		}
		i, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		if count != 0 && n != count {
			return nil, fmt.Errorf("%w: %s holds shards of %d and of %d", ErrShardCount, dir, count, n)
		}
		count = n
		shards[i] = e.Name()
	}
	if count == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNotSharded, dir)
	}
	var plan []MKahaDBChild
	links := map[string]string{}
	for i := range count {
		name, ok := shards[i]
		if !ok {
			return nil, fmt.Errorf("kahadb: %s has no shard-%d-of-%d", dir, i, count)
		}
		r, err := Inspect(filepath.Join(dir, name), nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		c := MKahaDBChild{Shard: name, Destinations: r.Destinations}
		for _, d := range c.Destinations {
			// A name ActiveMQ would read as a pattern (any "*" or ">":
			// ActiveMQDestination.setPhysicalName), a composite or
			// options cannot be listed in a filter.
			if strings.ContainsAny(d.Name, "*>,?") || (d.Type != message.Queue && d.Type != message.Topic) {
				return nil, fmt.Errorf("kahadb: %s holds %s, which an mKahaDB filter cannot name", name, d)
			}
		}
		switch {
		case i == count-1:
			c.Link = catchAllChild
		case len(c.Destinations) == 0:
			continue
		case len(c.Destinations) == 1:
			d := c.Destinations[0]
			c.Attr, c.Value = "queue", d.Name
			if d.Type == message.Topic {
				c.Attr = "topic"
			}
			c.Link = ChildName(d)
		default:
			qs := make([]string, len(c.Destinations))
			for j, d := range c.Destinations {
				qs[j] = d.String()
			}
			sort.Strings(qs)
			c.Attr, c.Value = "queue", strings.Join(qs, ",")
			c.Link = safeName(c.Value)
		}
		if other, dup := links[c.Link]; dup {
			// Two composites whose safe names end in the same 64
			// characters would be one directory for ActiveMQ.
			return nil, fmt.Errorf("kahadb: the mKahaDB children of %s and %s would both be named %s", other, name, c.Link)
		}
		links[c.Link] = name
		plan = append(plan, c)
	}
	return plan, nil
}

// LinkMKahaDB makes, in the store directory dir, the symbolic links of
// plan (each to its shard, relative, so the store can be moved). A link
// already pointing at its shard is kept; anything else by that name is an
// error.
func LinkMKahaDB(dir string, plan []MKahaDBChild) error {
	for _, c := range plan {
		p := filepath.Join(dir, c.Link)
		if target, err := os.Readlink(p); err == nil {
			if target == c.Shard {
				continue
			}
			return fmt.Errorf("kahadb: %s links to %s, not %s", p, target, c.Shard)
		} else if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("kahadb: %s exists and is not a link to %s", p, c.Shard)
		}
		if err := os.Symlink(c.Shard, p); err != nil {
			return fmt.Errorf("kahadb: %w", err)
		}
	}
	return nil
}
