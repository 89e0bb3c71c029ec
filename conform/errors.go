package conform

import "errors"

// Sentinel errors of the runner.
var (
	// ErrNoURL is returned when no broker address is given: the suite never
	// picks a broker by itself.
	ErrNoURL = errors.New("conform: no broker URL given")
	// ErrBadURL is returned for a URL whose scheme the suite does not speak.
	ErrBadURL = errors.New("conform: unsupported broker URL")
)
