// Writes: the five operations, the set expressions, and the table records.
//
// Ops arrive in the wire format of docs/formats.md, are parsed and checked
// against the catalog here, and are written back out in the same format (the
// outbox record holds the parsed, normalized op: defaults filled, bulk counts
// added). Expressions are evaluated here for the memory backend and for tx
// overlays; the sqlite backend compiles them to SQL (writes/sql.h).
#ifndef ONESTORE_WRITES_WRITES_H_
#define ONESTORE_WRITES_WRITES_H_

#include <memory>
#include <optional>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "onestore/status.h"
#include "query/query.h"
#include "schema/schema.h"
#include "values/value.h"

namespace onestore {

enum class ExprOp {
  kValue,
  kCol,
  kAdd,
  kSub,
  kMax,
  kMin,
  kConcat,
  kReplacePrefix,
  kCoalesce,
  kWhen
};

// Wire names: "value", "col", "add", ...
const char* ExprOpName(ExprOp op);

// A set expression. Every expression of one set reads the row as it was
// before the update. Null propagates through add, sub, max, min, concat (as
// in SQL); coalesce picks the first non-null; when(p, a, b) is a if p is true,
// else b (unknown counts as false). Integer overflow is an error.
struct Expr {
  ExprOp op = ExprOp::kValue;
  Type type = Type::kNull;          // result type; kNull only for a null literal
  Value value;                      // kValue; for kReplacePrefix: unused
  int column = -1;                  // kCol; kReplacePrefix: the column it rewrites
  std::string from, to;             // kReplacePrefix
  std::vector<Expr> args;           // add, sub, max, min, concat, coalesce; when: [then, else]
  std::shared_ptr<Predicate> cond;  // kWhen

  void AppendJson(const TableSchema& t, std::string* out) const;
};

struct SetItem {
  int column = -1;
  Expr expr;
};

// Evaluates `e` on `row` (the row before the update). Fails with invalid/args
// on integer overflow, naming the column being set.
Status EvalExpr(const Expr& e, const Row& row, const TableSchema& t, Value* out);
// Applies every item of `set` to `row`, reading the row as it was before.
Status ApplySet(const std::vector<SetItem>& set, const TableSchema& t, Row* row);

// kDocument: a document op (src/documents/documents.h), which the commit
// step expands into writes of the store's own tables; backends never see it.
// kAlter and kIndex: a recorded change of a stored table (schema/schema.h,
// SchemaChange); like kTable, they give the table a new schema.
// kRestore: the marker op that opens a restore's record
// (src/snapshot/snapshot.h): it writes nothing; the ops after it do.
enum class OpKind {
  kPut,
  kUpdate,
  kDelete,
  kUpdateWhere,
  kDeleteWhere,
  kTable,
  kDocument,
  kAlter,
  kIndex,
  kRestore
};

struct DocOp;

struct Op {
  // Not `= default`: a value-initialized Op (a vector's emplace_back()) is
  // then not zeroed whole before its members' initializers run.
  Op() {}
  OpKind kind = OpKind::kPut;
  // The table the op writes (for kTable: the declared schema; for kAlter and
  // kIndex: the schema after the change).
  std::shared_ptr<const TableSchema> table;
  std::shared_ptr<const SchemaChange> change;  // kAlter, kIndex
  Row row;                         // kPut: complete, defaults filled
  Key key;                         // kUpdate, kDelete
  std::vector<SetItem> set;        // kUpdate, kUpdateWhere
  std::optional<Predicate> where;  // kUpdateWhere, kDeleteWhere (none: every row)
  std::shared_ptr<DocOp> doc;      // kDocument
  std::string marker;              // kRestore: the op's JSON text
  int64_t count = -1;              // bulk ops: affected rows, once applied;
                                   // as parsed from a replayed record: the expected count, or -1
  // kPut: nothing reads `row` after Backend::Apply (the commit's outbox
  // record is already written), so Apply may move it out instead of copying.
  bool row_spent = false;
  bool is_bulk() const { return kind == OpKind::kUpdateWhere || kind == OpKind::kDeleteWhere; }
  // True for the ops that give a table its (new) schema: table, alter, index.
  bool declares() const {
    return kind == OpKind::kTable || kind == OpKind::kAlter || kind == OpKind::kIndex;
  }

