#include "archive/archive.h"

#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include "documents/documents.h"
#include "query/query.h"
#include "sync/replica.h"
#include "values/json_text.h"
#include "writes/writes.h"

namespace onestore {
namespace {

// Each op of a record is an object of a kind the store writes.
Status CheckOpKinds(const Json& ops) {
  static const char* const kKinds[] = {"put",   "update",  "delete",     "table",      "alter",
                                       "index", "restore", "doc.create", "doc.change", "doc.retire"};
  for (size_t i = 0; i < ops.size(); ++i) {
    const Json& op = ops[i];
    auto kind = op.is_object() ? op.find("op") : op.end();
    bool known = false;
    if (op.is_object() && kind != op.end() && kind->is_string()) {
      for (const char* k : kKinds) known = known || *kind == k;
    }
    if (!known) {
      return Status::InvalidArgs("record.ops[" + std::to_string(i) + "]: " +
                                 (op.is_object() && kind != op.end() ? DescribeJson(*kind)
                                                                     : DescribeJson(op)) +
                                 " is not an op the store writes");
    }
  }
  return Status::OK();
}

// Calls `visit(line, number)` for each "\n"-ended line of `text` (number from 1).
template <typename Visit>
Status ForEachLine(std::string_view text, Visit visit) {
  int64_t number = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    if (end == std::string_view::npos) {
      return Status::InvalidArchive("archive: a line does not end with a newline: " +
                                    std::string(text.substr(0, 60)));
    }
    ONESTORE_RETURN_IF_ERROR(visit(text.substr(0, end), ++number));
    text.remove_prefix(end + 1);
  }
  return Status::OK();
}

// Applies `ops` in one backend transaction.
Status ApplyAll(Backend* backend, std::vector<Op>* ops) {
  ONESTORE_RETURN_IF_ERROR(backend->Begin());
  std::map<std::string, const TableSchema*, std::less<>> declared;
  for (Op& op : *ops) {
    const TableSchema* previous = nullptr;
    if (op.kind == OpKind::kTable) {
      auto d = declared.find(op.table->name);
      previous = d != declared.end() ? d->second : nullptr;
    }
    Status st = backend->Apply(&op, previous);
    if (!st.ok()) {
      backend->Rollback();
      return st;
    }
    if (op.kind == OpKind::kTable) declared[op.table->name] = op.table.get();
  }
  return backend->Commit();
}

}  // namespace

Status Archiver::CheckNew(const char* what) const {
  ONESTORE_RETURN_IF_ERROR(store_->CheckUsable(true));
  if (store_->head_ != 0) {
    return Status::InvalidArgs(std::string(what) + ": the store is not new (head " +
                               std::to_string(store_->head_) + ")");
  }
  return Status::OK();
}

Status Archiver::RowLines(const std::string& table, const std::string& cursor, int64_t limit,
                          std::string* lines, std::string* next) {
  ONESTORE_RETURN_IF_ERROR(store_->CheckUsable(false));
  const TableSchema* t;
  ONESTORE_RETURN_IF_ERROR(store_->catalog_.Lookup(table, "export", &t));
  if (limit < 1 || limit > 100000) {
    return Status::InvalidArgs("export: page size " + std::to_string(limit) +
                               " is not between 1 and 100000");
  }
  Query q;
  q.table = t;
  for (int k : t->key) q.order.push_back(OrderTerm{k, false});
  std::vector<Value> after;
  if (!cursor.empty()) ONESTORE_RETURN_IF_ERROR(DecodeCursor(q, cursor, &after));
  std::vector<Row> rows;
  PageBytes bytes;  // cut at kReadBytes: then `next` too
  ONESTORE_RETURN_IF_ERROR(
      store_->backend_->Page(q, cursor.empty() ? nullptr : &after, limit + 1, &rows, &bytes));
  const bool more = static_cast<int64_t>(rows.size()) > limit || bytes.cut;
  if (static_cast<int64_t>(rows.size()) > limit) rows.resize(limit);
  lines->clear();
  // The fingerprint's row encoding (ints as integers, also beyond 2^53),
  // except a json cell that holds a string or an integer beyond 2^53: it goes
  // as its JSON text in a string (AppendJson's rule for JS), which the
  // import reads back as JSON text (RestoreRows), so the string "12" comes
  // back as "12", not 12.
  for (const Row& row : rows) {
    lines->push_back('[');
    for (size_t i = 0; i < row.size(); ++i) {
      if (i) lines->push_back(',');
      row[i].AppendJson(lines, /*unsafe_int_as_string=*/row[i].type() == Type::kJson);
    }
    lines->append("]\n");
  }
  next->clear();
  if (more) *next = EncodeCursor(q, q.OrderValues(rows.back()));
  return Status::OK();
}

