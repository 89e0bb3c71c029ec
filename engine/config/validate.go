package config

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"wharf/engine/message"
	"wharf/engine/selector"
)

// applyDefaults fills the settings whose default depends on other settings.
// (Plain defaults come from Default(), which the parsers start from.)
func (l *loader) applyDefaults() {
	c := &l.cfg
	if !c.Persistent {
		// BrokerService: persistent=false uses a MemoryPersistenceAdapter
		// whatever adapter is configured.
		c.Persistence.Kind = KindMemory
	}
	if !l.kahaDirSet {
		// DEVIATION: ActiveMQ puts an unset KahaDB directory under
		// <dataDirectory>/<brokerName>/KahaDB; the stock activemq.xml sets
		// ${activemq.data}/kahadb explicitly and Wharf uses that layout.
		c.Persistence.KahaDB.Directory = filepath.Join(c.DataDirectory, "kahadb")
	}
	if c.Persistence.Kind == KindLSM && !l.lsmDirSet {
		c.Persistence.LSM.Directory = filepath.Join(c.DataDirectory, "lsm")
	}
	if c.Persistence.Kind == KindMKahaDB {
		m := &c.Persistence.MKahaDB
		if !l.mkahaDirSet {
			// DEVIATION: ActiveMQ's MultiKahaDBPersistenceAdapter defaults
			// to <dataDirectory>/<brokerName>/mKahaDB; Wharf drops the
			// broker name level, as it does for <kahaDB>.
			m.Directory = filepath.Join(c.DataDirectory, "mkahadb")
		}
		if !l.mkahaFiltersSet {
			// DEVIATION: an <mKahaDB> with no filters starts in ActiveMQ
			// but refuses every persistent send ("No matching persistence
			// adapter configured for destination"); Wharf gives it one
			// catch-all KahaDB with the defaults.
			m.Filters = []FilteredKahaDB{{KahaDB: defaultKahaDB()}}
		}
		for i := range m.Filters {
			k := &m.Filters[i].KahaDB
			k.EnableJournalDiskSyncs = k.JournalDiskSyncStrategy == SyncAlways
		}
	}
	if !l.schedulerDirSet {
		// BrokerService.getSchedulerDirectoryFile:
		// <dataDirectory>/<brokerName>/scheduler.
		c.SchedulerDirectory = filepath.Join(c.DataDirectory, c.BrokerName, "scheduler")
	}
	if !l.tmpDirSet {
		// BrokerService.getTmpDataDirectory:
		// <dataDirectory>/<brokerName>/tmp_storage.
		c.TmpDataDirectory = filepath.Join(c.DataDirectory, c.BrokerName, "tmp_storage")
	}
	if !c.InterceptorsConfigured && !c.UseVirtualTopics {
		// createDefaultDestinationInterceptor adds the default virtual
		// topic only when useVirtualTopics is set.
		c.VirtualTopics = nil
	}
	k := &c.Persistence.KahaDB
	k.EnableJournalDiskSyncs = k.JournalDiskSyncStrategy == SyncAlways
	if c.OfflineDurableSubscriberTimeout < 0 {
		c.OfflineDurableSubscriberTimeout = 0 // ActiveMQ writes -1 for never
	}
	for i := range c.Transports {
		l.deriveTransport(i)
	}
	l.applySecurityDefaults()
	for i := range c.Policies {
		p := &c.Policies[i]
		switch {
		case p.Queue != "" && p.Topic == "":
			p.Destination = message.QueueDest(p.Queue)
		case p.Topic != "" && p.Queue == "":
			p.Destination = message.TopicDest(p.Topic)
		}
	}
}

// deriveTransport splits a connector URI into scheme, host, port, options.
func (l *loader) deriveTransport(i int) {
	t := &l.cfg.Transports[i]
	path := fmt.Sprintf("transport_connectors[%d].uri", i)
	if t.Name == "" {
		t.Name = t.URI // TransportConnector.getName(): the URI when unnamed
	}
	if t.URI == "" {
		l.fail(path, "uri is required")
		return
	}
	u, err := url.Parse(t.URI)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		l.fail(path, "%q is not a transport URI (want scheme://host:port)", t.URI)
		return
	}
	t.Scheme = strings.ToLower(u.Scheme)
	t.Host = u.Hostname()
	t.Options = map[string]string{}
	for k, vs := range u.Query() {
		t.Options[k] = vs[len(vs)-1]
	}
	ps := u.Port()
	if ps == "" {
		l.fail(path, "%q has no port", t.URI)
		return
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 0 || port > 65535 {
		l.fail(path, "%q: port %q is not in 0..65535", t.URI, ps)
		return
	}
	t.Port = port
	if t.Host == "" {
		l.fail(path, "%q has no host (write 127.0.0.1 for loopback)", t.URI)
	}
	if u.Path != "" && u.Path != "/" {
		l.fail(path, "%q: a path is not allowed in a connector URI", t.URI)
	}
}

