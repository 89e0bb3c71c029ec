package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"wharf/bench"
)

// TestCompareRabbitMQ starts the comparison's private RabbitMQ node, runs
// a short wharf bench over each of its three protocols (STOMP, MQTT, AMQP
// 1.0 with RabbitMQ's addresses), and stops it: afterwards neither the
// node nor the epmd it started is running, and no listener is left.
func TestCompareRabbitMQ(t *testing.T) {
	if !rabbitMQInstalled() {
		t.Skip("RabbitMQ is not installed (apt-get install rabbitmq-server)")
	}
	ctx := context.Background()
	b, err := startRabbitMQ(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			b.stop()
		}
	})
	if b.name != nameRabbitMQ || !b.alive() {
		t.Fatalf("broker %q alive %v", b.name, b.alive())
	}
	// The process started is the Erlang VM itself, whose RSS is the
	// broker's: not a shell waiting for it.
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", b.pid)); err != nil || !strings.Contains(filepath.Base(exe), "beam") {
		t.Errorf("pid %d runs %q (%v), want the beam VM", b.pid, exe, err)
	}
	for _, tc := range []struct {
		conn string
		set  func(*bench.Config)
	}{
		{connSTOMP, func(c *bench.Config) {}},
		{connSTOMP, func(c *bench.Config) { c.Scenario, c.Subscribers = bench.ScenarioTopic, 3 }},
		{connMQTT, func(c *bench.Config) { c.Scenario, c.Subscribers, c.QoS = bench.ScenarioTopic, 3, 1 }},
		{connAMQP, func(c *bench.Config) { c.Persistent, c.Destination = true, "durable-check" }},
		{connAMQP, func(c *bench.Config) { c.Scenario, c.Subscribers = bench.ScenarioTopic, 3 }},
	} {
		c := bench.DefaultConfig()
		c.URL, c.Count, c.Duration, c.Drain = b.urls[tc.conn], 300, 20*time.Second, 5*time.Second
		tc.set(&c)
		brokerSettings(nameRabbitMQ, &c)
		res, err := bench.Run(ctx, c, bench.RunOptions{})
		if err != nil {
			t.Fatalf("%s %s: %v", tc.conn, c.Scenario, err)
		}
		want := c.Count
		if c.Scenario == bench.ScenarioTopic {
			want *= int64(c.Subscribers)
		}
		if res.Received != want || res.Lost+res.Duplicates+res.Errors > 0 {
			t.Errorf("%s %s: received %d of %d, lost %d, duplicated %d, errors %d", tc.conn, c.Scenario, res.Received, want, res.Lost, res.Duplicates, res.Errors)
		}
	}
	// The persistent run's queue is durable: RabbitMQ writes persistent
	// messages to disk only in a durable queue.
	if out, err := b.ctl(ctx, "list_queues", "name", "durable"); err != nil || !strings.Contains(out, "durable-check\ttrue") {
		t.Errorf("rabbitmqctl list_queues: %v\n%s\nwant durable-check durable", err, out)
	}
	epmd := addr(b.epmd)
	if c, err := net.DialTimeout("tcp", epmd, time.Second); err != nil {
		t.Errorf("the node's epmd is not on %s: %v", epmd, err)
	} else {
		c.Close()
	}
	stopped = true
	if err := b.stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if b.alive() {
		t.Error("the node still runs after stop")
	}
	if err := syscall.Kill(b.pid, 0); err == nil {
		t.Errorf("pid %d still exists", b.pid)
	}
	for _, u := range []string{b.urls[connSTOMP], b.urls[connAMQP], "tcp://" + epmd} {
		a := u[strings.Index(u, "://")+3:]
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections after stop", a)
		}
	}
}

// TestCompareRabbitMQRetry: a node that exits during start-up is started
// again in a directory of its own, up to rabbitMQAttempts times; another
// failure (a timeout, say) is not retried.
func TestCompareRabbitMQRetry(t *testing.T) {
	dir := t.TempDir()
	var bases []string
	exitTwice := func(_ context.Context, base string) (*broker, error) {
		bases = append(bases, base)
		if len(bases) < 3 {
			return nil, fmt.Errorf("rabbitmq: %w (exit status 1)", errExited)
		}
		return &broker{name: nameRabbitMQ}, nil
	}
	b, err := retryStart(context.Background(), dir, exitTwice)
	want := []string{filepath.Join(dir, "try1"), filepath.Join(dir, "try2"), filepath.Join(dir, "try3")}
	if err != nil || b == nil || !slices.Equal(bases, want) {
		t.Errorf("after two exits: %v, %v, started in %v; want the third start in %v", b, err, bases, want)
	}
	bases = nil
	always := func(_ context.Context, base string) (*broker, error) {
		bases = append(bases, base)
		return nil, fmt.Errorf("rabbitmq: %w", errExited)
	}
	if _, err := retryStart(context.Background(), dir, always); !errors.Is(err, errExited) || len(bases) != rabbitMQAttempts {
		t.Errorf("always exiting: %v after %d starts, want errExited after %d", err, len(bases), rabbitMQAttempts)
	}
	bases = nil
	timeout := func(_ context.Context, base string) (*broker, error) {
		bases = append(bases, base)
		return nil, errors.New("rabbitmq: not listening after 2m0s")
	}
	if _, err := retryStart(context.Background(), dir, timeout); err == nil || len(bases) != 1 {
		t.Errorf("a timeout: %v after %d starts, want it after 1", err, len(bases))
	}
}

// TestCompareRabbitMQDefinitions: the definitions give guest, with the
// password guest under RabbitMQ's SHA-256 scheme (a 4-byte salt, then
// SHA-256 of salt and password), every permission on both virtual hosts.
func TestCompareRabbitMQDefinitions(t *testing.T) {
	var defs struct {
		Users []struct {
			Name         string
			PasswordHash string `json:"password_hash"`
			Algorithm    string `json:"hashing_algorithm"`
		}
		Vhosts      []struct{ Name string }
		Permissions []struct{ User, Vhost, Configure, Write, Read string }
	}
	if err := json.Unmarshal([]byte(rabbitMQDefinitions([4]byte{1, 2, 3, 4})), &defs); err != nil {
		t.Fatal(err)
	}
	if len(defs.Users) != 1 || defs.Users[0].Algorithm != "rabbit_password_hashing_sha256" {
		t.Fatalf("users %+v", defs.Users)
	}
	h, err := base64.StdEncoding.DecodeString(defs.Users[0].PasswordHash)
	want := sha256.Sum256([]byte("\x01\x02\x03\x04guest"))
	if err != nil || len(h) != 36 || string(h[:4]) != "\x01\x02\x03\x04" || string(h[4:]) != string(want[:]) {
		t.Errorf("password hash %x (%v), want the salt then SHA-256(salt, guest)", h, err)
	}
	var vhosts []string
	for _, v := range defs.Vhosts {
		vhosts = append(vhosts, v.Name)
	}
	if !slices.Equal(vhosts, []string{"/", "127.0.0.1"}) || len(defs.Permissions) != 2 {
		t.Errorf("vhosts %v, permissions %+v", vhosts, defs.Permissions)
	}
	for _, p := range defs.Permissions {
		if p.User != "guest" || p.Configure != ".*" || p.Write != ".*" || p.Read != ".*" {
			t.Errorf("permission %+v, want all of it for guest", p)
		}
	}
}