Status Archiver::RestoreTables(const std::string& tables_json) {
  ONESTORE_RETURN_IF_ERROR(CheckNew("import"));
  if (!store_->catalog_.All().empty()) {
    return Status::InvalidArgs("import: the store already has tables");
  }
  Json j;
  Status st = ParseJsonText(tables_json, "archive tables", &j);
  if (st.ok() && !j.is_array()) st = Status::InvalidArgs("the tables are not a list");
  std::vector<Op> ops;
  TableResolver tables(&store_->catalog_);
  if (st.ok()) {
    for (const Json& t : j) {
      if (!t.is_object() || !t.contains("op") || t["op"] != "table") {
        st = Status::InvalidArgs("a table record is not {\"op\":\"table\",...}: " +
                                 t.dump().substr(0, 80));
        break;
      }
    }
  }
  // The documents' own tables are the store's, not an owner's: they are
  // made as a document commit makes them, and must be exactly those.
  bool documents = false;
  bool restores = false;
  Json owners = Json::array();
  if (st.ok()) {
    for (const Json& t : j) {
      const Json* name = t.contains("table") ? &t["table"] : nullptr;
      const bool internal = name != nullptr && name->is_string() &&
                            IsStoreTable(name->get_ref<const std::string&>());
      if (!internal) {
        owners.push_back(t);
        continue;
      }
      const auto& want = *name == kDocumentsTable ? DocumentsTable()
                         : *name == kDeltasTable  ? DeltasTable()
                                                  : RestoresTable();
      if (t != want->ToJson()) {
        st = Status::InvalidArgs("the record of " + name->get<std::string>() +
                                 " is not the one this version keeps documents in");
        break;
      }
      if (want == RestoresTable()) {
        restores = true;
      } else {
        documents = true;
      }
    }
  }
  if (st.ok()) st = ParseOps(owners, &tables, &ops);
  if (!st.ok()) return Status::InvalidArchive("archive: the manifest's tables: " + st.message());
  std::vector<const std::shared_ptr<const TableSchema>*> own;
  if (documents) own = {&DocumentsTable(), &DeltasTable()};
  if (restores) own.push_back(&RestoresTable());
  for (const auto* t : own) {
    Op op;
    op.kind = OpKind::kTable;
    op.table = *t;
    ops.push_back(std::move(op));
  }
  store_->vector_cache_.DropAll();  // rows change outside the commit step
  ONESTORE_RETURN_IF_ERROR(ApplyAll(store_->backend_.get(), &ops));
  for (const Op& op : ops) store_->catalog_.Put(op.table);
  return Status::OK();
}

Status Archiver::RestoreRows(const std::string& table, const std::string& lines) {
  ONESTORE_RETURN_IF_ERROR(CheckNew("import"));
  std::shared_ptr<const TableSchema> t;
  for (const auto& s : store_->catalog_.All()) {
    if (s->name == table) t = s;
  }
  if (t == nullptr) {
    return Status::InvalidArchive("archive: rows of table \"" + table +
                                  "\", which the manifest does not declare");
  }
  // Each line is a row as the fingerprint encodes it: every column, in
  // order. Its cells are checked as a put's row is (ParseRow: each cell
  // against its column's type, no null in a column that is not optional),
  // straight into the row, with no op built in JSON first.
  std::vector<std::string> column_where;  // what a cell's error names
  for (const Column& c : t->columns) column_where.push_back("column \"" + c.name + "\"");
  std::vector<Op> ops;
  ONESTORE_RETURN_IF_ERROR(ForEachLine(lines, [&](std::string_view line, int64_t n) {
    auto where = [&] { return "archive: table \"" + table + "\", row line " + std::to_string(n); };
    Json cells;
    Status st = ParseJsonText(line, "row", &cells);
    if (st.ok() && (!cells.is_array() || cells.size() != t->columns.size())) {
      st = Status::InvalidArgs("expected an array of " + std::to_string(t->columns.size()) +
                               " cells");
    }
    if (!st.ok()) return Status::InvalidArchive(where() + ": " + st.message());
    Op put;
    put.kind = OpKind::kPut;
    put.table = t;
    put.row.resize(t->columns.size());
    for (size_t i = 0; i < t->columns.size(); ++i) {
      const Column& c = t->columns[i];
      // A json cell is encoded as the JSON text it stores; a put takes the value.
      if (c.type == Type::kJson && cells[i].is_string()) {
        Json value;
        Status vs = ParseJsonText(cells[i].get<std::string>(), "json cell", &value);
        if (!vs.ok()) {
          return Status::InvalidArchive(where() + ", " + column_where[i] + ": " + vs.message());
        }
        cells[i] = std::move(value);
      }
      Status vs = ValueFromJson(cells[i], c.type, column_where[i], &put.row[i], c.dims);
      if (vs.ok() && put.row[i].is_null() && !c.optional) {
        vs = Status::InvalidArgs("null in column \"" + c.name + "\", which is not optional");
      }
      if (!vs.ok()) return Status::InvalidArchive(where() + ": " + vs.message());
    }
    ops.push_back(std::move(put));
    return Status::OK();
  }));
  store_->vector_cache_.DropAll();  // rows change outside the commit step
  return ApplyAll(store_->backend_.get(), &ops);
}

