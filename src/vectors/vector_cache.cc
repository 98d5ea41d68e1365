#include "vectors/vector_cache.h"

#include <cstring>

namespace onestore {

namespace {

// What a row costs besides its vector: its key (a vector of Values) and its
// entry in the key map, roughly.
constexpr int64_t kRowOverhead = 96;

}  // namespace

int64_t VectorCache::KeyBytes(const Key& key) {
  int64_t n = kRowOverhead;
  for (const Value& v : key) n += static_cast<int64_t>(sizeof(Value) + v.text().size());
  return n;
}

const VectorCache::Column* VectorCache::Find(const std::shared_ptr<const TableSchema>& t,
                                             int column, int64_t head) {
  if (columns_.empty()) return nullptr;
  if (head != head_) {
    DropAll();
    return nullptr;
  }
  auto table = columns_.find(t->name);
  if (table == columns_.end()) return nullptr;
  auto c = table->second.find(column);
  if (c == table->second.end()) return nullptr;
  if (c->second->table != t) {  // the table changed shape since
    DropTable(t->name);
    return nullptr;
  }
  return c->second.get();
}

bool VectorCache::StartBuild(const std::shared_ptr<const TableSchema>& t, int column,
                             Builder* out) {
  if (budget_ <= 0) return false;
  auto tried = too_big_.find(t->name);
  if (tried != too_big_.end()) {
    for (const auto& [schema, col] : tried->second) {
      if (schema == t && col == column) return false;
    }
  }
  out->cache_ = this;
  out->column_ = std::make_unique<Column>();
  out->column_->table = t;
  out->column_->column = column;
  out->column_->width = static_cast<size_t>(t->columns[column].dims) * 4;
  // The room left: what other columns of other tables hold stays.
  int64_t held = used_;
  auto table = columns_.find(t->name);
  if (table != columns_.end()) {
    auto c = table->second.find(column);
    if (c != table->second.end()) held -= c->second->bytes;
  }
  out->room_ = budget_ - held;
  return true;
}

bool VectorCache::Builder::Add(const Key& key, const Value& vector) {
  if (!column_) return false;
  Column* c = column_.get();
  const int64_t cost = static_cast<int64_t>(c->width) + KeyBytes(key);
  if (c->bytes + cost > room_) {
    // It does not fit: remembered for this schema, so that later searches
    // do not copy up to the budget again (a change of the table's schema,
    // or DropAll, tries again).
    cache_->too_big_[c->table->name].emplace_back(c->table, c->column);
    column_.reset();
    return false;
  }
  c->data.insert(c->data.end(), vector.text().begin(), vector.text().end());
  c->keys.push_back(key);
  c->bytes += cost;
  return true;
}

void VectorCache::Builder::Finish(int64_t head) {
  if (!column_) return;
  VectorCache* cache = cache_;
  if (cache->head_ != head) cache->DropAll();
  cache->head_ = head;
  auto& slot = cache->columns_[column_->table->name][column_->column];
  if (slot) cache->used_ -= slot->bytes;
  cache->used_ += column_->bytes;
  slot = std::move(column_);
  ++cache->builds_;
}

bool VectorCache::Column::IndexOf(const Key& key, size_t* i) const {
  if (at.size() != keys.size()) {
    at.clear();
    for (size_t k = 0; k < keys.size(); ++k) at.emplace(keys[k], k);
  }
  auto hit = at.find(key);
  if (hit == at.end()) return false;
  *i = hit->second;
  return true;
}

void VectorCache::Set(Column* c, const Key& key, const Value* vector) {
  size_t ignored;
  c->IndexOf(key, &ignored);  // makes the map
  const bool has = vector != nullptr && vector->type() == Type::kVector &&
                   vector->text().size() == c->width;
  auto hit = c->at.find(key);
  if (hit != c->at.end()) {
    const size_t i = hit->second;
    if (has) {  // a new vector for a held row
      std::memcpy(c->data.data() + i * c->width, vector->text().data(), c->width);
      return;
    }
    // The row is gone or its vector is null: the last row moves into its place.
    const size_t last = c->keys.size() - 1;
    const int64_t cost = static_cast<int64_t>(c->width) + KeyBytes(key);
    if (i != last) {
      std::memcpy(c->data.data() + i * c->width, c->data.data() + last * c->width, c->width);
      c->keys[i] = std::move(c->keys[last]);
      c->at[c->keys[i]] = i;
    }
    c->at.erase(hit);
    c->keys.pop_back();
    c->data.resize(last * c->width);
    c->bytes -= cost;
    used_ -= cost;
    return;
  }
  if (!has) return;
  const int64_t cost = static_cast<int64_t>(c->width) + KeyBytes(key);
  c->data.insert(c->data.end(), vector->text().begin(), vector->text().end());
  c->keys.push_back(key);
  c->at.emplace(key, c->keys.size() - 1);
  c->bytes += cost;
  used_ += cost;
}

void VectorCache::ApplyCommitted(
    const std::vector<Op>& ops, int64_t head,
    const std::function<Status(const TableSchema&, const Key&, std::optional<Row>*)>& get) {
  if (columns_.empty()) {
    head_ = head;
    return;
  }
  if (head_ != head - 1) {  // a commit it did not see
    DropAll();
    head_ = head;
    return;
  }
  head_ = head;
  for (const Op& op : ops) {
    if (op.kind == OpKind::kRestore || op.kind == OpKind::kDocument) continue;  // no rows of owners' tables
    if (!op.table) continue;
    // A table that did not fit may fit once rows are gone.
    if (op.kind == OpKind::kDelete || op.kind == OpKind::kDeleteWhere) too_big_.erase(op.table->name);
    auto table = columns_.find(op.table->name);
    if (table == columns_.end()) continue;
    switch (op.kind) {
      case OpKind::kPut:
        SetRow(&table->second, KeyOf(*op.table, op.row), &op.row);
        break;
      case OpKind::kDelete:
        SetRow(&table->second, op.key, nullptr);
        break;
      case OpKind::kUpdate: {
        // The row as committed (later ops of this commit on the same key
        // set it again, so reading the final row here is right).
        std::optional<Row> row;
        if (!get(*op.table, op.key, &row).ok()) {
          DropTable(op.table->name);
          break;
        }
        SetRow(&table->second, op.key, row ? &*row : nullptr);
        break;
      }
      default:  // a bulk op, a table, alter or index record
        DropTable(op.table->name);
        continue;
    }
    if (used_ > budget_) DropTable(op.table->name);
  }
}

void VectorCache::SetRow(std::map<int, std::unique_ptr<Column>>* columns, const Key& key,
                         const Row* row) {
  for (auto& [column, c] : *columns) Set(c.get(), key, row ? &(*row)[column] : nullptr);
}

void VectorCache::DropTable(const std::string& name) {
  auto table = columns_.find(name);
  if (table != columns_.end()) {
    for (auto& [column, c] : table->second) used_ -= c->bytes;
    columns_.erase(table);
  }
  too_big_.erase(name);
}

void VectorCache::DropAll() {
  columns_.clear();
  too_big_.clear();
  used_ = 0;
}

}  // namespace onestore
