// Package storetest is the behaviour suite every engine.Store passes: memory
// now, KahaDB, LSM and JDBC later. A backend's test calls Run:
//
//	func TestStoreKahaDB(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) func() engine.Store {
//			dir := t.TempDir()
//			return func() engine.Store { return mustOpen(t, dir) }
//		})
//	}
//
// newStore is called once per subtest and makes a fresh, empty backing
// location; the reopen function it returns opens a Store over that location.
// The suite calls reopen again only after closing every ShardStore and the
// previous Store, which is how it simulates a broker restart. A backend
// whose Close leaves the value reusable (memory) may return the same Store.
//
// What the suite requires of every store, beyond engine.Store's comments:
//   - Every header, property (of every Kind) and body kind survives a restart.
//     The Origin field (a connection id) and Original (a cached wire form) are
//     not compared: they do not outlive the connection that set them.
//   - Recover yields every durable subscription before any message, and the
//     messages of each destination in add order. The order of subscriptions,
//     the order of the Subs of a message and the order between destinations
//     are not checked.
//   - OpRemove, OpAck and OpUpdate of a sequence that is not stored, and an
//     OpAck by a subscription that already acknowledged, are ignored (no
//     error, no change), as KahaDB ignores removes of unknown messages.
//   - OpAddSub of a key already stored replaces its record; OpRemoveSub and
//     OpRemoveDest of something not stored are ignored.
//   - OpRemoveSub drops the subscription's references and every message that
//     only it needed; OpRemoveDest of a topic also removes the durable
//     subscriptions whose Destination is that topic.
//   - A batch with an OpAdd of a (destination, seq) already stored, or added
//     earlier in the same batch, fails as a whole: nothing in it is applied,
//     and the ShardStore stays usable. Every store indexes messages by
//     (destination, seq), so every store can detect it.
//   - Scheduled jobs are recovered after every subscription and message,
//     with every field and their message; OpAddJob of an ID already stored
//     replaces the job, OpRemoveJob of an unknown ID is ignored, and
//     OpRemoveDest keeps the jobs of the destination. Job operations are
//     part of the atomic batch like the others.
//   - A prepared transaction (OpPrepare) is recovered, after the messages
//     and before the jobs, with its adds in order and every field of their
//     messages, until an OpCommit or OpRollback of its XID; its adds are
//     not messages and its acks change no message until the engine's own
//     operations after the OpCommit do. A commit whose sends are not all
//     followed by their OpAdd (consumed before the write, a topic nobody
//     needs) stores only those that are. Preparing an XID the shard holds
//     fails the batch; ending an XID it does not hold is ignored.
//   - A destination named by OpAddDest, or holding a stored message, is
//     recovered (RecoveredItem.Created, before every other item) after a
//     restart even once it holds nothing, until OpRemoveDest removes it;
//     OpAddDest of a destination already known changes nothing. A store
//     that, as configured, keeps only the destinations its records name
//     says so with OnlyNamedDestinations.
//   - Shards are independent: the same destination and sequence may exist in
//     two shards, and two shards may Apply from two goroutines at once.
//
// Every failure message states what was got and what was wanted.
package storetest