Status Archiver::RestoreOutbox(const std::string& lines, int64_t head) {
  ONESTORE_RETURN_IF_ERROR(CheckNew("import"));
  if (head < 0) return Status::InvalidArchive("archive: head " + std::to_string(head) + " < 0");
  std::vector<std::pair<int64_t, std::string_view>> records;
  ONESTORE_RETURN_IF_ERROR(ForEachLine(lines, [&](std::string_view line, int64_t n) {
    Json r;
    Status st = ParseJsonText(line, "outbox record", &r);
    const int64_t want = records.empty() ? -1 : records.back().first + 1;
    if (st.ok() && (!r.is_object() || !r.contains("seq") || !r["seq"].is_number_integer())) {
      st = Status::InvalidArgs("not a record {seq, ...}");
    }
    if (st.ok() && (r["seq"].get<int64_t>() < 1 || (want > 0 && r["seq"].get<int64_t>() != want))) {
      st = Status::InvalidArgs("seq " + r["seq"].dump() + " out of order");
    }
    // The record's shape, as a replica checks it, and ops of known kinds:
    // store.at and a sync replay them later, and would fail there.
    if (st.ok()) st = CheckRecord(r, r["seq"].get<int64_t>(), "record");
    if (st.ok()) st = CheckOpKinds(r["ops"]);
    if (!st.ok()) {
      return Status::InvalidArchive("archive: outbox line " + std::to_string(n) + ": " +
                                    st.message());
    }
    // Kept as the archive wrote it, but for whitespace around the object: a
    // store's outbox record is the object's text, from "{" to "}".
    const size_t first = line.find_first_not_of(" \t\r\n");
    const size_t last = line.find_last_not_of(" \t\r\n");
    records.emplace_back(r["seq"].get<int64_t>(), line.substr(first, last - first + 1));
    return Status::OK();
  }));
  if (!records.empty() && records.back().first != head) {
    return Status::InvalidArchive("archive: the outbox ends at seq " +
                                  std::to_string(records.back().first) + ", the head is " +
                                  std::to_string(head));
  }
  if (head == 0) {
    if (!records.empty()) return Status::InvalidArchive("archive: outbox records at head 0");
    return Status::OK();
  }
  Backend* backend = store_->backend_.get();
  ONESTORE_RETURN_IF_ERROR(backend->Begin());
  if (records.empty()) {
    // The outbox was trimmed up to the head: the backend records a head with
    // a record, so one is written and trimmed right after.
    Status st = backend->OutboxStartsAfter(head - 1);
    if (st.ok()) st = backend->AppendOutbox(head, "{}");
    if (!st.ok()) {
      backend->Rollback();
      return st;
    }
    ONESTORE_RETURN_IF_ERROR(backend->Commit());
    int64_t removed = 0;
    ONESTORE_RETURN_IF_ERROR(backend->TrimOutbox(head, &removed));
  } else {
    Status first = backend->OutboxStartsAfter(records.front().first - 1);
    if (!first.ok()) {
      backend->Rollback();
      return first;
    }
    for (const auto& [seq, text] : records) {
      Status st = backend->AppendOutbox(seq, std::string(text));
      if (!st.ok()) {
        backend->Rollback();
        return st;
      }
    }
    ONESTORE_RETURN_IF_ERROR(backend->Commit());
  }
  store_->head_ = head;
  store_->vector_cache_.DropAll();
  return Status::OK();
}

}  // namespace onestore
