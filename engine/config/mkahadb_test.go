package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"wharf/engine/message"
)

const mkahaXML = `<beans xmlns="http://www.springframework.org/schema/beans">
<broker xmlns="http://activemq.apache.org/schema/core" brokerName="b" dataDirectory="/data">
<persistenceAdapter>
  <mKahaDB directory="/data/kahadb">
    <filteredPersistenceAdapters>
      <filteredKahaDB queue="orders.>">
        <persistenceAdapter><kahaDB journalMaxFileLength="1mb" enableJournalDiskSyncs="false"/></persistenceAdapter>
      </filteredKahaDB>
      <filteredKahaDB topic="prices.*"/>
      <filteredKahaDB perDestination="true">
        <persistenceAdapter><kahaDB checkpointInterval="10000" directory="/other"/></persistenceAdapter>
      </filteredKahaDB>
    </filteredPersistenceAdapters>
  </mKahaDB>
</persistenceAdapter>
</broker>
</beans>
`

const mkahaYAML = `broker_name: b
data_directory: /data
persistence:
  mkahadb:
    directory: /data/kahadb
    filtered:
      - queue: "orders.>"
        kahadb: {journal_max_file_length: 1mb, enable_journal_disk_syncs: false}
      - topic: "prices.*"
      - per_destination: true
        kahadb: {checkpoint_interval: 10s, directory: /other}
`

