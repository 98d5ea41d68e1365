// The SQL compiler of the query layer: identifiers, where trees, orders and
// keyset positions, as SQL text plus the values bound to its parameters.
//
// Values are always bound, never pasted into SQL text; identifiers are quoted
// by QuoteIdent and nothing else. The SQL is SQLite's dialect, and it relies
// on SQLite's semantics that match the store's: three-valued logic (a
// comparison with NULL matches no row), BINARY collation (memcmp, which is
// code point order for UTF-8), NULL first ascending and last descending.
#ifndef ONESTORE_QUERY_SQL_H_
#define ONESTORE_QUERY_SQL_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "query/query.h"
#include "schema/schema.h"
#include "values/value.h"

namespace onestore {

// The one identifier-quoting function: `name` in double quotes, each inner
// double quote doubled. QuoteIdent("file-history/edits") is
// "\"file-history/edits\"".
std::string QuoteIdent(std::string_view name);

// SQL text and the values of its `?` parameters, in order. A bool binds as
// the integer 0 or 1, an int as a 64-bit integer, a num as a double, a str or
// a json value as TEXT (bytes as they are, with their explicit length).
class SqlBuilder {
 public:
  SqlBuilder() = default;

  // Appends raw SQL text (keywords, operators; never a value).
  SqlBuilder& Append(std::string_view sql) {
    sql_.append(sql);
    return *this;
  }
  // Appends QuoteIdent(name).
  SqlBuilder& AppendIdent(std::string_view name);
  // Appends a "?" and binds `v` to it.
  SqlBuilder& AppendParam(Value v);

  const std::string& sql() const { return sql_; }
  const std::vector<Value>& params() const { return params_; }
  // Moves the parameters out (the builder keeps its SQL text).
  std::vector<Value> TakeParams() { return std::move(params_); }

 private:
  std::string sql_;
  std::vector<Value> params_;
};

// inArray lists longer than this are bound as one JSON array text and read
// with json_each, so a long list never runs into SQLite's parameter limit.
constexpr size_t kMaxInlineInList = 200;

// Appends `p`, a predicate over the columns of `t` (as ParsePredicate makes
// it), as a parenthesized SQL boolean expression with EvalPredicate's
// three-valued answer on every row: a comparison or prefix is unknown on a
// NULL cell; isNull never is, nor is an empty inArray (false on every row).
// Operands of a num column bind as doubles.
void AppendPredicateSql(const TableSchema& t, const Predicate& p, SqlBuilder* b);

// Appends "ORDER BY c1 ASC, c2 DESC, ..." for q.order (each term its own
// direction). Appends nothing for an empty order.
void AppendOrderBySql(const Query& q, SqlBuilder* b);

// Appends a parenthesized condition true exactly for the rows that come
// strictly after `position` (q's order values of a row) in q's order, NULLs
// and mixed directions included. Requires position.size() == q.order.size()
// and q.order non-empty.
void AppendAfterSql(const Query& q, const std::vector<Value>& position, SqlBuilder* b);

}  // namespace onestore

#endif  // ONESTORE_QUERY_SQL_H_
