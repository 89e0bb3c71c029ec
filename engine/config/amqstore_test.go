package config

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestConfigAMQStoreSuggestsKahaDB: seed 003's <amqPersistenceAdapter>,
// with every attribute its table documents, is refused as ActiveMQ 5.17
// refuses it, and the error spells the <kahaDB> element those attributes
// translate to, naming the ones with no KahaDB equivalent. The element it
// suggests is itself a configuration Wharf accepts, with the same
// directory, file length and intervals.
func TestConfigAMQStoreSuggestsKahaDB(t *testing.T) {
	const doc = `<broker xmlns="http://activemq.apache.org/schema/core" brokerName="broker" persistent="true" useShutdownHook="false">
  <persistenceAdapter>
    <amqPersistenceAdapter directory="activemq-data" useNIO="true" syncOnWrite="true" maxFileLength="32mb"
      persistentIndex="true" checkpointInterval="6000" maxCheckpointMessageAddSize="4096" cleanupInterval="30000"
      indexBinSize="1024" indexKeySize="96" indexPageSize="16kb" archiveDataLogs="true" directoryArchive="archive"/>
  </persistenceAdapter>
</broker>`
	_, err := ParseXML(strings.NewReader(doc), "activemq.xml", nil)
	wantProblem(t, err, 3, 5, "<amqPersistenceAdapter>: the AMQ message store was removed from ActiveMQ in 5.9 (5.17 refuses it too)")
	msg := err.Error()
	for _, dropped := range []string{"useNIO", "persistentIndex", "maxCheckpointMessageAddSize", "indexBinSize", "indexKeySize", "indexPageSize", "directoryArchive"} {
		if !strings.Contains(msg, dropped) {
			t.Errorf("the error does not name %s as dropped: %s", dropped, msg)
		}
	}
	kaha := regexp.MustCompile(`<kahaDB [^>]*/>`).FindString(msg)
	if kaha == "" {
		t.Fatalf("no <kahaDB .../> in the error: %s", msg)
	}
	c, err := ParseXML(strings.NewReader(`<broker xmlns="http://activemq.apache.org/schema/core"><persistenceAdapter>`+kaha+`</persistenceAdapter></broker>`), "suggested.xml", nil)
	if err != nil {
		t.Fatalf("the suggested %s is refused: %v", kaha, err)
	}
	k := c.Persistence.KahaDB
	if c.Persistence.Kind != KindKahaDB || k.Directory != "activemq-data" || k.JournalMaxFileLength != 32<<20 ||
		k.CheckpointInterval != 6*time.Second || k.CleanupInterval != 30*time.Second || !k.ArchiveDataLogs {
		t.Errorf("the suggested %s gives %s %+v", kaha, c.Persistence.Kind, k)
	}

	// AMQ's default syncOnWrite=false gets no sync attribute: KahaDB's
	// default (sync every persistent write) stays.
	_, err = ParseXML(strings.NewReader(`<broker xmlns="http://activemq.apache.org/schema/core"><persistenceAdapter><amqPersistenceAdapter syncOnWrite="false"/></persistenceAdapter></broker>`), "activemq.xml", nil)
	if err == nil || !strings.Contains(err.Error(), "here <kahaDB/>") {
		t.Errorf("syncOnWrite=false: %v", err)
	}
}
