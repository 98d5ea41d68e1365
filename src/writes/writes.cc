#include "writes/writes.h"

#include <charconv>
#include <cstring>
#include <type_traits>
#include <utility>

#include "documents/documents.h"
#include "onestore/cold.h"
#include "onestore/kept.h"

namespace onestore {

const char* ExprOpName(ExprOp op) {
  switch (op) {
    case ExprOp::kValue:
      return "value";
    case ExprOp::kCol:
      return "col";
    case ExprOp::kAdd:
      return "add";
    case ExprOp::kSub:
      return "sub";
    case ExprOp::kMax:
      return "max";
    case ExprOp::kMin:
      return "min";
    case ExprOp::kConcat:
      return "concat";
    case ExprOp::kReplacePrefix:
      return "replacePrefix";
    case ExprOp::kCoalesce:
      return "coalesce";
    case ExprOp::kWhen:
      return "when";
  }
  return "?";
}

namespace {

bool ExprOpFromName(std::string_view n, ExprOp* op) {
  static const ExprOp kAll[] = {
      ExprOp::kValue, ExprOp::kCol,    ExprOp::kAdd,           ExprOp::kSub,      ExprOp::kMax,
      ExprOp::kMin,   ExprOp::kConcat, ExprOp::kReplacePrefix, ExprOp::kCoalesce, ExprOp::kWhen};
  for (ExprOp o : kAll) {
    if (n == ExprOpName(o)) {
      *op = o;
      return true;
    }
  }
  return false;
}

// Parses an expression whose result goes into a cell of type `want` of
// column `target`. A bare JSON value (not an object) is a literal.
ONESTORE_COLD Status ParseExpr(const Json& j, const TableSchema& t, int target, Type want,
                 const std::string& where, int depth, Expr* out) {
  if (depth >= kMaxNesting) {
    return Status::InvalidArgs(where + ": the expression nests deeper than " +
                               std::to_string(kMaxNesting) + " levels");
  }
  Expr e;
  e.type = want;
  const std::string& cname = t.columns[target].name;
  // A vector literal has the target column's length.
  const int dims = want == Type::kVector ? t.columns[target].dims : 0;
  if (!j.is_object() || j.size() != 1 || !ExprOpFromName(j.begin().key(), &e.op)) {
    if (j.is_object() && want != Type::kJson) {
      return Status::InvalidArgs(
          where + ": " + DescribeJson(j) +
          " is not a set expression (value, col, add, sub, max, min, concat, "
          "replacePrefix, coalesce, when)");
    }
    // A bare literal: value(v).
    e.op = ExprOp::kValue;
    ONESTORE_RETURN_IF_ERROR(ValueFromJson(j, want, where, &e.value, dims));
    *out = std::move(e);
    return Status::OK();
  }
  const Json& a = j.begin().value();
  const std::string w = where + "." + j.begin().key();
  auto need_list = [&](size_t min, size_t max) -> Status {
    if (!a.is_array() || a.size() < min || a.size() > max) {
      return Status::InvalidArgs(
          w + ": takes " + (min == max ? std::to_string(min) : std::to_string(min) + " or more") +
          " arguments, got " + DescribeJson(a));
    }
    return Status::OK();
  };
  auto parse_args = [&](Type arg_type) -> Status {
    for (size_t i = 0; i < a.size(); ++i) {
      Expr c;
      ONESTORE_RETURN_IF_ERROR(
          ParseExpr(a[i], t, target, arg_type, w + "[" + std::to_string(i) + "]", depth + 1, &c));
      e.args.push_back(std::move(c));
    }
    return Status::OK();
  };
  auto need_type = [&](std::initializer_list<Type> ok) -> Status {
    for (Type ty : ok) {
      if (ty == want) return Status::OK();
    }
    return Status::InvalidArgs(w + ": " + ExprOpName(e.op) + " cannot produce a " + TypeName(want) +
                               " value for column \"" + cname + "\"");
  };
  switch (e.op) {
    case ExprOp::kValue:
      ONESTORE_RETURN_IF_ERROR(ValueFromJson(a, want, w, &e.value, dims));
      break;
    case ExprOp::kCol: {
      if (!a.is_string())
        return Status::InvalidArgs(w + ": " + DescribeJson(a) + " is not a column name");
      e.column = t.ColumnIndex(a.get<std::string>());
      if (e.column < 0) {
        return Status::InvalidArgs(w + ": unknown column \"" + a.get<std::string>() +
                                   "\" in table \"" + t.name + "\"");
      }
      Type ct = t.columns[e.column].type;
      if (ct == Type::kVector && want == Type::kVector && t.columns[e.column].dims != dims) {
        return Status::InvalidArgs(w + ": column \"" + a.get<std::string>() + "\" is a vector of " +
                                   std::to_string(t.columns[e.column].dims) + ", but column \"" +
                                   cname + "\" needs " + std::to_string(dims));
      }
      if (ct != want) {
        return Status::InvalidArgs(w + ": column \"" + a.get<std::string>() + "\" is " +
                                   TypeName(ct) + ", but column \"" + cname + "\" needs " +
                                   TypeName(want));
      }
      break;
    }
    case ExprOp::kAdd:
    case ExprOp::kSub:
      ONESTORE_RETURN_IF_ERROR(need_type({Type::kInt}));
      ONESTORE_RETURN_IF_ERROR(need_list(2, 2));
      ONESTORE_RETURN_IF_ERROR(parse_args(want));
      break;
    case ExprOp::kMax:
    case ExprOp::kMin:
      ONESTORE_RETURN_IF_ERROR(need_type({Type::kInt, Type::kNum, Type::kStr}));
      ONESTORE_RETURN_IF_ERROR(need_list(1, 64));
      ONESTORE_RETURN_IF_ERROR(parse_args(want));
      break;
    case ExprOp::kConcat:
      ONESTORE_RETURN_IF_ERROR(need_type({Type::kStr}));
      ONESTORE_RETURN_IF_ERROR(need_list(1, 64));
      ONESTORE_RETURN_IF_ERROR(parse_args(want));
      break;
    case ExprOp::kCoalesce:
      ONESTORE_RETURN_IF_ERROR(need_list(1, 64));
      ONESTORE_RETURN_IF_ERROR(parse_args(want));
      break;
    case ExprOp::kReplacePrefix: {
      ONESTORE_RETURN_IF_ERROR(need_type({Type::kStr}));
      ONESTORE_RETURN_IF_ERROR(need_list(2, 2));
      Value from, to;
      ONESTORE_RETURN_IF_ERROR(ValueFromJson(a[0], Type::kStr, w + "[0]", &from));
      ONESTORE_RETURN_IF_ERROR(ValueFromJson(a[1], Type::kStr, w + "[1]", &to));
      if (from.is_null() || to.is_null()) {
        return Status::InvalidArgs(w + ": replacePrefix takes two strings, got " + DescribeJson(a));
      }
      e.column = target;
      e.from = from.text();
      e.to = to.text();
      break;
    }
    case ExprOp::kWhen: {
      ONESTORE_RETURN_IF_ERROR(need_list(3, 3));
      auto p = std::make_shared<Predicate>();
      ONESTORE_RETURN_IF_ERROR(ParsePredicateAt(a[0], t, w + "[0]", depth + 1, p.get()));
      e.cond = std::move(p);
      for (size_t i = 1; i < 3; ++i) {
        Expr c;
        ONESTORE_RETURN_IF_ERROR(
            ParseExpr(a[i], t, target, want, w + "[" + std::to_string(i) + "]", depth + 1, &c));
        e.args.push_back(std::move(c));
      }
      break;
    }
  }
  *out = std::move(e);
  return Status::OK();
}

ONESTORE_COLD Status ParseSet(const Json& j, const TableSchema& t, const std::string& where,
                std::vector<SetItem>* out) {
  if (!j.is_object() || j.empty()) {
    return Status::InvalidArgs(where + ": a set is a non-empty object {column: expression}, got " +
                               DescribeJson(j));
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string w = where + "." + it.key();
    SetItem item;
    item.column = t.ColumnIndex(it.key());
    if (item.column < 0) {
      return Status::InvalidArgs(w + ": unknown column \"" + it.key() + "\" in table \"" + t.name +
                                 "\"");
    }
    for (int k : t.key) {
      if (k == item.column) {
        return Status::InvalidArgs(w + ": key column \"" + it.key() +
                                   "\" cannot be set; delete the row and put it under its new key");
      }
    }
    const Column& c = t.columns[item.column];
    ONESTORE_RETURN_IF_ERROR(ParseExpr(it.value(), t, item.column, c.type, w, 0, &item.expr));
    if (item.expr.op == ExprOp::kValue && item.expr.value.is_null() && !c.optional) {
      return Status::InvalidArgs(w + ": column \"" + c.name +
                                 "\" is not optional and cannot be null");
    }
    out->push_back(std::move(item));
  }
  return Status::OK();
}

ONESTORE_COLD Status ParseRow(const Json& j, const TableSchema& t, const std::string& where, Row* out) {
  if (!j.is_object())
    return Status::InvalidArgs(where + ": a row must be an object, got " + DescribeJson(j));
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (t.ColumnIndex(it.key()) < 0) {
      return Status::InvalidArgs(where + ": unknown column \"" + it.key() + "\" in table \"" +
                                 t.name + "\"");
    }
  }
  Row row(t.columns.size());
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const Column& c = t.columns[i];
    auto it = j.find(c.name);
    std::string w = where + "." + c.name;
    if (it == j.end()) {
      if (c.has_default) {
        row[i] = c.def;
        continue;
      }
      if (c.optional) continue;
      return Status::InvalidArgs(where + ": column \"" + c.name + "\" of table \"" + t.name +
                                 "\" is missing (it is not optional and has no default)");
    }
    ONESTORE_RETURN_IF_ERROR(ValueFromJson(*it, c.type, w, &row[i], c.dims));
    if (row[i].is_null() && !c.optional) {
      return Status::InvalidArgs(w + ": null in column \"" + c.name + "\", which is not optional");
    }
  }
  *out = std::move(row);
  return Status::OK();
}

