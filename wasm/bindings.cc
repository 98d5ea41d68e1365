// The surface of the wasm module: one class, Core, that only declares and
// converts, called through plain exports (onestore_call below; the JS side
// is wasm/core_post.js). Every method takes JSON text and returns one
// string; a failure is "!<code> <message>" (see wasm/ABI.md). The common commit
// (commitAs, txCommitAs) crosses numbers instead: the seq, or 0 and the
// failure in lastError(). No engine logic here.
#include <emscripten/em_macros.h>
#include <emscripten/heap.h>
#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "archive/archive.h"
#include "backends/sqlite/sqlite_backend.h"
#include "backends/sqlite/vfs.h"
#include "commit/store.h"
#include "durable_connection.h"  // wasm/ sources include their neighbours by name
#include "history/log.h"
#include "js_file_system.h"
#include "onestore/cold.h"
#include "onestore/heap.h"
#include "onestore/status.h"
#include "snapshot/snapshot.h"
#include "sync/fingerprint.h"
#include "sync/replica.h"
#include "values/vector.h"
#include "writes/binary_ops.h"

namespace onestore {
namespace {

// The one conversion of a Status (and a payload) into an answer string.
std::string Answer(const Status& s, std::string payload = std::string()) {
  if (s.ok()) return payload;
  return "!" + std::string(CodeString(s.code())) + " " + s.message();
}

// The bytes the wasm heap keeps free beyond what a call asks for: room for
// the reads and derives after it.
constexpr double kKeptFree = 33554432.0;  // 32 MiB

// What the heap can grow by (one piece, past the allocator's top).
double HeapGrowable() {
  return static_cast<double>(emscripten_get_heap_max()) - static_cast<double>(emscripten_get_heap_size());
}

// What the heap can still give in all: its growth and the allocator's free
// room (walked: mallinfo).
double HeapFree() { return HeapGrowable() + static_cast<double>(static_cast<unsigned>(mallinfo().fordblks)); }

// Whether one block of `bytes` can be had now: tried with malloc, which
// answers null where `new` aborts, and given back (volatile: a compiler
// may take a malloc that is only freed for one that succeeds, and drop it).
bool HeapHasBlock(double bytes) {
  void* volatile p = malloc(static_cast<size_t>(bytes));
  const bool had = p != nullptr;
  free(p);
  return had;
}

// Whether the wasm heap can still give `bytes` more with kKeptFree to
// spare, `piece` of them in one block (docs/reliability.md, "A full wasm
// heap"). The heap grows to at most 2 GB, and an allocation that fails
// there stops the whole module (C++ without exceptions aborts), a memory
// store's rows with it: what would need more is refused before it starts,
// with `limit`. Far from the cap this reads two numbers; near it the
// allocator's free room is walked, and the block is tried: the free room
// may lie in holes smaller than a piece (counted alone, it let a commit of
// a 6 MiB row after an outbox trim abort the core).
bool HeapHasRoom(double bytes, double piece) {
  const double need = kKeptFree + bytes;
  return need <= HeapGrowable() || (need <= HeapFree() && (piece <= 0 || HeapHasBlock(piece)));
}

// The core's own asks come here too (src/onestore/heap.h: a document's new
// base, a snapshot's copy, a restore's rows).
[[maybe_unused]] const bool kHeapRoomSet = (heap_has_room = HeapHasRoom, true);

std::string Mib(double b) { return std::to_string(static_cast<int64_t>(b / 1048576)) + " MiB"; }

// What is left of the heap, for the messages of a refusal of `need` bytes
// (HeapHasRoom): when that is more, it lies in pieces too small.
std::string HeapLeft(double need) {
  const double left = HeapFree();
  return Mib(left) + " left of its " + Mib(static_cast<double>(emscripten_get_heap_max())) +
         (left >= need ? ", in free pieces too small for it" : "");
}

// Whether the wasm heap has room for a call that takes a batch of ops of
// `batch.size()` bytes. The room asked for is a bound measured on the
// memory backend, the largest taker: 3 bytes a byte of batch (the rows'
// data, the outbox record, the parse) and 1 KiB an op (a row's nodes and
// the op itself), beside the 32 MiB kept free; near the cap, one block of
// twice the batch (its rows' cells and its outbox record, each as large as
// the batch at most).
Status RoomFor(std::string_view batch) {
  const double n = static_cast<double>(batch.size());
  // 1 KiB an op, and 64 bytes a json node: a binary batch's json cells are
  // parsed into nodes of 16 bytes, up to twice that while an array grows,
  // for as little as two bytes of text ("0,"). A text batch's nodes are
  // covered by its bound of an op per 16 bytes.
  const auto need = [&](double ops, double nodes) { return 3 * n + 1024 * ops + 64 * nodes; };
  if (HeapHasRoom(need(n / 3 + 1, 0), 2 * n)) return Status::OK();  // at most an op per 3 bytes
  double ops;
  size_t count = 0;
  for (char c : batch) count += (c == ',') | (c == '[') | (c == '{');
  const double nodes = static_cast<double>(count);
  if (IsBinaryOps(batch)) {
    ops = static_cast<double>(BinaryOpsCount(batch));
  } else {
    // JSON text (ops, or a replica's batch of records): its ops counted by
    // their "op" keys (a key inside a string is escaped), so that a few
    // records of large values are not taken for an op per 16 bytes.
    ops = 1;
    for (size_t at = batch.find("\"op\":"); at != std::string_view::npos; at = batch.find("\"op\":", at + 5)) ++ops;
  }
  if (HeapHasRoom(need(ops, nodes), 2 * n)) return Status::OK();
  return Status::Limit("a transaction's ops (" + std::to_string(batch.size()) + " bytes, " +
                       std::to_string(static_cast<int64_t>(ops)) + " ops) need about " +
                       Mib(kKeptFree + need(ops, nodes)) + " of the wasm heap, which has " +
                       HeapLeft(kKeptFree + need(ops, nodes)) + "; commit them in smaller transactions");
}

// The heap a call's arguments of `n` bytes ask for before the call starts
// (a room of theirs, written by JS): the room, each argument's copy out of
// it, and the parse of them, about twice their size (a key's JSON, a
// batch). A call whose arguments would not fit is refused (its room is not
// given: JS throws `limit`), not started.
constexpr double kArgumentsFactor = 4;

// The room `*room` resized to `n` bytes for a call's arguments, or null
// when the heap has no room for them (kArgumentsFactor; arguments of at
// most 64 KiB are not checked). A room grown past 64 KiB by a large call
// (its arguments or its answer) is given back at the next small one.
char* ArgumentsRoom(std::string* room, int n) {
  constexpr size_t kSmall = 64u << 10;
  const size_t size = static_cast<size_t>(n < 0 ? 0 : n);
  if (size <= kSmall && room->capacity() > kSmall) std::string().swap(*room);
  if (size > kSmall && !HeapHasRoom(kArgumentsFactor * static_cast<double>(size), 2.0 * static_cast<double>(size))) return nullptr;
  room->assign(size, '\0');
  return room->data();
}

// `answer` written into `room` after its length (4 bytes, little-endian),
// for JS to read; when the heap has no room for that copy, a refusal with
// `limit` is written instead (the call's work is done, but its answer is
// too large to hand over).
void WriteAnswer(const std::string& answer, std::string* room) {
  const double size = static_cast<double>(answer.size());
  if (answer.size() > room->capacity() && !HeapHasRoom(size, size)) {
    WriteAnswer("!limit the answer (" + std::to_string(answer.size()) +
                    " bytes) does not fit in what is left of the wasm heap (" +
                    HeapLeft(kKeptFree + size) +
                    "); read less at a time",
                room);
    return;
  }
  const uint32_t n = static_cast<uint32_t>(answer.size());
  room->assign(4, '\0');
  std::memcpy(room->data(), &n, 4);
  *room += answer;
}

// SQLite's files go through the JS object given to the module factory as
// `onestoreFiles` (wasm/files_library.js). Registered once, before the first
// store opens.
Status UseJsFiles() {
  static Status registered = RegisterVfs(JsFileSystem());
  return registered;
}

class Core {
 public:
  ONESTORE_COLD std::string open(const std::string& options_json) {
    if (store_) return Answer(Status::InvalidArgs("open: this core already holds a store"));
    OpenOptions options;
    Status s = ParseOpenOptions(options_json, &options);
    if (s.ok() && options.backend == "durable") {
      // A Durable Object's SQLite, through wasm/durable_library.js.
      // Head format 1, written by a trigger (docs/formats.md).
      SqlBackendOptions durable;
      durable.head_by_trigger = true;
      s = Store::OpenWith(NewSqlBackend(NewDurableConnection(options.handle), durable), options.id,
                          &store_, options.replica);
      if (s.ok()) {
        store_->SetVectorCacheBudget(options.vector_cache_bytes >= 0
                                         ? options.vector_cache_bytes
                                         : DefaultVectorCacheBytes(options));
      }
    } else {
      if (s.ok()) s = UseJsFiles();
      if (s.ok()) s = Store::Open(options, &store_);
    }
    if (s.ok() && options.replica) s = Replica::Attach(store_.get(), &replica_);
    if (!s.ok()) {
      if (store_) store_->Close();
      store_.reset();
      return Answer(s);
    }
    std::string out = "{\"id\":";
    AppendJsonString(store_->id(), &out);
    out += ",\"head\":" + std::to_string(store_->head()) + "}";
    return out;
  }

