package command

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

var sentinels = []error{ErrTruncated, ErrUnknownEntryType, ErrMalformedVarint, ErrInvalidKey,
	ErrMissingField, ErrInvalidDestinationType, ErrTrailingBytes}

// FuzzKahaDBCommandDecode feeds arbitrary journal payloads to Decode. It
// checks that Decode returns a sentinel error instead of panicking, that no
// decoded byte field is longer than the input, and that
// decode → encode → decode is stable and encode is a fixed point. Decode works
// on whole records (the journal record header gives the size), so there is no
// partial-input feeding; truncations are covered by
// TestKahaDBCommandEveryTruncationFails and the last check here.
func FuzzKahaDBCommandDecode(f *testing.F) {
	for _, tc := range goldenTable() {
		f.Add(tc.raw)
	}
	for _, c := range roundTripCommands() {
		if enc := Encode(nil, c); len(enc) < 4096 {
			f.Add(enc)
		}
	}
	for _, c := range interopCases() {
		f.Add(Encode(nil, c))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		c, err := Decode(payload)
		if err != nil {
			if c != nil {
				t.Fatalf("Decode returned %#v with error %v", c, err)
			}
			for _, s := range sentinels {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("Decode error %v wraps no sentinel", err)
		}
		if n := maxBytesField(c); n > len(payload) {
			t.Fatalf("decoded byte field of %d bytes from a %d-byte payload", n, len(payload))
		}
		enc := Encode(nil, c)
		c2, err := Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Encode(%#v)) = %v", c, err)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("decode → encode → decode changed the command\n got %#v\nwant %#v", c2, c)
		}
		if enc2 := Encode(nil, c2); !bytes.Equal(enc, enc2) {
			t.Fatalf("Encode is not a fixed point\n got % x\nwant % x", enc2, enc)
		}
		if _, err := Decode(enc[:len(enc)-1]); err == nil {
			t.Fatalf("Decode accepted a truncated re-encoding % x", enc[:len(enc)-1])
		}
	})
}

// maxBytesField returns the length of the longest []byte field of c.
func maxBytesField(c Command) int {
	m := 0
	see := func(bs ...[]byte) {
		for _, b := range bs {
			m = max(m, len(b))
		}
	}
	tx := func(t *TransactionInfo) {
		if t != nil && t.XATransactionID != nil {
			see(t.XATransactionID.BranchQualifier, t.XATransactionID.GlobalTransactionID)
		}
	}
	switch c := c.(type) {
	case *AddMessage:
		tx(c.Transaction)
		see(c.Message)
	case *UpdateMessage:
		tx(c.Message.Transaction)
		see(c.Message.Message)
	case *RemoveMessage:
		tx(c.Transaction)
		see(c.Ack)
	case *Prepare:
		tx(&c.Transaction)
	case *Commit:
		tx(&c.Transaction)
	case *Rollback:
		tx(&c.Transaction)
	case *Subscription:
		see(c.SubscriptionInfo)
	case *ProducerAudit:
		see(c.Audit)
	case *AckMessageFileMap:
		see(c.AckMessageFileMap)
	case *AddScheduledJob:
		see(c.Payload)
	}
	return m
}