void AppendSet(const std::vector<SetItem>& set, const TableSchema& t, std::string* out) {
  out->push_back('{');
  for (size_t i = 0; i < set.size(); ++i) {
    if (i) out->push_back(',');
    AppendJsonString(t.columns[set[i].column].name, out);
    out->push_back(':');
    set[i].expr.AppendJson(t, out);
  }
  out->push_back('}');
}

void AppendKey(const Key& key, std::string* out) {
  out->push_back('[');
  for (size_t i = 0; i < key.size(); ++i) {
    if (i) out->push_back(',');
    key[i].AppendJson(out);
  }
  out->push_back(']');
}

}  // namespace

void Expr::AppendJson(const TableSchema& t, std::string* out) const {
  out->append("{\"");
  out->append(ExprOpName(op));
  out->append("\":");
  switch (op) {
    case ExprOp::kValue:
      value.AppendJson(out);
      break;
    case ExprOp::kCol:
      AppendJsonString(t.columns[column].name, out);
      break;
    case ExprOp::kReplacePrefix:
      out->push_back('[');
      AppendJsonString(from, out);
      out->push_back(',');
      AppendJsonString(to, out);
      out->push_back(']');
      break;
    case ExprOp::kWhen:
      out->push_back('[');
      cond->AppendJson(t, out);
      for (const Expr& a : args) {
        out->push_back(',');
        a.AppendJson(t, out);
      }
      out->push_back(']');
      break;
    default:
      out->push_back('[');
      for (size_t i = 0; i < args.size(); ++i) {
        if (i) out->push_back(',');
        args[i].AppendJson(t, out);
      }
      out->push_back(']');
  }
  out->push_back('}');
}

