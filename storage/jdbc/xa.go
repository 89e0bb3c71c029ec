package jdbc

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/openwire/wire"
	"wharf/storage/internal/records"
)

// Prepared XA transactions in ActiveMQ's tables, as ActiveMQ 5.17's
// JdbcMemoryTransactionStore.prepare and DefaultJDBCAdapter write them:
//
//   - a send of the transaction is an ACTIVEMQ_MSGS row whose XID is the
//     encoded Xid with '+' as its first byte (doAddMessage), its MSG
//     carrying the XATransactionId (ActiveMQ's recoverAdd finds the
//     transaction by the message's own TransactionId);
//   - a queue message it acknowledged keeps its row, XID set to the
//     encoded Xid with '-' first (doRemoveMessage: updateXidFlag);
//   - a durable subscription's acknowledgement sets XID of the
//     subscription's ACTIVEMQ_ACKS rows to the encoded Xid with bytes
//     1..8 the ID acknowledged up to and byte 9 the priority
//     (doSetLastAck: updateDurableLastAckInTx).
//
// The encoded Xid is XATransactionId.getEncodedXidBytes: 10 bytes of
// prefix (the flag, then ActiveMQ's scratch space), formatId (4 bytes),
// the global id's length (2 bytes), the global id, the branch
// qualifier; the column holds it in standard base64 (printBase64Binary).
// ActiveMQ's queries of pending messages skip rows whose XID is set; its
// recovery (doRecoverPreparedOps) reads them back into prepared
// transactions, its commit clears the flags ("SET XID = NULL, ID = ?"
// for a send, DELETE for an ack, LAST_ACKED_ID for a subscription) and
// its rollback deletes the sends and clears the rest.
//
// Wharf keeps its own record of the transaction (WHARF_TXS, what it
// recovers from) and writes ActiveMQ's rows beside it, so that ActiveMQ
// taking the database over finds the transaction in doubt; a Wharf
// commit or rollback removes the rows its prepare flagged (the engine's
// operations after the commit add and remove the messages as any
// others). When a shard opens, transactions ActiveMQ prepared become
// WHARF_TXS records (adoptTxs), and a WHARF_TXS record whose flagged rows
// are all gone was finished by ActiveMQ and goes.

const xidPrefix = 10

// The flag bytes of an ACTIVEMQ_MSGS row's XID: a pending send, a
// pending acknowledgement.
const (
	xidAdd = '+'
	xidAck = '-'
)

// encodeXID is the XID column ActiveMQ writes for x: flag first, then
// lastAck and priority (for an ACTIVEMQ_ACKS row; zero otherwise).
func encodeXID(flag byte, x engine.XID, lastAck int64, priority byte) string {
	b := make([]byte, xidPrefix, xidPrefix+6+len(x.GlobalID)+len(x.Branch))
	b[0] = flag
	binary.BigEndian.PutUint64(b[1:], uint64(lastAck))
	b[9] = priority
	b = binary.BigEndian.AppendUint32(b, uint32(x.FormatID))
	b = binary.BigEndian.AppendUint16(b, uint16(len(x.GlobalID)))
	b = append(b, x.GlobalID...)
	b = append(b, x.Branch...)
	return base64.StdEncoding.EncodeToString(b)
}

// wharfMark is what Wharf writes in ActiveMQ's scratch bytes (1..9) of
// an ACTIVEMQ_MSGS row's XID: "wharf" and the shard's index (2 bytes),
// so that a pending send, which has no WHARF_MSGS row, is found by the
// shard that wrote it (the shares of one XID on two shards are
// otherwise the same string). ActiveMQ reads past those bytes
// (XATransactionId(byte[]) skips the prefix; its recoverAdd takes the
// transaction from the message).
const wharfMark = "wharf"

// encodeMsgXID is the XID column of an ACTIVEMQ_MSGS row shard sh flags.
func encodeMsgXID(flag byte, x engine.XID, sh int) string {
	var scratch [8]byte
	copy(scratch[:], wharfMark)
	binary.BigEndian.PutUint16(scratch[5:], uint16(sh))
	return encodeXID(flag, x, int64(binary.BigEndian.Uint64(scratch[:])), 0)
}

// decodedXID is an XID column read back.
type decodedXID struct {
	xid      engine.XID
	flag     byte
	lastAck  int64 // ACTIVEMQ_ACKS rows
	priority byte
}

// wharfShard is the shard that wrote an ACTIVEMQ_MSGS row's XID
// (encodeMsgXID), or -1 when ActiveMQ wrote it.
func (d decodedXID) wharfShard() int {
	var scratch [8]byte
	binary.BigEndian.PutUint64(scratch[:], uint64(d.lastAck))
	if string(scratch[:len(wharfMark)]) != wharfMark {
		return -1
	}
	return int(binary.BigEndian.Uint16(scratch[5:]))
}

