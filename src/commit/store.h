// Store: the commit step over one backend.
//
// One commit queue per store: a commit is checked (ops parsed against the
// catalog), written, numbered with the next seq, and recorded in the outbox
// in the same backend transaction. The caller (the JS binding) runs adoption
// right after Commit returns and before it starts the next commit, so commit
// order, seq order and adoption order are one order.
//
// Every method takes and returns JSON text in the wire format of
// docs/formats.md, so that the binding crosses the JS/wasm boundary once per
// commit and once per page.
#ifndef ONESTORE_COMMIT_STORE_H_
#define ONESTORE_COMMIT_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "backends/backend.h"
#include "onestore/status.h"
#include "query/query.h"
#include "schema/schema.h"
#include "vectors/vector_cache.h"
#include "writes/writes.h"

namespace onestore {

struct OpenOptions {
  std::string backend;  // "memory" | "sqlite" | "opfs" | "durable"
  // sqlite: a file path or ":memory:"; opfs: the database's path in the
  // files object the JS runtime registered (js/files-opfs.js)
  std::string path;
  std::string id;       // the session id for a new store; "" = random
  bool durability_full = true;
  // sqlite: how long a transaction waits for another process's lock on the
  // file before it fails ("database is locked").
  int64_t lock_timeout_ms = 10000;
  // durable: the runtime's number for the Durable Object's storage (the wasm
  // binding builds its connection; Store::Open alone cannot open it).
  int64_t handle = -1;
  // Open as a replica (src/sync/replica.h): no owner writes, batches only.
  bool replica = false;
  // sqlite and opfs: open a SQLite database that holds another
  // application's tables (no onestore system tables) and add the store's
  // tables beside them; without it, such a file is refused (invalid/args).
  bool adopt_foreign = false;
  // sqlite files: the runtime hands the store over when another opener asks
  // (js/loader-node.js: it watches "<path>-lock.want" and closes the core),
  // so SQLite keeps the file's lock for the life of the store and runs a WAL
  // in exclusive mode (SqliteOptions::exclusive, plain_when_closed). Without
  // it (native callers), the lock is taken per transaction.
  bool hold_lock = false;
  // The bytes nearest may keep of vector columns in the core
  // (src/vectors/vector_cache.h); -1: the backend's default
  // (kDefaultVectorCacheBytes), 0: none.
  int64_t vector_cache_bytes = -1;
  // sqlite and opfs: SQLite's own 2 MB page cache instead of 16 MiB
  // (SqliteOptions::small_page_cache; native tests only).
  bool small_page_cache = false;
};

// The default budget of the vector cache by backend: sqlite (a file this
// store holds the lock of, or ":memory:") and opfs 256 MiB, durable 32 MiB
// (a Durable Object has 128 MB in all); memory none (nearest reads its rows
// in place); a sqlite file whose lock is taken per transaction none (another
// process may write it). docs/architecture.md, "The vector cache".
int64_t DefaultVectorCacheBytes(const OpenOptions& options);

// Parses {"backend":..,"path":..,"id":..,"durability":"full"|"relaxed",
// "lockTimeout":ms,"handle":n,"replica":bool,"adoptForeign":bool,
// "holdLock":bool,"vectorCache":bytes}. A path
// with a NUL is refused: the file system would cut it there.
Status ParseOpenOptions(const std::string& json, OpenOptions* out);

// The outbox record of commit `seq` (its from is seq - 1), as
// docs/formats.md writes it: keys in order, compact, the normalized ops with
// their counts. The commit step and replicas (src/sync/replica.cc) both write
// records with it, so a replica keeps the very records its driver wrote.
// `ops_at`, when given, receives the offset of the ops array in the record.
std::string OutboxRecord(int64_t seq, int64_t at, const std::string& owner, const Json* actor,
                         const std::vector<Op>& ops, size_t* ops_at = nullptr);

// Checks an actor {kind, id, for?, via?} (`for` is itself an actor); `where`
// names it in the error.
Status CheckActor(const Json& actor, const std::string& where);

// A commit's context, from its {owner?, at?, actor?}: the owner ("store"
// when not given), its time (the clock's when not given) and its actor
// (null when none).
struct CommitContext {
  std::string owner = "store";
  int64_t at = 0;
  bool has_at = false;
  Json actor;
};

class Store {
 public:
  // Opens a store over a backend made from `options` (memory or sqlite).
  static Status Open(const OpenOptions& options, std::unique_ptr<Store>* out);
  // Opens a store over a given backend (tests use fault-injecting ones).
  // With `replica`, the store is a replica's (src/sync/replica.h): it takes
  // no owner writes, and a new one is marked as a replica in its _meta. A
  // replica's store opened without `replica`, or an owner's store with
  // commits opened with it, is refused (invalid/args): either would fork the
  // session's seqs.
  static Status OpenWith(std::unique_ptr<Backend> backend, const std::string& id,
                         std::unique_ptr<Store>* out, bool replica = false);
  ~Store();

