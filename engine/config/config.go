package config

import (
	"strconv"
	"strings"
	"time"

	"wharf/engine/message"
)

// Config is the whole broker configuration, from either file form. A Config
// returned by LoadFile, ParseXML or ParseYAML is validated and frozen: it
// shares no memory with anything else and must not be modified, so any
// goroutine may read it (and call PolicyFor) without locking.
type Config struct {
	// BrokerName is <broker brokerName>.
	BrokerName string
	// DataDirectory is <broker dataDirectory>; relative paths are relative
	// to the working directory.
	DataDirectory string
	// Persistent is <broker persistent>; false forces the memory store.
	Persistent bool
	// UseJMX is <broker useJmx>. Accepted for compatibility: Wharf has no
	// JMX, and its Jolokia API (protocols/http) serves the same MBeans
	// whatever it says, so it changes nothing.
	UseJMX bool
	// AdvisorySupport is <broker advisorySupport>.
	AdvisorySupport bool
	// SchedulerSupport is <broker schedulerSupport>.
	SchedulerSupport bool
	// EnableStatistics is <broker enableStatistics>: false stops the
	// destinations' timing and size statistics (AverageEnqueueTime,
	// AverageMessageSize ...) and the subscriptions' counters; the
	// destinations' counters are kept.
	EnableStatistics bool
	// SchedulerDirectory is <broker schedulerDirectory>: where the job
	// scheduler store lives when SchedulerSupport is on. Default
	// <DataDirectory>/<BrokerName>/scheduler, as BrokerService.
	// getSchedulerDirectoryFile.
	SchedulerDirectory string
	// TmpDataDirectory is <broker tmpDataDirectory>: the temp store that
	// non-persistent messages spill to when memory runs short, emptied at
	// every start. Default <DataDirectory>/<BrokerName>/tmp_storage, as
	// BrokerService.getTmpDataDirectory.
	TmpDataDirectory string
	// AnonymousProducerAdvisorySupport is <broker
	// anonymousProducerAdvisorySupport>: whether producers created without
	// a destination produce ActiveMQ.Advisory.Producer advisories.
	AnonymousProducerAdvisorySupport bool
	// UseVirtualTopics is <broker useVirtualTopics>. When true and the file
	// configures no <destinationInterceptors>, VirtualTopics holds
	// ActiveMQ's default virtual topic (VirtualTopic.> for queues
	// Consumer.*.VirtualTopic.>); when false and none are configured,
	// VirtualTopics is empty. Configured virtual topics apply either way;
	// the flag also decides whether consumer queues of virtual topics are
	// recreated at start (BrokerService.startVirtualConsumerDestinations).
	UseVirtualTopics bool
	// UseVirtualDestSubs is <broker useVirtualDestSubs>: a consumer on a
	// queue a virtual destination forwards to (a virtual topic's consumer
	// queue, a composite's forwardTo) is also advertised as a consumer of
	// the virtual destination on ActiveMQ.Advisory.VirtualDestination.
	// Consumer.*, so a network bridge with useVirtualDestSubs makes demand
	// for it.
	UseVirtualDestSubs bool
	// UseVirtualDestSubsOnCreation is <broker useVirtualDestSubsOnCreation>:
	// with UseVirtualDestSubs, a queue a virtual destination forwards to is
	// advertised as a consumer of the virtual destination from its
	// creation, consumer or not (AdvisoryBroker.addDestination), so a
	// network bridge forwards what is published there while the queue has
	// no consumer. Without UseVirtualDestSubs it does nothing, as in
	// ActiveMQ, whose virtual destinations are only registered with it.
	UseVirtualDestSubsOnCreation bool
	// OfflineDurableSubscriberTimeout is <broker offlineDurableSubscriberTimeout>
	// (ms in XML): durable subscriptions offline longer than this are
	// destroyed. 0 means never (ActiveMQ writes -1).
	OfflineDurableSubscriberTimeout time.Duration
	// OfflineDurableSubscriberTaskSchedule is how often the offline durable
	// subscriber sweep runs (<broker offlineDurableSubscriberTaskSchedule>, ms).
	OfflineDurableSubscriberTaskSchedule time.Duration
	// Shards is the number of engine shards: YAML shards, <broker
	// wharf:shards> in activemq.xml (WharfNS); 0 means GOMAXPROCS. It also
	// decides the KahaDB layout: one shard is one plain KahaDB directory
	// (as ActiveMQ's), more are one shard-<i>-of-<n> directory each.
	Shards int
	// TrustedNetwork is YAML trusted_network, <broker
	// wharf:trustedNetwork> or wharf run --trusted-network: connectors may
	// listen on non-loopback addresses although no authentication plugin
	// is configured (Security.Authentication is nil), so anyone who can
	// reach such a port can use the broker. The broker logs that at Warn at
	// every start, naming those listeners. Default false (STYLE.md §8:
	// loopback only until credentials exist). With an authentication
	// plugin, connectors may listen anywhere without it.
	TrustedNetwork bool
	// Transports are the <transportConnectors>, in file order.
	Transports []Transport
	// NetworkConnectors are the <networkConnectors>, in file order
	// (network.go).
	NetworkConnectors []NetworkConnector
	// NetworkConnectorStartAsync is ActiveMQ's broker attribute that
	// starts the network connectors off the start-up thread. Wharf's
	// bridges always connect in the background (the broker never waits
	// for a peer), so both values behave as true does.
	NetworkConnectorStartAsync bool
	// Security is what <plugins> configures for authentication and
	// authorization (YAML security).
	Security Security
	// SSLContext is <sslContext>, nil when absent. TLS connectors need it.
	SSLContext *SSLContext
	// Encryption is the Jasypt encryptor of the
	// EncryptablePropertyPlaceholderConfigurer bean (YAML encryption), nil
	// when none is configured: ENC(...) values are then an error.
	Encryption *Encryption
	// Persistence is the <persistenceAdapter>.
	Persistence Persistence
	// Policies are the <policyEntries>, in file order.
	Policies []PolicyEntry
	// DefaultPolicy is <policyMap><defaultEntry>, nil when absent.
	DefaultPolicy *PolicyEntry
	// SystemUsage is <systemUsage>: broker-wide limits.
	SystemUsage SystemUsage
	// InterceptorsConfigured reports whether the file has
	// <destinationInterceptors> (YAML destination_interceptors), even an
	// empty one. When it does, VirtualTopics and Composites are exactly
	// what it lists and ActiveMQ's default virtual topic is not added
	// (BrokerService.createRegionBroker only creates the default
	// interceptor when none is configured).
	InterceptorsConfigured bool
	// VirtualTopics are the <virtualTopic>s in file order, or ActiveMQ's
	// default one (see UseVirtualTopics). Every entry whose Name matches a
	// topic applies to it (VirtualDestinationInterceptor applies all the
	// matching virtual destinations).
	VirtualTopics []VirtualTopic
	// Composites are the <compositeQueue>s and <compositeTopic>s in file
	// order. No destination matches more than one of them (see
	// CompositeFor).
	Composites []Composite
	// HTTP is the web server: activemq.xml's <import resource="jetty.xml"/>
	// or YAML http.
	HTTP HTTP
}

