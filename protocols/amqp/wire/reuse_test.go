package wire

import (
	"bytes"
	"testing"
)

// TestDecoderReuseBodies: with ReuseBodies the transfer and disposition of
// one Feed are the decoder's, reused by the next Feed, and decode to the
// same values as without; a Clone keeps its values past the next Feed, and
// a transfer's payload and delivery-tag stay the frame's own.
func TestDecoderReuseBodies(t *testing.T) {
	msg := AppendMessage(nil, benchMessage())
	last := uint32(9)
	feed1 := AppendFrame(nil, 1, benchTransfer(), msg)
	feed1 = AppendFrame(feed1, 1, &Disposition{Role: RoleReceiver, First: 3, Last: &last, Settled: true, State: &Accepted{}}, nil)
	id2 := uint32(777)
	feed2 := AppendFrame(nil, 1, &Transfer{Handle: 2, DeliveryID: &id2, DeliveryTag: []byte("other"), More: true}, []byte("second payload"))
	feed2 = AppendFrame(feed2, 1, &Disposition{Role: RoleSender, First: 40, Settled: false}, nil)

	plain := NewDecoder(DefaultLimits())
	reuse := NewDecoder(DefaultLimits())
	reuse.ReuseBodies()
	for _, d := range []*Decoder{plain, reuse} {
		if _, err := d.Feed(hdrAMQP, nil); err != nil {
			t.Fatal(err)
		}
	}
	want1, err := plain.Feed(feed1, nil)
	if err != nil || len(want1) != 2 {
		t.Fatalf("plain decoder: %v, %d frames", err, len(want1))
	}
	got1, err := reuse.Feed(bytes.Clone(feed1), nil)
	if err != nil || len(got1) != 2 {
		t.Fatalf("reusing decoder: %v, %d frames", err, len(got1))
	}
	for i := range want1 {
		if !framesEqual(want1[i], got1[i]) {
			t.Fatalf("frame %d: reusing decoder gave %+v, plain %+v", i, got1[i].Body, want1[i].Body)
		}
	}
	t1 := got1[0].Body.(*Transfer)
	d1 := got1[1].Body.(*Disposition)
	kept := t1.Clone()
	payload, tag := got1[0].Payload, t1.DeliveryTag
	if *kept.DeliveryID != 12345 || kept.DeliveryID == t1.DeliveryID || kept.Settled == t1.Settled {
		t.Fatalf("Clone shares or lost the pointer fields: %+v", kept)
	}

	got2, err := reuse.Feed(feed2, nil)
	if err != nil || len(got2) != 2 {
		t.Fatalf("second feed: %v, %d frames", err, len(got2))
	}
	if got2[0].Body.(*Transfer) != t1 || got2[1].Body.(*Disposition) != d1 {
		t.Fatal("the second Feed did not reuse the first one's transfer and disposition")
	}
	if t1.Handle != 2 || *t1.DeliveryID != 777 || t1.Settled != nil || d1.First != 40 || d1.Last != nil {
		t.Fatalf("reused performatives hold %+v and %+v; want the second feed's", t1, d1)
	}
	if kept.Handle != 1 || *kept.DeliveryID != 12345 || *kept.MessageFormat != 0 || *kept.Settled || !bytes.Equal(kept.DeliveryTag, []byte{0, 0, 0, 0, 0, 0, 0x30, 0x39}) {
		t.Fatalf("the clone changed with the next Feed: %+v", kept)
	}
	if !bytes.Equal(payload, msg) || !bytes.Equal(tag, []byte{0, 0, 0, 0, 0, 0, 0x30, 0x39}) {
		t.Fatal("the first transfer's payload or delivery-tag changed with the next Feed")
	}
	if len(payload) != cap(payload) {
		t.Fatalf("payload has room past its end (len %d cap %d): an append would write into the frame", len(payload), cap(payload))
	}
	// The plain decoder allocates each one afresh.
	w2, err := plain.Feed(feed2, nil)
	if err != nil || w2[0].Body.(*Transfer) == want1[0].Body.(*Transfer) {
		t.Fatalf("plain decoder reused a transfer (err %v)", err)
	}
}

// TestDecoderReuseBodiesBurst: a Feed with more transfers than the arena
// keeps decodes every one into a transfer of its own.
func TestDecoderReuseBodiesBurst(t *testing.T) {
	d := NewDecoder(DefaultLimits())
	d.ReuseBodies()
	if _, err := d.Feed(hdrAMQP, nil); err != nil {
		t.Fatal(err)
	}
	var in []byte
	n := arenaKeep*2 + 3
	for i := range n {
		id := uint32(i)
		in = AppendFrame(in, 0, &Transfer{Handle: 0, DeliveryID: &id, DeliveryTag: []byte{byte(i)}}, []byte{byte(i)})
	}
	out, err := d.Feed(in, nil)
	if err != nil || len(out) != n {
		t.Fatalf("%v, %d frames, want %d", err, len(out), n)
	}
	seen := map[*Transfer]bool{}
	for i, f := range out {
		tr := f.Body.(*Transfer)
		if seen[tr] || *tr.DeliveryID != uint32(i) || f.Payload[0] != byte(i) || tr.DeliveryTag[0] != byte(i) {
			t.Fatalf("frame %d: shared %v, delivery-id %d, payload %d", i, seen[tr], *tr.DeliveryID, f.Payload[0])
		}
		seen[tr] = true
	}
	if len(d.arena.transfers) != arenaKeep {
		t.Fatalf("arena keeps %d transfers, want %d", len(d.arena.transfers), arenaKeep)
	}
}

func framesEqual(a, b Frame) bool {
	return a.Type == b.Type && a.Channel == b.Channel && bytes.Equal(a.Payload, b.Payload) &&
		bytes.Equal(AppendFrame(nil, 0, a.Body.(Performative), nil), AppendFrame(nil, 0, b.Body.(Performative), nil))
}
