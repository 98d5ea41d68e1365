#include "backends/sqlite/list_table.h"

#include <cstdint>
#include <new>
#include <string>
#include <string_view>

#include "sqlite3.h"
#include "values/json_text.h"
#include "values/value.h"

namespace onestore {
namespace {

// Column numbers of the table's declaration below.
constexpr int kValueColumn = 0;
constexpr int kListColumn = 1;  // the hidden argument

// One scan: the parsed array and where it is.
struct ListCursor {
  sqlite3_vtab_cursor base;  // first, as SQLite requires
  Json items;
  size_t at = 0;
};

// Declares the table `declaration` and makes its (stateless) vtab.
int NewTable(sqlite3* db, const char* declaration, sqlite3_vtab** out) {
  int rc = sqlite3_declare_vtab(db, declaration);
  if (rc != SQLITE_OK) return rc;
  auto* vtab = static_cast<sqlite3_vtab*>(sqlite3_malloc(sizeof(sqlite3_vtab)));
  if (vtab == nullptr) return SQLITE_NOMEM;
  *vtab = sqlite3_vtab{};
  *out = vtab;
  return SQLITE_OK;
}

int Connect(sqlite3* db, void*, int, const char* const*, sqlite3_vtab** out, char**) {
  int rc = NewTable(db, "CREATE TABLE x(value, list HIDDEN)", out);
  if (rc == SQLITE_OK) sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  return rc;
}

int Disconnect(sqlite3_vtab* vtab) {
  sqlite3_free(vtab);
  return SQLITE_OK;
}

// The list argument must be given (onestore_list(?)); without it there is
// nothing to scan.
int BestIndex(sqlite3_vtab*, sqlite3_index_info* info) {
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    if (c.iColumn == kListColumn && c.op == SQLITE_INDEX_CONSTRAINT_EQ) {
      if (!c.usable) return SQLITE_CONSTRAINT;
      info->aConstraintUsage[i].argvIndex = 1;
      info->aConstraintUsage[i].omit = 1;
      info->estimatedCost = 1.0;
      info->estimatedRows = 100;
      return SQLITE_OK;
    }
  }
  return SQLITE_CONSTRAINT;
}

int Open(sqlite3_vtab*, sqlite3_vtab_cursor** out) {
  auto* cursor = new (std::nothrow) ListCursor();
  if (cursor == nullptr) return SQLITE_NOMEM;
  *out = &cursor->base;
  return SQLITE_OK;
}

int Close(sqlite3_vtab_cursor* base) {
  delete reinterpret_cast<ListCursor*>(base);
  return SQLITE_OK;
}

int Filter(sqlite3_vtab_cursor* base, int, const char*, int argc, sqlite3_value** argv) {
  auto* cursor = reinterpret_cast<ListCursor*>(base);
  cursor->items = Json::array();
  cursor->at = 0;
  if (argc < 1 || sqlite3_value_type(argv[0]) == SQLITE_NULL) return SQLITE_OK;
  const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(argv[0]));
  const std::string_view json(text == nullptr ? "" : text,
                              static_cast<size_t>(sqlite3_value_bytes(argv[0])));
  bool too_deep = false;
  if (!TryParseJsonText(json, 2, &cursor->items, &too_deep) || !cursor->items.is_array()) {
    sqlite3_free(base->pVtab->zErrMsg);
    base->pVtab->zErrMsg = sqlite3_mprintf("onestore_list: expected a JSON array of scalars");
    cursor->items = Json::array();
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

int Next(sqlite3_vtab_cursor* base) {
  ++reinterpret_cast<ListCursor*>(base)->at;
  return SQLITE_OK;
}

int Eof(sqlite3_vtab_cursor* base) {
  const auto* cursor = reinterpret_cast<ListCursor*>(base);
  return cursor->at >= cursor->items.size() ? 1 : 0;
}

int Column(sqlite3_vtab_cursor* base, sqlite3_context* ctx, int column) {
  const auto* cursor = reinterpret_cast<ListCursor*>(base);
  if (column != kValueColumn) {
    sqlite3_result_null(ctx);
    return SQLITE_OK;
  }
  const Json& v = cursor->items[cursor->at];
  switch (v.type()) {
    case Json::value_t::number_integer:
      sqlite3_result_int64(ctx, v.get<int64_t>());
      break;
    case Json::value_t::number_unsigned: {
      const uint64_t u = v.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) sqlite3_result_int64(ctx, static_cast<int64_t>(u));
      else sqlite3_result_double(ctx, static_cast<double>(u));
      break;
    }
    case Json::value_t::number_float:
      sqlite3_result_double(ctx, v.get<double>());
      break;
    case Json::value_t::boolean:
      sqlite3_result_int(ctx, v.get<bool>() ? 1 : 0);
      break;
    case Json::value_t::string: {
      const std::string& s = v.get_ref<const std::string&>();
      sqlite3_result_text(ctx, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
      break;
    }
    default:
      sqlite3_result_null(ctx);
      break;
  }
  return SQLITE_OK;
}

int Rowid(sqlite3_vtab_cursor* base, sqlite3_int64* out) {
  *out = static_cast<sqlite3_int64>(reinterpret_cast<ListCursor*>(base)->at);
  return SQLITE_OK;
}

// Eponymous-only: no xCreate, so `CREATE VIRTUAL TABLE ... USING
// onestore_list` is refused and nothing about it is stored in the file.
const sqlite3_module kListModule = {
    /* iVersion */ 0,
    /* xCreate */ nullptr,
    /* xConnect */ Connect,
    /* xBestIndex */ BestIndex,
    /* xDisconnect */ Disconnect,
    /* xDestroy */ nullptr,
    /* xOpen */ Open,
    /* xClose */ Close,
    /* xFilter */ Filter,
    /* xNext */ Next,
    /* xEof */ Eof,
    /* xColumn */ Column,
    /* xRowid */ Rowid,
    /* xUpdate */ nullptr,
    /* xBegin */ nullptr,
    /* xSync */ nullptr,
    /* xCommit */ nullptr,
    /* xRollback */ nullptr,
    /* xFindFunction */ nullptr,
    /* xRename */ nullptr,
    /* xSavepoint */ nullptr,
    /* xRelease */ nullptr,
    /* xRollbackTo */ nullptr,
    /* xShadowName */ nullptr,
    /* xIntegrity */ nullptr,
};

#ifdef SQLITE_OMIT_INTEGRITY_CHECK
// pragma_quick_check(table, schema) with no rows: see RegisterEmptyQuickCheck.
int QuickCheckConnect(sqlite3* db, void*, int, const char* const*, sqlite3_vtab** out, char**) {
  return NewTable(db, "CREATE TABLE x(quick_check, arg HIDDEN, schema HIDDEN)", out);
}

// Takes the arguments (the hidden columns' equalities) and ignores them.
int QuickCheckBestIndex(sqlite3_vtab*, sqlite3_index_info* info) {
  int next = 1;
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    if (c.iColumn > 0 && c.op == SQLITE_INDEX_CONSTRAINT_EQ && c.usable) {
      info->aConstraintUsage[i].argvIndex = next++;
      info->aConstraintUsage[i].omit = 1;
    }
  }
  info->estimatedCost = 1.0;
  info->estimatedRows = 1;
  return SQLITE_OK;
}

int QuickCheckOpen(sqlite3_vtab*, sqlite3_vtab_cursor** out) {
  auto* cursor = static_cast<sqlite3_vtab_cursor*>(sqlite3_malloc(sizeof(sqlite3_vtab_cursor)));
  if (cursor == nullptr) return SQLITE_NOMEM;
  *cursor = sqlite3_vtab_cursor{};
  *out = cursor;
  return SQLITE_OK;
}

int QuickCheckClose(sqlite3_vtab_cursor* cursor) {
  sqlite3_free(cursor);
  return SQLITE_OK;
}

int QuickCheckFilter(sqlite3_vtab_cursor*, int, const char*, int, sqlite3_value**) { return SQLITE_OK; }
int QuickCheckNext(sqlite3_vtab_cursor*) { return SQLITE_OK; }
int QuickCheckEof(sqlite3_vtab_cursor*) { return 1; }
int QuickCheckColumn(sqlite3_vtab_cursor*, sqlite3_context* ctx, int) {
  sqlite3_result_null(ctx);
  return SQLITE_OK;
}
int QuickCheckRowid(sqlite3_vtab_cursor*, sqlite3_int64* out) {
  *out = 0;
  return SQLITE_OK;
}

const sqlite3_module kQuickCheckModule = {
    /* iVersion */ 0,
    /* xCreate */ nullptr,
    /* xConnect */ QuickCheckConnect,
    /* xBestIndex */ QuickCheckBestIndex,
    /* xDisconnect */ Disconnect,
    /* xDestroy */ nullptr,
    /* xOpen */ QuickCheckOpen,
    /* xClose */ QuickCheckClose,
    /* xFilter */ QuickCheckFilter,
    /* xNext */ QuickCheckNext,
    /* xEof */ QuickCheckEof,
    /* xColumn */ QuickCheckColumn,
    /* xRowid */ QuickCheckRowid,
    /* xUpdate */ nullptr,
    /* xBegin */ nullptr,
    /* xSync */ nullptr,
    /* xCommit */ nullptr,
    /* xRollback */ nullptr,
    /* xFindFunction */ nullptr,
    /* xRename */ nullptr,
    /* xSavepoint */ nullptr,
    /* xRelease */ nullptr,
    /* xRollbackTo */ nullptr,
    /* xShadowName */ nullptr,
    /* xIntegrity */ nullptr,
};
#endif  // SQLITE_OMIT_INTEGRITY_CHECK

}  // namespace

Status RegisterEmptyQuickCheck(sqlite3* db) {
#ifdef SQLITE_OMIT_INTEGRITY_CHECK
  if (sqlite3_create_module_v2(db, "pragma_quick_check", &kQuickCheckModule, nullptr, nullptr) !=
      SQLITE_OK) {
    return Status::StorageFailed(std::string("registering pragma_quick_check: ") + sqlite3_errmsg(db));
  }
#endif
  (void)db;
  return Status::OK();
}

Status RegisterListTable(sqlite3* db, const char* name) {
  if (sqlite3_create_module_v2(db, name, &kListModule, nullptr, nullptr) != SQLITE_OK) {
    return Status::StorageFailed(std::string("registering ") + name + ": " + sqlite3_errmsg(db));
  }
  return Status::OK();
}

}  // namespace onestore
