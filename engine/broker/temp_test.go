package broker_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wharf/engine"
	"wharf/engine/broker"
	"wharf/engine/message"
	"wharf/storage/tempstore"
)

// TestBrokerTempStoreFromConfig: <broker tmpDataDirectory> and
// <tempUsage> reach the engine; the directory is emptied at start (and
// says so in the log), and a persistent="false" broker spills to it.
func TestBrokerTempStoreFromConfig(t *testing.T) {
	tmp := filepath.Join(t.TempDir(), "spill")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "tmp-0-7.data"), []byte("from the last run"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := parse(t, `<broker xmlns="http://activemq.apache.org/schema/core" persistent="false" tmpDataDirectory="`+tmp+`">
  <destinationPolicy><policyMap><policyEntries>
    <policyEntry queue=">" memoryLimit="64 kb" cursorMemoryHighWaterMark="50"/>
  </policyEntries></policyMap></destinationPolicy>
  <systemUsage><systemUsage><tempUsage><tempUsage limit="10 mb"/></tempUsage></systemUsage></systemUsage>
</broker>`)
	f := memoryOnly()
	f.Temp = func(dir string, log *slog.Logger) (engine.TempSpace, error) {
		return tempstore.Open(tempstore.Options{Dir: dir, Logger: log})
	}
	var logs bytes.Buffer
	b, err := broker.Start(c, broker.Options{Factories: f, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := os.Stat(filepath.Join(tmp, "tmp-0-7.data")); !os.IsNotExist(err) {
		t.Fatalf("the previous run's temp file survived the start: %v", err)
	}
	if !strings.Contains(logs.String(), "temp store emptied") || !strings.Contains(logs.String(), "files=1") {
		t.Fatalf("no log of what was removed:\n%s", logs.String())
	}
	e := b.Engine()
	conn, err := e.Connect(engine.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	q := message.QueueDest("q")
	for i := 0; i < 200; i++ {
		if err := conn.Send(&message.Message{Destination: q, Body: make([]byte, 1024)}, "", nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	st := e.Stats(q)
	if u := e.Usage(); st.TempUsage == 0 || u.TempLimit != 10<<20 || st.MemoryUsage > 34<<10 {
		t.Fatalf("stats %+v, usage %+v: want spilled past 50%% of 64 kb", st, u)
	}
}
