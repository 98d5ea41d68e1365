#include "query/sql.h"

#include "onestore/cold.h"

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace onestore {

std::string QuoteIdent(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 2);
  out.push_back('"');
  for (char c : name) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

SqlBuilder& SqlBuilder::AppendIdent(std::string_view name) {
  sql_.append(QuoteIdent(name));
  return *this;
}

const SqlDialect& SqlDialect::Embedded() {
  static const SqlDialect d = [] {
    SqlDialect e;
    // SQLite's own bound on a statement's parameters
    // (SQLITE_MAX_VARIABLE_NUMBER): a where with more values than this has
    // its small ones written into its text, as on a host.
    e.max_params = 32766;
    return e;
  }();
  return d;
}

const SqlDialect& SqlDialect::HostBound() {
  static const SqlDialect d = [] {
    SqlDialect h;
    h.checked_arith_functions = false;
    h.int_params_as_text = true;
    h.int_results_as_text = true;
    h.max_inline_in_list = 32;
    h.in_list_table = "json_each";
    h.max_in_list_text = kHostOutboxPartBytes;
    h.max_row_bytes = 2000000;  // HostLimits::max_value_bytes (connection.h)
    h.max_outbox_part = kHostOutboxPartBytes;
    h.max_params = 100;
    return h;
  }();
  return d;
}

SqlBuilder& SqlBuilder::AppendParam(Value v) {
  if (dialect_->int_params_as_text && (v.type() == Type::kInt || v.type() == Type::kBool)) {
    sql_.append("CAST(");
    marks_.push_back(sql_.size());
    sql_.append("? AS INTEGER)");
  } else {
    marks_.push_back(sql_.size());
    sql_.push_back('?');
  }
  params_.push_back(std::move(v));
  return *this;
}

void SqlBuilder::InlineSmallParams() {
  constexpr size_t kMaxInlineText = 256;
  std::string sql;
  sql.reserve(sql_.size() + params_.size() * 8);
  std::vector<Value> params;
  std::vector<size_t> marks;
  size_t from = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    sql.append(sql_, from, marks_[i] - from);
    from = marks_[i] + 1;
    Value& v = params_[i];
    switch (v.type()) {
      case Type::kNull:
        sql.append("NULL");
        continue;
      case Type::kBool:
      case Type::kInt:
        if (dialect_->int_params_as_text) {
          // Inside CAST(... AS INTEGER): the decimal text, as it is bound.
          sql.push_back('\'');
          sql.append(std::to_string(v.int_value()));
          sql.push_back('\'');
        } else if (v.int_value() == INT64_MIN) {
          sql.append("(-9223372036854775807 - 1)");
        } else {
          sql.append(std::to_string(v.int_value()));
        }
        continue;
      case Type::kStr:
      case Type::kJson:
        if (v.text().size() <= kMaxInlineText) {
          sql.push_back('\'');
          for (char c : v.text()) {
            if (c == '\'') sql.push_back('\'');
            sql.push_back(c);
          }
          sql.push_back('\'');
          continue;
        }
        break;
      case Type::kNum:
      case Type::kVector:  // bytes: always bound
        break;
    }
    marks.push_back(sql.size());
    sql.push_back('?');
    params.push_back(std::move(v));
  }
  sql.append(sql_, from, std::string::npos);
  sql_ = std::move(sql);
  params_ = std::move(params);
  marks_ = std::move(marks);
}