// VirtualTopic is one <virtualTopic>: a send to a topic matching Name is
// also copied to every existing queue named Prefix + topic name + Postfix,
// where "*" in Prefix or Postfix stands for one path element
// (broker-behaviour.md §2).
type VirtualTopic struct {
	// Name is the topic pattern (".", "*", ">" wildcards).
	Name string
	// Prefix and Postfix make the consumer queue names; ActiveMQ's
	// attribute is "postfix" (VirtualTopic.setPostfix).
	Prefix, Postfix string
	// SelectorAware copies a message only to the queues with a consumer
	// whose selector matches it (else to every queue).
	SelectorAware bool
	// Local forwards only messages produced on this broker, not those that
	// arrived over a network bridge.
	Local bool
	// ConcurrentSend sends the copies to the queues in parallel.
	ConcurrentSend bool
	// TransactedSend wraps a persistent fan-out to more than one queue in a
	// broker-local transaction so the journal writes are synced once.
	TransactedSend bool
	// DropOnResourceLimit drops the copy for a queue whose limits are hit
	// instead of blocking or failing the send.
	DropOnResourceLimit bool
	// Line is where the element is declared (0 for the built-in default).
	Line int
}

// Composite is one <compositeQueue> or <compositeTopic>: a send to
// Destination is copied to every ForwardTo destination (whose selector
// matches), with OriginalDestination set to the composite.
type Composite struct {
	// Destination is the queue or topic the composite intercepts; its Name
	// may be a pattern (VirtualDestinationInterceptor keeps virtual
	// destinations in a DestinationMap, so "orders.>" intercepts every
	// queue under orders).
	Destination message.Destination
	// ForwardOnly stops the message from also being delivered to
	// Destination itself.
	ForwardOnly bool
	// CopyMessage is always true: ActiveMQ 5.17 deprecated copyMessage and
	// ignores it (every forward is a copy), so Wharf accepts the attribute
	// and copies regardless.
	CopyMessage bool
	// ConcurrentSend forwards to the targets in parallel.
	ConcurrentSend bool
	// SendWhenNotMatched delivers the message to Destination itself exactly
	// when no forward matched it; ForwardOnly is then not consulted
	// (CompositeDestinationFilter.send).
	SendWhenNotMatched bool
	// ForwardTo are the targets in file order; never empty in a loaded
	// Config.
	ForwardTo []Forward
	// Line is where the element is declared (0 if built in Go).
	Line int
}

// Forward is one <forwardTo> target: <queue physicalName>, <topic
// physicalName>, or <filteredDestination selector queue|topic>.
type Forward struct {
	// Destination is the target queue or topic.
	Destination message.Destination
	// Selector, when not empty, is a message selector (syntactically valid
	// in a loaded Config; compile it with engine/selector.Parse): only
	// messages it matches are forwarded. Empty forwards every message.
	Selector string
}

