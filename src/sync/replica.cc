#include "sync/replica.h"

#include "values/json_text.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "documents/documents.h"
#include "writes/writes.h"

namespace onestore {

namespace {

// The _meta note that holds a replica's divergence (Backend::WriteNote).
constexpr char kDivergedNote[] = "diverged";

}  // namespace

// Checks one record's shape (docs/formats.md, "The record"): seq, from, at,
// owner, actor?, ops, and nothing else. Its ops are checked when parsed.
Status CheckRecord(const Json& rec, int64_t seq, const std::string& where) {
  if (!rec.is_object()) {
    return Status::InvalidArgs(where + ": a record must be an object, got " + DescribeJson(rec));
  }
  for (auto it = rec.begin(); it != rec.end(); ++it) {
    const std::string& k = it.key();
    if (k != "seq" && k != "from" && k != "at" && k != "owner" && k != "actor" && k != "ops") {
      return Status::InvalidArgs(where + ": unknown record field \"" + k + "\"");
    }
  }
  int64_t n = 0;
  auto seq_it = rec.find("seq");
  if (seq_it == rec.end() || !ReadRecordInt(*seq_it, &n) || n != seq) {
    return Status::InvalidArgs(
        where + ".seq: expected " + std::to_string(seq) +
        " (the batch's seqs are contiguous), got " +
        (seq_it == rec.end() ? std::string("nothing") : DescribeJson(*seq_it)));
  }
  auto from_it = rec.find("from");
  if (from_it == rec.end() || !ReadRecordInt(*from_it, &n) || n != seq - 1) {
    return Status::InvalidArgs(
        where + ".from: expected " + std::to_string(seq - 1) + " (the previous seq), got " +
        (from_it == rec.end() ? std::string("nothing") : DescribeJson(*from_it)));
  }
  auto at_it = rec.find("at");
  if (at_it == rec.end() || !at_it->is_number_integer() ||
      (at_it->is_number_unsigned() && at_it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))) {
    return Status::InvalidArgs(
        where + ".at: expected milliseconds since the epoch, got " +
        (at_it == rec.end() ? std::string("nothing") : DescribeJson(*at_it)));
  }
  auto owner_it = rec.find("owner");
  if (owner_it == rec.end() || !owner_it->is_string()) {
    return Status::InvalidArgs(
        where + ".owner: expected the owner's name, got " +
        (owner_it == rec.end() ? std::string("nothing") : DescribeJson(*owner_it)));
  }
  auto actor_it = rec.find("actor");
  if (actor_it != rec.end()) ONESTORE_RETURN_IF_ERROR(CheckActor(*actor_it, where + ".actor"));
  auto ops_it = rec.find("ops");
  if (ops_it == rec.end() || !ops_it->is_array()) {
    return Status::InvalidArgs(
        where + ".ops: expected a list of ops, got " +
        (ops_it == rec.end() ? std::string("nothing") : DescribeJson(*ops_it)));
  }
  // Every bulk op carries its count (formats.md, "Batches"): checked here,
  // with the whole batch, so that a batch missing one is refused before
  // anything applies (found while applying, an earlier record's divergence
  // came first and stopped the replica for good).
  for (size_t k = 0; k < ops_it->size(); ++k) {
    const Json& op = (*ops_it)[k];
    if (!op.is_object()) continue;  // the op's own parse words it
    auto name = op.find("op");
    if (name == op.end() || !name->is_string() || (*name != "update" && *name != "delete")) continue;
    if (op.contains("where") && !op.contains("key") && !op.contains("count")) {
      return Status::InvalidArgs(where + ".ops[" + std::to_string(k) +
                                 "]: a bulk op in a record carries its count");
    }
  }
  return Status::OK();
}


Status Replica::Attach(Store* store, std::unique_ptr<Replica>* out) {
  if (!store->replica_) {
    return Status::InvalidArgs("a replica needs a store opened with the replica option");
  }
  std::unique_ptr<Replica> r(new Replica(store));
  ONESTORE_RETURN_IF_ERROR(store->backend_->ReadNote(kDivergedNote, &r->diverged_));
  r->recorded_ = !r->diverged_.empty();
  *out = std::move(r);
  return Status::OK();
}

Status Replica::AttachDriver(Store* store, std::unique_ptr<Replica>* out) {
  if (store->replica_) return Status::InvalidArgs("a driver's store is not a replica's");
  std::unique_ptr<Replica> r(new Replica(store));
  r->recorded_ = true;  // nothing to record: the driver splits instead
  *out = std::move(r);
  return Status::OK();
}