  ONESTORE_COLD std::string declare(const std::string& table_json) {
    std::string records;
    return WithStore([&](Store* st) { return st->Declare(table_json, &records); }, &records);
  }

  std::string commit(const std::string& ops_json, const std::string& meta_json) {
    std::string result;
    return WithStore(
        [&](Store* st) {
          ONESTORE_RETURN_IF_ERROR(RoomFor(ops_json));
          return st->Commit(ops_json, meta_json, &result);
        },
        &result);
  }

  // The common commit (Store::CommitAs): the owner's number from ownerId,
  // the time in ms, no actor. Answers the seq, or 0 with the failure in
  // lastError(): no text crosses either way.
  double commitAs(const std::string& ops, int owner, double at) {
    return CommitBytes(0, ops, owner, at);
  }

  // The raw commit (onestore_ops_room, onestore_commit_as below): the
  // address of this Core, which the JS side keeps.
  double address() const { return static_cast<double>(reinterpret_cast<uintptr_t>(this)); }

  // Room for `n` bytes of ops in the heap, written there by JS with one
  // TypedArray.set; the next CommitRoom commits them.
  // Null when the heap has no room for them (ArgumentsRoom).
  char* OpsRoom(int n) { return ArgumentsRoom(&ops_room_, n); }

  // commitAs (tx 0) or txCommitAs of the ops in the room; answers as they
  // do. A room grown past 64 KiB (a bulk transaction) is given back.
  double CommitRoom(int tx, int owner, double at) {
    const double seq = CommitBytes(tx, ops_room_, owner, at);
    if (ops_room_.capacity() > (64u << 10)) std::string().swap(ops_room_);
    return seq;
  }

