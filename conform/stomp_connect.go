package conform

import (
	"regexp"
	"strings"
	"time"
)

// STOMP 1.2 "Connecting": CONNECT and STOMP both open a session.
func stompConnectFrames(t *T) {
	addr := t.Addr(STOMP)
	for _, cmd := range []string{"CONNECT", "STOMP"} {
		t.Run(cmd, func(t *T) {
			c := DialRaw(t, addr)
			f := c.Request(cmd, []string{"accept-version:1.2", "host:" + t.STOMPHost()}, nil)
			if f.Command != "CONNECTED" {
				t.Fatalf("%s: got %s, want CONNECTED", cmd, f)
			}
			c.version = "1.2"
			c.MustSync()
		})
	}
}

// STOMP 1.2 "Protocol Negotiation"; ActiveMQ StompCodec/ProtocolConverter:
// highest common version, 1.0 without accept-version, and an unsupported
// version is a fatal ERROR.
func stompVersionNegotiation(t *T) {
	addr := t.Addr(STOMP)
	cases := []struct {
		name, accept, want string
	}{
		{"no accept-version is 1.0", "", "1.0"},
		{"only 1.0", "1.0", "1.0"},
		{"1.0 and 1.1 pick 1.1", "1.0,1.1", "1.1"},
		{"all pick 1.2", "1.0,1.1,1.2", "1.2"},
		{"order does not matter", "1.2,1.0", "1.2"},
		{"unknown versions are ignored", "1.1,9.9", "1.1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *T) {
			c, f := ConnectRaw(t, addr, tc.accept)
			if got := f.Must(t, "version"); got != tc.want {
				t.Fatalf("version: got %q, want %q", got, tc.want)
			}
			c.MustSync()
		})
	}
	t.Run("unsupported version is fatal", func(t *T) {
		c := DialRaw(t, addr)
		c.Send("CONNECT", []string{"accept-version:2.0", "host:" + t.STOMPHost()}, nil)
		f := c.Expect("ERROR")
		if msg := f.Must(t, "message"); !strings.Contains(msg, "2.0") {
			t.Fatalf("ERROR message %q does not name the version asked for", msg)
		}
		c.ExpectClosed(wait)
	})
}

// CONNECTED carries version, session, server and the client's heart-beat
// swapped (ActiveMQ ProtocolConverter.onStompConnect; reference
// mappings.md §1.3).
func stompConnectedHeaders(t *T) {
	addr := t.Addr(STOMP)
	t.Run("without client-id", func(t *T) {
		_, f := ConnectRaw(t, addr, "1.1,1.2", "heart-beat:0,60000")
		if got := f.Must(t, "heart-beat"); got != "60000,0" {
			t.Fatalf("heart-beat: got %q, want the client's 0,60000 swapped", got)
		}
		if got := f.Must(t, "version"); got != "1.2" {
			t.Fatalf("version: got %q, want 1.2", got)
		}
		if f.Must(t, "session") == "" {
			t.Fatal("session header is empty")
		}
		server := f.Must(t, "server")
		if !strings.Contains(server, "/") {
			t.Fatalf("server: got %q, want name/version", server)
		}
	})
	t.Run("client-id is the session", func(t *T) {
		id := t.Uniq()
		_, f := ConnectRaw(t, addr, "1.2", "client-id:"+id)
		if got := f.Must(t, "session"); got != id {
			t.Fatalf("session: got %q, want the client-id %q", got, id)
		}
	})
	t.Run("no heart-beat header means none", func(t *T) {
		_, f := ConnectRaw(t, addr, "1.2")
		if got := f.Must(t, "heart-beat"); got != "0,0" {
			t.Fatalf("heart-beat: got %q, want 0,0", got)
		}
	})
}

// A client id is unique among live connections: ActiveMQ answers the second
// CONNECT with an InvalidClientIDException, reported as ERROR and the
// connection closed; the first connection is unaffected.
func stompClientIDUnique(t *T) {
	addr := t.Addr(STOMP)
	id := t.Uniq()
	first, _ := ConnectRaw(t, addr, "1.2", "client-id:"+id)
	second := DialRaw(t, addr)
	second.Send("CONNECT", []string{"accept-version:1.2", "host:" + t.STOMPHost(), "client-id:" + id}, nil)
	f := second.Expect("ERROR")
	// RegionBroker.addConnection's words, exactly: the broker's name, the
	// id, and where the connection holding it comes from.
	want := regexp.MustCompile("^Broker: [^ ]+ - Client: " + regexp.QuoteMeta(id) + " already connected from " +
		regexp.QuoteMeta("tcp://"+first.c.LocalAddr().String()) + "$")
	if msg := f.Must(t, "message"); !want.MatchString(msg) {
		t.Fatalf("ERROR message %q, want one matching %s", msg, want)
	}
	second.ExpectClosed(wait)
	first.MustSync()

	// Once the first connection is gone the id is free again.
	first.Disconnect()
	third, _ := ConnectRaw(t, addr, "1.2", "client-id:"+id)
	third.MustSync()
}

// STOMP 1.2 "Heart-beating": the broker sends EOLs at the interval the
// client asked for.
func stompHeartBeatServerSends(t *T) {
	addr := t.Addr(STOMP)
	c, f := ConnectRaw(t, addr, "1.2", "heart-beat:0,100")
	if got := f.Must(t, "heart-beat"); got != "100,0" {
		t.Fatalf("heart-beat: got %q, want 100,0", got)
	}
	// Read raw bytes for a while: at 100 ms there must be several beats.
	const want = 5
	deadline := time.Now().Add(3 * time.Second)
	c.c.SetReadDeadline(deadline)
	beats := 0
	start := time.Now()
	for beats < want {
		b, err := c.r.ReadByte()
		if err != nil {
			t.Fatalf("after %d heart-beats in %v: %v", beats, time.Since(start), err)
		}
		if b != '\n' {
			t.Fatalf("got byte %q, want only heart-beat EOLs on an idle connection", b)
		}
		beats++
	}
	// Five beats 100 ms apart take about 500 ms; far sooner would mean the
	// broker ignores the interval.
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Fatalf("%d heart-beats in %v, want about 100 ms apart", want, el)
	}
}

// A client that promised heart-beats and goes silent is cut off
// (ActiveMQ StompInactivityMonitor: read check every cx ×
// hbGracePeriodMultiplier ms); one that keeps its promise stays.
func stompHeartBeatClientSilent(t *T) {
	addr := t.Addr(STOMP)
	t.Run("silent client is closed", func(t *T) {
		c, f := ConnectRaw(t, addr, "1.2", "heart-beat:200,0")
		if got := f.Must(t, "heart-beat"); got != "0,200" {
			t.Fatalf("heart-beat: got %q, want 0,200", got)
		}
		start := time.Now()
		c.ExpectClosed(5 * time.Second)
		if el := time.Since(start); el < 150*time.Millisecond {
			t.Fatalf("closed after %v, before the 200 ms the client promised", el)
		}
	})
	t.Run("beating client stays", func(t *T) {
		c, _ := ConnectRaw(t, addr, "1.2", "heart-beat:200,0")
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		end := time.After(1200 * time.Millisecond)
	loop:
		for {
			select {
			case <-tick.C:
				c.Write([]byte{'\n'})
			case <-end:
				break loop
			}
		}
		c.MustSync()
	})
}
