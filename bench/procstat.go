package bench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// BrokerStats is what sampling the broker process found during a run.
type BrokerStats struct {
	PID int `json:"pid"`
	// RSS in bytes: at the start, the highest sample, at the end.
	RSSStartBytes int64 `json:"rss_start_bytes"`
	RSSMaxBytes   int64 `json:"rss_max_bytes"`
	RSSEndBytes   int64 `json:"rss_end_bytes"`
	// CPUSeconds is user plus system CPU time used during the run;
	// CPUPercent is that over the wall time (100 = one core busy).
	CPUSeconds float64 `json:"cpu_s"`
	CPUPercent float64 `json:"cpu_percent"`
	Samples    int     `json:"samples"`
}

// procSample is one reading of /proc/PID.
type procSample struct {
	at       time.Time
	cpuTicks int64 // utime + stime, in clock ticks
	rssBytes int64
}

// userHZ is the unit of the CPU times in /proc/PID/stat: USER_HZ, which
// Linux fixes at 100 for user space on every architecture (proc(5)).
const userHZ = 100

// sampleInterval is how often the broker is sampled.
const sampleInterval = 250 * time.Millisecond

func readProc(pid int) (procSample, error) {
	s := procSample{at: time.Now()}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, fmt.Errorf("%w %d: %v", ErrBrokerPID, pid, err)
	}
	// proc(5): "pid (comm) state ppid ..."; comm may hold spaces and
	// parentheses, so the fields are counted from the last ')'. utime and
	// stime are fields 14 and 15, the 12th and 13th after comm.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return s, fmt.Errorf("%w %d: unreadable stat %q", ErrBrokerPID, pid, stat)
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return s, fmt.Errorf("%w %d: short stat %q", ErrBrokerPID, pid, stat)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return s, fmt.Errorf("%w %d: unreadable CPU times in %q", ErrBrokerPID, pid, stat)
	}
	s.cpuTicks = ut + st
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, fmt.Errorf("%w %d: %v", ErrBrokerPID, pid, err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return s, fmt.Errorf("%w %d: VmRSS %q", ErrBrokerPID, pid, v)
			}
			s.rssBytes = kb << 10
		}
	}
	return s, nil
}

// sampler reads /proc/PID every sampleInterval from its own goroutine
// until stop. That goroutine owns the samples; stop reads them after it
// has ended.
type sampler struct {
	pid  int
	quit chan struct{}
	done chan struct{}

	first, last procSample
	rssMax      int64
	n           int
}

// startSampler takes a first sample (failing if the process cannot be
// read) and starts sampling.
func startSampler(pid int) (*sampler, error) {
	s0, err := readProc(pid)
	if err != nil {
		return nil, err
	}
	sp := &sampler{pid: pid, quit: make(chan struct{}), done: make(chan struct{}), first: s0, last: s0, rssMax: s0.rssBytes, n: 1}
	go sp.loop()
	return sp, nil
}

func (sp *sampler) loop() {
	defer close(sp.done)
	t := time.NewTicker(sampleInterval)
	defer t.Stop()
	for {
		select {
		case <-sp.quit:
			return
		case <-t.C:
			sp.take()
		}
	}
}

func (sp *sampler) take() {
	s, err := readProc(sp.pid)
	if err != nil {
		// The broker went away: keep what was sampled until then.
		return
	}
	sp.last = s
	sp.rssMax = max(sp.rssMax, s.rssBytes)
	sp.n++
}

// stop takes a last sample and returns the statistics.
func (sp *sampler) stop() *BrokerStats {
	close(sp.quit)
	<-sp.done
	sp.take()
	cpu := float64(sp.last.cpuTicks-sp.first.cpuTicks) / userHZ
	st := &BrokerStats{
		PID:           sp.pid,
		RSSStartBytes: sp.first.rssBytes,
		RSSMaxBytes:   sp.rssMax,
		RSSEndBytes:   sp.last.rssBytes,
		CPUSeconds:    cpu,
		Samples:       sp.n,
	}
	if wall := sp.last.at.Sub(sp.first.at).Seconds(); wall > 0 {
		st.CPUPercent = 100 * cpu / wall
	}
	return st
}