  // commitAs (tx 0) or txCommitAs of the `n` bytes at `ops` in the heap,
  // read where they are: a transaction's buffer, which js/ops-buffer.js
  // keeps in this module's heap (no room, no copy). Answers as they do.
  double CommitAt(int tx, const char* ops, int n, int owner, double at) {
    return CommitBytes(tx, std::string_view(ops, static_cast<size_t>(n < 0 ? 0 : n)), owner, at);
  }

  // get() of what JS wrote into the room (js/core-calls.js): the table's
  // name, its first `table_len` bytes, then the key's JSON text. The answer
  // replaces them in the room, whose address is returned: its length as 4
  // bytes, little-endian, then its UTF-8 (wasm/ABI.md, "The raw get").
  char* GetRoom(int table_len) {
    const size_t n = std::min(ops_room_.size(), static_cast<size_t>(table_len < 0 ? 0 : table_len));
    WriteAnswer(get(ops_room_.substr(0, n), ops_room_.substr(n)), &ops_room_);
    return ops_room_.data();
  }

  // Store::OwnerId; 0 when no store is open (commitAs then says why).
  int ownerId(const std::string& name) { return store_ ? store_->OwnerId(name) : 0; }

  // The failure of the last call that answered 0 (commitAs, txCommitAs), as
  // "!<code> <message>".
  std::string lastError() { return last_error_; }

  // The last commit's ops as its outbox record holds them (Store::LastOps).
  std::string lastOps() {
    std::string ops;
    return WithStore(
        [&](Store* st) {
          ops = st->LastOps();
          return Status::OK();
        },
        &ops);
  }

  int txOpen() { return store_ ? store_->TxOpen() : 0; }

  std::string txStage(int tx, const std::string& ops_json) {
    std::string none;
    return WithStore(
        [&](Store* st) {
          ONESTORE_RETURN_IF_ERROR(RoomFor(ops_json));
          return st->TxStage(tx, ops_json);
        },
        &none);
  }

  std::string txGet(int tx, const std::string& ops_json, const std::string& table,
                    const std::string& key_json) {
    std::string row;
    return WithStore(
        [&](Store* st) {
          ONESTORE_RETURN_IF_ERROR(RoomFor(ops_json));
          return st->TxGet(tx, ops_json, table, key_json, &row);
        },
        &row);
  }

  std::string txCommit(int tx, const std::string& ops_json, const std::string& meta_json) {
    std::string result;
    return WithStore(
        [&](Store* st) {
          ONESTORE_RETURN_IF_ERROR(RoomFor(ops_json));
          return st->TxCommit(tx, ops_json, meta_json, &result);
        },
        &result);
  }

  // txCommit with the context of commitAs; answers as commitAs.
  double txCommitAs(int tx, const std::string& ops, int owner, double at) {
    return CommitBytes(tx, ops, owner, at);
  }

  std::string txClose(int tx) {
    if (store_) store_->TxClose(tx);
    return std::string();
  }

  std::string get(const std::string& table, const std::string& key_json) {
    std::string row;
    return WithStore([&](Store* st) { return st->Get(table, key_json, &row); }, &row);
  }

  std::string page(const std::string& table, const std::string& query_json, double limit,
                   const std::string& cursor) {
    std::string page;
    return WithStore(
        [&](Store* st) {
          return st->Page(table, query_json, static_cast<int64_t>(limit), cursor, &page);
        },
        &page);
  }

  // The k nearest rows of a vector column, one crossing per query
  // (src/vectors/nearest.h).
  ONESTORE_COLD std::string nearest(const std::string& table, const std::string& request_json) {
    std::string out;
    return WithStore([&](Store* st) { return st->Nearest(table, request_json, &out); }, &out);
  }

  // What the vector cache of nearest holds (src/vectors/vector_cache.h):
  // {"budget":bytes,"bytes":n,"builds":n}.
  ONESTORE_COLD std::string vectorCache() {
    std::string out;
    return WithStore(
        [&](Store* st) {
          const VectorCache& c = st->vector_cache();
          out = "{\"budget\":" + std::to_string(c.budget()) + ",\"bytes\":" +
                std::to_string(c.bytes()) + ",\"builds\":" + std::to_string(c.builds()) + "}";
          return Status::OK();
        },
        &out);
  }

  // Tests only: the bytes AppendBase64 moved growing its output, since the
  // module started (src/values/vector.h, Base64GrowthBytes).
  ONESTORE_COLD std::string debugBase64GrowthBytes() { return std::to_string(Base64GrowthBytes()); }

  std::string count(const std::string& table, const std::string& query_json) {
    std::string out;
    return WithStore(
        [&](Store* st) {
          int64_t n = 0;
          Status s = st->Count(table, query_json, &n);
          out = std::to_string(n);
          return s;
        },
        &out);
  }

  // Reads of documents: one request, one answer (docs/api.md "Documents").
  ONESTORE_COLD std::string documents(const std::string& request_json) {
    std::string out;
    return WithStore([&](Store* st) { return st->Documents(request_json, &out); }, &out);
  }

