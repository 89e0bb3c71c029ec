package jdbc

import (
	"context"

	"github.com/jackc/pgx/v5"

	"wharf/engine/message"
)

// ProducerAudit gives the engine the producer audit the way ActiveMQ's
// JDBC store answers getLastProducerSequenceId (DefaultJDBCAdapter.
// doGetLastProducerSequenceId: SELECT MAX(MSGID_SEQ) FROM ACTIVEMQ_MSGS
// WHERE MSGID_PROD=?): from the messages still stored, per destination
// here (engine.ProducerAuditor). A consumed message is forgotten with its
// row, as in ActiveMQ. Ids that are not ActiveMQ's (sequence 0) are left
// out.
//
// ActiveMQ's JDBC store rejects a duplicate add only with enableAudit on
// the adapter (default false); Wharf's never does, as ActiveMQ's default.
func (ss *shardStore) ProducerAudit(fn func(d message.Destination, producer string, seq int64)) error {
	if ss.closed.Load() {
		return ErrClosed
	}
	t := ss.store.t
	return queryRows(context.Background(), ss.store.pool, "SELECT w.CONTAINER, m.MSGID_PROD, MAX(m.MSGID_SEQ) FROM "+t.wmsgs+" w JOIN "+t.msgs+
		" m ON m.ID = w.ID WHERE w.SHARD=$1 AND m.MSGID_PROD IS NOT NULL AND m.MSGID_SEQ > 0 GROUP BY w.CONTAINER, m.MSGID_PROD", []any{ss.index}, func(r pgx.Rows) error {
		var c, p string
		var seq int64
		if err := r.Scan(&c, &p, &seq); err != nil {
			return err
		}
		fn(message.ParseQualified(c, message.Queue), p, seq)
		return nil
	})
}
