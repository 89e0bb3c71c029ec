package tempstore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"wharf/engine"
)

func openStore(t *testing.T, o Options) (*Space, *Store) {
	t.Helper()
	if o.Dir == "" {
		o.Dir = filepath.Join(t.TempDir(), "tmp_storage")
	}
	sp, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := sp.OpenShard(3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close() })
	return sp, ts.(*Store)
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func rec(i int) []byte {
	return bytes.Repeat([]byte("r"+strconv.Itoa(i)+"."), 10+i%50)
}

func TestTempStorePutGetReleaseDeletesSegments(t *testing.T) {
	sp, s := openStore(t, Options{SegmentSize: 4096, WriteBuffer: 512})
	var refs []engine.TempRef
	for i := 0; i < 500; i++ {
		ref, err := s.Put(rec(i))
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	if n := len(files(t, sp.Dir())); n < 10 || n != s.Segments() {
		t.Fatalf("%d files, %d segments; want the same, at least 10", n, s.Segments())
	}
	for i, ref := range refs {
		got, err := s.Get(ref)
		if err != nil {
			t.Fatalf("Get %d: %v", i, err)
		}
		if !bytes.Equal(got, rec(i)) {
			t.Fatalf("record %d = %q, want %q", i, got, rec(i))
		}
		s.Release(ref)
	}
	// Every segment but the one being written is deleted; that one is
	// rewound to nothing.
	fs := files(t, sp.Dir())
	if len(fs) != 1 {
		t.Fatalf("files after releasing everything: %v, want the current segment only", fs)
	}
	if fi, err := os.Stat(fs[0]); err != nil || fi.Size() != 0 {
		t.Fatalf("current segment %v: size %v, want 0", err, fi)
	}
	// And it is reused.
	ref, err := s.Put([]byte("again"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ref); err != nil || string(got) != "again" {
		t.Fatalf("Get after rewind = %q, %v", got, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if fs := files(t, sp.Dir()); len(fs) != 0 {
		t.Fatalf("files after Close: %v", fs)
	}
}

func TestTempStoreOutOfOrderRelease(t *testing.T) {
	_, s := openStore(t, Options{SegmentSize: 1024})
	var refs []engine.TempRef
	for i := 0; i < 100; i++ {
		ref, err := s.Put(rec(i))
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	// Release the even ones, then read the odd ones: they must survive.
	for i := 0; i < len(refs); i += 2 {
		s.Release(refs[i])
	}
	for i := 1; i < len(refs); i += 2 {
		got, err := s.Get(refs[i])
		if err != nil || !bytes.Equal(got, rec(i)) {
			t.Fatalf("record %d = %q, %v", i, got, err)
		}
	}
}

func TestTempStoreDetectsCorruption(t *testing.T) {
	_, s := openStore(t, Options{WriteBuffer: 1})
	ref, err := s.Put([]byte("payload that will be damaged"))
	if err != nil {
		t.Fatal(err)
	}
	c := s.segs[ref.Seg]
	if _, err := c.f.WriteAt([]byte("X"), int64(ref.Off)+headerSize+3); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ref); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Get of a damaged record: %v, want ErrCorrupt", err)
	}
	if _, err := s.Get(engine.TempRef{Seg: 99}); !errors.Is(err, ErrUnknownRecord) {
		t.Fatalf("Get of an unknown segment: %v, want ErrUnknownRecord", err)
	}
	if _, err := s.Get(engine.TempRef{Seg: ref.Seg, Off: ref.Off, Len: 1 << 20}); !errors.Is(err, ErrUnknownRecord) {
		t.Fatalf("Get past the segment: %v, want ErrUnknownRecord", err)
	}
}

func TestTempStoreOpenEmptiesTheDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tmp_storage")
	if err := os.MkdirAll(filepath.Join(dir, "old", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"tmp-0-0.data", "old/sub/db-1.log"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("left over"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sp, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if fs := files(t, sp.Dir()); len(fs) != 0 {
		t.Fatalf("Open left %v", fs)
	}
	if _, err := Open(Options{}); err == nil {
		t.Fatal("Open without a directory succeeded")
	}
}
