// nearest: the k rows of a table whose vector column is nearest a query
// vector, ties broken by key. One implementation for every backend: the
// backend hands over the rows that match the where (Backend::Scan), this
// scores them with the kernels of vectors/distance.h and keeps the k best.
#ifndef ONESTORE_VECTORS_NEAREST_H_
#define ONESTORE_VECTORS_NEAREST_H_

#include <cstdint>
#include <string>

#include "backends/backend.h"
#include "onestore/status.h"
#include "query/query.h"
#include "schema/schema.h"
#include "values/value.h"
#include "vectors/distance.h"
#include "vectors/vector_cache.h"

namespace onestore {

// The most rows one nearest call returns.
constexpr int64_t kMaxNearestK = 10000;

struct NearestRequest {
  int column = -1;  // the vector column
  Value vector;     // the query vector, as long as the column
  int64_t k = 0;
  Metric metric = Metric::kCosine;
  Query query;  // the table and its where (order: the key)
};

// Parses {"column":c,"vector":v,"k":n,"metric":"cosine"|"l2"|"dot"?,
// "where":predicate?} against table `t` (metric defaults to cosine; the
// vector is base64 or an array of numbers, src/values/vector.h). Fails with
// invalid/args naming `where` and the bad part: an unknown or non-vector
// column, a vector of the wrong length or with a non-finite element, k not
// an integer from 1 to kMaxNearestK, an unknown metric, a bad predicate.
Status ParseNearest(const Json& j, const TableSchema& t, const std::string& where,
                    NearestRequest* out);

// Runs the request over the committed rows of `backend` and writes
// {"rows":[[cells...],...],"distances":[d,...]}: at most k rows, nearest
// first, equal distances in key order. Rows whose vector is null, or whose
// distance is not finite (a float32 sum overflowed), are left out.
//
// With a `cache` (src/vectors/vector_cache.h) and no where, the vectors are
// scored from the cache when it holds the column at `head` (then only the k
// rows found are read, by key), and the scan of a search it does not hold
// builds it (within its budget). `table` is the request's table, as the
// catalog holds it. The answer is the same bit for bit either way.
Status RunNearest(Backend* backend, const NearestRequest& r, std::string* answer,
                  VectorCache* cache = nullptr,
                  const std::shared_ptr<const TableSchema>& table = nullptr, int64_t head = 0);

}  // namespace onestore

#endif  // ONESTORE_VECTORS_NEAREST_H_
