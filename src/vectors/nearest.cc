#include "vectors/nearest.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "onestore/heap.h"
#include "values/json_text.h"
#include "values/vector.h"
#include "writes/writes.h"

namespace onestore {

Status ParseNearest(const Json& j, const TableSchema& t, const std::string& where,
                    NearestRequest* out) {
  if (!j.is_object()) {
    return Status::InvalidArgs(where + ": expected {column, vector, k, metric?, where?}, got " +
                               DescribeJson(j));
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k != "column" && k != "vector" && k != "k" && k != "metric" && k != "where") {
      return Status::InvalidArgs(where + ": unknown option \"" + k +
                                 "\" (nearest takes metric and where)");
    }
  }
  NearestRequest r;
  auto col = j.find("column");
  if (col == j.end() || !col->is_string()) {
    return Status::InvalidArgs(where + ".column: expected a column name, got " +
                               (col == j.end() ? std::string("none") : DescribeJson(*col)));
  }
  const std::string& name = col->get_ref<const std::string&>();
  r.column = t.ColumnIndex(name);
  if (r.column < 0) {
    return Status::InvalidArgs(where + ": unknown column \"" + name + "\" in table \"" + t.name +
                               "\"");
  }
  const Column& c = t.columns[r.column];
  if (c.type != Type::kVector) {
    return Status::InvalidArgs(where + ": column \"" + name + "\" is " + TypeName(c.type) +
                               "; nearest searches a vector column");
  }
  auto vec = j.find("vector");
  if (vec == j.end() || vec->is_null()) {
    return Status::InvalidArgs(where + ".vector: the query vector is missing (a vector of " +
                               std::to_string(c.dims) + " float32)");
  }
  ONESTORE_RETURN_IF_ERROR(ParseVectorJson(*vec, c.dims, where + ".vector", &r.vector));
  auto k = j.find("k");
  if (k == j.end() || !k->is_number_integer() || k->get<int64_t>() < 1 ||
      k->get<int64_t>() > kMaxNearestK) {
    return Status::InvalidArgs(where + ".k: " +
                               (k == j.end() ? std::string("none") : DescribeJson(*k)) +
                               " is not an integer from 1 to " + std::to_string(kMaxNearestK));
  }
  r.k = k->get<int64_t>();
  auto metric = j.find("metric");
  if (metric != j.end() && !metric->is_null()) {
    if (!metric->is_string() || !ParseMetric(metric->get_ref<const std::string&>(), &r.metric)) {
      return Status::InvalidArgs(where + ".metric: " + DescribeJson(*metric) +
                                 " is not a metric (use \"cosine\", \"l2\" or \"dot\")");
    }
  }
  Json qj = Json::object();
  auto w = j.find("where");
  if (w != j.end() && !w->is_null()) qj["where"] = *w;
  ONESTORE_RETURN_IF_ERROR(ParseQuery(qj, t, where, &r.query));
  *out = std::move(r);
  return Status::OK();
}

namespace {

struct Hit {
  double distance;
  Key key;
  Row row;
};

// Nearer first; equal distances by key.
bool Before(double d, const Key& key, const Hit& h) {
  if (d != h.distance) return d < h.distance;
  return CompareValueLists(key, h.key) < 0;
}

}  // namespace

namespace {

// The k best, kept in a max-heap on (distance, key): the front is the worst.
class TopK {
 public:
  explicit TopK(size_t k) : k_(k) { heap_.reserve(std::min<size_t>(k, 1024) + 1); }
  // Whether a row at distance d could enter (before its key is known).
  bool Admits(double d) const {
    return std::isfinite(d) && (heap_.size() < k_ || d <= heap_.front().distance);
  }
  void Offer(double d, const Key& key, const Row* row) {
    if (heap_.size() == k_) {
      if (!Before(d, key, heap_.front())) return;
      std::pop_heap(heap_.begin(), heap_.end(), Worse);
      heap_.pop_back();
    }
    heap_.push_back(Hit{d, key, row ? *row : Row()});
    std::push_heap(heap_.begin(), heap_.end(), Worse);
  }
  // Nearest first.
  std::vector<Hit>& Sorted() {
    std::sort_heap(heap_.begin(), heap_.end(), Worse);
    return heap_;
  }

