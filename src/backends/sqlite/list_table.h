// onestore_list: a table-valued function over one JSON array, for the long
// inArray lists of the embedded SQLite (query/sql.h, SqlDialect::in_list_table).
//
//   SELECT value FROM onestore_list('[1, "a", true, 2.5, null]')
//
// yields one row per element, typed as json_each types them: an integer
// exactly (64-bit), a real, a text, true/false as 1/0, NULL. It stands in
// for SQLite's json_each, which the embedded build omits (SQLITE_OMIT_JSON:
// the download is ~14 KB gzipped smaller); a host's SQLite (a Durable
// Object's) keeps json_each.
#ifndef ONESTORE_BACKENDS_SQLITE_LIST_TABLE_H_
#define ONESTORE_BACKENDS_SQLITE_LIST_TABLE_H_

#include "onestore/status.h"

struct sqlite3;

namespace onestore {

// Registers the table on `db` (an eponymous-only virtual table) as `name`:
// onestore_list for the store; a test that stands in for a host's SQLite
// registers it as json_each, whose flat-array behaviour it shares. Call once
// per connection. Fails with storage_failed if SQLite refuses.
Status RegisterListTable(sqlite3* db, const char* name = "onestore_list");

// In a build without SQLite's integrity checks (the wasm core:
// SQLITE_OMIT_INTEGRITY_CHECK, cmake/sqlite_options.cmake), registers
// pragma_quick_check(table, schema) as a table of no rows. SQLite's ALTER
// TABLE ... ADD COLUMN on a STRICT table reads it to check the rows against
// the new column (a DEFAULT of the wrong type, a NULL in a NOT NULL column),
// and fails without it ("no such table"). The store's added columns need no
// such check: src/schema/ checks each default against its column's type
// and requires one for a column that is not optional. Elsewhere a no-op.
Status RegisterEmptyQuickCheck(sqlite3* db);

}  // namespace onestore

#endif  // ONESTORE_BACKENDS_SQLITE_LIST_TABLE_H_
