package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const lsmDoc = `<beans xmlns="http://www.springframework.org/schema/beans">
  <broker xmlns="http://activemq.apache.org/schema/core" dataDirectory="/var/wharf">
    <persistenceAdapter>
      %s
    </persistenceAdapter>
  </broker>
</beans>`

func TestConfigLSM(t *testing.T) {
	c, err := ParseXML(strings.NewReader(strings.Replace(lsmDoc, "%s",
		`<wharfLSM directory="/srv/lsm" syncWrites="false" cleanupInterval="60000" memTableSize="32 mb" valueThreshold="2 kb" valueLogFileSize="128 mb" minFreeDisk="1 gb"/>`, 1)), "activemq.xml", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := LSM{Directory: "/srv/lsm", SyncWrites: false, CleanupInterval: time.Minute, MemTableSize: 32 << 20,
		ValueThreshold: 2 << 10, ValueLogFileSize: 128 << 20, MinFreeDisk: 1 << 30}
	if c.Persistence.Kind != KindLSM || c.Persistence.LSM != want {
		t.Errorf("XML: got kind %q %+v, want %q %+v", c.Persistence.Kind, c.Persistence.LSM, KindLSM, want)
	}

	c, err = ParseXML(strings.NewReader(strings.Replace(lsmDoc, "%s", `<wharfLSM/>`, 1)), "activemq.xml", nil)
	if err != nil {
		t.Fatal(err)
	}
	def := defaultLSM()
	def.Directory = filepath.Join("/var/wharf", "lsm")
	if c.Persistence.Kind != KindLSM || c.Persistence.LSM != def {
		t.Errorf("XML <wharfLSM/>: got kind %q %+v, want %q %+v", c.Persistence.Kind, c.Persistence.LSM, KindLSM, def)
	}

	yml := "data_directory: /var/wharf\npersistence:\n  lsm:\n    directory: /srv/lsm\n    sync_writes: false\n    cleanup_interval: 1m\n" +
		"    mem_table_size: 32mb\n    value_threshold: 2kb\n    value_log_file_size: 128mb\n    min_free_disk: 1gb\n"
	c, err = ParseYAML(strings.NewReader(yml), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Persistence.Kind != KindLSM || c.Persistence.LSM != want {
		t.Errorf("YAML: got kind %q %+v, want %q %+v", c.Persistence.Kind, c.Persistence.LSM, KindLSM, want)
	}

	cases := []struct {
		name, doc, want string
	}{
		{"unknown attribute", `<wharfLSM directory="/srv/lsm" turbo="true"/>`, "turbo"},
		{"value log file too big", `<wharfLSM valueLogFileSize="4 gb"/>`, `valueLogFileSize="4 gb">: 4294967296 bytes is not in 1 MiB..2 GiB`},
		{"value threshold above the batch", `<wharfLSM memTableSize="8 mb" valueThreshold="4 mb"/>`, `valueThreshold="4 mb">: 4194304 bytes is not in 64..1258291`},
		{"child element", `<wharfLSM><locker/></wharfLSM>`, "locker"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseXML(strings.NewReader(strings.Replace(lsmDoc, "%s", tc.doc, 1)), "activemq.xml", nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one naming %q", err, tc.want)
			}
		})
	}
}