 private:
  static bool Worse(const Hit& a, const Hit& b) { return Before(a.distance, a.key, b); }
  size_t k_;
  std::vector<Hit> heap_;
};

void WriteAnswer(const std::vector<Hit>& hits, std::string* answer) {
  answer->clear();
  *answer += "{\"rows\":[";
  for (size_t i = 0; i < hits.size(); ++i) {
    if (i) answer->push_back(',');
    AppendRowArray(hits[i].row, answer);
  }
  *answer += "],\"distances\":[";
  for (size_t i = 0; i < hits.size(); ++i) {
    if (i) answer->push_back(',');
    Value::Num(hits[i].distance).AppendJson(answer);
  }
  *answer += "]}";
}

// The rows of `hits`, read by key, then the answer. Each row asks the heap
// before it is kept (its text and cells, three times over: the row, its
// JSON in the answer, the answer's copy out), so k rows of megabytes each
// are refused with `limit` instead of aborting the core, a memory store's
// rows with it. Leaves *found false, nothing written, when a key has no
// row (a stale cache's).
Status AnswerHits(Backend* backend, const TableSchema& t, std::vector<Hit>& hits, bool* found,
                  std::string* answer) {
  *found = false;
  HeapSteps room(3);
  for (Hit& h : hits) {
    std::optional<Row> row;
    ONESTORE_RETURN_IF_ERROR(backend->Get(t, h.key, &row));
    if (!row) return Status::OK();
    if (!room.Take(RowHeapBytes(*row))) {
      return Status::Limit("nearest(" + t.name + "): its " + std::to_string(hits.size()) +
                           " rows need more of the wasm heap than is left (at " +
                           std::to_string(static_cast<int64_t>(room.taken()) >> 20) +
                           " MiB); ask for fewer rows (a smaller k)");
    }
    h.row = std::move(*row);
  }
  // The answer: at least the rows' text, in one block, and room for it
  // twice over (the copy out to JS).
  double text = 0;
  for (const Hit& h : hits) text += static_cast<double>(RowTextBytes(h.row) + 24 * h.row.size());
  if (text > static_cast<double>(kMaxJsStringBytes)) {
    return Status::Limit("nearest(" + t.name + "): its " + std::to_string(hits.size()) +
                         " rows are " + std::to_string(static_cast<int64_t>(text) >> 20) +
                         " MiB, longer than a JavaScript string may be; ask for fewer rows (a "
                         "smaller k)");
  }
  if (!HeapHasRoomFor(2 * text, text)) {
    return Status::Limit("nearest(" + t.name + "): its answer of " +
                         std::to_string(static_cast<int64_t>(text) >> 20) +
                         " MiB needs more of the wasm heap than is left; ask for fewer rows (a "
                         "smaller k)");
  }
  answer->reserve(static_cast<size_t>(text) + 64);
  WriteAnswer(hits, answer);
  if (answer->size() > kMaxJsStringBytes) {
    const size_t n = answer->size();
    answer->clear();
    answer->shrink_to_fit();
    return Status::Limit("nearest(" + t.name + "): its " + std::to_string(hits.size()) +
                         " rows are " + std::to_string(n >> 20) +
                         " MiB of JSON, longer than a JavaScript string may be; ask for fewer "
                         "rows (a smaller k)");
  }
  *found = true;
  return Status::OK();
}

// From a cached column: every vector (or those of the rows the where takes)
// scored in place, then the k rows found read by key. Leaves *done false,
// nothing written, when a row is not where the cache says (then the caller
// drops the cache and scans).
Status NearestFromCache(Backend* backend, const NearestRequest& r, const QueryVector& q,
                        const VectorCache::Column& c, bool* done, std::string* answer) {
  *done = false;
  TopK top(static_cast<size_t>(r.k));
  const char* data = c.data.data();
  if (!r.query.where) {
    for (size_t i = 0; i < c.keys.size(); ++i) {
      const double d = Distance(r.metric, q, data + i * c.width);
      if (top.Admits(d)) top.Offer(d, c.keys[i], nullptr);
    }
  } else {
    // The rows the where takes, by key from the backend (SQL); their
    // vectors from the cache (a row not held has a null vector).
    ONESTORE_RETURN_IF_ERROR(backend->ScanKeys(r.query, [&](const Key& key) {
      size_t i;
      if (!c.IndexOf(key, &i)) return;
      const double d = Distance(r.metric, q, data + i * c.width);
      if (top.Admits(d)) top.Offer(d, key, nullptr);
    }));
  }
  // A key with no row is not where the cache says: the caller scans.
  return AnswerHits(backend, *r.query.table, top.Sorted(), done, answer);
}

}  // namespace

