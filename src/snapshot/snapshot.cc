// Snapshots and restore (snapshot.h).
#include "snapshot/snapshot.h"

#include <algorithm>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "backends/memory/memory_backend.h"
#include "documents/documents.h"
#include "onestore/heap.h"
#include "values/json_text.h"
#include "writes/writes.h"

namespace onestore {

using RowVisitor = std::function<Status(const Row&)>;

// Where a snapshot's rows are read: its tables (by their names in the store)
// and, for each, its rows in key order; the head it was taken at.
struct SnapshotSource {
  std::map<std::string, std::shared_ptr<const TableSchema>> tables;
  std::function<Status(const TableSchema&, const RowVisitor&)> rows;
  int64_t head = 0;
  // Where the snapshot is a copy inside the store's own database: the
  // difference of the store's table `t` and the snapshot's table of the
  // same name, found by the backend (Backend::DiffWithCopy), so that only
  // the rows that differ are read. Unset: RestoreFrom compares row by row.
  std::function<Status(const TableSchema& t, std::vector<Key>* gone, std::vector<Row>* changed,
                       std::vector<Row>* added)>
      diff;
  // The copy's SQL table of a table (CopiesSource), for `diff`.
  std::function<std::string(const std::string& table)> copies;
};

namespace {

constexpr int64_t kPage = 1000;

// What a row kept by a copy or a restore takes of the heap: its text, its
// cells and its nodes. A copy's row is copied once into the copy's
// staging and moved into its table, beside the page it was read from; a
// restore's is kept until its commit, which writes the rows that differ
// again (the outbox record).
double KeptBytes(const Row& row) {
  return RowHeapBytes(row) + 192;  // and its node in the copy's tree
}

// The refusal of a copy or a restore that the heap cannot take.
Status NoRoom(const char* what, const HeapSteps& room) {
  return Status::Limit(std::string(what) + " needs more of the wasm heap than is left (at " +
                       std::to_string(static_cast<int64_t>(room.taken()) >> 20) + " MiB); nothing was changed");
}

// Same column names and types in the same order: a row of one is a row of
// the other.
bool SameColumns(const TableSchema& a, const TableSchema& b) {
  if (a.columns.size() != b.columns.size()) return false;
  for (size_t i = 0; i < a.columns.size(); ++i) {
    if (a.columns[i].name != b.columns[i].name || a.columns[i].type != b.columns[i].type) {
      return false;
    }
  }
  return true;
}

// The copies of copies_json (snapshot.h, RestoreCopies), read from `store`.
Status CopiesSource(Store* store, const std::string& copies_json, SnapshotSource* out) {
  Json list;
  ONESTORE_RETURN_IF_ERROR(ParseJsonText(copies_json, "snapshot copies", &list));
  if (!list.is_array()) return Status::InvalidArgs("snapshot copies: expected an array");
  // Each table as its copy: same columns and key, the copy's name.
  auto copies = std::make_shared<std::map<std::string, TableSchema>>();
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& e = list[i];
    const std::string where = "snapshot copy " + std::to_string(i);
    if (!e.is_object() || !e.contains("copy") || !e["copy"].is_string() || !e.contains("table")) {
      return Status::InvalidArgs(where + ": expected {copy, table}");
    }
    auto t = std::make_shared<TableSchema>();
    ONESTORE_RETURN_IF_ERROR(ParseTableSchema(e["table"], where, t.get(), /*stored=*/true));
    TableSchema copy = *t;
    copy.name = e["copy"].get<std::string>();
    copy.indexes.clear();
    (*copies)[t->name] = std::move(copy);
    out->tables[t->name] = std::move(t);
  }
  out->rows = [store, copies](const TableSchema& t, const RowVisitor& visit) {
    return store->ForEachRow(copies->at(t.name), kPage, visit);
  };
  out->copies = [copies](const std::string& table) { return copies->at(table).name; };
  return Status::OK();
}

}  // namespace

