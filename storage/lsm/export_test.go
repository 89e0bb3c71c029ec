package lsm

import (
	badger "github.com/dgraph-io/badger/v4"

	"wharf/engine"
)

// Orphans is how many orphan keys and key ranges shard ss still has to
// delete.
func Orphans(ss engine.ShardStore) int {
	s := ss.(*shardStore)
	return len(s.orphanKeys) + len(s.orphanPrefixes)
}

// KeyCount counts the keys of shard ss that start with prefix.
func KeyCount(ss engine.ShardStore, prefix byte) int {
	n := 0
	ss.(*shardStore).db.View(func(txn *badger.Txn) error {
		opt := badger.DefaultIteratorOptions
		opt.PrefetchValues = false
		opt.Prefix = []byte{prefix}
		it := txn.NewIterator(opt)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	return n
}

// PutMessageRecord stores value as the record of message seq of the
// destination with id dest, bypassing Apply (a damaged record).
func PutMessageRecord(ss engine.ShardStore, dest, seq uint64, value []byte) error {
	return ss.(*shardStore).db.Update(func(txn *badger.Txn) error { return txn.Set(msgKey(dest, seq), value) })
}