  // Inside transaction `tx` (0: none) above its staged puts' ids too
  // (Store::TxMintId).
  ONESTORE_COLD std::string mintId(const std::string& table, int tx) {
    std::string out;
    return WithStore(
        [&](Store* st) {
          int64_t id = 0;
          Status s = tx == 0 ? st->MintId(table, &id) : st->TxMintId(tx, table, &id);
          out = std::to_string(id);
          return s;
        },
        &out);
  }

  std::string outboxRead(double after, double limit) {
    std::string out;
    return WithStore(
        [&](Store* st) {
          return st->ReadOutbox(static_cast<int64_t>(after), static_cast<int64_t>(limit), &out);
        },
        &out);
  }

  // The log: one commit ({"seq":n}) or a filtered page (src/history/log.h).
  ONESTORE_COLD std::string log(const std::string& request_json) {
    std::string out;
    return WithStore([&](Store* st) { return ReadLog(st, request_json, &out); }, &out);
  }

  ONESTORE_COLD std::string outboxTrim(double up_to) {
    std::string out;
    return WithStore(
        [&](Store* st) {
          int64_t removed = 0;
          Status s = st->TrimOutbox(static_cast<int64_t>(up_to), &removed);
          out = std::to_string(removed);
          return s;
        },
        &out);
  }

  // A replica's batch (src/sync/replica.h): {"head":n,"applied":k}. The
  // batch's JSON text, as a string or as its UTF-8 bytes (a Uint8Array).
  std::string applyBatch(const std::string& batch_json) {
    std::string out;
    return WithReplica(
        [&](Replica* r) {
          ONESTORE_RETURN_IF_ERROR(RoomFor(batch_json));
          return r->ApplyBatch(batch_json, &out);
        },
        &out);
  }

  // Writes the divergence the last applyBatch found; "" on success.
  ONESTORE_COLD std::string recordDivergence() {
    std::string none;
    return WithReplica([&](Replica* r) { return r->RecordDivergence(); }, &none);
  }

  // A replica's host note (Replica::ReadHostNote): its text, "" for none.
  ONESTORE_COLD std::string hostNote(const std::string& name) {
    std::string out;
    return WithReplica([&](Replica* r) { return r->ReadHostNote(name, &out); }, &out);
  }

  // Writes a replica's host note in a transaction of its own; "" on success.
  ONESTORE_COLD std::string setHostNote(const std::string& name, const std::string& value) {
    std::string none;
    return WithReplica([&](Replica* r) { return r->WriteHostNote(name, value); }, &none);
  }

  // The divergence that stopped the replica, "" while it applies batches.
  ONESTORE_COLD std::string diverged() {
    std::string out;
    return WithReplica(
        [&](Replica* r) {
          out = r->diverged();
          return Status::OK();
        },
        &out);
  }

  // pullSession: the replica's store becomes a driver's (Store::Promote).
  ONESTORE_COLD std::string promote() {
    std::string none;
    std::string out = WithReplica([&](Replica*) { return store_->Promote(); }, &none);
    if (out.empty()) replica_.reset();
    return out;
  }

  // The driver lost its lease: a separate session (Store::Split).
  ONESTORE_COLD std::string split(const std::string& new_id, const std::string& origin_json) {
    std::string none;
    return WithStore([&](Store* st) { return st->Split(new_id, origin_json); }, &none);
  }

  // The origin of a split-off session, "" when none.
  ONESTORE_COLD std::string origin() {
    std::string out;
    return WithStore(
        [&](Store* st) {
          out = st->origin();
          return Status::OK();
        },
        &out);
  }

  // A driver's own acknowledged batch pulled back after a power loss
  // (Replica::AttachDriver): {"head":n,"applied":k}.
  ONESTORE_COLD std::string restoreBatch(const std::string& batch_json) {
    std::string out;
    return WithStore(
        [&](Store* st) {
          std::unique_ptr<Replica> r;
          ONESTORE_RETURN_IF_ERROR(Replica::AttachDriver(st, &r));
          return r->ApplyBatch(batch_json, &out);
        },
        &out);
  }

  // The content digest of a store or replica (src/sync/fingerprint.h).
  ONESTORE_COLD std::string fingerprint() {
    std::string out;
    return WithStore([&](Store* st) { return Fingerprint(st, &out); }, &out);
  }

  // Archives (src/archive/archive.h): a page of row lines for an export,
  // answered as the next cursor ("" after the last page), "\n", the lines.
  std::string exportRows(const std::string& table, const std::string& cursor, double limit) {
    std::string out;
    return WithStore(
        [&](Store* st) {
          std::string lines, next;
          Status s = Archiver(st).RowLines(table, cursor, static_cast<int64_t>(limit), &lines, &next);
          out = next + "\n" + lines;
          return s;
        },
        &out);
  }

  // {"rows":n,"digest":"t1-..."} of one table (src/sync/fingerprint.h).
  ONESTORE_COLD std::string tableDigest(const std::string& table) {
    std::string out;
    return WithStore(
        [&](Store* st) {
          int64_t rows = 0;
          std::string digest;
          Status s = TableDigest(st, table, &rows, &digest);
          out = "{\"rows\":" + std::to_string(rows) + ",\"digest\":\"" + digest + "\"}";
          return s;
        },
        &out);
  }

