// Backend: all storage goes through this one interface, the way leveldb's Env
// carries all file I/O. The commit layer (commit/store.h) drives it; the
// memory and sqlite backends implement it. Every call is synchronous, so the
// commit step (and adoption inside it) stays synchronous.
//
// A write transaction is Begin, then Apply and AppendOutbox any number of
// times, then Commit or Rollback. Reads happen outside write transactions and
// see committed state.
#ifndef ONESTORE_BACKENDS_BACKEND_H_
#define ONESTORE_BACKENDS_BACKEND_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onestore/status.h"
#include "query/query.h"
#include "schema/schema.h"
#include "values/value.h"
#include "writes/writes.h"

namespace onestore {

// What a backend holds when it opens.
struct BackendState {
  std::string id;            // the store (session) id; "" if new
  int64_t head = 0;          // last committed seq
  std::vector<Json> tables;  // every table record, as stored
};

struct OutboxEntry {
  int64_t seq = 0;
  std::string record;  // the record's JSON text
};

// About what one read builds in the wasm heap: a page's rows (when asked)
// and ReadOutbox's records stop once they hold this many bytes of text, one
// row or record at least. A page of 100 rows of 4 MB, and the outbox read of
// 100 records of 60 MB, were built whole and aborted the core, whose room
// check keeps 32 MiB for reads (docs/reliability.md, "A full wasm heap").
constexpr size_t kReadBytes = size_t{8} << 20;

// The bytes of a row's strings (text, json text, vector bytes).
inline size_t RowTextBytes(const Row& row) {
  size_t n = 0;
  for (const Value& v : row) n += v.text().size();
  return n;
}

// What a copy of a row takes of the heap: its strings, its cells and its
// allocations' overhead (a bulk write's rows, nearest's k rows).
inline double RowHeapBytes(const Row& row) {
  return static_cast<double>(RowTextBytes(row) + 32 * row.size() + 64);
}

// A page cut at kReadBytes (Backend::Page): `cut` says that a wanted row
// follows the rows given, which may then be fewer than the limit.
struct PageBytes {
  bool cut = false;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Opens the store and takes ownership: bumps the epoch in _meta so that an
  // earlier owner of the same file is fenced. Fills `state`. If the store is
  // new, `new_id` becomes its id.
  virtual Status Open(const std::string& new_id, BackendState* state) = 0;

  // Starts a write transaction. Fails with `fenced` when another owner took
  // the store since Open (checked inside the transaction).
  virtual Status Begin() = 0;
  // Applies one op inside the transaction. Sets op->count to the number of
  // rows affected (for a key op 1 or 0; the outbox records it for bulk ops
  // only). An update of a missing key fails with
  // not_found. A kTable op creates the table, or changes its indexes to
  // the declared ones (`previous` is the stored schema, or null).
  virtual Status Apply(Op* op, const TableSchema* previous) = 0;
  // Writes the commit's outbox record, which makes `seq` the head (the
  // sqlite backend: docs/formats.md, "The head").
  virtual Status AppendOutbox(int64_t seq, const std::string& record) = 0;
  // AppendOutbox of a record the caller keeps reading (the store's LastOps):
  // a backend that keeps its records in memory holds this one without a
  // copy (a bulk commit's is megabytes). The default copies it.
  virtual Status AppendOutboxShared(int64_t seq, const std::shared_ptr<const std::string>& record) {
    return AppendOutbox(seq, *record);
  }
  // Inside a transaction, before its first AppendOutbox: the records that
  // follow start after `head`, not after the head the store had (an import
  // of an archive whose outbox was trimmed writes its first record at a
  // seq above 1 into an empty store). A backend that refuses an outbox row
  // that does not follow its head (a Durable Object's, docs/formats.md,
  // "The head on a Durable Object") takes `head` as its head. The default
  // does nothing.
  virtual Status OutboxStartsAfter(int64_t head) { return Status::OK(); }
  // Makes the transaction durable. Any failure here is storage_failed: the
  // outcome is unknown and the store stops.
  virtual Status Commit() = 0;
  // Discards the transaction. Never fails.
  virtual void Rollback() = 0;

