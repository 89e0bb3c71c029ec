package lsm_test

import (
	"testing"

	"wharf/engine"
	"wharf/storage/storetest"
)

// TestLSMProducerAudit: the LSM store keeps the producer audit across a
// restart, consumed messages included, as Wharf's KahaDB does.
func TestLSMProducerAudit(t *testing.T) {
	storetest.RunProducerAudit(t, func(t *testing.T) func() engine.Store {
		dir := t.TempDir()
		return func() engine.Store { return open(t, testOptions(dir)) }
	}, true)
}
