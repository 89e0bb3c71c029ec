package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"wharf/engine/message"
)

// stockVars are what bin/activemq would pass for the test data directory.
func stockVars(t *testing.T) map[string]string {
	t.Helper()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"activemq.base": "/srv/amq", "activemq.conf": dir}
}

func load(t *testing.T, file string, vars map[string]string) *Config {
	t.Helper()
	c, err := LoadFile(filepath.Join("testdata", file), vars)
	if err != nil {
		t.Fatalf("LoadFile(%s): %v", file, err)
	}
	return c
}

func problems(t *testing.T, err error) []Problem {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error = %v (%T), want *config.Error", err, err)
	}
	return ce.Problems
}

// wantProblem checks that err lists a problem at line:col whose message
// contains sub.
func wantProblem(t *testing.T, err error, line, col int, sub string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one at %d:%d containing %q", line, col, sub)
	}
	for _, p := range problems(t, err) {
		if p.Line == line && (col == 0 || p.Col == col) && strings.Contains(p.Msg, sub) {
			return
		}
	}
	t.Fatalf("error:\n%v\nwant a problem at %d:%d containing %q", err, line, col, sub)
}

func TestConfigDebianStock(t *testing.T) {
	c := load(t, "debian-activemq.xml", map[string]string{"activemq.base": "/var/lib/activemq/main"})
	if c.BrokerName != "localhost" || c.UseJMX || !c.Persistent {
		t.Errorf("broker = %q useJmx=%v persistent=%v, want localhost false true", c.BrokerName, c.UseJMX, c.Persistent)
	}
	if c.DataDirectory != "/var/lib/activemq/main/data" {
		t.Errorf("DataDirectory = %q", c.DataDirectory)
	}
	if c.Persistence.Kind != KindKahaDB || c.Persistence.KahaDB.Directory != "/var/lib/activemq/main/data/kahadb" {
		t.Errorf("Persistence = %+v", c.Persistence)
	}
	want := []Transport{{Name: "openwire", URI: "tcp://127.0.0.1:61616", Scheme: "tcp", Host: "127.0.0.1",
		Port: 61616, Options: map[string]string{}, Line: 50}}
	if !reflect.DeepEqual(c.Transports, want) {
		t.Errorf("Transports = %+v\nwant %+v", c.Transports, want)
	}
	if c.Persistence.KahaDB.JournalMaxFileLength != 32<<20 || !c.Persistence.KahaDB.EnableJournalDiskSyncs {
		t.Errorf("KahaDB defaults not applied: %+v", c.Persistence.KahaDB)
	}
}

func TestConfigUpstreamStock(t *testing.T) {
	c := load(t, "activemq-stock-shape-loopback.xml", stockVars(t))
	if c.DataDirectory != "/srv/amq/data" || c.Persistence.KahaDB.Directory != "/srv/amq/data/kahadb" {
		t.Errorf("directories = %q %q", c.DataDirectory, c.Persistence.KahaDB.Directory)
	}
	if c.SystemUsage.MemoryPercentOfJVMHeap != 70 || c.SystemUsage.StoreLimit != 100<<30 || c.SystemUsage.TempLimit != 50<<30 {
		t.Errorf("SystemUsage = %+v", c.SystemUsage)
	}
	if len(c.Policies) != 1 || c.Policies[0].Destination != message.TopicDest(">") || c.Policies[0].PendingMessageLimit != 1000 {
		t.Errorf("Policies = %+v", c.Policies)
	}
	var names []string
	for _, tr := range c.Transports {
		names = append(names, tr.Name+"="+tr.Scheme)
		if tr.Options["maximumConnections"] != "1000" || tr.Options["wireFormat.maxFrameSize"] != "104857600" {
			t.Errorf("%s options = %v", tr.Name, tr.Options)
		}
	}
	if got := strings.Join(names, ","); got != "openwire=tcp,amqp=amqp,stomp=stomp,mqtt=mqtt,ws=ws" {
		t.Errorf("transports = %s", got)
	}

	// As shipped, every connector listens on 0.0.0.0, which Wharf refuses
	// without authentication: one problem per connector, each on its line.
	_, err := LoadFile(filepath.Join("testdata", "activemq-stock-shape.xml"), stockVars(t))
	ps := problems(t, err)
	if len(ps) != 5 {
		t.Fatalf("got %d problems, want 5:\n%v", len(ps), err)
	}
	for i, p := range ps {
		if p.Line != 53+i || !strings.Contains(p.Msg, `"0.0.0.0" needs authentication`) {
			t.Errorf("problem %d = %v", i, p)
		}
	}

	// The credentials file is required unless ignoreResourceNotFound.
	_, err = LoadFile(filepath.Join("testdata", "activemq-stock-shape-loopback.xml"), map[string]string{"activemq.conf": t.TempDir()})
	wantProblem(t, err, 12, 20, "cannot read properties file")
}

