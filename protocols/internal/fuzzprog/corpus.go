package fuzzprog

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"wharf/protocols/internal/conntest"
)

// Entry is one corpus input: the values of its lines, each a []byte or a
// byte.
type Entry struct {
	File   string
	Values []any
}

// Corpus reads the "go test fuzz v1" files of target: the package's
// testdata/fuzz/<target> and, when present, the coordinator's cached
// corpus in cacheDir (the caller passes $(go env GOCACHE)/fuzz/<module
// path>/<package>/<target>, or "" for none). It reads []byte, byte and
// uint8 values, the kinds the session fuzzers take, and fails on any
// other, so that a corpus replay never silently skips an input.
func Corpus(target, cacheDir string) ([]Entry, error) {
	var out []Entry
	for _, dir := range []string{filepath.Join("testdata", "fuzz", target), cacheDir} {
		if dir == "" {
			continue
		}
		names, err := os.ReadDir(dir)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sort.Slice(names, func(i, j int) bool { return names[i].Name() < names[j].Name() })
		for _, n := range names {
			file := filepath.Join(dir, n.Name())
			b, err := os.ReadFile(file)
			if err != nil {
				return nil, err
			}
			vals, err := parseCorpusFile(b)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			out = append(out, Entry{File: file, Values: vals})
		}
	}
	return out, nil
}

func parseCorpusFile(b []byte) ([]any, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<22)
	if !sc.Scan() || sc.Text() != "go test fuzz v1" {
		return nil, fmt.Errorf("not a \"go test fuzz v1\" file")
	}
	var vals []any
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		open := strings.IndexByte(line, '(')
		if open < 0 || !strings.HasSuffix(line, ")") {
			return nil, fmt.Errorf("malformed line %q", line)
		}
		kind, arg := line[:open], line[open+1:len(line)-1]
		switch kind {
		case "[]byte":
			s, err := strconv.Unquote(arg)
			if err != nil {
				return nil, fmt.Errorf("line %q: %w", line, err)
			}
			vals = append(vals, []byte(s))
		case "byte", "uint8":
			v, err := parseByte(arg)
			if err != nil {
				return nil, fmt.Errorf("line %q: %w", line, err)
			}
			vals = append(vals, v)
		default:
			return nil, fmt.Errorf("line %q: type %s not supported", line, kind)
		}
	}
	return vals, sc.Err()
}

// parseByte reads a byte written as a number or as a rune literal (the
// fuzzer writes 0xa2 as '¢').
func parseByte(arg string) (byte, error) {
	if strings.HasPrefix(arg, "'") {
		s, err := strconv.Unquote(arg)
		if err != nil {
			return 0, err
		}
		r, _ := utf8.DecodeRuneInString(s)
		if len(s) == 1 {
			return s[0], nil // a \x escape beyond ASCII
		}
		if r > 255 {
			return 0, fmt.Errorf("rune %q is not a byte", r)
		}
		return byte(r), nil
	}
	v, err := strconv.ParseUint(arg, 0, 8)
	return byte(v), err
}

// CacheDir is the coordinator's cached corpus of target in package pkg
// (an import path such as "wharf/protocols/stomp"): $(go env
// GOCACHE)/fuzz/<pkg>/<target>, or "" when go env cannot say. When
// WHARF_FUZZ_CORPUS is set it is $WHARF_FUZZ_CORPUS/<target> instead: a
// copy of the corpus that stays the same while fuzzing grows the cache,
// for comparing two builds on the same inputs.
func CacheDir(pkg, target string) string {
	if dir := os.Getenv("WHARF_FUZZ_CORPUS"); dir != "" {
		return filepath.Join(dir, target)
	}
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return ""
	}
	return filepath.Join(strings.TrimSpace(string(out)), "fuzz", pkg, target)
}

// Replay is a corpus-replay benchmark: each iteration runs body over every
// input of target's seed corpus (testdata/fuzz) and cached corpus, and the
// benchmark reports ns/input, the figure a fuzz target's execs/s is the
// inverse of (less the coordinator's own work).
func Replay(b *testing.B, pkg, target string, body func(tb testing.TB, vals []any)) {
	entries, err := Corpus(target, CacheDir(pkg, target))
	if err != nil {
		b.Fatal(err)
	}
	if len(entries) == 0 {
		b.Skipf("no corpus for %s", target)
	}
	conntest.SampleAsFuzzing()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, en := range entries {
			body(b, en.Values)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(entries)), "ns/input")
	b.ReportMetric(float64(len(entries)), "inputs")
}
