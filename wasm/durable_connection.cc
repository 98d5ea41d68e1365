// DurableConnection (durable_connection.h): SqlConnection over a Durable
// Object's ctx.storage.sql, reached through the imports of
// wasm/durable_library.js.
//
// The import list below and the functions in durable_library.js must stay in
// step: same names, same arguments, same answers.
#include "durable_connection.h"  // wasm/ sources include their neighbours by name

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backends/backend.h"
#include "onestore/heap.h"
#include "values/json_text.h"
#include "values/value.h"

extern "C" {
// Runs a batch of statements in order, inside the call. `batch` is binary
// (little-endian, as wasm is; wasm/ABI.md "The durable batch"): the mode
// (u32) and the entry count n (u32); n statement words (u32): the id the JS
// side keeps the statement's SQL under (bits 0-29), 1 << 30 when the SQL
// crosses here (the id's first crossing; id 0x3FFFFFFF: not kept, the cache
// is full), 1 << 31 for a check; then each SQL that crosses, in entry order:
// its length (u32) and its UTF-8 bytes; then each entry: its param count
// (u32), each param a tag and its value: 0 null; 1 an f64 (an int within
// ±(2^53 - 1), a bool as 1 or 0, a finite num); 2 a text: its start and end
// (u32 each) in UTF-16 units of `chars` decoded as one string (an int
// beyond 2^53 as its decimal text; the SQL reads CAST(? AS INTEGER)); 3 a
// BLOB, 4 a text that is not valid UTF-8: its length (u32) and its bytes;
// and after a check's params, its expected first cell as a text's start and
// end. `chars` is the UTF-8 bytes of every text of tag 2, one after another.
// The answer is a malloc'ed buffer the caller frees, its length (4 bytes)
// then its bytes, or the address 1 for "[0]" (mode 0; HostAnswer); for the
// last entry, binary (BinaryReader): '#', its changes (when mode & 2, else
// 0) and rows (when mode & 1); with mode & 4 (SqlRows::hold), 'H' and the
// same, the number of rows the JS side keeps after the columns, and the
// cells of the last two only; "!<n>!" and the host's error text when entry
// n (from 1) failed; "?<n>" when check n found another first cell (or no
// row). Nothing after a failing entry runs.
char* onestore_durable_batch(int handle, const char* batch, int batch_length,
                             const char* chars, int chars_length);
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

// A malloc'ed answer, owned: its length (4 bytes), its bytes; read in place
// and freed when this goes. The address 1 (never an allocation) is "[0]"
// without one.
class HostAnswer {
 public:
  explicit HostAnswer(char* p) : p_(p) {}
  HostAnswer(const HostAnswer&) = delete;
  HostAnswer& operator=(const HostAnswer&) = delete;
  ~HostAnswer() {
    if (reinterpret_cast<uintptr_t>(p_) > 1) std::free(p_);
  }

  std::string_view text() const {
    if (p_ == nullptr) return "!the durable runtime returned no answer";
    if (reinterpret_cast<uintptr_t>(p_) == 1) return "[0]";
    uint32_t n = 0;
    std::memcpy(&n, p_, 4);
    return std::string_view(p_ + 4, n);
  }

 private:
  char* p_;
};

// The largest int a JS number holds exactly (2^53 - 1).
constexpr int64_t kMaxSafeInt = 9007199254740991;

// Appends `v` as 4 bytes, little-endian (as wasm is).
void PutU32(uint32_t v, std::string* out) {
  char b[4];
  std::memcpy(b, &v, 4);
  out->append(b, 4);
}

// The UTF-16 units of `s` as TextDecoder reads it when it is valid UTF-8
// (one a sequence, two for a 4-byte one), else -1.
int64_t Utf16Units(std::string_view s) {
  const char* p = s.data();
  const char* const end = p + s.size();
  int64_t units = 0;
  while (p < end) {
    if (static_cast<unsigned char>(*p) < 0x80) {
      ++p;
      ++units;
      continue;
    }
    const int n = Utf8SequenceLength(p, end);
    if (n == 0) return -1;
    p += n;
    units += n == 4 ? 2 : 1;
  }
  return units;
}

// The texts of a batch's params: their UTF-8 bytes one after another, which
// JS decodes with one call, and their length in UTF-16 units so far.
struct BatchChars {
  std::string bytes;
  uint32_t units = 0;

  // Appends a text's start and end (u32 each) to `out` and its bytes here;
  // false (nothing appended) when it is not valid UTF-8.
  bool Append(std::string_view t, std::string* out) {
    const int64_t u = Utf16Units(t);
    if (u < 0) return false;
    PutU32(units, out);
    units += static_cast<uint32_t>(u);
    PutU32(units, out);
    bytes.append(t);
    return true;
  }
  void Clear() {
    bytes.clear();
    units = 0;
  }
};

// Appends the params in the batch's form (onestore_durable_batch): a tag and
// the value each, a text's bytes in `chars`. Returns the bytes put there.
size_t AppendParamList(const std::vector<Value>& params, std::string* out, BatchChars* chars) {
  const size_t before = chars->bytes.size();
  for (const Value& v : params) {
    switch (v.type()) {
      case Type::kNull:
        out->push_back(0);
        break;
      case Type::kBool:
      case Type::kInt:
      case Type::kNum: {
        double d = 0;
        if (v.type() == Type::kBool) {
          d = v.bool_value() ? 1 : 0;
        } else if (v.type() == Type::kNum) {
          d = v.num_value();
          if (!std::isfinite(d)) {  // as JSON writes it
            out->push_back(0);
            break;
          }
        } else {
          // A safe int as a number (the SQL reads CAST(? AS INTEGER));
          // beyond 2^53 as its decimal text, exact.
          const int64_t i = v.int_value();
          if (i < -kMaxSafeInt || i > kMaxSafeInt) {
            out->push_back(2);
            chars->Append(std::to_string(i), out);
            break;
          }
          d = static_cast<double>(i);
        }
        char b[9];
        b[0] = 1;
        std::memcpy(b + 1, &d, 8);
        out->append(b, 9);
        break;
      }
      case Type::kStr:
      case Type::kJson:
        out->push_back(2);
        if (chars->Append(v.text(), out)) break;
        out->back() = 4;
        PutU32(static_cast<uint32_t>(v.text().size()), out);
        out->append(v.text());
        break;
      case Type::kVector:
        // A BLOB: its bytes, bound as an ArrayBuffer by js/loader-workerd.js.
        out->push_back(3);
        PutU32(static_cast<uint32_t>(v.text().size()), out);
        out->append(v.text());
        break;
    }
  }
  return chars->bytes.size() - before;
}

// Reads a binary answer as js/loader-workerd.js writes it (`answerRows`): '#',
// the changes count (f64), the columns and the rows (u32 each), then each
// cell, a tag and its value: 0 null; 1 an int, 2 a num (an f64 each); 3 a
// text, 4 a BLOB (a u32 length and the bytes). Little-endian, as wasm is.
// For rows->hold, 'H', and the rows the JS side keeps (u32) before the rows
// given (the last of them, at most two). False when the text is not in that
// shape.
class BinaryReader {
 public:
  BinaryReader(std::string_view a, const std::string& what)
      : p_(a.data()), end_(a.data() + a.size()), what_(what) {}

  bool Read(SqlRows* rows) {
    rows->cells.clear();
    double changes = 0;
    uint32_t columns = 0, count = 0, held = 0;
    if (!Eat(rows->hold ? 'H' : '#') || !Take(&changes) || !Take(&columns) ||
        (rows->hold && !Take(&held)) || !Take(&count) || (rows->hold && held < count)) {
      return false;
    }
    rows->changes = static_cast<int64_t>(changes);
    rows->held = held;
    rows->columns = columns;
    const uint64_t cells = static_cast<uint64_t>(columns) * count;
    // Each cell is at least its tag.
    if (cells > static_cast<uint64_t>(end_ - p_)) return false;
    rows->cells.resize(cells);
    for (Value& cell : rows->cells) {
      if (p_ == end_) return false;
      const char tag = *p_++;
      double d = 0;
      uint32_t n = 0;
      switch (tag) {
        case 0:
          break;
        case 1:
        case 2:
          if (!Take(&d)) return false;
          cell = tag == 1 ? Value::Int(static_cast<int64_t>(d)) : Value::Num(d);
          break;
        case 3:
        case 4:
          if (!Take(&n) || n > static_cast<size_t>(end_ - p_)) return false;
          // A value above kReadBytes asks the heap before it is copied (as
          // the embedded connection's cells do): the copy and the answer's text.
          if (n > kReadBytes && !(no_room_ = ReadRoom(n, 3.0, what_)).ok()) return false;
          cell = tag == 3 ? Value::Str(std::string(p_, n)) : Value::Vector(std::string(p_, n));
          p_ += n;
          break;
        default:
          return false;
      }
    }
    return p_ == end_;
  }
  // Read's refusal of a value the heap has no room to copy, or OK.
  const Status& no_room() const { return no_room_; }

 private:
  bool Eat(char c) {
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  template <typename T>
  bool Take(T* out) {
    if (static_cast<size_t>(end_ - p_) < sizeof(T)) return false;
    std::memcpy(out, p_, sizeof(T));
    p_ += sizeof(T);
    return true;
  }

  const char* p_;
  const char* end_;
  const std::string& what_;
  Status no_room_;
};

// Statements go to the host in batches (onestore_durable_batch): inside a
// transaction the writes that answer nothing (the epoch check, puts, the
// outbox record, the head) wait in `queue_` and cross with the next
// statement that answers, or at the end of the commit's writes (Flush), so
// that a one-put commit is one crossing. Each put is a statement of its own
// (RunRow). The SQL text of a statement crosses once per handle; after that,
// its id.
class DurableConnection : public SqlConnection {
 public:
  explicit DurableConnection(int64_t handle) : handle_(static_cast<int>(handle)) {}

  const SqlDialect& dialect() const override { return SqlDialect::HostBound(); }
  Status Open() override { return Status::OK(); }

  Status Run(const std::string& sql, const std::vector<Value>& params, const std::string& what,
             SqlRows* rows, bool count_changes) override {
    ONESTORE_RETURN_IF_ERROR(CheckHostLimits(limits_, sql, params, what));
    Queue(sql, params, what);
    if (in_tx_ && rows == nullptr && !count_changes) return MaybeFlush();
    return Send((rows != nullptr ? (rows->hold ? 5 : 1) : 0) | (count_changes ? 2 : 0), rows);
  }

  // A put's row is a statement of its own: the head and the row, a text
  // that is the same for every put into the table, so it crosses once and
  // then as its id. Rows are not joined into multi-row INSERTs: in workerd
  // 10,000 puts ran in 54 ms one row a statement, 68 ms twenty rows a
  // statement and 105 ms two (docs/performance.md, "Issue 13, Durable
  // Objects, step nine").
  Status RunRow(const std::string& head, const std::string& row, std::vector<Value>* values,
                const std::string& what) override {
    const std::vector<Value>& params = *values;
    if (!in_tx_ || head.size() + row.size() > limits_.max_statement_bytes) {
      return Run(head + row, params, what, nullptr, false);
    }
    ONESTORE_RETURN_IF_ERROR(CheckHostLimits(limits_, std::string(), params, what));
    Entry& e = NextEntry();
    e.sql.assign(head).append(row);
    Fill(&e, params, what);
    return MaybeFlush();
  }

  Status RunCheck(const std::string& sql, const std::vector<Value>& params,
                  const std::string& what, int64_t expect, const Status& mismatch) override {
    ONESTORE_RETURN_IF_ERROR(CheckHostLimits(limits_, sql, params, what));
    Entry& e = Queue(sql, params, what);
    e.check = true;
    chars_.Append(std::to_string(expect), &e.params);  // ASCII: always appended
    e.mismatch = mismatch;
    if (in_tx_) return Status::OK();
    return Send(0, nullptr);
  }

  Status Flush() override { return Send(0, nullptr); }
  bool CanHoldRows() const override { return true; }

  Status Exec(const std::string& sql) override {
    ONESTORE_RETURN_IF_ERROR(CheckHostLimits(limits_, sql, {}, "running SQL"));
    ONESTORE_RETURN_IF_ERROR(Flush());
    const HostAnswer a(onestore_durable_exec(handle_, sql.c_str()));
    return Answer(a.text(), sql, nullptr);
  }

  Status Begin() override {
    if (in_tx_) return Status::InvalidArgs("durable: a transaction is already open");
    if (onestore_durable_begin(handle_) != 0) {
      return Status::StorageFailed(
          "durable: a write outside the store's own ctx.storage.transactionSync");
    }
    in_tx_ = true;
    return Status::OK();
  }
  Status Commit() override {
    if (!in_tx_) return Status::StorageFailed("durable: COMMIT without a transaction");
    Status s = Flush();
    in_tx_ = false;
    onestore_durable_end(handle_, s.ok() ? 1 : 0);
    return s;
  }
  void Rollback() override {
    Drop();
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
  // A statement waiting for the next crossing. The first `queued_` of
  // `queue_` are waiting; the rest are kept with their strings' room, so a
  // commit's statements are written without allocating once the first few
  // commits have grown them (issue 13, "Durable Objects, step eight").
  struct Entry {
    std::string sql;
    std::string params;  // in the batch's form (AppendParamList); a check's expected text after
    size_t param_count = 0;
    std::string what;
    bool check = false;
    Status mismatch;
  };

  // The next waiting entry: a kept one, or a new one. Its params are
  // emptied (Queue appends to them) and it is no check; its caller sets
  // every other field.
  Entry& NextEntry() {
    if (queued_ == queue_.size()) queue_.emplace_back();
    Entry& e = queue_[queued_++];
    e.params.clear();
    e.check = false;
    return e;
  }

  Entry& Queue(const std::string& sql, const std::vector<Value>& params, const std::string& what) {
    Entry& e = NextEntry();
    e.sql.assign(sql);
    Fill(&e, params, what);
    return e;
  }

  // An entry's params and `what`, after its SQL; counts its bytes.
  void Fill(Entry* e, const std::vector<Value>& params, const std::string& what) {
    const size_t text_bytes = AppendParamList(params, &e->params, &chars_);
    e->param_count = params.size();
    e->what.assign(what);
    queued_bytes_ += e->sql.size() + e->params.size() + text_bytes;
  }

  // A batch up to this size keeps its room for the next (a commit of a few
  // statements); a larger one (a transaction of many puts) gives it back.
  static constexpr size_t kKeptBatchBytes = 64 * 1024;
  void GiveRoomBack() {
    if (queue_.size() > 8) queue_.resize(8);
    for (Entry& e : queue_) {
      if (e.sql.capacity() + e.params.capacity() > kKeptBatchBytes / 8) e = Entry();
    }
    std::string().swap(sqls_);
    std::string().swap(batch_);
    std::string().swap(chars_.bytes);
  }

  // Nothing waits any more (the entries and the buffers keep their room).
  void Drop() {
    queued_ = 0;
    chars_.Clear();
    queued_bytes_ = 0;
  }

  // Sends the queue early when it has grown large (a transaction of many
  // puts), so that the batch stays a few MB at most.
  Status MaybeFlush() {
    constexpr size_t kMaxQueuedBytes = 4 << 20;
    if (queued_bytes_ < kMaxQueuedBytes || queued_ < 2) return Status::OK();
    return Send(0, nullptr);
  }

  // The statement word of an entry (onestore_durable_batch): the id the JS
  // side keeps its SQL under; on the id's first crossing, or without an id
  // once the cache is full, the SQL's length and bytes go to `sqls`.
  uint32_t StatementWord(const std::string& sql, std::string* sqls) {
    constexpr size_t kMaxCachedTexts = 1024;
    constexpr uint32_t kCrosses = 1u << 30;
    constexpr uint32_t kNotKept = kCrosses - 1;
    auto it = ids_.find(sql);
    if (it != ids_.end()) return static_cast<uint32_t>(it->second);
    PutU32(static_cast<uint32_t>(sql.size()), sqls);
    sqls->append(sql);
    if (ids_.size() >= kMaxCachedTexts) return kCrosses | kNotKept;
    const int id = static_cast<int>(ids_.size());
    ids_.emplace(sql, id);
    return kCrosses | static_cast<uint32_t>(id);
  }

  // Runs the queue in one crossing; `mode` asks for the last entry's rows
  // (1) and changes (2).
  Status Send(int mode, SqlRows* rows) {
    const size_t count = queued_;
    if (count == 0) return Status::OK();
    // The entries stay readable below (an answer names one); the next
    // statement queued starts a new batch.
    const Entry* const queue = queue_.data();
    std::string& sqls = sqls_;  // the SQL that crosses
    std::string& batch = batch_;
    sqls.clear();
    batch.clear();
    size_t room = 8 + 8 * count;
    for (size_t i = 0; i < count; ++i) room += queue[i].params.size();
    batch.reserve(room);
    PutU32(static_cast<uint32_t>(mode), &batch);
    PutU32(static_cast<uint32_t>(count), &batch);
    for (size_t i = 0; i < count; ++i) {
      PutU32(StatementWord(queue[i].sql, &sqls) | (queue[i].check ? 1u << 31 : 0), &batch);
    }
    batch.append(sqls);
    for (size_t i = 0; i < count; ++i) {
      PutU32(static_cast<uint32_t>(queue[i].param_count), &batch);
      batch.append(queue[i].params);
    }
    const HostAnswer answer(onestore_durable_batch(
        handle_, batch.data(), static_cast<int>(batch.size()), chars_.bytes.data(),
        static_cast<int>(chars_.bytes.size())));
    const size_t sent = batch.size() + chars_.bytes.size();
    Drop();
    Status s = Answered(answer.text(), queue, count, rows);
    if (sent > kKeptBatchBytes) GiveRoomBack();
    return s;
  }

  // What a batch's answer says: entry n of `queue` failed, or the last
  // entry's rows (Answer).
  Status Answered(std::string_view view, const Entry* queue, size_t count, SqlRows* rows) {
    if (!view.empty() && (view[0] == '!' || view[0] == '?')) {
      // "!<n>!message" or "?<n>": entry n (from 1) failed.
      const std::string a(view);
      char* end = nullptr;
      const long n = std::strtol(a.c_str() + 1, &end, 10);
      if (n >= 1 && static_cast<size_t>(n) <= count) {
        const Entry& e = queue[n - 1];
        if (a[0] == '?') return e.mismatch;
        if (end != nullptr && *end == '!') return HostSqlError(std::string(end + 1), e.what);
      }
      if (a[0] == '!') return HostSqlError(a.substr(1), queue[count - 1].what);
      return Status::StorageFailed(queue[count - 1].what + ": the durable runtime answered " +
                                   a.substr(0, 80));
    }
    return Answer(view, queue[count - 1].what, rows);
  }

  // The answer of a batch: "[0]", rows (BinaryReader), or the host's error.
  Status Answer(std::string_view a, const std::string& what, SqlRows* rows) {
    if (!a.empty() && a[0] == '!') return HostSqlError(std::string(a.substr(1)), what);
    if (rows == nullptr) {
      if (a == "[0]" || (!a.empty() && a[0] == '#')) return Status::OK();
    } else {
      BinaryReader reader(a, what);
      if (reader.Read(rows)) return Status::OK();
      if (!reader.no_room().ok()) {
        rows->cells.clear();
        return reader.no_room();
      }
    }
    return Status::StorageFailed(what + ": the durable runtime answered " +
                                 std::string(a.substr(0, 80)));
  }

  int handle_;
  bool in_tx_ = false;
  HostLimits limits_;
  std::vector<Entry> queue_;
  size_t queued_ = 0;  // the entries of queue_ that wait
  BatchChars chars_;  // the texts of the waiting entries' params
  std::string sqls_;  // Send's: the SQL texts that cross
  std::string batch_;  // Send's: the batch
  size_t queued_bytes_ = 0;
  std::unordered_map<std::string, int> ids_;
};

}  // namespace

std::unique_ptr<SqlConnection> NewDurableConnection(int64_t handle) {
  return std::make_unique<DurableConnection>(handle);
}

}  // namespace onestore
