package kahadb

import "wharf/engine/message"

// MarshalForTest exposes the stored form of a message to the tests.
func MarshalForTest(m *message.Message) ([]byte, error) { return marshal(m, m.RedeliveryCounter) }
