package client

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"wharf/protocols/openwire/wire"
)

func TestOpenWireClientConnectClose(t *testing.T) {
	var log frameLog
	o := testOptions()
	o.Trace = log.trace
	c := dial(t, &o)
	bi := c.BrokerInfo()
	if bi == nil || bi.BrokerName == "" || bi.BrokerId == nil {
		t.Fatalf("BrokerInfo = %+v, want a broker name and id", bi)
	}
	f := c.Format()
	if f.Version < 10 || f.Version > wire.MaxVersion {
		t.Errorf("negotiated version %d, want 10..%d", f.Version, wire.MaxVersion)
	}
	t.Logf("broker %q %q advertised %+v; negotiated %+v", bi.BrokerName, bi.BrokerURL, c.RemoteOptions(), f)
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := c.Err(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Err after Close = %v, want ErrClosed", err)
	}
	if _, err := c.Session(false); !errors.Is(err, ErrClosed) {
		t.Fatalf("Session after Close = %v, want ErrClosed", err)
	}
	t.Logf("frames:\n%s", log.String())

	// The first frames: our ConnectionInfo is answered by a Response, and
	// a BrokerInfo arrived.
	var sawBrokerInfo, sawResponse bool
	var connInfoID int32
	for _, fr := range log.snapshot() {
		switch x := fr.ds.(type) {
		case *wire.ConnectionInfo:
			connInfoID = x.CommandId
		case *wire.BrokerInfo:
			sawBrokerInfo = true
		case *wire.Response:
			if x.CorrelationId == connInfoID {
				sawResponse = true
			}
		}
	}
	if !sawBrokerInfo || !sawResponse {
		t.Fatalf("BrokerInfo seen %v, Response to ConnectionInfo seen %v", sawBrokerInfo, sawResponse)
	}
}

// Every combination of tight/loose and cache on/off carries messages.
func TestOpenWireClientEncodings(t *testing.T) {
	for _, tc := range []struct {
		name         string
		tight, cache bool
	}{
		{"tight cached", true, true},
		{"tight uncached", true, false},
		{"loose cached", false, true},
		{"loose uncached", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions()
			o.TightEncoding, o.CacheEnabled = tc.tight, tc.cache
			c := dial(t, &o)
			if f := c.Format(); f.TightEncodingEnabled && !tc.tight || f.CacheEnabled && !tc.cache {
				t.Fatalf("negotiated %+v although we asked tight=%v cache=%v", f, tc.tight, tc.cache)
			}
			s := session(t, c, false)
			d := queue(t)
			k := consumer(t, s, d, ConsumerOptions{})
			p := producer(t, s, d)
			want := []string{"one", "two ✓", "three 🎉"}
			sendTexts(t, p, want...)
			equalStrings(t, "received", receiveTexts(t, k, 3), want)
		})
	}
}

func TestOpenWireClientDuplicateClientID(t *testing.T) {
	o := testOptions()
	o.ClientID = uniqueName(t, "client")
	c1 := dial(t, &o)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c2, err := Dial(ctx, addr(t), o)
	if err == nil {
		c2.Close()
		t.Fatal("second Dial with the same client id succeeded")
	}
	var be *BrokerError
	if !errors.As(err, &be) || be.ClassName() != "javax.jms.InvalidClientIDException" || be.Command != "ConnectionInfo" {
		t.Fatalf("err = %v, want a BrokerError for ConnectionInfo with javax.jms.InvalidClientIDException", err)
	}
	t.Logf("broker said: %s: %s", be.ClassName(), be.Message())
	// The first connection is unaffected.
	s := session(t, c1, false)
	d := queue(t)
	k := consumer(t, s, d, ConsumerOptions{})
	sendTexts(t, producer(t, s, d), "still here")
	if got := receiveText(t, k); got != "still here" {
		t.Fatalf("got %q", got)
	}
	// The id is free again once the first connection closes.
	if err := c1.Close(); err != nil {
		t.Fatal(err)
	}
	dial(t, &o)
}

// The inactivity monitor: with a short negotiated MaxInactivityDuration both
// sides exchange KeepAliveInfo while idle and the connection survives.
func TestOpenWireClientKeepAlive(t *testing.T) {
	o := testOptions()
	o.MaxInactivityDuration = 600 * time.Millisecond
	o.MaxInactivityDurationInitalDelay = 100 * time.Millisecond
	c := dial(t, &o)
	if got := c.Format().MaxInactivityDuration; got != o.MaxInactivityDuration {
		t.Fatalf("negotiated MaxInactivityDuration %v, want %v", got, o.MaxInactivityDuration)
	}
	eventually(t, 10*time.Second, func() error {
		in, out := c.keepAliveIn.Load(), c.keepAliveOut.Load()
		if in < 3 || out < 3 {
			return fmt.Errorf("keep-alives received %d, sent %d; want 3 each", in, out)
		}
		return nil
	})
	if err := c.Err(); err != nil {
		t.Fatalf("connection ended: %v", err)
	}
	s := session(t, c, false)
	d := queue(t)
	k := consumer(t, s, d, ConsumerOptions{})
	sendTexts(t, producer(t, s, d), "after idling")
	receiveText(t, k)
}

func TestOpenWireClientParseDestination(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want *wire.Destination
	}{
		{"queue://a.b", wire.NewQueue("a.b")},
		{"topic://a.>", wire.NewTopic("a.>")},
		{"temp-queue://ID:x:1", wire.NewTempQueue("ID:x:1")},
		{"temp-topic://ID:x:2", wire.NewTempTopic("ID:x:2")},
		{"plain", wire.NewQueue("plain")},
		{"queue://", nil},
		{"", nil},
		{"http://x", nil},
	} {
		got, err := ParseDestination(tc.in)
		if tc.want == nil {
			if !errors.Is(err, ErrBadDestination) {
				t.Errorf("ParseDestination(%q) = %v, %v; want ErrBadDestination", tc.in, got, err)
			}
			continue
		}
		if err != nil || *got != *tc.want || got.String() != tc.in && tc.in != "plain" {
			t.Errorf("ParseDestination(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
