// Package jolokia serves the Jolokia HTTP/JSON protocol over ActiveMQ's
// JMX MBeans, built from the engine's public API, so that the tools
// ActiveMQ operators script with (curl against /api/jolokia, hawtio,
// Telegraf's jolokia2 input, check_jmx-style probes) work against Wharf
// unchanged. The HTTP server mounts New at /api/jolokia/ and supplies
// Options.CanWrite, which says who may exec operations (every one, browse
// included) and write; reads, searches and lists need no more than
// access to the server. An exec or write that a browser makes for another
// site's page (Sec-Fetch-Site cross-site or same-site, or an Origin that
// is not this server) is refused whatever the credentials: a browser
// sends cached basic-authentication credentials with it.
//
// # Protocol
//
// GET /read/<mbean>[/<attribute>[,<attribute>...][/<inner path>]],
// /search/<pattern>, /list[/<domain>/<key properties>[/<inner path>]],
// /exec/<mbean>/<operation>[/<argument>...], /write/<mbean>/<attribute>/<value>,
// /version (and the base URL itself); POST a request object or an array
// of them (bulk). Path elements escape '/' as "!/" and '!' as "!!"; an
// argument "[null]" is null and `""` the empty string. Answers are
// {"request","value","timestamp" (seconds),"status":200} or
// {"request","error_type","error","status"} with Jolokia's exception
// classes and statuses (400 IllegalArgumentException for malformed
// JSON, unknown types, operations and arity; 404
// InstanceNotFoundException / AttributeNotFoundException; 400
// MalformedObjectNameException; 403 SecurityException; 500
// MBeanException when an operation fails). As Jolokia does, the HTTP
// status is 200 and the request's status is in the body, except: a
// single request refused by CanWrite is also HTTP 403 (as ActiveMQ's
// Jetty constraint answers a non-admin), a body over MaxBodyBytes HTTP
// 413, a method other than GET and POST HTTP 405. Stack traces are never
// sent. The query parameter canonicalNaming=false keeps names in
// ActiveMQ's key order (query parameters apply to POSTed requests too, as
// in Jolokia, unless a request's own "config" sets them: hawtio sends
// them so); mimeType=application/json changes the content
// type from Jolokia 1.x's text/plain. A write answers the value before
// it; the writable attributes are those below marked so (list says
// "rw":true), a write of any other is 404 AttributeNotFoundException
// "Read-only attribute: X", as JMX reports a getter without a setter, and
// a value that does not convert to the attribute's type (or that the
// engine refuses: a page size of 0, a negative limit) 400
// IllegalArgumentException. Not supported: proxy requests (target),
// maxDepth, maxCollectionSize and maxObjects, notifications.
//
// ObjectNames follow javax.management.ObjectName: key properties in any
// order, quoted values, domain and value wildcards (* and ?) and the
// ",*" property pattern; results are keyed by the canonical name
// (properties sorted by key). Names of destinations, clients and brokers
// are encoded as ActiveMQ's JMXSupport.encodeObjectNamePart does.
// A pattern read leaves out beans lacking a requested attribute and is a
// 404 when no bean matches; a search matching nothing is an empty list.
//
// # MBeans
//
// org.apache.activemq:type=Broker,brokerName=B — attributes BrokerId,
// BrokerName, BrokerVersion, Uptime, UptimeMillis, CurrentConnectionsCount,
// TotalEnqueueCount, TotalDequeueCount, TotalConsumerCount,
// TotalMessageCount, MemoryPercentUsage, MemoryLimit, StorePercentUsage,
// StoreLimit, TempPercentUsage, TempLimit (the three limits writable:
// Engine.SetLimits), StatisticsEnabled (<broker enableStatistics>),
// AverageMessageSize, MaxMessageSize, MinMessageSize (over every
// destination, advisory topics included, as ActiveMQ's parent
// statistic), Slave,
// Queues, Topics, TemporaryQueues, TemporaryTopics, QueueSubscribers,
// TopicSubscribers, TemporaryQueueSubscribers, TemporaryTopicSubscribers,
// QueueProducers, TopicProducers, TemporaryQueueProducers,
// TemporaryTopicProducers, DynamicDestinationProducers,
// DurableTopicSubscribers, InactiveDurableTopicSubscribers;
// operations addQueue, removeQueue, addTopic, removeTopic,
// destroyDurableSubscriber, and stop when the server gives Options.Stop
// (wharf run does: it shuts the broker down as SIGTERM does, after the
// answer; stopGracefully and restart are not served).
//
// ...,destinationType=Queue|Topic|TempQueue|TempTopic,destinationName=D —
// attributes Name,
// QueueSize, EnqueueCount, DequeueCount, DispatchCount, InFlightCount,
// ExpiredCount, ConsumerCount, ProducerCount (OpenWire producers only:
// the other protocols' are anonymous), MemoryUsageByteCount,
// MemoryPercentUsage, MemoryLimit (writable), MaxPageSize (writable),
// ProducerFlowControl (writable) — writes change the running destination
// (Engine.ChangePolicy) until it is removed or the broker restarts, as a
// JMX change does —, BlockedSends, Subscriptions, AverageEnqueueTime
// (double), MaxEnqueueTime, MinEnqueueTime (ms from a message entering
// the destination to each dispatch of it, redeliveries included: what
// ActiveMQ's processTime measures, in RegionBroker.preProcessDispatch;
// for a message recovered after a restart, from the recovery, where
// ActiveMQ counts from its first arrival),
// AverageMessageSize (truncated to a long, as ActiveMQ does),
// MaxMessageSize, MinMessageSize (engine message size of each message
// sent). Queues add Paused and the operations pause, resume (dispatch
// stops, sends are kept; not kept across a restart, as in ActiveMQ),
// purge(), purge(long), removeMessage,
// removeMatchingMessages (1 and 2 arguments), copyMessageTo,
// copyMatchingMessagesTo (2 and 3), moveMessageTo, moveMatchingMessagesTo
// (2 and 3), retryMessages, retryMessage, browse(), browse(selector),
// getMessage, and a Wharf extension, retryMessages(int) (at most that
// many; docs/http.md). They act on messages not dispatched to a consumer
// (engine/admin.go); browse shows both, at most MaxBrowseMessages.
//
// ...,service=Health — CurrentStatus ("Good"), healthStatus().
//
// ...,destinationType=Topic,destinationName=T,endpoint=Consumer,clientId=C,
// consumerId=Durable(C_S) — every durable subscription, active or not:
// ClientId, SubscriptionName, SubcriptionName (ActiveMQ's spelling),
// DestinationName, Selector, Active, Durable, NoLocal, DestinationQueue,
// DestinationTopic, DestinationTemporary, and the counters below;
// operation destroy.
//
// ...,destinationType=T,destinationName=D,endpoint=Consumer,clientId=C,
// consumerId=<consumer id> — each open non-durable consumer (browsers
// included; a client without a client id is named by its connection id):
// ClientId, ConnectionId, DestinationName, Selector, UserName, Active,
// Durable, NoLocal, Exclusive, Retroactive, Priority, PrefetchSize,
// DestinationQueue, DestinationTopic, DestinationTemporary. Consumers and
// durable subscriptions have SubscriptionView's PendingQueueSize,
// DispatchedQueueSize, MessageCountAwaitingAcknowledge, EnqueueCounter
// (messages matched: a topic's when routed, a queue's when dispatched),
// DispatchedCounter, DequeueCounter (acknowledged), counted since the
// broker started (engine.SubCounters). The engine registers consumers
// for its advisories: with advisorySupport="false" there are none.
//
// ...,destinationType=T,destinationName=D,endpoint=Producer,clientId=C,
// producerId=P (endpoint=dynamicProducer,clientId=C,producerId=P for an
// anonymous one) — each producer OpenWire registers (the other protocols'
// are anonymous and unregistered): ClientId, ConnectionId, ProducerId,
// DestinationName, UserName, DestinationQueue, DestinationTopic,
// DestinationTemporary.
//
// ...,connector=clientConnectors,connectorName=P,connectionViewType=
// clientId|remoteAddress,connectionName=N — each client connection, by
// client id and by remote address, the connector named after its
// protocol: ClientId, RemoteAddress, UserName, Connected, Active.
//
// ...,connector=clientConnectors,connectorName=N — each transport
// connector (Options.Connectors): StatisticsEnabled,
// AllowLinkStealingEnabled (false), UpdateClusterClients,
// RebalanceClusterClients, UpdateClusterClientsOnRemove,
// UpdateClusterFilter (the connector's settings);
// operation connectionCount (the connections of its protocol: two
// connectors of one protocol count the same connections).
//
// ...,service=PersistenceAdapter,instanceName=KahaDBPersistenceAdapter[D_Index_D]
// — the KahaDB store (Options.PersistenceAdapter; none for the memory
// store or mKahaDB): Name ("KahaDBPersistenceAdapter[D,Index:D]", as
// ActiveMQ names a started store), Size (bytes of its files), Data (the
// journal file numbers, "[1, 2]"), Transactions (prepared XA
// transactions, "[]" when none).
//
// ...,connector=networkConnectors,networkConnectorName=N — each network
// connector (engine.Engine.Network, which package cluster registers):
// Name, MessageTTL, ConsumerTTL, PrefetchSize, AdvisoryPrefetchSize,
// UserName, BridgeTempDestinations, ConduitSubscriptions,
// DecreaseNetworkConsumerPriority, DispatchAsync, DynamicOnly, Duplex,
// SuppressDuplicateQueueSubscriptions, SuppressDuplicateTopicSubscriptions,
// Password and RemotePassword ("****", as ActiveMQ masks them),
// RemoteUserName; and under it, while the bridge is up,
// ...,networkBridge=<remote address> — each bridge (network.go):
// LocalAddress, RemoteAddress, RemoteBrokerName, RemoteBrokerId,
// LocalBrokerName, EnqueueCounter, DequeueCounter, ReceivedCounter,
// CreatedByDuplex; operation resetStats (admin). Under a bridge,
// ...,direction=outbound,destinationType=T,destinationName=D — each
// destination it forwarded to: Name, Count, Rate.
//
// Not built: the job scheduler bean, the network beans' start and stop,
// the destinations' resetStats and inbound beans, ConnectorView's resetStatistics,
// enableStatistics, disableStatistics, start, stop, the PersistenceAdapter's
// Statistics, DestinationView's resetStatistics and the setters other than
// those above (UseCache, PrioritizedMessages, ...: read-only here).
//
// # Ownership
//
// The handler keeps no state between requests. Each request builds a
// snapshot of the MBeans from the engine; the destinations' counters are
// read once per request, in one pass over the shards, however many beans
// a wildcard names. Every operation goes through the engine's exported,
// goroutine-safe methods.
package jolokia
