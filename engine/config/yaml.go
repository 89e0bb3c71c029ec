package config

import (
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"wharf/engine/message"
)

// ParseYAML reads the native YAML form: the same settings as activemq.xml
// under snake_case keys (broker_name, transport_connectors,
// persistence.kahadb or persistence.mkahadb, destination_policy, default_policy, system_usage).
// Sizes are integers (bytes) or size strings ("32mb", "1 gb"); durations are
// Go duration strings ("30s"). Unknown keys are errors. name is used in
// error positions. docs/config.md lists every key.
func ParseYAML(r io.Reader, name string, vars map[string]string) (*Config, error) {
	return parseYAML(r, name, vars, LoadOptions{})
}

func parseYAML(r io.Reader, name string, vars map[string]string, o LoadOptions) (*Config, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("config: reading %s: %w", name, err)
	}
	l := newLoader(name, false, vars)
	l.opts = o
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line := 0
		msg := err.Error()
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		l.problemAt("", line, 0, "YAML syntax error: "+msg)
		return nil, &Error{Problems: l.problems}
	}
	p := &yamlParser{l: l}
	if len(doc.Content) > 0 {
		p.encryptionFirst(doc.Content[0])
		p.top(doc.Content[0])
	}
	return l.finish()
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

type yamlParser struct {
	l *loader
}

// handler receives the value node of one key and its path.
type handler func(n *yaml.Node, path string)

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// mapping dispatches the keys of a mapping node; unknown keys are errors.
// A null node is an empty mapping.
func (p *yamlParser) mapping(n *yaml.Node, path string, hs map[string]handler) {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if n.Kind != yaml.MappingNode {
		p.l.problemAt(path, n.Line, n.Column, fmt.Sprintf("%s: want a mapping of keys, not %s", orRoot(path), kind(n)))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		kp := join(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			p.l.problemAt(kp, k.Line, k.Column, fmt.Sprintf("%s: duplicate key (first at line %d)", kp, first))
			continue
		}
		seen[k.Value] = k.Line
		h, ok := hs[k.Value]
		if !ok {
			msg := fmt.Sprintf("%s: unknown key %q", orRoot(path), k.Value)
			if near := suggest(k.Value, slices.Collect(maps.Keys(hs))); near != "" {
				msg += fmt.Sprintf("; did you mean %q?", near)
			}
			p.l.problemAt(kp, k.Line, k.Column, msg)
			continue
		}
		p.l.note(kp, k.Line, k.Column, kp)
		h(v, kp)
	}
}

func orRoot(path string) string {
	if path == "" {
		return "top level"
	}
	return path
}

func kind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return fmt.Sprintf("%q", n.Value)
}

// scalar turns a node into a val for the loader's setters.
func (p *yamlParser) scalar(set func(*loader, val)) handler {
	return func(n *yaml.Node, path string) {
		n = deref(n)
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
			p.l.problemAt(path, n.Line, n.Column, fmt.Sprintf("%s: want a value, not %s", path, kindOrEmpty(n)))
			return
		}
		set(p.l, val{raw: n.Value, path: path, line: n.Line, col: n.Column,
			label: fmt.Sprintf("%s %q", path, n.Value), yamlInt: n.Tag == "!!int"})
	}
}

func kindOrEmpty(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return "nothing"
	}
	return kind(n)
}

func (p *yamlParser) str(dst *string) handler {
	return p.scalar(func(l *loader, v val) { l.setString(dst, v) })
}
func (p *yamlParser) boolean(dst *bool) handler {
	return p.scalar(func(l *loader, v val) { l.setBool(dst, v) })
}
func (p *yamlParser) size(dst *int64) handler {
	return p.scalar(func(l *loader, v val) { l.setSize(dst, v) })
}
func (p *yamlParser) integer(dst *int) handler {
	return p.scalar(func(l *loader, v val) { l.setInt(dst, v) })
}
func (p *yamlParser) duration(dst *time.Duration) handler {
	return p.scalar(func(l *loader, v val) { l.setDuration(dst, v) })
}

// list walks a sequence node, calling each for every element.
func (p *yamlParser) list(n *yaml.Node, path string, each func(el *yaml.Node, path string)) {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if n.Kind != yaml.SequenceNode {
		p.l.problemAt(path, n.Line, n.Column, fmt.Sprintf("%s: want a list, not %s", path, kind(n)))
		return
	}
	for i, el := range n.Content {
		ep := fmt.Sprintf("%s[%d]", path, i)
		el = deref(el)
		p.l.note(ep, el.Line, el.Column, ep)
		each(el, ep)
	}
}