Status Snapshots::CopyToMemory(Store* store, std::unique_ptr<Store>* out) {
  ONESTORE_RETURN_IF_ERROR(store->CheckUsable(false));
  std::unique_ptr<Store> copy;
  ONESTORE_RETURN_IF_ERROR(Store::OpenWith(NewMemoryBackend(), store->id(), &copy));
  ONESTORE_RETURN_IF_ERROR(CopyInto(store, copy.get()));
  *out = std::move(copy);
  return Status::OK();
}

namespace {

SnapshotSource StoreSource(Store* store, const std::vector<std::shared_ptr<const TableSchema>>& tables,
                   int64_t head) {
  SnapshotSource src;
  for (const auto& t : tables) src.tables[t->name] = t;
  src.rows = [store](const TableSchema& t, const RowVisitor& visit) {
    return store->ForEachRow(t, kPage, visit);
  };
  src.head = head;
  return src;
}

}  // namespace

Status Snapshots::CopyInto(Store* store, Store* into) {
  ONESTORE_RETURN_IF_ERROR(store->CheckUsable(false));
  return CopyFrom(StoreSource(store, store->catalog_.All(), store->head_), into);
}

Status Snapshots::CopyCopiesInto(Store* store, const std::string& copies_json, int64_t head,
                                 Store* into) {
  ONESTORE_RETURN_IF_ERROR(store->CheckUsable(false));
  SnapshotSource src;
  ONESTORE_RETURN_IF_ERROR(CopiesSource(store, copies_json, &src));
  src.head = head;
  return CopyFrom(src, into);
}

Status Snapshots::CopyFrom(const SnapshotSource& src, Store* into) {
  ONESTORE_RETURN_IF_ERROR(into->CheckUsable(true));
  if (into->head_ != 0 || !into->catalog_.All().empty()) {
    return Status::InvalidArgs("a snapshot is copied only into an empty store; this one is at seq " +
                               std::to_string(into->head_));
  }
  Backend* to = into->backend_.get();
  ONESTORE_RETURN_IF_ERROR(to->Begin());
  HeapSteps room(2);
  Status st;
  for (const auto& entry : src.tables) {
    const std::shared_ptr<const TableSchema>& t = entry.second;
    Op table;
    table.kind = OpKind::kTable;
    table.table = t;
    st = to->Apply(&table, nullptr);
    if (st.ok()) {
      st = src.rows(*t, [&](const Row& row) {
        if (!room.Take(KeptBytes(row))) return NoRoom("the copy of the rows", room);
        Op put;
        put.kind = OpKind::kPut;
        put.table = t;
        put.row = row;
        return to->Apply(&put, nullptr);
      });
    }
    if (!st.ok()) break;
  }
  if (st.ok()) st = to->Commit();
  if (!st.ok()) {
    to->Rollback();
    return st;
  }
  for (const auto& [name, t] : src.tables) into->catalog_.Put(t);
  into->head_ = src.head;
  into->vector_cache_.DropAll();  // its rows were written outside the commit step
  return Status::OK();
}

Status Snapshots::CopyToFile(Store* store, const std::string& path) {
  ONESTORE_RETURN_IF_ERROR(store->CheckUsable(false));
  return store->backend_->CopyTo(path);
}

Status Snapshots::Hold(Store* store, int64_t* head) {
  ONESTORE_RETURN_IF_ERROR(store->CheckUsable(true));
  return store->backend_->BeginRead(head);
}

void Snapshots::Release(Store* store) { store->backend_->EndRead(); }

