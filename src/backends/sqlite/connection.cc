// Helpers of connection.h shared by every SqlConnection.
#include "backends/sqlite/connection.h"

#include <cerrno>
#include <cstdlib>

namespace onestore {

int64_t SqlCellInt(const Value& cell, bool* ok) {
  if (ok != nullptr) *ok = true;
  switch (cell.type()) {
    case Type::kInt:
      return cell.int_value();
    case Type::kBool:
      return cell.bool_value() ? 1 : 0;
    case Type::kNum:
      return static_cast<int64_t>(cell.num_value());
    case Type::kStr: {
      const std::string& t = cell.text();
      char* end = nullptr;
      errno = 0;
      const long long v = std::strtoll(t.c_str(), &end, 10);
      if (errno == 0 && end != t.c_str() && *end == '\0') return static_cast<int64_t>(v);
      break;
    }
    default:
      break;
  }
  if (ok != nullptr) *ok = false;
  return 0;
}

double SqlCellNum(const Value& cell) {
  switch (cell.type()) {
    case Type::kNum:
      return cell.num_value();
    case Type::kInt:
      return static_cast<double>(cell.int_value());
    case Type::kStr:
      return std::strtod(cell.text().c_str(), nullptr);
    default:
      return 0;
  }
}

Status SqlConnection::RunCheck(const std::string& sql, const std::vector<Value>& params,
                               const std::string& what, int64_t expect, const Status& mismatch) {
  SqlRows rows;
  ONESTORE_RETURN_IF_ERROR(Run(sql, params, what, &rows));
  bool ok = false;
  if (rows.size() == 0 || SqlCellInt(rows.at(0, 0), &ok) != expect || !ok) return mismatch;
  return Status::OK();
}

std::string IntResultSql(const SqlDialect& d, const std::string& expr) {
  if (!d.int_results_as_text) return expr;
  // A safe integer comes back as a number (a double holds it exactly, and
  // the host makes no string of it); any other as its decimal text.
  return "CASE WHEN " + expr + " BETWEEN -9007199254740991 AND 9007199254740991 THEN " + expr +
         " ELSE CAST(" + expr + " AS TEXT) END";
}

Status CheckHostLimits(const HostLimits& limits, const std::string& sql,
                       const std::vector<Value>& params, const std::string& what) {
  if (sql.size() > limits.max_statement_bytes) {
    return Status::Limit(what + ": the statement is " + std::to_string(sql.size()) +
                         " bytes of SQL, above this backend's limit of " +
                         std::to_string(limits.max_statement_bytes));
  }
  if (params.size() > limits.max_params) {
    return Status::Limit(what + ": the statement binds " + std::to_string(params.size()) +
                         " values, above this backend's limit of " +
                         std::to_string(limits.max_params) + " per statement");
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const Value& v = params[i];
    if ((v.type() == Type::kStr || v.type() == Type::kJson || v.type() == Type::kVector) &&
        v.text().size() > limits.max_value_bytes) {
      return Status::Limit(what + ": a value of " + std::to_string(v.text().size()) +
                           " bytes, above this backend's limit of " +
                           std::to_string(limits.max_value_bytes) + " bytes per value or row");
    }
  }
  return Status::OK();
}

Status HostSqlError(const std::string& message, const std::string& what) {
  const std::string msg = what + ": " + message;
  auto has = [&](const char* s) { return message.find(s) != std::string::npos; };
  if (message.rfind(kHostOverflowMessage, 0) == 0) return Status::InvalidArgs(msg);
  // A constraint is the input's, but for a durable store's _outbox_follows
  // (sqlite_backend.cc, Open), which says the file lost a commit.
  if ((has("SQLITE_CONSTRAINT") || has("constraint failed")) && !has("onestore:")) {
    return Status::InvalidArgs(msg);
  }
  // workerd ends SQLite's message with the code's name; its refusal of BEGIN
  // and SAVEPOINT names the transaction APIs instead.
  if (has("SQLITE_TOOBIG") || has("too many SQL variables") || has("state.storage.transaction")) {
    return Status::Limit(msg);
  }
  // The host's SQLite may be built with lower limits than ours (workerd's:
  // an expression tree at most 100 deep, so a set expression nested 60
  // levels compiles to SQL it refuses): a statement too big for the
  // platform, not a failing storage.
  if (has("Expression tree is too large") || has("too many terms in compound SELECT") ||
      has("too many arguments on function") || has("pattern too complex")) {
    return Status::Limit(msg);
  }
  return Status::StorageFailed(msg);
}

}  // namespace onestore
