package engine_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
	"wharf/storage/memory"
)

// XA transactions prepared through the engine, over a real KahaDB store
// (fsynced journal) and over the memory store, across restarts.

type xaEnv struct {
	t      *testing.T
	dir    string
	kaha   *kahadb.Store
	mem    engine.Store
	e      *engine.Engine
	shards int
}

func newXAEnv(t *testing.T, kind string) *xaEnv {
	v := &xaEnv{t: t, dir: t.TempDir(), shards: 4}
	if kind == "memory" {
		v.mem = memory.New()
	}
	v.open()
	t.Cleanup(v.close)
	return v
}

func (v *xaEnv) open() {
	v.t.Helper()
	var st engine.Store = v.mem
	if v.mem == nil {
		k, err := kahadb.Open(context.Background(), kahadb.Options{Dir: v.dir, EnableJournalDiskSyncs: true})
		if err != nil {
			v.t.Fatal(err)
		}
		v.kaha, st = k, k
	}
	e, err := engine.New(engine.Options{Shards: v.shards, Store: st, TickInterval: time.Hour})
	if err != nil {
		v.t.Fatal(err)
	}
	v.e = e
}

func (v *xaEnv) close() {
	v.t.Helper()
	if v.e != nil {
		if err := v.e.Close(); err != nil {
			v.t.Error(err)
		}
		v.e = nil
	}
	if v.kaha != nil {
		if err := v.kaha.Close(); err != nil {
			v.t.Error(err)
		}
		v.kaha = nil
	}
}

func (v *xaEnv) restart() {
	v.t.Helper()
	v.close()
	v.open()
}

func (v *xaEnv) conn(clientID string) *engine.Conn {
	v.t.Helper()
	c, err := v.e.Connect(engine.Credentials{ClientID: clientID, Protocol: "test"})
	if err != nil {
		v.t.Fatal(err)
	}
	return c
}

func testXID(n byte) engine.XID {
	return engine.XID{FormatID: 131077, GlobalID: []byte{0xca, 0xfe, n}, Branch: []byte{1, n}}
}

func (v *xaEnv) wantPrepared(want ...engine.XID) {
	v.t.Helper()
	var got, w []string
	for _, x := range v.e.Prepared() {
		got = append(got, x.String())
	}
	for _, x := range want {
		w = append(w, x.String())
	}
	slices.Sort(got)
	slices.Sort(w)
	if !slices.Equal(got, w) {
		v.t.Fatalf("Prepared(): got %v, want %v", got, w)
	}
}

