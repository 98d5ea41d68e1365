// The SQL compiler of the write layer: set expressions as SQL over the row
// before the update (an SQL UPDATE reads the old row for every SET
// expression, which is the store's rule), and the SQL functions they need.
//
// Semantics match EvalExpr (writes.h): null propagates through add, sub,
// max, min and concat; SQLite's multi-argument max()/min() return NULL when
// any argument is NULL; integer overflow in add or sub is an error raised by
// onestore_add/onestore_sub, never a float.
#ifndef ONESTORE_WRITES_SQL_H_
#define ONESTORE_WRITES_SQL_H_

#include <string_view>
#include <vector>

#include "onestore/status.h"
#include "query/sql.h"
#include "schema/schema.h"
#include "writes/writes.h"

struct sqlite3;

namespace onestore {

// The text every overflow error of onestore_add/onestore_sub starts with, so
// the backend can tell it from a storage failure.
extern const char kSqlOverflowMessage[];  // "integer overflow"

// Registers the deterministic functions onestore_add(a, b) and
// onestore_sub(a, b) on `db`: NULL if either argument is NULL, an exact
// 64-bit result for two integers (an error whose message starts with
// kSqlOverflowMessage on overflow), a double otherwise. Call once per
// connection. Fails with storage_failed if SQLite refuses.
Status RegisterSqlFunctions(sqlite3* db);

// Appends `e`, an expression over the columns of `t`, as SQL. Literals bind
// as parameters; those of a num expression bind as doubles.
void AppendExprSql(const TableSchema& t, const Expr& e, SqlBuilder* b);

// Appends "c1 = e1, c2 = e2, ..." for the items of an UPDATE's SET clause.
// Requires `set` non-empty.
void AppendSetSql(const TableSchema& t, const std::vector<SetItem>& set, SqlBuilder* b);

}  // namespace onestore

#endif  // ONESTORE_WRITES_SQL_H_