void Op::AppendJson(std::string* out) const {
  if (kind == OpKind::kDocument) {
    doc->AppendJson(out);
    return;
  }
  if (kind == OpKind::kTable) {
    out->append(table->ToJson().dump());
    return;
  }
  if (kind == OpKind::kRestore) {
    out->append(marker);
    return;
  }
  if (kind == OpKind::kAlter) {
    out->append(AlterJson(*table, *change).dump());
    return;
  }
  if (kind == OpKind::kIndex) {
    out->append(IndexChangeJson(*table, *change).dump());
    return;
  }
  const TableSchema& t = *table;
  static const char* kNames[] = {"put", "update", "delete", "update", "delete"};
  out->append("{\"op\":\"");
  out->append(kNames[static_cast<int>(kind)]);
  out->append("\",\"table\":");
  AppendJsonString(t.name, out);
  switch (kind) {
    case OpKind::kPut:
      out->append(",\"row\":");
      AppendRowObject(t, row, out);
      break;
    case OpKind::kUpdate:
      out->append(",\"key\":");
      AppendKey(key, out);
      out->append(",\"set\":");
      AppendSet(set, t, out);
      break;
    case OpKind::kDelete:
      out->append(",\"key\":");
      AppendKey(key, out);
      break;
    case OpKind::kUpdateWhere:
    case OpKind::kDeleteWhere:
      out->append(",\"where\":");
      if (where) {
        where->AppendJson(t, out);
      } else {
        out->append("null");
      }
      if (kind == OpKind::kUpdateWhere) {
        out->append(",\"set\":");
        AppendSet(set, t, out);
      }
      if (count >= 0) {
        out->append(",\"count\":");
        out->append(std::to_string(count));
      }
      break;
    case OpKind::kTable:
    case OpKind::kDocument:
    case OpKind::kAlter:
    case OpKind::kIndex:
    case OpKind::kRestore:
      break;
  }
  out->push_back('}');
}

