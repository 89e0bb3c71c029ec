package timers

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestTimersFireOnceAndLeaveTheSet(t *testing.T) {
	var s Set
	fired := make(chan struct{}, 10)
	var rearm func()
	n := 0
	rearm = func() {
		fired <- struct{}{}
		n++
		if n < 5 {
			s.After(time.Millisecond, rearm)
		}
	}
	s.After(time.Millisecond, rearm)
	for i := 0; i < 5; i++ {
		select {
		case <-fired:
		case <-time.After(5 * time.Second):
			t.Fatalf("timer %d did not fire", i)
		}
	}
	if l := s.Len(); l != 0 {
		t.Fatalf("%d timers left after a periodic check re-armed itself 5 times, want 0", l)
	}
}

func TestTimersStopCancelsAndRefuses(t *testing.T) {
	var s Set
	var ran atomic.Int32
	s.After(time.Hour, func() { ran.Add(1) })
	if s.Len() != 1 {
		t.Fatalf("Len %d, want 1", s.Len())
	}
	s.Stop()
	s.After(0, func() { ran.Add(1) })
	if s.Len() != 0 {
		t.Fatalf("Len %d after Stop, want 0", s.Len())
	}
	// A zero-delay timer would have run by the time a second, later one
	// armed on a fresh set runs.
	var probe Set
	done := make(chan struct{})
	probe.After(10*time.Millisecond, func() { close(done) })
	<-done
	if ran.Load() != 0 {
		t.Fatalf("%d callbacks ran after Stop", ran.Load())
	}
}

func TestTimersCancel(t *testing.T) {
	var s Set
	var ran atomic.Int32
	long := s.After(time.Hour, func() { ran.Add(1) })
	fired := make(chan struct{})
	s.After(time.Hour, func() { ran.Add(1) })
	s.After(time.Millisecond, func() { close(fired) })
	<-fired
	if l := s.Len(); l != 2 {
		t.Fatalf("Len %d after one of three fired, want 2", l)
	}
	s.Cancel(long)
	s.Cancel(long) // a second Cancel is harmless
	s.Cancel(Timer{})
	if l := s.Len(); l != 1 {
		t.Fatalf("Len %d after Cancel, want 1", l)
	}
	s.Stop()
	if l := s.Len(); l != 0 || ran.Load() != 0 {
		t.Fatalf("after Stop: Len %d, %d callbacks ran, want 0 and 0", l, ran.Load())
	}
}
