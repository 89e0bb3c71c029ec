package engine_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
)

// The scheduled jobs an operator lists come due first first, from every
// shard; removing one takes it off the store (gone after a restart) and
// it never fires.
func TestEngineAdminScheduledJobsListRemove(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			v := startOn(t, kind, withScheduler)
			p := v.conn("")
			// Destinations on different shards (4 of them): the list
			// gathers them all.
			for i, name := range []string{"jobs.a", "jobs.b", "jobs.c", "jobs.d"} {
				send(t, p, scheduledMsg(message.QueueDest(name), name, prop(engine.ScheduledDelay, message.LongValue(int64(40_000-i*10_000)))))
			}
			jobs := v.e.ScheduledJobList()
			var got []string
			for _, j := range jobs {
				got = append(got, string(j.Msg.Body))
			}
			if want := []string{"jobs.d", "jobs.c", "jobs.b", "jobs.a"}; !slices.Equal(got, want) {
				t.Fatalf("ScheduledJobList bodies %v, want %v (due first first)", got, want)
			}
			if err := v.e.RemoveScheduledJob(jobs[0].ID); err != nil {
				t.Fatalf("RemoveScheduledJob: %v", err)
			}
			if err := v.e.RemoveScheduledJob(jobs[0].ID); !errors.Is(err, engine.ErrNoSuchJob) {
				t.Fatalf("removing it again: %v, want ErrNoSuchJob", err)
			}
			v.restart()
			if n := len(v.e.ScheduledJobList()); n != 3 {
				t.Fatalf("jobs after a restart: %d, want 3", n)
			}
			v.advance(schedStart + 15*time.Second) // jobs.d's due time is past
			if st := v.barrier(message.QueueDest("jobs.d")); st.QueueSize != 0 {
				t.Fatalf("the removed job fired: %+v", st)
			}
			if st := v.barrier(message.QueueDest("jobs.c")); st.QueueSize != 0 {
				t.Fatalf("jobs.c fired before its time: %+v", st)
			}
		})
	}
}

// CloseConnection calls the closer the protocol registered, once; a
// connection without one and an unknown id are refused by name.
func TestEngineAdminCloseConnection(t *testing.T) {
	v := start(t, nil)
	c := v.conn("closable")
	bare := v.conn("bare")
	calls := 0
	c.SetCloser(func() { calls++; c.Close() })
	if err := v.e.CloseConnection(c.ID()); err != nil {
		t.Fatalf("CloseConnection: %v", err)
	}
	if calls != 1 {
		t.Fatalf("closer called %d times, want 1", calls)
	}
	for _, ci := range v.e.Connections() {
		if ci.ID == c.ID() {
			t.Fatalf("the closed connection is still listed: %+v", ci)
		}
	}
	if err := v.e.CloseConnection(c.ID()); !errors.Is(err, engine.ErrNoSuchConnection) {
		t.Fatalf("closing it again: %v, want ErrNoSuchConnection", err)
	}
	if err := v.e.CloseConnection(bare.ID()); !errors.Is(err, engine.ErrNotClosable) {
		t.Fatalf("closing a connection without a closer: %v, want ErrNotClosable", err)
	}
	if calls != 1 {
		t.Fatalf("closer called %d times, want 1", calls)
	}
}