  const std::string& id() const { return id_; }
  int64_t head() const { return head_; }

  // Compares a declared table record with the stored one. Sets *records to
  // "" when they match, "[]" when they differ only in the order of their
  // columns or indexes (nothing to commit, but rows are laid out in the
  // stored order, not the declaration's), or to a JSON array of the
  // records to commit.
  // Fails with schema/newer when the stored version is newer.
  //
  // The declaration may carry "migrations": {"<v>": {"alter"?: {..},
  // "update"?: {col: expr}, "rows"?: true}}. For a stored table of an older
  // version the records are, for each step above it in version order, its
  // alter, its update (one updateWhere of every row) and, for "rows", a
  // marker {"op":"rows","table":t,"version":v} that the caller replaces with
  // the rewritten rows' ops (js/migrate.js); then one index op for the
  // difference of indexes; then a table record when the version still has
  // to move. A stored table that, after the alters, still differs from the
  // declaration is refused (invalid/args, naming the column).
  Status Declare(const std::string& table_json, std::string* records);

  // The commit step. `ops_json` is a JSON array of ops; `meta_json` is
  // {"owner":s,"actor":{..}?,"at":ms?}. On success sets *result to
  // {"seq":n,"at":ms,"counts":[..]}. An error before COMMIT rolls back and
  // leaves the store usable; an error during COMMIT is storage_failed and
  // stops the store (every later call fails with storage_failed).
  Status Commit(const std::string& ops_json, const std::string& meta_json, std::string* result);

  // The common commit with its context as numbers: the owner registered by
  // OwnerId, the time in milliseconds, no actor (a commit with an actor
  // takes Commit's text). Commits as Commit does and sets *seq; writes no
  // answer text (no counts). Fails with invalid/args for an owner number
  // OwnerId did not give or a time that is not an integer of 64 bits.
  Status CommitAs(std::string_view ops_json, int owner, double at, int64_t* seq);

  // The number of the owner `name` for CommitAs and TxCommitAs, the same
  // one for the same name for the life of this object (1, 2, ...). Any
  // name is taken, as Commit takes any owner string; the names stay
  // registered (one per owner a program opens).
  int OwnerId(const std::string& name);

  // Transactions that stage ops so that tx.get sees them. Staged ops are
  // checked when staged; they reach the backend only in TxCommit.
  int TxOpen();
  Status TxStage(int tx, const std::string& ops_json);
  // Stages ops_json, then returns the row (JSON array) or "null".
  // Fails with read_after_bulk after a bulk op on the table in this tx. Ops
  // staged after a bulk op on their table are checked but evaluated only by
  // TxCommit (on the rows the bulk op leaves), so they never fail a tx.get,
  // on that table or another.
  Status TxGet(int tx, const std::string& ops_json, const std::string& table,
               const std::string& key_json, std::string* row);
  Status TxCommit(int tx, const std::string& ops_json, const std::string& meta_json,
                  std::string* result);
  // TxCommit with the context of CommitAs.
  Status TxCommitAs(int tx, std::string_view ops_json, int owner, double at, int64_t* seq);
  void TxClose(int tx);

  // The ops of the last commit this store made, exactly as its outbox record
  // holds them (defaults filled in, bulk counts set, table records): a JSON
  // array, or "[]" before the first commit. The one representation of a
  // commit that adopt hooks, watches, derives and links read (js/core-calls.js
  // asks for it only when one of them listens). Kept until the next commit.
  std::string LastOps() const;

