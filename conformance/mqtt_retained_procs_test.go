package conformance

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// wharfMQTTConfig is the YAML of startWharfMQTT: shards shards, the store
// left at its default (KahaDB under data_directory, disk syncs on) and one
// MQTT connector on loopback port 0.
const wharfMQTTConfig = `shards: %d
data_directory: %q
transport_connectors:
  - {name: mqtt, uri: "mqtt://127.0.0.1:0"}
`

// startWharfMQTT runs `wharf run` with the default store in dataDir and one
// MQTT connector, and returns it and the connector's address once the
// broker has started.
func startWharfMQTT(t *testing.T, dataDir string, shards int) (*wharfProc, string) {
	t.Helper()
	bin := wharfBinary(t)
	cfg := filepath.Join(t.TempDir(), "wharf.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, wharfMQTTConfig, shards, dataDir), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "wharf", exec.Command(bin, "run", "--config", cfg, "--log-format", "json", "--http=false"))
	p.waitLine(regexp.MustCompile(`"msg":"broker started"`), procStartTimeout)
	w := &wharfProc{proc: p}
	for _, rec := range w.logged("Listening for connections at") {
		if rec["connector"] == "mqtt" {
			addr, _ := rec["addr"].(string)
			return w, addr
		}
	}
	t.Fatalf("wharf started without logging its MQTT listener; log:\n%s", p.log.tail(60))
	return nil, ""
}

// mosquittoSubFormatted runs mosquitto_sub on filter, printing each message
// as "<retain flag> <topic> <payload>", and returns the lines as they come.
func mosquittoSubFormatted(t *testing.T, addr, filter string) <-chan string {
	t.Helper()
	return mosquittoSub(t, addr, "-q", "1", "-F", "%r %t %p", "-t", filter)
}

// TestConformanceMQTTRetainedSurviveRestartProcess: retained messages that
// Debian's mosquitto_pub -r left on a `wharf run` process on its default
// KahaDB store are replayed by mosquitto_sub after the process is stopped
// with SIGTERM and started again on the same directory (the README says
// they survive a restart), with one shard (one journal) and with two (a
// child store per shard). A live message after the replay is the barrier
// that shows nothing else was retained: an MQTT subscription gets the
// retained messages before anything published after it.
func TestConformanceMQTTRetainedSurviveRestartProcess(t *testing.T) {
	mosquittoTool(t, "mosquitto_pub")
	mosquittoTool(t, "mosquitto_sub")
	for _, shards := range []int{1, 2} {
		t.Run("shards="+strconv.Itoa(shards), func(t *testing.T) {
			data := t.TempDir()
			w, addr := startWharfMQTT(t, data, shards)
			mosquittoPub(t, addr, "-q", "1", "-r", "-t", "rt/t1", "-m", "one")
			mosquittoPub(t, addr, "-q", "1", "-r", "-t", "rt/t2", "-m", "two")
			mosquittoPub(t, addr, "-q", "1", "-r", "-t", "rt/t3", "-m", "three")
			mosquittoPub(t, addr, "-q", "1", "-r", "-t", "rt/t3", "-n") // clears t3
			want := []string{"1 rt/t1 one", "1 rt/t2 two"}
			checkRetained(t, addr, "before the restart", want)
			w.stop()

			w, addr = startWharfMQTT(t, data, shards)
			checkRetained(t, addr, "after a restart", want)
			if n := recoveredRetained(t, w); n != 2 {
				t.Errorf("store recovered %d retained messages, want 2; log:\n%s", n, w.log.tail(30))
			}
			// Still the topics' retained messages: a new one replaces t1's,
			// and that survives the next restart too.
			mosquittoPub(t, addr, "-q", "1", "-r", "-t", "rt/t1", "-m", "uno")
			w.stop()
			_, addr = startWharfMQTT(t, data, shards)
			checkRetained(t, addr, "after a second restart", []string{"1 rt/t1 uno", "1 rt/t2 two"})
		})
	}
}

// checkRetained subscribes with mosquitto_sub to rt/# and checks that it
// gets exactly want (in any order, as lines of mosquittoSubFormatted) and
// then a live marker, which is not retained.
func checkRetained(t *testing.T, addr, when string, want []string) {
	t.Helper()
	lines := mosquittoSubFormatted(t, addr, "rt/#")
	var got []string
	for range want {
		got = append(got, nextLine(t, lines))
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: mosquitto_sub got %q, want %q", when, got, want)
	}
	// Subscribed: it printed the replay.
	mosquittoPub(t, addr, "-q", "1", "-t", "rt/marker", "-m", "live")
	if l := nextLine(t, lines); l != "0 rt/marker live" {
		t.Fatalf("%s: after the retained messages got %q, want the live marker", when, l)
	}
}

// recoveredRetained sums retained_messages over w's "store recovered" log
// records (one per shard that recovered something).
func recoveredRetained(t *testing.T, w *wharfProc) int {
	t.Helper()
	n := 0
	for _, rec := range w.logged("store recovered") {
		if v, ok := rec["retained_messages"].(float64); ok {
			n += int(v)
		}
	}
	return n
}
