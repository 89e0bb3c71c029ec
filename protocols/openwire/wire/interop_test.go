package wire

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// frameFile is a stream of frames written by Java's OpenWireFormat.
type frameFile struct {
	name string
	f    Format
}

// parseFrameFileName reads "v12-tight-cache.bin" into a Format.
func parseFrameFileName(name string) (Format, bool) {
	var v int
	var enc, cache string
	base := strings.TrimSuffix(filepath.Base(name), ".bin")
	parts := strings.Split(base, "-")
	if len(parts) != 3 {
		return Format{}, false
	}
	if _, err := fmt.Sscanf(parts[0], "v%d", &v); err != nil {
		return Format{}, false
	}
	enc, cache = parts[1], parts[2]
	return Format{Version: v, TightEncodingEnabled: enc == "tight", CacheEnabled: cache == "cache", StackTraceEnabled: true}, true
}

// decodeAll feeds data to a Decoder in random pieces and returns every
// command, with the byte length of each frame.
func decodeAll(t testing.TB, data []byte, f Format, rng *rand.Rand) ([]DataStructure, []int) {
	t.Helper()
	d := NewDecoder(f, Limits{})
	var out []DataStructure
	var sizes []int
	consumed := 0
	for rest := data; len(rest) > 0; {
		n := 1 + rng.Intn(64)
		if rng.Intn(4) == 0 {
			n = 1 + rng.Intn(4096)
		}
		n = min(n, len(rest))
		d.Feed(rest[:n])
		rest = rest[n:]
		consumed += n
		for {
			ds, err := d.Next()
			if err != nil {
				t.Fatalf("decode after %d commands: %v", len(out), err)
			}
			if ds == nil {
				break
			}
			out = append(out, ds)
			sizes = append(sizes, consumed-d.Buffered())
		}
	}
	if d.Buffered() != 0 {
		t.Fatalf("%d bytes left undecoded", d.Buffered())
	}
	for i := len(sizes) - 1; i > 0; i-- {
		sizes[i] -= sizes[i-1]
	}
	return out, sizes
}

var nullFrame = []byte{0, 0, 0, 1, 0}

// checkReencode re-encodes cmds with one Encoder and requires the bytes
// Java wrote, frame by frame.
func checkReencode(t *testing.T, data []byte, f Format, cmds []DataStructure, sizes []int) {
	t.Helper()
	e := NewEncoder(f)
	var got []byte
	off := 0
	for i, ds := range cmds {
		// The Decoder skips null commands; Java wrote one in the list.
		for bytes.HasPrefix(data[off:], nullFrame) {
			var err error
			if got, err = e.Append(got, nil); err != nil {
				t.Fatal(err)
			}
			off += len(nullFrame)
			sizes[i] -= len(nullFrame)
		}
		start := len(got)
		var err error
		got, err = e.Append(got, ds)
		if err != nil {
			t.Fatalf("encode %d (%s): %v", i, TypeName(ds.DataStructureType()), err)
		}
		want := data[off : off+sizes[i]]
		if !bytes.Equal(got[start:], want) {
			t.Fatalf("frame %d (%s) differs:\n got %x\nwant %x", i, TypeName(ds.DataStructureType()), got[start:], want)
		}
		off += sizes[i]
	}
}

func TestOpenWireWireJavaFramesReencode(t *testing.T) {
	files, _ := filepath.Glob("testdata/frames/*.bin")
	if len(files) == 0 {
		t.Fatal("no committed Java frames in testdata/frames")
	}
	for _, file := range files {
		f, ok := parseFrameFileName(file)
		if !ok {
			continue
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cmds, sizes := decodeAll(t, data, f, rand.New(rand.NewSource(1)))
			checkReencode(t, data, f, cmds, sizes)
			checkJavaSemantics(t, f, cmds)
		})
	}
}

// javaClasspath returns the classpath for testdata/java, or skips.
func javaClasspath(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("javac"); err != nil {
		t.Skip("javac not found: apt-get install openjdk-17-jdk-headless activemq")
	}
	jars := []string{"activemq-client.jar", "geronimo-jms_1.1_spec.jar", "slf4j-api.jar", "hawtbuf.jar", "slf4j-nop.jar"}
	var cp []string
	for _, j := range jars {
		p := filepath.Join("/usr/share/java", j)
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s not found: apt-get install activemq libgeronimo-jms-1.1-spec-java libslf4j-java", p)
		}
		cp = append(cp, p)
	}
	return strings.Join(cp, string(os.PathListSeparator))
}

// compileJava compiles testdata/java/Interop.java and returns a runner.
func compileJava(t *testing.T) func(args ...string) (string, error) {
	t.Helper()
	cp := javaClasspath(t)
	out := t.TempDir()
	cmd := exec.Command("javac", "-nowarn", "-d", out, "-cp", cp, "testdata/java/Interop.java")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	return func(args ...string) (string, error) {
		cmd := exec.Command("java", append([]string{"-cp", out + string(os.PathListSeparator) + cp, "Interop"}, args...)...)
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
}

func TestOpenWireWireJavaInterop(t *testing.T) {
	run := compileJava(t)
	dir := t.TempDir()
	if out, err := run("gen", dir); err != nil {
		t.Fatalf("java gen: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.bin"))
	if len(files) != 12 {
		t.Fatalf("java wrote %d files, want 12", len(files))
	}
	for _, file := range files {
		f, _ := parseFrameFileName(file)
		t.Run("java-to-go/"+filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cmds, sizes := decodeAll(t, data, f, rand.New(rand.NewSource(2)))
			checkReencode(t, data, f, cmds, sizes)
			checkJavaSemantics(t, f, cmds)
		})
		t.Run("go-to-java/"+filepath.Base(file), func(t *testing.T) {
			e := NewEncoder(f)
			var data []byte
			cmds := sampleCommands(f.Version)
			for _, ds := range cmds {
				var err error
				if data, err = e.Append(data, ds); err != nil {
					t.Fatalf("encode %s: %v", TypeName(ds.DataStructureType()), err)
				}
			}
			path := filepath.Join(t.TempDir(), "go.bin")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := run("check", path, fmt.Sprint(f.Version), fmt.Sprint(f.TightEncodingEnabled), fmt.Sprint(f.CacheEnabled))
			if err != nil {
				t.Fatalf("java check: %v\n%s", err, out)
			}
			for _, want := range javaCheckLines(len(cmds)) {
				if !strings.Contains(out, want+"\n") {
					t.Errorf("java output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