// Transport is one <transportConnector>.
type Transport struct {
	// Name is the connector name; ActiveMQ names an unnamed connector after
	// its URI, and so do we.
	Name string
	// URI is the connector URI as written (placeholders resolved).
	URI    string
	Scheme string // e.g. "tcp", "stomp", "mqtt+nio", "ws"
	Host   string // literal address or host name; never empty
	Port   int    // 0 asks the kernel for a free port
	// Options are the URI query parameters (maximumConnections,
	// wireFormat.maxFrameSize, ...), names as written.
	Options map[string]string
	// TLS is set for the TLS schemes (ssl, nio+ssl, stomp+ssl, mqtt+ssl,
	// amqp+ssl, wss...): the broker's <sslContext>, copied here by the
	// loader so that a listener factory has what it needs. Nil for plain
	// schemes.
	TLS *SSLContext
	// TLSOptions are the TLS options of Options, parsed (zero for plain
	// schemes, which refuse them).
	TLSOptions TLSOptions
	// Line is where the connector is declared in the file (0 if built in Go).
	Line int
	// ClusterClients are the connector's updateClusterClients,
	// rebalanceClusterClients, updateClusterClientsOnRemove and
	// updateClusterFilter (cluster_clients.go).
	ClusterClients ClusterClients
	// DiscoveryURI is the connector's discoveryUri as written
	// (multicast://default?group=g): the broker advertises the
	// connector's URI there (network.go); empty advertises nothing.
	DiscoveryURI string
	// Discovery is DiscoveryURI parsed (zero when it is empty).
	Discovery Multicast
	// AuditNetworkProducers is the connector's auditNetworkProducers
	// (default false): the persistent sends of network connections (a
	// remote broker's bridge) are checked against the producer audit, so
	// that a message forwarded again after a failure is not stored twice.
	// It matters for OpenWire connectors, the only ones bridges use.
	AuditNetworkProducers bool
}

// Persistence kinds.
const (
	KindKahaDB  = "kahaDB"
	KindMKahaDB = "mKahaDB"
	KindMemory  = "memory"
	// KindLSM is Wharf's own badger store (<wharfLSM>, YAML lsm);
	// ActiveMQ has no such adapter.
	KindLSM = "wharfLSM"
	// KindJDBC is <jdbcPersistenceAdapter> on PostgreSQL (YAML jdbc).
	KindJDBC = "jdbc"
)

// Persistence selects and configures the message store.
type Persistence struct {
	// Kind is KindKahaDB, KindMKahaDB, KindLSM or KindMemory.
	Kind    string
	KahaDB  KahaDB  // meaningful when Kind is KindKahaDB
	MKahaDB MKahaDB // meaningful when Kind is KindMKahaDB
	LSM     LSM     // meaningful when Kind is KindLSM
	JDBC    JDBC    // meaningful when Kind is KindJDBC
}

// LSM is <wharfLSM>: Wharf's LSM store (storage/lsm, badger), one badger
// database per shard. ActiveMQ has no such element; a file that uses it
// is for Wharf alone.
type LSM struct {
	// Directory holds the store; default <DataDirectory>/lsm.
	Directory string
	// SyncWrites: each batch is fsynced before its producers are
	// answered (true), as KahaDB's enableJournalDiskSyncs.
	SyncWrites bool
	// CleanupInterval is how often value log GC runs (KahaDB's
	// cleanupInterval, 30 s); 0 never.
	CleanupInterval time.Duration
	// MemTableSize (bytes, 64 MiB): badger's memtable; one batch must fit
	// in 15% of it.
	MemTableSize int64
	// ValueThreshold (bytes, 1 KiB): larger records go to the value log.
	ValueThreshold int64
	// ValueLogFileSize (bytes, 64 MiB): one value log file, the unit of GC.
	ValueLogFileSize int64
	// MinFreeDisk (bytes): below this much free space a batch that
	// stores something is refused (the sender gets an error); 0 means
	// 4*memTableSize + 2*valueLogFileSize, -1 turns the check off; the
	// size of the LSM tree is added (a compaction's room).
	MinFreeDisk int64
}

// MKahaDB is <mKahaDB>, ActiveMQ's MultiKahaDBPersistenceAdapter: one
// KahaDB store per filter, each destination stored by the first filter that
// matches it.
type MKahaDB struct {
	// Directory holds one child directory per filter (or per destination);
	// default <DataDirectory>/mkahadb.
	Directory string
	// Filters are the <filteredKahaDB> elements in order; the first that
	// matches a destination stores it. Validation ensures at least one and
	// that the last has no pattern (a catch-all). When the file names none
	// at all (<mKahaDB/>), Filters holds one catch-all with KahaDB's
	// defaults.
	Filters []FilteredKahaDB
}

// FilteredKahaDB is one <filteredKahaDB>: a destination pattern and the
// <kahaDB> that stores the destinations it matches.
type FilteredKahaDB struct {
	// Queue and Topic are the pattern as written: at most one is set; none
	// matches every destination (ActiveMQ's matchAll, queue ">" and topic
	// ">").
	Queue, Topic string
	// PerDestination gives each matching destination its own KahaDB,
	// created when the destination is first stored.
	PerDestination bool
	// KahaDB is the nested <kahaDB>'s settings. Its Directory, when set,
	// replaces mKahaDB's directory as the parent of this filter's child
	// directories (as ActiveMQ's configureDirectory does); "" inherits it.
	KahaDB KahaDB
	// Line is where the filter is declared in the file (0 if built in Go).
	Line int
}

// Destination is the filter's pattern; the zero Destination for a
// catch-all.
func (f *FilteredKahaDB) Destination() message.Destination {
	switch {
	case f.Queue != "":
		return message.QueueDest(f.Queue)
	case f.Topic != "":
		return message.TopicDest(f.Topic)
	}
	return message.Destination{}
}

