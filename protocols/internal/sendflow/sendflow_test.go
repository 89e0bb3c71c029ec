package sendflow

import "testing"

type conn struct{ pauses, resumes int }

func (c *conn) PauseReading()  { c.pauses++ }
func (c *conn) ResumeReading() { c.resumes++ }

func TestSendFlowPausesAtLimitAndResumesAtHalf(t *testing.T) {
	c := &conn{}
	g := &Gate{Limit: 4, Conn: c}
	for i := 0; i < 3; i++ {
		g.Started()
	}
	if g.Paused() || c.pauses != 0 {
		t.Fatal("paused below the limit")
	}
	g.Started()
	if !g.Paused() || c.pauses != 1 {
		t.Fatalf("at the limit: paused=%v pauses=%d, want paused once", g.Paused(), c.pauses)
	}
	g.Done() // 3 outstanding: still above half
	if !g.Paused() || c.resumes != 0 {
		t.Fatal("resumed above half the limit")
	}
	g.Done() // 2 = half
	if g.Paused() || c.resumes != 1 {
		t.Fatalf("at half: paused=%v resumes=%d, want resumed once", g.Paused(), c.resumes)
	}
	g.Done()
	g.Done()
	if c.resumes != 1 || c.pauses != 1 {
		t.Fatalf("pauses %d resumes %d after draining, want 1 and 1", c.pauses, c.resumes)
	}
}
