package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"wharf/bench/internal/mosquitto"
	"wharf/internal/activemq"
)

// Machine describes where a comparison ran; the report's header.
type Machine struct {
	Cores    int    `json:"cores"`
	CPU      string `json:"cpu"`
	MemBytes int64  `json:"memory_bytes"`
	Kernel   string `json:"kernel"`
	// LoadAvg is /proc/loadavg's 1, 5 and 15 minute load when the
	// comparison started: other work on the machine skews every figure.
	LoadAvg string `json:"load_average"`
	// FsyncPerSec is how many write+fsync of 4 KiB the data directory's
	// file system did per second, measured at the start of the run: the
	// ceiling of a persistent send that waits for its own disk sync.
	FsyncPerSec float64 `json:"fsync_per_s"`
	// FsyncP50us and FsyncP99us are the median and 99th percentile of
	// those write+fsync times, in µs.
	FsyncP50us float64 `json:"fsync_p50_us,omitempty"`
	FsyncP99us float64 `json:"fsync_p99_us,omitempty"`
	// DataFS is the data directory and its file system type.
	DataDir string `json:"data_dir"`
	DataFS  string `json:"data_fs"`
	// NoFile is RLIMIT_NOFILE after raising the soft limit to the hard.
	NoFile uint64 `json:"nofile"`
	// PortRange is net.ipv4.ip_local_port_range: every client connection
	// takes an ephemeral port, and a closed one stays in TIME_WAIT.
	PortRange string `json:"ephemeral_ports"`
	TWReuse   string `json:"tcp_tw_reuse"`

	GoVersion string `json:"go"`
	Commit    string `json:"commit"`
	Wharf     string `json:"wharf"`
	ActiveMQ  string `json:"activemq"`
	Java      string `json:"java"`
	Mosquitto string `json:"mosquitto"`
	RabbitMQ  string `json:"rabbitmq,omitempty"`
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// describe fills in m from /proc, the tools and a disk sync test in
// dataDir, which takes about fsyncFor.
func describe(ctx context.Context, repo, wharfBin, dataDir string, fsyncFor time.Duration) (Machine, error) {
	m := Machine{Cores: runtime.NumCPU(), GoVersion: runtime.Version(), DataDir: dataDir}
	m.CPU = procField("/proc/cpuinfo", "model name", ":")
	if kb, err := strconv.ParseInt(strings.TrimSuffix(procField("/proc/meminfo", "MemTotal", ":"), " kB"), 10, 64); err == nil {
		m.MemBytes = kb << 10
	}
	m.Kernel = readTrim("/proc/sys/kernel/osrelease")
	m.LoadAvg = strings.Join(strings.Fields(readTrim("/proc/loadavg"))[:3:3], " ")
	m.PortRange = strings.Join(strings.Fields(readTrim("/proc/sys/net/ipv4/ip_local_port_range")), "-")
	m.TWReuse = readTrim("/proc/sys/net/ipv4/tcp_tw_reuse")
	m.DataFS = fsType(dataDir)
	probe, err := fsyncRate(dataDir, fsyncFor)
	if err != nil {
		return m, fmt.Errorf("disk sync test in %s: %w", dataDir, err)
	}
	m.FsyncPerSec = probe.PerSec
	m.FsyncP50us, m.FsyncP99us = micros(probe.P50), micros(probe.P99)
	m.Commit = "unknown"
	if c, err := output(ctx, repo, "git", "rev-parse", "--short", "HEAD"); err == nil {
		m.Commit = c
		if s, err := output(ctx, repo, "git", "status", "--porcelain", "--untracked-files=no"); err == nil && s != "" {
			m.Commit += " with uncommitted changes"
		}
	}
	m.Wharf, _ = output(ctx, repo, wharfBin, "version")
	if v, err := output(ctx, repo, "dpkg-query", "-W", "-f", "${Version}", "activemq"); err == nil {
		m.ActiveMQ = "ActiveMQ " + v
	}
	// java -version writes to stderr.
	java, _ := output(ctx, repo, "sh", "-c", "java -version 2>&1")
	m.Java, _, _ = strings.Cut(java, "\n")
	m.Mosquitto = mosquitto.Version()
	m.RabbitMQ = rabbitMQVersion(ctx)
	return m, nil
}

// output runs a command in dir and returns its standard output, trimmed.
func output(ctx context.Context, dir, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

func readTrim(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

// procField is the value of the first "key<sep> value" line of a /proc
// file.
func procField(path, key, sep string) string {
	b, _ := os.ReadFile(path)
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(line, sep)
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// fsyncProbe is a disk sync test's outcome: how many write+fsync of 4 KiB
// a second, and the distribution of their times.
type fsyncProbe struct {
	PerSec   float64
	P50, P99 time.Duration
	N        int
}

// fsyncRate writes 4 KiB and fsyncs it, appending, in a loop for about d
// in a file in dir, and returns the operations per second and the
// percentiles of their times: what a journal that syncs every write can
// do at most, and how long one such write takes.
func fsyncRate(dir string, d time.Duration) (fsyncProbe, error) {
	f, err := os.CreateTemp(dir, "fsync-test-")
	if err != nil {
		return fsyncProbe{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := bytes.Repeat([]byte{'w'}, 4096)
	var times []time.Duration
	start := time.Now()
	for time.Since(start) < d {
		t0 := time.Now()
		if _, err := f.Write(buf); err != nil {
			return fsyncProbe{}, err
		}
		if err := f.Sync(); err != nil {
			return fsyncProbe{}, err
		}
		times = append(times, time.Since(t0))
	}
	p := fsyncProbe{PerSec: float64(len(times)) / time.Since(start).Seconds(), N: len(times)}
	p.P50, p.P99 = percentile(times, 0.50), percentile(times, 0.99)
	return p, nil
}

// percentile is the q-quantile of ts by the nearest-rank method: the
// smallest time at or above which a fraction q of them lie; 0 for none.
func percentile(ts []time.Duration, q float64) time.Duration {
	if len(ts) == 0 {
		return 0
	}
	s := slices.Clone(ts)
	slices.Sort(s)
	rank := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(rank, 0), len(s)-1)]
}

// fsType names the file system dir is on, from statfs(2)'s f_type.
func fsType(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "unknown"
	}
	names := map[int64]string{
		0xEF53: "ext4", 0x58465342: "xfs", 0x9123683E: "btrfs", 0x01021994: "tmpfs",
		0x794C7630: "overlayfs", 0x2FC12FC1: "zfs", 0x6969: "nfs", 0x65735546: "fuse",
	}
	if n, ok := names[int64(st.Type)]; ok {
		return n
	}
	return fmt.Sprintf("0x%X", st.Type)
}

// raiseNoFile raises RLIMIT_NOFILE's soft limit to the hard one: the idle
// connections scenario holds 10,000 sockets here and as many in the
// broker, which inherits the limit.
func raiseNoFile() (uint64, error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, err
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
			return 0, err
		}
	}
	return l.Cur, nil
}

// requirement is a Debian package the comparison needs and a file that
// shows it is installed.
type requirement struct {
	pkg  string
	have func() bool
}

func fileExists(p string) func() bool {
	return func() bool { _, err := os.Stat(p); return err == nil }
}

var requirements = []requirement{
	{"default-jre-headless", func() bool { _, err := exec.LookPath("java"); return err == nil }},
	{"activemq", fileExists(filepath.Join(activemq.Home, "bin", "activemq.jar"))},
	// The FuseSource MQTT codec ActiveMQ's MQTT transport needs.
	{"libmqtt-client-java", fileExists("/usr/share/java/mqtt-client.jar")},
	{"mosquitto", func() bool { _, err := mosquitto.Binary(); return err == nil }},
	// javac, for the JMS-client rows (bench/jms/JmsBench.java).
	{"default-jdk-headless", func() bool { _, err := exec.LookPath("javac"); return err == nil }},
}

// installTimeout bounds apt-get.
const installTimeout = 10 * time.Minute

// ensureInstalled installs the missing requirements with apt-get when
// running as root, and otherwise says what to install.
func ensureInstalled(ctx context.Context, log io.Writer) error {
	var missing []string
	for _, r := range requirements {
		if !r.have() {
			missing = append(missing, r.pkg)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	hint := "apt-get install -y " + strings.Join(missing, " ")
	if os.Geteuid() != 0 {
		return fmt.Errorf("missing %s; as root: %s", strings.Join(missing, ", "), hint)
	}
	fmt.Fprintf(log, "installing %s\n", strings.Join(missing, " "))
	ctx, cancel := context.WithTimeout(ctx, installTimeout)
	defer cancel()
	apt := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("apt-get %s: %w\n%s", strings.Join(args, " "), err, tailString(string(out), 10))
		}
		return nil
	}
	install := append([]string{"install", "-y", "-q"}, missing...)
	if err := apt(install...); err != nil {
		// A fresh machine has no package lists yet.
		if uerr := apt("update", "-q"); uerr != nil {
			return errors.Join(err, uerr)
		}
		if err := apt(install...); err != nil {
			return err
		}
	}
	for _, r := range requirements {
		if !r.have() {
			return fmt.Errorf("%s still missing after %s", r.pkg, hint)
		}
	}
	return nil
}

func tailString(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
