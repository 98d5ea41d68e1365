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
  int dims = 0;  // a vector column's float32 count (1 to kMaxVectorDims); 0 for the others
};

struct Index {
  std::string name;
  std::vector<int> columns;  // declared columns, then the key columns not among them
  size_t declared = 0;       // how many of `columns` were declared (the rest is the key suffix)
};

// The limits of names and shapes, the same on every backend (docs/api.md,
// "Names and limits"). A put binds one value per column, and a Durable
// Object's SQLite takes at most 100 bound values per statement, so a table
// has at most 100 columns (SQLite's own limit, SQLITE_MAX_COLUMN, is 2000).
constexpr size_t kMaxNameBytes = 128;
constexpr size_t kMaxColumns = 100;

// Checks one plain name: a host kind, an owner type, a table, column or index
// name. OK for 1 to kMaxNameBytes bytes of UTF-8 with no "/", ":", '"',
// control character (U+0000 to U+001F, U+007F) or U+FFFD (what a lone
// surrogate becomes on its way to UTF-8), and no leading "_" (the store's
// own tables) or "sqlite_" in any letter case (SQLite's). Fails with
// invalid/args naming `what` and the name.
Status CheckPlainName(std::string_view name, const std::string& what);

// Checks a full table name, "<type>/<name>" or "<host>:<type>/<name>", each
// part a plain name and the host not "session" (whose tables are
// "<type>/<name>"). Fails with invalid/args naming `where` and the name.
Status CheckTableName(std::string_view full, const std::string& where);

// Checks an owner's name, "<type>" or "<host>:<type>" as the owner part of a
// table name: each part a plain name, the host not "session" (whose owners
// are "<type>"). Fails with invalid/args naming `where` and the name.
Status CheckOwnerName(std::string_view owner, const std::string& where);

// The name with ASCII letters in lower case: SQLite compares identifiers so,
// so two names with the same fold are one table, column or index there.
std::string FoldName(std::string_view name);

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
// a name CheckTableName or CheckPlainName refuses, two columns or two indexes
// whose names differ only in letter case, more than kMaxColumns columns,
// unknown type, json column in a key or index, unknown column, empty key.
// An index keeps its declared columns (key columns among them) and appends
// the key columns it does not list. With `stored` (a record read back from a
// store's own file) the name rules and limits are not checked, so a store
// written before they existed still opens; its other checks stay.
Status ParseTableSchema(const Json& j, const std::string& where, TableSchema* out,
                        bool stored = false);

// A recorded change of a stored table (docs/formats.md, "Schema changes").
// An alter ({"op":"alter","table":t,"version":v,"drop":[..],"rename":{..},
// "add":{..}}) drops, then renames, then adds columns; an index change
// ({"op":"index","table":t,"version":v,"drop":[..],"create":{..}}) drops,
// then creates indexes. Both take a table from its stored shape `before` to
// a new one with a version at least as high.
struct SchemaChange {
  std::shared_ptr<const TableSchema> before;
  // alter
  std::vector<std::string> drop;                            // columns, by their old names
  std::vector<std::pair<std::string, std::string>> rename;  // old name -> new name
  std::vector<Column> add;                                  // appended after the others
  std::vector<int> source;  // per column of the new table: its position in `before`, or -1
  std::vector<std::string> dropped_indexes;  // indexes that used a dropped column, gone with it
  // index change
  std::vector<std::string> drop_indexes;
  std::vector<Index> create_indexes;  // positions in the new table
};

// Parses an alter against `before` into the new table `after` (version
// raised to the alter's, which must be higher). Fails with invalid/args
// naming the part: an unknown or key column dropped, a rename onto a column
// that exists, an added column that is not optional and has no default, a
// name CheckPlainName refuses, more than kMaxColumns columns. An index over
// a dropped column is dropped with it.
Status ParseAlter(const Json& j, std::shared_ptr<const TableSchema> before, const std::string& where,
                  TableSchema* after, SchemaChange* change);
// Parses an index change against `before` (its version may not be lower).
Status ParseIndexChange(const Json& j, std::shared_ptr<const TableSchema> before,
                        const std::string& where, TableSchema* after, SchemaChange* change);
// The wire records of a change, keys in order, only the parts it has.
Json AlterJson(const TableSchema& after, const SchemaChange& change);
Json IndexChangeJson(const TableSchema& after, const SchemaChange& change);
// The wire form of one column ({"type":..,"optional"?:true,"default"?:..}).
Json ColumnJson(const Column& c);

// The tables a store knows, by name.
class Catalog {
 public:
  const TableSchema* Find(std::string_view name) const;
  // A table whose name differs from `name` only in ASCII letter case
  // (FoldName), or nullptr: SQLite would take the two for one table.
  const TableSchema* FindCaseTwin(std::string_view name) const;
  std::shared_ptr<const TableSchema> FindShared(std::string_view name) const;
  // Finds the table or fails with invalid/args "unknown table <name>".
  Status Lookup(std::string_view name, const std::string& where, const TableSchema** out) const;
  void Put(std::shared_ptr<const TableSchema> t);
  std::vector<std::shared_ptr<const TableSchema>> All() const;

 private:
  std::map<std::string, std::shared_ptr<const TableSchema>, std::less<>> tables_;
  std::map<std::string, std::string, std::less<>> folded_;  // FoldName(name) -> name
};

}  // namespace onestore

#endif  // ONESTORE_SCHEMA_SCHEMA_H_