func TestConfigSeedSnippets(t *testing.T) {
	cases := []struct {
		file  string
		check func(t *testing.T, c *Config)
		line  int
		col   int
		err   string
	}{
		{file: "seed000-kahadb.xml", check: func(t *testing.T, c *Config) {
			k := c.Persistence.KahaDB
			want := defaultKahaDB()
			want.Directory = "./data/kahadb"
			if k != want {
				t.Errorf("KahaDB = %+v\nwant %+v", k, want)
			}
		}},
		{file: "seed000-dlq.xml", check: func(t *testing.T, c *Config) {
			d := c.PolicyFor(message.QueueDest("orders")).DeadLetter
			want := DefaultDeadLetterStrategy(DLQIndividual)
			want.QueuePrefix = "DLQ."
			if *d != want {
				t.Errorf("DeadLetter = %+v", *d)
			}
			if c.PolicyFor(message.TopicDest("orders")).DeadLetter.Kind != DLQShared {
				t.Error("topic got the queue entry")
			}
		}},
		{file: "seed002-pfc.xml", check: func(t *testing.T, c *Config) {
			if c.PolicyFor(message.TopicDest("FOO.bar")).ProducerFlowControl {
				t.Error("FOO.bar: producer flow control still on")
			}
			if !c.PolicyFor(message.QueueDest("FOO.bar")).ProducerFlowControl {
				t.Error("queue FOO.bar took the topic entry")
			}
		}},
		{file: "seed002-sendfail.xml", check: func(t *testing.T, c *Config) {
			if !c.SystemUsage.SendFailIfNoSpace || c.SystemUsage.MemoryLimit != 20<<20 {
				t.Errorf("SystemUsage = %+v", c.SystemUsage)
			}
		}},
		{file: "seed002-sendfail-timeout.xml", check: func(t *testing.T, c *Config) {
			if c.SystemUsage.SendFailIfNoSpaceAfterTimeout != 3*time.Second || c.SystemUsage.MemoryLimit != 20<<20 {
				t.Errorf("SystemUsage = %+v", c.SystemUsage)
			}
		}},
		{file: "seed002-usage.xml", check: func(t *testing.T, c *Config) {
			u := c.SystemUsage
			if u.MemoryLimit != 64<<20 || u.StoreLimit != 100<<30 || u.TempLimit != 10<<30 {
				t.Errorf("SystemUsage = %+v", u)
			}
		}},
		{file: "seed001-static-nonet.xml", check: func(t *testing.T, c *Config) {
			if c.BrokerName != "receiver" || c.Persistent || c.UseJMX || c.Persistence.Kind != KindMemory {
				t.Errorf("Config = %+v", c)
			}
			if len(c.Transports) != 1 || c.Transports[0].Name != "tcp://127.0.0.1:62002" || c.Transports[0].Port != 62002 {
				t.Errorf("Transports = %+v", c.Transports)
			}
		}},
		{file: "seed001-interceptors.xml", check: func(t *testing.T, c *Config) {
			want := []Composite{{Destination: message.TopicDest("include.bar"), ForwardOnly: false, CopyMessage: true,
				ForwardTo: []Forward{{Destination: message.QueueDest("include.bar.forward")}}, Line: 9}}
			if !reflect.DeepEqual(c.Composites, want) {
				t.Errorf("Composites = %+v\nwant %+v", c.Composites, want)
			}
			// Configured interceptors replace the default virtual topic.
			if !c.InterceptorsConfigured || len(c.VirtualTopics) != 0 {
				t.Errorf("InterceptorsConfigured = %v, VirtualTopics = %+v", c.InterceptorsConfigured, c.VirtualTopics)
			}
			if got := c.CompositeFor(message.TopicDest("include.bar")); got != &c.Composites[0] {
				t.Errorf("CompositeFor(topic include.bar) = %v", got)
			}
		}},
		// Seed 001's remote broker: demand from include.bar.forward's
		// creation.
		{file: "seed001-remote-oncreation.xml", check: func(t *testing.T, c *Config) {
			if c.BrokerName != "remoteBroker" || !c.UseVirtualDestSubs || !c.UseVirtualDestSubsOnCreation || len(c.Composites) != 1 {
				t.Errorf("Config = %+v", c)
			}
		}},
		{file: "seed002-vmcursor.xml", check: func(t *testing.T, c *Config) {
			p := c.PolicyFor(message.QueueDest("any"))
			if p.PendingQueuePolicy != "vm" || p.MemoryLimit != 1<<20 || !p.ProducerFlowControl {
				t.Errorf("policy = %+v", p)
			}
		}},
		{file: "seed000-jdbc.xml", check: func(t *testing.T, c *Config) {
			// Seed 000's own snippet: the PGSimpleDataSource bean and the
			// adapter naming it.
			j := c.Persistence.JDBC
			if c.Persistence.Kind != KindJDBC || j.Host != "db" || j.Port != 5432 || j.Database != "activemq" || j.User != "activemq" ||
				j.Password != "secret" || !j.CreateTablesOnStartup || j.DataSource != "postgres" {
				t.Errorf("jdbc = %q %+v", c.Persistence.Kind, j)
			}
		}},
		{file: "seed000-mkahadb.xml", check: func(t *testing.T, c *Config) {
			// No filters: one catch-all KahaDB with the defaults.
			m := c.Persistence.MKahaDB
			want := []FilteredKahaDB{{KahaDB: DefaultKahaDB()}}
			if c.Persistence.Kind != KindMKahaDB || m.Directory != "./data/kahadb" || !reflect.DeepEqual(m.Filters, want) {
				t.Errorf("Persistence = %+v, want mKahaDB in ./data/kahadb with filters %+v", c.Persistence, want)
			}
		}},
		{file: "seed001-network.xml", check: func(t *testing.T, c *Config) {
			want := []string{"host1:61616", "host2:61616"}
			if len(c.NetworkConnectors) != 1 || !reflect.DeepEqual(c.NetworkConnectors[0].Peers, want) {
				t.Errorf("NetworkConnectors = %+v, want one with peers %v", c.NetworkConnectors, want)
			}
		}},
		{file: "seed001-static.xml", check: func(t *testing.T, c *Config) {
			nc := c.NetworkConnectors
			if c.BrokerName != "receiver" || len(nc) != 1 || !reflect.DeepEqual(nc[0].Peers, []string{"127.0.0.1:62001"}) || nc[0].Name != "NC" {
				t.Errorf("broker %q, NetworkConnectors = %+v", c.BrokerName, nc)
			}
		}},
		{file: "seed001-bridgefilter.xml", check: func(t *testing.T, c *Config) {
			if len(c.Policies) != 1 || !c.Policies[0].ReplayWhenNoConsumers || c.Policies[0].ReplayDelay != 0 || c.Policies[0].EnableAudit {
				t.Errorf("Policies = %+v, want one with replayWhenNoConsumers, replayDelay 0, enableAudit false", c.Policies)
			}
		}},
		{file: "seed003-amq.xml", line: 3, col: 5, err: `<amqPersistenceAdapter>: the AMQ message store was removed from ActiveMQ in 5.9 (5.17 refuses it too) and Wharf does not read it; use <kahaDB>, here <kahaDB directory="activemq-data" journalMaxFileLength="32mb"/>; messages still in an AMQ store`},
	}
	for _, tc := range cases {
		t.Run(tc.file+tc.err, func(t *testing.T) {
			c, err := LoadFile(filepath.Join("testdata", tc.file), map[string]string{"activemq.data": "./data", "db.password": "secret"})
			if tc.err != "" {
				wantProblem(t, err, tc.line, tc.col, tc.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestConfigParseSize(t *testing.T) {
	check := func(in string, want int64, wantErr error) {
		t.Helper()
		got, err := ParseSize(in)
		if wantErr != nil {
			if !errors.Is(err, wantErr) {
				t.Errorf("ParseSize(%q) = %d, %v; want error %v", in, got, err, wantErr)
			}
			return
		}
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	check("32mb", 32<<20, nil)
	check("1024kb", 1<<20, nil)
	check("256 MB", 256<<20, nil)
	check("512m", 512<<20, nil)
	check("1G", 1<<30, nil)
	check("10000000", 10000000, nil)
	check("1 gb", 1<<30, nil)
	check("100 gb", 100<<30, nil)
	check(" 20 Mb ", 20<<20, nil)
	check("7b", 7, nil)
	check("7 B", 7, nil)
	check("3k", 3<<10, nil)
	check("0", 0, nil)
	check("2 tb", 0, ErrNotSize) // XBeanByteConverterUtil stops at g
	check("1.5gb", 0, ErrNotSize)
	check("-1", 0, ErrNotSize)
	check("+1", 0, ErrNotSize)
	check("", 0, ErrNotSize)
	check("mb", 0, ErrNotSize)
	check("32 parsecs", 0, ErrNotSize)
	check("1 m b", 0, ErrNotSize)
	check("1mib", 0, ErrNotSize)
	check("9999999999999999999", 0, ErrSizeOverflow)
	check("9000000000g", 0, ErrSizeOverflow)
}

func TestConfigPlaceholders(t *testing.T) {
	doc := func(dataDir string) string {
		return `<beans><broker brokerName="b" dataDirectory="` + dataDir + `"/></beans>`
	}
	parse := func(t *testing.T, s string, vars map[string]string) (*Config, error) {
		t.Helper()
		return ParseXML(strings.NewReader(s), "activemq.xml", vars)
	}
	t.Run("vars first", func(t *testing.T) {
		t.Setenv("my.dir", "from-env")
		c, err := parse(t, doc("${my.dir}/x"), map[string]string{"my.dir": "from-vars"})
		if err != nil || c.DataDirectory != "from-vars/x" {
			t.Fatalf("got %v, %v", c, err)
		}
	})
	t.Run("env exact name", func(t *testing.T) {
		t.Setenv("my.dir", "from-env")
		t.Setenv("MY_DIR", "from-normalised")
		c, err := parse(t, doc("${my.dir}"), nil)
		if err != nil || c.DataDirectory != "from-env" {
			t.Fatalf("got %v, %v", c, err)
		}
	})
	t.Run("env upper case with underscores", func(t *testing.T) {
		t.Setenv("ACTIVEMQ_DATA", "/env/data")
		c, err := parse(t, doc("${activemq.data}"), nil)
		if err != nil || c.DataDirectory != "/env/data" {
			t.Fatalf("got %v, %v", c, err)
		}
	})
	t.Run("built-in activemq.data follows activemq.base", func(t *testing.T) {
		c, err := parse(t, doc("${activemq.data}"), map[string]string{"activemq.base": "/opt/amq"})
		if err != nil || c.DataDirectory != "/opt/amq/data" {
			t.Fatalf("got %v, %v", c, err)
		}
		c, err = parse(t, doc("${activemq.data}"), nil)
		if err != nil || c.DataDirectory != "./data" {
			t.Fatalf("got %v, %v", c, err)
		}
	})
	t.Run("default after colon", func(t *testing.T) {
		c, err := parse(t, doc("${nope.nothing:fallback}"), nil)
		if err != nil || c.DataDirectory != "fallback" {
			t.Fatalf("got %v, %v", c, err)
		}
	})
	t.Run("unresolved is an error with its line", func(t *testing.T) {
		_, err := parse(t, "<beans>\n  <broker\n     dataDirectory=\"${no.such.thing}/d\"/>\n</beans>", nil)
		wantProblem(t, err, 3, 6, "unresolved placeholder ${no.such.thing}")
	})
	t.Run("self reference", func(t *testing.T) {
		_, err := parse(t, doc("${a}"), map[string]string{"a": "${a}"})
		wantProblem(t, err, 1, 0, "refers to itself")
	})
	t.Run("properties file", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "p.properties"), []byte("# c\nbroker.dir = /props/dir\nlong=a\\\n  b\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s := `<beans><bean class="org.springframework.beans.factory.config.PropertyPlaceholderConfigurer">
<property name="locations"><list><value>file:${conf}/p.properties</value><value>file:${conf}/missing.properties</value></list></property>
<property name="ignoreResourceNotFound" value="true"/></bean>
<broker brokerName="${long}" dataDirectory="${broker.dir}"/></beans>`
		c, err := parse(t, s, map[string]string{"conf": dir})
		if err != nil || c.DataDirectory != "/props/dir" || c.BrokerName != "ab" {
			t.Fatalf("got %+v, %v", c, err)
		}
		// Without ignoreResourceNotFound a missing file is an error.
		s = strings.Replace(s, `value="true"`, `value="false"`, 1)
		_, err = parse(t, s, map[string]string{"conf": dir})
		wantProblem(t, err, 2, 0, "missing.properties")
	})
	t.Run("yaml values too", func(t *testing.T) {
		c, err := ParseYAML(strings.NewReader("data_directory: ${d}/y\n"), "wharf.yaml", map[string]string{"d": "/v"})
		if err != nil || c.DataDirectory != "/v/y" {
			t.Fatalf("got %v, %v", c, err)
		}
		_, err = ParseYAML(strings.NewReader("broker_name: b\ndata_directory: ${nope}\n"), "wharf.yaml", nil)
		wantProblem(t, err, 2, 17, "unresolved placeholder ${nope}")
	})
}

const equivXML = `<beans xmlns="http://www.springframework.org/schema/beans">
<broker xmlns="http://activemq.apache.org/schema/core" brokerName="eq" dataDirectory="/d" useJmx="false"
        advisorySupport="FALSE" schedulerSupport="true" offlineDurableSubscriberTimeout="60000">
  <persistenceAdapter>
    <kahaDB directory="/k" journalMaxFileLength="16mb" enableJournalDiskSyncs="false" checkpointInterval="1000"
            cleanupInterval="2000" indexCacheSize="500" concurrentStoreAndDispatchQueues="false" archiveDataLogs="true"
            compactAcksIgnoresStoreGrowth="true"/>
  </persistenceAdapter>
  <transportConnectors>
    <transportConnector name="openwire" uri="tcp://127.0.0.1:61616?maximumConnections=10"/>
    <transportConnector name="stomp" uri="stomp://localhost:61613"/>
  </transportConnectors>
  <destinationPolicy>
    <policyMap>
      <policyEntries>
        <policyEntry queue=">" queuePrefetch="10" memoryLimit="1mb" expireMessagesPeriod="0">
          <deadLetterStrategy>
            <individualDeadLetterStrategy queuePrefix="DLQ." processExpired="false" expiration="300000"/>
          </deadLetterStrategy>
        </policyEntry>
        <policyEntry topic="FOO.>" producerFlowControl="false" topicPrefetch="0">
          <deadLetterStrategy><discardingDeadLetterStrategy/></deadLetterStrategy>
        </policyEntry>
        <policyEntry queue="shared.*">
          <deadLetterStrategy>
            <sharedDeadLetterStrategy processNonPersistent="true">
              <deadLetterQueue><queue physicalName="MY.DLQ"/></deadLetterQueue>
            </sharedDeadLetterStrategy>
          </deadLetterStrategy>
        </policyEntry>
      </policyEntries>
      <defaultEntry>
        <policyEntry durableTopicPrefetch="5"/>
      </defaultEntry>
    </policyMap>
  </destinationPolicy>
  <systemUsage>
    <systemUsage sendFailIfNoSpaceAfterTimeout="3000">
      <memoryUsage><memoryUsage limit="64 mb"/></memoryUsage>
      <storeUsage><storeUsage limit="1 gb"/></storeUsage>
      <tempUsage><tempUsage limit="512m"/></tempUsage>
    </systemUsage>
  </systemUsage>
</broker>
</beans>`

const equivYAML = `broker_name: eq
data_directory: /d
use_jmx: false
advisory_support: false
scheduler_support: true
offline_durable_subscriber_timeout: 1m
persistence:
  kahadb:
    directory: /k
    journal_max_file_length: 16mb
    enable_journal_disk_syncs: false
    checkpoint_interval: 1s
    cleanup_interval: 2s
    index_cache_size: 500
    concurrent_store_and_dispatch_queues: false
    archive_data_logs: true
    compact_acks_ignores_store_growth: true
transport_connectors:
  - {name: openwire, uri: "tcp://127.0.0.1:61616?maximumConnections=10"}
  - name: stomp
    uri: stomp://localhost:61613
destination_policy:
  - queue: ">"
    queue_prefetch: 10
    memory_limit: 1048576
    expire_messages_period: 0s
    dead_letter_strategy:
      individual: {queue_prefix: DLQ., process_expired: false, expiration: 5m}
  - topic: FOO.>
    producer_flow_control: false
    topic_prefetch: 0
    dead_letter_strategy: {discarding: {}}
  - queue: shared.*
    dead_letter_strategy:
      shared: {process_non_persistent: true, dead_letter_queue: MY.DLQ}
default_policy:
  durable_topic_prefetch: 5
system_usage:
  memory_limit: 64 mb
  store_limit: 1gb
  temp_limit: 512m
  send_fail_if_no_space_after_timeout: 3s
`

func clearLines(c *Config) {
	for i := range c.Transports {
		c.Transports[i].Line = 0
		if c.Transports[i].TLS != nil {
			c.Transports[i].TLS.Line = 0
		}
	}
	if c.SSLContext != nil {
		c.SSLContext.Line = 0
	}
	if c.Encryption != nil {
		c.Encryption.Line = 0
	}
	if a := c.Security.Authentication; a != nil {
		a.Line = 0
	}
	if z := c.Security.Authorization; z != nil {
		for i := range z.Entries {
			z.Entries[i].Line = 0
		}
		for _, e := range []*AuthorizationEntry{z.Default, z.Temp} {
			if e != nil {
				e.Line = 0
			}
		}
	}
	for i := range c.Policies {
		c.Policies[i].Line = 0
	}
	if c.DefaultPolicy != nil {
		c.DefaultPolicy.Line = 0
	}
	for i := range c.VirtualTopics {
		c.VirtualTopics[i].Line = 0
	}
	for i := range c.Composites {
		c.Composites[i].Line = 0
	}
}

func TestConfigYAMLEquivalentToXML(t *testing.T) {
	x, err := ParseXML(strings.NewReader(equivXML), "activemq.xml", nil)
	if err != nil {
		t.Fatal(err)
	}
	y, err := ParseYAML(strings.NewReader(equivYAML), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	clearLines(x)
	clearLines(y)
	if !reflect.DeepEqual(x, y) {
		t.Fatalf("XML and YAML differ:\nxml  %+v\nyaml %+v", x, y)
	}
	// Spot-check the values so that "equal" does not mean "equally wrong".
	if x.Persistence.KahaDB.JournalDiskSyncStrategy != SyncNever || x.Persistence.KahaDB.EnableJournalDiskSyncs {
		t.Errorf("sync = %+v", x.Persistence.KahaDB)
	}
	if k := x.Persistence.KahaDB; !k.CompactAcksIgnoresStoreGrowth || Default().Persistence.KahaDB.CompactAcksIgnoresStoreGrowth {
		t.Errorf("compactAcksIgnoresStoreGrowth = %v, default %v: want true, default false", k.CompactAcksIgnoresStoreGrowth, Default().Persistence.KahaDB.CompactAcksIgnoresStoreGrowth)
	}
	if x.OfflineDurableSubscriberTimeout != time.Minute || x.AdvisorySupport {
		t.Errorf("broker = %+v", x)
	}
	if d := x.PolicyFor(message.QueueDest("shared.x")).DeadLetter; d.DeadLetterQueue != "MY.DLQ" || !d.ProcessNonPersistent {
		t.Errorf("shared DLQ = %+v", d)
	}
	if p := x.PolicyFor(message.TopicDest("other")); p.DurableTopicPrefetch != 5 || p != x.DefaultPolicy {
		t.Errorf("default entry not used: %+v", p)
	}
	if p := x.PolicyFor(message.QueueDest("a")); p.DeadLetter.Expiration != 5*time.Minute || p.ExpireMessagesPeriod != 0 {
		t.Errorf("queue entry = %+v", p)
	}
}

func TestConfigYAMLUnknownKey(t *testing.T) {
	_, err := ParseYAML(strings.NewReader("broker_name: b\npersistence:\n  kahadb:\n    journal_max_file_lenght: 32mb\n"), "wharf.yaml", nil)
	wantProblem(t, err, 4, 5, `persistence.kahadb: unknown key "journal_max_file_lenght"`)
	if !strings.HasPrefix(err.Error(), "wharf.yaml:4:5: ") {
		t.Errorf("Error() = %q", err.Error())
	}
	_, err = ParseYAML(strings.NewReader("brokerName: b\n"), "wharf.yaml", nil)
	wantProblem(t, err, 1, 1, `top level: unknown key "brokerName"`)
	_, err = ParseYAML(strings.NewReader("system_usage:\n  memory_limit: 1mb\n  memory_limit: 2mb\n"), "wharf.yaml", nil)
	wantProblem(t, err, 3, 3, "duplicate key (first at line 2)")
	_, err = ParseYAML(strings.NewReader("persistence:\n  kahadb:\n    checkpoint_interval: 5000\n"), "wharf.yaml", nil)
	wantProblem(t, err, 3, 26, "write it with a unit")
	_, err = ParseYAML(strings.NewReader("broker_name: [a\n"), "wharf.yaml", nil)
	wantProblem(t, err, 1, 0, "YAML syntax error")
}

func TestConfigMultipleProblems(t *testing.T) {
	doc := `<beans>
<broker brokerName="m" persistent="maybe">
  <networkConnectors><networkConnector uri="zeroconf:_activemq_development."/></networkConnectors>
  <persistenceAdapter>
    <kahaDB journalMaxFileLength="32 parsecs" indexCacheSize="0"/>
  </persistenceAdapter>
  <transportConnectors>
    <transportConnector name="a" uri="tcp://127.0.0.1:1"/>
    <transportConnector name="a" uri="tcp://127.0.0.1"/>
  </transportConnectors>
  <destinationPolicy><policyMap><policyEntries>
    <policyEntry queue="x" topic="y" queuePrefetch="40000"/>
    <policyEntry/>
  </policyEntries></policyMap></destinationPolicy>
</broker>
</beans>`
	_, err := ParseXML(strings.NewReader(doc), "activemq.xml", nil)
	wantProblem(t, err, 2, 24, `<broker persistent="maybe">: not a boolean`)
	wantProblem(t, err, 3, 0, "zeroconf discovery is not supported by Wharf yet")
	wantProblem(t, err, 5, 13, `<kahaDB journalMaxFileLength="32 parsecs">: not a size`)
	wantProblem(t, err, 5, 47, `<kahaDB indexCacheSize="0">: 0 pages must be positive`)
	wantProblem(t, err, 9, 25, `duplicate connector name "a" (first at line 8)`)
	wantProblem(t, err, 9, 34, `has no port`)
	wantProblem(t, err, 12, 5, "set exactly one of queue and topic, not both")
	wantProblem(t, err, 12, 38, `<policyEntry queuePrefetch="40000">: 40000 is not in 0..32767`)
	wantProblem(t, err, 13, 5, "set exactly one of queue and topic")
	if n := len(problems(t, err)); n != 9 {
		t.Errorf("got %d problems, want 9:\n%v", n, err)
	}
	if lines := strings.Split(err.Error(), "\n"); len(lines) != 9 || !strings.HasPrefix(lines[0], "activemq.xml:2:24: ") {
		t.Errorf("Error() =\n%s", err)
	}
}

func TestConfigValidation(t *testing.T) {
	cases := []struct {
		name, yaml string
		line, col  int
		err        string
	}{
		{"uri without scheme", "transport_connectors: [{name: a, uri: '127.0.0.1:5'}]", 1, 39, "not a transport URI"},
		{"unsupported scheme", "transport_connectors: [{name: a, uri: 'udp://127.0.0.1:5'}]", 1, 39, `scheme "udp" is not supported`},
		{"ssl needs sslContext", "transport_connectors: [{name: a, uri: 'ssl://127.0.0.1:5'}]", 1, 39, `scheme "ssl" needs the broker's certificate: add ssl_context: {key_store:`},
		{"non-loopback bind", "transport_connectors: [{name: a, uri: 'tcp://0.0.0.0:5'}]", 1, 39, "needs authentication"},
		{"same address twice", "transport_connectors: [{name: a, uri: 'tcp://127.0.0.1:5'}, {name: b, uri: 'stomp://127.0.0.1:5'}]", 1, 76, "already used by connector"},
		{"unknown uri option", "transport_connectors: [{name: a, uri: 'tcp://127.0.0.1:5?soTimeout=1'}]", 1, 39, `option "soTimeout" is not supported`},
		{"bad uri option", "transport_connectors: [{name: a, uri: 'tcp://127.0.0.1:5?maximumConnections=x'}]", 1, 39, `maximumConnections="x"`},
		{"negative size", "system_usage: {memory_limit: -5}", 1, 30, "-5 must be a positive size"},
		{"journal too small", "persistence: {kahadb: {journal_max_file_length: 1kb}}", 1, 49, "1KiB is below the minimum 64KiB"},
		{"neither queue nor topic", "destination_policy: [{producer_flow_control: false}]", 1, 22, "set exactly one of queue and topic"},
		{"duplicate entries", "destination_policy: [{queue: a}, {queue: a}]", 1, 34, `duplicate entry for queue "a"`},
		{"prefetch range", "destination_policy: [{queue: a, topic_prefetch: -1}]", 1, 49, "-1 is not in 0..32767"},
		{"dlq onto itself", "destination_policy: [{queue: a, dead_letter_strategy: {individual: {queue_prefix: ''}}}]", 1, 33, "dead-lettered onto their own queue"},
		{"two stores", "persistence: {memory: {}, kahadb: {}}", 1, 14, "set exactly one of kahadb, mkahadb, lsm and memory"},
		{"bad sync strategy", "persistence: {kahadb: {journal_disk_sync_strategy: sometimes}}", 1, 52, `"sometimes" is not one of`},
		{"sync flag and strategy", "persistence: {kahadb: {journal_disk_sync_strategy: never, enable_journal_disk_syncs: true}}", 1, 86, "not both"},
		{"bad broker name", "broker_name: 'a b'", 1, 14, "may contain only"},
		{"default entry with a pattern", "default_policy: {queue: '>'}", 1, 25, "remove its queue pattern"},
		{"not a boolean", "persistent: yes", 1, 13, "not a boolean"},
		{"shards", "shards: -1", 1, 9, "not in 0..4096"},
		{"percent", "system_usage: {memory_percent_of_ram: 101}", 1, 39, "not a percentage"},
		{"composite", "destination_policy: [{queue: 'a,b'}]", 1, 22, "composite pattern"},
		{"max page size", "destination_policy: [{queue: a, max_page_size: 0}]", 1, 48, "0 must be positive"},
		{"gc timeout", "default_policy: {gc_inactive_destinations: true, inactive_timeout_before_gc: 0s}", 1, 78, "0s must be positive"},
		{"group map bucket", "default_policy: {message_group_map_factory_type: bucket}", 1, 50, `"bucket" is not supported by Wharf yet`},
		{"group map unknown", "default_policy: {message_group_map_factory_type: lru}", 1, 50, `"lru" is not one of cached, simple`},
		{"job scheduler limit", "system_usage: {job_scheduler_limit: 0}", 1, 37, "0 must be a positive size"},
		{"scheduler directory", "scheduler_directory: ''", 1, 22, "must not be empty"},
		{"bad selector", "destination_interceptors: {composites: [{queue: a, forward_to: [{queue: b, selector: 'x ='}]}]}", 1, 86, "selector: syntax error"},
		{"composite without destination", "destination_interceptors: {composites: [{forward_to: [{queue: b}]}]}", 1, 41, "set exactly one of queue and topic (the destination"},
		{"composite with both", "destination_interceptors: {composites: [{queue: a, topic: a, forward_to: [{queue: b}]}]}", 1, 59, "not both"},
		{"composite without forwards", "destination_interceptors: {composites: [{queue: a}]}", 1, 41, "forward_to needs at least one"},
		{"forward without target", "destination_interceptors: {composites: [{queue: a, forward_to: [{selector: 'x = 1'}]}]}", 1, 65, "set exactly one of queue and topic (the target)"},
		{"selector of a forward without target", "destination_interceptors: {composites: [{queue: a, forward_to: [{selector: 'x ='}]}]}", 1, 76, "selector: syntax error"},
		{"unknown interceptor key", "destination_interceptors: {mirrored_queues: true}", 1, 28, `unknown key "mirrored_queues"`},
		{"unknown virtual topic key", "destination_interceptors: {virtual_topics: [{suffix: x}]}", 1, 46, `unknown key "suffix"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseYAML(strings.NewReader(tc.yaml), "wharf.yaml", nil)
			wantProblem(t, err, tc.line, tc.col, tc.err)
		})
	}
}

func TestConfigXMLAcceptsStockExtras(t *testing.T) {
	doc := `<beans xmlns="http://www.springframework.org/schema/beans">
<broker xmlns="http://activemq.apache.org/schema/core" useShutdownHook="false">
  <managementContext><managementContext createConnector="false"/></managementContext>
  <shutdownHooks><bean xmlns="http://www.springframework.org/schema/beans" class="org.apache.activemq.hooks.SpringContextHook"/></shutdownHooks>
  <persistenceAdapter><memoryPersistenceAdapter/></persistenceAdapter>
</broker>
<import resource="jetty.xml"/>
</beans>`
	// Named in testdata: the import reads testdata/jetty.xml.
	const name = "testdata/activemq.xml"
	c, err := ParseXML(strings.NewReader(doc), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Persistence.Kind != KindMemory || len(c.Transports) != 0 {
		t.Errorf("Config = %+v", c)
	}
	for _, tc := range []struct{ from, to, err string }{
		// Neither error promises a management API that is not built.
		{`createConnector="false"`, `createConnector="true"`, "JMX remote connector is not supported by Wharf (it has no JMX; its management API is Jolokia over HTTP"},
		{`resource="jetty.xml"`, `resource="camel.xml"`, `<import resource="camel.xml"> is not supported by Wharf yet (only jetty.xml, the web server's configuration)`},
		{`resource="jetty.xml"`, `resource="/nonexistent/jetty.xml"`, `<import resource="/nonexistent/jetty.xml">: cannot read "/nonexistent/jetty.xml"`},
		{`hooks.SpringContextHook`, `hooks.Other`, "only the SpringContextHook bean"},
	} {
		_, err := ParseXML(strings.NewReader(strings.Replace(doc, tc.from, tc.to, 1)), name, nil)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q", tc.to, err, tc.err)
		}
	}
	_, err = ParseXML(strings.NewReader("<beans><broker>"), "activemq.xml", nil)
	wantProblem(t, err, 1, 0, "XML syntax error")
}

func TestConfigPolicyFor(t *testing.T) {
	y := `destination_policy:
  - {queue: ">", queue_prefetch: 1}
  - {queue: "orders.>", queue_prefetch: 2}
  - {queue: "orders.eu", queue_prefetch: 3}
  - {queue: "orders.*", queue_prefetch: 4}
  - {queue: "*.us", queue_prefetch: 5}
  - {topic: "orders.>", queue_prefetch: 6}
`
	c, err := ParseYAML(strings.NewReader(y), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		dest message.Destination
		want int
	}{
		{message.QueueDest("orders.eu"), 3},        // exact match wins
		{message.QueueDest("orders.uk"), 4},        // orders.* is matched by orders.>, so more specific
		{message.QueueDest("orders.uk.london"), 2}, // only > and orders.>
		{message.QueueDest("orders"), 2},           // "orders.>" matches "orders"
		{message.QueueDest("invoices"), 1},
		{message.QueueDest("orders.us"), 5}, // *.us vs orders.*: neither contains the other; "*.us" < "orders.*"
		{message.TopicDest("orders.eu"), 6}, // topic entries only for topics
		{message.Destination{Type: message.TempQueue, Name: "orders.eu"}, 1000},
	}
	for _, tc := range cases {
		if got := c.PolicyFor(tc.dest).QueuePrefetch; got != tc.want {
			t.Errorf("PolicyFor(%v).QueuePrefetch = %d, want %d", tc.dest, got, tc.want)
		}
	}
	if p := c.PolicyFor(message.TopicDest("invoices")); p.DeadLetter == nil || p.DeadLetter.Kind != DLQShared || p.QueuePrefetch != 1000 {
		t.Errorf("no match = %+v, want DefaultPolicyEntry", p)
	}
}

func TestConfigLoadFileChoosesForm(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, p := range []string{
		write("a.xml", `<broker brokerName="x"/>`),
		write("a.yaml", "broker_name: x\n"),
		write("a.yml", "broker_name: x\n"),
		write("noext", "\n  <broker brokerName=\"x\"/>"),
		write("noext2", "broker_name: x\n"),
	} {
		c, err := LoadFile(p, nil)
		if err != nil || c.BrokerName != "x" {
			t.Errorf("LoadFile(%s) = %v, %v", p, c, err)
		}
	}
	_, err := LoadFile(write("bad.yaml", "broker_name: 'a b'\n"), nil)
	if err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, "bad.yaml")+":1:14: ") {
		t.Errorf("error = %v, want it to start with the path", err)
	}
}

func TestConfigDefaults(t *testing.T) {
	c, err := ParseYAML(strings.NewReader(""), "empty.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Persistence.KahaDB.Directory = filepath.Join("data", "kahadb")
	want.SchedulerDirectory = filepath.Join("data", "localhost", "scheduler")
	want.TmpDataDirectory = filepath.Join("data", "localhost", "tmp_storage")
	want.Transports = []Transport{}
	want.Composites = []Composite{}
	want.Policies = []PolicyEntry{}
	if !reflect.DeepEqual(*c, want) {
		t.Errorf("empty file = %+v\nwant %+v", *c, want)
	}
	if c.PolicyFor(message.QueueDest("q")).ExpireMessagesPeriod != 30*time.Second {
		t.Error("default expireMessagesPeriod is not 30s")
	}
	c, err = ParseYAML(strings.NewReader("persistent: false\n"), "x.yaml", nil)
	if err != nil || c.Persistence.Kind != KindMemory {
		t.Errorf("persistent=false: %v, %v", c, err)
	}
}

// parseTwins parses an XML <broker> body (with extra broker attributes) and
// a YAML document that should mean the same, and fails unless they load
// into equal Configs (lines aside). It returns the XML one.
func parseTwins(t *testing.T, brokerAttrs, xmlBody, yamlDoc string) *Config {
	t.Helper()
	doc := "<beans xmlns=\"http://www.springframework.org/schema/beans\">\n" +
		"<broker xmlns=\"http://activemq.apache.org/schema/core\" brokerName=\"twin\" " + brokerAttrs + ">\n" +
		xmlBody + "\n</broker>\n</beans>\n"
	x, err := ParseXML(strings.NewReader(doc), "activemq.xml", nil)
	if err != nil {
		t.Fatalf("XML:\n%s\n%v", doc, err)
	}
	y, err := ParseYAML(strings.NewReader("broker_name: twin\n"+yamlDoc), "wharf.yaml", nil)
	if err != nil {
		t.Fatalf("YAML:\n%s\n%v", yamlDoc, err)
	}
	clearLines(x)
	clearLines(y)
	if !reflect.DeepEqual(x, y) {
		t.Fatalf("XML and YAML differ:\nxml  %+v\nyaml %+v", x, y)
	}
	return x
}

func TestConfigPolicyEntryAttributes(t *testing.T) {
	cases := []struct {
		xml, yaml string
		check     func(p *PolicyEntry) bool
	}{
		{`prioritizedMessages="true"`, `prioritized_messages: true`, func(p *PolicyEntry) bool { return p.PrioritizedMessages }},
		{`maxPageSize="50"`, `max_page_size: 50`, func(p *PolicyEntry) bool { return p.MaxPageSize == 50 }},
		{`advisoryForConsumed="true"`, `advisory_for_consumed: true`, func(p *PolicyEntry) bool { return p.AdvisoryForConsumed }},
		{`advisoryForDelivery="true"`, `advisory_for_delivery: true`, func(p *PolicyEntry) bool { return p.AdvisoryForDelivery }},
		{`advisoryWhenFull="true"`, `advisory_when_full: true`, func(p *PolicyEntry) bool { return p.AdvisoryWhenFull }},
		{`advisoryForSlowConsumers="true"`, `advisory_for_slow_consumers: true`, func(p *PolicyEntry) bool { return p.AdvisoryForSlowConsumers }},
		{`advisoryForFastProducers="true"`, `advisory_for_fast_producers: true`, func(p *PolicyEntry) bool { return p.AdvisoryForFastProducers }},
		{`advisoryForDiscardingMessages="true"`, `advisory_for_discarding_messages: true`, func(p *PolicyEntry) bool { return p.AdvisoryForDiscardingMessages }},
		{`gcInactiveDestinations="true" inactiveTimeoutBeforeGC="30000"`, `gc_inactive_destinations: true, inactive_timeout_before_gc: 30s`,
			func(p *PolicyEntry) bool {
				return p.GCInactiveDestinations && p.InactiveTimeoutBeforeGC == 30*time.Second
			}},
		// The spelling ActiveMQ's documentation uses; PolicyEntry has both setters.
		{`inactiveTimoutBeforeGC="5000"`, `inactive_timeout_before_gc: 5s`, func(p *PolicyEntry) bool { return p.InactiveTimeoutBeforeGC == 5*time.Second }},
		{`persistJMSRedelivered="true"`, `persist_jms_redelivered: true`, func(p *PolicyEntry) bool { return p.PersistJMSRedelivered }},
		{`messageGroupMapFactoryType="simple"`, `message_group_map_factory_type: simple`, func(p *PolicyEntry) bool { return p.MessageGroupMapFactoryType == GroupMapSimple }},
	}
	for _, tc := range cases {
		t.Run(tc.yaml, func(t *testing.T) {
			xmlBody := `<destinationPolicy><policyMap><policyEntries><policyEntry queue=">" ` + tc.xml + `/></policyEntries>` +
				`<defaultEntry><policyEntry ` + tc.xml + `/></defaultEntry></policyMap></destinationPolicy>`
			yamlDoc := "destination_policy: [{queue: \">\", " + tc.yaml + "}]\ndefault_policy: {" + tc.yaml + "}\n"
			c := parseTwins(t, "", xmlBody, yamlDoc)
			if !tc.check(&c.Policies[0]) || !tc.check(c.DefaultPolicy) {
				t.Errorf("entry = %+v\ndefault = %+v", c.Policies[0], *c.DefaultPolicy)
			}
			if c.PolicyFor(message.TopicDest("x")) != c.DefaultPolicy {
				t.Error("topic x did not get the default entry")
			}
			if d := DefaultPolicyEntry(); tc.check(&d) {
				t.Error("DefaultPolicyEntry passes the check too; it proves nothing")
			}
		})
	}
	d := DefaultPolicyEntry()
	if d.PrioritizedMessages || d.MaxPageSize != 200 || d.AdvisoryForConsumed || d.AdvisoryForDelivery || d.AdvisoryWhenFull ||
		d.AdvisoryForSlowConsumers || d.AdvisoryForFastProducers || d.AdvisoryForDiscardingMessages || d.GCInactiveDestinations ||
		d.InactiveTimeoutBeforeGC != time.Minute || d.PersistJMSRedelivered || d.MessageGroupMapFactoryType != GroupMapCached {
		t.Errorf("DefaultPolicyEntry() = %+v", d)
	}
}

func TestConfigBrokerAndUsageAttributes(t *testing.T) {
	cases := []struct {
		name, attrs, xml, yaml string
		check                  func(c *Config) bool
	}{
		{"schedulerDirectory", `schedulerDirectory="/sched" schedulerSupport="true"`, "", "scheduler_directory: /sched\nscheduler_support: true\n",
			func(c *Config) bool { return c.SchedulerDirectory == "/sched" && c.SchedulerSupport }},
		{"enableStatistics", `enableStatistics="false"`, "", "enable_statistics: false\n",
			func(c *Config) bool { return !c.EnableStatistics }},
		{"tmpDataDirectory", `tmpDataDirectory="/spill"`, "", "tmp_data_directory: /spill\n",
			func(c *Config) bool { return c.TmpDataDirectory == "/spill" }},
		{"anonymousProducerAdvisorySupport", `anonymousProducerAdvisorySupport="true"`, "", "anonymous_producer_advisory_support: true\n",
			func(c *Config) bool { return c.AnonymousProducerAdvisorySupport }},
		{"useVirtualDestSubs", `useVirtualDestSubs="true"`, "", "use_virtual_dest_subs: true\n",
			func(c *Config) bool { return c.UseVirtualDestSubs }},
		{"useVirtualDestSubsOnCreation", `useVirtualDestSubs="true" useVirtualDestSubsOnCreation="true"`, "",
			"use_virtual_dest_subs: true\nuse_virtual_dest_subs_on_creation: true\n",
			func(c *Config) bool { return c.UseVirtualDestSubs && c.UseVirtualDestSubsOnCreation }},
		{"useVirtualTopics", `useVirtualTopics="false"`, "", "use_virtual_topics: false\n",
			func(c *Config) bool {
				return !c.UseVirtualTopics && len(c.VirtualTopics) == 0 && !c.InterceptorsConfigured
			}},
		{"offlineDurableSubscriber", `offlineDurableSubscriberTimeout="86400000" offlineDurableSubscriberTaskSchedule="3600000"`, "",
			"offline_durable_subscriber_timeout: 24h\noffline_durable_subscriber_task_schedule: 1h\n",
			func(c *Config) bool {
				return c.OfflineDurableSubscriberTimeout == 24*time.Hour && c.OfflineDurableSubscriberTaskSchedule == time.Hour
			}},
		{"jobSchedulerUsage", "", `<systemUsage><systemUsage sendFailIfNoSpace="true">
  <memoryUsage><memoryUsage limit="64 mb"/></memoryUsage>
  <jobSchedulerUsage><jobSchedulerUsage limit="1 gb"/></jobSchedulerUsage>
</systemUsage></systemUsage>`, "system_usage: {memory_limit: 64mb, job_scheduler_limit: 1gb, send_fail_if_no_space: true}\n",
			func(c *Config) bool {
				u := c.SystemUsage
				return u.JobSchedulerLimit == 1<<30 && u.MemoryLimit == 64<<20 && u.SendFailIfNoSpace && u.StoreLimit == 100<<30
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := parseTwins(t, tc.attrs, tc.xml, tc.yaml)
			if !tc.check(c) {
				t.Errorf("Config = %+v", c)
			}
			d := Default()
			if tc.check(&d) {
				t.Error("Default() passes the check too; it proves nothing")
			}
		})
	}
	c, err := ParseYAML(strings.NewReader("broker_name: b1\ndata_directory: /d\n"), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	// BrokerService.getSchedulerDirectoryFile: <dataDirectory>/<brokerName>/scheduler.
	// BrokerService.getTmpDataDirectory: <dataDirectory>/<brokerName>/tmp_storage.
	if c.TmpDataDirectory != filepath.Join("/d", "b1", "tmp_storage") {
		t.Errorf("default TmpDataDirectory %q", c.TmpDataDirectory)
	}
	if c.SchedulerDirectory != filepath.Join("/d", "b1", "scheduler") || c.SystemUsage.JobSchedulerLimit != 50<<30 || c.AnonymousProducerAdvisorySupport {
		t.Errorf("defaults: SchedulerDirectory %q, JobSchedulerLimit %d", c.SchedulerDirectory, c.SystemUsage.JobSchedulerLimit)
	}
}

const interceptorsXML = `<destinationInterceptors>
  <virtualDestinationInterceptor>
    <virtualDestinations>
      <virtualTopic name=">" prefix="Consumer.*." selectorAware="false"/>
      <compositeQueue name="orders.in" forwardOnly="true" copyMessage="true">
        <forwardTo>
          <queue physicalName="orders.audit"/>
          <topic physicalName="orders.events"/>
          <filteredDestination selector="region = 'EU' AND amount > 100" queue="orders.eu.big"/>
          <filteredDestination selector="urgent = TRUE" topic="alerts"/>
        </forwardTo>
      </compositeQueue>
      <virtualTopic name="Events.>" prefix="VQ.*." postfix=".in" selectorAware="true" local="true"
                    concurrentSend="true" transactedSend="true" dropOnResourceLimit="true"/>
      <compositeTopic name="prices.>" forwardOnly="false" concurrentSend="true" sendWhenNotMatched="true">
        <forwardTo><queue physicalName="prices.store"/></forwardTo>
      </compositeTopic>
    </virtualDestinations>
  </virtualDestinationInterceptor>
</destinationInterceptors>`

const interceptorsYAML = `destination_interceptors:
  virtual_topics:
    - {name: ">", prefix: "Consumer.*.", selector_aware: false}
    - name: Events.>
      prefix: VQ.*.
      postfix: .in
      selector_aware: true
      local: true
      concurrent_send: true
      transacted_send: true
      drop_on_resource_limit: true
  composites:
    - queue: orders.in
      forward_only: true
      forward_to:
        - queue: orders.audit
        - topic: orders.events
        - {queue: orders.eu.big, selector: "region = 'EU' AND amount > 100"}
        - {topic: alerts, selector: "urgent = TRUE"}
    - topic: prices.>
      forward_only: false
      concurrent_send: true
      send_when_not_matched: true
      forward_to: [{queue: prices.store}]
`

func TestConfigVirtualDestinations(t *testing.T) {
	c := parseTwins(t, "", interceptorsXML, interceptorsYAML)
	wantVT := []VirtualTopic{
		{Name: ">", Prefix: "Consumer.*."},
		{Name: "Events.>", Prefix: "VQ.*.", Postfix: ".in", SelectorAware: true, Local: true,
			ConcurrentSend: true, TransactedSend: true, DropOnResourceLimit: true},
	}
	if !reflect.DeepEqual(c.VirtualTopics, wantVT) {
		t.Errorf("VirtualTopics = %+v\nwant %+v", c.VirtualTopics, wantVT)
	}
	wantComp := []Composite{
		{Destination: message.QueueDest("orders.in"), ForwardOnly: true, CopyMessage: true, ForwardTo: []Forward{
			{Destination: message.QueueDest("orders.audit")},
			{Destination: message.TopicDest("orders.events")},
			{Destination: message.QueueDest("orders.eu.big"), Selector: "region = 'EU' AND amount > 100"},
			{Destination: message.TopicDest("alerts"), Selector: "urgent = TRUE"},
		}},
		{Destination: message.TopicDest("prices.>"), ForwardOnly: false, CopyMessage: true, ConcurrentSend: true,
			SendWhenNotMatched: true, ForwardTo: []Forward{{Destination: message.QueueDest("prices.store")}}},
	}
	if !reflect.DeepEqual(c.Composites, wantComp) {
		t.Errorf("Composites = %+v\nwant %+v", c.Composites, wantComp)
	}
	if !c.InterceptorsConfigured || !c.UseVirtualTopics {
		t.Errorf("InterceptorsConfigured = %v, UseVirtualTopics = %v", c.InterceptorsConfigured, c.UseVirtualTopics)
	}

	// Lines point at the elements.
	x, err := ParseXML(strings.NewReader("<broker>\n"+interceptorsXML+"\n</broker>"), "activemq.xml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if x.VirtualTopics[0].Line != 5 || x.Composites[0].Line != 6 || x.VirtualTopics[1].Line != 14 || x.Composites[1].Line != 16 {
		t.Errorf("lines: virtual topics %d %d, composites %d %d", x.VirtualTopics[0].Line, x.VirtualTopics[1].Line, x.Composites[0].Line, x.Composites[1].Line)
	}
	// copyMessage is deprecated and ignored by ActiveMQ: forwards are
	// always copies.
	x, err = ParseXML(strings.NewReader(`<broker><destinationInterceptors><virtualDestinationInterceptor><virtualDestinations>
<compositeQueue name="a" copyMessage="false"><forwardTo><queue physicalName="b"/></forwardTo></compositeQueue>
</virtualDestinations></virtualDestinationInterceptor></destinationInterceptors></broker>`), "activemq.xml", nil)
	if err != nil || !x.Composites[0].CopyMessage {
		t.Errorf("copyMessage=false: %+v, %v", x, err)
	}
}

func TestConfigDefaultVirtualTopic(t *testing.T) {
	builtIn := []VirtualTopic{{Name: "VirtualTopic.>", Prefix: "Consumer.*."}}
	cases := []struct {
		name, yaml string
		want       []VirtualTopic
	}{
		// BrokerService.createDefaultDestinationInterceptor.
		{"no interceptors", "", builtIn},
		{"useVirtualTopics false", "use_virtual_topics: false\n", []VirtualTopic{}},
		// Any configured interceptors replace the default, even empty ones.
		{"empty interceptors", "destination_interceptors: {}\n", []VirtualTopic{}},
		{"only a composite", "destination_interceptors: {composites: [{queue: a, forward_to: [{queue: b}]}]}\n", []VirtualTopic{}},
		{"a virtual topic", "destination_interceptors: {virtual_topics: [{}]}\n", []VirtualTopic{{Name: ">", Prefix: "Consumer.*.", Line: 1}}},
		{"configured and useVirtualTopics false", "use_virtual_topics: false\ndestination_interceptors: {virtual_topics: [{name: VT.>}]}\n",
			[]VirtualTopic{{Name: "VT.>", Prefix: "Consumer.*.", Line: 2}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseYAML(strings.NewReader(tc.yaml), "wharf.yaml", nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.VirtualTopics, tc.want) {
				t.Errorf("VirtualTopics = %+v, want %+v", c.VirtualTopics, tc.want)
			}
		})
	}
	x, err := ParseXML(strings.NewReader(`<broker><destinationInterceptors/></broker>`), "activemq.xml", nil)
	if err != nil || len(x.VirtualTopics) != 0 || !x.InterceptorsConfigured {
		t.Errorf("empty <destinationInterceptors/>: %+v, %v", x, err)
	}
	if v := DefaultVirtualTopic(); v.Name != ">" || v.Prefix != "Consumer.*." || v.Postfix != "" {
		t.Errorf("DefaultVirtualTopic() = %+v", v)
	}
}

func TestConfigCompositeFor(t *testing.T) {
	y := `destination_interceptors:
  composites:
    - {queue: orders.in, forward_to: [{queue: a}]}
    - {queue: "logs.>", forward_to: [{queue: b}]}
    - {topic: orders.in, forward_to: [{queue: c}]}
    - {queue: "x.*", forward_to: [{queue: d}]}
`
	c, err := ParseYAML(strings.NewReader(y), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		dest message.Destination
		want string // first forward target; "" for no composite
	}{
		{message.QueueDest("orders.in"), "a"},
		{message.TopicDest("orders.in"), "c"},    // composites match their own kind only
		{message.QueueDest("logs"), "b"},         // "logs.>" matches "logs"
		{message.QueueDest("logs.app.err"), "b"}, // and any descendant
		{message.QueueDest("x.y"), "d"},
		{message.QueueDest("orders"), ""},
		{message.QueueDest("orders.in.x"), ""},
		{message.TopicDest("logs.app"), ""},
		{message.Destination{Type: message.TempQueue, Name: "orders.in"}, ""},
	}
	for _, tc := range cases {
		got := c.CompositeFor(tc.dest)
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("CompositeFor(%v) = %+v, want nil", tc.dest, got)
		case tc.want != "" && (got == nil || got.ForwardTo[0].Destination.Name != tc.want):
			t.Errorf("CompositeFor(%v) = %+v, want the one forwarding to %s", tc.dest, got, tc.want)
		}
	}
}

func TestConfigVirtualDestinationErrors(t *testing.T) {
	wrap := func(body string) string {
		return "<broker>\n<destinationInterceptors>\n<virtualDestinationInterceptor>\n<virtualDestinations>\n" + body +
			"\n</virtualDestinations>\n</virtualDestinationInterceptor>\n</destinationInterceptors>\n</broker>"
	}
	// Line 5 is the first line of body.
	cases := []struct {
		name, body string
		line, col  int
		err        string
	}{
		{"bad selector", `<compositeQueue name="a"><forwardTo>
  <filteredDestination selector="color = " queue="b"/>
</forwardTo></compositeQueue>`, 6, 24, `<filteredDestination selector="color = ">: selector: syntax error`},
		{"missing physicalName", `<compositeQueue name="a"><forwardTo>
  <queue/>
</forwardTo></compositeQueue>`, 6, 3, "<queue>: physicalName is required"},
		{"empty physicalName", `<compositeTopic name="a"><forwardTo><topic physicalName=""/></forwardTo></compositeTopic>`, 5, 37, "<topic>: physicalName is required"},
		{"no forwardTo", `<compositeQueue name="a" forwardOnly="false"/>`, 5, 1, "<compositeQueue>: forwards nowhere"},
		{"empty forwardTo", `<compositeQueue name="a"><forwardTo/></compositeQueue>`, 5, 1, "forwards nowhere"},
		{"no name", `<compositeQueue><forwardTo><queue physicalName="b"/></forwardTo></compositeQueue>`, 5, 1, "<compositeQueue>: name is required"},
		{"forwardTo twice", `<compositeQueue name="a"><forwardTo><queue physicalName="b"/></forwardTo><forwardTo/></compositeQueue>`, 5, 74, "<forwardTo> appears more than once"},
		{"unknown forward target", `<compositeQueue name="a"><forwardTo><tempQueue physicalName="b"/></forwardTo></compositeQueue>`, 5, 37, "<tempQueue> is not supported by Wharf yet: a <forwardTo> target is"},
		{"unknown composite child", `<compositeQueue name="a"><forwardTo><queue physicalName="b"/></forwardTo><extra/></compositeQueue>`, 5, 74, "<extra> is not supported"},
		{"unknown virtual destination", `<mirroredQueue/>`, 5, 1, "<mirroredQueue> is not supported by Wharf yet"},
		{"unknown virtualTopic attribute", `<virtualTopic name="VT.>" setOriginalDestination="false"/>`, 5, 27, "attribute setOriginalDestination is not supported"},
		{"virtualTopic child", `<virtualTopic><x/></virtualTopic>`, 5, 15, "<x> is not supported"},
		{"filter without selector", `<compositeQueue name="a"><forwardTo><filteredDestination queue="b"/></forwardTo></compositeQueue>`, 5, 37, "selector is required"},
		{"filter with queue and topic", `<compositeQueue name="a"><forwardTo><filteredDestination selector="x=1" queue="b" topic="c"/></forwardTo></compositeQueue>`, 5, 83, "set exactly one of queue and topic, not both"},
		{"filter without target", `<compositeQueue name="a"><forwardTo><filteredDestination selector="x=1"/></forwardTo></compositeQueue>`, 5, 37, "set queue or topic"},
		{"blank selector", `<compositeQueue name="a"><forwardTo><filteredDestination selector=" " queue="b"/></forwardTo></compositeQueue>`, 5, 58, "the selector is empty"},
		{"forward to itself", `<compositeQueue name="a"><forwardTo><queue physicalName="a"/></forwardTo></compositeQueue>`, 5, 44, `queue "a" is intercepted by this composite itself`},
		{"forward into own pattern", `<compositeQueue name="a.>"><forwardTo><queue physicalName="a.b"/></forwardTo></compositeQueue>`, 5, 46, "every send would loop"},
		{"overlapping composites", `<compositeQueue name="orders.>"><forwardTo><queue physicalName="b"/></forwardTo></compositeQueue>
<compositeQueue name="orders.*.in"><forwardTo><queue physicalName="c"/></forwardTo></compositeQueue>`, 6, 17, `overlaps the composite queue "orders.>" (line 5)`},
		{"same composite twice", `<compositeTopic name="t"><forwardTo><queue physicalName="b"/></forwardTo></compositeTopic>
<compositeTopic name="t"><forwardTo><queue physicalName="c"/></forwardTo></compositeTopic>`, 6, 17, `a composite topic "t" is already defined (line 5)`},
		{"composite name", `<compositeQueue name="a,b"><forwardTo><queue physicalName="c"/></forwardTo></compositeQueue>`, 5, 17, `composite name "a,b" is not supported`},
		{"empty virtual topic name", `<virtualTopic name=""/>`, 5, 15, "name must not be empty"},
		{"bad boolean", `<virtualTopic selectorAware="yes"/>`, 5, 15, "not a boolean"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseXML(strings.NewReader(wrap(tc.body)), "activemq.xml", nil)
			wantProblem(t, err, tc.line, tc.col, tc.err)
		})
	}
	_, err := ParseXML(strings.NewReader("<broker>\n<destinationInterceptors>\n  <mirroredQueue/>\n</destinationInterceptors>\n</broker>"), "activemq.xml", nil)
	wantProblem(t, err, 3, 3, "<mirroredQueue> is not supported by Wharf yet: only <virtualDestinationInterceptor> is")
	if !strings.HasPrefix(err.Error(), "activemq.xml:3:3: ") {
		t.Errorf("Error() = %q", err)
	}
}

func TestConfigKahaDBCompactAcksIgnoresStoreGrowthNotBool(t *testing.T) {
	_, err := ParseXML(strings.NewReader(`<broker xmlns="http://activemq.apache.org/schema/core">
<persistenceAdapter><kahaDB compactAcksIgnoresStoreGrowth="sometimes"/></persistenceAdapter>
</broker>`), "activemq.xml", nil)
	wantProblem(t, err, 2, 0, "sometimes")
	_, err = ParseYAML(strings.NewReader("persistence:\n  kahadb:\n    compact_acks_ignores_store_growth: 3\n"), "wharf.yaml", nil)
	wantProblem(t, err, 3, 0, "compact_acks_ignores_store_growth")
}