  // The fingerprint and every table's row count and digest, in one read:
  // {"fingerprint":"f1-…","tables":{"<name>":{"rows":n,"digest":"t1-…"}}}.
  ONESTORE_COLD std::string archiveDigests() {
    std::string out;
    return WithStore(
        [&](Store* st) {
          std::string fingerprint;
          std::vector<TableDigestEntry> tables;
          ONESTORE_RETURN_IF_ERROR(FingerprintAndDigests(st, &fingerprint, &tables));
          out = "{\"fingerprint\":\"" + fingerprint + "\",\"tables\":{";
          for (size_t i = 0; i < tables.size(); ++i) {
            if (i > 0) out += ",";
            AppendJsonString(tables[i].table, &out);
            out += ":{\"rows\":" + std::to_string(tables[i].rows) + ",\"digest\":\"" +
                   tables[i].digest + "\"}";
          }
          out += "}}";
          return Status::OK();
        },
        &out);
  }

  ONESTORE_COLD std::string restoreTables(const std::string& tables_json) {
    std::string out;
    return WithStore([&](Store* st) { return Archiver(st).RestoreTables(tables_json); }, &out);
  }

  ONESTORE_COLD std::string restoreRows(const std::string& table, const std::string& lines) {
    std::string out;
    return WithStore([&](Store* st) { return Archiver(st).RestoreRows(table, lines); }, &out);
  }

  ONESTORE_COLD std::string restoreOutbox(const std::string& lines, double head) {
    std::string out;
    return WithStore(
        [&](Store* st) { return Archiver(st).RestoreOutbox(lines, static_cast<int64_t>(head)); },
        &out);
  }

  // Snapshots (src/snapshot/snapshot.h). `path` "" keeps a memory copy in
  // this core under `id`; otherwise the database is copied to the file.
  ONESTORE_COLD std::string snapshotTake(const std::string& id, const std::string& path) {
    std::string out;
    return WithStore(
        [&](Store* st) {
          out = "{\"seq\":" + std::to_string(st->head()) + "}";
          if (!path.empty()) return Snapshots::CopyToFile(st, path);
          std::unique_ptr<Store> copy;
          ONESTORE_RETURN_IF_ERROR(Snapshots::CopyToMemory(st, &copy));
          memory_snapshots_[id] = std::move(copy);
          return Status::OK();
        },
        &out);
  }

  // The restore commit from the memory copy `id` (path "") or the snapshot
  // file `path`; answers as commit does.
  ONESTORE_COLD std::string snapshotRestore(const std::string& id, const std::string& path,
                                            const std::string& marker_json,
                                            const std::string& meta_json) {
    std::string result;
    return WithStore(
        [&](Store* st) {
          if (path.empty()) {
            auto it = memory_snapshots_.find(id);
            if (it == memory_snapshots_.end()) {
              return Status::InvalidArgs("store.restore: no snapshot " + id + " in this store");
            }
            return Snapshots::Restore(st, it->second.get(), marker_json, meta_json, &result);
          }
          std::unique_ptr<Store> snap;
          ONESTORE_RETURN_IF_ERROR(OpenSnapshotFile(id, path, "store.restore", &snap));
          Status s = Snapshots::Restore(st, snap.get(), marker_json, meta_json, &result);
          snap->Close();
          return s;
        },
        &result);
  }

  // The restore commit from a snapshot kept as copies of the tables in the
  // store's own database (a Durable Object's: js/snapshots-durable.js);
  // `copies_json` as Snapshots::RestoreCopies takes it. Answers as commit.
  ONESTORE_COLD std::string snapshotRestoreCopies(const std::string& copies_json,
                                                  const std::string& marker_json,
                                                  const std::string& meta_json) {
    std::string result;
    return WithStore(
        [&](Store* st) {
          return Snapshots::RestoreCopies(st, copies_json, marker_json, meta_json, &result);
        },
        &result);
  }

  // seedView from a snapshot kept as copies of the tables in the database
  // of `source` (snapshotRestoreCopies), taken at `head`.
  ONESTORE_COLD std::string seedViewCopies(const Core& source, const std::string& copies_json,
                                           double head) {
    std::string out;
    return WithStore(
        [&](Store* st) {
          if (!source.store_) return Status::Closed("store.at: the store is closed");
          ONESTORE_RETURN_IF_ERROR(Snapshots::CopyCopiesInto(
              source.store_.get(), copies_json, static_cast<int64_t>(head), st));
          out = "{\"head\":" + std::to_string(st->head()) + "}";
          return Status::OK();
        },
        &out);
  }

  // Seeds this core, an empty memory replica (store.at's view), with the
  // snapshot `id` of `source`: its memory copy (path "") or the snapshot
  // file `path`. The snapshot is only read. Answers {"head":n}, the
  // snapshot's seq, from which the view applies outbox records.
  ONESTORE_COLD std::string seedView(const Core& source, const std::string& id, const std::string& path) {
    std::string out;
    return WithStore(
        [&](Store* st) {
          if (path.empty()) {
            auto it = source.memory_snapshots_.find(id);
            if (it == source.memory_snapshots_.end()) {
              return Status::NotFound("store.at: no snapshot " + id + " in this store");
            }
            ONESTORE_RETURN_IF_ERROR(Snapshots::CopyInto(it->second.get(), st));
          } else {
            std::unique_ptr<Store> snap;
            ONESTORE_RETURN_IF_ERROR(OpenSnapshotFile(id, path, "store.at", &snap));
            Status s = Snapshots::CopyInto(snap.get(), st);
            snap->Close();
            ONESTORE_RETURN_IF_ERROR(s);
          }
          out = "{\"head\":" + std::to_string(st->head()) + "}";
          return Status::OK();
        },
        &out);
  }

