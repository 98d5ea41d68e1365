// Query: predicates, order and cursors.
//
// A query arrives as the wire format's JSON ({"eq":["path","a"]}, ...) and is
// parsed and checked against a table's schema here, once. The memory backend
// evaluates it (query/eval.h); the sqlite backend compiles it to SQL
// (query/sql.h). Both must give the same rows in the same order; the
// conformance vectors in tests/conformance/ check that they do.
#ifndef ONESTORE_QUERY_QUERY_H_
#define ONESTORE_QUERY_QUERY_H_

#include <optional>
#include <string>
#include <vector>

#include "onestore/status.h"
#include "schema/schema.h"
#include "values/value.h"

namespace onestore {

enum class PredOp { kEq, kNe, kLt, kLte, kGt, kGte, kIn, kIsNull, kPrefix, kAnd, kOr, kNot };

// Wire names: "eq", "ne", ..., "inArray", "isNull", "prefix", "and", "or", "not".
const char* PredOpName(PredOp op);

// One node of a where tree. Comparisons take a column and a literal of the
// column's type (never null: use isNull). SQL's three-valued logic applies:
// a comparison with a null cell is unknown, and unknown rows do not match.
struct Predicate {
  PredOp op = PredOp::kAnd;
  int column = -1;                  // comparisons, inArray, isNull, prefix
  Value value;                      // eq..gte; the prefix text for prefix
  std::vector<Value> values;        // inArray
  std::vector<Predicate> children;  // and, or (any count); not (exactly one)

  // Appends the wire JSON of this predicate ({"eq":["path","a"]}).
  void AppendJson(const TableSchema& t, std::string* out) const;
};

// Parses a where in wire JSON against table `t`. `where` names the place for
// errors. Fails with invalid/args on an unknown column or operator, a json
// column, an operand of the wrong type, or a null operand.
Status ParsePredicate(const Json& j, const TableSchema& t, const std::string& where,
                      Predicate* out);

// Wheres and set expressions nest at most this deep (invalid/args beyond),
// so that no input can exhaust the stack of the evaluators or of SQLite.
constexpr int kMaxNesting = 64;
// ParsePredicate for a where nested `depth` levels inside another tree.
Status ParsePredicateAt(const Json& j, const TableSchema& t, const std::string& where, int depth,
                        Predicate* out);

struct OrderTerm {
  int column = -1;
  bool desc = false;
};

// A query over one table: an optional where, and an order that is always
// total: the terms asked for, then the key columns not among them, in the
// direction of the last term asked for (ascending if none).
struct Query {
  const TableSchema* table = nullptr;
  std::optional<Predicate> where;
  std::vector<OrderTerm> order;  // effective (total) order
  uint64_t fingerprint = 0;      // table + where + order; binds cursors
  // The text of this query's cursors before their values (see EncodeCursor),
  // made once by ParseQuery so that a page of a cached query does not
  // serialize its where again. Empty in a query built or changed by hand:
  // EncodeCursor then makes it.
  std::string cursor_head;

  // The values of the order columns of `row`: what a cursor holds.
  std::vector<Value> OrderValues(const Row& row) const;
  // <0, 0, >0: the position of row `a` against `b` in this order.
  int CompareRows(const Row& a, const Row& b) const;
  // <0, 0, >0: `row` against a position given as order values.
  int CompareToPosition(const Row& row, const std::vector<Value>& pos) const;
};

// Parses {"where": w | null, "orderBy": [[col, "asc"|"desc"], ...]} against
// `t`. json columns cannot be ordered by (invalid/args).
Status ParseQuery(const Json& j, const TableSchema& t, const std::string& where, Query* out);

// A cursor is an opaque string: its query's fingerprint, its direction and
// the order values of the last row returned.
std::string EncodeCursor(const Query& q, const std::vector<Value>& position);
// Decodes a cursor for query `q`. Fails with invalid/cursor when the text is
// not a cursor, or belongs to another query, table or direction.
Status DecodeCursor(const Query& q, std::string_view text, std::vector<Value>* position);

// Parses a key (a JSON array of the key columns' values) for table `t`.
Status ParseKey(const Json& j, const TableSchema& t, const std::string& where, Key* out);

// The most UTF-8 bytes a put may give a str key column (docs/api.md,
// "Limits"): a key crosses into every get, delete and outbox record, and a
// read by a key of hundreds of MB could not fit in the wasm heap. Reads and
// deletes by a longer key find no row.
constexpr size_t kMaxKeyBytes = size_t{1} << 20;
// `limit` if the row of ops[op], a put, holds a key value longer than
// kMaxKeyBytes.
Status CheckKeySize(const TableSchema& t, const Row& row, size_t op);

// Three-valued logic of the memory evaluator.
enum class Tri { kFalse = 0, kTrue = 1, kUnknown = 2 };
// Evaluates `p` on `row` (memory backend, tx overlays, expressions' `when`).
Tri EvalPredicate(const Predicate& p, const Row& row);

}  // namespace onestore

#endif  // ONESTORE_QUERY_QUERY_H_