// Matches reports whether the filter stores destination d: a catch-all
// matches everything, a queue pattern only queues, a topic pattern only
// topics. A destination that is itself a pattern (a durable subscription
// on "news.>") is matched as a name.
func (f *FilteredKahaDB) Matches(d message.Destination) bool {
	p := f.Destination()
	if p.IsZero() {
		return true
	}
	return p == d || p.Matches(d)
}

// Journal disk sync strategies (<kahaDB journalDiskSyncStrategy>).
const (
	SyncAlways   = "always"
	SyncPeriodic = "periodic"
	SyncNever    = "never"
)

// KahaDB is <kahaDB>: the journal + B-tree index store.
type KahaDB struct {
	// Directory holds the journal and index; default <DataDirectory>/kahadb.
	Directory string
	// JournalMaxFileLength is the journal file size at which a new file is
	// started, in bytes.
	JournalMaxFileLength int64
	// JournalMaxWriteBatchSize caps one journal write batch, in bytes.
	JournalMaxWriteBatchSize int64
	// EnableJournalDiskSyncs reports whether every persistent send is
	// fsynced before it is acknowledged (JournalDiskSyncStrategy "always").
	EnableJournalDiskSyncs bool
	// JournalDiskSyncStrategy is SyncAlways, SyncPeriodic or SyncNever.
	JournalDiskSyncStrategy string
	// JournalDiskSyncInterval is the fsync period for SyncPeriodic.
	JournalDiskSyncInterval time.Duration
	// CheckpointInterval is how often dirty index pages are written.
	CheckpointInterval time.Duration
	// CleanupInterval is how often unreferenced journal files are removed;
	// 0 disables the periodic cleanup (a clean stop still cleans up).
	CleanupInterval time.Duration
	// IndexCacheSize is the number of index pages kept in memory.
	IndexCacheSize int
	// IndexWriteBatchSize is the number of dirty index pages written per batch.
	IndexWriteBatchSize int
	// ConcurrentStoreAndDispatchQueues lets a queue message be dispatched
	// while its journal write is in flight (and skipped if acked first).
	ConcurrentStoreAndDispatchQueues bool
	// ConcurrentStoreAndDispatchTopics is the same for durable topic messages.
	ConcurrentStoreAndDispatchTopics bool
	// ArchiveDataLogs moves garbage journal files to data-archive/ instead
	// of deleting them.
	ArchiveDataLogs bool
	// CleanupOnStop runs a final checkpoint and cleanup at shutdown.
	CleanupOnStop bool
	// IgnoreMissingJournalFiles lets recovery continue past missing or
	// corrupt journal files, dropping what they held.
	IgnoreMissingJournalFiles bool
	// CheckForCorruptJournalFiles verifies journal checksums at startup.
	CheckForCorruptJournalFiles bool
	// ChecksumJournalFiles writes batch checksums into the journal.
	ChecksumJournalFiles bool
	// EnableAckCompaction rewrites acks that pin old journal files.
	EnableAckCompaction bool
	// CompactAcksAfterNoGC is the number of cleanup cycles without any
	// garbage collected before ack compaction is tried.
	CompactAcksAfterNoGC int
	// CompactAcksIgnoresStoreGrowth lets ack compaction run while the
	// journal is still growing (a new data file since the last check);
	// without it compaction waits until the journal stops growing.
	CompactAcksIgnoresStoreGrowth bool
	// LockAcquireSleepInterval is how often a broker waiting for the
	// directory lock (held by another broker) tries again: the
	// lockAcquireSleepInterval of <locker><shared-file-locker>.
	LockAcquireSleepInterval time.Duration
	// LockKeepAlivePeriod is how often a master checks that it still
	// holds the directory lock (<kahaDB lockKeepAlivePeriod>, ms); one
	// that lost it stops. 0, ActiveMQ's default for KahaDB, checks
	// nothing. Not in an <mKahaDB> filter.
	LockKeepAlivePeriod time.Duration
}

// Dead letter strategy kinds.
const (
	DLQShared     = "shared"
	DLQIndividual = "individual"
	DLQDiscarding = "discarding"
)

// DeadLetterStrategy says where poison and expired messages go
// (broker-behaviour.md §6).
type DeadLetterStrategy struct {
	// Kind is DLQShared, DLQIndividual or DLQDiscarding.
	Kind string
	// Individual strategy: DLQ name is prefix + destination name + suffix.
	QueuePrefix, TopicPrefix string
	QueueSuffix, TopicSuffix string
	// UseQueueForQueueMessages and UseQueueForTopicMessages choose a queue
	// (true) or a topic (false) as the individual DLQ.
	UseQueueForQueueMessages bool
	UseQueueForTopicMessages bool
	// DestinationPerDurableSubscriber appends ".<clientId>:<subName>" for
	// messages of durable subscriptions.
	DestinationPerDurableSubscriber bool
	// ProcessExpired sends expired messages to the DLQ (else drops them).
	ProcessExpired bool
	// ProcessNonPersistent sends non-persistent messages to the DLQ (else
	// drops them).
	ProcessNonPersistent bool
	// Expiration, when > 0, is the TTL given to dead-lettered messages.
	Expiration time.Duration
	// DeadLetterQueue is the shared strategy's queue name.
	DeadLetterQueue string
	// EnableAudit suppresses duplicate DLQ entries for the same message.
	EnableAudit bool
}

