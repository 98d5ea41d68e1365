// Documents: JSON values with an address, kept as a base plus deltas in the
// store's own tables (_documents, _deltas), written through the generic
// Backend interface, so every backend holds them the same way.
//
// A document op (doc.create, doc.change, doc.retire; docs/formats.md) is
// one op of a commit. The commit step (and a replica's ApplyBatch) hands it
// to a DocWriter, which checks it against the document's state and expands
// it into puts on the two tables; the outbox records the document op itself,
// normalized (the version it makes, whether it wrote a base), so a replica
// replays it to the same rows.
#ifndef ONESTORE_DOCUMENTS_DOCUMENTS_H_
#define ONESTORE_DOCUMENTS_DOCUMENTS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "backends/backend.h"
#include "onestore/status.h"
#include "schema/schema.h"
#include "values/value.h"
#include "writes/writes.h"

namespace onestore {

constexpr char kDocumentsTable[] = "_documents";
constexpr char kDeltasTable[] = "_deltas";
constexpr char kRestoresTable[] = "_restores";

// _documents: one row per document (incarnation): id, owner, kind, key,
// version, seq (of its last change), retired (seq, or null), base (version
// of its latest base), deltas and bytes (of the patches since that base).
const std::shared_ptr<const TableSchema>& DocumentsTable();
// _deltas: one row per version, key [doc, version]: seq, at, actor, op
// ("create", "change", "retire"), patch (change), value (a base: the whole
// document after this version), base (1 when value holds one).
const std::shared_ptr<const TableSchema>& DeltasTable();
// _restores: one row per store.restore of a store with documents, key
// [seq]: seq (the restore's commit), snapshot (the seq its snapshot was
// taken at). A restore takes the documents' tables back to the snapshot's,
// so the versions of the seqs strictly between the two are gone: a read of
// documents at such a seq is refused with not_found instead of answering
// from the older history. Its rows are restored with the others (a restore
// of a snapshot from before a restore brings that history back), and it is
// left out of the fingerprint (a restore gives back the snapshot's).
const std::shared_ptr<const TableSchema>& RestoresTable();
// Whether `name` is one of the store's own tables above.
bool IsStoreTable(std::string_view name);

// The defaults of checkpointWhen (design.md "Documents").
constexpr int64_t kDefaultCheckpointDeltas = 50;
constexpr int64_t kDefaultCheckpointBytes = 64 * 1024;

// The most a document may hold once a change applies, estimated as the
// core holds it (JsonFootprint: 32 bytes a value, plus its strings' and
// keys' bytes): a patch of a few copies doubles a document each, and one
// past the wasm heap would stop the core. Above it: `limit`.
constexpr size_t kMaxDocumentFootprint = size_t{128} << 20;
// The deepest a document may nest once a change applies: a value in a put
// may nest 997 levels (docs/api.md, "Limits"); a deeper one could not be
// read back, loaded or imported.
constexpr int kMaxDocumentDepth = 997;

// The estimate of the heap `v` takes (see kMaxDocumentFootprint) and its
// depth (a scalar 0, [] 1), without recursion.
void JsonFootprint(const Json& v, size_t* bytes, int* depth);

// What a writer knows of a document's size between its patches: its
// footprint (JsonFootprint's bytes, kept up to date by ApplyJsonPatch) and
// a bound on its depth (never below the depth: a patch raises it by what it
// adds, and nothing lowers it); `known` false until first measured.
struct DocSize {
  size_t footprint = 0;
  int depth = 0;
  bool known = false;
};

enum class DocOpKind { kCreate, kChange, kRetire };

struct DocOp {
  DocOpKind kind = DocOpKind::kCreate;
  std::string owner;
  int64_t id = 0;
  std::string doc_kind;            // create: the address's kind
  std::optional<std::string> key;  // create: the address's key
  Json value;                      // create
  Json patch;                      // change: RFC 6902, an array of ops
  // The version this op makes: filled in by DocWriter; as given (a replayed
  // record, or a caller that checks), it must be the next version.
  int64_t version = 0;
  // change: whether this version is written as a new base. Filled in by
  // DocWriter from the thresholds below; as given, followed.
  std::optional<bool> base;
  int64_t max_deltas = kDefaultCheckpointDeltas;  // change: checkpointWhen.deltas
  int64_t max_bytes = kDefaultCheckpointBytes;    // change: checkpointWhen.bytes