Status RunNearest(Backend* backend, const NearestRequest& r, std::string* answer,
                  VectorCache* cache, const std::shared_ptr<const TableSchema>& table,
                  int64_t head) {
  const TableSchema& t = *r.query.table;
  QueryVector q;
  q.bytes = r.vector.text().data();
  q.n = r.vector.text().size() / 4;
  q.self_dot = DotSum(q.bytes, q.bytes, q.n);
  const size_t want_bytes = r.vector.text().size();
  VectorCache::Builder build;
  bool building = false;
  if (cache != nullptr && table != nullptr) {
    const VectorCache::Column* c = cache->Find(table, r.column, head);
    if (c == nullptr && r.query.where && cache->StartBuild(table, r.column, &build)) {
      // A search with a where sees only some rows: the column is built by
      // a scan of all of them first (once), then searched as below.
      Query all = r.query;
      all.where.reset();
      all.cursor_head.clear();  // no longer this query's (query.h)
      ONESTORE_RETURN_IF_ERROR(backend->Scan(all, [&](const Row& row) {
        const Value& v = row[r.column];
        if (v.type() != Type::kVector || v.text().size() != want_bytes) return true;
        Key key(t.key.size());
        for (size_t i = 0; i < t.key.size(); ++i) key[i] = row[t.key[i]];
        return build.Add(key, v);
      }));
      build.Finish(head);
      c = cache->Find(table, r.column, head);
    }
    if (c != nullptr) {
      bool done = false;
      ONESTORE_RETURN_IF_ERROR(NearestFromCache(backend, r, q, *c, &done, answer));
      if (done) return Status::OK();
      cache->DropAll();
    } else if (!r.query.where) {
      building = cache->StartBuild(table, r.column, &build);
    }
  }
  TopK top(static_cast<size_t>(r.k));
  Key key(t.key.size());
  ONESTORE_RETURN_IF_ERROR(backend->Scan(r.query, [&](const Row& row) {
    const Value& v = row[r.column];
    if (v.type() != Type::kVector || v.text().size() != want_bytes) return true;  // null
    const double d = Distance(r.metric, q, v.text().data());
    const bool admits = top.Admits(d);
    if (!admits && !building) return true;
    for (size_t i = 0; i < t.key.size(); ++i) key[i] = row[t.key[i]];
    if (building) building = build.Add(key, v);
    if (admits) top.Offer(d, key, nullptr);  // its row is read again once it is among the k
    return true;
  }));
  if (building) build.Finish(head);
  bool found = false;
  ONESTORE_RETURN_IF_ERROR(AnswerHits(backend, t, top.Sorted(), &found, answer));
  if (!found) return Status::StorageFailed("nearest(" + t.name + "): a row it found is gone");
  return Status::OK();
}

}  // namespace onestore