func (p *yamlParser) top(n *yaml.Node) {
	l, c := p.l, &p.l.cfg
	p.mapping(n, "", map[string]handler{
		"broker_name":       p.str(&c.BrokerName),
		"data_directory":    p.str(&c.DataDirectory),
		"persistent":        p.boolean(&c.Persistent),
		"use_jmx":           p.boolean(&c.UseJMX),
		"advisory_support":  p.boolean(&c.AdvisorySupport),
		"scheduler_support": p.boolean(&c.SchedulerSupport),
		"enable_statistics": p.boolean(&c.EnableStatistics),
		"scheduler_directory": func(n *yaml.Node, path string) {
			l.schedulerDirSet = true
			p.str(&c.SchedulerDirectory)(n, path)
		},
		"tmp_data_directory": func(n *yaml.Node, path string) {
			l.tmpDirSet = true
			p.str(&c.TmpDataDirectory)(n, path)
		},
		"anonymous_producer_advisory_support":      p.boolean(&c.AnonymousProducerAdvisorySupport),
		"use_virtual_topics":                       p.boolean(&c.UseVirtualTopics),
		"use_virtual_dest_subs":                    p.boolean(&c.UseVirtualDestSubs),
		"use_virtual_dest_subs_on_creation":        p.boolean(&c.UseVirtualDestSubsOnCreation),
		"destination_interceptors":                 p.interceptors,
		"offline_durable_subscriber_timeout":       p.duration(&c.OfflineDurableSubscriberTimeout),
		"offline_durable_subscriber_task_schedule": p.duration(&c.OfflineDurableSubscriberTaskSchedule),
		"shards":                        p.integer(&c.Shards),
		"trusted_network":               p.boolean(&c.TrustedNetwork),
		"security":                      p.security,
		"ssl_context":                   p.sslContext,
		"http":                          p.http,
		"encryption":                    func(*yaml.Node, string) {}, // read first, by encryptionFirst
		"network_connectors":            p.networkConnectors,
		"network_connector_start_async": p.boolean(&c.NetworkConnectorStartAsync),
		"transport_connectors": func(n *yaml.Node, path string) {
			p.list(n, path, func(el *yaml.Node, ep string) {
				c.Transports = append(c.Transports, Transport{Line: el.Line})
				t := &c.Transports[len(c.Transports)-1]
				p.mapping(el, ep, map[string]handler{
					"name":                             p.str(&t.Name),
					"uri":                              p.str(&t.URI),
					"update_cluster_clients":           p.boolean(&t.ClusterClients.Update),
					"rebalance_cluster_clients":        p.boolean(&t.ClusterClients.Rebalance),
					"update_cluster_clients_on_remove": p.boolean(&t.ClusterClients.UpdateOnRemove),
					"update_cluster_filter":            p.str(&t.ClusterClients.Filter),
					"discovery_uri":                    p.str(&t.DiscoveryURI),
					"audit_network_producers":          p.boolean(&t.AuditNetworkProducers),
				})
			})
		},
		"persistence": func(n *yaml.Node, path string) {
			n = deref(n)
			if n.Kind == yaml.MappingNode && len(n.Content) > 2 {
				l.problemAt(path, n.Line, n.Column, path+": set exactly one of kahadb, mkahadb, lsm and memory")
			}
			p.mapping(n, path, map[string]handler{
				"memory": func(n *yaml.Node, path string) {
					c.Persistence.Kind = KindMemory
					p.mapping(n, path, nil)
				},
				"kahadb": func(n *yaml.Node, path string) {
					c.Persistence.Kind = KindKahaDB
					p.mapping(n, path, p.kahaDBKeys(&c.Persistence.KahaDB, &l.sync, func() { l.kahaDirSet = true }))
				},
				"jdbc": p.jdbc,
				"lsm": func(n *yaml.Node, path string) {
					// Wharf's own store (<wharfLSM>): ActiveMQ has none.
					c.Persistence.Kind = KindLSM
					s := &c.Persistence.LSM
					p.mapping(n, path, map[string]handler{
						"directory": func(n *yaml.Node, path string) {
							l.lsmDirSet = true
							p.str(&s.Directory)(n, path)
						},
						"sync_writes":         p.boolean(&s.SyncWrites),
						"cleanup_interval":    p.duration(&s.CleanupInterval),
						"mem_table_size":      p.size(&s.MemTableSize),
						"value_threshold":     p.size(&s.ValueThreshold),
						"value_log_file_size": p.size(&s.ValueLogFileSize),
						"min_free_disk":       p.size(&s.MinFreeDisk),
					})
				},
				"mkahadb": func(n *yaml.Node, path string) {
					c.Persistence.Kind = KindMKahaDB
					m := &c.Persistence.MKahaDB
					p.mapping(n, path, map[string]handler{
						"directory": func(n *yaml.Node, path string) {
							l.mkahaDirSet = true
							p.str(&m.Directory)(n, path)
						},
						"filtered": func(n *yaml.Node, path string) {
							l.mkahaFiltersSet = true
							p.list(n, path, func(el *yaml.Node, ep string) {
								m.Filters = append(m.Filters, FilteredKahaDB{KahaDB: defaultKahaDB(), Line: el.Line})
								f := &m.Filters[len(m.Filters)-1]
								p.mapping(el, ep, map[string]handler{
									"queue":           p.str(&f.Queue),
									"topic":           p.str(&f.Topic),
									"per_destination": p.boolean(&f.PerDestination),
									"kahadb": func(n *yaml.Node, path string) {
										p.mapping(n, path, p.kahaDBKeys(&f.KahaDB, &syncSet{}, func() {}))
									},
								})
							})
						},
					})
				},
			})
		},
		"destination_policy": func(n *yaml.Node, path string) {
			p.list(n, path, func(el *yaml.Node, ep string) {
				e := DefaultPolicyEntry()
				e.Line = el.Line
				p.policy(el, ep, &e)
				c.Policies = append(c.Policies, e)
			})
		},
		"default_policy": func(n *yaml.Node, path string) {
			e := DefaultPolicyEntry()
			e.Line = deref(n).Line
			p.policy(n, path, &e)
			c.DefaultPolicy = &e
		},
		"system_usage": func(n *yaml.Node, path string) {
			u := &c.SystemUsage
			p.mapping(n, path, map[string]handler{
				"memory_limit":                        p.size(&u.MemoryLimit),
				"memory_percent_of_ram":               p.integer(&u.MemoryPercentOfJVMHeap),
				"store_limit":                         p.size(&u.StoreLimit),
				"temp_limit":                          p.size(&u.TempLimit),
				"job_scheduler_limit":                 p.size(&u.JobSchedulerLimit),
				"send_fail_if_no_space":               p.boolean(&u.SendFailIfNoSpace),
				"send_fail_if_no_space_after_timeout": p.duration(&u.SendFailIfNoSpaceAfterTimeout),
			})
		},
	})
}