  // The normalized wire op (docs/formats.md): no checkpointWhen, the
  // version and (change) base always present.
  void AppendJson(std::string* out) const;
};

// True for the op names of documents ("doc.create", ...).
bool IsDocOpName(const std::string& name);
// Parses a document op; `where` names it in errors (invalid/args).
Status ParseDocOp(const Json& j, const std::string& where, DocOp* out);

// Applies `patch` (RFC 6902) to `doc`, one op at a time. The wasm core has
// no C++ exceptions, so each op's preconditions (its shape, its pointers, the
// target's existence, a test's equality) are checked first, and the op is
// then applied at the value the check resolved (no JSON Pointer parsed
// twice, no patch document built per op). A patch that does not apply fails
// with invalid/args naming the op, leaving `doc` as it was. With
// `keep_on_failure` false the ops apply to `doc` itself, without the copy
// that keeps it whole: for a caller that drops `doc` when the patch fails (a
// load replaying stored deltas, a writer working on its own copy). With
// `limit`, an op that would make the document hold more than
// kMaxDocumentFootprint fails with `limit` (a load replays deltas that were
// checked when they were written: it passes false). `size`, when given with
// `limit`, is the document's size as last measured (measured here first
// when not known), and is left as the patch made it, so that a writer
// measures a document once, not at each patch.
Status ApplyJsonPatch(const Json& patch, const std::string& where, Json* doc,
                      bool keep_on_failure = true, bool limit = true, DocSize* size = nullptr);

// Creates the two tables in `backend` (inside its open transaction) when the
// catalog lacks them; sets *created (the caller puts them in its catalog
// once the transaction commits).
Status EnsureDocumentTables(Backend* backend, const Catalog& catalog, bool* created);
// Makes _restores unless `catalog` has it (a store made before it was);
// *created says whether it was made.
Status EnsureRestoresTable(Backend* backend, const Catalog& catalog, bool* created);

// Checks and expands the document ops of one commit, keeping the state of
// every document it touched (the backend's committed state is read once per
// document).
class DocWriter {
 public:
  // `fresh_tables`: the tables were created in this transaction (nothing
  // committed to read).
  DocWriter(Backend* backend, bool fresh_tables, int64_t seq, int64_t at, const Json* actor)
      : backend_(backend), fresh_tables_(fresh_tables), seq_(seq), at_(at), actor_(actor) {}
  // The commit the next ops belong to (a replica's batch has several).
  void SetCommit(int64_t seq, int64_t at, const Json* actor) {
    seq_ = seq;
    at_ = at;
    actor_ = actor;
  }
  // Checks `op` and appends the puts that write it to `writes`; fills in
  // op->version and op->base.
  Status Apply(DocOp* op, const std::string& where, std::vector<Op>* writes);

 private:
  struct Doc {
    std::string owner, kind;
    std::optional<std::string> key;
    int64_t version = 0, seq = 0, base = 0, deltas = 0, bytes = 0;
    std::optional<int64_t> retired;
    Json value;
    DocSize size;  // of `value`, for the limits of its changes
  };
  Status Load(int64_t id, const std::string& where, Doc** out);
  Backend* backend_;
  bool fresh_tables_;
  int64_t seq_, at_;
  const Json* actor_;
  std::map<int64_t, Doc> docs_;
};

// Reads of committed state, one call each (Store::Documents). `request` is
// {"call":"find"|"load"|"list"|"versions","owner":o,...} (docs/api.md);
// the answer is JSON text.
// A find or load `at` a seq that a later restore took the documents' history
// back past (see _restores) is not_found.
Status DocumentsRead(Backend* backend, bool tables_exist, bool restores_exist, int64_t head,
                     const Json& request, std::string* answer);

}  // namespace onestore

#endif  // ONESTORE_DOCUMENTS_DOCUMENTS_H_
