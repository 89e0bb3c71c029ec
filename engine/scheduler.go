package engine

import "wharf/engine/message"

// scheduled takes m into the job scheduler when it carries AMQ_SCHEDULED_*
// properties; it reports whether it did. Scheduled delivery is being built:
// until it lands, SchedulerSupport changes nothing.
func (s *shard) scheduled(m *message.Message) bool { return false }
