// Status: the result of every fallible call in the core. No exception crosses
// a layer; a call returns a Status (or fills an out-parameter and returns one).
//
// The error codes are defined once, in ONESTORE_ERROR_CODES below. The wasm
// binding exports this list, js/errors.js builds StoreError from it, and
// tests/js/errors.test.js checks that the JS list and docs/api.md agree with it.
#ifndef ONESTORE_ONESTORE_STATUS_H_
#define ONESTORE_ONESTORE_STATUS_H_

#include <string>
#include <utility>

namespace onestore {

// X(enumerator, "stable code string", "what it means")
#define ONESTORE_ERROR_CODES(X)                                                                 \
  X(kInvalidArgs, "invalid/args", "a call got a value it cannot take")                          \
  X(kInvalidCursor, "invalid/cursor",                                                           \
    "a cursor from another query, direction or table, or not a cursor")                         \
  X(kReadAfterBulk, "read_after_bulk",                                                          \
    "tx.get on a table after an updateWhere or deleteWhere in the same tx")                     \
  X(kStorageFailed, "storage_failed", "the backend failed during COMMIT; the store is stopped") \
  X(kFenced, "fenced", "another owner holds the store")                                         \
  X(kSchemaNewer, "schema/newer", "the stored table or value is newer than this code")          \
  X(kSyncGap, "sync/gap", "a batch starts ahead of the replica's head")                         \
  X(kSyncDiverged, "sync/diverged",                                                             \
    "a replayed op did not do what it did on the driver; the replica stops")                    \
  X(kNotFound, "not_found", "the row, table or record does not exist")                          \
  X(kClosed, "closed", "the store is closed")                                                   \
  X(kLimit, "limit",                                                                            \
    "a platform limit of the backend (a value, row or statement too big, too many "             \
    "parameters); nothing was committed")                                                     \
  X(kInvalidArchive, "invalid/archive",                                                         \
    "an archive that is not one onestore wrote, or was changed, cut or crafted; nothing was "   \
    "imported")                                                                                 \
  X(kUnauthorized, "unauthorized",                                                              \
    "a relay's authorize refused the request (no token, or one that may not read or drive)") \
  X(kLockTimeout, "lock/timeout",                                                               \
    "store.lock waited longer than its timeout for the named lock; the function did not run")

enum class Code {
  kOk = 0,
#define ONESTORE_ENUM_(name, str, doc) name,
  ONESTORE_ERROR_CODES(ONESTORE_ENUM_)
#undef ONESTORE_ENUM_
};

// The stable string of a code ("ok" for kOk).
const char* CodeString(Code code);

class Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }
  static Status InvalidArgs(std::string m) { return {Code::kInvalidArgs, std::move(m)}; }
  static Status InvalidCursor(std::string m) { return {Code::kInvalidCursor, std::move(m)}; }
  static Status ReadAfterBulk(std::string m) { return {Code::kReadAfterBulk, std::move(m)}; }
  static Status StorageFailed(std::string m) { return {Code::kStorageFailed, std::move(m)}; }
  static Status Fenced(std::string m) { return {Code::kFenced, std::move(m)}; }
  static Status SchemaNewer(std::string m) { return {Code::kSchemaNewer, std::move(m)}; }
  static Status SyncGap(std::string m) { return {Code::kSyncGap, std::move(m)}; }
  static Status SyncDiverged(std::string m) { return {Code::kSyncDiverged, std::move(m)}; }
  static Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status Closed(std::string m) { return {Code::kClosed, std::move(m)}; }
  static Status Limit(std::string m) { return {Code::kLimit, std::move(m)}; }
  static Status InvalidArchive(std::string m) { return {Code::kInvalidArchive, std::move(m)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "code: message", for logs and test failures.
  std::string ToString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

// Returns early from the enclosing function when `expr` is not OK.
#define ONESTORE_RETURN_IF_ERROR(expr) \
  do {                                 \
    ::onestore::Status _st = (expr);   \
    if (!_st.ok()) return _st;         \
  } while (0)

}  // namespace onestore

#endif  // ONESTORE_ONESTORE_STATUS_H_
