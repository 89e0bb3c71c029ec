package jdbc

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/engine/selector"
)

// adopt makes the rows ActiveMQ wrote (or changed) since Wharf last ran
// on the database part of shard index's state, in one transaction,
// before its index loads:
//
//   - a message row of ACTIVEMQ_MSGS without a WHARF_MSGS row (ActiveMQ
//     added it), not a pending send of an XA transaction (its XID, when
//     set, is a pending acknowledgement: base64 of '-' first, "L"; xa.go),
//     in a container the
//     engine places on this shard (engine.ShardIndex), gets one: its
//     sequence is its ID (IDs grow with add order in a destination, and
//     are above every sequence Wharf gave the destination's messages:
//     each of those had an ID at least its sequence, and ActiveMQ's ids
//     continue from the highest), redelivery counter 0;
//   - a durable subscription ActiveMQ made (its priority 0 row of
//     ACTIVEMQ_ACKS, on one of the shard's topics) gets its WHARF_SUBS
//     record, with its selector (ActiveMQ stores no noLocal: false); a
//     wildcard one (rows, one per topic it matched, whose SUB_DEST is the
//     pattern) gets its record on every shard; a subscription of
//     WHARF_SUBS on a topic whose ACTIVEMQ_ACKS row is gone (ActiveMQ
//     unsubscribed it) goes, with its waiting rows;
//   - an adopted topic message waits for every subscription of its topic
//     whose LAST_ACKED_ID (of its priority's row if ActiveMQ keeps one per
//     priority, else of the priority 0 row) is below its ID; a waiting
//     row at or below the subscription's LAST_ACKED_ID goes (ActiveMQ
//     acknowledged it), and so does one whose message the subscription's
//     selector does not match (adoptSelectors); a topic message nobody
//     waits for any more goes
//     (ActiveMQ's cleanup would delete it).
//
// Each step is a no-op on a database only Wharf wrote.
func (ss *shardStore) adopt(ctx context.Context, count int) error {
	s, t, sh := ss.store, ss.store.t, ss.index
	// The containers with rows to adopt, and those with subscriptions.
	var mine, topics []string
	seen := map[string]bool{}
	consider := func(c string) {
		if seen[c] {
			return
		}
		seen[c] = true
		d := message.ParseQualified(c, message.Queue)
		if d.Type.IsTemp() || engine.ShardIndex(d, count) != sh {
			return
		}
		mine = append(mine, c)
		if d.Type.IsTopic() {
			topics = append(topics, c)
		}
	}
	if err := queryRows(ctx, s.pool, "SELECT DISTINCT m.CONTAINER FROM "+t.msgs+" m LEFT JOIN "+t.wmsgs+" w ON w.ID = m.ID WHERE w.ID IS NULL AND (m.XID IS NULL OR m.XID LIKE 'L%')", nil, func(r pgx.Rows) error {
		var c string
		if err := r.Scan(&c); err != nil {
			return err
		}
		consider(c)
		return nil
	}); err != nil {
		return err
	}
	if err := queryRows(ctx, s.pool, "SELECT DISTINCT CONTAINER FROM "+t.acks, nil, func(r pgx.Rows) error {
		var c string
		if err := r.Scan(&c); err != nil {
			return err
		}
		consider(c)
		return nil
	}); err != nil {
		return err
	}
	// Wharf's own subscriptions of this shard on topics (not wildcards):
	// one whose ActiveMQ row is gone was unsubscribed by ActiveMQ.
	var gone [][2]string
	if err := queryRows(ctx, s.pool, "SELECT s.CLIENT_ID, s.SUB_NAME FROM "+t.subs+" s WHERE s.SHARD=$1 AND s.SUB_DEST NOT LIKE '%*%' AND s.SUB_DEST NOT LIKE '%>%'"+
		" AND NOT EXISTS (SELECT 1 FROM "+t.acks+" a WHERE a.CONTAINER = s.SUB_DEST AND a.CLIENT_ID = s.CLIENT_ID AND a.SUB_NAME = s.SUB_NAME)", []any{sh}, func(r pgx.Rows) error {
		var k [2]string
		if err := r.Scan(&k[0], &k[1]); err != nil {
			return err
		}
		gone = append(gone, k)
		return nil
	}); err != nil {
		return err
	}
	// The topic messages adopted now, whose waiting rows the selectors
	// then filter (adoptSelectors).
	var fresh []int64
	if err := queryRows(ctx, s.pool, "SELECT m.ID FROM "+t.msgs+" m LEFT JOIN "+t.wmsgs+" w ON w.ID = m.ID WHERE w.ID IS NULL AND m.XID IS NULL AND m.CONTAINER = ANY($1)", []any{topics}, func(r pgx.Rows) error {
		var id int64
		fresh = append(fresh, id)
		return r.Scan(&fresh[len(fresh)-1])
	}); err != nil {
		return err
	}
	var b pgx.Batch
	for _, k := range gone {
		b.Queue(s.st.deleteWSub, sh, k[0], k[1])
		b.Queue(s.st.deleteSubMarks, sh, k[0], k[1])
		b.Queue(s.st.removeSubWaits, sh, k[0], k[1])
	}
	b.Queue("INSERT INTO "+t.wmsgs+" (ID, SHARD, CONTAINER, SEQ, SIZE, REDELIVERIES)"+
		" SELECT m.ID, $1, m.CONTAINER, m.ID, 128 + COALESCE(octet_length(m.MSG), 0), 0 FROM "+t.msgs+" m LEFT JOIN "+t.wmsgs+" w ON w.ID = m.ID"+
		" WHERE w.ID IS NULL AND (m.XID IS NULL OR m.XID LIKE 'L%') AND m.CONTAINER = ANY($2)", sh, mine)
	b.Queue("INSERT INTO "+t.dests+" (SHARD, CONTAINER) SELECT $1, c FROM unnest($2::text[]) AS c ON CONFLICT DO NOTHING", sh, mine)
	// Wildcard subscriptions: a row per topic matched, SUB_DEST the
	// pattern; the engine keeps the record on every shard.
	b.Queue("INSERT INTO "+t.subs+" (SHARD, CLIENT_ID, SUB_NAME, SUB_DEST, SELECTOR, NO_LOCAL)"+
		" SELECT DISTINCT ON (a.CLIENT_ID, a.SUB_NAME) $1, a.CLIENT_ID, a.SUB_NAME, a.SUB_DEST, a.SELECTOR, FALSE FROM "+t.acks+" a"+
		" WHERE a.SUB_DEST <> a.CONTAINER AND (a.SUB_DEST LIKE '%*%' OR a.SUB_DEST LIKE '%>%')"+
		" AND NOT EXISTS (SELECT 1 FROM "+t.subs+" s WHERE s.SHARD = $1 AND s.CLIENT_ID = a.CLIENT_ID AND s.SUB_NAME = a.SUB_NAME) ON CONFLICT DO NOTHING", sh)
	if len(topics) > 0 {
		b.Queue("INSERT INTO "+t.subs+" (SHARD, CLIENT_ID, SUB_NAME, SUB_DEST, SELECTOR, NO_LOCAL)"+
			" SELECT $1, a.CLIENT_ID, a.SUB_NAME, a.CONTAINER, a.SELECTOR, FALSE FROM "+t.acks+" a WHERE a.PRIORITY = 0 AND a.CONTAINER = ANY($2)"+
			" AND (a.SUB_DEST IS NULL OR a.SUB_DEST = a.CONTAINER)"+
			" AND NOT EXISTS (SELECT 1 FROM "+t.subs+" s WHERE s.CLIENT_ID = a.CLIENT_ID AND s.SUB_NAME = a.SUB_NAME) ON CONFLICT DO NOTHING", sh, topics)
		// Waiting rows of the adopted topic messages: those whose
		// WHARF_MSGS row has no waiting row yet, i.e. new in this
		// transaction (Wharf's own topic messages always have one).
		b.Queue("INSERT INTO "+t.waits+" (ID, CLIENT_ID, SUB_NAME)"+
			" SELECT m.ID, a.CLIENT_ID, a.SUB_NAME FROM "+t.wmsgs+" w JOIN "+t.msgs+" m ON m.ID = w.ID JOIN "+t.acks+" a ON a.CONTAINER = m.CONTAINER AND a.PRIORITY = 0"+
			" WHERE w.SHARD = $1 AND w.CONTAINER = ANY($2) AND w.SEQ = w.ID"+
			" AND NOT EXISTS (SELECT 1 FROM "+t.waits+" x WHERE x.ID = w.ID)"+
			" AND m.ID > COALESCE((SELECT p.LAST_ACKED_ID FROM "+t.acks+" p WHERE p.CONTAINER = a.CONTAINER AND p.CLIENT_ID = a.CLIENT_ID"+
			" AND p.SUB_NAME = a.SUB_NAME AND p.PRIORITY = m.PRIORITY AND p.PRIORITY > 0), a.LAST_ACKED_ID, -1)"+
			" ON CONFLICT DO NOTHING", sh, topics)
		// What ActiveMQ acknowledged.
		b.Queue("DELETE FROM "+t.waits+" x USING "+t.wmsgs+" w, "+t.acks+" a WHERE x.ID = w.ID AND w.SHARD = $1 AND w.CONTAINER = ANY($2)"+
			" AND a.CONTAINER = w.CONTAINER AND a.CLIENT_ID = x.CLIENT_ID AND a.SUB_NAME = x.SUB_NAME AND a.PRIORITY = 0 AND x.ID <= a.LAST_ACKED_ID", sh, topics)
	}
	if err := s.pool.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("adopt ActiveMQ's rows: %w", err)
	}
	if len(fresh) > 0 {
		if err := ss.adoptSelectors(ctx, fresh); err != nil {
			return fmt.Errorf("adopt ActiveMQ's rows: selectors: %w", err)
		}
	}
	b = pgx.Batch{}
	// Topic messages nobody waits for (every subscription acknowledged
	// them, or none was there to need them).
	b.Queue("DELETE FROM "+t.msgs+" WHERE ID IN (SELECT w.ID FROM "+t.wmsgs+" w WHERE w.SHARD = $1 AND (w.CONTAINER LIKE 'topic://%' OR w.CONTAINER LIKE 'temp-topic://%')"+
		" AND NOT EXISTS (SELECT 1 FROM "+t.waits+" x WHERE x.ID = w.ID))", sh)
	if err := s.pool.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("adopt ActiveMQ's rows: %w", err)
	}
	return nil
}

