package engine

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"

	"wharf/engine/message"
)

// threadCPU is the CPU time (user and system, ns) of the calling OS
// thread (Linux RUSAGE_THREAD).
func threadCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1, &ru); err != nil { // RUSAGE_THREAD
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// lastSink keeps the id of the last delivery, for the benchmark's ack.
type lastSink struct{ id uint64 }

func (l *lastSink) Deliver(d Delivery) { l.id = d.ID }

// BenchmarkShardStatistics is the message path of one shard alone, with
// no other goroutine: each iteration is a turn that applies a send of a
// 1 KiB non-persistent message to a queue (dispatched at once to its
// consumer) and a turn that applies the consumer's ack, as the run loop
// would, reading the clock once per turn. It measures what the timing and
// size statistics (AverageEnqueueTime, AverageMessageSize ...) cost per
// message: stats=on keeps them, stats=off is <broker
// enableStatistics="false">. Issue 16 allows at most 3% and no allocation
// per message; compare with benchstat. (BenchmarkEngineStatistics is the
// same across goroutines, where scheduling noise hides a difference this
// small.)
func BenchmarkShardStatistics(b *testing.B) {
	b.Run("stats=on", func(b *testing.B) { benchShardPath(b, false) })
	b.Run("stats=off", func(b *testing.B) { benchShardPath(b, true) })
}

func benchShardPath(b *testing.B, disable bool) {
	e, err := newEngine(context.Background(), Options{Shards: 1, Store: nullStore{}, DisableAdvisories: true, DisableStatistics: disable})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	s := e.shards[0]
	// drive runs fn while stepping the shard, which nobody else runs,
	// until fn returns.
	drive := func(fn func()) {
		done := make(chan struct{})
		go func() { fn(); close(done) }()
		for {
			select {
			case <-done:
				return
			case c := <-s.inbox:
				s.execute(s.step(time.Now().UnixMilli(), s.gather([]command{c})))
			case <-s.mailSig:
				if cmds := s.takeMail(nil); len(cmds) > 0 {
					s.execute(s.step(time.Now().UnixMilli(), cmds))
				}
			}
		}
	}
	q := message.QueueDest("bench")
	var c *Conn
	drive(func() { c, err = e.Connect(Credentials{}) })
	if err != nil {
		b.Fatal(err)
	}
	sink := &lastSink{}
	var sub *Subscription
	drive(func() { sub, err = c.Subscribe(SubSpec{Destination: q, Prefetch: 1000, AckMode: AckIndividual}, sink) })
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 1024)
	cmds := make([]command, 1)
	// The loop runs on one OS thread whose CPU time is reported as well
	// (cpu-ns/op): on a loaded machine the wall time also counts the
	// time the thread waited for a CPU.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := &message.Message{ID: "ID:bench", Destination: q, Body: body, BodyType: message.BytesBody, Priority: 4}
		cmds[0] = command{op: opSend, msg: m}
		s.execute(s.step(time.Now().UnixMilli(), cmds))
		cmds[0] = command{op: opAck, sub: sub, id: sink.id}
		s.execute(s.step(time.Now().UnixMilli(), cmds))
	}
	b.StopTimer()
	b.ReportMetric(float64(threadCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
	if st := s.dests[q].stats(); st.DequeueCount != int64(b.N) || (st.EnqueueTime.Count == int64(b.N)) == disable {
		b.Fatalf("after %d messages: %d dequeued, %d timed (statistics disabled: %v)", b.N, st.DequeueCount, st.EnqueueTime.Count, disable)
	}
}