Status Replica::Diverged() const {
  return Status::SyncDiverged("applyBatch: the replica diverged (" + diverged_ +
                              ") and takes no more batches: apply from 0 into a new one");
}

Status Replica::ApplyBatch(const std::string& batch_json, std::string* result) {
  ONESTORE_RETURN_IF_ERROR(store_->CheckUsable(true));
  // A diverged replica applies nothing more (a new one is made), so every batch
  // gets the one answer a sync driver can act on (stop, start over), before the
  // batch is read at all: a malformed batch included (docs/api.md,
  // "replica.applyBatch"). invalid/args would tell it to fetch the batch
  // again, which cannot help.
  if (!diverged_.empty()) return Diverged();
  const int64_t head = store_->head_;
  // The batch as the store writes it, starting at the head (every batch of a
  // replica that keeps up), goes through the fast reader (writes.h,
  // ParseBatchFast): its puts straight into rows, no DOM of the whole batch.
  // Anything else, a malformed batch included, takes the DOM path below,
  // which gives the same ops or the worded error; both check everything
  // before the transaction begins.
  int64_t from = head, to = 0;
  std::vector<FastRecord> fast;
  TableResolver fast_tables(&store_->catalog_);
  fast_tables.AllowRestore();
  bool taken = ParseBatchFast(batch_json, head, &fast_tables, &to, &fast);
  for (size_t i = 0; taken && i < fast.size(); ++i) {
    if (!fast[i].actor.is_null() && !CheckActor(fast[i].actor, std::string()).ok()) taken = false;
    // A bulk op without its count: the DOM path's CheckRecord refuses it.
    for (const Op& op : fast[i].ops) {
      if (op.is_bulk() && op.count < 0) taken = false;
    }
  }
  Json batch;
  const Json* commits = nullptr;
  if (!taken) {
    fast.clear();
    // The shape of the whole batch first: a malformed batch changes nothing.
    // Read with the one reader's nesting limit (json_text.h), plus the three
    // levels a batch adds around a commit's ops ({commits:[{ops:..}]}): a
    // value the store took is 1000 levels deep in its ops text, 1003 here.
    // Deeper text is refused before anything recursive sees it.
    bool too_deep = false;
    if (!TryParseJsonText(batch_json, kMaxJsonDepth + 3, &batch, &too_deep)) {
      if (too_deep) {
        return Status::InvalidArgs("applyBatch: the batch is nested deeper than " +
                                   std::to_string(kMaxJsonDepth + 3) + " levels");
      }
      return Status::InvalidArgs("applyBatch: the batch is not valid JSON: " +
                                 batch_json.substr(0, 60));
    }
    if (!batch.is_object()) {
      return Status::InvalidArgs(
          "applyBatch: a batch is {from, to, commits} as store.outbox.read gives it, got " +
          DescribeJson(batch));
    }
    for (auto it = batch.begin(); it != batch.end(); ++it) {
      if (it.key() != "from" && it.key() != "to" && it.key() != "commits") {
        return Status::InvalidArgs("applyBatch: unknown batch field \"" + it.key() + "\"");
      }
    }
    if (!batch.contains("from") || !ReadRecordInt(batch["from"], &from)) {
      return Status::InvalidArgs("applyBatch: from must be a seq (an integer >= 0), got " +
                                 (batch.contains("from") ? DescribeJson(batch["from"]) : "nothing"));
    }
    if (!batch.contains("to") || !ReadRecordInt(batch["to"], &to) || to < from) {
      return Status::InvalidArgs("applyBatch: to must be a seq >= from (" + std::to_string(from) +
                                 "), got " +
                                 (batch.contains("to") ? DescribeJson(batch["to"]) : "nothing"));
    }
    if (!batch.contains("commits") || !batch["commits"].is_array()) {
      return Status::InvalidArgs(
          "applyBatch: commits must be a list of records, got " +
          (batch.contains("commits") ? DescribeJson(batch["commits"]) : "nothing"));
    }
    commits = &batch["commits"];
    if (static_cast<int64_t>(commits->size()) != to - from) {
      return Status::InvalidArgs("applyBatch: a batch from " + std::to_string(from) + " to " +
                                 std::to_string(to) + " holds " + std::to_string(to - from) +
                                 " commits, this one " + std::to_string(commits->size()));
    }
    for (size_t i = 0; i < commits->size(); ++i) {
      ONESTORE_RETURN_IF_ERROR(CheckRecord((*commits)[i], from + static_cast<int64_t>(i) + 1,
                                           "applyBatch: commits[" + std::to_string(i) + "]"));
    }

    if (to <= head) {
      *result = "{\"head\":" + std::to_string(head) + ",\"applied\":0}";
      return Status::OK();
    }
    if (from > head) {
      return Status::SyncGap("applyBatch: the batch starts after seq " + std::to_string(from) +
                             ", but the replica's head is " + std::to_string(head) +
                             "; apply the commits after " + std::to_string(head) + " first");
    }
  }

  Backend* backend = store_->backend_.get();
  Status st = backend->Begin();
  if (!st.ok()) {
    if (st.code() == Code::kFenced) store_->stopped_ = st;
    return st;
  }
  int64_t seq = head;
  // A divergence rolls the whole batch back and stops the replica.
  auto diverge = [&](const std::string& what) {
    backend->Rollback();
    diverged_ = "at seq " + std::to_string(seq) + ", " + what;
    recorded_ = false;
    return Diverged();
  };
  // Tables declared by this batch, for later ops' Apply calls and, once
  // committed, for the catalog.
  std::map<std::string, std::shared_ptr<const TableSchema>, std::less<>> declared;
  // Document ops, expanded as the commit step does (one writer per batch:
  // it keeps the state of the documents the batch touched).
  std::unique_ptr<DocWriter> docs;
  bool doc_tables_created = false;
  bool schema = false;  // a table was declared or changed (the answer's "schema")
  // Creates the documents' tables, once a batch, when the catalog has none.
  auto ensure_doc_tables = [&]() -> Status {
    if (doc_tables_created) return Status::OK();
    return EnsureDocumentTables(backend, store_->catalog_, &doc_tables_created);
  };
  // And _restores, which a driver's restore writes (Snapshots::RestoreFrom).
  bool restores_created = false;
  auto ensure_restores = [&]() -> Status {
    if (restores_created) return Status::OK();
    return EnsureRestoresTable(backend, store_->catalog_, &restores_created);
  };
  // Applies record `i` (seq `seq`) and writes its outbox record; a failure
  // has rolled the batch back. A key op's recorded count comes from its op
  // in `ops_json` (the DOM path) or from `counts` (the fast reader's).
  auto apply_record = [&](size_t i, int64_t at, const std::string& owner, const Json* actor,
                          std::vector<Op>& ops, const Json* ops_json,
                          const std::vector<int64_t>* counts) -> Status {
    const std::string where = "applyBatch: commits[" + std::to_string(i) + "]";
    for (size_t k = 0; k < ops.size(); ++k) {
      Op& op = ops[k];
      if (op.kind == OpKind::kRestore) continue;  // a restore's marker; its puts and deletes follow
      if (op.kind == OpKind::kDocument) {
        if (!docs) {
          st = ensure_doc_tables();
          if (!st.ok()) {
            backend->Rollback();
            return st;
          }
          docs = std::make_unique<DocWriter>(backend, doc_tables_created, seq, 0, nullptr);
        }
        docs->SetCommit(seq, at, actor);
        std::vector<Op> writes;
        // The record says which version the op makes and whether it wrote a
        // base; a document that is not where the record expects it diverges.
        if (op.doc->version <= 0) {  // malformed, not a divergence: the batch is refused
          backend->Rollback();
          return Status::InvalidArgs(where + ".ops[" + std::to_string(k) +
                                     "]: a document op in a record carries its version");
        }
        st = docs->Apply(op.doc.get(), "ops[" + std::to_string(k) + "]", &writes);
        for (size_t w = 0; st.ok() && w < writes.size(); ++w)
          st = backend->Apply(&writes[w], nullptr);
        if (!st.ok()) {
          if (st.code() == Code::kNotFound || st.code() == Code::kInvalidArgs) {
            return diverge("ops[" + std::to_string(k) + "] (" + op.doc->owner + " document " +
                           std::to_string(op.doc->id) + "): " + st.message());
          }
          backend->Rollback();
          return st;
        }
        continue;
      }
      const std::string op_where = "ops[" + std::to_string(k) + "] on table \"" +
                                   (op.table ? op.table->name : std::string()) + "\"";
      int64_t expected = -1;
      if (op.is_bulk()) {
        expected = op.count;
        if (expected < 0) {
          backend->Rollback();
          return Status::InvalidArgs(where + "." + op_where +
                                     ": a bulk op in a record carries its count");
        }
      } else if (!op.declares()) {
        if (ops_json == nullptr) {
          expected = (*counts)[k];
        } else {
          auto c = (*ops_json)[k].find("count");
          if (c != (*ops_json)[k].end() && !ReadRecordInt(*c, &expected)) {
            backend->Rollback();
            return Status::InvalidArgs(where + "." + op_where + ".count: " + DescribeJson(*c) +
                                       " is not a row count");
          }
        }
      }
      if (op.table && IsStoreTable(op.table->name)) {
        // A restore's rows of the documents' tables, which an earlier
        // record of this batch may have created (their schema is fixed).
        st = op.table->name == kRestoresTable ? ensure_restores() : ensure_doc_tables();
        if (!st.ok()) {
          backend->Rollback();
          return st;
        }
      }
      // A key op's count, when it has one, is what one row can give: a
      // put's 1, a delete's or an update's 1 or 0. Another is malformed.
      if (!op.is_bulk() && !op.declares() && expected >= 0) {
        const bool put = op.kind == OpKind::kPut;
        if (expected > 1 || (put && expected != 1)) {
          backend->Rollback();
          return Status::InvalidArgs(where + "." + op_where + ".count: a key op's count is " +
                                     (put ? "1" : "1 or 0") + ", got " + std::to_string(expected));
        }
        if (put) expected = -1;  // its one row: the backend does not count a put
      }
      const TableSchema* previous = nullptr;
      if (op.kind == OpKind::kAlter || op.kind == OpKind::kIndex) previous = op.change->before.get();
      if (op.kind == OpKind::kTable) {
        auto d = declared.find(op.table->name);
        previous = d != declared.end() ? d->second.get() : store_->catalog_.Find(op.table->name);
        if (previous != nullptr && previous->version > op.table->version) {
          return diverge(op_where + ": the record declares version " +
                         std::to_string(op.table->version) + ", older than the stored " +
                         std::to_string(previous->version));
        }
      }
      st = backend->Apply(&op, previous);
      if (!st.ok()) {
        // What the driver's store took and this one refuses is a divergence
        // (a missing row, an overflow, a null); a platform limit or a
        // storage failure is not.
        if (st.code() == Code::kNotFound || st.code() == Code::kInvalidArgs) {
          return diverge(op_where + ": " + st.message());
        }
        backend->Rollback();
        return st;
      }
      if (op.declares()) declared[op.table->name] = op.table;
      if (expected >= 0 && op.count != expected) {
        return diverge(op_where + ": it affected " + std::to_string(op.count) +
                       " rows, the record says " + std::to_string(expected));
      }
    }
    st = backend->AppendOutbox(
        seq, OutboxRecord(seq, at, owner, actor, ops));
    if (!st.ok()) {
      backend->Rollback();
      return st;
    }
    return Status::OK();
  };
  // Commits what the batch applied up to `seq` and makes it the replica's
  // state: its head, its catalog.
  auto commit = [&]() -> Status {
    Status c = backend->Commit();
    if (!c.ok()) {
      backend->Rollback();
      store_->stopped_ =
          Status::StorageFailed("the replica stopped: COMMIT failed (" + c.message() + ")");
      return store_->stopped_;
    }
    store_->head_ = seq;
    // A batch's rows changed outside the commit step: the vector cache is
    // built again by the next search (src/vectors/vector_cache.h).
    store_->vector_cache_.DropAll();
    if (!declared.empty()) schema = true;
    for (auto& [name, t] : declared) store_->catalog_.Put(t);
    declared.clear();
    if (doc_tables_created) {
      store_->catalog_.Put(DocumentsTable());
      store_->catalog_.Put(DeltasTable());
      doc_tables_created = false;
    }
    if (restores_created) {
      store_->catalog_.Put(RestoresTable());
      restores_created = false;
    }
    return Status::OK();
  };
  // A restore record rewrites the documents' tables, which the document
  // writer reads through the backend's committed state (the memory
  // backend's reads do not see a transaction's own writes): the records
  // before it and the restore are committed, and the rest of the batch goes
  // on in a transaction of its own with a writer that reads the restored
  // state. (Before, a change after a restore in one batch was checked
  // against the version the restore took back, and the replica diverged.)
  auto after_record = [&](const std::vector<Op>& ops, bool last) -> Status {
    if (last || std::none_of(ops.begin(), ops.end(),
                             [](const Op& op) { return op.kind == OpKind::kRestore; })) {
      return Status::OK();
    }
    ONESTORE_RETURN_IF_ERROR(commit());
    docs.reset();
    Status b = backend->Begin();
    if (!b.ok() && b.code() == Code::kFenced) store_->stopped_ = b;
    return b;
  };
  if (taken) {
    for (size_t i = 0; i < fast.size(); ++i) {
      FastRecord& rec = fast[i];
      seq = from + static_cast<int64_t>(i) + 1;
      st = apply_record(i, rec.at, rec.owner, rec.actor.is_null() ? nullptr : &rec.actor, rec.ops,
                        nullptr, &rec.counts);
      if (!st.ok()) return st;
      ONESTORE_RETURN_IF_ERROR(after_record(rec.ops, i + 1 == fast.size()));
    }
  } else {
    TableResolver tables(&store_->catalog_);
    tables.AllowRestore();  // a driver's restore (src/snapshot/snapshot.h) is recorded as one
    std::vector<Op> ops;
    for (size_t i = static_cast<size_t>(head - from); i < commits->size(); ++i) {
      const Json& rec = (*commits)[i];
      seq = from + static_cast<int64_t>(i) + 1;
      const Json& ops_json = rec["ops"];
      ops.clear();
      st = ParseOps(ops_json, &tables, &ops);
      if (!st.ok()) {
        backend->Rollback();
        return Status(st.code(), "applyBatch: commits[" + std::to_string(i) + "]." + st.message());
      }
      const auto actor = rec.find("actor");
      st = apply_record(i, rec["at"].get<int64_t>(), rec["owner"].get_ref<const std::string&>(),
                        actor != rec.end() ? &*actor : nullptr, ops, &ops_json, nullptr);
      if (!st.ok()) return st;
      ONESTORE_RETURN_IF_ERROR(after_record(ops, i + 1 == commits->size()));
    }
  }
  seq = to;
  ONESTORE_RETURN_IF_ERROR(commit());
  // "schema": the batch declared or changed a table, so a reader's columns
  // may have changed (js/replica.js reads it and leaves it out).
  *result = "{\"head\":" + std::to_string(to) + ",\"applied\":" + std::to_string(to - head) +
            (schema ? ",\"schema\":true}" : "}");
  return Status::OK();
}