namespace {

// Whether `s` is a sequence of whole UTF-8 code points (lead bytes followed
// by their continuation bytes; overlong forms are not looked for).
bool WholeCodePoints(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : c >= 0xF8 ? 0 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

}  // namespace

std::string PrefixUpperBoundUtf8(std::string_view prefix) {
  // Bytes that are not whole code points (a prefix cut inside one) have no
  // code point to increment: the byte-wise bound is the only right one.
  if (!WholeCodePoints(prefix)) return PrefixUpperBound(prefix);
  std::string up(prefix);
  while (!up.empty()) {
    // The start of the last code point.
    size_t start = up.size() - 1;
    while (start > 0 && (static_cast<unsigned char>(up[start]) & 0xC0) == 0x80) --start;
    const unsigned char lead = static_cast<unsigned char>(up[start]);
    uint32_t cp = 0;
    size_t len = up.size() - start;
    if (lead < 0x80) {
      cp = lead;
    } else if (lead >= 0xF0) {
      cp = lead & 0x07;
    } else if (lead >= 0xE0) {
      cp = lead & 0x0F;
    } else {
      cp = lead & 0x1F;
    }
    for (size_t i = 1; i < len; ++i)
      cp = (cp << 6) | (static_cast<unsigned char>(up[start + i]) & 0x3F);
    up.resize(start);
    if (cp >= 0x10FFFF) continue;  // nothing above it in this place: drop it
    ++cp;
    if (cp == 0xD800) cp = 0xE000;
    if (cp < 0x80) {
      up.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      up.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      up.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      up.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      up.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      up.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      up.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      up.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      up.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      up.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
    return up;
  }
  return up;
}

namespace {

// An operand as the column stores it: a num column compares as REAL, so an
// int literal given for it binds as a double.
Value ForColumn(const TableSchema& t, int column, const Value& v) {
  if (column >= 0 && static_cast<size_t>(column) < t.columns.size() &&
      t.columns[column].type == Type::kNum && v.type() == Type::kInt) {
    return Value::Num(static_cast<double>(v.int_value()));
  }
  return v;
}

const char* ComparisonSql(PredOp op) {
  switch (op) {
    case PredOp::kEq:
      return " = ";
    case PredOp::kNe:
      return " <> ";
    case PredOp::kLt:
      return " < ";
    case PredOp::kLte:
      return " <= ";
    case PredOp::kGt:
      return " > ";
    case PredOp::kGte:
      return " >= ";
    default:
      return nullptr;
  }
}

ONESTORE_COLD void AppendInList(const TableSchema& t, const Predicate& p, const std::string& col, SqlBuilder* b) {
  if (p.values.empty()) {
    // False on every row, a NULL cell included (as SQLite's `x IN ()`), so
    // NOT of it matches every row: the conformance vectors say so.
    b->Append("0");
    return;
  }
  if (p.values.size() > b->dialect().max_inline_in_list) {
    // One JSON array bound as text. onestore_list and json_each yield
    // integers exactly (64-bit), true/false as 1/0, and strings as TEXT, so
    // the comparison is the same as with bound values.
    // Where the dialect bounds a value's size, the list is cut into arrays
    // of at most max_in_list_text bytes (a single longer value stays whole,
    // for the host's own limit to name), each an IN of its own, OR-ed: the
    // same rows, a NULL cell included (NULL OR NULL is NULL, as NULL IN is).
    const size_t most = b->dialect().max_in_list_text;
    std::vector<std::string> lists(1, "[");
    std::string one;
    for (size_t i = 0; i < p.values.size(); ++i) {
      one.clear();
      ForColumn(t, p.column, p.values[i]).AppendJson(&one);
      std::string* json = &lists.back();
      if (most > 0 && json->size() > 1 && json->size() + one.size() + 2 > most) {
        json->push_back(']');
        json = &lists.emplace_back("[");
      }
      if (json->size() > 1) json->push_back(',');
      json->append(one);
    }
    lists.back().push_back(']');
    const bool several = lists.size() > 1;
    if (several) b->Append("(");
    for (size_t i = 0; i < lists.size(); ++i) {
      if (i > 0) b->Append(" OR ");
      b->Append(col).Append(" IN (SELECT value FROM ").Append(b->dialect().in_list_table).Append("(");
      b->AppendParam(Value::Str(std::move(lists[i])));
      b->Append("))");
    }
    if (several) b->Append(")");
    return;
  }
  b->Append(col).Append(" IN (");
  for (size_t i = 0; i < p.values.size(); ++i) {
    if (i > 0) b->Append(", ");
    b->AppendParam(ForColumn(t, p.column, p.values[i]));
  }
  b->Append(")");
}

// The most terms joined in one run of AND or OR; a longer list is written
// as a balanced tree of parenthesized runs. SQLite parses `a OR b OR c ...`
// as a tree as deep as the list is long, and walks it recursively: 12,000
// terms overflowed the wasm stack (SQLITE_MAX_EXPR_DEPTH=0 sets no limit),
// and a host's SQLite refuses a tree deeper than 1,000. Balanced, the depth
// is about kMaxRun + log2(n / kMaxRun); SQLite flattens the groups again
// when it plans (an AND or OR of groups is the same AND or OR).
constexpr size_t kMaxRun = 16;

void AppendJoinedRange(const TableSchema& t, const std::vector<const Predicate*>& terms,
                       size_t from, size_t to, const char* joiner, SqlBuilder* b) {
  if (to - from <= kMaxRun) {
    for (size_t i = from; i < to; ++i) {
      if (i > from) b->Append(joiner);
      AppendPredicateSql(t, *terms[i], b);
    }
    return;
  }
  const size_t mid = from + (to - from) / 2;
  b->Append("(");
  AppendJoinedRange(t, terms, from, mid, joiner, b);
  b->Append(")").Append(joiner).Append("(");
  AppendJoinedRange(t, terms, mid, to, joiner, b);
  b->Append(")");
}

void AppendJoinedTerms(const TableSchema& t, const std::vector<const Predicate*>& terms,
                       const char* joiner, const char* empty, SqlBuilder* b) {
  if (terms.empty()) {
    b->Append(empty);
    return;
  }
  AppendJoinedRange(t, terms, 0, terms.size(), joiner, b);
}

void AppendJoined(const TableSchema& t, const std::vector<Predicate>& children, const char* joiner,
                  const char* empty, SqlBuilder* b) {
  std::vector<const Predicate*> terms;
  terms.reserve(children.size());
  for (const Predicate& c : children) terms.push_back(&c);
  AppendJoinedTerms(t, terms, joiner, empty, b);
}

// Whether an or's child is an equality or an inArray on one column, which
// AppendOr folds.
bool Foldable(const Predicate& p) {
  return (p.op == PredOp::kEq || p.op == PredOp::kIn) && p.column >= 0;
}

// An or's children, with its equalities and inArrays on one column folded
// into one IN list where there are two or more (x = 1 OR x = 2 OR x IN (3)
// becomes x IN (1, 2, 3), in the place of the first): SQL defines IN as
// that OR, so every row, a NULL cell included, gets the same truth. SQLite
// prepares a WHERE of thousands of OR terms slowly (its analysis of each
// term for the OR optimizations: 4.5 s for 6,000, more than linearly) and
// then tries the terms one by one on every row; an IN list of any length is
// one lookup per row (a long one bound as one JSON array, AppendInList).
void AppendOr(const TableSchema& t, const std::vector<Predicate>& children, SqlBuilder* b) {
  std::map<int, int> per_column;
  for (const Predicate& c : children) {
    if (Foldable(c)) ++per_column[c.column];
  }
  bool any = false;
  for (const auto& [column, n] : per_column) any = any || n > 1;
  if (!any) {
    AppendJoined(t, children, " OR ", "0", b);
    return;
  }
  std::map<int, Predicate> lists;  // column -> its IN list
  for (const Predicate& c : children) {
    if (!Foldable(c) || per_column[c.column] < 2) continue;
    Predicate& list = lists[c.column];
    list.op = PredOp::kIn;
    list.column = c.column;
    if (c.op == PredOp::kEq) {
      list.values.push_back(c.value);
    } else {
      list.values.insert(list.values.end(), c.values.begin(), c.values.end());
    }
  }
  std::vector<const Predicate*> terms;
  std::set<int> placed;  // the columns whose list is in `terms`
  for (const Predicate& c : children) {
    if (!Foldable(c) || per_column[c.column] < 2) {
      terms.push_back(&c);
    } else if (placed.insert(c.column).second) {
      terms.push_back(&lists[c.column]);
    }
  }
  AppendJoinedTerms(t, terms, " OR ", "0", b);
}

}  // namespace

void AppendPredicateSql(const TableSchema& t, const Predicate& p, SqlBuilder* b) {
  std::string col;
  if (p.column >= 0 && static_cast<size_t>(p.column) < t.columns.size()) {
    col = QuoteIdent(t.columns[p.column].name);
  }
  b->Append("(");
  switch (p.op) {
    case PredOp::kEq:
    case PredOp::kNe:
    case PredOp::kLt:
    case PredOp::kLte:
    case PredOp::kGt:
    case PredOp::kGte:
      b->Append(col).Append(ComparisonSql(p.op));
      b->AppendParam(ForColumn(t, p.column, p.value));
      break;
    case PredOp::kIn:
      AppendInList(t, p, col, b);
      break;
    case PredOp::kIsNull:
      b->Append(col).Append(" IS NULL");
      break;
    case PredOp::kPrefix: {
      // Every text starting with `prefix` lies in [prefix, upper): BINARY
      // collation is memcmp. `upper` may be invalid UTF-8; it is bound as
      // TEXT bytes and only compared, never returned. The empty prefix has
      // no upper bound: `col >= ''` is true for every text and, like any
      // comparison, unknown on a NULL cell (so NOT of it is unknown there
      // too, where `col IS NOT NULL` would make it true).
      const std::string& prefix = p.value.text();
      std::string upper = PrefixUpperBoundUtf8(prefix);
      b->Append(col).Append(" >= ").AppendParam(Value::Str(prefix));
      if (!upper.empty()) {
        b->Append(" AND ").Append(col).Append(" < ").AppendParam(Value::Str(std::move(upper)));
      }
      break;
    }
    case PredOp::kAnd:
      AppendJoined(t, p.children, " AND ", "1", b);
      break;
    case PredOp::kOr:
      AppendOr(t, p.children, b);
      break;
    case PredOp::kNot:
      b->Append("NOT ");
      if (p.children.empty()) {
        b->Append("NULL");
      } else {
        AppendPredicateSql(t, p.children[0], b);
      }
      break;
  }
  b->Append(")");
}

void AppendOrderBySql(const Query& q, SqlBuilder* b) {
  if (q.order.empty()) return;
  b->Append("ORDER BY ");
  for (size_t i = 0; i < q.order.size(); ++i) {
    if (i > 0) b->Append(", ");
    b->AppendIdent(q.table->columns[q.order[i].column].name);
    b->Append(q.order[i].desc ? " DESC" : " ASC");
  }
}

namespace {

// The rows after `pos` in the order terms i.. (terms before i being equal).
void AppendAfterFrom(const Query& q, const std::vector<Value>& pos, size_t i, SqlBuilder* b) {
  const OrderTerm& term = q.order[i];
  const std::string c = QuoteIdent(q.table->columns[term.column].name);
  const Value v = ForColumn(*q.table, term.column, pos[i]);
  const bool last = i + 1 == q.order.size();
  b->Append("(");
  if (!term.desc) {
    if (v.is_null()) {
      // Ascending, NULLs first: every non-null is after; among NULLs, the rest.
      b->Append(c).Append(" IS NOT NULL");
      if (!last) {
        b->Append(" OR (").Append(c).Append(" IS NULL AND ");
        AppendAfterFrom(q, pos, i + 1, b);
        b->Append(")");
      }
    } else {
      b->Append(c).Append(" > ").AppendParam(v);
      if (!last) {
        b->Append(" OR (").Append(c).Append(" = ").AppendParam(v).Append(" AND ");
        AppendAfterFrom(q, pos, i + 1, b);
        b->Append(")");
      }
    }
  } else {
    if (v.is_null()) {
      // Descending, NULLs last: only NULLs can follow, ordered by the rest.
      if (last) {
        b->Append("0");
      } else {
        b->Append(c).Append(" IS NULL AND ");
        AppendAfterFrom(q, pos, i + 1, b);
      }
    } else {
      b->Append(c).Append(" < ").AppendParam(v);
      b->Append(" OR ").Append(c).Append(" IS NULL");
      if (!last) {
        b->Append(" OR (").Append(c).Append(" = ").AppendParam(v).Append(" AND ");
        AppendAfterFrom(q, pos, i + 1, b);
        b->Append(")");
      }
    }
  }
  b->Append(")");
}

}  // namespace

void AppendAfterSql(const Query& q, const std::vector<Value>& position, SqlBuilder* b) {
  if (q.order.empty() || position.size() != q.order.size()) {
    b->Append("(1)");
    return;
  }
  // A range on the first term, implied by the expansion, lets SQLite seek an
  // index on it instead of scanning for the OR tree.
  const OrderTerm& first = q.order[0];
  const Column& col = q.table->columns[first.column];
  const Value v = ForColumn(*q.table, first.column, position[0]);
  b->Append("(");
  if (!v.is_null() && (!first.desc || !col.optional)) {
    b->AppendIdent(col.name).Append(first.desc ? " <= " : " >= ").AppendParam(v);
    b->Append(" AND ");
  }
  AppendAfterFrom(q, position, 0, b);
  b->Append(")");
}

}  // namespace onestore
