// Builders of where trees for the C++ tests, which construct Predicates
// directly instead of parsing wire JSON (that path has tests of its own).
#ifndef ONESTORE_TESTS_CPP_PREDICATES_H_
#define ONESTORE_TESTS_CPP_PREDICATES_H_

#include <utility>
#include <vector>

#include "query/query.h"

namespace onestore {
namespace test {

// A comparison (eq .. gte, prefix) of `column` with `v`.
inline Predicate Cmp(PredOp op, int column, Value v) {
  Predicate p;
  p.op = op;
  p.column = column;
  p.value = std::move(v);
  return p;
}

// and / or over `children` (not: exactly one child).
inline Predicate Group(PredOp op, std::vector<Predicate> children) {
  Predicate p;
  p.op = op;
  p.children = std::move(children);
  return p;
}

inline Predicate IsNull(int column) {
  Predicate p;
  p.op = PredOp::kIsNull;
  p.column = column;
  return p;
}

inline Predicate In(int column, std::vector<Value> values) {
  Predicate p;
  p.op = PredOp::kIn;
  p.column = column;
  p.values = std::move(values);
  return p;
}

}  // namespace test
}  // namespace onestore

#endif  // ONESTORE_TESTS_CPP_PREDICATES_H_