// transportSchemes are the connector schemes Wharf can listen on, with the
// protocol each speaks.
var transportSchemes = map[string]string{
	"tcp": "openwire", "nio": "openwire",
	"stomp": "stomp", "stomp+nio": "stomp",
	"mqtt": "mqtt", "mqtt+nio": "mqtt",
	"amqp": "amqp", "amqp+nio": "amqp",
	"ws": "websocket", "ws+nio": "websocket", "stomp+ws": "websocket", "mqtt+ws": "websocket", "amqp+ws": "websocket",
}

// transportOptions are the connector URI options Wharf honours, each with
// its check.
var transportOptions = map[string]func(string) error{
	"maximumConnections": func(s string) error {
		if n, err := strconv.Atoi(s); err != nil || n < 0 {
			return fmt.Errorf("not a count")
		}
		return nil
	},
	"wireFormat.maxFrameSize": func(s string) error {
		if n, err := ParseSize(s); err != nil || n <= 0 {
			return fmt.Errorf("not a positive size")
		}
		return nil
	},
}

// Protocol options the config passes to the connector's protocol, which
// checks their values when the listener starts (an error there names the
// connector and the option).
func init() {
	for _, k := range []string{
		"wireFormat.maxInactivityDuration", "wireFormat.maxInactivityDurationInitalDelay",
		"wireFormat.tightEncodingEnabled", "wireFormat.cacheEnabled", "wireFormat.cacheSize",
		"wireFormat.stackTraceEnabled", "wireFormat.tcpNoDelayEnabled", "wireFormat.version",
		"wireFormat.maxDataLength", "transport.defaultHeartBeat", "transport.hbGracePeriodMultiplier",
		"transport.connectAttemptTimeout",
		// MQTT (protocols/mqtt.ParseOptions)
		"transport.defaultKeepAlive", "transport.activeMQSubscriptionPrefetch",
		"transport.publishDollarTopics", "transport.subscriptionStrategy",
		"transport.topicAliasMaximum", "transport.receiveMaximum",
		// WebSocket (protocols/transport/ws.ParseOptions)
		"websocket.maxTextMessageSize", "websocket.maxBinaryMessageSize",
		// AMQP (protocols/amqp.ParseOptions)
		"wireFormat.maxAmqpFrameSize", "wireFormat.idleTimeout", "wireFormat.allowNonSaslConnections",
		"transport.producerCredit", "wireFormat.producerCredit", "transport.transformer",
	} {
		transportOptions[k] = func(string) error { return nil }
	}
}

var brokerNameRE = regexp.MustCompile(`^[a-zA-Z0-9._\-:]+$`)

// Limits checked by validation.
const (
	minJournalFileLength = 64 << 10 // below this every message rolls a file
	maxJournalFileLength = 1<<31 - 1
	maxPrefetch          = 32767 // Short.MAX_VALUE, ActiveMQ's maximum prefetch
	maxShards            = 4096
)

