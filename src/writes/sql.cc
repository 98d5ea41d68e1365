#include "writes/sql.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "sqlite3.h"

namespace onestore {

const char kSqlOverflowMessage[] = "integer overflow";

namespace {

// onestore_add(a, b) and onestore_sub(a, b); sqlite3_user_data says which.
void ArithFunction(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  const bool is_sub = sqlite3_user_data(ctx) != nullptr;
  if (argc != 2) {
    sqlite3_result_error(ctx, "onestore_add/onestore_sub take two arguments", -1);
    return;
  }
  const int ta = sqlite3_value_type(argv[0]);
  const int tb = sqlite3_value_type(argv[1]);
  if (ta == SQLITE_NULL || tb == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return;
  }
  if (ta == SQLITE_INTEGER && tb == SQLITE_INTEGER) {
    const int64_t a = sqlite3_value_int64(argv[0]);
    const int64_t b = sqlite3_value_int64(argv[1]);
    int64_t r = 0;
    const bool overflow =
        is_sub ? __builtin_sub_overflow(a, b, &r) : __builtin_add_overflow(a, b, &r);
    if (overflow) {
      std::string msg = std::string(kSqlOverflowMessage) + ": " + std::to_string(a) +
                        (is_sub ? " - " : " + ") + std::to_string(b) +
                        " does not fit in a 64-bit int";
      sqlite3_result_error(ctx, msg.c_str(), static_cast<int>(msg.size()));
      return;
    }
    sqlite3_result_int64(ctx, r);
    return;
  }
  const double a = sqlite3_value_double(argv[0]);
  const double b = sqlite3_value_double(argv[1]);
  sqlite3_result_double(ctx, is_sub ? a - b : a + b);
}

// A literal as the expression's type stores it: a num binds as a double.
Value Literal(const Expr& e) {
  if (e.type == Type::kNum && e.value.type() == Type::kInt) {
    return Value::Num(static_cast<double>(e.value.int_value()));
  }
  return e.value;
}

// One checked add or sub over (x, y) without functions of ours, as the CASE
// of a scalar subquery whose FROM names both operands once: NULL if either is
// NULL (SQL's + and - do that), SQLite's own "integer overflow" error (abs()
// of the smallest int raises it; `x * 0` keeps it from being folded as a
// constant) when two ints would not fit in 64 bits, and x + y or x - y
// otherwise (a double when either is one), as onestore_add and onestore_sub
// compute.
const char* PlainArithCase(bool is_sub) {
  return is_sub ? "typeof(x) = 'integer' AND typeof(y) = 'integer' AND ((y < 0 AND x > "
                  "9223372036854775807 + y) OR (y > 0 AND x < -9223372036854775807 - 1 + y)) "
                  "THEN abs(-9223372036854775807 - 1 + x * 0) ELSE x - y END"
                : "typeof(x) = 'integer' AND typeof(y) = 'integer' AND ((y > 0 AND x > "
                  "9223372036854775807 - y) OR (y < 0 AND x < -9223372036854775807 - 1 - y)) "
                  "THEN abs(-9223372036854775807 - 1 + x * 0) ELSE x + y END";
}

// A left fold: fn(fn(a, b), c) ...
void AppendFold(const TableSchema& t, const Expr& e, const char* fn, SqlBuilder* b) {
  if (e.args.empty()) {
    b->Append("NULL");
    return;
  }
  if (!b->dialect().checked_arith_functions) {
    // (SELECT CASE ... END FROM (SELECT <left> AS x, <right> AS y)), nested
    // to the left: each operand appears once, so the text grows linearly.
    const bool is_sub = std::string_view(fn) == "onestore_sub";
    for (size_t i = 1; i < e.args.size(); ++i) {
      b->Append("(SELECT CASE WHEN ").Append(PlainArithCase(is_sub)).Append(" FROM (SELECT ");
    }
    AppendExprSql(t, e.args[0], b);
    for (size_t i = 1; i < e.args.size(); ++i) {
      b->Append(" AS x, ");
      AppendExprSql(t, e.args[i], b);
      b->Append(" AS y))");
    }
    return;
  }
  for (size_t i = 1; i < e.args.size(); ++i) b->Append(fn).Append("(");
  AppendExprSql(t, e.args[0], b);
  for (size_t i = 1; i < e.args.size(); ++i) {
    b->Append(", ");
    AppendExprSql(t, e.args[i], b);
    b->Append(")");
  }
}

// fn(a, b, ...) for a scalar SQL function of many arguments; one argument is
// the argument itself (SQLite's one-argument max()/min() are aggregates).
void AppendVariadic(const TableSchema& t, const Expr& e, const char* fn, SqlBuilder* b) {
  if (e.args.empty()) {
    b->Append("NULL");
    return;
  }
  if (e.args.size() == 1) {
    AppendExprSql(t, e.args[0], b);
    return;
  }
  b->Append(fn).Append("(");
  for (size_t i = 0; i < e.args.size(); ++i) {
    if (i > 0) b->Append(", ");
    AppendExprSql(t, e.args[i], b);
  }
  b->Append(")");
}

}  // namespace

Status RegisterSqlFunctions(sqlite3* db) {
  const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
  static int sub_marker = 1;
  int rc = sqlite3_create_function_v2(db, "onestore_add", 2, flags, nullptr, ArithFunction, nullptr,
                                      nullptr, nullptr);
  if (rc == SQLITE_OK) {
    rc = sqlite3_create_function_v2(db, "onestore_sub", 2, flags, &sub_marker, ArithFunction,
                                    nullptr, nullptr, nullptr);
  }
  if (rc != SQLITE_OK) {
    return Status::StorageFailed(std::string("registering SQL functions: ") + sqlite3_errmsg(db));
  }
  return Status::OK();
}

void AppendExprSql(const TableSchema& t, const Expr& e, SqlBuilder* b) {
  switch (e.op) {
    case ExprOp::kValue:
      b->AppendParam(Literal(e));
      return;
    case ExprOp::kCol:
      b->AppendIdent(t.columns[e.column].name);
      return;
    case ExprOp::kAdd:
      AppendFold(t, e, "onestore_add", b);
      return;
    case ExprOp::kSub:
      AppendFold(t, e, "onestore_sub", b);
      return;
    case ExprOp::kMax:
      AppendVariadic(t, e, "max", b);
      return;
    case ExprOp::kMin:
      AppendVariadic(t, e, "min", b);
      return;
    case ExprOp::kCoalesce:
      AppendVariadic(t, e, "coalesce", b);
      return;
    case ExprOp::kConcat:
      if (e.args.empty()) {
        b->AppendParam(Value::Str(""));
        return;
      }
      b->Append("(");
      for (size_t i = 0; i < e.args.size(); ++i) {
        if (i > 0) b->Append(" || ");
        AppendExprSql(t, e.args[i], b);
      }
      b->Append(")");
      return;
    case ExprOp::kReplacePrefix: {
      // substr counts characters of TEXT, and CodePointLength counts the same
      // characters (bytes that do not continue a UTF-8 sequence).
      const std::string c = QuoteIdent(t.columns[e.column].name);
      const std::string n = std::to_string(CodePointLength(e.from));
      b->Append("CASE WHEN substr(").Append(c).Append(", 1, ").Append(n).Append(") = ");
      b->AppendParam(Value::Str(e.from));
      b->Append(" THEN ").AppendParam(Value::Str(e.to));
      b->Append(" || substr(")
          .Append(c)
          .Append(", ")
          .Append(std::to_string(CodePointLength(e.from) + 1));
      b->Append(") ELSE ").Append(c).Append(" END");
      return;
    }
    case ExprOp::kWhen:
      b->Append("CASE WHEN ");
      if (e.cond) {
        AppendPredicateSql(t, *e.cond, b);
      } else {
        b->Append("0");
      }
      b->Append(" THEN ");
      if (!e.args.empty()) {
        AppendExprSql(t, e.args[0], b);
      } else {
        b->Append("NULL");
      }
      b->Append(" ELSE ");
      if (e.args.size() > 1) {
        AppendExprSql(t, e.args[1], b);
      } else {
        b->Append("NULL");
      }
      b->Append(" END");
      return;
  }
}

void AppendSetSql(const TableSchema& t, const std::vector<SetItem>& set, SqlBuilder* b) {
  for (size_t i = 0; i < set.size(); ++i) {
    if (i > 0) b->Append(", ");
    b->AppendIdent(t.columns[set[i].column].name).Append(" = ");
    AppendExprSql(t, set[i].expr, b);
  }
}

}  // namespace onestore
