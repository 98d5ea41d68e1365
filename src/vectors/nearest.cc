#include "vectors/nearest.h"

#include <algorithm>
#include <cmath>
#include <vector>

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

Status RunNearest(Backend* backend, const NearestRequest& r, std::string* answer) {
  const TableSchema& t = *r.query.table;
  QueryVector q;
  q.bytes = r.vector.text().data();
  q.n = r.vector.text().size() / 4;
  q.self_dot = DotSum(q.bytes, q.bytes, q.n);
  const size_t k = static_cast<size_t>(r.k);
  const size_t want_bytes = r.vector.text().size();
  // A max-heap on (distance, key): the front is the worst of the k kept.
  auto worse = [](const Hit& a, const Hit& b) { return Before(a.distance, a.key, b); };
  std::vector<Hit> heap;
  heap.reserve(std::min<size_t>(k, 1024) + 1);
  Key key(t.key.size());
  ONESTORE_RETURN_IF_ERROR(backend->Scan(r.query, [&](const Row& row) {
    const Value& v = row[r.column];
    if (v.type() != Type::kVector || v.text().size() != want_bytes) return true;  // null
    const double d = Distance(r.metric, q, v.text().data());
    if (!std::isfinite(d)) return true;
    if (heap.size() == k && d > heap.front().distance) return true;
    for (size_t i = 0; i < t.key.size(); ++i) key[i] = row[t.key[i]];
    if (heap.size() == k) {
      if (!Before(d, key, heap.front())) return true;
      std::pop_heap(heap.begin(), heap.end(), worse);
      heap.pop_back();
    }
    heap.push_back(Hit{d, key, row});
    std::push_heap(heap.begin(), heap.end(), worse);
    return true;
  }));
  std::sort_heap(heap.begin(), heap.end(), worse);
  answer->clear();
  *answer += "{\"rows\":[";
  for (size_t i = 0; i < heap.size(); ++i) {
    if (i) answer->push_back(',');
    AppendRowArray(heap[i].row, answer);
  }
  *answer += "],\"distances\":[";
  for (size_t i = 0; i < heap.size(); ++i) {
    if (i) answer->push_back(',');
    Value::Num(heap[i].distance).AppendJson(answer);
  }
  *answer += "]}";
  return Status::OK();
}

}  // namespace onestore