// kahaDBKeys are the keys of a kahadb mapping, setting kd; dirSet is
// called when it names a directory.
func (p *yamlParser) kahaDBKeys(kd *KahaDB, sync *syncSet, dirSet func()) map[string]handler {
	return map[string]handler{
		"directory": func(n *yaml.Node, path string) {
			dirSet()
			p.str(&kd.Directory)(n, path)
		},
		"journal_max_file_length":      p.size(&kd.JournalMaxFileLength),
		"journal_max_write_batch_size": p.size(&kd.JournalMaxWriteBatchSize),
		"enable_journal_disk_syncs": p.scalar(func(l *loader, v val) {
			l.setSyncFlagOn(kd, sync, v)
		}),
		"journal_disk_sync_strategy": p.scalar(func(l *loader, v val) {
			l.setSyncStrategyOn(kd, sync, v)
		}),
		"journal_disk_sync_interval":           p.duration(&kd.JournalDiskSyncInterval),
		"checkpoint_interval":                  p.duration(&kd.CheckpointInterval),
		"cleanup_interval":                     p.duration(&kd.CleanupInterval),
		"index_cache_size":                     p.integer(&kd.IndexCacheSize),
		"index_write_batch_size":               p.integer(&kd.IndexWriteBatchSize),
		"concurrent_store_and_dispatch_queues": p.boolean(&kd.ConcurrentStoreAndDispatchQueues),
		"concurrent_store_and_dispatch_topics": p.boolean(&kd.ConcurrentStoreAndDispatchTopics),
		"archive_data_logs":                    p.boolean(&kd.ArchiveDataLogs),
		"cleanup_on_stop":                      p.boolean(&kd.CleanupOnStop),
		"ignore_missing_journal_files":         p.boolean(&kd.IgnoreMissingJournalFiles),
		"check_for_corrupt_journal_files":      p.boolean(&kd.CheckForCorruptJournalFiles),
		"checksum_journal_files":               p.boolean(&kd.ChecksumJournalFiles),
		"enable_ack_compaction":                p.boolean(&kd.EnableAckCompaction),
		"compact_acks_after_no_gc":             p.integer(&kd.CompactAcksAfterNoGC),
		"compact_acks_ignores_store_growth":    p.boolean(&kd.CompactAcksIgnoresStoreGrowth),
		"lock_acquire_sleep_interval":          p.duration(&kd.LockAcquireSleepInterval),
		"lock_keep_alive_period":               p.duration(&kd.LockKeepAlivePeriod),
	}
}