Status Snapshots::Restore(Store* store, Store* snapshot, const std::string& marker_json,
                          const std::string& meta_json, std::string* result) {
  ONESTORE_RETURN_IF_ERROR(snapshot->CheckUsable(false));
  // A copy holds the head it was taken at, the marker's seq. One that does
  // not was replaced or damaged outside the store: a copy cut to 0 bytes
  // opens as a new, empty store, whose restore would delete every row.
  Json marker;
  if (ParseJsonText(marker_json, "restore marker", &marker).ok() && marker.is_object() &&
      marker.contains("seq") && marker["seq"].is_number_integer() &&
      marker["seq"].get<int64_t>() != snapshot->head_) {
    return Status::StorageFailed("store.restore: the snapshot's copy holds seq " +
                                 std::to_string(snapshot->head_) + ", not seq " +
                                 std::to_string(marker["seq"].get<int64_t>()) +
                                 ", the one it was taken at: it was damaged or replaced outside "
                                 "the store (cut short, overwritten), and nothing was restored");
  }
  return RestoreFrom(store, StoreSource(snapshot, snapshot->catalog_.All(), snapshot->head_),
                     marker_json, meta_json, result);
}

Status Snapshots::RestoreCopies(Store* store, const std::string& copies_json,
                                const std::string& marker_json, const std::string& meta_json,
                                std::string* result) {
  ONESTORE_RETURN_IF_ERROR(store->CheckUsable(true));
  SnapshotSource src;
  ONESTORE_RETURN_IF_ERROR(CopiesSource(store, copies_json, &src));
  Backend* backend = store->backend_.get();
  auto copy_of = src.copies;
  src.diff = [backend, copy_of](const TableSchema& t, std::vector<Key>* gone,
                                std::vector<Row>* changed, std::vector<Row>* added) {
    return backend->DiffWithCopy(t, copy_of(t.name), gone, changed, added);
  };
  return RestoreFrom(store, src, marker_json, meta_json, result);
}