Status TableResolver::Lookup(std::string_view name, const std::string& where,
                             std::shared_ptr<const TableSchema>* out) const {
  for (auto it = declared_.rbegin(); it != declared_.rend(); ++it) {
    if ((*it)->name == name) {
      *out = *it;
      return Status::OK();
    }
  }
  if (auto t = base_->FindShared(name)) {
    *out = std::move(t);
    return Status::OK();
  }
  // The documents' tables have one schema everywhere. A replica's batch may
  // create them (its first document op) and, in a later record of the same
  // batch, restore their rows, before its catalog has them.
  if (store_tables_ || restore_) {
    if (name == kDocumentsTable) {
      *out = DocumentsTable();
      return Status::OK();
    }
    if (name == kDeltasTable) {
      *out = DeltasTable();
      return Status::OK();
    }
    if (name == kRestoresTable) {
      *out = RestoresTable();
      return Status::OK();
    }
  }
  return Status::InvalidArgs(where + ": unknown table \"" + std::string(name) +
                             "\" (open it with owner.table(def) first)");
}

void TableResolver::Declare(std::shared_ptr<const TableSchema> t) {
  declared_.push_back(std::move(t));
}

ONESTORE_COLD Status TableResolver::CheckCaseTwin(std::string_view name, const std::string& where) const {
  const std::string folded = FoldName(name);
  std::string twin;
  for (const auto& t : declared_) {
    if (t->name != name && FoldName(t->name) == folded) twin = t->name;
  }
  if (twin.empty() && base_->Find(name) == nullptr) {
    if (const TableSchema* t = base_->FindCaseTwin(name)) twin = t->name;
  }
  if (twin.empty()) return Status::OK();
  return Status::InvalidArgs(where + ": table " + DescribeJson(Json(std::string(name))) +
                             " and table " + DescribeJson(Json(twin)) +
                             " differ only in letter case, which SQLite does not tell apart");
}