// PolicyEntry is one <policyEntry>: settings for the destinations matching
// a pattern.
type PolicyEntry struct {
	// Queue and Topic are the pattern as written; exactly one is set
	// (neither in DefaultPolicy).
	Queue, Topic string
	// Destination is the parsed pattern.
	Destination message.Destination
	// DeadLetter is never nil in a loaded Config: unset means the shared
	// strategy, as in ActiveMQ.
	DeadLetter *DeadLetterStrategy
	// ExpireMessagesPeriod is the expiry sweep period; 0 disables the sweep.
	ExpireMessagesPeriod time.Duration
	// MaxExpirePageSize is the number of messages one expiry sweep examines.
	MaxExpirePageSize int
	// Prefetches replace a consumer's prefetch only when the consumer asked
	// for the client default of its kind (broker-behaviour.md §4); the
	// defaults are those client defaults, so an untouched entry changes
	// nothing. 0 forces pull mode.
	QueuePrefetch        int
	TopicPrefetch        int
	DurableTopicPrefetch int
	QueueBrowserPrefetch int
	// MemoryLimit is the per-destination memory limit in bytes; 0 means
	// the destination shares the broker's memory limit.
	MemoryLimit int64
	// ProducerFlowControl blocks (or fails) producers when limits are hit.
	ProducerFlowControl bool
	// CursorMemoryHighWaterMark is the percent of the memory limit at which
	// the cursor stops caching messages in memory.
	CursorMemoryHighWaterMark int
	// StoreUsageHighWaterMark is the percent of the store limit at which
	// persistent sends are blocked.
	StoreUsageHighWaterMark int
	// BlockedProducerWarningInterval is how often a blocked producer is
	// logged.
	BlockedProducerWarningInterval time.Duration
	// PendingMessageLimit caps messages pending for a slow non-durable topic
	// subscriber beyond its prefetch (older ones are discarded); 0 means no
	// limit. <pendingMessageLimitStrategy><constantPendingMessageLimitStrategy limit>.
	//
	// PendingQueuePolicy is <pendingQueuePolicy>: only "vm"
	// (<vmQueueCursor/>) is accepted: the queue's pending messages all stay
	// in memory and none spills to the temp store. "" means not set.
	PendingMessageLimit int
	PendingQueuePolicy  string
	// ReplayWhenNoConsumers and ReplayDelay are ActiveMQ's
	// <networkBridgeFilterFactory><conditionalNetworkBridgeFilterFactory
	// replayWhenNoConsumers replayDelay>: a network bridge may take a
	// queue message back to a broker it came through once no local
	// consumer is left here and it has been here ReplayDelay (seed 001's
	// stuck messages).
	ReplayWhenNoConsumers bool
	ReplayDelay           time.Duration
	// EnableAudit is <policyEntry enableAudit> (default true): a queue
	// drops a persistent message a client sends with a message id it has
	// already seen among the last MaxAuditDepth of its producer (the
	// cursor audit; engine.Policy.EnableAudit). Seed 001 sets it false
	// for messages a network replays to a broker they came through.
	EnableAudit bool
	// MaxAuditDepth and MaxProducersToAudit are <policyEntry
	// maxAuditDepth maxProducersToAudit> (2048, 1024): the audit's window
	// of sequence ids per producer, and how many producers a queue tracks.
	MaxAuditDepth, MaxProducersToAudit int
	// SendAdvisoryIfNoConsumers publishes ActiveMQ.Advisory.NoConsumer.* for
	// messages sent with no consumer.
	SendAdvisoryIfNoConsumers bool
	// UseConsumerPriority fills higher-priority consumers first.
	UseConsumerPriority bool
	// AllConsumersExclusiveByDefault makes every queue consumer exclusive.
	AllConsumersExclusiveByDefault bool
	// PrioritizedMessages dispatches queue messages in JMSPriority order
	// (highest first) instead of arrival order.
	PrioritizedMessages bool
	// MaxPageSize is the number of messages a queue pages in from its
	// store at a time for dispatch.
	MaxPageSize int
	// The advisory switches publish ActiveMQ.Advisory.* messages for this
	// destination: MessageConsumed, MessageDelivered, FULL, SlowConsumer,
	// FastProducer and MessageDiscarded.
	AdvisoryForConsumed           bool
	AdvisoryForDelivery           bool
	AdvisoryWhenFull              bool
	AdvisoryForSlowConsumers      bool
	AdvisoryForFastProducers      bool
	AdvisoryForDiscardingMessages bool
	// GCInactiveDestinations removes the destination once it has had no
	// consumers and no messages for InactiveTimeoutBeforeGC.
	GCInactiveDestinations  bool
	InactiveTimeoutBeforeGC time.Duration
	// PersistJMSRedelivered records the redelivery flag in the store before
	// a persistent queue message is dispatched, so JMSRedelivered is
	// correct after a broker restart.
	PersistJMSRedelivered bool
	// MessageGroupMapFactoryType is how a queue remembers message group
	// owners: GroupMapCached (an LRU of 1024 groups) or GroupMapSimple (a
	// map without bound).
	MessageGroupMapFactoryType string
	// Line is where the entry is declared (0 if built in Go).
	Line int
}