// adoptSelectors applies the selectors of the shard's subscriptions to
// the topic messages just adopted (IDs fresh) they wait for: ActiveMQ keeps a topic message for every
// subscription and applies a selector when it dispatches, Wharf stores
// a message only for the subscriptions it matches. A selector that does
// not parse keeps every message (and is logged).
func (ss *shardStore) adoptSelectors(ctx context.Context, fresh []int64) error {
	s, t, sh := ss.store, ss.store.t, ss.index
	type wait struct {
		id           int64
		client, name string
	}
	var drop []wait
	parsed := map[string]*selector.Selector{}
	err := queryRows(ctx, s.pool, "SELECT x.ID, x.CLIENT_ID, x.SUB_NAME, s.SELECTOR, m.MSG, m.CONTAINER FROM "+t.waits+" x JOIN "+t.wmsgs+" w ON w.ID = x.ID"+
		" JOIN "+t.msgs+" m ON m.ID = x.ID JOIN "+t.subs+" s ON s.SHARD = w.SHARD AND s.CLIENT_ID = x.CLIENT_ID AND s.SUB_NAME = x.SUB_NAME"+
		" WHERE w.SHARD = $1 AND x.ID = ANY($2) AND s.SELECTOR IS NOT NULL AND s.SELECTOR <> ''", []any{sh, fresh}, func(r pgx.Rows) error {
		var x wait
		var sel, c string
		var frame []byte
		if err := r.Scan(&x.id, &x.client, &x.name, &sel, &frame, &c); err != nil {
			return err
		}
		p, ok := parsed[sel]
		if !ok {
			var err error
			if p, err = selector.Parse(sel); err != nil {
				ss.log.Warn("selector of an adopted subscription does not parse: its backlog is kept whole", "selector", sel, "err", err)
			}
			parsed[sel] = p
		}
		m, err := decodeStored(frame, message.ParseQualified(c, message.Topic), 0)
		if err != nil {
			return nil // recovery skips it, with a log line
		}
		if p != nil && !p.Matches(m, m.RedeliveryCounter) {
			drop = append(drop, x)
		}
		return nil
	})
	if err != nil || len(drop) == 0 {
		return err
	}
	var b pgx.Batch
	for _, x := range drop {
		b.Queue(s.st.removeWait, x.id, x.client, x.name)
	}
	return s.pool.SendBatch(ctx, &b).Close()
}
