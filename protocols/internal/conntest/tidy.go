package conntest

import (
	"errors"
	"fmt"

	"wharf/engine"
)

// Tidy removes what a fuzz input left in e: every durable subscription
// (inactive once the input's sessions closed), every scheduled job and
// every destination (with its messages, retained message and advisory
// topics). A long fuzz run then works on an engine as small as a fresh
// one instead of one holding every destination name the mutator ever
// made up, each input meets the same engine (so the coverage the
// coordinator sees is the input's own, not left over from earlier ones),
// and no scheduled delivery fires during a later input. It also serves as
// a barrier: it returns after every shard handled what the input's
// sessions handed to it. Call it only when no session of the engine is
// open.
func Tidy(e *engine.Engine) error {
	var errs []error
	for _, d := range e.AllDurableSubs() {
		if err := e.Unsubscribe(d.Key); err != nil {
			errs = append(errs, fmt.Errorf("unsubscribe %v: %w", d.Key, err))
		}
	}
	for _, j := range e.ScheduledJobList() {
		if err := e.RemoveScheduledJob(j.ID); err != nil && !errors.Is(err, engine.ErrNoSuchJob) {
			errs = append(errs, fmt.Errorf("remove job %s: %w", j.ID, err))
		}
	}
	for _, d := range e.Destinations() {
		if err := e.RemoveDestination(d); err != nil {
			errs = append(errs, fmt.Errorf("remove %v: %w", d, err))
		}
	}
	return errors.Join(errs...)
}