  // Holds the store's file while the runtime copies it: {"seq":head}.
  ONESTORE_COLD std::string snapshotHold() {
    std::string out;
    return WithStore(
        [&](Store* st) {
          int64_t head = 0;
          ONESTORE_RETURN_IF_ERROR(Snapshots::Hold(st, &head));
          out = "{\"seq\":" + std::to_string(head) + "}";
          return Status::OK();
        },
        &out);
  }

  ONESTORE_COLD std::string snapshotRelease() {
    if (store_) Snapshots::Release(store_.get());
    return std::string();
  }

  // Forgets the memory copy `id`.
  ONESTORE_COLD std::string snapshotDrop(const std::string& id) {
    memory_snapshots_.erase(id);
    return std::string();
  }

  double head() const { return store_ ? static_cast<double>(store_->head()) : 0; }

  ONESTORE_COLD std::string tables() {
    std::string out;
    return WithStore(
        [&](Store* st) {
          out = st->TablesJson();
          return Status::OK();
        },
        &out);
  }

  // The tables an archive carries: the owners' and the documents' own.
  ONESTORE_COLD std::string archiveTables() {
    std::string out;
    return WithStore(
        [&](Store* st) {
          out = st->TablesJson(/*internal=*/true);
          return Status::OK();
        },
        &out);
  }

  // Closes the store; answers what failed in releasing it (storage_failed;
  // the store is closed anyway and its commits are kept), or "".
  ONESTORE_COLD std::string close() {
    memory_snapshots_.clear();
    replica_.reset();
    Status s;
    if (store_) {
      s = store_->Close();
      store_.reset();
    }
    closed_ = true;
    return Answer(s);
  }

 private:
  // commitAs (tx 0) or txCommitAs of `ops`, once the heap has room for them
  // (RoomFor): every numeric commit, the raw ones included, comes here.
  double CommitBytes(int tx, std::string_view ops, int owner, double at) {
    return WithSeq([&](Store* st, int64_t* seq) {
      ONESTORE_RETURN_IF_ERROR(RoomFor(ops));
      return tx == 0 ? st->CommitAs(ops, owner, at, seq) : st->TxCommitAs(tx, ops, owner, at, seq);
    });
  }

  template <typename F>
  std::string WithStore(F&& f, std::string* payload) {
    if (!store_) {
      return Answer(closed_ ? Status::Closed("the store is closed; open it again with openStore")
                            : Status::InvalidArgs("the store is not open"));
    }
    Status s = f(store_.get());
    return s.ok() ? std::move(*payload) : Answer(s);
  }

  // WithStore for a call that answers a seq: the seq, or 0 with the
  // failure kept for lastError().
  template <typename F>
  double WithSeq(F&& f) {
    int64_t seq = 0;
    std::string none;
    std::string failed = WithStore([&](Store* st) { return f(st, &seq); }, &none);
    if (failed.empty()) return static_cast<double>(seq);
    last_error_ = std::move(failed);
    return 0;
  }

  template <typename F>
  std::string WithReplica(F&& f, std::string* payload) {
    if (store_ && !replica_) {
      return Answer(Status::InvalidArgs("this store is not a replica (open one with openReplica)"));
    }
    return WithStore([&](Store*) { return f(replica_.get()); }, payload);
  }

  // Opens the snapshot file `path` of snapshot `id` for `what`.
  ONESTORE_COLD static Status OpenSnapshotFile(const std::string& id, const std::string& path,
                                               const char* what, std::unique_ptr<Store>* out) {
    OpenOptions o;
    o.backend = "sqlite";
    o.path = path;
    // A copy of a held store file is in WAL format (the store ran in
    // exclusive WAL mode): open it the same way, with no shared memory; it
    // is left a plain rollback file when closed.
    o.hold_lock = true;
    Status s = Store::Open(o, out);
    if (!s.ok()) {
      return Status(s.code(), std::string(what) + ": cannot open snapshot " + id + " (" + path +
                                  "): " + s.message());
    }
    return Status::OK();
  }

  std::unique_ptr<Store> store_;
  std::unique_ptr<Replica> replica_;  // set for a replica; refers to *store_
  std::map<std::string, std::unique_ptr<Store>> memory_snapshots_;  // snapshotTake with no path
  bool closed_ = false;
  std::string last_error_;  // lastError()
  std::string ops_room_;    // OpsRoom, CommitRoom, GetRoom
};

// listStores: {"id":..,"head":n,"replica":bool} of the sqlite store at
// `path`, read without taking it over (PeekSqliteStore; `private_copy`: the
// files are a copy only this call reads), or "!<code> ...".
ONESTORE_COLD std::string PeekStore(const std::string& path, bool private_copy) {
  Status s = UseJsFiles();
  StorePeek peek;
  if (s.ok()) s = PeekSqliteStore(path, private_copy, &peek);
  if (!s.ok()) return Answer(s);
  std::string out = "{\"id\":";
  AppendJsonString(peek.id, &out);
  out += ",\"head\":" + std::to_string(peek.head) +
         ",\"replica\":" + (peek.replica ? "true" : "false") + "}";
  return out;
}

// [{"code":..,"doc":..}]: the one list of codes, for js/errors.js.
ONESTORE_COLD std::string ErrorCodes() {
  std::string out = "[";
  bool first = true;
#define ONESTORE_ITEM_(name, str, doc) \
  if (!first) out.push_back(',');      \
  first = false;                       \
  out += "{\"code\":";                 \
  AppendJsonString(str, &out);         \
  out += ",\"doc\":";                  \
  AppendJsonString(doc, &out);         \
  out += "}";
  ONESTORE_ERROR_CODES(ONESTORE_ITEM_)
#undef ONESTORE_ITEM_
  out += "]";
  return out;
}

}  // namespace
}  // namespace onestore

