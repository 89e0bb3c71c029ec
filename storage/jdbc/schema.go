package jdbc

import "strings"

// tables are the table names of one store: ActiveMQ's three, as its
// Statements class names them (tablePrefix + ACTIVEMQ_MSGS, ACTIVEMQ_ACKS,
// ACTIVEMQ_LOCK), and Wharf's own, which hold what ActiveMQ's do not
// (the engine's per-destination sequence and shard of each message, the
// subscriptions each topic message still waits for, delivery marks,
// destinations without messages, scheduled jobs and prepared XA
// transactions).
type tables struct {
	msgs, acks, lock                                   string
	wmsgs, waits, dests, subs, marks, jobs, txs, wmeta string
}

func newTables(prefix string) tables {
	return tables{
		msgs: prefix + "ACTIVEMQ_MSGS", acks: prefix + "ACTIVEMQ_ACKS", lock: prefix + "ACTIVEMQ_LOCK",
		wmsgs: prefix + "WHARF_MSGS", waits: prefix + "WHARF_WAITS", dests: prefix + "WHARF_DESTS",
		subs: prefix + "WHARF_SUBS", marks: prefix + "WHARF_MARKS", jobs: prefix + "WHARF_JOBS",
		txs: prefix + "WHARF_TXS", wmeta: prefix + "WHARF_META",
	}
}

// activemqSchema is what ActiveMQ 5.17's DefaultJDBCAdapter.doCreateTables
// runs, with PostgresqlJDBCAdapter's types (BYTEA for MSG) and its
// DROP CONSTRAINT for the acks' primary key: each statement on its own,
// a failure (a table that exists) ignored, as ActiveMQ does. Run in
// that order they give the tables ActiveMQ would have made, whatever
// they turn out to be on PostgreSQL.
func (t tables) activemqSchema() []string {
	return []string{
		"CREATE TABLE " + t.msgs + "(ID BIGINT NOT NULL, CONTAINER VARCHAR(250) NOT NULL, MSGID_PROD VARCHAR(250), MSGID_SEQ BIGINT, EXPIRATION BIGINT, MSG BYTEA, PRIMARY KEY ( ID ) )",
		"CREATE INDEX " + t.msgs + "_MIDX ON " + t.msgs + " (MSGID_PROD,MSGID_SEQ)",
		"CREATE INDEX " + t.msgs + "_CIDX ON " + t.msgs + " (CONTAINER)",
		"CREATE INDEX " + t.msgs + "_EIDX ON " + t.msgs + " (EXPIRATION)",
		"CREATE TABLE " + t.acks + "(CONTAINER VARCHAR(250) NOT NULL, SUB_DEST VARCHAR(250), CLIENT_ID VARCHAR(250) NOT NULL, SUB_NAME VARCHAR(250) NOT NULL, SELECTOR VARCHAR(250), LAST_ACKED_ID BIGINT, CONSTRAINT PK_ACTIVEMQ_ACKS PRIMARY KEY ( CONTAINER, CLIENT_ID, SUB_NAME))",
		"ALTER TABLE " + t.msgs + " ADD PRIORITY BIGINT",
		"CREATE INDEX " + t.msgs + "_PIDX ON " + t.msgs + " (PRIORITY)",
		"ALTER TABLE " + t.msgs + " ADD XID VARCHAR(250)",
		"ALTER TABLE " + t.acks + " ADD PRIORITY BIGINT DEFAULT 5 NOT NULL",
		"ALTER TABLE " + t.acks + " ADD XID VARCHAR(250)",
		"ALTER TABLE " + t.acks + " DROP CONSTRAINT \"activemq_acks_pkey\"",
		"ALTER TABLE " + t.acks + " ADD PRIMARY KEY (CONTAINER, CLIENT_ID, SUB_NAME, PRIORITY)",
		"CREATE INDEX " + t.msgs + "_XIDX ON " + t.msgs + " (XID)",
		"CREATE INDEX " + t.acks + "_XIDX ON " + t.acks + " (XID)",
		"CREATE INDEX " + t.msgs + "_IIDX ON " + t.msgs + " (ID ASC, XID, CONTAINER)",
		// Statements.getCreateLockSchemaStatements.
		"CREATE TABLE " + t.lock + "( ID BIGINT NOT NULL, TIME BIGINT, BROKER_NAME VARCHAR(250), PRIMARY KEY (ID) )",
		"INSERT INTO " + t.lock + "(ID) VALUES (1)",
	}
}