// Message group map kinds (<policyEntry messageGroupMapFactoryType>).
const (
	GroupMapCached = "cached"
	GroupMapSimple = "simple"
)

// SystemUsage is <systemUsage>: the broker-wide resource limits
// (broker-behaviour.md §10).
type SystemUsage struct {
	// MemoryLimit is the memory for in-flight messages, in bytes.
	MemoryLimit int64
	// MemoryPercentOfJVMHeap is <memoryUsage percentOfJvmHeap>; when > 0
	// it replaces MemoryLimit. DEVIATION: Wharf has no JVM heap; we take the
	// percentage of physical RAM (the broker computes the bytes at start).
	MemoryPercentOfJVMHeap int
	// StoreLimit is the disk space for persistent messages, in bytes.
	StoreLimit int64
	// TempLimit is the disk space for spooled non-persistent messages, in bytes.
	TempLimit int64
	// JobSchedulerLimit is the disk space for scheduled messages
	// (<jobSchedulerUsage limit>), in bytes.
	JobSchedulerLimit int64
	// SendFailIfNoSpace fails a send with ResourceAllocationException
	// instead of blocking the producer.
	SendFailIfNoSpace bool
	// SendFailIfNoSpaceAfterTimeout fails a blocked send after waiting this
	// long; 0 waits forever.
	SendFailIfNoSpaceAfterTimeout time.Duration
}

// Default returns the configuration ActiveMQ 5.17 runs with when a setting
// is absent. It is the single source of defaults: the parsers start from it.
func Default() Config {
	return Config{
		BrokerName:       "localhost", // BrokerService.DEFAULT_BROKER_NAME
		DataDirectory:    "data",      // wharf run keeps its store under ./data (DESIGN.md); ActiveMQ: activemq-data
		Persistent:       true,        // BrokerService.persistent
		UseJMX:           true,        // BrokerService.useJmx
		AdvisorySupport:  true,        // BrokerService.advisorySupport
		SchedulerSupport: false,       // BrokerService.schedulerSupport
		EnableStatistics: true,        // BrokerService.enableStatistics
		// Filled from DataDirectory and BrokerName:
		// <dataDirectory>/<brokerName>/scheduler.
		SchedulerDirectory: "",
		// Filled from DataDirectory and BrokerName:
		// <dataDirectory>/<brokerName>/tmp_storage.
		TmpDataDirectory:                 "",
		AnonymousProducerAdvisorySupport: false, // BrokerService.anonymousProducerAdvisorySupport
		UseVirtualTopics:                 true,  // BrokerService.useVirtualTopics
		// BrokerService.offlineDurableSubscriberTimeout = -1 (never).
		OfflineDurableSubscriberTimeout: 0,
		// BrokerService.offlineDurableSubscriberTaskSchedule = 300000 ms.
		OfflineDurableSubscriberTaskSchedule: 300 * time.Second,
		Shards:                               0,     // GOMAXPROCS (DESIGN.md)
		TrustedNetwork:                       false, // STYLE.md §8: loopback until credentials exist
		Persistence: Persistence{
			Kind:   KindKahaDB, // BrokerService.createPersistenceAdapter: KahaDB
			KahaDB: defaultKahaDB(),
			LSM:    defaultLSM(),
			JDBC:   defaultJDBC(),
		},
		SystemUsage: defaultSystemUsage(),
		HTTP:        defaultHTTP(),
		// BrokerService.createDefaultDestinationInterceptor: with no
		// <destinationInterceptors> and useVirtualTopics, one virtual topic
		// named VirtualTopic.> with VirtualTopic's other defaults.
		VirtualTopics: []VirtualTopic{defaultInterceptorVirtualTopic()},
	}
}

func defaultInterceptorVirtualTopic() VirtualTopic {
	v := DefaultVirtualTopic()
	v.Name = "VirtualTopic.>"
	return v
}

// DefaultVirtualTopic is what a <virtualTopic/> with no attributes means:
// VirtualTopic's field defaults (activemq-5.17.2), which intercept every
// topic (name ">").
func DefaultVirtualTopic() VirtualTopic {
	return VirtualTopic{
		Name:                ">",
		Prefix:              "Consumer.*.",
		Postfix:             "",
		SelectorAware:       false,
		Local:               false,
		ConcurrentSend:      false,
		TransactedSend:      false,
		DropOnResourceLimit: false,
	}
}

// DefaultComposite is CompositeDestination's field defaults
// (activemq-5.17.2), for a composite of the given kind with no name and no
// targets yet.
func DefaultComposite(t message.DestType) Composite {
	return Composite{
		Destination:        message.Destination{Type: t},
		ForwardOnly:        true,
		CopyMessage:        true, // deprecated in ActiveMQ; always copies
		ConcurrentSend:     false,
		SendWhenNotMatched: false,
	}
}

// DefaultKahaDB is MessageDatabase's defaults (activemq-5.17.2), with no
// directory: the settings of a <kahaDB> that sets no attribute.
func DefaultKahaDB() KahaDB { return defaultKahaDB() }