// The JSON op path: deletes, updates, tables and the puts the binary batch
// (fast_puts.cc) does not take; cold next to a put's.
ONESTORE_COLD Status ParseOp(const Json& j, TableResolver* tables, const std::string& where, Op* out) {
  if (!j.is_object())
    return Status::InvalidArgs(where + ": an op must be an object, got " + DescribeJson(j));
  auto op_it = j.find("op");
  if (op_it == j.end() || !op_it->is_string()) {
    return Status::InvalidArgs(where + ".op: missing (put, update, delete or table)");
  }
  const std::string& name = op_it->get_ref<const std::string&>();
  Op op;
  if (name == "table") {
    auto t = std::make_shared<TableSchema>();
    ONESTORE_RETURN_IF_ERROR(ParseTableSchema(j, where, t.get()));
    ONESTORE_RETURN_IF_ERROR(tables->CheckCaseTwin(t->name, where + ".table"));
    op.kind = OpKind::kTable;
    op.table = t;
    tables->Declare(t);
    *out = std::move(op);
    return Status::OK();
  }
  if (name == "restore") {
    if (!tables->restore()) {
      return Status::InvalidArgs(where + ".op: \"restore\" is written by store.restore only");
    }
    auto snap = j.find("snapshot");
    auto seq = j.find("seq");
    if (snap == j.end() || !snap->is_string() || seq == j.end() || !seq->is_number_integer() ||
        seq->get<int64_t>() < 0) {
      return Status::InvalidArgs(where + ": a restore op is {\"op\":\"restore\",\"snapshot\":id,"
                                 "\"seq\":n}, got " + DescribeJson(j));
    }
    op.kind = OpKind::kRestore;
    op.marker = j.dump();
    tables->AllowStoreTables();
    *out = std::move(op);
    return Status::OK();
  }
  if (IsDocOpName(name)) {
    op.kind = OpKind::kDocument;
    op.doc = std::make_shared<DocOp>();
    ONESTORE_RETURN_IF_ERROR(ParseDocOp(j, where, op.doc.get()));
    *out = std::move(op);
    return Status::OK();
  }
  auto table_it = j.find("table");
  if (table_it == j.end() || !table_it->is_string()) {
    return Status::InvalidArgs(where + ".table: missing table name");
  }
  if (table_it->get_ref<const std::string&>().compare(0, 1, "_") == 0 &&
      !tables->store_tables()) {
    // _documents and _deltas are written by document ops only.
    return Status::InvalidArgs(where + ".table: " + DescribeJson(*table_it) +
                               " is one of the store's own tables; write documents with doc ops");
  }
  ONESTORE_RETURN_IF_ERROR(
      tables->Lookup(table_it->get_ref<const std::string&>(), where + ".table", &op.table));
  if (name == "alter" || name == "index") {
    auto after = std::make_shared<TableSchema>();
    auto change = std::make_shared<SchemaChange>();
    if (name == "alter") {
      ONESTORE_RETURN_IF_ERROR(ParseAlter(j, op.table, where, after.get(), change.get()));
    } else {
      ONESTORE_RETURN_IF_ERROR(ParseIndexChange(j, op.table, where, after.get(), change.get()));
    }
    op.kind = name == "alter" ? OpKind::kAlter : OpKind::kIndex;
    op.table = after;
    op.change = change;
    tables->Declare(after);
    *out = std::move(op);
    return Status::OK();
  }
  const TableSchema& t = *op.table;
  auto has = [&](const char* k) { return j.find(k) != j.end(); };
  if (name == "put") {
    op.kind = OpKind::kPut;
    if (!has("row")) return Status::InvalidArgs(where + ".row: a put needs a row");
    ONESTORE_RETURN_IF_ERROR(ParseRow(j["row"], t, where + ".row", &op.row));
  } else if (name == "update" || name == "delete") {
    bool update = name == "update";
    if (has("key") && has("where")) {
      return Status::InvalidArgs(where + ": an " + name +
                                 " takes a key (one row) or a where (every matching row), "
                                 "not both");
    }
    if (has("key")) {
      op.kind = update ? OpKind::kUpdate : OpKind::kDelete;
      ONESTORE_RETURN_IF_ERROR(ParseKey(j["key"], t, where + ".key", &op.key));
    } else if (has("where")) {
      op.kind = update ? OpKind::kUpdateWhere : OpKind::kDeleteWhere;
      const Json& w = j["where"];
      if (!w.is_null()) {
        Predicate p;
        ONESTORE_RETURN_IF_ERROR(ParsePredicate(w, t, where + ".where", &p));
        op.where = std::move(p);
      }
      if (has("count")) {
        const Json& c = j["count"];
        if (!c.is_number_integer() || c.get<int64_t>() < 0) {
          return Status::InvalidArgs(where + ".count: " + DescribeJson(c) + " is not a row count");
        }
        op.count = c.get<int64_t>();
      }
    } else {
      return Status::InvalidArgs(where + ": an " + name + " needs a key or a where");
    }
    if (update) {
      if (!has("set")) return Status::InvalidArgs(where + ".set: an update needs a set");
      ONESTORE_RETURN_IF_ERROR(ParseSet(j["set"], t, where + ".set", &op.set));
    }
  } else {
    return Status::InvalidArgs(where + ".op: unknown op \"" + name +
                               "\" (put, update, delete, table, alter or index)");
  }
  *out = std::move(op);
  return Status::OK();
}