// wharfSchema creates Wharf's tables. A row of WHARF_MSGS and the
// WHARF_WAITS rows of a message go with its ACTIVEMQ_MSGS row (ON DELETE
// CASCADE), also when ActiveMQ deletes it, and follow it when ActiveMQ
// renumbers it (an XA commit's "SET XID = NULL, ID = ?": ON UPDATE
// CASCADE).
func (t tables) wharfSchema() []string {
	fk := " REFERENCES " + t.msgs + "(ID) ON DELETE CASCADE ON UPDATE CASCADE"
	return []string{
		"CREATE TABLE IF NOT EXISTS " + t.wmeta + " (NAME VARCHAR(64) NOT NULL PRIMARY KEY, VALUE TEXT NOT NULL)",
		"CREATE TABLE IF NOT EXISTS " + t.wmsgs + " (ID BIGINT NOT NULL PRIMARY KEY" + fk + ", SHARD INT NOT NULL, CONTAINER VARCHAR(250) NOT NULL, SEQ BIGINT NOT NULL, SIZE INT NOT NULL, REDELIVERIES INT NOT NULL, UNIQUE (SHARD, CONTAINER, SEQ))",
		"CREATE TABLE IF NOT EXISTS " + t.waits + " (ID BIGINT NOT NULL" + fk + ", CLIENT_ID VARCHAR(250) NOT NULL, SUB_NAME VARCHAR(250) NOT NULL, PRIMARY KEY (ID, CLIENT_ID, SUB_NAME))",
		"CREATE TABLE IF NOT EXISTS " + t.dests + " (SHARD INT NOT NULL, CONTAINER VARCHAR(250) NOT NULL, PRIMARY KEY (SHARD, CONTAINER))",
		"CREATE TABLE IF NOT EXISTS " + t.subs + " (SHARD INT NOT NULL, CLIENT_ID VARCHAR(250) NOT NULL, SUB_NAME VARCHAR(250) NOT NULL, SUB_DEST VARCHAR(250) NOT NULL, SELECTOR TEXT, NO_LOCAL BOOLEAN NOT NULL, PRIMARY KEY (SHARD, CLIENT_ID, SUB_NAME))",
		"CREATE TABLE IF NOT EXISTS " + t.marks + " (SHARD INT NOT NULL, CLIENT_ID VARCHAR(250) NOT NULL, SUB_NAME VARCHAR(250) NOT NULL, CONTAINER VARCHAR(250) NOT NULL, SEQ BIGINT NOT NULL, PRIMARY KEY (SHARD, CLIENT_ID, SUB_NAME, CONTAINER))",
		"CREATE TABLE IF NOT EXISTS " + t.jobs + " (SHARD INT NOT NULL, JOB_ID TEXT NOT NULL, DATA BYTEA NOT NULL, PRIMARY KEY (SHARD, JOB_ID))",
		"CREATE TABLE IF NOT EXISTS " + t.txs + " (SHARD INT NOT NULL, XID TEXT NOT NULL, DATA BYTEA NOT NULL, PRIMARY KEY (SHARD, XID))",
	}
}

// all lists every table, for the check of createTablesOnStartup="false".
func (t tables) all() []string {
	return []string{t.msgs, t.acks, t.lock, t.wmeta, t.wmsgs, t.waits, t.dests, t.subs, t.marks, t.jobs, t.txs}
}

// regclass is the name to_regclass looks a table up by: PostgreSQL
// folds the unquoted names ActiveMQ uses to lower case.
func regclass(name string) string { return strings.ToLower(name) }

// statements are the prepared statements of a store (pgx prepares each
// once per connection and reuses it: QueryExecModeCacheStatement).
type statements struct {
	// ActiveMQ's, as its Statements class writes them.
	addMessage    string // getAddMessageStatement
	removeMessage string // getRemoveMessageStatement
	updateMSG     string // getUpdateMessageStatement, by ID
	findMessage   string // getFindMessageByIdStatement, with CONTAINER
	lastMsgID     string // getFindLastSequenceIdInMsgsStatement
	lastAckID     string // getFindLastSequenceIdInAcksStatement
	createSub     string // getCreateDurableSubStatement
	deleteSub     string // getDeleteSubscriptionStatement
	// A wildcard subscription's rows: one per topic (createWildSub:
	// getCreateDurableSubStatement, unless the row exists), all by
	// SUB_DEST.
	createWildSub, deleteWildSub string

	// Wharf's.
	addWMsg, removeBySeq, updateRedeliveries, removeDestMsgs     string
	addWait, removeWait, removeSubWaits                          string
	addDest, removeDest                                          string
	putSub, deleteWSub, deleteTopicSubs, putMark, deleteSubMarks string
	deleteDestMarks, putJob, removeJob, putTx, removeTx          string
	deleteMsgs                                                   string
}