// defaultKahaDB is MessageDatabase's defaults (activemq-5.17.2).
func defaultLSM() LSM {
	return LSM{
		Directory:        "",               // filled from DataDirectory: <dataDirectory>/lsm
		SyncWrites:       true,             // as KahaDB's enableJournalDiskSyncs: persist before you promise
		CleanupInterval:  30 * time.Second, // KahaDB's cleanupInterval
		MemTableSize:     64 << 20,         // badger's default
		ValueThreshold:   1 << 10,          // storage/lsm's default: bodies in the value log, a small tree
		ValueLogFileSize: 64 << 20,         // smaller than badger's 1 GiB: GC frees space in smaller steps
	}
}

func defaultKahaDB() KahaDB {
	return KahaDB{
		Directory:                        "",       // filled from DataDirectory: <dataDirectory>/kahadb
		JournalMaxFileLength:             32 << 20, // Journal.DEFAULT_MAX_FILE_LENGTH
		JournalMaxWriteBatchSize:         4 << 20,  // Journal.DEFAULT_MAX_WRITE_BATCH_SIZE
		EnableJournalDiskSyncs:           true,     // journalDiskSyncStrategy = ALWAYS
		JournalDiskSyncStrategy:          SyncAlways,
		JournalDiskSyncInterval:          time.Second,      // journalDiskSyncInterval = 1000 ms
		CheckpointInterval:               5 * time.Second,  // checkpointInterval = 5*1000
		CleanupInterval:                  30 * time.Second, // cleanupInterval = 30*1000
		IndexCacheSize:                   10000,            // pages
		IndexWriteBatchSize:              1000,             // pages
		ConcurrentStoreAndDispatchQueues: true,
		ConcurrentStoreAndDispatchTopics: false,
		ArchiveDataLogs:                  false,
		CleanupOnStop:                    true,
		IgnoreMissingJournalFiles:        false,
		CheckForCorruptJournalFiles:      false,
		ChecksumJournalFiles:             true,
		EnableAckCompaction:              true,
		CompactAcksAfterNoGC:             10,
		CompactAcksIgnoresStoreGrowth:    false,            // compactAcksIgnoresStoreGrowth = false
		LockAcquireSleepInterval:         10 * time.Second, // AbstractLocker.DEFAULT_LOCK_ACQUIRE_SLEEP_INTERVAL
	}
}

// defaultSystemUsage is SystemUsage's code defaults (the stock activemq.xml
// overrides memory with percentOfJvmHeap="70").
func defaultSystemUsage() SystemUsage {
	return SystemUsage{
		MemoryLimit:                   1 << 30,   // MemoryUsage: 1 GiB
		StoreLimit:                    100 << 30, // StoreUsage: 100 GiB
		TempLimit:                     50 << 30,  // TempUsage: 50 GiB
		JobSchedulerLimit:             50 << 30,  // JobSchedulerUsage: 50 GiB
		SendFailIfNoSpace:             false,
		SendFailIfNoSpaceAfterTimeout: 0,
	}
}

// DefaultPolicyEntry is the settings a destination gets when no policy
// entry matches it: PolicyEntry's field defaults (activemq-5.17.2).
func DefaultPolicyEntry() PolicyEntry {
	dl := DefaultDeadLetterStrategy(DLQShared) // Destination.DEFAULT_DEAD_LETTER_STRATEGY
	return PolicyEntry{
		DeadLetter:                     &dl,
		ExpireMessagesPeriod:           30 * time.Second, // BaseDestination.EXPIRE_MESSAGE_PERIOD
		MaxExpirePageSize:              400,              // BaseDestination.MAX_BROWSE_PAGE_SIZE
		QueuePrefetch:                  1000,             // ActiveMQPrefetchPolicy.DEFAULT_QUEUE_PREFETCH
		TopicPrefetch:                  32767,            // DEFAULT_TOPIC_PREFETCH (Short.MAX_VALUE)
		DurableTopicPrefetch:           100,              // DEFAULT_DURABLE_TOPIC_PREFETCH
		QueueBrowserPrefetch:           500,              // DEFAULT_QUEUE_BROWSER_PREFETCH
		MemoryLimit:                    0,                // unset: shares the broker limit
		ProducerFlowControl:            true,
		EnableAudit:                    true,             // BaseDestination: enableAudit
		MaxAuditDepth:                  2048,             // BaseDestination: maxAuditDepth
		MaxProducersToAudit:            1024,             // BaseDestination: maxProducersToAudit
		CursorMemoryHighWaterMark:      70,               // percent
		StoreUsageHighWaterMark:        100,              // percent
		BlockedProducerWarningInterval: 30 * time.Second, // DEFAULT_BLOCKED_PRODUCER_WARNING_INTERVAL
		PendingMessageLimit:            0,                // no pendingMessageLimitStrategy
		SendAdvisoryIfNoConsumers:      false,
		UseConsumerPriority:            true,
		AllConsumersExclusiveByDefault: false,
		PrioritizedMessages:            false,
		MaxPageSize:                    200, // BaseDestination.MAX_PAGE_SIZE
		AdvisoryForConsumed:            false,
		AdvisoryForDelivery:            false,
		AdvisoryWhenFull:               false,
		AdvisoryForSlowConsumers:       false,
		AdvisoryForFastProducers:       false,
		AdvisoryForDiscardingMessages:  false,
		GCInactiveDestinations:         false,
		InactiveTimeoutBeforeGC:        60 * time.Second, // BaseDestination.DEFAULT_INACTIVE_TIMEOUT_BEFORE_GC
		PersistJMSRedelivered:          false,
		MessageGroupMapFactoryType:     GroupMapCached,
	}
}