func (p *yamlParser) policy(n *yaml.Node, path string, e *PolicyEntry) {
	p.mapping(n, path, map[string]handler{
		"queue":                              p.str(&e.Queue),
		"topic":                              p.str(&e.Topic),
		"producer_flow_control":              p.boolean(&e.ProducerFlowControl),
		"memory_limit":                       p.size(&e.MemoryLimit),
		"expire_messages_period":             p.duration(&e.ExpireMessagesPeriod),
		"max_expire_page_size":               p.integer(&e.MaxExpirePageSize),
		"queue_prefetch":                     p.integer(&e.QueuePrefetch),
		"topic_prefetch":                     p.integer(&e.TopicPrefetch),
		"durable_topic_prefetch":             p.integer(&e.DurableTopicPrefetch),
		"queue_browser_prefetch":             p.integer(&e.QueueBrowserPrefetch),
		"cursor_memory_high_water_mark":      p.integer(&e.CursorMemoryHighWaterMark),
		"store_usage_high_water_mark":        p.integer(&e.StoreUsageHighWaterMark),
		"blocked_producer_warning_interval":  p.duration(&e.BlockedProducerWarningInterval),
		"pending_message_limit":              p.integer(&e.PendingMessageLimit),
		"pending_queue_policy":               p.str(&e.PendingQueuePolicy),
		"replay_when_no_consumers":           p.boolean(&e.ReplayWhenNoConsumers),
		"replay_delay":                       p.duration(&e.ReplayDelay),
		"enable_audit":                       p.boolean(&e.EnableAudit),
		"max_audit_depth":                    p.integer(&e.MaxAuditDepth),
		"max_producers_to_audit":             p.integer(&e.MaxProducersToAudit),
		"send_advisory_if_no_consumers":      p.boolean(&e.SendAdvisoryIfNoConsumers),
		"use_consumer_priority":              p.boolean(&e.UseConsumerPriority),
		"all_consumers_exclusive_by_default": p.boolean(&e.AllConsumersExclusiveByDefault),
		"prioritized_messages":               p.boolean(&e.PrioritizedMessages),
		"max_page_size":                      p.integer(&e.MaxPageSize),
		"advisory_for_consumed":              p.boolean(&e.AdvisoryForConsumed),
		"advisory_for_delivery":              p.boolean(&e.AdvisoryForDelivery),
		"advisory_when_full":                 p.boolean(&e.AdvisoryWhenFull),
		"advisory_for_slow_consumers":        p.boolean(&e.AdvisoryForSlowConsumers),
		"advisory_for_fast_producers":        p.boolean(&e.AdvisoryForFastProducers),
		"advisory_for_discarding_messages":   p.boolean(&e.AdvisoryForDiscardingMessages),
		"gc_inactive_destinations":           p.boolean(&e.GCInactiveDestinations),
		"inactive_timeout_before_gc":         p.duration(&e.InactiveTimeoutBeforeGC),
		"persist_jms_redelivered":            p.boolean(&e.PersistJMSRedelivered),
		"message_group_map_factory_type":     p.str(&e.MessageGroupMapFactoryType),
		"dead_letter_strategy": func(n *yaml.Node, path string) {
			n = deref(n)
			if n.Kind == yaml.MappingNode && len(n.Content) > 2 {
				p.l.problemAt(path, n.Line, n.Column, path+": set exactly one of individual, shared and discarding")
			}
			strategy := func(kind string) handler {
				return func(n *yaml.Node, path string) {
					d := DefaultDeadLetterStrategy(kind)
					hs := map[string]handler{
						"process_expired":        p.boolean(&d.ProcessExpired),
						"process_non_persistent": p.boolean(&d.ProcessNonPersistent),
						"expiration":             p.duration(&d.Expiration),
						"enable_audit":           p.boolean(&d.EnableAudit),
					}
					switch kind {
					case DLQIndividual:
						hs["queue_prefix"] = p.str(&d.QueuePrefix)
						hs["topic_prefix"] = p.str(&d.TopicPrefix)
						hs["queue_suffix"] = p.str(&d.QueueSuffix)
						hs["topic_suffix"] = p.str(&d.TopicSuffix)
						hs["use_queue_for_queue_messages"] = p.boolean(&d.UseQueueForQueueMessages)
						hs["use_queue_for_topic_messages"] = p.boolean(&d.UseQueueForTopicMessages)
						hs["destination_per_durable_subscriber"] = p.boolean(&d.DestinationPerDurableSubscriber)
					case DLQShared:
						hs["dead_letter_queue"] = p.str(&d.DeadLetterQueue)
					}
					p.mapping(n, path, hs)
					e.DeadLetter = &d
				}
			}
			p.mapping(n, path, map[string]handler{
				"individual": strategy(DLQIndividual),
				"shared":     strategy(DLQShared),
				"discarding": strategy(DLQDiscarding),
			})
		},
	})
}

