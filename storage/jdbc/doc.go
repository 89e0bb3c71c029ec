// Package jdbc is ActiveMQ's JDBC persistence adapter on PostgreSQL
// (github.com/jackc/pgx/v5): the engine's shard stores in one database,
// selected by <jdbcPersistenceAdapter dataSource="#id"> in activemq.xml
// or persistence.jdbc in YAML.
//
// Tables. ActiveMQ's three, created as ActiveMQ 5.17's
// DefaultJDBCAdapter.doCreateTables creates them with
// PostgresqlJDBCAdapter's types (each statement on its own, a failure
// ignored), named as its Statements class names them with tablePrefix:
// ACTIVEMQ_MSGS (ID, CONTAINER, MSGID_PROD, MSGID_SEQ, EXPIRATION, MSG,
// PRIORITY, XID), ACTIVEMQ_ACKS and ACTIVEMQ_LOCK. A message is one
// ACTIVEMQ_MSGS row as ActiveMQ writes it (its addMessage statement): ID
// from a sequence started at the highest ID and LAST_ACKED_ID found when
// the store opens (ActiveMQ's sequence generator), CONTAINER the
// destination's qualified name (queue://orders), MSGID_PROD and
// MSGID_SEQ the parts of its message id, MSG the OpenWire-marshalled
// message (protocols/openwire/marshal's store form, as KahaDB keeps it),
// XID null (set for a prepared XA transaction's sends and acks as
// ActiveMQ sets it: xa.go). A durable subscription on a topic also has
// ActiveMQ's ACTIVEMQ_ACKS row (priority 0, LAST_ACKED_ID the last id
// when it was made); a wildcard one a row per topic it matched, made
// with the first message it stores on the topic (SUB_DEST the pattern),
// as ActiveMQ keeps them.
//
// What ActiveMQ's tables cannot hold is in Wharf's own, beside them
// (same prefix): WHARF_MSGS (per message: the engine's shard and
// destination-local sequence, its size and stored redelivery counter),
// WHARF_WAITS (per topic message: the subscriptions that have not yet
// acknowledged it), WHARF_DESTS (destinations, also empty ones),
// WHARF_SUBS (the subscription records: destination, selector, noLocal),
// WHARF_MARKS (delivery marks), WHARF_JOBS (scheduled jobs, which
// ActiveMQ keeps in a separate KahaDB scheduler store), WHARF_TXS
// (prepared XA transactions) and WHARF_META (the shard count). The rows
// of WHARF_MSGS and WHARF_WAITS reference ACTIVEMQ_MSGS.ID with ON
// DELETE CASCADE: they go with the message, whoever deletes it.
//
// Shards. Every shard's rows are in the same tables, told apart by
// Wharf's SHARD column; the shard count is recorded and a different one
// refused (ErrShardCount), as the other stores refuse it.
//
// Writes. An Apply is one pgx batch of prepared statements (pgx prepares
// each once per connection), sent in one round trip and run by
// PostgreSQL as one implicit transaction: a shard batch is one database
// transaction, committed once (the group commit: engine.Syncer, the
// engine gathers the batches that arrive while one commits). A batch
// that fails (a duplicate add, a lost connection) is rolled back whole
// by the database and the shard's index is read back from it.
// ApplyNoSync (engine.NoSyncApplier) turns synchronous_commit off for
// its own transaction (set_config's local setting, first in the batch).
//
// Index. What a shard needs in memory to apply operations: its
// destinations, subscription records, delivery marks, prepared XIDs and,
// per stored topic message, its ID and who still needs it. Queue
// messages are not in memory; a remove names one by (shard, container,
// seq) through WHARF_MSGS's unique index.
//
// Lock. With Options.Locker the store takes ActiveMQ's lock before it
// reads anything (lock.go): LockDatabase as DefaultDatabaseLocker (SELECT
// ... FOR UPDATE of the ACTIVEMQ_LOCK row in a transaction a connection
// of its own keeps open), LockLease as LeaseDatabaseLocker (the row's
// BROKER_NAME and TIME: holder and end of the lease, renewed every
// LockKeepAlivePeriod). A broker whose lock is taken waits in Open. Every
// batch starts with a statement that fails it (division by zero) unless
// the lock is still this broker's; after that, or a renewal that finds
// another holder, every Apply fails with ErrLockLost.
//
// ActiveMQ. Rows ActiveMQ wrote are adopted when a shard opens
// (adopt.go); the shard keeps ActiveMQ's LAST_ACKED_ID of its
// subscriptions up to date at close and every CleanupPeriod (syncAcks),
// so that either broker can take the database over from the other.
//
// Recovery reads each destination's messages in sequence order (add
// order) a page at a time (PageSize rows, keyset paging on the
// sequence), and RecoverStubs (engine.MessageLoader) reads no MSG at all:
// priority, expiration, size and redelivery counter come from the
// columns, the body from LoadMessage when a consumer needs it.
package jdbc
