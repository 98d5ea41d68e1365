// A SqlConnection that behaves as a Durable Object's sql.exec does, over a
// real SQLite (":memory:" through the sqlite3 C API), for native tests of the
// host-bound path: no onestore SQL functions, every number crossing as a JS
// double (ints bound as decimal text, the dialect's CAST(? AS INTEGER)),
// results that went through a double and back, the host's limits
// (CheckHostLimits) and its error texts ("<message>: SQLITE_<CODE>", read by
// HostSqlError). Begin/Commit/Rollback stand for transactionSync.
#ifndef ONESTORE_TESTS_CPP_HOST_BOUND_CONNECTION_H_
#define ONESTORE_TESTS_CPP_HOST_BOUND_CONNECTION_H_

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "backends/sqlite/connection.h"
#include "backends/sqlite/list_table.h"
#include "sqlite3.h"

namespace onestore {

class HostBoundTestConnection : public SqlConnection {
 public:
  ~HostBoundTestConnection() override { Close(); }

  const SqlDialect& dialect() const override { return SqlDialect::HostBound(); }

  Status Open() override {
    if (sqlite3_open(":memory:", &db_) != SQLITE_OK) return Status::StorageFailed("open");
    sqlite3_extended_result_codes(db_, 0);
    // A Durable Object's SQLite has json_each; this build of SQLite omits
    // its JSON functions, so the same flat-array table stands in for it.
    return RegisterListTable(db_, "json_each");
  }

  Status Run(const std::string& sql, const std::vector<Value>& params, const std::string& what,
             SqlRows* rows, bool count_changes) override {
    ++statements_;
    ONESTORE_RETURN_IF_ERROR(CheckHostLimits(limits_, sql, params, what));
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &s, nullptr);
    if (rc != SQLITE_OK) return Fail(rc, what, s);
    std::vector<std::string> texts;  // keeps bound text alive
    texts.reserve(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      const Value& v = params[i];
      const int at = static_cast<int>(i + 1);
      switch (v.type()) {
        case Type::kNull:
          sqlite3_bind_null(s, at);
          break;
        case Type::kInt:
          texts.push_back(std::to_string(v.int_value()));
          sqlite3_bind_text(s, at, texts.back().c_str(), -1, SQLITE_STATIC);
          break;
        case Type::kBool:
          texts.push_back(v.bool_value() ? "1" : "0");
          sqlite3_bind_text(s, at, texts.back().c_str(), -1, SQLITE_STATIC);
          break;
        case Type::kNum:
          sqlite3_bind_double(s, at, v.num_value());  // a JS number binds as REAL
          break;
        case Type::kStr:
        case Type::kJson:
          sqlite3_bind_text(s, at, v.text().data(), static_cast<int>(v.text().size()),
                            SQLITE_STATIC);
          break;
        case Type::kVector:  // an ArrayBuffer binds as a BLOB
          sqlite3_bind_blob(s, at, v.text().data(), static_cast<int>(v.text().size()),
                            SQLITE_STATIC);
          break;
      }
    }
    const int n = sqlite3_column_count(s);
    if (rows != nullptr) {
      rows->columns = static_cast<size_t>(n);
      rows->cells.clear();
    }
    for (;;) {
      rc = sqlite3_step(s);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return Fail(rc, what, s);
      if (rows == nullptr) continue;
      for (int c = 0; c < n; ++c) {
        switch (sqlite3_column_type(s, c)) {
          case SQLITE_NULL:
            rows->cells.emplace_back();
            break;
          case SQLITE_INTEGER:
          case SQLITE_FLOAT:
            rows->cells.push_back(ThroughJs(sqlite3_column_double(s, c)));
            break;
          case SQLITE_BLOB:  // an ArrayBuffer, as durable_library.js hands it over
            rows->cells.push_back(Value::Vector(
                std::string(static_cast<const char*>(sqlite3_column_blob(s, c)),
                            static_cast<size_t>(sqlite3_column_bytes(s, c)))));
            break;
          default:
            rows->cells.push_back(
                Value::Str(std::string(reinterpret_cast<const char*>(sqlite3_column_text(s, c)),
                                       static_cast<size_t>(sqlite3_column_bytes(s, c)))));
        }
      }
    }
    sqlite3_finalize(s);
    if (rows != nullptr && count_changes) rows->changes = sqlite3_changes64(db_);
    return Status::OK();
  }

  Status Exec(const std::string& sql) override {
    ++statements_;
    if (sql.size() > limits_.max_statement_bytes) return CheckHostLimits(limits_, sql, {}, sql);
    char* err = nullptr;
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
    if (rc == SQLITE_OK) return Status::OK();
    std::string m = std::string(err != nullptr ? err : "") + ": " + CodeName(rc);
    sqlite3_free(err);
    return HostSqlError(m, sql);
  }

  Status Begin() override {
    if (in_tx_) return Status::InvalidArgs("a transaction is already open");
    in_tx_ = true;
    return Exec("SAVEPOINT host_tx");  // what transactionSync does
  }
  Status Commit() override {
    in_tx_ = false;
    return Exec("RELEASE host_tx");
  }
  void Rollback() override {
    if (!in_tx_) return;
    in_tx_ = false;
    sqlite3_exec(db_, "ROLLBACK TO host_tx; RELEASE host_tx", nullptr, nullptr, nullptr);
  }
  bool InTransaction() const override { return in_tx_; }
  Status Close() override {
    if (db_ != nullptr) sqlite3_close_v2(db_);
    db_ = nullptr;
    return Status::OK();
  }

  int statements() const { return statements_; }
  sqlite3* db() const { return db_; }

 private:
  static const char* CodeName(int rc) {
    switch (rc & 0xFF) {
      case SQLITE_CONSTRAINT:
        return "SQLITE_CONSTRAINT";
      case SQLITE_TOOBIG:
        return "SQLITE_TOOBIG";
      default:
        return "SQLITE_ERROR";
    }
  }
  Status Fail(int rc, const std::string& what, sqlite3_stmt* s) {
    std::string m = std::string(sqlite3_errmsg(db_)) + ": " + CodeName(rc);
    sqlite3_finalize(s);
    return HostSqlError(m, what);
  }
  // A number as JSON carries it from JS: integral values as ints, others as
  // doubles; an integer beyond 2^53 has already lost its low bits.
  static Value ThroughJs(double d) {
    if (std::floor(d) == d && std::fabs(d) < 9.2e18) return Value::Int(static_cast<int64_t>(d));
    return Value::Num(d);
  }

  sqlite3* db_ = nullptr;
  bool in_tx_ = false;
  int statements_ = 0;
  HostLimits limits_;
};

}  // namespace onestore

#endif  // ONESTORE_TESTS_CPP_HOST_BOUND_CONNECTION_H_