// interceptors reads destination_interceptors: {virtual_topics: [...],
// composites: [...]}, the twin of <destinationInterceptors>. Its presence,
// even empty, replaces ActiveMQ's default virtual topic.
func (p *yamlParser) interceptors(n *yaml.Node, path string) {
	c := &p.l.cfg
	c.InterceptorsConfigured = true
	c.VirtualTopics = nil
	p.mapping(n, path, map[string]handler{
		"virtual_topics": func(n *yaml.Node, path string) {
			p.list(n, path, func(el *yaml.Node, ep string) {
				vt := DefaultVirtualTopic()
				vt.Line = el.Line
				p.mapping(el, ep, map[string]handler{
					"name":                   p.str(&vt.Name),
					"prefix":                 p.str(&vt.Prefix),
					"postfix":                p.str(&vt.Postfix),
					"selector_aware":         p.boolean(&vt.SelectorAware),
					"local":                  p.boolean(&vt.Local),
					"concurrent_send":        p.boolean(&vt.ConcurrentSend),
					"transacted_send":        p.boolean(&vt.TransactedSend),
					"drop_on_resource_limit": p.boolean(&vt.DropOnResourceLimit),
				})
				c.VirtualTopics = append(c.VirtualTopics, vt)
			})
		},
		"composites": func(n *yaml.Node, path string) {
			p.list(n, path, func(el *yaml.Node, ep string) {
				comp := DefaultComposite(message.Queue)
				comp.Line = el.Line
				p.mapping(el, ep, map[string]handler{
					"queue":                 p.dest(&comp.Destination, message.Queue),
					"topic":                 p.dest(&comp.Destination, message.Topic),
					"forward_only":          p.boolean(&comp.ForwardOnly),
					"concurrent_send":       p.boolean(&comp.ConcurrentSend),
					"send_when_not_matched": p.boolean(&comp.SendWhenNotMatched),
					"forward_to": func(n *yaml.Node, path string) {
						comp.ForwardTo = []Forward{}
						p.list(n, path, func(el *yaml.Node, fp string) {
							var fw Forward
							p.mapping(el, fp, map[string]handler{
								"queue":    p.dest(&fw.Destination, message.Queue),
								"topic":    p.dest(&fw.Destination, message.Topic),
								"selector": p.scalar(func(l *loader, v val) { l.setFilter(&fw.Selector, v) }),
							})
							comp.ForwardTo = append(comp.ForwardTo, fw)
						})
					},
				})
				c.Composites = append(c.Composites, comp)
			})
		},
	})
}

// dest sets a destination named under the key queue or topic (kind t).
func (p *yamlParser) dest(dst *message.Destination, t message.DestType) handler {
	return p.scalar(func(l *loader, v val) { l.setDest(dst, t, v) })
}
