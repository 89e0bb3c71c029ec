// Package pgtest starts a private PostgreSQL cluster for tests: Debian's
// postgresql package (initdb and pg_ctl of /usr/lib/postgresql/<v>/bin),
// a cluster in a temporary directory listening on a free loopback port
// (and a Unix socket in its own directory only), stopped and deleted at
// the end. PostgreSQL refuses to run as root: run as root, the cluster
// belongs to the unprivileged user nobody, whose processes the harness
// starts with that uid.
//
// A test package shares one cluster (Shared), started on first use and
// stopped by Main; each test gets a database of its own (NewDatabase).
// Tests that stop or restart the server start a cluster of their own
// (Start). Without PostgreSQL installed, Shared and Start skip the test,
// naming the package to install (make test-deps installs it).
//
// Only test code imports this package.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Superuser is the cluster's superuser; it connects without a password
// over loopback (trust authentication).
const Superuser = "wharf"

// Cluster is a running PostgreSQL server of a test.
type Cluster struct {
	Dir  string // the cluster's directory: data/, log, socket/
	Host string // 127.0.0.1
	Port int
	bin  string
	cred *syscall.Credential

	mu      sync.Mutex
	running bool
}

// ErrNotInstalled is returned by Start when no initdb is found.
var ErrNotInstalled = errors.New("pgtest: PostgreSQL is not installed (Debian package postgresql; make test-deps installs it)")

// binDir finds the newest /usr/lib/postgresql/<version>/bin holding
// initdb and pg_ctl.
func binDir() (string, error) {
	if d := os.Getenv("WHARF_PG_BIN"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", ErrNotInstalled
}

// Start initialises a cluster in a new temporary directory and starts it
// on a free loopback port. Stop it with Stop (which also deletes it).
func Start() (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "wharf-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	c := &Cluster{Dir: dir, Host: "127.0.0.1", bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: running as root and no user nobody to run PostgreSQL as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: %w", err)
		}
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if out, err := c.run("initdb", "-D", c.dataDir(), "-U", Superuser, "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	if err := os.MkdirAll(c.socketDir(), 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if c.cred != nil {
		os.Chown(c.socketDir(), int(c.cred.Uid), int(c.cred.Gid))
	}
	// A port is free when we bind it, maybe not when postgres does:
	// retry with another a few times.
	for attempt := 0; ; attempt++ {
		c.Port, err = freePort()
		if err == nil {
			err = c.startServer()
		}
		if err == nil {
			return c, nil
		}
		if attempt == 4 {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

func (c *Cluster) dataDir() string   { return filepath.Join(c.Dir, "data") }
func (c *Cluster) socketDir() string { return filepath.Join(c.Dir, "socket") }
func (c *Cluster) logFile() string   { return filepath.Join(c.Dir, "postgres.log") }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// run runs a PostgreSQL program as the cluster's owner.
func (c *Cluster) run(prog string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(c.bin, prog), args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

func (c *Cluster) startServer() error {
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -c port=%d -c unix_socket_directories=%s -c max_connections=200 -c fsync=on -c max_prepared_transactions=0",
		c.Port, c.socketDir())
	if out, err := c.run("pg_ctl", "-D", c.dataDir(), "-l", c.logFile(), "-o", opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(c.logFile())
		return fmt.Errorf("pgtest: pg_ctl start on port %d: %w\n%s\n%s", c.Port, err, out, tail(log, 2000))
	}
	c.mu.Lock()
	c.running = true
	c.mu.Unlock()
	return nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// StopServer stops the server (fast shutdown: connections are closed) and
// keeps the cluster; StartServer starts it again on the same port.
func (c *Cluster) StopServer() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.running {
		return nil
	}
	if out, err := c.run("pg_ctl", "-D", c.dataDir(), "-m", "fast", "-w", "-t", "60", "stop"); err != nil {
		return fmt.Errorf("pgtest: pg_ctl stop: %w\n%s", err, out)
	}
	c.running = false
	return nil
}

// StartServer starts a server StopServer stopped, on the same port.
func (c *Cluster) StartServer() error { return c.startServer() }

// Stop stops the server and deletes the cluster.
func (c *Cluster) Stop() error {
	err := c.StopServer()
	if rerr := os.RemoveAll(c.Dir); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

// URL is the pgx connection string of database db as the superuser.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", Superuser, c.Host, c.Port, db)
}

// JDBCURL is ActiveMQ's form of the same: jdbc:postgresql://host:port/db.
func (c *Cluster) JDBCURL(db string) string {
	return fmt.Sprintf("jdbc:postgresql://%s:%d/%s", c.Host, c.Port, db)
}

// Exec runs sql on database db as the superuser.
func (c *Cluster) Exec(db, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.URL(db))
	if err != nil {
		return fmt.Errorf("pgtest: connect to %s: %w", db, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("pgtest: %s: %w", sql, err)
	}
	return nil
}

var dbSeq atomic.Int64

// NewDatabase creates an empty database, dropped when t ends, and
// returns its name.
func (c *Cluster) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	if err := c.Exec("postgres", "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.mu.Lock()
		running := c.running
		c.mu.Unlock()
		if running {
			// WITH (FORCE): a broker a failed test left running may
			// still be connected.
			if err := c.Exec("postgres", "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
				t.Logf("drop database %s: %v", name, err)
			}
		}
	})
	return name
}

var shared struct {
	once sync.Once
	c    *Cluster
	err  error
}

// Shared returns the test binary's cluster, starting it on first use;
// Main stops it. It skips t when PostgreSQL is not installed and fails it
// when the cluster does not start.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	shared.once.Do(func() { shared.c, shared.err = Start() })
	if errors.Is(shared.err, ErrNotInstalled) {
		t.Skip(shared.err)
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.c
}

// Own starts a cluster for t alone (to stop or restart it), stopped when
// t ends; it skips t when PostgreSQL is not installed.
func Own(t testing.TB) *Cluster {
	t.Helper()
	c, err := Start()
	if errors.Is(err, ErrNotInstalled) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop PostgreSQL: %v", err)
		}
	})
	return c
}

// Main runs the tests of m and stops the shared cluster: a test
// package's TestMain calls it.
func Main(m *testing.M) {
	code := m.Run()
	if err := StopShared(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// StopShared stops the shared cluster if Shared started one: for a
// TestMain that does more than Main.
func StopShared() error {
	if shared.c == nil {
		return nil
	}
	return shared.c.Stop()
}
