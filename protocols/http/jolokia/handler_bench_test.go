package jolokia_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/http/jolokia"
	"wharf/storage/memory"
)

// BenchmarkJolokiaRead reads with 10,000 queues: one queue's QueueSize
// (what a poller asks per queue) and every queue's by pattern.
func BenchmarkJolokiaRead(b *testing.B) {
	e, err := engine.New(engine.Options{Shards: 2, Store: memory.New(), DisableAdvisories: true})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	for i := 0; i < 10_000; i++ {
		if err := e.AddDestination(message.QueueDest(fmt.Sprintf("q.%05d", i))); err != nil {
			b.Fatal(err)
		}
	}
	h := jolokia.New(e, jolokia.Options{})
	for _, bc := range []struct{ name, path string }{
		{"one", "/api/jolokia/read/" + queueBean("q.01234") + "/QueueSize"},
		{"pattern", "/api/jolokia/read/org.apache.activemq:type=Broker,brokerName=*,destinationType=Queue,destinationName=*/QueueSize"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, bc.path, nil))
				if w.Code != http.StatusOK {
					b.Fatalf("HTTP %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
