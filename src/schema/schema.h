// Schema: tables, columns, keys and indexes.
//
// A table is declared by a `table` record (the wire format's
// {"op":"table", ...}); the same record, replayed on a replica, creates the
// same table. Every index ends with the primary key, so every order is total.
#ifndef ONESTORE_SCHEMA_SCHEMA_H_
#define ONESTORE_SCHEMA_SCHEMA_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "onestore/status.h"
#include "values/value.h"

namespace onestore {

struct Column {
  std::string name;
  Type type = Type::kStr;
  bool optional = false;     // null allowed
  bool has_default = false;  // `def` is used when a put omits the column
  Value def;
};

struct Index {
  std::string name;
  std::vector<int> columns;  // declared columns, then the key columns not among them
};

struct TableSchema {
  std::string name;  // "<type>/<name>" or "<host>:<type>/<name>"
  int64_t version = 1;
  std::vector<Column> columns;
  std::vector<int> key;        // column positions of the primary key
  std::vector<Index> indexes;  // secondary indexes, in declared order

  // Position of a column, or -1.
  int ColumnIndex(std::string_view name) const;
  // True if the key is a single int column (tx.mintId needs that).
  bool HasIntKey() const;
  // The record that declares this table: {"op":"table","table":...}.
  Json ToJson() const;
  // Same columns, key and indexes (the version may differ).
  bool SameShape(const TableSchema& o) const;
};

// Parses and checks a table record ({"op":"table","table":t,"version":v,
// "columns":{name:{"type":..,"optional"?:..,"default"?:..}},"key":[..],
// "indexes":{name:[cols]}}). Fails with invalid/args naming the bad part:
// unknown type, json column in a key or index, unknown column, empty key.
Status ParseTableSchema(const Json& j, const std::string& where, TableSchema* out);

// The tables a store knows, by name.
class Catalog {
 public:
  const TableSchema* Find(std::string_view name) const;
  std::shared_ptr<const TableSchema> FindShared(std::string_view name) const;
  // Finds the table or fails with invalid/args "unknown table <name>".
  Status Lookup(std::string_view name, const std::string& where, const TableSchema** out) const;
  void Put(std::shared_ptr<const TableSchema> t);
  std::vector<std::shared_ptr<const TableSchema>> All() const;

 private:
  std::map<std::string, std::shared_ptr<const TableSchema>, std::less<>> tables_;
};

}  // namespace onestore

#endif  // ONESTORE_SCHEMA_SCHEMA_H_