func newStatements(t tables) statements {
	return statements{
		addMessage:    "INSERT INTO " + t.msgs + "(ID, MSGID_PROD, MSGID_SEQ, CONTAINER, EXPIRATION, PRIORITY, MSG, XID) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
		removeMessage: "DELETE FROM " + t.msgs + " WHERE ID=$1",
		updateMSG:     "UPDATE " + t.msgs + " SET MSG=$1 WHERE ID=$2",
		findMessage:   "SELECT MSG, CONTAINER FROM " + t.msgs + " WHERE ID=$1",
		lastMsgID:     "SELECT MAX(ID) FROM " + t.msgs,
		lastAckID:     "SELECT MAX(LAST_ACKED_ID) FROM " + t.acks,
		createSub:     "INSERT INTO " + t.acks + "(CONTAINER, CLIENT_ID, SUB_NAME, SELECTOR, LAST_ACKED_ID, SUB_DEST, PRIORITY) VALUES ($1, $2, $3, $4, $5, $6, $7)",
		deleteSub:     "DELETE FROM " + t.acks + " WHERE CONTAINER=$1 AND CLIENT_ID=$2 AND SUB_NAME=$3",
		createWildSub: "INSERT INTO " + t.acks + "(CONTAINER, CLIENT_ID, SUB_NAME, SELECTOR, LAST_ACKED_ID, SUB_DEST, PRIORITY) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
		deleteWildSub: "DELETE FROM " + t.acks + " WHERE SUB_DEST=$1 AND CLIENT_ID=$2 AND SUB_NAME=$3",

		addWMsg:            "INSERT INTO " + t.wmsgs + " (ID, SHARD, CONTAINER, SEQ, SIZE, REDELIVERIES) VALUES ($1, $2, $3, $4, $5, $6)",
		removeBySeq:        "DELETE FROM " + t.msgs + " WHERE ID = (SELECT ID FROM " + t.wmsgs + " WHERE SHARD=$1 AND CONTAINER=$2 AND SEQ=$3)",
		updateRedeliveries: "UPDATE " + t.wmsgs + " SET REDELIVERIES=$4 WHERE SHARD=$1 AND CONTAINER=$2 AND SEQ=$3",
		removeDestMsgs:     "DELETE FROM " + t.msgs + " WHERE ID IN (SELECT ID FROM " + t.wmsgs + " WHERE SHARD=$1 AND CONTAINER=$2)",
		addWait:            "INSERT INTO " + t.waits + " (ID, CLIENT_ID, SUB_NAME) VALUES ($1, $2, $3)",
		removeWait:         "DELETE FROM " + t.waits + " WHERE ID=$1 AND CLIENT_ID=$2 AND SUB_NAME=$3",
		removeSubWaits:     "DELETE FROM " + t.waits + " WHERE CLIENT_ID=$2 AND SUB_NAME=$3 AND ID IN (SELECT ID FROM " + t.wmsgs + " WHERE SHARD=$1)",
		addDest:            "INSERT INTO " + t.dests + " (SHARD, CONTAINER) VALUES ($1, $2) ON CONFLICT DO NOTHING",
		removeDest:         "DELETE FROM " + t.dests + " WHERE SHARD=$1 AND CONTAINER=$2",
		putSub: "INSERT INTO " + t.subs + " (SHARD, CLIENT_ID, SUB_NAME, SUB_DEST, SELECTOR, NO_LOCAL) VALUES ($1, $2, $3, $4, $5, $6)" +
			" ON CONFLICT (SHARD, CLIENT_ID, SUB_NAME) DO UPDATE SET SUB_DEST=EXCLUDED.SUB_DEST, SELECTOR=EXCLUDED.SELECTOR, NO_LOCAL=EXCLUDED.NO_LOCAL",
		deleteWSub:      "DELETE FROM " + t.subs + " WHERE SHARD=$1 AND CLIENT_ID=$2 AND SUB_NAME=$3",
		deleteTopicSubs: "DELETE FROM " + t.subs + " WHERE SHARD=$1 AND SUB_DEST=$2",
		putMark: "INSERT INTO " + t.marks + " (SHARD, CLIENT_ID, SUB_NAME, CONTAINER, SEQ) VALUES ($1, $2, $3, $4, $5)" +
			" ON CONFLICT (SHARD, CLIENT_ID, SUB_NAME, CONTAINER) DO UPDATE SET SEQ=GREATEST(" + t.marks + ".SEQ, EXCLUDED.SEQ)",
		deleteSubMarks:  "DELETE FROM " + t.marks + " WHERE SHARD=$1 AND CLIENT_ID=$2 AND SUB_NAME=$3",
		deleteDestMarks: "DELETE FROM " + t.marks + " WHERE SHARD=$1 AND CONTAINER=$2",
		putJob:          "INSERT INTO " + t.jobs + " (SHARD, JOB_ID, DATA) VALUES ($1, $2, $3) ON CONFLICT (SHARD, JOB_ID) DO UPDATE SET DATA=EXCLUDED.DATA",
		removeJob:       "DELETE FROM " + t.jobs + " WHERE SHARD=$1 AND JOB_ID=$2",
		putTx:           "INSERT INTO " + t.txs + " (SHARD, XID, DATA) VALUES ($1, $2, $3)",
		removeTx:        "DELETE FROM " + t.txs + " WHERE SHARD=$1 AND XID=$2",
		deleteMsgs:      "DELETE FROM " + t.msgs + " WHERE ID = ANY($1)",
	}
}
