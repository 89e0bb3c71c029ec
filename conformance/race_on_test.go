//go:build race

package conformance

// raceEnabled: the race detector is on. Its shadow memory grows with what
// the process ever allocated and is not given back, so RSS says nothing
// about leaks under it (the heap in use still does).
const raceEnabled = true