ONESTORE_COLD Status ParseOps(const Json& j, TableResolver* tables, std::vector<Op>* out) {
  if (!j.is_array())
    return Status::InvalidArgs("ops: must be a list of ops, got " + DescribeJson(j));
  if (out->empty()) out->reserve(j.size());  // (an exact reserve on a longer list defeats its growth)
  for (size_t i = 0; i < j.size(); ++i) {
    Op op;
    ONESTORE_RETURN_IF_ERROR(ParseOp(j[i], tables, "ops[" + std::to_string(i) + "]", &op));
    out->push_back(std::move(op));
  }
  return Status::OK();
}

Key KeyOf(const TableSchema& t, const Row& row) {
  Key k;
  k.reserve(t.key.size());
  for (int c : t.key) k.push_back(row[c]);
  return k;
}

void AppendRowObject(const TableSchema& t, const Row& row, std::string* out) {
  out->push_back('{');
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (i) out->push_back(',');
    AppendJsonString(t.columns[i].name, out);
    out->push_back(':');
    row[i].AppendJson(out);
  }
  out->push_back('}');
}

namespace {

// A put that AppendOpsJson writes with the run writer below: a complete row
// of its table.
bool IsRunPut(const Op& op) {
  return op.kind == OpKind::kPut && op.table != nullptr &&
         op.row.size() == op.table->columns.size();
}

// The digits (and sign) std::to_chars writes for i.
size_t IntJsonSize(int64_t i) {
  uint64_t u = i < 0 ? 0 - static_cast<uint64_t>(i) : static_cast<uint64_t>(i);
  size_t n = i < 0 ? 2 : 1;
  while (u >= 10) {
    u /= 10;
    ++n;
  }
  return n;
}

// The bytes Value::AppendJson (the record's form: no unsafe-int strings)
// writes for `v`. A num's and a vector's text is made here, by AppendJson,
// and kept in `side` for WriteCell.
size_t CellJsonSize(const Value& v, std::string* side) {
  switch (v.type()) {
    case Type::kNull:
      return 4;
    case Type::kBool:
      return v.bool_value() ? 4 : 5;
    case Type::kInt:
      return IntJsonSize(v.int_value());
    case Type::kStr:
      return JsonStringSize(v.text());
    case Type::kJson:
      return v.text().size();
    default: {
      const size_t at = side->size();
      v.AppendJson(side);
      return side->size() - at;
    }
  }
}

// Writes the `size` bytes (CellJsonSize's) of `v` at p; returns the end.
// A num's or a vector's are read from *side, which moves past them.
char* WriteCell(const Value& v, size_t size, const char** side, char* p) {
  switch (v.type()) {
    case Type::kNull:
      std::memcpy(p, "null", 4);
      return p + 4;
    case Type::kBool:
      std::memcpy(p, v.bool_value() ? "true" : "false", size);
      return p + size;
    case Type::kInt:
      return std::to_chars(p, p + size, v.int_value()).ptr;
    case Type::kStr:
      return WriteJsonString(v.text(), size, p);
    case Type::kJson:
      std::memcpy(p, v.text().data(), size);
      return p + size;
    default:
      std::memcpy(p, *side, size);
      *side += size;
      return p + size;
  }
}

// Whether S has libc++'s __resize_default_init (the wasm build's library):
// a resize that leaves the new bytes unwritten, as Abseil's
// STLStringResizeUninitialized uses it.
template <typename S, typename = void>
struct HasResizeDefaultInit : std::false_type {};
template <typename S>
struct HasResizeDefaultInit<S, std::void_t<decltype(std::declval<S&>().__resize_default_init(0))>>
    : std::true_type {};

// Resizes *s to n bytes, the new ones unwritten where the library can (the
// caller writes every one): a bulk's record is megabytes, and a resize's
// memset of them was a part of its time in wasm. Elsewhere a plain resize.
template <typename S>
void ResizeUninitialized(S* s, size_t n) {
  if constexpr (HasResizeDefaultInit<S>::value) {
    s->__resize_default_init(n);
  } else {
    s->resize(n);
  }
}

// AppendPutRun's buffers, kept from one run to the next with their room (a
// commit of one put allocated five times for them; issue 13, the fifteenth
// step).
ONESTORE_KEPT std::string run_pieces;
ONESTORE_KEPT std::vector<size_t> run_ends;
ONESTORE_KEPT std::vector<uint32_t> run_sizes;

// Appends ops[from, to), puts of one table with complete rows, each as
// Op::AppendJson writes it (a comma before each but the list's first op),
// with one resize of `out`: the texts' sizes first, then their bytes in
// place. A bulk transaction's record is mostly this: an append per piece
// was a call per piece in wasm.
void AppendPutRun(const std::vector<Op>& ops, size_t from, size_t to, bool last, std::string* out) {
  const TableSchema& t = *ops[from].table;
  const size_t n = t.columns.size();
  // The run's constant pieces: {"op":"put","table":<name>,"row":{"<c0>":
  // then ,"<c>": for each further column.
  std::string& pieces = run_pieces;
  pieces.assign("{\"op\":\"put\",\"table\":");
  AppendJsonString(t.name, &pieces);
  pieces.append(",\"row\":{");
  std::vector<size_t>& ends = run_ends;  // where each column's piece ends in `pieces`
  ends.resize(n);
  for (size_t c = 0; c < n; ++c) {
    if (c) pieces.push_back(',');
    AppendJsonString(t.columns[c].name, &pieces);
    pieces.push_back(':');
    ends[c] = pieces.size();
  }
  std::string side;  // nums' and vectors' texts
  // Each cell's size, in order: the writing pass reads them back rather
  // than scan each str for escapes (and count each int's digits) twice.
  std::vector<uint32_t>& sizes = run_sizes;
  ClearKeepingRoom(&sizes, 4096);
  sizes.reserve((to - from) * n);
  size_t total = (to - from) * (pieces.size() + 2) + (from == 0 ? to - from - 1 : to - from);
  for (size_t i = from; i < to; ++i) {
    for (const Value& v : ops[i].row) {
      const size_t size = CellJsonSize(v, &side);
      sizes.push_back(static_cast<uint32_t>(size));
      total += size;
    }
  }
  const size_t at = out->size();
  // The record's last run (a bulk load's whole record) gets exactly the
  // room it needs, with the record's closing "]}": growing by doubling
  // would leave the record, which the memory backend keeps as it is, with
  // up to twice its size (25,000 puts of the bench's rows: 4.8 MB of room
  // for 3 MB). Only the last: an exact reserve per run would copy the
  // record again for each of a commit's runs (issue 15's defect, under
  // libc++).
  if (last && out->capacity() < at + total + 2) out->reserve(at + total + 2);
  ResizeUninitialized(out, at + total);  // every byte is written below
  char* p = &(*out)[at];
  const char* side_at = side.data();
  const uint32_t* size = sizes.data();
  for (size_t i = from; i < to; ++i) {
    if (i) *p++ = ',';
    const Row& row = ops[i].row;
    size_t begin = 0;
    for (size_t c = 0; c < n; ++c) {
      std::memcpy(p, pieces.data() + begin, ends[c] - begin);
      p += ends[c] - begin;
      begin = ends[c];
      p = WriteCell(row[c], *size++, &side_at, p);
    }
    *p++ = '}';
    *p++ = '}';
  }
}

}  // namespace

void AppendOpsJson(const std::vector<Op>& ops, std::string* out) {
  out->push_back('[');
  for (size_t i = 0; i < ops.size();) {
    const Op& op = ops[i];
    if (!IsRunPut(op)) {
      if (i) out->push_back(',');
      op.AppendJson(out);
      ++i;
      continue;
    }
    size_t end = i + 1;
    while (end < ops.size() && ops[end].table == op.table && IsRunPut(ops[end])) ++end;
    AppendPutRun(ops, i, end, end == ops.size(), out);
    i = end;
  }
  out->push_back(']');
}

void AppendRowArray(const Row& row, std::string* out) {
  out->push_back('[');
  for (size_t i = 0; i < row.size(); ++i) {
    if (i) out->push_back(',');
    row[i].AppendJson(out, /*unsafe_int_as_string=*/true);
  }
  out->push_back(']');
}

}  // namespace onestore
