package wire

import "testing"

// TestSTOMPWireTrim: Trim between frames drops the decoder's buffers and
// decoding goes on as before (the bytes held back after CONNECT included);
// in the middle of a frame it does nothing.
func TestSTOMPWireTrim(t *testing.T) {
	d := NewDecoder(Limits{})
	in := "CONNECT\naccept-version:1.2\nhost:h\n\n\x00SEND\ndestination:/queue/a\n\nfirst\x00SEND\ndestin"
	frames, _, err := d.Feed([]byte(in), nil)
	if err != nil || len(frames) != 1 || frames[0].Command != CmdConnect {
		t.Fatalf("first feed: %v %+v", err, frames)
	}
	d.SetVersion("1.2")
	d.Trim()
	if d.head != nil || d.text != nil || d.offs != nil || d.ends != nil {
		t.Fatalf("buffers kept after Trim between frames: head %d text %d", cap(d.head), cap(d.text))
	}
	frames, _, err = d.Feed(nil, nil) // what CONNECT held back
	if err != nil || len(frames) != 1 || frames[0].Command != CmdSend || string(frames[0].Body) != "first" {
		t.Fatalf("after Trim: %v %+v", err, frames)
	}
	// The second SEND is half read: Trim must keep it.
	d.Trim()
	if len(d.head) == 0 {
		t.Fatal("Trim dropped a frame being read")
	}
	frames, _, err = d.Feed([]byte("ation:/queue/b\n\nsecond\x00"), nil)
	if err != nil || len(frames) != 1 || frames[0].Command != CmdSend || string(frames[0].Body) != "second" {
		t.Fatalf("the frame split across Trim: %v %+v", err, frames)
	}
	if v, _ := frames[0].Get("destination"); v != "/queue/b" {
		t.Fatalf("destination %q, want /queue/b", v)
	}
}
