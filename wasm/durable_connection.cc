// DurableConnection (durable_connection.h): SqlConnection over a Durable
// Object's ctx.storage.sql, reached through the imports of
// wasm/durable_library.js.
//
// The import list below and the functions in durable_library.js must stay in
// step: same names, same arguments, same answers.
#include "durable_connection.h"  // wasm/ sources include their neighbours by name

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "values/json_text.h"
#include "values/value.h"

extern "C" {
// Runs one statement: `params` is a JSON array (an int as a decimal string,
// which the SQL reads as CAST(? AS INTEGER); a BLOB as {"hex":"..."}). Returns a malloc'ed,
// NUL-terminated answer the caller frees: "[changes,[row...],...]" (changes
// only with count_changes, else 0), or "!" followed by the host's error text.
char* onestore_durable_run(int handle, const char* sql, const char* params, int count_changes);
// Runs SQL text of one or more statements without parameters; the answer as
// above ("[0]" on success).
char* onestore_durable_exec(int handle, const char* sql);
// 0 when the runtime has a transactionSync open around this call (the core's
// transaction joins it), -1 otherwise.
int onestore_durable_begin(int handle);
// Ends the core's transaction: commit 1 lets transactionSync commit when the
// call returns; 0 makes the runtime throw inside it, which rolls back.
void onestore_durable_end(int handle, int commit);
}

namespace onestore {

namespace {

// Takes ownership of a malloc'ed answer.
std::string TakeAnswer(char* p) {
  if (p == nullptr) return "!the durable runtime returned no answer";
  std::string s(p);
  std::free(p);
  return s;
}

void AppendParams(const std::vector<Value>& params, std::string* out) {
  out->push_back('[');
  for (size_t i = 0; i < params.size(); ++i) {
    if (i > 0) out->push_back(',');
    const Value& v = params[i];
    switch (v.type()) {
      case Type::kNull:
        out->append("null");
        break;
      case Type::kBool:
        out->append(v.bool_value() ? "\"1\"" : "\"0\"");
        break;
      case Type::kInt:
        out->push_back('"');
        out->append(std::to_string(v.int_value()));
        out->push_back('"');
        break;
      case Type::kNum:
        out->append(Json(v.num_value()).dump());
        break;
      case Type::kStr:
      case Type::kJson:
        AppendJsonString(v.text(), out);
        break;
      case Type::kVector: {
        // A BLOB: {"hex": "..."}, bound as an ArrayBuffer by durable_library.js.
        static const char kHex[] = "0123456789abcdef";
        out->append("{\"hex\":\"");
        for (unsigned char c : v.text()) {
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
        }
        out->append("\"}");
        break;
      }
    }
  }
  out->push_back(']');
}

// A JSON cell as the host returned it: null, a number (an integral one as an
// int), a string.
Value Cell(const Json& j) {
  if (j.is_null()) return Value();
  // JSON.stringify writes an integral double without a fraction, so 1e19 in a
  // num column arrives as digits beyond int64: keep those a double.
  if (j.is_number_unsigned()) {
    const uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return Value::Num(static_cast<double>(u));
    return Value::Int(static_cast<int64_t>(u));
  }
  if (j.is_number_integer()) return Value::Int(j.get<int64_t>());
  if (j.is_number()) return Value::Num(j.get<double>());
  if (j.is_string()) return Value::Str(j.get<std::string>());
  if (j.is_object() && j.contains("hex") && j["hex"].is_string()) {
    // A BLOB (a vector column's bytes), as durable_library.js writes it.
    const std::string& h = j["hex"].get_ref<const std::string&>();
    std::string bytes(h.size() / 2, '\0');
    auto nibble = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
    for (size_t i = 0; i < bytes.size(); ++i) {
      bytes[i] = static_cast<char>((nibble(h[2 * i]) << 4) | nibble(h[2 * i + 1]));
    }
    return Value::Vector(std::move(bytes));
  }
  return Value::Str(j.dump());
}

class DurableConnection : public SqlConnection {
 public:
  explicit DurableConnection(int64_t handle) : handle_(static_cast<int>(handle)) {}

  const SqlDialect& dialect() const override { return SqlDialect::HostBound(); }
  Status Open() override { return Status::OK(); }

  Status Run(const std::string& sql, const std::vector<Value>& params, const std::string& what,
             SqlRows* rows, bool count_changes) override {
    ONESTORE_RETURN_IF_ERROR(CheckHostLimits(limits_, sql, params, what));
    std::string p;
    AppendParams(params, &p);
    return Answer(
        TakeAnswer(onestore_durable_run(handle_, sql.c_str(), p.c_str(), count_changes ? 1 : 0)),
        what, rows);
  }

  Status Exec(const std::string& sql) override {
    ONESTORE_RETURN_IF_ERROR(CheckHostLimits(limits_, sql, {}, "running SQL"));
    return Answer(TakeAnswer(onestore_durable_exec(handle_, sql.c_str())), sql, nullptr);
  }

  Status Begin() override {
    if (in_tx_) return Status::InvalidArgs("durable: a transaction is already open");
    if (onestore_durable_begin(handle_) != 0) {
      return Status::StorageFailed(
          "durable: no ctx.storage.transactionSync around this write (the durable backend "
          "commits only through the store's own calls)");
    }
    in_tx_ = true;
    return Status::OK();
  }
  Status Commit() override {
    if (!in_tx_) return Status::StorageFailed("durable: COMMIT without a transaction");
    in_tx_ = false;
    onestore_durable_end(handle_, 1);
    return Status::OK();
  }
  void Rollback() override {
    if (!in_tx_) return;
    in_tx_ = false;
    onestore_durable_end(handle_, 0);
  }
  bool InTransaction() const override { return in_tx_; }
  Status Close() override {
    Rollback();
    return Status::OK();
  }

 private:
  Status Answer(const std::string& a, const std::string& what, SqlRows* rows) {
    if (!a.empty() && a[0] == '!') return HostSqlError(a.substr(1), what);
    // [changes, [cell, ...], ...]: two levels (a json cell is text), three
    // for a blob, which JSON.stringify writes as {}.
    Json j;
    bool too_deep = false;
    if (!TryParseJsonText(a, /*max_depth=*/3, &j, &too_deep) || !j.is_array() || j.empty()) {
      return Status::StorageFailed(what + ": the durable runtime answered " + a.substr(0, 80));
    }
    if (rows == nullptr) return Status::OK();
    rows->cells.clear();
    rows->columns = 0;
    rows->changes = j[0].is_number_integer() ? j[0].get<int64_t>() : 0;
    for (size_t r = 1; r < j.size(); ++r) {
      const Json& row = j[r];
      if (!row.is_array()) continue;
      rows->columns = row.size();
      for (const Json& cell : row) rows->cells.push_back(Cell(cell));
    }
    return Status::OK();
  }

  int handle_;
  bool in_tx_ = false;
  HostLimits limits_;
};

}  // namespace

std::unique_ptr<SqlConnection> NewDurableConnection(int64_t handle) {
  return std::make_unique<DurableConnection>(handle);
}

}  // namespace onestore