func decodeXID(s string) (decodedXID, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return decodedXID{}, fmt.Errorf("%w: XID %q: %w", ErrCorrupt, s, err)
	}
	if len(b) < xidPrefix+6 {
		return decodedXID{}, fmt.Errorf("%w: XID %q: %d bytes", ErrCorrupt, s, len(b))
	}
	d := decodedXID{flag: b[0], lastAck: int64(binary.BigEndian.Uint64(b[1:])), priority: b[9]}
	d.xid.FormatID = int32(binary.BigEndian.Uint32(b[xidPrefix:]))
	n := int(binary.BigEndian.Uint16(b[xidPrefix+4:]))
	rest := b[xidPrefix+6:]
	if n > len(rest) {
		return decodedXID{}, fmt.Errorf("%w: XID %q: global id of %d bytes in %d", ErrCorrupt, s, n, len(rest))
	}
	d.xid.GlobalID, d.xid.Branch = rest[:n:n], rest[n:]
	return d, nil
}

// txRows are the rows of ActiveMQ's tables a prepared transaction
// flagged: ACTIVEMQ_MSGS rows by ID (its sends, and the acknowledged
// messages found when the shard opened), acknowledged queue messages by
// sequence (flagged by this run's prepare), subscriptions' ACTIVEMQ_ACKS
// rows.
type txRows struct {
	ids   []int64
	qacks []txQAck
	subs  []txSub
}

type txQAck struct {
	container string
	seq       int64
}

type txSub struct{ container, client, name string }

// frameInTx is the stored frame of m with TransactionId x, what
// ActiveMQ's recovery of a pending send reads the transaction from.
func frameInTx(m *message.Message, x engine.XID) ([]byte, error) {
	f, err := records.MarshalMessage(m)
	if err != nil {
		return nil, err
	}
	w, err := records.UnmarshalFrame(f)
	if err != nil {
		return nil, err
	}
	if t, ok := w.TransactionId.(*wire.XATransactionId); ok && t.FormatId == x.FormatID &&
		string(t.GlobalTransactionId) == string(x.GlobalID) && string(t.BranchQualifier) == string(x.Branch) {
		return f, nil
	}
	w.TransactionId = &wire.XATransactionId{FormatId: x.FormatID, GlobalTransactionId: x.GlobalID, BranchQualifier: x.Branch}
	return wire.Marshal(w, wire.StoreFormat())
}

// prepareRows queues ActiveMQ's rows of prepared transaction tx into b
// and returns what they flag.
func (ss *shardStore) prepareRows(b *batch, tx *engine.PreparedTx) (*txRows, error) {
	st, t, sh := &ss.store.st, ss.store.t, ss.index
	rows := &txRows{}
	plus := encodeMsgXID(xidAdd, tx.XID, sh)
	for _, m := range tx.Adds {
		frame, err := frameInTx(m, tx.XID)
		if err != nil {
			return nil, fmt.Errorf("encode message %s: %w", m.ID, err)
		}
		id := ss.store.nextID()
		rows.ids = append(rows.ids, id)
		prod, pseq := producerKey(m.ID)
		b.q(st.addMessage, id, prod, pseq, m.Destination.String(), m.Expiration, int64(m.Priority), frame, plus)
	}
	minus := encodeMsgXID(xidAck, tx.XID, sh)
	last := map[engine.TxAck]int64{} // per subscription and topic (Seq 0): the highest ID
	for _, a := range tx.Acks {
		d := ss.dests[a.Dest]
		if d == nil {
			continue
		}
		if !d.topic {
			rows.qacks = append(rows.qacks, txQAck{d.container, int64(a.Seq)})
			b.q("UPDATE "+t.msgs+" SET XID=$4 WHERE ID = (SELECT ID FROM "+t.wmsgs+" WHERE SHARD=$1 AND CONTAINER=$2 AND SEQ=$3)", sh, d.container, int64(a.Seq), minus)
			continue
		}
		if tm := d.msgs[a.Seq]; tm != nil {
			k := engine.TxAck{Dest: a.Dest, Sub: a.Sub}
			last[k] = max(last[k], tm.id)
		}
	}
	for k, id := range last {
		// ActiveMQ's last ack: everything up to id, at priority 0 (the
		// rows Wharf writes are priority 0, no prioritized messages).
		v := encodeXID(xidAck, tx.XID, id, 0)
		rows.subs = append(rows.subs, txSub{k.Dest.String(), k.Sub.ClientID, k.Sub.Name})
		b.q("UPDATE "+t.acks+" SET XID=$1 WHERE CONTAINER=$2 AND CLIENT_ID=$3 AND SUB_NAME=$4", v, k.Dest.String(), k.Sub.ClientID, k.Sub.Name)
	}
	return rows, nil
}