func (l *loader) validate() {
	c := &l.cfg
	if c.BrokerName == "" {
		l.fail("broker_name", "must not be empty")
	} else if !brokerNameRE.MatchString(c.BrokerName) {
		// DEVIATION: BrokerService rewrites other characters to "_" with a
		// warning; the name appears in JMX names and store paths, so Wharf
		// refuses it instead.
		l.fail("broker_name", "%q may contain only letters, digits and . _ - :", c.BrokerName)
	}
	if c.DataDirectory == "" {
		l.fail("data_directory", "must not be empty")
	}
	if c.Shards < 0 || c.Shards > maxShards {
		l.fail("shards", "%d is not in 0..%d (0 means GOMAXPROCS)", c.Shards, maxShards)
	}
	if c.OfflineDurableSubscriberTaskSchedule <= 0 {
		l.fail("offline_durable_subscriber_task_schedule", "%v must be positive", c.OfflineDurableSubscriberTaskSchedule)
	}
	if c.SchedulerDirectory == "" {
		l.fail("scheduler_directory", "must not be empty")
	}
	if c.TmpDataDirectory == "" {
		l.fail("tmp_data_directory", "must not be empty")
	}
	l.validateTransports()
	l.validateClusterClients()
	l.validateNetwork()
	l.validateSecurity()
	l.validateStore()
	l.validateInterceptors()
	l.validateHTTP()
	seen := map[message.Destination]int{}
	for i := range c.Policies {
		path := fmt.Sprintf("destination_policy[%d]", i)
		p := &c.Policies[i]
		switch {
		case p.Queue != "" && p.Topic != "":
			l.fail(path, "set exactly one of queue and topic, not both (queue %q, topic %q)", p.Queue, p.Topic)
		case p.Queue == "" && p.Topic == "":
			l.fail(path, "set exactly one of queue and topic (the destination pattern)")
		case strings.Contains(p.Destination.Name, ","):
			l.fail(path, "composite pattern %q is not supported by Wharf yet", p.Destination.Name)
		default:
			if j, dup := seen[p.Destination]; dup {
				l.fail(path, "duplicate entry for %s %q (first at line %d): ActiveMQ would pick one at random",
					strings.ToLower(p.Destination.Type.String()), p.Destination.Name, c.Policies[j].Line)
			} else {
				seen[p.Destination] = i
			}
		}
		l.validatePolicy(path, p)
	}
	if c.DefaultPolicy != nil {
		for key, v := range map[string]string{"queue": c.DefaultPolicy.Queue, "topic": c.DefaultPolicy.Topic} {
			if v != "" {
				l.fail("default_policy."+key, "the default entry applies to every destination; remove its %s pattern %q", key, v)
			}
		}
		l.validatePolicy("default_policy", c.DefaultPolicy)
	}
	u := &c.SystemUsage
	l.positive("system_usage.memory_limit", u.MemoryLimit)
	l.positive("system_usage.store_limit", u.StoreLimit)
	l.positive("system_usage.temp_limit", u.TempLimit)
	if u.MemoryPercentOfJVMHeap < 0 || u.MemoryPercentOfJVMHeap > 100 {
		l.fail("system_usage.memory_percent_of_ram", "%d is not a percentage in 0..100", u.MemoryPercentOfJVMHeap)
	}
	l.positive("system_usage.job_scheduler_limit", u.JobSchedulerLimit)
	if u.SendFailIfNoSpaceAfterTimeout < 0 {
		l.fail("system_usage.send_fail_if_no_space_after_timeout", "%v must not be negative", u.SendFailIfNoSpaceAfterTimeout)
	}
}

func (l *loader) positive(path string, n int64) {
	if n <= 0 {
		l.fail(path, "%d must be a positive size", n)
	}
}