func TestConfigMKahaDB(t *testing.T) {
	x, err := ParseXML(strings.NewReader(mkahaXML), "activemq.xml", nil)
	if err != nil {
		t.Fatal(err)
	}
	y, err := ParseYAML(strings.NewReader(mkahaYAML), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Config{x, y} {
		for i := range c.Persistence.MKahaDB.Filters {
			c.Persistence.MKahaDB.Filters[i].Line = 0
		}
	}
	orders, prices, rest := DefaultKahaDB(), DefaultKahaDB(), DefaultKahaDB()
	orders.JournalMaxFileLength = 1 << 20
	orders.JournalDiskSyncStrategy, orders.EnableJournalDiskSyncs = SyncNever, false
	rest.CheckpointInterval = 10 * time.Second
	rest.Directory = "/other"
	want := MKahaDB{Directory: "/data/kahadb", Filters: []FilteredKahaDB{
		{Queue: "orders.>", KahaDB: orders},
		{Topic: "prices.*", KahaDB: prices},
		{PerDestination: true, KahaDB: rest},
	}}
	for name, c := range map[string]*Config{"xml": x, "yaml": y} {
		if c.Persistence.Kind != KindMKahaDB || !reflect.DeepEqual(c.Persistence.MKahaDB, want) {
			t.Errorf("%s: Persistence = %+v\nwant MKahaDB %+v", name, c.Persistence, want)
		}
	}
	f := x.Persistence.MKahaDB.Filters
	for _, tc := range []struct {
		filter int
		d      message.Destination
		want   bool
	}{
		{0, message.QueueDest("orders.eu"), true},
		{0, message.TopicDest("orders.eu"), false},
		{1, message.TopicDest("prices.gold"), true},
		{1, message.TopicDest("prices.gold.bars"), false},
		{2, message.QueueDest("anything"), true},
	} {
		if got := f[tc.filter].Matches(tc.d); got != tc.want {
			t.Errorf("filter %d Matches(%v) = %v, want %v", tc.filter, tc.d, got, tc.want)
		}
	}
}

func TestConfigMKahaDBDefaults(t *testing.T) {
	c, err := ParseYAML(strings.NewReader("data_directory: /d\npersistence: {mkahadb: {}}\n"), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	m := c.Persistence.MKahaDB
	if m.Directory != "/d/mkahadb" || len(m.Filters) != 1 || m.Filters[0].Destination() != (message.Destination{}) || !m.Filters[0].KahaDB.EnableJournalDiskSyncs {
		t.Errorf("MKahaDB = %+v, want one catch-all in /d/mkahadb", m)
	}
}

func TestConfigMKahaDBErrors(t *testing.T) {
	yamlCases := []struct {
		name, yaml string
		line, col  int
		err        string
	}{
		{"empty filter list", "persistence: {mkahadb: {filtered: []}}", 1, 25, "at least one filter is required"},
		{"no catch-all last", "persistence:\n  mkahadb:\n    filtered:\n      - {queue: a}\n", 4, 9, "the last filter must be a catch-all"},
		{"catch-all not last", "persistence:\n  mkahadb:\n    filtered:\n      - {per_destination: true}\n      - {queue: a}\n      - {}\n", 4, 9, "must be the last: the 2 after it"},
		{"queue and topic", "persistence:\n  mkahadb:\n    filtered:\n      - {queue: a, topic: b}\n      - {}\n", 4, 9, "set at most one of queue and topic"},
		{"bad pattern", "persistence:\n  mkahadb:\n    filtered:\n      - {queue: 'a.>.b'}\n      - {}\n", 4, 17, `"a.>.b" has ">" before its last element`},
		{"empty element", "persistence:\n  mkahadb:\n    filtered:\n      - {topic: 'a..b'}\n      - {}\n", 4, 17, "has an empty element"},
		{"same pattern twice", "persistence:\n  mkahadb:\n    filtered:\n      - {queue: a}\n      - {queue: a}\n      - {}\n", 5, 17, "is also the pattern of filter 0"},
		{"child journal too small", "persistence:\n  mkahadb:\n    filtered:\n      - {kahadb: {journal_max_file_length: 1kb}}\n", 4, 44, "1KiB is below the minimum 64KiB"},
		{"child unknown key", "persistence:\n  mkahadb:\n    filtered:\n      - {kahadb: {bogus: 1}}\n", 4, 19, `persistence.mkahadb.filtered[0].kahadb: unknown key "bogus"`},
		{"unknown filter key", "persistence:\n  mkahadb:\n    filtered:\n      - {destination: a}\n", 4, 10, `unknown key "destination"`},
		{"child both sync settings", "persistence:\n  mkahadb:\n    filtered:\n      - {kahadb: {enable_journal_disk_syncs: true, journal_disk_sync_strategy: never}}\n", 4, 80, "set either enableJournalDiskSyncs or journalDiskSyncStrategy"},
		{"kahadb and mkahadb", "persistence: {kahadb: {}, mkahadb: {}}", 1, 14, "set exactly one of kahadb, mkahadb, lsm and memory"},
	}
	for _, tc := range yamlCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseYAML(strings.NewReader(tc.yaml), "wharf.yaml", nil)
			wantProblem(t, err, tc.line, tc.col, tc.err)
		})
	}
	xmlCases := []struct {
		name, body string
		line, col  int
		err        string
	}{
		{"unknown mKahaDB attribute", `<mKahaDB journalMaxFileLength="1mb"/>`, 4, 10, "attribute journalMaxFileLength is not supported"},
		{"unknown filter attribute", "<mKahaDB><filteredPersistenceAdapters>\n<filteredKahaDB destination=\"a\"/>\n</filteredPersistenceAdapters></mKahaDB>", 5, 17, "attribute destination is not supported"},
		{"other adapter in a filter", "<mKahaDB><filteredPersistenceAdapters>\n<filteredKahaDB><persistenceAdapter><levelDB/></persistenceAdapter></filteredKahaDB>\n</filteredPersistenceAdapters></mKahaDB>", 5, 37, "<levelDB> is not supported by Wharf yet"},
		{"unknown child", "<mKahaDB>\n<transactionStore/>\n</mKahaDB>", 5, 1, "<transactionStore> is not supported by Wharf yet"},
		{"no catch-all last", "<mKahaDB><filteredPersistenceAdapters>\n<filteredKahaDB queue=\"a\"/>\n</filteredPersistenceAdapters></mKahaDB>", 5, 1, "the last filter must be a catch-all"},
		{"empty filter list", "<mKahaDB>\n<filteredPersistenceAdapters/>\n</mKahaDB>", 5, 1, "at least one filter is required"},
		{"keep-alive in a filter", "<mKahaDB><filteredPersistenceAdapters>\n<filteredKahaDB><persistenceAdapter><kahaDB lockKeepAlivePeriod=\"1000\"/></persistenceAdapter></filteredKahaDB>\n</filteredPersistenceAdapters></mKahaDB>", 5, 45, "lockKeepAlivePeriod is not supported inside <mKahaDB>"},
		{"child attribute error", "<mKahaDB><filteredPersistenceAdapters>\n<filteredKahaDB><persistenceAdapter><kahaDB journalMaxFileLength=\"1kb\"/></persistenceAdapter></filteredKahaDB>\n</filteredPersistenceAdapters></mKahaDB>", 5, 45, "1KiB is below the minimum 64KiB"},
	}
	for _, tc := range xmlCases {
		t.Run("xml "+tc.name, func(t *testing.T) {
			doc := "<beans>\n<broker brokerName=\"b\">\n<persistenceAdapter>\n" + tc.body + "\n</persistenceAdapter>\n</broker>\n</beans>\n"
			_, err := ParseXML(strings.NewReader(doc), "activemq.xml", nil)
			wantProblem(t, err, tc.line, tc.col, tc.err)
		})
	}
}