  // Reads of committed state.
  Status Get(const std::string& table, const std::string& key_json, std::string* row);
  // One page: {"rows":[[...],...],"next"?:cursor,"peek"?:[...]}. With a
  // next, "peek" is the key of the row after the page (the one extra row
  // read to know there is a next): a derive keeps it with the page's keys,
  // to tell which later commits cannot change the page (js/derive.js,
  // "pages read by another column").
  Status Page(const std::string& table, const std::string& query_json, int64_t limit,
              const std::string& cursor, std::string* page);
  Status Count(const std::string& table, const std::string& query_json, int64_t* count);
  // The k rows nearest a query vector (src/vectors/nearest.h): `request_json`
  // is {"column","vector","k","metric"?,"where"?}; *answer is
  // {"rows":[..],"distances":[..]}, nearest first, ties by key.
  Status Nearest(const std::string& table, const std::string& request_json, std::string* answer);
  // The vector cache nearest keeps (src/vectors/vector_cache.h): its budget,
  // the bytes it holds, how many columns it built; budget 0 turns it off.
  const VectorCache& vector_cache() const { return vector_cache_; }
  void SetVectorCacheBudget(int64_t bytes) { vector_cache_ = VectorCache(bytes); }
  // An id above the highest stored id of an int-keyed table and above every
  // id minted before in this process.
  Status MintId(const std::string& table, int64_t* id);
  // MintId inside transaction `tx`: above the ids its staged puts hold too
  // (TxStage them first), so that a minted id never names a row the same
  // transaction put.
  Status TxMintId(int tx, const std::string& table, int64_t* id);

  // Reads of documents (src/documents/documents.h, DocumentsRead): find,
  // load (at a seq), list, versions; `request` is JSON text.
  Status Documents(const std::string& request_json, std::string* answer);

  Status ReadOutbox(int64_t after, int64_t limit, std::string* batch);
  // The same records as ReadOutbox, one entry each (src/history/log.h).
  Status ReadOutboxEntries(int64_t after, int64_t limit, std::vector<OutboxEntry>* out);
  Status TrimOutbox(int64_t up_to, int64_t* removed);
  // Every table record, as a JSON array. The documents' own tables
  // (`_documents`, `_deltas`) only with `internal`: an archive carries them,
  // a reader of the owners' tables does not see them.
  std::string TablesJson(bool internal = false) const;
  // Every table, by name in byte order.
  std::vector<std::shared_ptr<const TableSchema>> Tables() const { return catalog_.All(); }
  // Calls `visit` with each row of table `t` in key order, reading `page`
  // rows at a time; stops at visit's first error and returns it.
  Status ForEachRow(const TableSchema& t, int64_t page,
                    const std::function<Status(const Row&)>& visit);

  // True for a replica's store (src/sync/replica.h): it takes no owner
  // writes (Declare, Commit, TxCommit, MintId fail with invalid/args).
  bool is_replica() const { return replica_; }

  // The origin of a session split off another (Split): {"id":s,"seq":n} as
  // JSON text, or "" for a store that never split.
  const std::string& origin() const { return origin_; }

  // Makes a replica's store a driver's (pullSession): the role note becomes
  // "driver", so the store opens as an owner's from now on and takes owner
  // writes; its session id, head, tables and outbox stay as the replica
  // applied them. Fails with invalid/args for a store that is not a replica.
  Status Promote();

  // Makes this store a separate session (the driver lost its lease): its
  // session id becomes `new_id` and its origin `origin_json` (an object
  // {"id":s,"seq":n}: the session it split from and the last seq they
  // share), both written in one transaction (notes "session" and "origin"
  // in _meta, read again by OpenWith). Head, tables and outbox stay.
  Status Split(const std::string& new_id, const std::string& origin_json);

  // Releases the backend. Later calls fail with `closed`. Returns what failed
  // in releasing it (storage_failed: Backend::Close); it is released anyway,
  // and every commit acknowledged is kept. A second call returns OK.
  Status Close();

 private:
  struct TableOverlay {
    std::map<Key, std::optional<Row>, ValueListLess> rows;  // nullopt: deleted
    bool bulk = false;
  };
  struct Tx {
    std::vector<Op> ops;  // staged ops, checked, not yet written
    std::map<std::string, TableOverlay, std::less<>> overlay;
    // TxMintId's view: the highest int key each table's staged puts hold,
    // up to ops[minted_scan].
    std::map<std::string, int64_t, std::less<>> put_max;
    size_t minted_scan = 0;
  };