Status Snapshots::RestoreFrom(Store* store, const SnapshotSource& snapshot, const std::string& marker_json,
                              const std::string& meta_json, std::string* result) {
  ONESTORE_RETURN_IF_ERROR(store->CheckUsable(true));
  ONESTORE_RETURN_IF_ERROR(store->CheckOwnerWrite("store.restore"));
  Json meta;
  ONESTORE_RETURN_IF_ERROR(ParseJsonText(meta_json.empty() ? "{}" : meta_json, "commit context", &meta));
  Json marker;
  ONESTORE_RETURN_IF_ERROR(ParseJsonText(marker_json, "restore marker", &marker));
  std::vector<Op> ops(1);
  {
    TableResolver tables(&store->catalog_);
    tables.AllowRestore();
    ONESTORE_RETURN_IF_ERROR(ParseOp(marker, &tables, "restore", &ops[0]));
    if (ops[0].kind != OpKind::kRestore) {
      return Status::InvalidArgs("restore: the marker must be a restore op, got " + marker_json);
    }
  }
  for (const auto& [name, t] : snapshot.tables) {
    if (store->catalog_.Find(t->name) == nullptr) {
      return Status::InvalidArgs("restore: the snapshot holds table \"" + t->name +
                                 "\", which this store does not: it is not a snapshot of it");
    }
  }
  HeapSteps room(2);
  for (const auto& t : store->catalog_.All()) {
    auto found = snapshot.tables.find(t->name);
    const TableSchema* s = found == snapshot.tables.end() ? nullptr : found->second.get();
    if (s != nullptr && snapshot.diff && SameColumns(*s, *t) && s->key == t->key) {
      // Set-based: the same ops as the comparison below, in the same order
      // (the deletes and the changed rows in the store's key order, then the
      // added rows in key order), from only the rows that differ.
      std::vector<Key> gone;
      std::vector<Row> changed;
      std::vector<Row> added;
      ONESTORE_RETURN_IF_ERROR(snapshot.diff(*t, &gone, &changed, &added));
      ValueListLess less;
      std::sort(gone.begin(), gone.end(), less);
      auto by_key = [&](const Row& a, const Row& b) { return less(KeyOf(*t, a), KeyOf(*t, b)); };
      std::sort(changed.begin(), changed.end(), by_key);
      std::sort(added.begin(), added.end(), by_key);
      for (Key& key : gone) {
        Op del;
        del.kind = OpKind::kDelete;
        del.table = t;
        del.key = std::move(key);
        ops.push_back(std::move(del));
      }
      for (auto* list : {&changed, &added}) {
        for (Row& row : *list) {
          Op put;
          put.kind = OpKind::kPut;
          put.table = t;
          put.row = std::move(row);
          ops.push_back(std::move(put));
        }
      }
      continue;
    }
    // The snapshot's rows, by key.
    std::map<Key, Row, ValueListLess> want;
    if (s != nullptr) {
      const bool same = SameColumns(*s, *t);
      // Today's table lacks a column of the snapshot's: an alter dropped or
      // renamed it, and the schema does not say which, so its values have
      // no place that is sure.
      for (const Column& c : s->columns) {
        if (t->ColumnIndex(c.name) < 0) {
          return Status::InvalidArgs(
              "restore: the snapshot's table \"" + t->name + "\" (version " +
              std::to_string(s->version) + ") has column \"" + c.name + "\", which version " +
              std::to_string(t->version) + " no longer has (an alter renamed or dropped it); a "
              "restore does not carry rows across a renamed or dropped column. Nothing was changed");
        }
      }
      TableResolver tables(&store->catalog_);
      tables.AllowStoreTables();
      ONESTORE_RETURN_IF_ERROR(snapshot.rows(*s, [&](const Row& row) {
        if (!room.Take(KeptBytes(row))) return NoRoom("the restore", room);
        if (same) {
          want.emplace(KeyOf(*t, row), row);
          return Status::OK();
        }
        // An older version of the table: the row as a put of today's
        // table, which fills the columns added since with their defaults.
        std::string text = "{\"op\":\"put\",\"table\":";
        AppendJsonString(t->name, &text);
        text += ",\"row\":";
        AppendRowObject(*s, row, &text);
        text += "}";
        Json j;
        Op put;
        Status st = ParseJsonText(text, "snapshot row", &j);
        if (st.ok()) st = ParseOp(j, &tables, "restore of table \"" + t->name + "\"", &put);
        if (!st.ok()) return st;
        want.emplace(KeyOf(*t, put.row), std::move(put.row));
        return Status::OK();
      }));
    }
    std::vector<Op> puts;
    ONESTORE_RETURN_IF_ERROR(store->ForEachRow(*t, kPage, [&](const Row& row) {
      Key key = KeyOf(*t, row);
      auto it = want.find(key);
      if (it == want.end()) {
        Op del;
        del.kind = OpKind::kDelete;
        del.table = t;
        del.key = std::move(key);
        ops.push_back(std::move(del));
        return Status::OK();
      }
      if (!(it->second == row)) {
        Op put;
        put.kind = OpKind::kPut;
        put.table = t;
        put.row = std::move(it->second);
        puts.push_back(std::move(put));
      }
      want.erase(it);
      return Status::OK();
    }));
    for (auto& [key, row] : want) {
      Op put;
      put.kind = OpKind::kPut;
      put.table = t;
      put.row = std::move(row);
      puts.push_back(std::move(put));
    }
    for (Op& put : puts) ops.push_back(std::move(put));
  }
  // With documents, the seqs whose document history this restore takes
  // back (after the snapshot's, before this commit), for their reads
  // (documents.h, _restores).
  if (store->catalog_.Find(kDocumentsTable) != nullptr) {
    Op put;
    put.kind = OpKind::kPut;
    put.table = RestoresTable();
    // The marker's seq: the head the snapshot holds (a durable store's
    // copies do not carry it in `snapshot`).
    put.row = {Value::Int(store->head_ + 1), Value::Int(marker["seq"].get<int64_t>())};
    ops.push_back(std::move(put));
  }
  double differ = 0;
  for (const Op& op : ops) differ += KeptBytes(op.row);
  if (!HeapHasRoomFor(2 * differ, differ)) return NoRoom("the restore", room);
  return store->CommitParsed(&ops, meta, result);
}

}  // namespace onestore