  // Reads of committed state.
  virtual Status Get(const TableSchema& t, const Key& key, std::optional<Row>* row) = 0;
  // Up to `limit` rows of `q` in its order, strictly after `after` (a
  // position in q's order values) when given. With `bytes`, fewer once the
  // rows hold kReadBytes (PageBytes; a Durable Object's connection never
  // cuts: its pages are held, or the host's limits bound them).
  virtual Status Page(const Query& q, const std::vector<Value>* after, int64_t limit,
                      std::vector<Row>* rows, PageBytes* bytes = nullptr) = 0;
  // Asks the next Page, which must follow at once, to leave the rows of a
  // page of `t` with the host: true when it will. Such a Page gives as many
  // rows, only the last two filled (the cursor's), and the host hands the
  // page to the package (Store::Page's {"held":n}; a Durable Object).
  virtual bool HoldNextPage(const TableSchema& t) { return false; }
  virtual Status Count(const TableSchema& t, const Predicate* where, int64_t* count) = 0;
  // Calls `visit` with each committed row of q.table that matches q.where,
  // in no promised order, until visit returns false. The row lives only
  // for the call. A full read (nearest, src/vectors/nearest.h). The default
  // reads Page after Page (q.order ends with the key, so each page resumes
  // after the last row of the one before); memory walks its rows in place.
  virtual Status Scan(const Query& q, const std::function<bool(const Row&)>& visit) {
    std::vector<Row> rows;
    std::vector<Value> after;
    for (;;) {
      ONESTORE_RETURN_IF_ERROR(Page(q, after.empty() ? nullptr : &after, kScanPage, &rows));
      for (const Row& row : rows) {
        if (!visit(row)) return Status::OK();
      }
      if (static_cast<int64_t>(rows.size()) < kScanPage) return Status::OK();
      after = q.OrderValues(rows.back());
    }
  }
  static constexpr int64_t kScanPage = 512;
  // Calls `visit` with the key of each committed row of q.table that matches
  // q.where, in no promised order (nearest's candidates when it scores from
  // its cache, src/vectors/nearest.h). The default scans whole rows; sqlite
  // selects only the key columns.
  virtual Status ScanKeys(const Query& q, const std::function<void(const Key&)>& visit) {
    const TableSchema& t = *q.table;
    Key key(t.key.size());
    return Scan(q, [&](const Row& row) {
      for (size_t i = 0; i < t.key.size(); ++i) key[i] = row[t.key[i]];
      visit(key);
      return true;
    });
  }
  // Scan, where only the columns marked in `wanted` (one flag a column of
  // q.table) need be read: the others may come as null (a document's
  // versions, without their bases). The default is Scan (memory walks its
  // rows in place); sqlite selects only those columns.
  virtual Status ScanColumns(const Query& q, const std::vector<bool>& wanted,
                             const std::function<bool(const Row&)>& visit) {
    return Scan(q, visit);
  }
  // The largest value of an int key column, or 0 for an empty table.
  virtual Status MaxIntKey(const TableSchema& t, int64_t* max) = 0;

  // Outbox records with seq > after, oldest first, at most `limit`, and
  // fewer once they hold kReadBytes (every caller reads on after the last).
  virtual Status ReadOutbox(int64_t after, int64_t limit, std::vector<OutboxEntry>* out) = 0;
  // Removes the records with seq <= up_to; sets *removed.
  virtual Status TrimOutbox(int64_t up_to, int64_t* removed) = 0;

  // A text note the store keeps in _meta beside its head (a replica's
  // divergence, src/sync/replica.h). ReadNote gives the committed value, ""
  // when there is none. WriteNote writes inside a write transaction, so the
  // note commits or rolls back with it. The defaults keep no notes (test
  // backends); memory and sqlite keep them.
  virtual Status ReadNote(const std::string& key, std::string* value) {
    value->clear();
    return Status::OK();
  }
  virtual Status WriteNote(const std::string& key, const std::string& value) {
    return Status::InvalidArgs("this backend keeps no notes (\"" + key + "\")");
  }

  // Writes a consistent copy of the committed database to the new file
  // `path` (a snapshot, src/snapshot/snapshot.h), outside any write
  // transaction. The embedded sqlite backend uses SQLite's backup API; the
  // others cannot (invalid/args naming why).
  virtual Status CopyTo(const std::string& path) {
    return Status::InvalidArgs("this backend cannot copy its database to " + path);
  }

  // The difference between table `t` and `copy`, a table of the same
  // database with t's columns and key (a snapshot kept as copies, a durable
  // store's: src/snapshot/snapshot.h, RestoreCopies), found inside the
  // database so that only the rows that differ are read: *gone gets the
  // keys of t's rows the copy does not hold; *changed the copy's rows whose
  // key t holds with other values; *added the copy's rows whose key t does
  // not hold. Any order. Backends that cannot: invalid/args (the caller
  // compares row by row instead).
  virtual Status DiffWithCopy(const TableSchema& t, const std::string& copy, std::vector<Key>* gone,
                              std::vector<Row>* changed, std::vector<Row>* added) {
    return Status::InvalidArgs("this backend cannot compare a table with a copy of it");
  }

  // Holds a read transaction, so that no other process can commit to the
  // file until EndRead (a snapshot copies the file meanwhile, outside the
  // core), and sets *head to the head the file holds. Backends that keep no
  // file: invalid/args.
  virtual Status BeginRead(int64_t* head) {
    return Status::InvalidArgs("this backend keeps no file to copy");
  }
  virtual void EndRead() {}

  // Releases files and handles. Further calls are not allowed. Returns what
  // failed in releasing them (storage_failed: a lock not released, a file
  // not closed); they are released anyway and every commit made is kept.
  virtual Status Close() = 0;
};

}  // namespace onestore

#endif  // ONESTORE_BACKENDS_BACKEND_H_