func (l *loader) validateTransports() {
	names := map[string]int{}
	addrs := map[string]int{}
	explained := -1 // the connector whose refusal says the ways out
	for i := range l.cfg.Transports {
		t := &l.cfg.Transports[i]
		path := fmt.Sprintf("transport_connectors[%d]", i)
		if j, dup := names[t.Name]; dup {
			l.fail(path+".name", "duplicate connector name %q (first at line %d)", t.Name, l.cfg.Transports[j].Line)
		} else {
			names[t.Name] = i
		}
		if t.Scheme == "" {
			continue // URI already reported
		}
		upath := path + ".uri"
		if _, ok := transportSchemes[t.Scheme]; !ok {
			l.fail(upath, "scheme %q is not supported by Wharf yet (supported: %s)", t.Scheme, schemeList())
		} else if IsTLSScheme(t.Scheme) && l.cfg.SSLContext == nil {
			l.fail(upath, "scheme %q needs the broker's certificate: %s", t.Scheme, l.tlsAdvice())
		}
		// Secure by default (STYLE.md §8): a connector off loopback
		// needs an authentication plugin, or the operator's word that
		// the network is trusted.
		exposed := t.Host != "" && !isLoopback(t.Host) && !l.cfg.TrustedNetwork && l.cfg.Security.Authentication == nil
		if exposed && explained >= 0 {
			l.fail(upath, "listening on %q needs authentication (see connector %q for the ways out)", t.Host, l.cfg.Transports[explained].Name)
		} else if exposed {
			explained = i
			l.fail(upath, "listening on %q needs authentication: %s. "+
				"Otherwise listen on 127.0.0.1, or, only on a network you trust with the broker, let anyone who can reach the port connect without credentials: "+
				"wharf run --trusted-network, <broker xmlns:wharf=%q wharf:trustedNetwork=\"true\">, or trusted_network: true in YAML", t.Host, l.authAdvice(), WharfNS)
		}
		if t.Port != 0 {
			key := net.JoinHostPort(t.Host, strconv.Itoa(t.Port))
			if j, dup := addrs[key]; dup {
				l.fail(upath, "address %s is already used by connector %q", key, l.cfg.Transports[j].Name)
			} else {
				addrs[key] = i
			}
		}
		keys := make([]string, 0, len(t.Options))
		for k := range t.Options {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		isTLS := IsTLSScheme(t.Scheme)
		if isTLS {
			parsed := true
			t.TLSOptions = parseTLSOptions(t.Options, func(key, msg string) {
				l.fail(upath, "option %s=%q: %s", key, t.Options[key], msg)
				parsed = false
			})
			if parsed && t.TLS != nil {
				l.checkTLSContext(upath, t)
			}
		}
		for _, k := range keys {
			if tlsOptions[k] {
				if !isTLS {
					l.fail(upath, "option %q applies to TLS connectors only (ssl, nio+ssl, stomp+ssl, mqtt+ssl, amqp+ssl, wss, ...), not to %s", k, t.Scheme)
				}
				continue
			}
			check, ok := transportOptions[k]
			if !ok {
				l.fail(upath, "option %q is not supported by Wharf yet", k)
				continue
			}
			if err := check(t.Options[k]); err != nil {
				l.fail(upath, "option %s=%q: %v", k, t.Options[k], err)
			}
		}
	}
}

func schemeList() string {
	s := make([]string, 0, len(transportSchemes))
	for k := range transportSchemes {
		s = append(s, k)
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

// Loopback reports whether t listens on a loopback address only
// (127.0.0.1, ::1, localhost): the addresses Wharf binds without
// TrustedNetwork.
func (t Transport) Loopback() bool { return isLoopback(t.Host) }

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (l *loader) validateStore() {
	p := &l.cfg.Persistence
	switch p.Kind {
	case KindKahaDB:
		if p.KahaDB.Directory == "" {
			l.fail("persistence.kahadb.directory", "must not be empty")
		}
		l.validateKahaDB("persistence.kahadb.", &p.KahaDB)
	case KindMKahaDB:
		l.validateMKahaDB(&p.MKahaDB)
	case KindJDBC:
		l.validateJDBC(&p.JDBC)
	case KindLSM:
		const lp = "persistence.lsm."
		s := &p.LSM
		if s.Directory == "" {
			l.fail(lp+"directory", "must not be empty")
		}
		if s.MemTableSize < 1<<20 {
			l.fail(lp+"mem_table_size", "%d bytes is below the 1 MiB minimum", s.MemTableSize)
		}
		if s.ValueLogFileSize < 1<<20 || s.ValueLogFileSize >= 2<<30 {
			l.fail(lp+"value_log_file_size", "%d bytes is not in 1 MiB..2 GiB", s.ValueLogFileSize)
		}
		if s.ValueThreshold < 64 || s.ValueThreshold > s.MemTableSize*15/100 {
			l.fail(lp+"value_threshold", "%d bytes is not in 64..%d (15%% of mem_table_size)", s.ValueThreshold, s.MemTableSize*15/100)
		}
		if s.CleanupInterval < 0 {
			l.fail(lp+"cleanup_interval", "%s is negative", s.CleanupInterval)
		}
	}
}

// validateMKahaDB checks <mKahaDB>: a directory, at least one filter, each
// with at most one valid pattern, and a catch-all last (and only last: a
// filter after a catch-all could never match).
func (l *loader) validateMKahaDB(m *MKahaDB) {
	const mp = "persistence.mkahadb"
	if m.Directory == "" {
		l.fail(mp+".directory", "must not be empty")
	}
	if len(m.Filters) == 0 {
		l.fail(mp+".filtered", "at least one filter is required (end with a catch-all: a filter with no queue or topic)")
		return
	}
	names := map[string]int{}
	for i := range m.Filters {
		f := &m.Filters[i]
		path := fmt.Sprintf("%s.filtered[%d]", mp, i)
		last := i == len(m.Filters)-1
		switch {
		case f.Queue != "" && f.Topic != "":
			l.fail(path, "set at most one of queue and topic, not both (queue %q, topic %q)", f.Queue, f.Topic)
		case f.Queue == "" && f.Topic == "":
			if !last {
				l.fail(path, "a catch-all filter (no queue or topic) must be the last: the %d after it would never be used", len(m.Filters)-1-i)
			}
		default:
			pat := f.Queue + f.Topic
			key := path + ".queue"
			if f.Topic != "" {
				key = path + ".topic"
			}
			if err := checkFilterPattern(pat); err != "" {
				l.fail(key, "%q %s", pat, err)
			} else if j, dup := names[f.Destination().String()]; dup {
				l.fail(key, "%q is also the pattern of filter %d: the second is never used", pat, j)
			} else {
				names[f.Destination().String()] = i
			}
			if last {
				l.fail(path, "the last filter must be a catch-all (no queue or topic, perDestination or not): a destination matching no filter could not be stored")
			}
		}
		l.validateKahaDB(path+".kahadb.", &f.KahaDB)
		if f.KahaDB.LockKeepAlivePeriod != 0 {
			// Each filter's store has its own lock, none the
			// broker's: master/slave is a plain <kahaDB>'s.
			l.fail(path+".kahadb.lock_keep_alive_period", "lockKeepAlivePeriod is not supported inside <mKahaDB> by Wharf yet: set it on a plain <kahaDB>")
		}
	}
}

// checkFilterPattern returns why a filter's destination pattern is
// invalid, or "".
func checkFilterPattern(p string) string {
	if strings.Contains(p, ",") {
		return "is a composite pattern, which is not supported by Wharf yet"
	}
	els := strings.Split(p, ".")
	for i, e := range els {
		switch {
		case e == "":
			return "has an empty element"
		case e == ">" && i != len(els)-1:
			return "has \">\" before its last element"
		case e != "*" && e != ">" && strings.ContainsAny(e, "*>"):
			return "mixes a wildcard with other characters in one element"
		}
	}
	return ""
}

func (l *loader) validateKahaDB(kp string, k *KahaDB) {
	switch {
	case k.JournalMaxFileLength < minJournalFileLength:
		l.fail(kp+"journal_max_file_length", "%s is below the minimum %s", formatSize(k.JournalMaxFileLength), formatSize(minJournalFileLength))
	case k.JournalMaxFileLength > maxJournalFileLength:
		l.fail(kp+"journal_max_file_length", "%s is above the maximum %d bytes (ActiveMQ's journalMaxFileLength is an int)", formatSize(k.JournalMaxFileLength), maxJournalFileLength)
	}
	if k.JournalMaxWriteBatchSize <= 0 || k.JournalMaxWriteBatchSize > maxJournalFileLength {
		l.fail(kp+"journal_max_write_batch_size", "%s is not in 1..%d bytes", formatSize(k.JournalMaxWriteBatchSize), maxJournalFileLength)
	}
	switch k.JournalDiskSyncStrategy {
	case SyncAlways, SyncNever:
	case SyncPeriodic:
		if k.JournalDiskSyncInterval <= 0 {
			l.fail(kp+"journal_disk_sync_interval", "%v must be positive with the periodic strategy", k.JournalDiskSyncInterval)
		}
	default:
		l.fail(kp+"journal_disk_sync_strategy", "%q is not one of always, periodic, never", k.JournalDiskSyncStrategy)
	}
	if k.CheckpointInterval < 0 {
		l.fail(kp+"checkpoint_interval", "%v must not be negative (0 disables)", k.CheckpointInterval)
	}
	if k.CleanupInterval < 0 {
		l.fail(kp+"cleanup_interval", "%v must not be negative (0 disables)", k.CleanupInterval)
	}
	if k.IndexCacheSize <= 0 {
		l.fail(kp+"index_cache_size", "%d pages must be positive", k.IndexCacheSize)
	}
	if k.IndexWriteBatchSize <= 0 {
		l.fail(kp+"index_write_batch_size", "%d pages must be positive", k.IndexWriteBatchSize)
	}
	if k.CompactAcksAfterNoGC < 0 {
		l.fail(kp+"compact_acks_after_no_gc", "%d must not be negative", k.CompactAcksAfterNoGC)
	}
	if k.LockAcquireSleepInterval <= 0 {
		l.fail(kp+"lock_acquire_sleep_interval", "%v must be positive", k.LockAcquireSleepInterval)
	}
	if k.LockKeepAlivePeriod < 0 {
		l.fail(kp+"lock_keep_alive_period", "%v must not be negative", k.LockKeepAlivePeriod)
	}
}

func (l *loader) validatePolicy(path string, p *PolicyEntry) {
	for _, f := range []struct {
		key string
		n   int
	}{
		{"queue_prefetch", p.QueuePrefetch},
		{"topic_prefetch", p.TopicPrefetch},
		{"durable_topic_prefetch", p.DurableTopicPrefetch},
		{"queue_browser_prefetch", p.QueueBrowserPrefetch},
	} {
		if f.n < 0 || f.n > maxPrefetch {
			l.fail(path+"."+f.key, "%d is not in 0..%d", f.n, maxPrefetch)
		}
	}
	if p.MemoryLimit < 0 {
		l.fail(path+".memory_limit", "%d must not be negative", p.MemoryLimit)
	}
	if p.ExpireMessagesPeriod < 0 {
		l.fail(path+".expire_messages_period", "%v must not be negative (0 disables the sweep)", p.ExpireMessagesPeriod)
	}
	if p.MaxExpirePageSize <= 0 {
		l.fail(path+".max_expire_page_size", "%d must be positive", p.MaxExpirePageSize)
	}
	if p.CursorMemoryHighWaterMark < 1 || p.CursorMemoryHighWaterMark > 100 {
		l.fail(path+".cursor_memory_high_water_mark", "%d is not a percentage in 1..100", p.CursorMemoryHighWaterMark)
	}
	if p.StoreUsageHighWaterMark < 1 || p.StoreUsageHighWaterMark > 100 {
		l.fail(path+".store_usage_high_water_mark", "%d is not a percentage in 1..100", p.StoreUsageHighWaterMark)
	}
	if p.BlockedProducerWarningInterval <= 0 {
		l.fail(path+".blocked_producer_warning_interval", "%v must be positive", p.BlockedProducerWarningInterval)
	}
	if p.MaxPageSize <= 0 {
		l.fail(path+".max_page_size", "%d must be positive", p.MaxPageSize)
	}
	if p.InactiveTimeoutBeforeGC < 0 || (p.GCInactiveDestinations && p.InactiveTimeoutBeforeGC == 0) {
		l.fail(path+".inactive_timeout_before_gc", "%v must be positive", p.InactiveTimeoutBeforeGC)
	}
	switch p.MessageGroupMapFactoryType {
	case GroupMapCached, GroupMapSimple:
	case "bucket":
		l.fail(path+".message_group_map_factory_type", "%q is not supported by Wharf yet (supported: %s, %s)", p.MessageGroupMapFactoryType, GroupMapCached, GroupMapSimple)
	default:
		l.fail(path+".message_group_map_factory_type", "%q is not one of %s, %s", p.MessageGroupMapFactoryType, GroupMapCached, GroupMapSimple)
	}
	if p.PendingQueuePolicy != "" && p.PendingQueuePolicy != "vm" {
		l.fail(path+".pending_queue_policy", "%q: only vm (vmQueueCursor) is supported", p.PendingQueuePolicy)
	}
	if p.ReplayDelay < 0 {
		l.fail(path+".replay_delay", "%v must not be negative", p.ReplayDelay)
	}
	if p.MaxAuditDepth <= 0 {
		l.fail(path+".max_audit_depth", "%d must be positive", p.MaxAuditDepth)
	}
	if p.MaxProducersToAudit <= 0 {
		l.fail(path+".max_producers_to_audit", "%d must be positive", p.MaxProducersToAudit)
	}
	if p.PendingMessageLimit < -1 {
		l.fail(path+".pending_message_limit", "%d must not be negative", p.PendingMessageLimit)
	}
	d := p.DeadLetter
	if d == nil {
		return
	}
	dp := path + ".dead_letter_strategy"
	if d.Expiration < 0 {
		l.fail(dp, "expiration %v must not be negative", d.Expiration)
	}
	switch d.Kind {
	case DLQShared:
		if d.DeadLetterQueue == "" {
			l.fail(dp, "the shared dead letter queue name must not be empty")
		}
	case DLQIndividual:
		if d.QueuePrefix == "" && d.QueueSuffix == "" && d.UseQueueForQueueMessages {
			l.fail(dp, "queuePrefix and queueSuffix are both empty: queue messages would be dead-lettered onto their own queue")
		}
		if d.TopicPrefix == "" && d.TopicSuffix == "" && !d.UseQueueForTopicMessages {
			l.fail(dp, "topicPrefix and topicSuffix are both empty: topic messages would be dead-lettered onto their own topic")
		}
	}
}

func (l *loader) validateInterceptors() {
	c := &l.cfg
	for i := range c.VirtualTopics {
		v := &c.VirtualTopics[i]
		path := fmt.Sprintf("destination_interceptors.virtual_topics[%d]", i)
		l.checkDestName(path+".name", "name", message.TopicDest(v.Name))
	}
	for i := range c.Composites {
		comp := &c.Composites[i]
		path := fmt.Sprintf("destination_interceptors.composites[%d]", i)
		key := destKey(comp.Destination.Type)
		switch {
		case comp.Destination.Name == "" && l.xml:
			l.fail(path, "name is required")
		case comp.Destination.Name == "":
			l.fail(path, "set exactly one of queue and topic (the destination to intercept)")
		case l.checkDestName(path+"."+key, l.word("name", key), comp.Destination):
			l.checkCompositeOverlap(i)
		}
		if len(comp.ForwardTo) == 0 {
			if l.xml {
				l.fail(path+".forward_to", "forwards nowhere: add <forwardTo> with at least one <queue>, <topic> or <filteredDestination>")
			} else {
				l.fail(path+".forward_to", "forwards nowhere: forward_to needs at least one destination")
			}
			continue
		}
		for j, fw := range comp.ForwardTo {
			fp := fmt.Sprintf("%s.forward_to[%d]", path, j)
			dk := destKey(fw.Destination.Type)
			switch {
			case fw.Destination.Name == "" && !l.xml:
				l.fail(fp, "set exactly one of queue and topic (the target)")
			case fw.Destination.Name == "" && fw.Selector != "":
				l.fail(fp, "set queue or topic (the target)")
			case fw.Destination.Name == "":
				l.fail(fp, "physicalName is required")
			case !l.checkDestName(fp+"."+dk, l.word("physicalName", dk), fw.Destination):
			case comp.Destination.Name != "" && comp.Destination.Matches(fw.Destination):
				// The forwarded copy is sent through the broker again
				// and intercepted by the same composite.
				l.fail(fp+"."+dk, "%s %q is intercepted by this composite itself: every send would loop", dk, fw.Destination.Name)
			}
			if fw.Selector != "" {
				if _, err := selector.Parse(fw.Selector); err != nil {
					l.fail(fp+".selector", "%v", err)
				}
			}
		}
	}
}

// checkCompositeOverlap reports composite i when an earlier composite of
// the same kind could intercept the same destination.
func (l *loader) checkCompositeOverlap(i int) {
	c := &l.cfg
	comp := &c.Composites[i]
	key := destKey(comp.Destination.Type)
	for j := 0; j < i; j++ {
		o := &c.Composites[j]
		if o.Destination.Type != comp.Destination.Type || o.Destination.Name == "" || !patternsOverlap(o.Destination.Name, comp.Destination.Name) {
			continue
		}
		// DEVIATION: ActiveMQ applies every composite whose name matches
		// a destination, in no defined order; Wharf allows one per
		// destination so that a send has one ordered set of forwards.
		path := fmt.Sprintf("destination_interceptors.composites[%d].%s", i, key)
		if o.Destination.Name == comp.Destination.Name {
			l.fail(path, "a composite %s %q is already defined (line %d)", key, o.Destination.Name, o.Line)
		} else {
			l.fail(path, "overlaps the composite %s %q (line %d): both would intercept some %ss; Wharf allows one composite per destination",
				key, o.Destination.Name, o.Line, key)
		}
		return
	}
}

// word picks the XML or the YAML name of a setting for messages.
func (l *loader) word(xml, yaml string) string {
	if l.xml {
		return xml
	}
	return yaml
}

// checkDestName reports an empty or composite ("a,b") name of a virtual
// destination setting; it returns whether the name is usable.
func (l *loader) checkDestName(path, what string, d message.Destination) bool {
	switch {
	case strings.TrimSpace(d.Name) == "":
		l.fail(path, "%s must not be empty", what)
	case strings.Contains(d.Name, ","):
		l.fail(path, "composite name %q is not supported by Wharf yet: write one element per destination", d.Name)
	default:
		return true
	}
	return false
}

// patternsOverlap reports whether some destination name is matched by both
// dotted patterns a and b (message.MatchName's rules: "*" is one element,
// ">" any number of trailing elements, "x.>" also matches "x").
func patternsOverlap(a, b string) bool {
	return elemsOverlap(strings.Split(a, "."), strings.Split(b, "."))
}

func elemsOverlap(a, b []string) bool {
	switch {
	case len(a) > 0 && a[0] == ">", len(b) > 0 && b[0] == ">":
		return true
	case len(a) == 0 || len(b) == 0:
		return len(a) == 0 && len(b) == 0
	case a[0] != b[0] && a[0] != "*" && b[0] != "*":
		return false
	}
	return elemsOverlap(a[1:], b[1:])
}

// freeze returns a deep copy of c that shares no memory with the loader.
func freeze(c Config) Config {
	out := c
	out.Transports = make([]Transport, len(c.Transports))
	for i, t := range c.Transports {
		t.Options = cloneMap(t.Options)
		t.TLS = cloneSSL(t.TLS)
		t.TLSOptions.Versions = slices.Clone(t.TLSOptions.Versions)
		t.TLSOptions.CipherSuites = slices.Clone(t.TLSOptions.CipherSuites)
		out.Transports[i] = t
	}
	out.NetworkConnectors = slices.Clone(c.NetworkConnectors)
	for i, nc := range c.NetworkConnectors {
		nc.Peers = slices.Clone(nc.Peers)
		nc.DynamicallyIncluded = slices.Clone(nc.DynamicallyIncluded)
		nc.Excluded = slices.Clone(nc.Excluded)
		nc.StaticallyIncluded = slices.Clone(nc.StaticallyIncluded)
		out.NetworkConnectors[i] = nc
	}
	out.SSLContext = cloneSSL(c.SSLContext)
	if c.HTTP.HTTPS != nil {
		h := *c.HTTP.HTTPS
		out.HTTP.HTTPS = &h
	}
	out.HTTP.WebSocket = slices.Clone(c.HTTP.WebSocket)
	if c.Encryption != nil {
		e := *c.Encryption
		out.Encryption = &e
	}
	if a := c.Security.Authentication; a != nil {
		a2 := *a
		a2.Users = make([]AuthUser, len(a.Users))
		for i, u := range a.Users {
			u.Groups = slices.Clone(u.Groups)
			a2.Users[i] = u
		}
		if a.Users == nil {
			a2.Users = nil
		}
		out.Security.Authentication = &a2
	}
	if z := c.Security.Authorization; z != nil {
		z2 := *z
		z2.Entries = make([]AuthorizationEntry, len(z.Entries))
		for i, e := range z.Entries {
			z2.Entries[i] = cloneEntry(e)
		}
		if z.Default != nil {
			d := cloneEntry(*z.Default)
			z2.Default = &d
		}
		if z.Temp != nil {
			d := cloneEntry(*z.Temp)
			z2.Temp = &d
		}
		out.Security.Authorization = &z2
	}
	out.Policies = make([]PolicyEntry, len(c.Policies))
	for i, p := range c.Policies {
		out.Policies[i] = clonePolicy(p)
	}
	if c.DefaultPolicy != nil {
		p := clonePolicy(*c.DefaultPolicy)
		out.DefaultPolicy = &p
	}
	out.VirtualTopics = append(make([]VirtualTopic, 0, len(c.VirtualTopics)), c.VirtualTopics...)
	out.Composites = make([]Composite, len(c.Composites))
	for i, comp := range c.Composites {
		comp.ForwardTo = append(make([]Forward, 0, len(comp.ForwardTo)), comp.ForwardTo...)
		out.Composites[i] = comp
	}
	return out
}

func cloneSSL(s *SSLContext) *SSLContext {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}

func cloneEntry(e AuthorizationEntry) AuthorizationEntry {
	e.Read = slices.Clone(e.Read)
	e.Write = slices.Clone(e.Write)
	e.Admin = slices.Clone(e.Admin)
	return e
}

func clonePolicy(p PolicyEntry) PolicyEntry {
	if p.DeadLetter != nil {
		d := *p.DeadLetter
		p.DeadLetter = &d
	}
	return p
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