// endRows queues the end of what rows flagged: the pending sends go (a
// commit's follow as the engine's own adds), the flags are cleared.
func (ss *shardStore) endRows(b *batch, rows *txRows) {
	if rows == nil {
		return
	}
	t := ss.store.t
	if len(rows.ids) > 0 {
		b.q("DELETE FROM "+t.msgs+" WHERE ID = ANY($1) AND XID LIKE 'K%'", rows.ids) // '+'
		b.q("UPDATE "+t.msgs+" SET XID = NULL WHERE ID = ANY($1)", rows.ids)
	}
	for _, a := range rows.qacks {
		b.q("UPDATE "+t.msgs+" SET XID = NULL WHERE ID = (SELECT ID FROM "+t.wmsgs+" WHERE SHARD=$1 AND CONTAINER=$2 AND SEQ=$3)", ss.index, a.container, a.seq)
	}
	for _, k := range rows.subs {
		b.q("UPDATE "+t.acks+" SET XID = NULL WHERE CONTAINER=$1 AND CLIENT_ID=$2 AND SUB_NAME=$3", k.container, k.client, k.name)
	}
}

// flaggedRow is one row of ActiveMQ's tables with its XID set, in a
// container of this shard.
type flaggedRow struct {
	col       string
	x         decodedXID
	id        int64
	container string
	msg       []byte
	client    string
	sub       string
}

