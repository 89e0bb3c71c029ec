package http

import "time"

// SetRESTClientIdle changes how long /api/message keeps an unused
// clientId's client, for tests that watch one expire.
func SetRESTClientIdle(s *Server, d time.Duration) { s.rest.idle = d }