  // Appends the wire JSON of this op. Bulk ops carry "count" when it is >= 0.
  void AppendJson(std::string* out) const;
};

// Resolves table names while parsing: the committed catalog, plus tables
// declared earlier in the same list of ops.
class TableResolver {
 public:
  explicit TableResolver(const Catalog* base) : base_(base) {}
  Status Lookup(std::string_view name, const std::string& where,
                std::shared_ptr<const TableSchema>* out) const;
  void Declare(std::shared_ptr<const TableSchema> t);
  // Fails with invalid/args when `name` differs only in ASCII letter case
  // from a table of the catalog or declared before (SQLite would take the two
  // for one table), so that no two tables collide on any backend.
  Status CheckCaseTwin(std::string_view name, const std::string& where) const;
  // Lets ops write the store's own tables (`_documents`, `_deltas`), which
  // only document ops may otherwise: for an archive's restore
  // (src/archive/archive.cc), which puts their rows back as exported.
  void AllowStoreTables() { store_tables_ = true; }
  bool store_tables() const { return store_tables_; }
  // Lets the ops hold a restore's marker op ({"op":"restore",...}), which
  // only store.restore writes: for a replica applying recorded commits. The
  // ops after a marker may write the store's own tables (a restore puts the
  // documents' rows back too).
  void AllowRestore() { restore_ = true; }
  bool restore() const { return restore_; }

 private:
  const Catalog* base_;
  bool store_tables_ = false;
  bool restore_ = false;
  std::vector<std::shared_ptr<const TableSchema>> declared_;
};

// Parses one op in wire JSON. Fails with invalid/args naming the path
// (`where`, e.g. "ops[3].row.entry") and the value: unknown table or column,
// wrong type, null in a non-optional column, NUL in a str, unsafe int, a
// key column in a set, a json column in a where.
Status ParseOp(const Json& j, TableResolver* tables, const std::string& where, Op* out);
// Parses a JSON array of ops.
Status ParseOps(const Json& j, TableResolver* tables, std::vector<Op>* out);
// A seq or a count as a record gives it (docs/formats.md, "The record"): a
// JSON integer from 0 to 2^63 - 1, into `out`; false on anything else.
bool ReadRecordInt(const Json& j, int64_t* out);

// The fast path of a batch of puts (writes/fast_puts.cc): reads `text`
// ([{"op":"put","table":t,"row":{...}},...], as the JS package writes it;
// updates and deletes by key may be among the puts, in the shape a record
// has them: {"op":"update","table":t,"key":[...],"set":{column:{"value":v}}},
// {"op":"delete","table":t,"key":[...]}) straight into ops, appended to
// `out`, and returns true; or returns false,
// `out` unchanged, on anything it does not take (another op, an escape it
// does not decode, a value the DOM path would refuse or read differently).
// Then the caller parses the text into a Json and calls ParseOps, which
// gives the same ops or the worded error.
bool ParsePutsFast(std::string_view text, TableResolver* tables, std::vector<Op>* out);

// The same for the commit context the JS package writes when no actor is
// given: exactly {"owner":"<text without escapes>","at":<integer>}. Returns
// false on any other text (the caller then parses it with the DOM).
bool ParseCommitMetaFast(std::string_view text, std::string* owner, int64_t* at);

// A replica's fast reader of a batch (src/sync/replica.cc): reads `text`,
// {"from":head,"to":m,"commits":[record,...]} with every record in the shape
// the store writes it ({"seq","from","at","owner"[,"actor"],"ops"}, in that
// order, seqs contiguous from head + 1), each put straight into its row and
// every other op parsed alone with the DOM. Returns true with one FastRecord
// a record, in order (tables declared by a record visible to the later ones
// through `tables`, as ParseOps leaves them), or false on anything else (a
// batch that starts elsewhere than `head`, another shape, an error of any
// kind): then the caller parses the batch with the DOM, which gives the
// same ops or the worded error. The actor is parsed, not checked.
struct FastRecord {
  int64_t at = 0;
  std::string owner;
  Json actor;                   // null: none
  std::vector<Op> ops;
  std::vector<int64_t> counts;  // per op: the count the record gives a key op, -1 none
};
bool ParseBatchFast(std::string_view text, int64_t head, TableResolver* tables, int64_t* to,
                    std::vector<FastRecord>* out);

// The key of a complete row.
Key KeyOf(const TableSchema& t, const Row& row);

// Appends a row as a JSON object {col: value, ...}.
void AppendRowObject(const TableSchema& t, const Row& row, std::string* out);

// Appends the JSON array of `ops`, each as Op::AppendJson writes it. A run of
// puts to one table (a bulk transaction) has the text of its op's head and of
// its column names written once for the run rather than once per put.
void AppendOpsJson(const std::vector<Op>& ops, std::string* out);
// Appends a row as a JSON array in column order, unsafe ints as strings (the
// page encoding the JS side decodes).
void AppendRowArray(const Row& row, std::string* out);

}  // namespace onestore

#endif  // ONESTORE_WRITES_WRITES_H_
