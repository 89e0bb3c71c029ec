package http

import "net/http"

// healthz answers 200 while the process serves HTTP at all: a liveness
// check, true during a long store recovery too.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("ok\n"))
}

// readyz answers 200 once the broker has recovered its store and its
// connectors listen (Ready), 503 before that and while it stops: a
// readiness check for load balancers and orchestrators.
func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if s.engine.Load() == nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("not ready: the broker is starting or stopping\n"))
		return
	}
	w.Write([]byte("ready\n"))
}
