#include "sync/fingerprint.h"

#include "documents/documents.h"
#include "sync/sha256.h"

namespace onestore {
namespace {

// Hashes table t's part of the encoding: its table line, then its rows, into
// `hash` and, when not null, also into `table_hash`.
Status HashTable(Store* store, const TableSchema& t, Sha256* hash, int64_t* rows,
                 Sha256* table_hash = nullptr) {
  std::string line = "table " + t.ToJson().dump() + "\n";
  hash->Update(line);
  if (table_hash != nullptr) table_hash->Update(line);
  *rows = 0;
  // A document version's time and actor are the commit's (as in the
  // outbox), not content: hashed as null, so that two stores given the
  // same ops at other times agree.
  const bool deltas = t.name == kDeltasTable;
  const int at = deltas ? t.ColumnIndex("at") : -1;
  const int actor = deltas ? t.ColumnIndex("actor") : -1;
  const Value null_value;
  return store->ForEachRow(t, 1000, [&](const Row& row) {
    line.clear();
    line.push_back('[');
    for (size_t i = 0; i < row.size(); ++i) {
      if (i) line.push_back(',');
      const int c = static_cast<int>(i);
      (c == at || c == actor ? null_value : row[i]).AppendJson(&line);
    }
    line += "]\n";
    hash->Update(line);
    if (table_hash != nullptr) table_hash->Update(line);
    ++*rows;
    return Status::OK();
  });
}

}  // namespace

Status Fingerprint(Store* store, std::string* out) {
  Sha256 hash;
  int64_t rows = 0;
  for (const auto& t : store->Tables()) {
    // Not content: which seqs' document history a restore took back
    // (documents.h); a restore gives back its snapshot's fingerprint.
    if (t->name == kRestoresTable) continue;
    // The documents' tables without a row hash as no tables: a restore to
    // a snapshot from before the first document leaves them, emptied, and
    // gives back that snapshot's fingerprint.
    if (IsStoreTable(t->name)) {
      bool any = false;
      Status st = store->ForEachRow(*t, 1, [&](const Row&) {
        any = true;
        return Status::Limit("one row is enough");  // stops the walk
      });
      if (!any && !st.ok()) return st;
      if (!any) continue;
    }
    ONESTORE_RETURN_IF_ERROR(HashTable(store, *t, &hash, &rows));
  }
  *out = "f1-" + hash.FinalHex().substr(0, 32);
  return Status::OK();
}

Status TableDigest(Store* store, const std::string& table, int64_t* rows, std::string* out) {
  for (const auto& t : store->Tables()) {
    if (t->name != table) continue;
    Sha256 hash;
    ONESTORE_RETURN_IF_ERROR(HashTable(store, *t, &hash, rows));
    *out = "t1-" + hash.FinalHex();
    return Status::OK();
  }
  return Status::NotFound("tableDigest: no table \"" + table + "\"");
}

Status FingerprintAndDigests(Store* store, std::string* fingerprint,
                             std::vector<TableDigestEntry>* tables) {
  Sha256 hash;
  tables->clear();
  for (const auto& t : store->Tables()) {
    Sha256 table_hash;
    TableDigestEntry entry;
    entry.table = t->name;
    ONESTORE_RETURN_IF_ERROR(HashTable(store, *t, &hash, &entry.rows, &table_hash));
    entry.digest = "t1-" + table_hash.FinalHex();
    tables->push_back(std::move(entry));
  }
  *fingerprint = "f1-" + hash.FinalHex().substr(0, 32);
  return Status::OK();
}

}  // namespace onestore
