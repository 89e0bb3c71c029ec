package kahadb

import (
	"time"

	"wharf/engine"
	"wharf/engine/message"
)

// MarshalForTest exposes the stored form of a message to the tests.
func MarshalForTest(m *message.Message) ([]byte, error) { return marshal(m, m.RedeliveryCounter) }

// AgeCleanupForTest makes ss's last cleanup d older, as if d had passed.
func AgeCleanupForTest(ss engine.ShardStore, d time.Duration) {
	s := ss.(*shardStore)
	s.lastGC = s.lastGC.Add(-d)
}
