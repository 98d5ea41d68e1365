// VectorCache: the vectors of a table's vector column held in the core, one
// contiguous array of float32 with the rows' keys, so that nearest on a
// SQLite store (file, OPFS, Durable Object) scores them without reading every
// BLOB through SQLite on each query. docs/architecture.md, "The vector cache",
// says when it is built, how commits keep it correct and what it costs.
//
// A Store owns one (src/commit/store.h). It holds a column only while it is
// exactly what the committed rows hold at the store's head:
// - built by the first nearest without a where on the column, during the
//   scan that query makes anyway (Build), and only if it fits the budget;
// - kept by the commit step (ApplyCommitted, after COMMIT succeeded): a put
//   sets the key's vector from the row written, a delete by key removes it,
//   an update by key reads the row again; any other op on the table (a bulk
//   op, a table, alter or index record) drops the table's columns;
// - dropped whole by every other path that writes rows (a replica's batch,
//   an archive's import, a snapshot copied in: DropAll), and whenever the
//   head or the table's schema it was built at is not the store's.
// A failed commit never reaches it, so a rollback leaves it as it was.
#ifndef ONESTORE_VECTORS_VECTOR_CACHE_H_
#define ONESTORE_VECTORS_VECTOR_CACHE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onestore/status.h"
#include "schema/schema.h"
#include "values/value.h"
#include "writes/writes.h"

namespace onestore {

class VectorCache {
 public:
  // One cached column: row i's vector is bytes [i * width, (i+1) * width) of
  // `data`, its key keys[i]. Rows whose vector is null are not held.
  struct Column {
    std::shared_ptr<const TableSchema> table;  // the schema it was built at
    int column = -1;
    size_t width = 0;  // bytes per vector: 4 * dims
    std::vector<char> data;
    std::vector<Key> keys;
    // key -> index, made on first use (a commit's change, a search with a
    // where).
    mutable std::map<Key, size_t, ValueListLess> at;
    // The index of `key`'s vector, or false when the row has none held.
    bool IndexOf(const Key& key, size_t* i) const;
    int64_t bytes = 0;  // what it counts against the budget
  };

  // `budget` bytes for every column together; 0 holds nothing.
  explicit VectorCache(int64_t budget = 0) : budget_(budget) {}

  int64_t budget() const { return budget_; }
  // The bytes held now (data and keys, estimated), for tests and docs.
  int64_t bytes() const { return used_; }
  // How many times a column was built (tests: a search answered from the
  // cache builds nothing).
  int64_t builds() const { return builds_; }

  // The column, if held for schema `t` at `head`; a stale one is dropped.
  const Column* Find(const std::shared_ptr<const TableSchema>& t, int column, int64_t head);

  // A column being built: Add each row's key and vector, then Finish. Add
  // returns false (and the build is abandoned) once it would pass the budget.
  class Builder {
   public:
    bool Add(const Key& key, const Value& vector);
    // Keeps the column at `head`, unless the build was abandoned.
    void Finish(int64_t head);

   private:
    friend class VectorCache;
    VectorCache* cache_ = nullptr;
    std::unique_ptr<Column> column_;
    int64_t room_ = 0;
  };
  // Starts a build of (t, column), or returns false when the cache holds
  // nothing (budget 0) or the column did not fit before at this schema.
  bool StartBuild(const std::shared_ptr<const TableSchema>& t, int column, Builder* out);

  // Applies a committed commit's ops, in order, at its new `head`. `get`
  // reads a committed row by key (for an update by key).
  void ApplyCommitted(const std::vector<Op>& ops, int64_t head,
                      const std::function<Status(const TableSchema&, const Key&,
                                                 std::optional<Row>*)>& get);

  // Forgets every column (and every "did not fit").
  void DropAll();

  // True when the cache holds a column of `table`: ApplyCommitted then reads
  // the rows of the commit's puts to that table.
  bool Holds(std::string_view table) const { return columns_.find(table) != columns_.end(); }

 private:
  void DropTable(const std::string& name);
  void Set(Column* c, const Key& key, const Value* vector);
  void SetRow(std::map<int, std::unique_ptr<Column>>* columns, const Key& key, const Row* row);
  static int64_t KeyBytes(const Key& key);

  int64_t budget_;
  int64_t used_ = 0;
  int64_t builds_ = 0;
  int64_t head_ = -1;  // the head every held column is valid at
  // By table name, then column index.
  std::map<std::string, std::map<int, std::unique_ptr<Column>>, std::less<>> columns_;
  // Columns that did not fit the budget, by the schema they were tried at.
  std::map<std::string, std::vector<std::pair<std::shared_ptr<const TableSchema>, int>>,
           std::less<>>
      too_big_;
};

}  // namespace onestore

#endif  // ONESTORE_VECTORS_VECTOR_CACHE_H_