  Store() = default;
  // The replica layer applies recorded commits through the backend and the
  // catalog itself (src/sync/replica.cc); nothing else reaches them.
  friend class Replica;
  friend class Archiver;
  friend class Snapshots;

  Status CheckUsable(bool writing) const;
  // MintId's step: an id above `floor`, the table's stored ids and those
  // minted before.
  Status MintIdAbove(const std::string& table, int64_t floor, int64_t* id);
  Status CheckOwnerWrite(const char* what) const;
  // Parses and appends ops to the tx (checked, not yet written).
  Status StageInto(Tx* tx, std::string_view ops_json);
  // StageInto, then brings the tx's overlay up to date for tx.get.
  Status StageWithOverlay(Tx* tx, const std::string& ops_json);
  Status CommitParsed(std::vector<Op>* ops, const Json& meta, std::string* result);
  // Parses a commit's ops (a binary batch, JSON text of puts through the
  // fast reader, or any JSON text); the meta text, when given, is parsed
  // into *context between the JSON text's syntax and its ops' checks, so
  // that errors come in the order they always did.
  Status ParseCommit(std::string_view ops_json, const std::string* meta_json,
                     CommitContext* context, std::vector<Op>* ops);
  // The context of CommitAs: the owner's name and the time, checked.
  Status ContextAs(int owner, double at, const std::string** name, int64_t* at_ms) const;
  // Writes a commit. *result, when given, gets {"seq":n,"at":ms,"counts":[..]}.
  Status CommitOps(std::vector<Op>* ops, const CommitContext& context, std::string* result);
  Status CommitOps(std::vector<Op>* ops, const std::string& owner, int64_t at, const Json* actor,
                   std::string* result);
  // The query `query_json` over table `t` (found in the catalog as `table`),
  // parsed and checked once and kept (queries_): a derive or a link reads
  // the same query after every commit. *q stays valid until the next call.
  Status ParsedQuery(const std::string& table, const TableSchema* t,
                     const std::string& query_json, const Query** q);

  std::unique_ptr<Backend> backend_;
  std::string id_;
  int64_t head_ = 0;
  Catalog catalog_;
  std::map<std::string, int64_t, std::less<>> minted_;
  std::map<int, Tx> txs_;
  // OwnerId's names: owner n is owner_names_[n - 1].
  std::vector<std::string> owner_names_;
  std::unordered_map<std::string, int> owner_ids_;
  int next_tx_ = 1;
  bool closed_ = false;
  bool replica_ = false;
  std::string origin_;  // "" unless the store split off another session
  Status stopped_;  // storage_failed or fenced: the store takes no more writes
  // The outbox record of the last commit, and where its ops array starts in
  // it (see LastOps). Shared with the backend's outbox (the memory backend
  // holds the same string): a commit pays no copy for it. Null before the
  // first commit.
  std::shared_ptr<std::string> last_record_;
  size_t last_ops_at_ = 0;
  // The room of the next commit's record (CommitOps): the record before the
  // last, when no backend held a share of it, up to kMaxSpareRecord bytes.
  std::shared_ptr<std::string> spare_record_;
  static constexpr size_t kMaxSpareRecord = 64 * 1024;
  // The list of ops of Commit and CommitAs, kept empty between commits with
  // its room (src/commit/store.cc, ClearAfter).
  std::vector<Op> commit_ops_;
  // Parsed queries by table name and wire text (ParsedQuery). Each holds its
  // table's schema: a table changed by an alter or an index change is a new
  // object in the catalog, so an entry made before the change is parsed
  // again. At most kMaxCachedQueries (then the cache starts over).
  struct CachedQuery {
    std::shared_ptr<const TableSchema> table;
    Query query;
  };
  static constexpr size_t kMaxCachedQueries = 256;
  std::unordered_map<std::string, CachedQuery> queries_;
  // Vectors of columns nearest searched, kept by the commit step.
  VectorCache vector_cache_;
};

}  // namespace onestore

#endif  // ONESTORE_COMMIT_STORE_H_
