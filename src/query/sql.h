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

// inArray lists longer than this are bound as one JSON array text and read
// with a table-valued function over it (SqlDialect::in_list_table), so a
// long list never runs into SQLite's parameter limit.
constexpr size_t kMaxInlineInList = 200;

// The largest part of an outbox record a host-bound SQLite stores in one
// value: half a Durable Object's 2 MB, so that a part is far from the limit
// however its text is measured.
constexpr size_t kHostOutboxPartBytes = 1000000;

// What the SQLite that runs the SQL can do. The SQL is built once, by the
// functions below, for either kind of connection
// (backends/sqlite/connection.h); the dialect only switches the few spots
// where a host-bound SQLite (a Durable Object's `sql.exec`) differs from the
// embedded one.
struct SqlDialect {
  // add/sub call onestore_add/onestore_sub (RegisterSqlFunctions). False:
  // plain SQL that raises SQLite's own "integer overflow" error, for a
  // connection that cannot register functions.
  bool checked_arith_functions = true;
  // Int and bool parameters are written as CAST(? AS INTEGER) and the
  // connection binds them as decimal text: a host that binds every JS number
  // as a double (so 2^53 + 1 would not survive, and 1 would be REAL).
  bool int_params_as_text = false;
  // Int results beyond 2^53 are read as CAST(x AS TEXT): a host that returns
  // integers as doubles. The backend applies it (IntResultSql).
  bool int_results_as_text = false;
  // Longer inArray lists go through in_list_table (kMaxInlineInList by
  // default; lower where the host allows fewer bound parameters per
  // statement).
  size_t max_inline_in_list = kMaxInlineInList;
  // The table-valued function that reads a JSON array of scalars as rows of
  // one column `value`: onestore_list in the embedded SQLite (built without
  // SQLite's JSON functions, backends/sqlite/list_table.h), json_each in a
  // host's SQLite.
  const char* in_list_table = "onestore_list";
  // The longest JSON text one in_list_table parameter holds (0: no limit);
  // a longer list is bound as several, OR-ed: a host that refuses a value
  // above a size (a Durable Object: 2 MB) still answers an inArray of any
  // length.
  size_t max_in_list_text = 0;
  // The most bytes a row's values may hold together (0: no limit of ours):
  // a host that refuses a bigger row with a message naming neither the row
  // nor its size (a Durable Object: SQLITE_TOOBIG) gets it refused first,
  // naming both (SqliteBackend::CheckHostRow).
  size_t max_row_bytes = 0;
  // An outbox record longer than this many bytes is split (0: never): its
  // first part goes to _outbox.record, the rest, in order, to
  // _outbox_parts (docs/formats.md, "Outbox format 2"). For a host that
  // refuses a value above a size (a Durable Object: 2 MB), so that a
  // transaction of any size commits.
  size_t max_outbox_part = 0;
  // A statement with more parameters than this (0: no limit) has its small
  // literals written into its text instead (SqlBuilder::InlineSmallParams),
  // so that a wide put, update or predicate fits a host that binds at most
  // this many per statement.
  size_t max_params = 0;

  // The embedded sqlite3 C API: functions, 64-bit binds and results.
  static const SqlDialect& Embedded();
  // A host-bound SQLite such as a Durable Object's sql.exec: no functions of
  // ours, numbers as doubles, at most 100 parameters per statement.
  static const SqlDialect& HostBound();
};

// SQL text and the values of its `?` parameters, in order. A bool binds as
// the integer 0 or 1, an int as a 64-bit integer, a num as a double, a str or
// a json value as TEXT (bytes as they are, with their explicit length). With
// dialect().int_params_as_text an int or bool parameter reads
// CAST(? AS INTEGER) in the text (its Value is still the int).
class SqlBuilder {
 public:
  SqlBuilder() = default;
  explicit SqlBuilder(const SqlDialect& dialect) : dialect_(&dialect) {}

  const SqlDialect& dialect() const { return *dialect_; }

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
  // The parameters, which the caller may move from.
  std::vector<Value>* mutable_params() { return &params_; }
  // Empties the text and the parameters, keeping their room (a builder
  // kept for the next statement).
  void Clear() {
    sql_.clear();
    params_.clear();
    marks_.clear();
  }

  // Writes every null, bool, int and short str or json parameter into the
  // SQL text as a literal that SQLite reads as the same value (a text
  // literal with its quotes doubled; an int as the dialect binds it), and
  // keeps the others (nums, whose text would have to round-trip, and long
  // texts) as parameters.
  void InlineSmallParams();

 private:
  const SqlDialect* dialect_ = &SqlDialect::Embedded();
  std::string sql_;
  std::vector<Value> params_;
  std::vector<size_t> marks_;  // where each parameter's "?" is in sql_
};

// The smallest valid UTF-8 text above every text that starts with `prefix`
// in code point (= byte) order: the last code point below U+10FFFF
// incremented (skipping the surrogates), those at U+10FFFF dropped first. ""
// when there is none (every text is below no bound). For a prefix of whole
// code points (every prefix from the wire) it never yields invalid UTF-8, as
// PrefixUpperBound can, so a host that passes text through JS strings binds
// it unchanged; a prefix cut inside a code point gets PrefixUpperBound.
std::string PrefixUpperBoundUtf8(std::string_view prefix);

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