// The common commit without embind (issue 13, Durable Objects, step six):
// embind's invoker (without code generation: a generic one, its arguments
// array and a closure per call), the ops' handle and the two calls that
// copied them (onestore_ops_length, onestore_ops_copy) were about 2.5% of a
// Durable Object's one-put commit. js/core-calls.js (rawCommits) gives
// Core.commitAs and Core.txCommitAs these two plain exports: the ops are
// written into the core's room, then committed. `core` is Core.address().
extern "C" {
EMSCRIPTEN_KEEPALIVE char* onestore_ops_room(double core, int n) {
  return reinterpret_cast<onestore::Core*>(static_cast<uintptr_t>(core))->OpsRoom(n);
}
EMSCRIPTEN_KEEPALIVE double onestore_commit_room(double core, int tx, int owner, double at) {
  return reinterpret_cast<onestore::Core*>(static_cast<uintptr_t>(core))->CommitRoom(tx, owner, at);
}
// The commit of a transaction's buffer in the heap, in place (issue 13, a
// bulk put's ops in the wasm heap): js/core-calls.js gives Core.commitAs and
// Core.txCommitAs this export for an OpsBuffer of this module.
EMSCRIPTEN_KEEPALIVE double onestore_commit_at(double core, int tx, const char* ops, int n,
                                               int owner, double at) {
  return reinterpret_cast<onestore::Core*>(static_cast<uintptr_t>(core))
      ->CommitAt(tx, ops, n, owner, at);
}
// The common get without embind either (issue 13, the raw get): js/core-calls.js
// gives Core.get this export for ASCII text.
EMSCRIPTEN_KEEPALIVE char* onestore_get_room(double core, int table_len) {
  return reinterpret_cast<onestore::Core*>(static_cast<uintptr_t>(core))->GetRoom(table_len);
}
}

