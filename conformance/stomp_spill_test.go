package conformance

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"wharf/conform"
	"wharf/engine/brokertest"
	"wharf/engine/config"
	"wharf/engine/message"
)

// Non-persistent messages spill to the temp store (tmp_storage) once the
// broker's memory passes cursorMemoryHighWaterMark (70 %): a STOMP producer
// sends four times the memory limit to a queue with no consumer and every
// RECEIPT comes back at once (nothing blocks); a consumer then gets every
// message, in order, with its headers and body; the temp store is empty
// afterwards.
func TestConformanceSTOMPSpillToTempStore(t *testing.T) {
	const limit, n = 256 << 10, 1024
	b := startBroker(t, brokertest.WithConfig(func(c *config.Config) {
		c.SystemUsage.MemoryLimit = limit
	}))
	e := b.Engine()
	q := queue(t, "")
	body := strings.Repeat("b", 1000)
	p, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
	for i := 0; i < n; i++ {
		p.SendMsg(q, fmt.Sprintf("%04d%s", i, body), "n:"+strconv.Itoa(i), "kind:spill")
	}
	dest := message.QueueDest(strings.TrimPrefix(q, "/queue/"))
	st := e.Stats(dest)
	if st.TempUsage < n*1000/2 || st.MemoryUsage > limit || st.BlockedSends != 0 {
		t.Fatalf("after %d × 1 KiB with a %d-byte memory limit: %+v", n, limit, st)
	}
	c, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
	c.Subscribe("s", q)
	for i := 0; i < n; i++ {
		f := c.ExpectMessage(fmt.Sprintf("%04d%s", i, body))
		conform.ExpectHeader(t, f, "n", strconv.Itoa(i))
		conform.ExpectHeader(t, f, "kind", "spill")
	}
	eventually(t, func() bool { return e.Usage().TempUsed == 0 })
}