// DefaultDeadLetterStrategy returns a strategy of the given kind with
// AbstractDeadLetterStrategy's and the kind's defaults.
func DefaultDeadLetterStrategy(kind string) DeadLetterStrategy {
	return DeadLetterStrategy{
		Kind:                     kind,
		QueuePrefix:              "ActiveMQ.DLQ.Queue.", // IndividualDeadLetterStrategy
		TopicPrefix:              "ActiveMQ.DLQ.Topic.",
		UseQueueForQueueMessages: true,
		UseQueueForTopicMessages: true,
		ProcessExpired:           true,  // AbstractDeadLetterStrategy
		ProcessNonPersistent:     false, // AbstractDeadLetterStrategy
		DeadLetterQueue:          "ActiveMQ.DLQ",
		EnableAudit:              true,
	}
}

// DefaultTransports are the listeners `wharf run` opens when it is given no
// configuration file: every protocol on its usual port, bound to loopback
// (STYLE.md §8: listeners stay on loopback until credentials exist). A
// configuration file that lists no connectors gets none, as in ActiveMQ.
func DefaultTransports() []Transport {
	mk := func(name, scheme string, port int) Transport {
		return Transport{Name: name, URI: scheme + "://127.0.0.1:" + strconv.Itoa(port), Scheme: scheme,
			Host: "127.0.0.1", Port: port, Options: map[string]string{}}
	}
	return []Transport{
		mk("openwire", "tcp", 61616),
		mk("stomp", "stomp", 61613),
		mk("mqtt", "mqtt", 1883),
		mk("amqp", "amqp", 5672),
	}
}

// PolicyFor returns the policy entry for the destination d, as ActiveMQ's
// PolicyMap.getEntryFor does (DestinationMap.chooseValue, 5.17.2): among
// the entries whose pattern matches d (queue patterns never match topics),
// an entry naming d exactly wins; otherwise an entry whose pattern is
// matched by another's pattern is the more specific one ("orders.>" beats
// ">", "orders.*" beats "orders.>"); otherwise the smaller pattern string
// wins. With no match it returns DefaultPolicy, or when that is nil a fresh
// DefaultPolicyEntry. The result must not be modified. Safe from any
// goroutine on a loaded Config.
func (c *Config) PolicyFor(d message.Destination) *PolicyEntry {
	var best *PolicyEntry
	for i := range c.Policies {
		p := &c.Policies[i]
		if p.Destination != d && !p.Destination.Matches(d) {
			continue
		}
		if best == nil || comparePolicy(d, p.Destination, best.Destination) < 0 {
			best = p
		}
	}
	if best != nil {
		return best
	}
	if c.DefaultPolicy != nil {
		return c.DefaultPolicy
	}
	e := DefaultPolicyEntry()
	return &e
}

// comparePolicy orders two matching patterns for destination d, most
// specific first (negative when a sorts before b).
func comparePolicy(d, a, b message.Destination) int {
	if a == d {
		return -1
	}
	if b == d {
		return 1
	}
	// ActiveMQDestination.compare (5.17.2): a pattern that matches the
	// other pattern (read as a name) is the more general one and sorts
	// after it.
	if a.Name == b.Name {
		return 0
	}
	bCoversA := b.IsWildcard() && message.MatchName(b.Name, a.Name)
	aCoversB := a.IsWildcard() && message.MatchName(a.Name, b.Name)
	switch {
	case bCoversA && !aCoversB:
		return -1
	case aCoversB && !bCoversA:
		return 1
	case aCoversB && bCoversA:
		// DEVIATION: patterns such as "orders.*" and "orders.>" each match
		// the other, so ActiveMQ's comparator puts each after the other and
		// its pick depends on HashSet order. Wharf prefers the pattern
		// without ">" (it spans fewer levels), then falls through.
		if ga, gb := strings.Contains(a.Name, ">"), strings.Contains(b.Name, ">"); ga != gb {
			if ga {
				return 1
			}
			return -1
		}
	}
	// Java String.compareTo compares UTF-16 units; for the ASCII names in
	// practice that equals Go's byte order.
	return strings.Compare(a.Name, b.Name)
}

// CompositeFor returns the composite destination that intercepts sends to
// d, or nil. As in ActiveMQ's VirtualDestinationInterceptor (a
// DestinationMap lookup), a composite's name may be a pattern and matches
// only its own kind: compositeQueue "orders.>" intercepts queue
// "orders.eu" but not topic "orders.eu". Validation guarantees at most one
// composite matches any destination. A topic may also match VirtualTopics;
// ActiveMQ applies both. The result must not be modified. Safe from any
// goroutine on a loaded Config.
func (c *Config) CompositeFor(d message.Destination) *Composite {
	for i := range c.Composites {
		if c.Composites[i].Destination.Matches(d) {
			return &c.Composites[i]
		}
	}
	return nil
}