// The Core's methods as one plain export (wasm/core_post.js, the `Core` class every
// loader's module carries; wasm/ABI.md, "Calls"): embind's class, its
// invokers and its glue were about 10 KB of the gzipped download (issue 13),
// and without code generation each embind call went through a generic
// invoker. JS writes a call's strings into the call room, each as its
// length (4 bytes, little-endian) then its UTF-8, and passes its numbers as
// a, b, c in the order the method takes them (a Core argument as its
// address). A method that answers a string leaves it in the room the same
// way and the call returns the room's address; one that answers a number
// returns it. kMethods below numbers the methods.
namespace {
std::string call_room;

// The strings of a call, read from the room (a length past its end reads
// what is there: JS never writes one).
struct CallStrings {
  std::string s[4];
  CallStrings() {
    size_t at = 0;
    for (std::string& v : s) {
      if (call_room.size() - at < 4) break;
      uint32_t n;
      std::memcpy(&n, call_room.data() + at, 4);
      at += 4;
      n = static_cast<uint32_t>(std::min<size_t>(n, call_room.size() - at));
      v.assign(call_room, at, n);
      at += n;
    }
  }
};

onestore::Core* CoreAt(double address) {
  return reinterpret_cast<onestore::Core*>(static_cast<uintptr_t>(address));
}

// The methods onestore_call calls, by number (wasm/core_post.js names
// them in this order; the module's own functions follow, with no core).
// Each is a function of its own, called through this table: a switch
// calling them made wasm-opt inline every method, each having one caller,
// into one function of 77 KB, which V8 compiled at the first call (13 ms)
// and ran for every call. A method that answers a string leaves it in
// `out` and returns -1; one that answers a number returns it (never
// negative).
using Method = double (*)(onestore::Core* k, const std::string* s, double a, double b, double c,
                          std::string* out);
#define ONESTORE_TEXT_(...)                                                               \
  [](onestore::Core* k, const std::string* s, double a, double b, double c, std::string* out) \
      -> double {                                                                         \
    *out = __VA_ARGS__;                                                                   \
    return -1;                                                                            \
  }
#define ONESTORE_NUMBER_(...)                                                               \
  [](onestore::Core* k, const std::string* s, double a, double b, double c, std::string*) \
      -> double { return __VA_ARGS__; }
const Method kMethods[] = {
    ONESTORE_TEXT_(k->open(s[0])),  // 0
    ONESTORE_TEXT_(k->declare(s[0])),  // 1
    ONESTORE_TEXT_(k->commit(s[0], s[1])),  // 2
    ONESTORE_NUMBER_(k->commitAs(s[0], static_cast<int>(a), b)),  // 3
    ONESTORE_NUMBER_(k->address()),  // 4
    ONESTORE_NUMBER_(k->ownerId(s[0])),  // 5
    ONESTORE_TEXT_(k->lastError()),  // 6
    ONESTORE_TEXT_(k->lastOps()),  // 7
    ONESTORE_NUMBER_(k->txOpen()),  // 8
    ONESTORE_TEXT_(k->txStage(static_cast<int>(a), s[0])),  // 9
    ONESTORE_TEXT_(k->txGet(static_cast<int>(a), s[0], s[1], s[2])),  // 10
    ONESTORE_TEXT_(k->txCommit(static_cast<int>(a), s[0], s[1])),  // 11
    ONESTORE_NUMBER_(k->txCommitAs(static_cast<int>(a), s[0], static_cast<int>(b), c)),  // 12
    ONESTORE_TEXT_(k->txClose(static_cast<int>(a))),  // 13
    ONESTORE_TEXT_(k->get(s[0], s[1])),  // 14
    ONESTORE_TEXT_(k->page(s[0], s[1], a, s[2])),  // 15
    ONESTORE_TEXT_(k->nearest(s[0], s[1])),  // 16
    ONESTORE_TEXT_(k->vectorCache()),  // 17
    ONESTORE_TEXT_(k->debugBase64GrowthBytes()),  // 18
    ONESTORE_TEXT_(k->count(s[0], s[1])),  // 19
    ONESTORE_TEXT_(k->mintId(s[0], static_cast<int>(a))),  // 20
    ONESTORE_TEXT_(k->documents(s[0])),  // 21
    ONESTORE_TEXT_(k->outboxRead(a, b)),  // 22
    ONESTORE_TEXT_(k->log(s[0])),  // 23
    ONESTORE_TEXT_(k->outboxTrim(a)),  // 24
    ONESTORE_TEXT_(k->applyBatch(s[0])),  // 25
    ONESTORE_TEXT_(k->recordDivergence()),  // 26
    ONESTORE_TEXT_(k->diverged()),  // 27
    ONESTORE_TEXT_(k->promote()),  // 28
    ONESTORE_TEXT_(k->split(s[0], s[1])),  // 29
    ONESTORE_TEXT_(k->origin()),  // 30
    ONESTORE_TEXT_(k->restoreBatch(s[0])),  // 31
    ONESTORE_TEXT_(k->hostNote(s[0])),  // 32
    ONESTORE_TEXT_(k->setHostNote(s[0], s[1])),  // 33
    ONESTORE_TEXT_(k->fingerprint()),  // 34
    ONESTORE_TEXT_(k->exportRows(s[0], s[1], a)),  // 35
    ONESTORE_TEXT_(k->tableDigest(s[0])),  // 36
    ONESTORE_TEXT_(k->archiveDigests()),  // 37
    ONESTORE_TEXT_(k->restoreTables(s[0])),  // 38
    ONESTORE_TEXT_(k->restoreRows(s[0], s[1])),  // 39
    ONESTORE_TEXT_(k->restoreOutbox(s[0], a)),  // 40
    ONESTORE_TEXT_(k->snapshotTake(s[0], s[1])),  // 41
    ONESTORE_TEXT_(k->snapshotRestore(s[0], s[1], s[2], s[3])),  // 42
    ONESTORE_TEXT_(k->snapshotRestoreCopies(s[0], s[1], s[2])),  // 43
    ONESTORE_TEXT_(k->seedViewCopies(*CoreAt(a), s[0], b)),  // 44
    ONESTORE_TEXT_(k->snapshotDrop(s[0])),  // 45
    ONESTORE_TEXT_(k->snapshotHold()),  // 46
    ONESTORE_TEXT_(k->snapshotRelease()),  // 47
    ONESTORE_TEXT_(k->seedView(*CoreAt(a), s[0], s[1])),  // 48
    ONESTORE_NUMBER_(k->head()),  // 49
    ONESTORE_TEXT_(k->tables()),  // 50
    ONESTORE_TEXT_(k->archiveTables()),  // 51
    ONESTORE_TEXT_(k->close()),  // 52
    ONESTORE_TEXT_(onestore::ErrorCodes()),  // 53
    ONESTORE_TEXT_(onestore::PeekStore(s[0], a != 0)),  // 54
};
#undef ONESTORE_TEXT_
#undef ONESTORE_NUMBER_

}  // namespace

extern "C" {
EMSCRIPTEN_KEEPALIVE double onestore_core_new() {
  return static_cast<double>(reinterpret_cast<uintptr_t>(new onestore::Core()));
}
EMSCRIPTEN_KEEPALIVE void onestore_core_delete(double core) { delete CoreAt(core); }
// Room for `n` bytes of a call's strings; null when the heap has no room
// for them (ArgumentsRoom), and JS then refuses the call with `limit`.
EMSCRIPTEN_KEEPALIVE char* onestore_call_room(int n) { return onestore::ArgumentsRoom(&call_room, n); }
EMSCRIPTEN_KEEPALIVE double onestore_call(double core, int m, double a, double b, double c) {
  if (m < 0 || m >= static_cast<int>(sizeof kMethods / sizeof kMethods[0])) return 0;
  const CallStrings strings;
  std::string out;
  const double number = kMethods[m](CoreAt(core), strings.s, a, b, c, &out);
  if (number >= 0) return number;
  onestore::WriteAnswer(out, &call_room);
  return static_cast<double>(reinterpret_cast<uintptr_t>(call_room.data()));
}
}
