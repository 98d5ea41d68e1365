// Snapshots and restore (design.md, "Archives, snapshots, history").
//
// A snapshot is the store's content at one head, kept apart from it: for a
// memory store a second memory store with a copy of every table's rows; for
// a sqlite store a copy of its database file, made with SQLite's backup API
// (Backend::CopyTo). The JS package names them, keeps the last N and their
// labels (js/snapshots.js); the core only copies and restores.
//
// A restore is one ordinary commit: it gets the next seq and one outbox
// record whose ops are a marker {"op":"restore","snapshot":id,"seq":n}
// followed by the puts and deletes that turn the current rows into the
// snapshot's (docs/formats.md, "Restore"), so adopt hooks, watches, links
// and replicas see a restore as they see any commit.
#ifndef ONESTORE_SNAPSHOT_SNAPSHOT_H_
#define ONESTORE_SNAPSHOT_SNAPSHOT_H_

#include <memory>
#include <string>

#include "commit/store.h"
#include "onestore/status.h"

namespace onestore {

struct SnapshotSource;  // where a snapshot's rows are read (snapshot.cc)

class Snapshots {
 public:
  // A memory store holding a copy of every table of `store` (its records and
  // rows, the documents' own tables included) at its head.
  static Status CopyToMemory(Store* store, std::unique_ptr<Store>* out);

  // Copies every table of `store` (records and rows) into `into`, an empty
  // store (head 0, no tables; a memory one), and sets its head to the
  // store's: a read view at a past seq starts so (store.at, js/history.js),
  // then applies the outbox records after that head.
  static Status CopyInto(Store* store, Store* into);

  // A copy of the store's database in the new file `path` (sqlite backends;
  // others fail with invalid/args saying why).
  static Status CopyToFile(Store* store, const std::string& path);

  // A hold of the store's file while a runtime copies it (Node: the kernel's
  // file copy, faster than the backup API through the VFS): no commit of
  // any process lands until Release. Sets *head to the head the file holds.
  static Status Hold(Store* store, int64_t* head);
  static void Release(Store* store);

  // The restore commit: `marker_json` is the marker op's JSON text
  // ({"op":"restore","snapshot":id,"seq":n,...}); `meta_json` the commit
  // context as Store::Commit takes it. The ops after the marker delete the
  // rows the snapshot does not have and put the rows that differ from it;
  // a snapshot row of an older table version gets the current defaults.
  // Tables declared after the snapshot stay, emptied. Sets *result as
  // Store::Commit does.
  static Status Restore(Store* store, Store* snapshot, const std::string& marker_json,
                        const std::string& meta_json, std::string* result);

  // A snapshot kept as copies of the tables inside the store's own database
  // (a Durable Object's SQLite, which has no backup API and no second file:
  // js/snapshots-durable.js makes the copies). `copies_json` lists them:
  // [{"copy": "<the copy's SQL table>", "table": <the table's record as
  // _tables held it>}, ...]; each copy has its table's columns and key.
  // The restore commit from such a snapshot, as Restore does.
  static Status RestoreCopies(Store* store, const std::string& copies_json,
                              const std::string& marker_json, const std::string& meta_json,
                              std::string* result);

  // CopyInto from such a snapshot, taken at `head` (store.at's view).
  static Status CopyCopiesInto(Store* store, const std::string& copies_json, int64_t head,
                               Store* into);

 private:
  static Status CopyFrom(const SnapshotSource& src, Store* into);
  static Status RestoreFrom(Store* store, const SnapshotSource& snapshot, const std::string& marker_json,
                            const std::string& meta_json, std::string* result);
};

}  // namespace onestore

#endif  // ONESTORE_SNAPSHOT_SNAPSHOT_H_
