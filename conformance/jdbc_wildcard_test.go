package conformance

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"wharf/internal/pgtest"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// Durable subscriptions with a wildcard destination or a selector shared
// between Wharf and ActiveMQ 5.17 on one JDBC database: ActiveMQ keeps
// a wildcard subscription as an ACTIVEMQ_ACKS row per topic it matched
// (SUB_DEST the pattern) and a selector in the SELECTOR column, applied
// when it dispatches (it stores every topic message for every
// subscription); Wharf writes the same rows and, adopting ActiveMQ's,
// applies the selector to the backlog it adopts.

const (
	wildTopicA  = "jdbc.wild.a"
	wildTopicB  = "jdbc.wild.b"
	wildPattern = "jdbc.wild.>"
	wildClient  = "jdbc-wild"
)

// wildConsumers opens the two durable subscriptions of the scenario on
// the broker at addr: "wild" on the pattern with selector "i > 0", "sel"
// on topic A with selector "i > 1".
func wildConsumers(t *testing.T, addr string) (wild, sel *client.Consumer) {
	t.Helper()
	c := dialOW(t, addr, wildClient)
	s := must(c.Session(false))(t)
	wild = must(s.Consumer(wire.NewTopic(wildPattern), client.ConsumerOptions{DurableName: "wild", Selector: "i > 0"}))(t)
	sel = must(s.Consumer(wire.NewTopic(wildTopicA), client.ConsumerOptions{DurableName: "sel", Selector: "i > 1"}))(t)
	return wild, sel
}

// writeWild makes the subscriptions offline and publishes three messages
// (i = 0, 1, 2) on each of topics A and B, alternating.
func writeWild(t *testing.T, addr string) {
	t.Helper()
	wild, sel := wildConsumers(t, addr)
	wild.Close()
	sel.Close()
	c := dialOW(t, addr, "")
	s := must(c.Session(false))(t)
	pa := must(s.Producer(wire.NewTopic(wildTopicA)))(t)
	pb := must(s.Producer(wire.NewTopic(wildTopicB)))(t)
	for i := range 3 {
		for _, p := range []*client.Producer{pa, pb} {
			m := richMessage(p.Destination().PhysicalName+"-"+strconv.Itoa(i), i)
			m.Priority = 4
			owSend(t, p, m)
		}
	}
	c.Close()
}

// readWild checks the backlogs on the broker at addr: "wild" gets the
// messages with i > 0 of both topics (each topic's in order), "sel" only
// topic A's i = 2; then a marker on topic A comes next on both.
func readWild(t *testing.T, addr, what string) {
	t.Helper()
	wild, sel := wildConsumers(t, addr)
	got := keysOf(receiveN(t, wild, what+" wildcard subscription", 4))
	var a, b []string
	for _, k := range got {
		if len(k) > len(wildTopicA) && k[:len(wildTopicA)] == wildTopicA {
			a = append(a, k)
		} else {
			b = append(b, k)
		}
	}
	if want := []string{wildTopicA + "-1", wildTopicA + "-2"}; !slices.Equal(a, want) {
		t.Errorf("%s: wildcard subscription's messages of %s: %q, want %q", what, wildTopicA, a, want)
	}
	if want := []string{wildTopicB + "-1", wildTopicB + "-2"}; !slices.Equal(b, want) {
		t.Errorf("%s: wildcard subscription's messages of %s: %q, want %q", what, wildTopicB, b, want)
	}
	if got := keysOf(receiveN(t, sel, what+" selector subscription", 1)); !slices.Equal(got, []string{wildTopicA + "-2"}) {
		t.Errorf("%s: selector subscription: %q, want [%s-2]", what, got, wildTopicA)
	}
	c := dialOW(t, addr, "")
	s := must(c.Session(false))(t)
	p := must(s.Producer(wire.NewTopic(wildTopicA)))(t)
	m := richMessage("marker", 7)
	owSend(t, p, m)
	for name, k := range map[string]*client.Consumer{"wildcard": wild, "selector": sel} {
		if got := keysOf(receiveN(t, k, what+" marker", 1)); !slices.Equal(got, []string{"marker"}) {
			t.Errorf("%s: %s subscription after its backlog: %q, want the marker", what, name, got)
		}
	}
}

// TestConformanceJDBCWildcardSelectorToActiveMQ: the subscriptions made
// and the messages published on a two-shard wharf come back on ActiveMQ
// 5.17 started on the database: the wildcard subscription with what it
// matched on both topics, the selector subscription with what matched.
func TestConformanceJDBCWildcardSelectorToActiveMQ(t *testing.T) {
	skipWithoutActiveMQ(t)
	pg := pgtest.Shared(t)
	db := pg.NewDatabase(t)
	w := startWharfYAML(t, fmt.Sprintf(jdbcWharfConfig, pg.Port, db, pgtest.Superuser))
	writeWild(t, w.openwire)
	w.stop()
	amq := startActiveMQJDBC(t, pg, db)
	readWild(t, amq.openwire, "ActiveMQ after Wharf")
	amq.stop()
}

// TestConformanceJDBCWildcardSelectorFromActiveMQ: the same written by
// ActiveMQ 5.17 (which stores every topic message for both
// subscriptions) and adopted by a two-shard wharf: the wildcard
// subscription's record and backlog on both topics, the selector applied
// to the adopted backlog.
func TestConformanceJDBCWildcardSelectorFromActiveMQ(t *testing.T) {
	skipWithoutActiveMQ(t)
	pg := pgtest.Shared(t)
	db := pg.NewDatabase(t)
	amq := startActiveMQJDBC(t, pg, db)
	writeWild(t, amq.openwire)
	amq.stop()
	w := startWharfYAML(t, fmt.Sprintf(jdbcWharfConfig, pg.Port, db, pgtest.Superuser))
	readWild(t, w.openwire, "Wharf after ActiveMQ")
	w.stop()
}