Status Replica::RecordDivergence() {
  if (diverged_.empty() || recorded_) return Status::OK();
  ONESTORE_RETURN_IF_ERROR(store_->CheckUsable(true));
  Backend* backend = store_->backend_.get();
  ONESTORE_RETURN_IF_ERROR(backend->Begin());
  Status st = backend->WriteNote(kDivergedNote, diverged_);
  if (!st.ok()) {
    backend->Rollback();
    return st;
  }
  st = backend->Commit();
  if (!st.ok()) {
    backend->Rollback();
    return Status::StorageFailed("recording the replica's divergence failed: " + st.message());
  }
  recorded_ = true;
  return Status::OK();
}

namespace {

constexpr size_t kMaxHostNoteName = 64;
constexpr size_t kMaxHostNote = 64 * 1024;

Status CheckHostNoteName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= kMaxHostNoteName;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-')) {
      ok = false;
    }
  }
  if (!ok) {
    return Status::InvalidArgs("a host note's name is 1 to 64 of a-z 0-9 _ . -, got \"" +
                               name.substr(0, 80) + "\"");
  }
  return Status::OK();
}

}  // namespace

Status Replica::ReadHostNote(const std::string& name, std::string* value) {
  ONESTORE_RETURN_IF_ERROR(CheckHostNoteName(name));
  ONESTORE_RETURN_IF_ERROR(store_->CheckUsable(false));
  return store_->backend_->ReadNote("host:" + name, value);
}

Status Replica::WriteHostNote(const std::string& name, const std::string& value) {
  ONESTORE_RETURN_IF_ERROR(CheckHostNoteName(name));
  if (value.size() > kMaxHostNote) {
    return Status::Limit("a host note holds at most 65536 bytes, got " +
                         std::to_string(value.size()));
  }
  ONESTORE_RETURN_IF_ERROR(store_->CheckUsable(true));
  Backend* backend = store_->backend_.get();
  ONESTORE_RETURN_IF_ERROR(backend->Begin());
  Status st = backend->WriteNote("host:" + name, value);
  if (!st.ok()) {
    backend->Rollback();
    return st;
  }
  st = backend->Commit();
  if (!st.ok()) {
    backend->Rollback();
    return Status::StorageFailed("writing the host note \"" + name + "\" failed: " + st.message());
  }
  return Status::OK();
}

}  // namespace onestore