// prepareQueueTx: "acked" waits on queue q; a consumer receives it, and
// XA transaction x acknowledges it and sends "sent" to q and "other" to
// q2 (another shard, most likely), then is prepared; the consumer's
// connection closes.
func (v *xaEnv) prepareQueueTx(x engine.XID, q, q2 message.Destination) {
	t := v.t
	t.Helper()
	p := v.conn("")
	send(t, p, msg(q, "acked", true))
	c := v.conn("")
	s, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual})
	d := ch.recv(t)
	if body(d) != "acked" {
		t.Fatalf("received %q, want acked", body(d))
	}
	id := x.String()
	if err := c.Begin(id); err != nil {
		t.Fatal(err)
	}
	if err := c.Ack(s, d.ID, id); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*message.Message{msg(q, "sent", true), msg(q2, "other", true)} {
		if err := c.Send(m, id, nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	ro, err := c.Prepare(x)
	if err != nil || ro {
		t.Fatalf("Prepare: got read-only %v, error %v; want false, nil", ro, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	v.wantPrepared(x)
}

// expectNothing checks that a consumer of q gets nothing: the prepared
// transaction's ack and sends are held. q's size counts the held messages
// its ack took (still in the store, as ActiveMQ counts them), not its sends.
func (v *xaEnv) expectNothing(q message.Destination, held int64) {
	t := v.t
	t.Helper()
	c := v.conn("")
	defer c.Close()
	_, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual})
	st := v.e.Stats(q) // barrier: the subscription is attached and dispatched
	ch.none(t)
	if st.QueueSize != held {
		t.Fatalf("%s stats %+v: want QueueSize %d while the transaction is prepared", q, st, held)
	}
	b := v.conn("")
	defer b.Close()
	_, bch := sub(t, b, engine.SubSpec{Destination: q, Browser: true})
	if d := bch.recv(t); !d.BrowseEnd {
		t.Fatalf("browser got %q, want only the browse end", body(d))
	}
}

func xaKinds(t *testing.T, fn func(t *testing.T, v *xaEnv)) {
	for _, kind := range []string{"kahadb", "memory"} {
		t.Run(kind, func(t *testing.T) { fn(t, newXAEnv(t, kind)) })
	}
}

func TestEngineXAPreparedSurvivesRestartThenCommit(t *testing.T) {
	xaKinds(t, func(t *testing.T, v *xaEnv) {
		q, q2 := message.QueueDest("xa.q"), message.QueueDest("xa.q2")
		x := testXID(1)
		v.prepareQueueTx(x, q, q2)
		v.expectNothing(q, 1)
		v.restart()
		v.wantPrepared(x)
		v.expectNothing(q, 1)
		v.expectNothing(q2, 0)
		v.restart() // still in doubt after a second restart
		v.wantPrepared(x)

		c := v.conn("")
		if err := c.Commit(x.String()); err != nil {
			t.Fatalf("Commit of the recovered transaction: %v", err)
		}
		v.wantPrepared()
		v.restart()
		for _, want := range []struct {
			q    message.Destination
			body string
		}{{q, "sent"}, {q2, "other"}} {
			k := v.conn("")
			s, ch := sub(t, k, engine.SubSpec{Destination: want.q, AckMode: engine.AckIndividual})
			d := ch.recv(t)
			if body(d) != want.body || d.Redeliveries != 0 {
				t.Fatalf("%s: got %q (redeliveries %d), want %q, 0", want.q, body(d), d.Redeliveries, want.body)
			}
			if err := k.Ack(s, d.ID, ""); err != nil {
				t.Fatal(err)
			}
			v.e.Stats(want.q)
			ch.none(t) // "acked" is gone for good
			k.Close()
		}
		v.restart()
		v.wantPrepared()
		v.expectNothing(q, 0)
		v.expectNothing(q2, 0)
	})
}

func TestEngineXAPreparedSurvivesRestartThenRollback(t *testing.T) {
	xaKinds(t, func(t *testing.T, v *xaEnv) {
		q, q2 := message.QueueDest("xa.q"), message.QueueDest("xa.q2")
		x := testXID(2)
		v.prepareQueueTx(x, q, q2)
		v.restart()
		v.wantPrepared(x)
		k := v.conn("")
		_, ch := sub(t, k, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual})
		v.e.Stats(q)
		ch.none(t)
		if err := v.conn("").Rollback(x.String()); err != nil {
			t.Fatalf("Rollback of the recovered transaction: %v", err)
		}
		d := ch.recv(t)
		if body(d) != "acked" || d.Redeliveries < 1 {
			t.Fatalf("after rollback got %q redeliveries %d, want acked redelivered", body(d), d.Redeliveries)
		}
		v.e.Stats(q)
		ch.none(t) // "sent" was discarded
		v.wantPrepared()
		k.Close()
		v.restart()
		v.wantPrepared()
		v.expectNothing(q2, 0)
		k = v.conn("")
		_, ch = sub(t, k, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual})
		if d := ch.recv(t); body(d) != "acked" {
			t.Fatalf("after restart got %q, want acked", body(d))
		}
	})
}

// TestEngineXALiveCommitRollback: without a restart, from another
// connection than the one that prepared.
func TestEngineXALiveCommitRollback(t *testing.T) {
	xaKinds(t, func(t *testing.T, v *xaEnv) {
		q, q2 := message.QueueDest("xa.live"), message.QueueDest("xa.live2")
		x := testXID(3)
		v.prepareQueueTx(x, q, q2)
		v.expectNothing(q, 1)
		k := v.conn("")
		_, ch := sub(t, k, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual})
		if err := v.conn("").Commit(x.String()); err != nil {
			t.Fatal(err)
		}
		if d := ch.recv(t); body(d) != "sent" {
			t.Fatalf("after commit got %q, want sent", body(d))
		}
		v.e.Stats(q)
		ch.none(t)
		if err := v.conn("").Commit(x.String()); err == nil {
			t.Fatal("second Commit: got nil error, want unknown transaction")
		}
	})
}

