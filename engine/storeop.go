package engine

import (
	"errors"
	"fmt"
)

// ErrInvalidStoreOp is what a store's Apply wraps for an operation that is
// malformed on its own (StoreOp.Check): the same operations are malformed
// on every store.
var ErrInvalidStoreOp = errors.New("engine: invalid store operation")

// Check says whether op is well formed on its own, without a store's
// state (ErrInvalidStoreOp when not): what every store refuses, before it
// applies anything of a batch.
func (op *StoreOp) Check() error {
	switch op.Kind {
	case OpAdd:
		if op.Dest.IsZero() || op.Msg == nil {
			return ErrInvalidStoreOp
		}
	case OpRemove, OpRemoveDest, OpAddDest:
		if op.Dest.IsZero() {
			return ErrInvalidStoreOp
		}
	case OpUpdate:
		if op.Dest.IsZero() || op.Count < 0 {
			return ErrInvalidStoreOp
		}
	case OpAck:
		// An ack names the subscription acknowledging a topic message;
		// queue messages are retired with OpRemove.
		if op.Dest.IsZero() || !op.Dest.Type.IsTopic() || op.Sub.Key == (SubKey{}) {
			return ErrInvalidStoreOp
		}
	case OpAddSub:
		if op.Sub.Key == (SubKey{}) || op.Sub.Destination.IsZero() || !op.Sub.Destination.Type.IsTopic() {
			return ErrInvalidStoreOp
		}
	case OpRemoveSub:
		if op.Sub.Key == (SubKey{}) {
			return ErrInvalidStoreOp
		}
	case OpAddJob:
		if op.Job == nil || op.Job.ID == "" || op.Job.Msg == nil || op.Job.Msg.Destination.IsZero() {
			return ErrInvalidStoreOp
		}
	case OpRemoveJob:
		if op.JobID == "" {
			return ErrInvalidStoreOp
		}
	case OpPrepare:
		if op.Tx == nil {
			return ErrInvalidStoreOp
		}
		for _, m := range op.Tx.Adds {
			if m == nil || m.Destination.IsZero() {
				return ErrInvalidStoreOp
			}
		}
		for _, a := range op.Tx.Acks {
			if a.Dest.IsZero() || a.Dest.Type.IsTopic() == (a.Sub == (SubKey{})) {
				return ErrInvalidStoreOp
			}
		}
	case OpCommit, OpRollback:
		if op.Tx == nil {
			return ErrInvalidStoreOp
		}
	case OpDelivered:
		if op.Dest.IsZero() || !op.Dest.Type.IsTopic() || op.Sub.Key == (SubKey{}) {
			return ErrInvalidStoreOp
		}
	default:
		return ErrInvalidStoreOp
	}
	return nil
}

var storeOpKindNames = [...]string{
	OpAdd:        "add",
	OpRemove:     "remove",
	OpAck:        "ack",
	OpAddSub:     "add-sub",
	OpRemoveSub:  "remove-sub",
	OpUpdate:     "update",
	OpRemoveDest: "remove-dest",
	OpAddJob:     "add-job",
	OpRemoveJob:  "remove-job",
	OpPrepare:    "prepare",
	OpCommit:     "commit",
	OpRollback:   "rollback",
	OpDelivered:  "delivered",
	OpAddDest:    "add-dest",
}

// String names the kind in errors and logs ("add", "remove-sub", ...).
func (k StoreOpKind) String() string {
	if int(k) < len(storeOpKindNames) && storeOpKindNames[k] != "" {
		return storeOpKindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// String names the operation in an error: its kind and what it is about.
func (op *StoreOp) String() string {
	k := op.Kind.String()
	switch op.Kind {
	case OpAddSub, OpRemoveSub:
		return k + " " + op.Sub.Key.String()
	case OpAck, OpDelivered:
		return fmt.Sprintf("%s %s seq %d sub %s", k, op.Dest, op.Seq, op.Sub.Key)
	case OpRemoveDest, OpAddDest:
		return k + " " + op.Dest.String()
	case OpAddJob:
		if op.Job == nil {
			return k + " <nil>"
		}
		return k + " " + op.Job.ID
	case OpRemoveJob:
		return k + " " + op.JobID
	case OpPrepare, OpCommit, OpRollback:
		if op.Tx == nil {
			return k + " <nil>"
		}
		return k + " " + op.Tx.XID.String()
	}
	return fmt.Sprintf("%s %s seq %d", k, op.Dest, op.Seq)
}