// readFlagged reads the rows of ActiveMQ's tables with XID set in
// containers the shard owns (mine), decoded. A row whose XID does not
// decode is logged and left alone.
func (ss *shardStore) readFlagged(ctx context.Context) ([]flaggedRow, error) {
	t, q := ss.store.t, ss.store.pool
	var out []flaggedRow
	// Whose a row is: the shard of its WHARF_MSGS row (an acknowledged
	// message), else the shard its XID names (a send Wharf prepared),
	// else, for an ACTIVEMQ_ACKS row, the shard holding the
	// subscription's record, else the shard its container is placed on.
	keep := func(f flaggedRow, shard *int32, isMsg bool) {
		x, err := decodeXID(f.col)
		if err != nil {
			ss.log.Warn("row of a prepared transaction not understood, left alone", "container", f.container, "err", err)
			return
		}
		owner := -1
		switch {
		case shard != nil:
			owner = int(*shard)
		case isMsg && x.wharfShard() >= 0:
			owner = x.wharfShard()
		case ss.owns(f.container):
			owner = ss.index
		}
		if owner != ss.index {
			return
		}
		f.x = x
		out = append(out, f)
	}
	if err := queryRows(ctx, q, "SELECT m.ID, m.XID, m.CONTAINER, m.MSG, w.SHARD FROM "+t.msgs+" m LEFT JOIN "+t.wmsgs+" w ON w.ID = m.ID WHERE m.XID IS NOT NULL ORDER BY m.ID", nil, func(r pgx.Rows) error {
		var f flaggedRow
		var shard *int32
		if err := r.Scan(&f.id, &f.col, &f.container, &f.msg, &shard); err != nil {
			return err
		}
		keep(f, shard, true)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := queryRows(ctx, q, "SELECT a.XID, a.CONTAINER, a.CLIENT_ID, a.SUB_NAME, (SELECT MIN(s.SHARD) FROM "+t.subs+" s WHERE s.CLIENT_ID = a.CLIENT_ID AND s.SUB_NAME = a.SUB_NAME AND s.SUB_DEST = a.CONTAINER)"+
		" FROM "+t.acks+" a WHERE a.XID IS NOT NULL", nil, func(r pgx.Rows) error {
		f := flaggedRow{id: -1}
		var shard *int32
		if err := r.Scan(&f.col, &f.container, &f.client, &f.sub, &shard); err != nil {
			return err
		}
		keep(f, shard, false)
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// adoptTxs runs in adopt's transaction, after the messages were
// adopted: every prepared transaction whose rows ActiveMQ flagged in the
// shard's containers and that WHARF_TXS does not hold for the shard
// becomes a WHARF_TXS record (its sends from the '+' rows, its acks the
// '-' rows' messages and the subscriptions' waiting messages up to the
// last ack), and a WHARF_TXS record that flagged rows when prepared but
// finds none now was finished by ActiveMQ: it goes.
func (ss *shardStore) adoptTxs(ctx context.Context) error {
	s, t, sh := ss.store, ss.store.t, ss.index
	tx := s.pool
	flagged, err := ss.readFlagged(ctx)
	if err != nil {
		return err
	}
	held := map[string]*engine.PreparedTx{}
	if err := queryRows(ctx, tx, "SELECT XID, DATA FROM "+t.txs+" WHERE SHARD=$1", []any{sh}, func(r pgx.Rows) error {
		var k string
		var v []byte
		if err := r.Scan(&k, &v); err != nil {
			return err
		}
		p, err := records.DecodeTx(v)
		if err != nil {
			return err
		}
		held[k] = p
		return nil
	}); err != nil {
		return err
	}
	present := map[string]bool{}
	found := map[string]*engine.PreparedTx{}
	var order []string
	for _, f := range flagged {
		key := f.x.xid.String()
		present[key] = true
		if held[key] != nil {
			continue
		}
		p := found[key]
		if p == nil {
			p = &engine.PreparedTx{XID: f.x.xid}
			found[key] = p
			order = append(order, key)
		}
		d := message.ParseQualified(f.container, message.Queue)
		switch {
		case f.id >= 0 && f.x.flag == xidAdd:
			m, err := decodeStored(f.msg, d, 0)
			if err != nil {
				ss.log.Warn("pending send of a prepared transaction skipped", "xid", key, "id", f.id, "err", err)
				continue
			}
			p.Adds = append(p.Adds, m)
		case f.id >= 0:
			var seq int64
			if err := tx.QueryRow(ctx, "SELECT SEQ FROM "+t.wmsgs+" WHERE ID=$1", f.id).Scan(&seq); err != nil {
				return fmt.Errorf("acknowledgement of message %d in prepared transaction %s: %w", f.id, key, err)
			}
			p.Acks = append(p.Acks, engine.TxAck{Dest: d, Seq: uint64(seq)})
		default:
			k := engine.SubKey{ClientID: f.client, Name: f.sub}
			if err := queryRows(ctx, tx, "SELECT w.SEQ FROM "+t.waits+" x JOIN "+t.wmsgs+" w ON w.ID = x.ID WHERE w.SHARD=$1 AND w.CONTAINER=$2"+
				" AND x.CLIENT_ID=$3 AND x.SUB_NAME=$4 AND x.ID <= $5 ORDER BY w.SEQ", []any{sh, f.container, f.client, f.sub, f.x.lastAck}, func(r pgx.Rows) error {
				var seq int64
				if err := r.Scan(&seq); err != nil {
					return err
				}
				a := engine.TxAck{Dest: d, Seq: uint64(seq), Sub: k}
				if !slices.Contains(p.Acks, a) {
					p.Acks = append(p.Acks, a)
				}
				return nil
			}); err != nil {
				return err
			}
		}
	}
	var b pgx.Batch
	for _, key := range order {
		v, err := records.EncodeTx(found[key])
		if err != nil {
			return err
		}
		b.Queue(s.st.putTx, sh, key, v)
		ss.log.Info("prepared XA transaction adopted from ActiveMQ's rows", "xid", key, "sends", len(found[key].Adds), "acks", len(found[key].Acks))
	}
	for key, p := range held {
		if present[key] || !flags(p) {
			continue
		}
		b.Queue(s.st.removeTx, sh, key)
		ss.log.Info("prepared XA transaction finished by ActiveMQ, forgotten", "xid", key)
	}
	if b.Len() == 0 {
		return nil
	}
	return tx.SendBatch(ctx, &b).Close()
}

// flags tells whether prepareRows flags any row for p: a send or an
// acknowledgement (of a queue message: its row; of a topic message: the
// subscription's row of the topic, which its first message there made).
// A transaction that flags nothing cannot be seen finished by its rows.
func flags(p *engine.PreparedTx) bool {
	return len(p.Adds) > 0 || len(p.Acks) > 0
}

// owns tells whether container c is one of the shard's destinations
// (engine.ShardIndex; temporary destinations are nobody's).
func (ss *shardStore) owns(c string) bool {
	d := message.ParseQualified(c, message.Queue)
	return !d.Type.IsTemp() && engine.ShardIndex(d, ss.count) == ss.index
}

// loadTxRows fills the shard's prepared transactions with the XID values
// of the rows they flagged.
func (ss *shardStore) loadTxRows(ctx context.Context) error {
	flagged, err := ss.readFlagged(ctx)
	if err != nil {
		return err
	}
	for _, f := range flagged {
		r := ss.txs[f.x.xid.String()]
		switch {
		case r == nil:
		case f.id >= 0:
			r.ids = append(r.ids, f.id)
		default:
			r.subs = append(r.subs, txSub{f.container, f.client, f.sub})
		}
	}
	return nil
}
