// RawSqlite: SQL run straight through onestore's own wasm SQLite, with no
// store logic. It is the "same SQL, raw" anchor of docs/performance.md and
// of the benchmarks: the same SQLite build, the same VFS, the same pragmas,
// so the difference to a store call is the store's own cost.
//
// Statements are prepared once and cached by their text; parameters come as
// one JSON array, rows go back as one JSON array: one crossing per call.
#include <emscripten/bind.h>
#include <sqlite3.h>

#include <map>
#include <string>

#include "values/value.h"

namespace onestore {
namespace {

class RawSqlite {
 public:
  ~RawSqlite() { close(); }

  std::string open(const std::string& path) {
    close();
    int rc =
        sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    return rc == SQLITE_OK ? std::string() : Error();
  }

  // Runs one or more statements without parameters (pragmas, DDL, BEGIN).
  std::string exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) == SQLITE_OK) return std::string();
    std::string out = std::string("!storage_failed ") + (err ? err : "error");
    sqlite3_free(err);
    return out;
  }

  // Runs one statement with JSON array parameters; returns the changes count.
  std::string run(const std::string& sql, const std::string& params) {
    sqlite3_stmt* st = nullptr;
    std::string e = Prepare(sql, params, &st);
    if (!e.empty()) return e;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return Error();
    return std::to_string(sqlite3_changes(db_));
  }

  // Runs one query with JSON array parameters; returns its rows as JSON arrays.
  std::string all(const std::string& sql, const std::string& params) {
    sqlite3_stmt* st = nullptr;
    std::string e = Prepare(sql, params, &st);
    if (!e.empty()) return e;
    std::string out = "[";
    int rc;
    bool first = true;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      if (!first) out.push_back(',');
      first = false;
      out.push_back('[');
      for (int i = 0, n = sqlite3_column_count(st); i < n; ++i) {
        if (i) out.push_back(',');
        switch (sqlite3_column_type(st, i)) {
          case SQLITE_INTEGER:
            out += std::to_string(sqlite3_column_int64(st, i));
            break;
          case SQLITE_FLOAT:
            Value::Num(sqlite3_column_double(st, i)).AppendJson(&out);
            break;
          case SQLITE_NULL:
            out += "null";
            break;
          default:
            AppendJsonString(
                std::string_view(reinterpret_cast<const char*>(sqlite3_column_text(st, i)),
                                 sqlite3_column_bytes(st, i)),
                &out);
        }
      }
      out.push_back(']');
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return Error();
    out.push_back(']');
    return out;
  }

  void close() {
    for (auto& [sql, st] : cache_) sqlite3_finalize(st);
    cache_.clear();
    if (db_) sqlite3_close(db_);
    db_ = nullptr;
  }

 private:
  std::string Error() const {
    return std::string("!storage_failed ") + (db_ ? sqlite3_errmsg(db_) : "not open");
  }

  std::string Prepare(const std::string& sql, const std::string& params, sqlite3_stmt** out) {
    if (!db_) return Error();
    auto it = cache_.find(sql);
    if (it == cache_.end()) {
      sqlite3_stmt* st = nullptr;
      if (sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &st, nullptr) !=
          SQLITE_OK) {
        return Error();
      }
      it = cache_.emplace(sql, st).first;
    }
    sqlite3_stmt* st = it->second;
    sqlite3_clear_bindings(st);
    Json p = Json::parse(params.empty() ? "[]" : params, nullptr, false);
    if (p.is_discarded() || !p.is_array()) return "!invalid/args params must be a JSON array";
    for (size_t i = 0; i < p.size(); ++i) {
      const Json& v = p[i];
      int k = static_cast<int>(i) + 1;
      if (v.is_number_integer()) {
        sqlite3_bind_int64(st, k, v.get<int64_t>());
      } else if (v.is_number()) {
        sqlite3_bind_double(st, k, v.get<double>());
      } else if (v.is_string()) {
        const std::string& s = v.get_ref<const std::string&>();
        sqlite3_bind_text(st, k, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
      } else if (v.is_boolean()) {
        sqlite3_bind_int(st, k, v.get<bool>() ? 1 : 0);
      } else if (v.is_null()) {
        sqlite3_bind_null(st, k);
      } else {
        std::string text = v.dump();
        sqlite3_bind_text(st, k, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
      }
    }
    *out = st;
    return std::string();
  }

  sqlite3* db_ = nullptr;
  std::map<std::string, sqlite3_stmt*> cache_;
};

}  // namespace
}  // namespace onestore

EMSCRIPTEN_BINDINGS(onestore_raw) {
  emscripten::class_<onestore::RawSqlite>("RawSqlite")
      .constructor<>()
      .function("open", &onestore::RawSqlite::open)
      .function("exec", &onestore::RawSqlite::exec)
      .function("run", &onestore::RawSqlite::run)
      .function("all", &onestore::RawSqlite::all)
      .function("close", &onestore::RawSqlite::close);
}
