// Replica: a store that changes only by applying batches of its driver's
// outbox records, without any owner's code (design.md, "Sync: a driver, a
// relay, replicas"; docs/formats.md, "Batches" and "What a replica stores").
//
// A replica is a Store opened with the `replica` option: it takes no owner
// writes (Store::CheckOwnerWrite), is read like any store (Get, Page, Count,
// Tables), and keeps the records it applied in its own outbox, with the same
// seqs and texts, so that it can serve them on (a relay does).
//
// ApplyBatch applies a batch only whole, in one backend transaction together
// with the new head:
//   - a batch ending at or before the head is a no-op (already applied);
//   - a batch starting after the head is refused with sync/gap;
//   - a batch starting at or before the head and ending after it: its
//     commits after the head are applied (the seen prefix is skipped), so a
//     resubmitted or overlapping pull is harmless;
//   - a record whose bulk op affects another number of rows than its
//     recorded count, an update of a missing row, a key op whose recorded
//     count differs, or any other write the driver's store took and the
//     replica cannot make (a null in a required column, an integer overflow,
//     a table record that changes columns) is a divergence: the batch is
//     rolled back and refused with sync/diverged, and the replica refuses
//     every later batch until it is restored. RecordDivergence writes that
//     state into the store's _meta (a note), so a reopened replica still
//     refuses.
#ifndef ONESTORE_SYNC_REPLICA_H_
#define ONESTORE_SYNC_REPLICA_H_

#include <cstdint>
#include <memory>
#include <string>

#include "commit/store.h"
#include "onestore/status.h"

namespace onestore {

// Checks one outbox record's shape (docs/formats.md, "The record"): seq
// (which must be `seq`), from (seq - 1), at, owner, actor?, ops (a list),
// and nothing else. Its ops are checked when parsed. `where` names it.
Status CheckRecord(const Json& rec, int64_t seq, const std::string& where);

class Replica {
 public:
  // The replica over `store`, opened with the replica option (Store::Open
  // with OpenOptions::replica, or Store::OpenWith(..., true)); the caller
  // keeps owning the store, which must outlive the replica. Reads its
  // recorded divergence, if any. Fails with invalid/args for another store.
  static Status Attach(Store* store, std::unique_ptr<Replica>* out);
  // The same apply over a driver's own store, for the batches it pulls back
  // from the relay after a power loss (its newest commits were lost after
  // the relay acknowledged them): the records become its own again, with
  // their seqs, so its seqs never fork. A divergence is refused as for a
  // replica but recorded nowhere.
  static Status AttachDriver(Store* store, std::unique_ptr<Replica>* out);

  int64_t head() const { return store_->head(); }
  // The divergence that stopped this replica ("" while it applies batches).
  const std::string& diverged() const { return diverged_; }

  // Applies `batch_json` ({"from":n,"to":m,"commits":[record,...]}, what
  // Store::ReadOutbox gives) as described above. On success sets *result to
  // {"head":n,"applied":k} (k commits applied, 0 for a no-op). Fails with
  // invalid/args on a malformed batch (naming the place), sync/gap,
  // sync/diverged, or what the backend fails with (nothing applied).
  Status ApplyBatch(const std::string& batch_json, std::string* result);

  // Writes the divergence found by the last ApplyBatch into the store, in a
  // write transaction of its own. Does nothing when there is none, or when
  // it is already written. (Separate from ApplyBatch because a Durable
  // Object's transaction rolls back whole: the refused batch and the note
  // cannot share one.)
  Status RecordDivergence();

  // A host's note (a relay keeps its driver lease in one, js/relay.js): a
  // short text kept in the replica's own storage (_meta, key
  // "note:host:<name>"), apart from the replica's own notes. ReadHostNote
  // gives "" when there is none. WriteHostNote writes in a write
  // transaction of its own. `name` is 1 to 64 of [a-z0-9_.-], else
  // invalid/args. A diverged replica still reads and writes host notes.
  Status ReadHostNote(const std::string& name, std::string* value);
  Status WriteHostNote(const std::string& name, const std::string& value);

 private:
  explicit Replica(Store* store) : store_(store) {}
  // sync/diverged, naming where (diverged_) and what to do.
  Status Diverged() const;

  Store* store_;
  std::string diverged_;
  bool recorded_ = false;
};

}  // namespace onestore

#endif  // ONESTORE_SYNC_REPLICA_H_
