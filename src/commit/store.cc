#include "commit/store.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <string_view>

#include "backends/memory/memory_backend.h"
#include "backends/sqlite/sqlite_backend.h"
#include "documents/documents.h"
#include "onestore/cold.h"
#include "onestore/kept.h"
#include "values/json_text.h"
#include "vectors/nearest.h"
#include "writes/binary_ops.h"

namespace onestore {

namespace {

// Appends the digits of n (no temporary string: the record's and the
// answer's numbers are written on every commit).
void AppendInt(int64_t n, std::string* out) {
  char buf[24];
  out->append(buf, std::to_chars(buf, buf + sizeof buf, n).ptr - buf);
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A fallback session id for callers that give none (the JS package always
// gives one from crypto.randomUUID()).
std::string NewId() {
  static uint64_t counter = 0;
  uint64_t x = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
               (reinterpret_cast<uintptr_t>(&counter) << 16) ^ (++counter * 0x9E3779B97F4A7C15ULL);
  static const char kHex[] = "0123456789abcdef";
  std::string s = "s-";
  for (int i = 0; i < 16; ++i, x >>= 4) s.push_back(kHex[x & 15]);
  return s;
}

// The _meta note that marks a replica's store (Backend::WriteNote).
constexpr char kRoleNote[] = "role";
// The notes of a store that split off another session (Store::Split): its
// own session id (over the one the backend was created with) and its origin.
constexpr char kSessionNote[] = "session";
constexpr char kOriginNote[] = "origin";

// A replica's store is only ever opened as a replica, and a replica starts
// from an empty store (then marked as one); an owner's commits and a
// driver's batches in one store would fork the session's seqs.
Status CheckRole(Backend* backend, int64_t head, bool replica) {
  std::string role;
  ONESTORE_RETURN_IF_ERROR(backend->ReadNote(kRoleNote, &role));
  if (role == "replica") {
    if (replica) return Status::OK();
    return Status::InvalidArgs(
        "openStore: this store is a replica (it changes only by its driver's batches); open it "
        "with openReplica");
  }
  if (!replica) return Status::OK();
  if (head > 0) {
    return Status::InvalidArgs("openReplica: this store holds an owner's commits (head " +
                               std::to_string(head) +
                               "); a replica starts from an empty store: open a new one");
  }
  ONESTORE_RETURN_IF_ERROR(backend->Begin());
  Status st = backend->WriteNote(kRoleNote, "replica");
  if (st.ok()) st = backend->Commit();
  if (!st.ok()) backend->Rollback();
  return st;
}

// A row as the JS side reads it: a JSON array, or null.
// Reads the key of a get whose text has the common one-value shape without
// the JSON parser: ["text"] (printable ASCII, nothing escaped) for a table
// keyed by one str column, [digits] (at most 15) for one keyed by one int
// column. Returns false for any other text, which then takes the full path
// (ParseJsonText, ParseKey): that one checks everything else and names what
// is wrong, so both paths take and refuse the same keys.
bool ReadSimpleKey(std::string_view text, const TableSchema& t, Key* key) {
  if (t.key.size() != 1 || text.size() < 3 || text.front() != '[' || text.back() != ']') {
    return false;
  }
  const Type type = t.columns[t.key[0]].type;
  std::string_view body = text.substr(1, text.size() - 2);
  if (type == Type::kStr) {
    if (body.size() < 2 || body.front() != '"' || body.back() != '"') return false;
    body = body.substr(1, body.size() - 2);
    for (char c : body) {
      if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
    }
    key->clear();
    key->push_back(Value::Str(std::string(body)));
    return true;
  }
  if (type != Type::kInt || body.empty()) return false;
  const bool negative = body.front() == '-';
  if (negative) body.remove_prefix(1);
  if (body.empty() || body.size() > 15 || (body.front() == '0' && body.size() > 1)) return false;
  int64_t v = 0;
  for (char c : body) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  key->clear();
  key->push_back(Value::Int(negative ? -v : v));
  return true;
}

// The key of a get from its JSON text (`where`: "get key", "tx.get key").
// A text longer than any key of `t` can be (a str key holds at most
// kMaxKeyBytes, 6 bytes a byte escaped) is refused before it is read: the
// parse of a key of 300 MB took more of the heap than the call's room
// check keeps, and aborted the core.
Status ReadKey(std::string_view text, const TableSchema& t, const char* where, Key* key) {
  if (text.size() > t.key.size() * (6 * kMaxKeyBytes + 64)) {
    return Status::InvalidArgs(std::string(where) + ": " + std::to_string(text.size()) +
                               " bytes of JSON, longer than any key of table \"" + t.name + "\" can be");
  }
  if (ReadSimpleKey(text, t, key)) return Status::OK();
  Json kj;
  ONESTORE_RETURN_IF_ERROR(ParseJsonText(text, "key", &kj));
  return ParseKey(kj, t, where, key);
}

void EncodeRowOrNull(const std::optional<Row>& row, std::string* out) {
  out->clear();
  if (row) {
    AppendRowArray(*row, out);
  } else {
    *out = "null";
  }
}

}  // namespace

Status CheckActor(const Json& a, const std::string& where) {
  if (!a.is_object() || !a.contains("kind") || !a["kind"].is_string() || !a.contains("id") ||
      !a["id"].is_string()) {
    return Status::InvalidArgs(where + ": " +
                               a.dump(-1, ' ', false, Json::error_handler_t::replace) +
                               " is not an actor {kind, id, for?, via?}");
  }
  for (auto it = a.begin(); it != a.end(); ++it) {
    const std::string& k = it.key();
    if (k != "kind" && k != "id" && k != "for" && k != "via") {
      return Status::InvalidArgs(where + ": unknown actor field \"" + k + "\"");
    }
  }
  if (a.contains("for")) ONESTORE_RETURN_IF_ERROR(CheckActor(a["for"], where + ".for"));
  return Status::OK();
}

namespace {

// The context of a parsed {owner?, at?, actor?}, checked.
ONESTORE_COLD Status ContextOf(const Json& meta, CommitContext* out) {
  if (!meta.is_object()) return Status::InvalidArgs("commit context: must be an object");
  if (meta.contains("owner")) {
    if (!meta["owner"].is_string())
      return Status::InvalidArgs("commit context: owner must be a string");
    out->owner = meta["owner"].get<std::string>();
  }
  if (meta.contains("actor") && !meta["actor"].is_null()) {
    ONESTORE_RETURN_IF_ERROR(CheckActor(meta["actor"], "ctx.actor"));
    out->actor = meta["actor"];
  }
  if (meta.contains("at") && meta["at"].is_number()) {
    // Milliseconds as an int64; a number beyond that range is refused (its
    // conversion was undefined, and a trap in wasm: UBSan found it).
    const Json& a = meta["at"];
    const bool fits = a.is_number_unsigned()  ? a.get<uint64_t>() <= INT64_MAX
                      : a.is_number_integer() ? true
                                              : a.get<double>() > -9.2e18 && a.get<double>() < 9.2e18;
    if (!fits) {
      return Status::InvalidArgs("commit context: at " + DescribeJson(a) +
                                 " is not a time in milliseconds (a 64-bit integer)");
    }
    out->at = a.get<int64_t>();
    out->has_at = true;
  }
  return Status::OK();
}

// The commit context: {"owner","at"} through the fast reader (a DOM parse of
// those few bytes was a sixth of a one-put commit; its Json object, built
// and read again, 6% of one), anything else (an actor, another shape, bad
// JSON) through the DOM and ContextOf's checks.
Status ParseCommitMeta(const std::string& text, CommitContext* out) {
  if (ParseCommitMetaFast(text, &out->owner, &out->at)) {
    out->has_at = true;
    return Status::OK();
  }
  Json meta;
  ONESTORE_RETURN_IF_ERROR(ParseJsonText(text.empty() ? "{}" : text, "commit context", &meta));
  return ContextOf(meta, out);
}

// Clears a commit's list of ops once the commit is done, keeping its room
// for the next commit (a bulk's is let go): a commit of one put allocated
// it each time (issue 13, the fifteenth step).
struct ClearAfter {
  std::vector<Op>* ops;
  ~ClearAfter() { ClearKeepingRoom(ops, 64); }
};

// OutboxRecord's text, written over *out (whose room it reuses).
void WriteOutboxRecord(int64_t seq, int64_t at, const std::string& owner, const Json* actor,
                       const std::vector<Op>& ops, std::string* out, size_t* ops_at) {
  std::string& record = *out;
  record.clear();
  record.reserve(128 + ops.size() * 96);
  record += "{\"seq\":";
  AppendInt(seq, &record);
  record += ",\"from\":";
  AppendInt(seq - 1, &record);
  record += ",\"at\":";
  AppendInt(at, &record);
  record += ",\"owner\":";
  AppendJsonString(owner, &record);
  if (actor != nullptr) {
    record += ",\"actor\":";
    record += actor->dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  record += ",\"ops\":";
  if (ops_at != nullptr) *ops_at = record.size();
  AppendOpsJson(ops, &record);
  record.push_back('}');
}

}  // namespace

std::string OutboxRecord(int64_t seq, int64_t at, const std::string& owner, const Json* actor,
                         const std::vector<Op>& ops, size_t* ops_at) {
  std::string record;
  WriteOutboxRecord(seq, at, owner, actor, ops, &record, ops_at);
  return record;
}

ONESTORE_COLD Status ParseOpenOptions(const std::string& json, OpenOptions* out) {
  Json j;
  ONESTORE_RETURN_IF_ERROR(ParseJsonText(json, "openStore options", &j));
  if (!j.is_object()) return Status::InvalidArgs("openStore: options must be an object");
  OpenOptions o;
  auto str = [&](const char* k, std::string* dst) -> Status {
    auto it = j.find(k);
    if (it == j.end() || it->is_null()) return Status::OK();
    if (!it->is_string())
      return Status::InvalidArgs(std::string("openStore: ") + k + " must be a string, got " +
                                 it->dump());
    *dst = it->get<std::string>();
    return Status::OK();
  };
  ONESTORE_RETURN_IF_ERROR(str("backend", &o.backend));
  ONESTORE_RETURN_IF_ERROR(str("path", &o.path));
  ONESTORE_RETURN_IF_ERROR(str("id", &o.id));
  std::string durability = "full";
  ONESTORE_RETURN_IF_ERROR(str("durability", &durability));
  if (durability != "full" && durability != "relaxed") {
    return Status::InvalidArgs("openStore: durability \"" + durability +
                               "\" is not \"full\" or \"relaxed\"");
  }
  o.durability_full = durability == "full";
  auto timeout = j.find("lockTimeout");
  if (timeout != j.end() && !timeout->is_null()) {
    if (!timeout->is_number_integer() || timeout->get<int64_t>() < 0 ||
        timeout->get<int64_t>() > 3600000) {
      return Status::InvalidArgs("openStore: lockTimeout " + DescribeJson(*timeout) +
                                 " is not a number of milliseconds (0 to 3600000)");
    }
    o.lock_timeout_ms = timeout->get<int64_t>();
  }
  if (o.path.find('\0') != std::string::npos) {
    // The file system takes a C string: "a\0b.sqlite" would open "a".
    std::string shown;
    AppendJsonString(o.path, &shown);
    return Status::InvalidArgs("openStore: the path " + shown +
                               " contains NUL, which no file name can hold");
  }
  auto adopt = j.find("adoptForeign");
  if (adopt != j.end() && !adopt->is_null()) {
    if (!adopt->is_boolean()) {
      return Status::InvalidArgs("openStore: adoptForeign must be true or false, got " +
                                 DescribeJson(*adopt));
    }
    o.adopt_foreign = adopt->get<bool>();
  }
  auto hold = j.find("holdLock");
  if (hold != j.end() && !hold->is_null()) {
    if (!hold->is_boolean()) {
      return Status::InvalidArgs("openStore: holdLock must be true or false, got " +
                                 DescribeJson(*hold));
    }
    o.hold_lock = hold->get<bool>();
  }
  auto cache = j.find("vectorCache");
  if (cache != j.end() && !cache->is_null()) {
    if (!cache->is_number_integer() || cache->get<int64_t>() < 0) {
      return Status::InvalidArgs("openStore: vectorCache " + DescribeJson(*cache) +
                                 " is not a number of bytes (0 turns the vector cache off)");
    }
    o.vector_cache_bytes = cache->get<int64_t>();
  }
  if (o.backend == "sqlite" && o.path.empty()) {
    return Status::InvalidArgs(
        "openStore: the sqlite backend needs a path (a file, or \":memory:\")");
  }
  if (o.backend == "opfs" && o.path.empty()) {
    return Status::InvalidArgs("openStore: the opfs backend needs the path of its files");
  }
  auto replica = j.find("replica");
  if (replica != j.end() && !replica->is_null()) {
    if (!replica->is_boolean()) {
      return Status::InvalidArgs("openStore: replica " + DescribeJson(*replica) +
                                 " is not true or false");
    }
    o.replica = replica->get<bool>();
  }
  auto handle = j.find("handle");
  if (handle != j.end() && !handle->is_null()) {
    if (!handle->is_number_integer() || handle->get<int64_t>() < 0) {
      return Status::InvalidArgs("openStore: handle " + DescribeJson(*handle) +
                                 " is not a storage handle");
    }
    o.handle = handle->get<int64_t>();
  }
  if (o.backend == "durable" && o.handle < 0) {
    return Status::InvalidArgs(
        "openStore: the durable backend needs the Durable Object's storage (ctx.storage)");
  }
  if (o.backend != "memory" && o.backend != "sqlite" && o.backend != "opfs" &&
      o.backend != "durable") {
    return Status::InvalidArgs("openStore: unknown backend \"" + o.backend +
                               "\" (memory, sqlite, opfs or durable)");
  }
  *out = std::move(o);
  return Status::OK();
}

ONESTORE_COLD int64_t DefaultVectorCacheBytes(const OpenOptions& options) {
  constexpr int64_t kMiB = 1 << 20;
  if (options.backend == "opfs") return 256 * kMiB;
  if (options.backend == "durable") return 32 * kMiB;
  if (options.backend == "sqlite" && (options.hold_lock || options.path == ":memory:")) {
    return 256 * kMiB;
  }
  return 0;
}

ONESTORE_COLD Store::~Store() { Close(); }

ONESTORE_COLD Status Store::Open(const OpenOptions& options, std::unique_ptr<Store>* out) {
  std::unique_ptr<Backend> backend;
  if (options.backend == "memory") {
    backend = NewMemoryBackend();
  } else if (options.backend == "sqlite" || options.backend == "opfs") {
    // opfs: SQLite over files only this owner reaches (the JS runtime holds
    // the store's Web Lock and OPFS handles), so it keeps its lock for life.
    // A sqlite file does too when its runtime hands it over on request
    // (hold_lock, Node), and is left in rollback mode when closed.
    SqliteOptions so;
    so.path = options.path;
    const bool file_held =
        options.backend == "sqlite" && options.hold_lock && options.path != ":memory:";
    so.exclusive = options.backend == "opfs" || file_held;
    so.plain_when_closed = file_held;
    so.durability_full = options.durability_full;
    so.lock_timeout_ms = options.lock_timeout_ms;
    so.adopt_foreign = options.adopt_foreign;
    so.small_page_cache = options.small_page_cache;
    backend = NewSqliteBackend(so);
  } else if (options.backend == "durable") {
    return Status::InvalidArgs(
        "openStore: the durable backend opens only inside a Durable Object (workerd), where the "
        "package's workerd runtime gives it ctx.storage");
  } else {
    return Status::InvalidArgs("openStore: unknown backend \"" + options.backend + "\"");
  }
  ONESTORE_RETURN_IF_ERROR(OpenWith(std::move(backend), options.id, out, options.replica));
  (*out)->SetVectorCacheBudget(options.vector_cache_bytes >= 0 ? options.vector_cache_bytes
                                                               : DefaultVectorCacheBytes(options));
  return Status::OK();
}

ONESTORE_COLD Status Store::OpenWith(std::unique_ptr<Backend> backend, const std::string& id,
                                     std::unique_ptr<Store>* out, bool replica) {
  std::unique_ptr<Store> s(new Store());
  BackendState state;
  ONESTORE_RETURN_IF_ERROR(backend->Open(id.empty() ? NewId() : id, &state));
  Status role_st = CheckRole(backend.get(), state.head, replica);
  if (!role_st.ok()) {
    backend->Close();
    return role_st;
  }
  s->replica_ = replica;
  std::string session;
  Status note_st = backend->ReadNote(kSessionNote, &session);
  if (note_st.ok()) note_st = backend->ReadNote(kOriginNote, &s->origin_);
  if (!note_st.ok()) {
    backend->Close();
    return note_st;
  }
  if (!session.empty()) state.id = session;
  for (size_t i = 0; i < state.tables.size(); ++i) {
    auto t = std::make_shared<TableSchema>();
    Status st = ParseTableSchema(state.tables[i], "stored table " + std::to_string(i), t.get(),
                                 /*stored=*/true);
    if (!st.ok()) {
      backend->Close();
      return Status::StorageFailed("the store holds a table record this code cannot read: " +
                                   st.message());
    }
    s->catalog_.Put(std::move(t));
  }
  s->backend_ = std::move(backend);
  s->id_ = state.id;
  s->head_ = state.head;
  *out = std::move(s);
  return Status::OK();
}

Status Store::CheckUsable(bool writing) const {
  if (closed_) return Status::Closed("the store is closed; open it again with openStore");
  if (!stopped_.ok()) {
    if (stopped_.code() == Code::kFenced && !writing) return Status::OK();
    return stopped_;
  }
  return Status::OK();
}

Status Store::CheckOwnerWrite(const char* what) const {
  if (!replica_) return Status::OK();
  return Status::InvalidArgs(std::string(what) +
                             ": a replica takes no owner writes; it changes only by "
                             "replica.applyBatch(batch)");
}

namespace {

std::string Quoted(const std::string& s) { return DescribeJson(Json(s)); }

// Why `have` (the stored table after its migrations) is not what `want`
// declares, or "" when their columns and key match (by name: an added
// column comes last in the store, wherever the declaration lists it).
ONESTORE_COLD std::string ColumnDifference(const TableSchema& have, const TableSchema& want) {
  for (const Column& c : want.columns) {
    const int pos = have.ColumnIndex(c.name);
    if (pos < 0) return "it declares column " + Quoted(c.name) + ", which the stored table has not";
    const Column& h = have.columns[pos];
    if (h.type != c.type) {
      return "column " + Quoted(c.name) + " is " + TypeName(h.type) + " in the store and " +
             TypeName(c.type) + " in the declaration";
    }
    if (h.optional != c.optional) {
      return "column " + Quoted(c.name) + (c.optional ? " is" : " is not") +
             " optional in the declaration, unlike the store";
    }
    if (h.has_default != c.has_default || h.def != c.def) {
      return "column " + Quoted(c.name) + " has another default in the declaration";
    }
  }
  for (const Column& c : have.columns) {
    if (want.ColumnIndex(c.name) < 0) {
      return "the stored table has column " + Quoted(c.name) + ", which the declaration has not";
    }
  }
  bool same_key = have.key.size() == want.key.size();
  for (size_t i = 0; same_key && i < want.key.size(); ++i) {
    same_key = have.columns[have.key[i]].name == want.columns[want.key[i]].name;
  }
  return same_key ? "" : "its key differs from the stored table's";
}

// A migration's `update` ({col: expr}): one updateWhere of every row, checked
// by Declare against the table as the alters before it leave it.
ONESTORE_COLD Json UpdateEveryRow(const std::string& table, const Json& set) {
  Json op = Json::object();
  op["op"] = "update";
  op["table"] = table;
  op["where"] = nullptr;
  op["set"] = set;
  return op;
}

// The column names of an index (the key suffix included).
ONESTORE_COLD std::vector<std::string> IndexColumnNames(const TableSchema& t, const Index& ix) {
  std::vector<std::string> names;
  for (int c : ix.columns) names.push_back(t.columns[c].name);
  return names;
}

}  // namespace

ONESTORE_COLD Status Store::Declare(const std::string& table_json, std::string* records) {
  ONESTORE_RETURN_IF_ERROR(CheckUsable(false));
  ONESTORE_RETURN_IF_ERROR(CheckOwnerWrite("table"));
  Json j;
  ONESTORE_RETURN_IF_ERROR(ParseJsonText(table_json, "table", &j));
  // The declaration may carry its migrations ({"4":{"alter":{..}}, ..}).
  Json migrations = Json::object();
  if (j.is_object() && j.contains("migrations")) {
    migrations = j["migrations"];
    j.erase("migrations");
    if (!migrations.is_object()) {
      return Status::InvalidArgs("table.migrations: must be an object of versions, got " +
                                 DescribeJson(migrations));
    }
  }
  TableSchema t;
  ONESTORE_RETURN_IF_ERROR(ParseTableSchema(j, "table", &t));
  ONESTORE_RETURN_IF_ERROR(TableResolver(&catalog_).CheckCaseTwin(t.name, "table"));
  std::map<int64_t, const Json*> steps;  // by version
  for (auto it = migrations.begin(); it != migrations.end(); ++it) {
    const std::string w = "table.migrations." + it.key();
    int64_t v = 0;
    bool number = !it.key().empty() && it.key().size() < 19 &&
                  it.key().find_first_not_of("0123456789") == std::string::npos;
    if (number) v = std::stoll(it.key());
    if (!number || v < 2 || v > t.version) {
      return Status::InvalidArgs(w + ": a migration is keyed by the version it makes, from 2 to "
                                 "the declared version " + std::to_string(t.version));
    }
    if (!it.value().is_object()) {
      return Status::InvalidArgs(w + ": a migration is an object { alter?, update?, rows? }, got " +
                                 DescribeJson(it.value()));
    }
    steps[v] = &it.value();
  }
  records->clear();
  const std::shared_ptr<const TableSchema> stored = catalog_.FindShared(t.name);
  if (stored == nullptr) {
    *records = "[" + t.ToJson().dump() + "]";
    return Status::OK();
  }
  if (stored->version > t.version) {
    return Status::SchemaNewer("table \"" + t.name + "\" is stored at version " +
                               std::to_string(stored->version) + ", newer than version " +
                               std::to_string(t.version) + " that this code declares");
  }
  if (stored->version == t.version && stored->SameShape(t)) return Status::OK();
  Json out = Json::array();
  std::shared_ptr<const TableSchema> cur = stored;
  for (const auto& [v, step] : steps) {
    if (v <= stored->version) continue;  // made before
    auto alter = step->find("alter");
    if (alter != step->end()) {
      const std::string w = "table.migrations." + std::to_string(v) + ".alter";
      if (!alter->is_object()) {
        return Status::InvalidArgs(w + ": an alter is { drop, rename, add }, got " +
                                   DescribeJson(*alter));
      }
      Json record = Json::object();
      record["op"] = "alter";
      record["table"] = t.name;
      record["version"] = v;
      for (auto it = alter->begin(); it != alter->end(); ++it) {
        if (record.contains(it.key())) {  // op, table, version: not the alter's to say
          return Status::InvalidArgs(w + "." + it.key() + ": an alter takes drop, rename and add");
        }
        record[it.key()] = it.value();
      }
      auto after = std::make_shared<TableSchema>();
      SchemaChange change;
      ONESTORE_RETURN_IF_ERROR(ParseAlter(record, cur, w, after.get(), &change));
      out.push_back(AlterJson(*after, change));
      cur = after;
    }
    auto update = step->find("update");
    if (update != step->end()) {
      // Checked here, against the table as the alters before it leave it, so
      // that a bad column or expression names its step.
      Json op = UpdateEveryRow(t.name, *update);
      TableResolver tables(&catalog_);
      tables.Declare(cur);
      Op parsed;
      ONESTORE_RETURN_IF_ERROR(
          ParseOp(op, &tables, "table.migrations." + std::to_string(v) + ".update", &parsed));
      out.push_back(std::move(op));
    }
    // The rows of this step are rewritten by the caller (js/migrate.js):
    // a marker where its ops go, never committed.
    auto rows = step->find("rows");
    if (rows != step->end() && *rows == true) {
      Json marker = Json::object();
      marker["op"] = "rows";
      marker["table"] = t.name;
      marker["version"] = v;
      out.push_back(marker);
    }
  }
  const std::string why = ColumnDifference(*cur, t);
  if (!why.empty()) {
    if (stored->version == t.version) {
      return Status::InvalidArgs("table \"" + t.name + "\" declares other columns or another key "
                                 "than the stored table at the same version " +
                                 std::to_string(t.version) + " (" + why +
                                 "); raise its version and add a migration (alter)");
    }
    return Status::InvalidArgs("table \"" + t.name + "\" version " + std::to_string(t.version) +
                               " does not match the stored version " +
                               std::to_string(stored->version) +
                               (out.empty() ? std::string(" and no migration leads there")
                                            : std::string(" after its migrations")) +
                               ": " + why + "; a column change needs migrations: { " +
                               std::to_string(t.version) + ": { alter: { add, rename, drop } } }");
  }
  // Indexes: drop those the declaration has not (or has otherwise), create
  // the ones the table has not.
  Json drop = Json::array();
  Json create = Json::object();
  for (const Index& ix : cur->indexes) {
    auto w = std::find_if(t.indexes.begin(), t.indexes.end(),
                          [&](const Index& d) { return d.name == ix.name; });
    if (w == t.indexes.end() || IndexColumnNames(t, *w) != IndexColumnNames(*cur, ix))
      drop.push_back(ix.name);
  }
  for (const Index& ix : t.indexes) {
    auto h = std::find_if(cur->indexes.begin(), cur->indexes.end(),
                          [&](const Index& d) { return d.name == ix.name; });
    if (h == cur->indexes.end() || IndexColumnNames(t, ix) != IndexColumnNames(*cur, *h)) {
      Json names = Json::array();
      for (size_t i = 0; i < ix.declared; ++i) names.push_back(t.columns[ix.columns[i]].name);
      create[ix.name] = names;
    }
  }
  if (!drop.empty() || !create.empty()) {
    Json record = Json::object();
    record["op"] = "index";
    record["table"] = t.name;
    record["version"] = t.version;
    if (!drop.empty()) record["drop"] = drop;
    if (!create.empty()) record["create"] = create;
    auto after = std::make_shared<TableSchema>();
    SchemaChange change;
    ONESTORE_RETURN_IF_ERROR(ParseIndexChange(record, cur, "table.indexes", after.get(), &change));
    out.push_back(IndexChangeJson(*after, change));
    cur = after;
  }
  if (cur->version < t.version) {
    // Only the version moves (or the last alter was below it): a table
    // record of the stored shape at the declared version.
    TableSchema bumped = *cur;
    bumped.version = t.version;
    out.push_back(bumped.ToJson());
  }
  // Nothing to commit, yet not SameShape: the columns or indexes are
  // declared in another order than stored. Said apart from "" ("[]"), so
  // that the caller decodes rows by the stored order (js/owner.js, sameAt).
  *records = out.dump();
  return Status::OK();
}

Status Store::ParseCommit(std::string_view ops_json, const std::string* meta_json,
                          CommitContext* context, std::vector<Op>* ops) {
  TableResolver tables(&catalog_);
  Json j;
  const bool binary = IsBinaryOps(ops_json);
  if (binary) ONESTORE_RETURN_IF_ERROR(ParseBinaryOps(ops_json, &tables, ops));
  bool fast = binary || ParsePutsFast(ops_json, &tables, ops);
  if (!fast) ONESTORE_RETURN_IF_ERROR(ParseJsonText(ops_json, "ops", &j));
  if (meta_json != nullptr) ONESTORE_RETURN_IF_ERROR(ParseCommitMeta(*meta_json, context));
  if (!fast) ONESTORE_RETURN_IF_ERROR(ParseOps(j, &tables, ops));
  for (size_t i = 0; i < ops->size(); ++i) {
    const Op& op = (*ops)[i];
    if (op.kind != OpKind::kPut) continue;
    ONESTORE_RETURN_IF_ERROR(CheckKeySize(*op.table, op.row, i));
  }
  return Status::OK();
}

Status Store::Commit(const std::string& ops_json, const std::string& meta_json,
                     std::string* result) {
  ONESTORE_RETURN_IF_ERROR(CheckUsable(true));
  ONESTORE_RETURN_IF_ERROR(CheckOwnerWrite("commit"));
  std::vector<Op>& ops = commit_ops_;
  ClearAfter clear_after{&ops};
  CommitContext context;
  ONESTORE_RETURN_IF_ERROR(ParseCommit(ops_json, &meta_json, &context, &ops));
  return CommitOps(&ops, context, result);
}

int Store::OwnerId(const std::string& name) {
  auto it = owner_ids_.find(name);
  if (it != owner_ids_.end()) return it->second;
  owner_names_.push_back(name);
  const int id = static_cast<int>(owner_names_.size());
  owner_ids_.emplace(name, id);
  return id;
}

Status Store::ContextAs(int owner, double at, const std::string** name, int64_t* at_ms) const {
  if (owner < 1 || static_cast<size_t>(owner) > owner_names_.size()) {
    return Status::InvalidArgs("commit: owner " + std::to_string(owner) +
                               " is not an owner number of this store (Core.ownerId gives them)");
  }
  // Milliseconds as an int64, as ContextOf takes them from the text.
  if (!(at > -9.2e18 && at < 9.2e18) || at != static_cast<double>(static_cast<int64_t>(at))) {
    const std::string shown = at != at ? std::string("NaN") : DescribeJson(Json(at));
    return Status::InvalidArgs("commit context: at " + shown +
                               " is not a time in milliseconds (a 64-bit integer)");
  }
  *name = &owner_names_[static_cast<size_t>(owner) - 1];
  *at_ms = static_cast<int64_t>(at);
  return Status::OK();
}

Status Store::CommitAs(std::string_view ops_json, int owner, double at, int64_t* seq) {
  ONESTORE_RETURN_IF_ERROR(CheckUsable(true));
  ONESTORE_RETURN_IF_ERROR(CheckOwnerWrite("commit"));
  const std::string* name = nullptr;
  int64_t at_ms = 0;
  ONESTORE_RETURN_IF_ERROR(ContextAs(owner, at, &name, &at_ms));
  std::vector<Op>& ops = commit_ops_;
  ClearAfter clear_after{&ops};
  ONESTORE_RETURN_IF_ERROR(ParseCommit(ops_json, nullptr, nullptr, &ops));
  ONESTORE_RETURN_IF_ERROR(CommitOps(&ops, *name, at_ms, nullptr, nullptr));
  *seq = head_;
  return Status::OK();
}

ONESTORE_COLD Status Store::CommitParsed(std::vector<Op>* ops, const Json& meta,
                                         std::string* result) {
  CommitContext context;
  ONESTORE_RETURN_IF_ERROR(ContextOf(meta, &context));
  return CommitOps(ops, context, result);
}

Status Store::CommitOps(std::vector<Op>* ops, const CommitContext& context, std::string* result) {
  return CommitOps(ops, context.owner, context.has_at ? context.at : NowMs(),
                   context.actor.is_null() ? nullptr : &context.actor, result);
}

Status Store::CommitOps(std::vector<Op>* ops, const std::string& owner, int64_t at,
                        const Json* actor, std::string* result) {

  // Until COMMIT, a failure leaves a known outcome (nothing written), so only
  // fencing stops the store here; a failed COMMIT stops it below.
  Status st = backend_->Begin();
  if (!st.ok()) {
    if (st.code() == Code::kFenced) stopped_ = st;
    return st;
  }
  // Tables declared by this commit, visible to its later ops' Apply calls.
  std::map<std::string, const TableSchema*, std::less<>> declared;
  const int64_t seq = head_ + 1;
  // Document ops: expanded into puts on the store's own tables (created by
  // the first commit that has one).
  std::unique_ptr<DocWriter> docs;
  bool doc_tables_created = false;
  // _restores, made by the first restore that writes it (Snapshots::RestoreFrom).
  bool restores_created = false;
  // A commit of puts and declarations (a bulk load's) has an outbox record
  // that no Apply changes (only a bulk op's count and a document op's
  // expansion depend on it): written first, it lets the backend take each
  // put's row instead of copying it, unless the vector cache reads the row
  // once committed.
  // The record's room: the spare one (the last-but-one record, when the
  // backend kept no share of it: the sqlite backends write it and let go),
  // or a new one (the memory backend's outbox holds each record).
  std::shared_ptr<std::string> record = std::move(spare_record_);
  if (record == nullptr) record = std::make_shared<std::string>();
  size_t ops_at = 0;
  const bool record_first = std::all_of(ops->begin(), ops->end(), [](const Op& op) {
    return op.kind == OpKind::kPut || op.declares();
  });
  if (record_first) {
    WriteOutboxRecord(seq, at, owner, actor, *ops, record.get(), &ops_at);
    for (Op& op : *ops) {
      op.row_spent = op.kind == OpKind::kPut && !vector_cache_.Holds(op.table->name);
    }
  }
  for (Op& op : *ops) {
    if (op.kind == OpKind::kRestore) continue;  // a restore's marker writes nothing
    if (op.kind == OpKind::kDocument) {
      if (!docs) {
        st = EnsureDocumentTables(backend_.get(), catalog_, &doc_tables_created);
        if (st.ok())
          docs = std::make_unique<DocWriter>(backend_.get(), doc_tables_created, seq, at, actor);
      }
      std::vector<Op> writes;
      if (st.ok())
        st = docs->Apply(op.doc.get(), "ops[" + std::to_string(&op - ops->data()) + "]", &writes);
      for (size_t w = 0; st.ok() && w < writes.size(); ++w)
        st = backend_->Apply(&writes[w], nullptr);
      if (!st.ok()) {
        backend_->Rollback();
        return st;
      }
      continue;
    }
    const TableSchema* previous = nullptr;
    if (op.kind == OpKind::kAlter || op.kind == OpKind::kIndex) previous = op.change->before.get();
    if (op.kind == OpKind::kTable) {
      auto d = declared.find(op.table->name);
      previous = d != declared.end() ? d->second : catalog_.Find(op.table->name);
      if (previous != nullptr && previous->version > op.table->version) {
        backend_->Rollback();
        return Status::SchemaNewer("table \"" + op.table->name + "\" is stored at a newer version");
      }
    }
    // A pointer compare, not a name's: this loop is every commit's, and only
    // Snapshots::RestoreFrom puts RestoresTable()'s own schema in an op.
    if (op.table == RestoresTable() && !restores_created) {
      st = EnsureRestoresTable(backend_.get(), catalog_, &restores_created);
    }
    if (st.ok()) st = backend_->Apply(&op, previous);
    if (!st.ok()) {
      backend_->Rollback();
      return st;
    }
    if (op.declares()) declared[op.table->name] = op.table.get();
    if (op.is_bulk() && op.count < 0) op.count = 0;
  }
  if (!record_first) WriteOutboxRecord(seq, at, owner, actor, *ops, record.get(), &ops_at);
  // Shared with the backend (the memory backend keeps it without a copy)
  // and kept for LastOps.
  st = backend_->AppendOutboxShared(seq, record);
  if (!st.ok()) {
    backend_->Rollback();
    return st;
  }
  st = backend_->Commit();
  if (!st.ok()) {
    // Nobody knows whether the commit landed: nothing more is written.
    // (A rollback is still asked for, so that the backend holds no open
    // transaction; reopening the store finds what really landed.)
    backend_->Rollback();
    stopped_ = Status::StorageFailed("the store stopped: COMMIT failed (" + st.message() + ")");
    vector_cache_.DropAll();
    return stopped_;
  }
  head_ = seq;
  for (const Op& op : *ops) {
    if (op.declares()) catalog_.Put(op.table);
  }
  vector_cache_.ApplyCommitted(*ops, seq, [this](const TableSchema& t, const Key& key,
                                                 std::optional<Row>* row) {
    return backend_->Get(t, key, row);
  });
  if (doc_tables_created) {
    catalog_.Put(DocumentsTable());
    catalog_.Put(DeltasTable());
  }
  if (restores_created) catalog_.Put(RestoresTable());
  // The last record is the next commit's room when nothing else holds it
  // and it is no bulk's.
  if (last_record_ != nullptr && last_record_.use_count() == 1 &&
      last_record_->capacity() <= kMaxSpareRecord) {
    spare_record_ = std::move(last_record_);
  }
  last_record_ = std::move(record);
  last_ops_at_ = ops_at;
  if (result == nullptr) return Status::OK();  // CommitAs: the seq is the head
  result->clear();
  *result += "{\"seq\":";
  AppendInt(seq, result);
  *result += ",\"at\":";
  AppendInt(at, result);
  *result += ",\"counts\":[";
  for (size_t i = 0; i < ops->size(); ++i) {
    if (i) result->push_back(',');
    const Op& op = (*ops)[i];
    AppendInt(op.count >= 0 ? op.count : (op.declares() ? 0 : 1), result);
  }
  *result += "]}";
  return Status::OK();
}

std::string Store::LastOps() const {
  if (last_record_ == nullptr || last_record_->empty()) return "[]";
  // The record ends with the ops array and the record's closing brace.
  const std::string& r = *last_record_;
  return r.substr(last_ops_at_, r.size() - last_ops_at_ - 1);
}

int Store::TxOpen() {
  int id = next_tx_++;
  txs_[id];
  return id;
}

void Store::TxClose(int tx) { txs_.erase(tx); }

Status Store::StageInto(Tx* tx, std::string_view ops_json) {
  if (ops_json.empty() || ops_json == "[]") return Status::OK();
  TableResolver tables(&catalog_);
  for (const Op& op : tx->ops) {
    if (op.declares()) tables.Declare(op.table);
  }
  if (IsBinaryOps(ops_json)) {
    if (ops_json.size() == 1) return Status::OK();  // no op since the last staging
    return ParseBinaryOps(ops_json, &tables, &tx->ops);
  }
  if (ParsePutsFast(ops_json, &tables, &tx->ops)) return Status::OK();
  Json j;
  ONESTORE_RETURN_IF_ERROR(ParseJsonText(ops_json, "ops", &j));
  size_t first = tx->ops.size();
  Status st = ParseOps(j, &tables, &tx->ops);
  if (!st.ok()) {
    tx->ops.resize(first);
    return st;
  }
  return Status::OK();
}

Status Store::StageWithOverlay(Tx* tx, const std::string& ops_json) {
  size_t first = tx->ops.size();
  ONESTORE_RETURN_IF_ERROR(StageInto(tx, ops_json));
  // Bring the overlay up to date with the newly staged ops.
  for (size_t i = first; i < tx->ops.size(); ++i) {
    const Op& op = tx->ops[i];
    // Documents are read through documents.load, not tx.get.
    if (op.kind == OpKind::kDocument) continue;
    // A table's new schema (an alter above all): its stored rows are in the
    // old shape, so like after a bulk op the overlay no longer knows them.
    if (op.declares()) {
      if (op.kind == OpKind::kAlter) tx->overlay[op.table->name].bulk = true;
      continue;
    }
    TableOverlay& ov = tx->overlay[op.table->name];
    // After a bulk op on the table, tx.get on it throws read_after_bulk and
    // the overlay no longer says what its rows are: a later op of the table
    // is only checked (done) and waits for the commit, which applies it to
    // the rows as the bulk op left them. Evaluating it here against the
    // stored row would answer for a state that never exists.
    if (ov.bulk) continue;
    switch (op.kind) {
      case OpKind::kPut:
        ov.rows[KeyOf(*op.table, op.row)] = op.row;
        break;
      case OpKind::kDelete:
        ov.rows[op.key] = std::nullopt;
        break;
      case OpKind::kUpdate: {
        std::optional<Row> base;
        auto hit = ov.rows.find(op.key);
        if (hit != ov.rows.end()) {
          base = hit->second;
        } else {
          ONESTORE_RETURN_IF_ERROR(backend_->Get(*op.table, op.key, &base));
        }
        if (base) {
          ONESTORE_RETURN_IF_ERROR(ApplySet(op.set, *op.table, &*base));
          ov.rows[op.key] = std::move(base);
        }
        break;
      }
      default:
        ov.bulk = true;
    }
  }
  return Status::OK();
}

Status Store::TxGet(int tx_id, const std::string& ops_json, const std::string& table,
                    const std::string& key_json, std::string* row) {
  ONESTORE_RETURN_IF_ERROR(CheckUsable(false));
  auto it = txs_.find(tx_id);
  if (it == txs_.end())
    return Status::InvalidArgs("transaction " + std::to_string(tx_id) + " is not open");
  Tx* tx = &it->second;
  ONESTORE_RETURN_IF_ERROR(StageWithOverlay(tx, ops_json));
  std::shared_ptr<const TableSchema> t;
  TableResolver tables(&catalog_);
  ONESTORE_RETURN_IF_ERROR(tables.Lookup(table, "tx.get", &t));
  Key key;
  ONESTORE_RETURN_IF_ERROR(ReadKey(key_json, *t, "tx.get key", &key));
  auto ov = tx->overlay.find(table);
  std::optional<Row> found;
  if (ov != tx->overlay.end()) {
    if (ov->second.bulk) {
      return Status::ReadAfterBulk(
          "tx.get on table \"" + table +
          "\" after an updateWhere or deleteWhere on it in this transaction; "
          "read it after the commit, or with tx.page (committed state)");
    }
    auto hit = ov->second.rows.find(key);
    if (hit != ov->second.rows.end()) {
      EncodeRowOrNull(hit->second, row);
      return Status::OK();
    }
  }
  ONESTORE_RETURN_IF_ERROR(backend_->Get(*t, key, &found));
  EncodeRowOrNull(found, row);
  return Status::OK();
}

Status Store::TxStage(int tx_id, const std::string& ops_json) {
  ONESTORE_RETURN_IF_ERROR(CheckUsable(true));
  ONESTORE_RETURN_IF_ERROR(CheckOwnerWrite("tx"));
  auto it = txs_.find(tx_id);
  if (it == txs_.end())
    return Status::InvalidArgs("transaction " + std::to_string(tx_id) + " is not open");
  return StageWithOverlay(&it->second, ops_json);
}

Status Store::TxCommit(int tx_id, const std::string& ops_json, const std::string& meta_json,
                       std::string* result) {
  auto it = txs_.find(tx_id);
  if (it == txs_.end())
    return Status::InvalidArgs("transaction " + std::to_string(tx_id) + " is not open");
  Status st = CheckUsable(true);
  if (st.ok()) st = CheckOwnerWrite("tx");
  if (st.ok()) st = StageInto(&it->second, ops_json);
  CommitContext context;
  if (st.ok()) st = ParseCommitMeta(meta_json, &context);
  if (st.ok()) st = CommitOps(&it->second.ops, context, result);
  txs_.erase(tx_id);
  return st;
}

Status Store::TxCommitAs(int tx_id, std::string_view ops_json, int owner, double at,
                         int64_t* seq) {
  auto it = txs_.find(tx_id);
  if (it == txs_.end())
    return Status::InvalidArgs("transaction " + std::to_string(tx_id) + " is not open");
  const std::string* name = nullptr;
  int64_t at_ms = 0;
  Status st = CheckUsable(true);
  if (st.ok()) st = CheckOwnerWrite("tx");
  if (st.ok()) st = StageInto(&it->second, ops_json);
  if (st.ok()) st = ContextAs(owner, at, &name, &at_ms);
  if (st.ok()) st = CommitOps(&it->second.ops, *name, at_ms, nullptr, nullptr);
  if (st.ok()) *seq = head_;
  txs_.erase(tx_id);
  return st;
}

Status Store::Get(const std::string& table, const std::string& key_json, std::string* row) {
  ONESTORE_RETURN_IF_ERROR(CheckUsable(false));
  const TableSchema* t;
  ONESTORE_RETURN_IF_ERROR(catalog_.Lookup(table, "get", &t));
  Key key;
  ONESTORE_RETURN_IF_ERROR(ReadKey(key_json, *t, "get key", &key));
  std::optional<Row> found;
  ONESTORE_RETURN_IF_ERROR(backend_->Get(*t, key, &found));
  EncodeRowOrNull(found, row);
  return Status::OK();
}

Status Store::Page(const std::string& table, const std::string& query_json, int64_t limit,
                   const std::string& cursor, std::string* page) {
  ONESTORE_RETURN_IF_ERROR(CheckUsable(false));
  const TableSchema* t;
  ONESTORE_RETURN_IF_ERROR(catalog_.Lookup(table, "page", &t));
  if (limit < 1 || limit > 100000) {
    return Status::InvalidArgs("page: limit " + std::to_string(limit) +
                               " is not between 1 and 100000");
  }
  const Query* parsed;
  ONESTORE_RETURN_IF_ERROR(ParsedQuery(table, t, query_json, &parsed));
  const Query& q = *parsed;
  std::vector<Value> after;
  if (!cursor.empty()) ONESTORE_RETURN_IF_ERROR(DecodeCursor(q, cursor, &after));
  std::vector<Row> rows;
  // A host that keeps the rows (a Durable Object's, HoldNextPage) hands
  // them to the package itself: the answer is {"held":n,"next"?}.
  const bool held = backend_->HoldNextPage(*t);
  // A page cut at kReadBytes has its `next` and no peek.
  PageBytes bytes;
  ONESTORE_RETURN_IF_ERROR(backend_->Page(q, cursor.empty() ? nullptr : &after, limit + 1, &rows,
                                          held ? nullptr : &bytes));
  const bool extra_row = static_cast<int64_t>(rows.size()) > limit;
  const bool more = extra_row || bytes.cut;
  // The key of the row after the page, for "peek" (a held page's rows are
  // the host's: it has none).
  std::string peek;
  if (extra_row && !held) {
    const Row& extra = rows[static_cast<size_t>(limit)];
    peek = "[";
    for (size_t i = 0; i < t->key.size(); ++i) {
      if (i) peek.push_back(',');
      extra[t->key[i]].AppendJson(&peek, /*unsafe_int_as_string=*/true);
    }
    peek.push_back(']');
  }
  if (extra_row) rows.resize(limit);
  page->clear();
  if (held) {
    *page += "{\"held\":";
    *page += std::to_string(rows.size());
  } else {
    page->reserve(rows.size() * 64 + 32);
    *page += "{\"rows\":[";
    for (size_t i = 0; i < rows.size(); ++i) {
      if (i) page->push_back(',');
      AppendRowArray(rows[i], page);
    }
    page->push_back(']');
  }
  if (more) {
    *page += ",\"next\":";
    AppendJsonString(EncodeCursor(q, q.OrderValues(rows.back())), page);
  }
  if (!peek.empty()) {
    *page += ",\"peek\":";
    *page += peek;
  }
  page->push_back('}');
  return Status::OK();
}

Status Store::Count(const std::string& table, const std::string& query_json, int64_t* count) {
  ONESTORE_RETURN_IF_ERROR(CheckUsable(false));
  const TableSchema* t;
  ONESTORE_RETURN_IF_ERROR(catalog_.Lookup(table, "count", &t));
  const Query* q;
  ONESTORE_RETURN_IF_ERROR(ParsedQuery(table, t, query_json, &q));
  return backend_->Count(*t, q->where ? &*q->where : nullptr, count);
}

Status Store::ParsedQuery(const std::string& table, const TableSchema* t,
                          const std::string& query_json, const Query** q) {
  std::string key;
  key.reserve(table.size() + 1 + query_json.size());
  key += table;
  key.push_back('\0');  // no table name holds a NUL (CheckTableName)
  key += query_json;
  auto it = queries_.find(key);
  if (it != queries_.end() && it->second.table.get() == t) {
    *q = &it->second.query;
    return Status::OK();
  }
  Json qj;
  ONESTORE_RETURN_IF_ERROR(ParseJsonText(query_json.empty() ? "{}" : query_json, "query", &qj));
  Query parsed;
  ONESTORE_RETURN_IF_ERROR(ParseQuery(qj, *t, "query", &parsed));
  if (it == queries_.end() && queries_.size() >= kMaxCachedQueries) queries_.clear();
  CachedQuery& entry = queries_[key];
  entry.table = catalog_.FindShared(table);  // t itself (the caller looked it up)
  entry.query = std::move(parsed);
  *q = &entry.query;
  return Status::OK();
}

ONESTORE_COLD Status Store::Nearest(const std::string& table, const std::string& request_json,
                      std::string* answer) {
  ONESTORE_RETURN_IF_ERROR(CheckUsable(false));
  const TableSchema* t;
  ONESTORE_RETURN_IF_ERROR(catalog_.Lookup(table, "nearest", &t));
  Json rj;
  ONESTORE_RETURN_IF_ERROR(ParseJsonText(request_json, "nearest", &rj));
  NearestRequest r;
  ONESTORE_RETURN_IF_ERROR(ParseNearest(rj, *t, "nearest(" + table + ")", &r));
  // A fenced store reads on, but another owner may have written since: no cache.
  if (!stopped_.ok()) return RunNearest(backend_.get(), r, answer);
  return RunNearest(backend_.get(), r, answer, &vector_cache_, catalog_.FindShared(table), head_);
}

ONESTORE_COLD Status Store::MintId(const std::string& table, int64_t* id) {
  ONESTORE_RETURN_IF_ERROR(CheckUsable(true));
  ONESTORE_RETURN_IF_ERROR(CheckOwnerWrite("mintId"));
  return MintIdAbove(table, 0, id);
}

ONESTORE_COLD Status Store::TxMintId(int tx_id, const std::string& table, int64_t* id) {
  ONESTORE_RETURN_IF_ERROR(CheckUsable(true));
  ONESTORE_RETURN_IF_ERROR(CheckOwnerWrite("mintId"));
  auto it = txs_.find(tx_id);
  if (it == txs_.end())
    return Status::InvalidArgs("transaction " + std::to_string(tx_id) + " is not open");
  Tx* tx = &it->second;
  // Only puts name new keys: a set cannot change a key (updateWhere refuses
  // it), and a delete frees one that the store may hold again at the commit.
  for (; tx->minted_scan < tx->ops.size(); ++tx->minted_scan) {
    const Op& op = tx->ops[tx->minted_scan];
    if (op.kind != OpKind::kPut || !op.table->HasIntKey()) continue;
    const int64_t k = op.row[op.table->key[0]].int_value();
    int64_t& most = tx->put_max[op.table->name];
    if (most < k) most = k;
  }
  auto most = tx->put_max.find(table);
  return MintIdAbove(table, most == tx->put_max.end() ? 0 : most->second, id);
}

ONESTORE_COLD Status Store::MintIdAbove(const std::string& table, int64_t floor, int64_t* id) {
  if (table == kDocumentsTable && catalog_.Find(kDocumentsTable) == nullptr) {
    // A document id before the first document (tx.documents.create).
    *id = ++minted_[table];
    return Status::OK();
  }
  const TableSchema* t;
  ONESTORE_RETURN_IF_ERROR(catalog_.Lookup(table, "mintId", &t));
  if (!t->HasIntKey()) {
    return Status::InvalidArgs("mintId: table \"" + table +
                               "\" does not have a single int key column");
  }
  int64_t max = 0;
  ONESTORE_RETURN_IF_ERROR(backend_->MaxIntKey(*t, &max));
  int64_t& last = minted_[table];
  if (last < max) last = max;
  if (last < floor) last = floor;
  if (last == INT64_MAX) {
    return Status::Limit("mintId: table \"" + table + "\" already holds or minted id " +
                         std::to_string(last) + ", the largest 64-bit int");
  }
  *id = ++last;
  return Status::OK();
}

namespace {

// Every record the outbox holds is a JSON object: the one its commit wrote,
// or an imported archive's line. A record that is not (empty, NULL or cut:
// what SQLite reads from a store file cut short or overwritten) is reported
// as damage, naming the seq, instead of being handed on as text no reader
// can parse.
ONESTORE_COLD Status DamagedRecord(int64_t seq) {
  return Status::StorageFailed("the outbox record read as seq " + std::to_string(seq) +
                               " is damaged: restore the store from a snapshot or an archive");
}

ONESTORE_COLD Status CheckRecords(const std::vector<OutboxEntry>& entries) {
  for (const OutboxEntry& e : entries) {
    if (e.record.size() < 2 || e.record.front() != '{' || e.record.back() != '}')
      return DamagedRecord(e.seq);
  }
  return Status::OK();
}

}  // namespace

Status Store::ReadOutbox(int64_t after, int64_t limit, std::string* batch) {
  ONESTORE_RETURN_IF_ERROR(CheckUsable(false));
  if (after < 0)
    return Status::InvalidArgs("outbox.read: after " + std::to_string(after) + " is negative");
  if (limit < 1)
    return Status::InvalidArgs("outbox.read: limit " + std::to_string(limit) + " is not positive");
  std::vector<OutboxEntry> entries;
  ONESTORE_RETURN_IF_ERROR(backend_->ReadOutbox(after, limit, &entries));
  ONESTORE_RETURN_IF_ERROR(CheckRecords(entries));
  // No record after `after` below the head: the outbox was trimmed past it
  // (every commit writes one). The batch then starts at the head, so that a
  // reader behind sees the gap (sync/gap), as it does when only a part was
  // trimmed, instead of an empty batch that says it is caught up.
  const int64_t empty_at = after < head_ ? head_ : after;
  int64_t from = entries.empty() ? empty_at : entries.front().seq - 1;
  int64_t to = entries.empty() ? empty_at : entries.back().seq;
  *batch = "{\"from\":" + std::to_string(from) + ",\"to\":" + std::to_string(to) + ",\"commits\":[";
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i) batch->push_back(',');
    *batch += entries[i].record;
  }
  *batch += "]}";
  return Status::OK();
}

Status Store::ReadOutboxEntries(int64_t after, int64_t limit, std::vector<OutboxEntry>* out) {
  ONESTORE_RETURN_IF_ERROR(CheckUsable(false));
  out->clear();
  ONESTORE_RETURN_IF_ERROR(backend_->ReadOutbox(after, limit, out));
  return CheckRecords(*out);
}

ONESTORE_COLD Status Store::TrimOutbox(int64_t up_to, int64_t* removed) {
  ONESTORE_RETURN_IF_ERROR(CheckUsable(true));
  Status st = backend_->TrimOutbox(up_to, removed);
  if (st.code() == Code::kFenced || st.code() == Code::kStorageFailed) stopped_ = st;
  return st;
}

ONESTORE_COLD Status Store::ForEachRow(const TableSchema& t, int64_t page,
                         const std::function<Status(const Row&)>& visit) {
  ONESTORE_RETURN_IF_ERROR(CheckUsable(false));
  Query q;
  q.table = &t;
  for (int k : t.key) q.order.push_back(OrderTerm{k, false});
  std::vector<Row> rows;
  std::vector<Value> after;
  for (bool first = true;; first = false) {
    PageBytes bytes;  // pages cut at kReadBytes too (rows of MBs: a fingerprint, a snapshot)
    ONESTORE_RETURN_IF_ERROR(backend_->Page(q, first ? nullptr : &after, page, &rows, &bytes));
    for (const Row& row : rows) ONESTORE_RETURN_IF_ERROR(visit(row));
    if (static_cast<int64_t>(rows.size()) < page && !bytes.cut) return Status::OK();
    after = q.OrderValues(rows.back());
  }
}

ONESTORE_COLD Status Store::Documents(const std::string& request_json, std::string* answer) {
  ONESTORE_RETURN_IF_ERROR(CheckUsable(false));
  Json request;
  ONESTORE_RETURN_IF_ERROR(ParseJsonText(request_json, "documents request", &request));
  return DocumentsRead(backend_.get(), catalog_.Find(kDocumentsTable) != nullptr,
                       catalog_.Find(kRestoresTable) != nullptr, head_, request, answer);
}

ONESTORE_COLD std::string Store::TablesJson(bool internal) const {
  std::string out = "[";
  bool first = true;
  for (const auto& t : catalog_.All()) {
    if (!internal && t->name.compare(0, 1, "_") == 0) continue;  // the documents' own tables
    if (!first) out.push_back(',');
    first = false;
    out += t->ToJson().dump();
  }
  out += "]";
  return out;
}

ONESTORE_COLD Status Store::Promote() {
  ONESTORE_RETURN_IF_ERROR(CheckUsable(true));
  if (!replica_) return Status::InvalidArgs("promote: this store is not a replica");
  ONESTORE_RETURN_IF_ERROR(backend_->Begin());
  Status st = backend_->WriteNote(kRoleNote, "driver");
  if (st.ok()) st = backend_->Commit();
  if (!st.ok()) {
    backend_->Rollback();
    return st;
  }
  replica_ = false;
  return Status::OK();
}

ONESTORE_COLD Status Store::Split(const std::string& new_id, const std::string& origin_json) {
  ONESTORE_RETURN_IF_ERROR(CheckUsable(true));
  if (replica_) return Status::InvalidArgs("split: a replica never drives a session, so it cannot split");
  if (new_id.empty()) return Status::InvalidArgs("split: the new session id is empty");
  Json origin;
  ONESTORE_RETURN_IF_ERROR(ParseJsonText(origin_json, "split origin", &origin));
  if (!origin.is_object() || origin.size() != 2 || !origin.contains("id") ||
      !origin["id"].is_string() || !origin.contains("seq") ||
      !origin["seq"].is_number_integer() || origin["seq"].get<int64_t>() < 0 ||
      origin["seq"].get<int64_t>() > head_) {
    return Status::InvalidArgs("split: the origin must be {\"id\":s,\"seq\":n} with 0 <= n <= head " +
                               std::to_string(head_) + ", got " + origin_json.substr(0, 80));
  }
  std::string text = origin.dump();
  ONESTORE_RETURN_IF_ERROR(backend_->Begin());
  Status st = backend_->WriteNote(kSessionNote, new_id);
  if (st.ok()) st = backend_->WriteNote(kOriginNote, text);
  if (st.ok()) st = backend_->Commit();
  if (!st.ok()) {
    backend_->Rollback();
    if (st.code() == Code::kFenced) stopped_ = st;
    return st;
  }
  id_ = new_id;
  origin_ = std::move(text);
  return Status::OK();
}

ONESTORE_COLD Status Store::Close() {
  if (closed_) return Status::OK();
  closed_ = true;
  txs_.clear();
  vector_cache_.DropAll();
  Status s = backend_ ? backend_->Close() : Status::OK();
  // A stopped store (storage_failed, fenced) said so on the call that
  // stopped it; what its close cannot release follows from that failure.
  return stopped_.ok() ? s : Status::OK();
}

}  // namespace onestore