// TestEngineXADurableSubscription: a prepared ack of a durable
// subscription's topic message holds it from that subscription only.
func TestEngineXADurableSubscription(t *testing.T) {
	for _, commit := range []bool{true, false} {
		xaKinds(t, func(t *testing.T, v *xaEnv) {
			topic := message.TopicDest("xa.news")
			spec := engine.SubSpec{Destination: topic, DurableName: "d", AckMode: engine.AckIndividual}
			c := v.conn("cid")
			_, _ = sub(t, c, spec)
			other := v.conn("cid2")
			_, _ = sub(t, other, spec)
			c.Close()
			other.Close()
			send(t, v.conn(""), msg(topic, "t1", true))
			c = v.conn("cid")
			s, ch := sub(t, c, spec)
			d := ch.recv(t)
			x := testXID(4)
			if err := c.Begin(x.String()); err != nil {
				t.Fatal(err)
			}
			if err := c.Ack(s, d.ID, x.String()); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Prepare(x); err != nil {
				t.Fatal(err)
			}
			c.Close()
			v.restart()
			v.wantPrepared(x)
			c = v.conn("cid")
			_, ch = sub(t, c, spec)
			v.e.Stats(topic)
			ch.none(t)
			// The other subscription still has its copy.
			o := v.conn("cid2")
			_, och := sub(t, o, spec)
			if d := och.recv(t); body(d) != "t1" {
				t.Fatalf("other subscription got %q, want t1", body(d))
			}
			o.Close()
			end := v.conn("").Rollback
			if commit {
				end = v.conn("").Commit
			}
			if err := end(x.String()); err != nil {
				t.Fatal(err)
			}
			if commit {
				v.e.Stats(topic)
				ch.none(t)
			} else if d := ch.recv(t); body(d) != "t1" || d.Redeliveries < 1 {
				t.Fatalf("after rollback got %q redeliveries %d, want t1 redelivered", body(d), d.Redeliveries)
			}
			c.Close()
			v.restart()
			c = v.conn("cid")
			_, ch = sub(t, c, spec)
			if commit {
				v.e.Stats(topic)
				ch.none(t)
			} else if d := ch.recv(t); body(d) != "t1" {
				t.Fatalf("after restart got %q, want t1", body(d))
			}
		})
	}
}

// TestEngineXACrash: the journal copied while the broker runs (no clean
// close, no checkpoint) recovers the prepared transaction.
func TestEngineXACrash(t *testing.T) {
	v := newXAEnv(t, "kahadb")
	q, q2 := message.QueueDest("xa.crash"), message.QueueDest("xa.crash2")
	x := testXID(5)
	v.prepareQueueTx(x, q, q2)
	crash := t.TempDir()
	copyDir(t, v.dir, crash)
	v.close()
	v.dir = crash
	v.open()
	v.wantPrepared(x)
	v.expectNothing(q, 1)
	if err := v.conn("").Commit(x.String()); err != nil {
		t.Fatal(err)
	}
	k := v.conn("")
	_, ch := sub(t, k, engine.SubSpec{Destination: q2, AckMode: engine.AckAuto})
	if d := ch.recv(t); body(d) != "other" {
		t.Fatalf("got %q, want other", body(d))
	}
}

func TestEngineXAEmptyIsReadOnly(t *testing.T) {
	v := newXAEnv(t, "memory")
	c := v.conn("")
	x := testXID(6)
	if err := c.Begin(x.String()); err != nil {
		t.Fatal(err)
	}
	ro, err := c.Prepare(x)
	if err != nil || !ro {
		t.Fatalf("Prepare of an empty transaction: got read-only %v, error %v; want true, nil", ro, err)
	}
	v.wantPrepared()
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if d.Name() == "lock" {
			return nil
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(dst)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}
