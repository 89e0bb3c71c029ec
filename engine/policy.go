package engine

import (
	"time"

	"wharf/engine/message"
)

// DeadLetterKind selects ActiveMQ's dead-letter strategy.
type DeadLetterKind uint8

// The dead-letter strategies (AbstractDeadLetterStrategy's subclasses).
const (
	SharedDLQ     DeadLetterKind = iota // everything to one queue, ActiveMQ.DLQ
	IndividualDLQ                       // one DLQ per destination, by prefix and suffix
	DiscardDLQ                          // drop
)

// DeadLetterPolicy is a destination's dead-letter strategy.
type DeadLetterPolicy struct {
	Kind DeadLetterKind
	// Queue is the shared DLQ's name ("ActiveMQ.DLQ").
	Queue string
	// Individual strategy: names are prefix + destination name + suffix.
	QueuePrefix, QueueSuffix string
	TopicPrefix, TopicSuffix string
	// UseQueueForQueueMessages/TopicMessages: the individual DLQ is a queue
	// (true) or a topic (false).
	UseQueueForQueueMessages bool
	UseQueueForTopicMessages bool
	// ProcessExpired sends expired messages to the DLQ (true) or drops them.
	ProcessExpired bool
	// ProcessNonPersistent sends non-persistent messages to the DLQ too.
	ProcessNonPersistent bool
	// Expiration, in ms, given to DLQ copies; 0 keeps them forever.
	Expiration int64
}

// DefaultDeadLetter is ActiveMQ's default: SharedDeadLetterStrategy.
func DefaultDeadLetter() DeadLetterPolicy {
	return DeadLetterPolicy{
		Kind:                     SharedDLQ,
		Queue:                    "ActiveMQ.DLQ",
		QueuePrefix:              "ActiveMQ.DLQ.Queue.",
		TopicPrefix:              "ActiveMQ.DLQ.Topic.",
		UseQueueForQueueMessages: true,
		UseQueueForTopicMessages: true,
		ProcessExpired:           true,
	}
}

// Target returns the DLQ for a message from d, and false when the strategy
// discards it.
func (p *DeadLetterPolicy) Target(d message.Destination) (message.Destination, bool) {
	switch p.Kind {
	case DiscardDLQ:
		return message.Destination{}, false
	case IndividualDLQ:
		if d.Type.IsTopic() {
			t := message.Topic
			if p.UseQueueForTopicMessages {
				t = message.Queue
			}
			return message.Destination{Type: t, Name: p.TopicPrefix + d.Name + p.TopicSuffix}, true
		}
		t := message.Topic
		if p.UseQueueForQueueMessages {
			t = message.Queue
		}
		return message.Destination{Type: t, Name: p.QueuePrefix + d.Name + p.QueueSuffix}, true
	}
	return message.QueueDest(p.Queue), true
}

// Policy is what a destination's policy entry says, resolved when the
// destination is created.
type Policy struct {
	DeadLetter DeadLetterPolicy
	// ExpireMessagesPeriod is how often pending messages are swept for
	// expiry; 0 disables the sweep (ActiveMQ default 30 s).
	ExpireMessagesPeriod time.Duration
	// MaxRedeliveries bounds the redeliveries a consumer may ask for with
	// NackRedeliver before the message goes to the DLQ; -1 is unlimited.
	// Messages returned because their consumer went away are redelivered
	// without limit, as ActiveMQ's broker does.
	MaxRedeliveries int
	// MaxPageSize is how many pending messages a dispatch pass looks at when
	// consumers have selectors (ActiveMQ maxPageSize, 200).
	MaxPageSize int
	// PrioritizedMessages dispatches a queue's messages by JMSPriority (9
	// first), then in arrival order (ActiveMQ prioritizedMessages, false).
	PrioritizedMessages bool
	// Prefetches replace a consumer's prefetch when it asked for the client
	// default of its kind (SubSpec.DefaultPrefetch); 0 here means not set.
	QueuePrefetch, TopicPrefetch, DurableTopicPrefetch, QueueBrowserPrefetch int
	// PendingMessageLimit caps, beyond its prefetch, the messages waiting for
	// a slow non-durable topic subscriber; older ones are discarded
	// (constantPendingMessageLimitStrategy). 0 is no limit.
	PendingMessageLimit int
	// MemoryLimit is the destination's own memory limit in bytes; 0 shares
	// the broker's (policyEntry memoryLimit).
	MemoryLimit int64
	// CursorMemoryHighWaterMark is the percent of the memory limit (the
	// destination's, else the broker's) past which new non-persistent
	// messages that must wait go to the temp store (70).
	CursorMemoryHighWaterMark int
	// VMCursor keeps every pending message in memory, spilling nothing
	// (<pendingQueuePolicy><vmQueueCursor/>): memory limits then block
	// non-persistent sends too.
	VMCursor bool
	// ProducerFlowControl blocks or fails producers when a limit is reached
	// (true); false accepts their messages regardless.
	ProducerFlowControl bool
	// BlockedProducerWarningInterval rate-limits the flow-control warning
	// of the destination (<policyEntry blockedProducerWarningInterval>);
	// 0 takes Limits.BlockedProducerWarningInterval.
	BlockedProducerWarningInterval time.Duration
	// Advisories a policy may turn on (all off by default, as in ActiveMQ).
	AdvisoryForConsumed, AdvisoryForDelivery, AdvisoryWhenFull bool
	AdvisoryForSlowConsumers, AdvisoryForFastProducers         bool
	AdvisoryForDiscardingMessages, SendAdvisoryIfNoConsumers   bool
	// ReplayWhenNoConsumers lets a network subscription (SubSpec.Network)
	// take a queue message back to a broker it came through, once no
	// subscription but network ones is left on the queue and the message
	// has been here ReplayDelay: ActiveMQ's
	// conditionalNetworkBridgeFilterFactory (replay.go).
	ReplayWhenNoConsumers bool
	ReplayDelay           time.Duration
	// MessageGroupCacheSize is how many message groups a queue remembers
	// (ActiveMQ's "cached" group map, 1024); older groups are reassigned.
	MessageGroupCacheSize int
	// EnableAudit is the queue's cursor audit (<policyEntry enableAudit>,
	// true): a persistent message a client sends with a message id the
	// queue has already seen among the last MaxAuditDepth sequence ids of
	// its producer is answered and dropped (audit.go). MaxProducersToAudit
	// bounds the producers tracked per queue.
	EnableAudit                        bool
	MaxAuditDepth, MaxProducersToAudit int
}

// DefaultPolicy is ActiveMQ 5.17's PolicyEntry defaults.
func DefaultPolicy() Policy {
	return Policy{
		DeadLetter:            DefaultDeadLetter(),
		ExpireMessagesPeriod:  30 * time.Second,
		MaxRedeliveries:       6, // the client RedeliveryPolicy default ActiveMQ users expect
		MaxPageSize:           200,
		MessageGroupCacheSize: 1024,
		ProducerFlowControl:   true,
		EnableAudit:           true,
		MaxAuditDepth:         2048,
		MaxProducersToAudit:   1024,
		// PolicyEntry.cursorMemoryHighWaterMark (percent).
		CursorMemoryHighWaterMark: 70,
	}
}
