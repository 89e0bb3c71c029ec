package http_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	"wharf/engine/message"
)

// BenchmarkConsole10kQueues times the console's pages on a broker with
// 10,000 queues (issue 16: each under 200 ms), over HTTP with the login:
// every page reads the counters of all 10,000 and sorts them; only the
// page asked for is rendered.
func BenchmarkConsole10kQueues(b *testing.B) {
	v := startConsole(b)
	for i := range 10_000 {
		if err := v.e.AddDestination(message.QueueDest(fmt.Sprintf("bench.queue.%05d", i))); err != nil {
			b.Fatal(err)
		}
	}
	v.send(message.QueueDest("bench.queue.04242"), 10, "x")
	for _, p := range []struct{ name, path string }{
		{"overview", "/admin/"},
		{"queues", "/admin/queues.jsp"},
		{"queues-last-page", "/admin/queues.jsp?page=200"},
		{"queues-by-size", "/admin/queues.jsp?sort=size&order=desc"},
		{"queues-filtered", "/admin/queues.jsp?filter=queue.042"},
		{"browse", "/admin/browse.jsp?JMSDestination=bench.queue.04242"},
	} {
		b.Run(p.name, func(b *testing.B) {
			req, err := http.NewRequest("GET", v.base+p.path, nil)
			if err != nil {
				b.Fatal(err)
			}
			req.SetBasicAuth("admin", "secret")
			for b.Loop() {
				resp, err := v.c.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || n == 0 {
					b.Fatalf("GET %s: HTTP %d, %d bytes", p.path, resp.StatusCode, n)
				}
			}
		})
	}
}
