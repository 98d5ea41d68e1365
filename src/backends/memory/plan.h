// The memory backend's query planner: which ordered structure a query walks,
// from where to where, and whether the rows still need sorting.
//
// The primary key and every secondary index are candidates. A candidate's
// leading columns fixed by a top-level eq conjunct (nested ands flattened)
// become an exact prefix; a top-level gt/gte/lt/lte/prefix conjunct on the
// next column becomes a range. A candidate produces the query's order when
// its columns, less the eq-fixed ones, are the order's columns, less the
// eq-fixed ones, and those order terms all go one way. Bounds only narrow the
// walk: every row walked is still filtered with EvalPredicate.
#ifndef ONESTORE_BACKENDS_MEMORY_PLAN_H_
#define ONESTORE_BACKENDS_MEMORY_PLAN_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "query/query.h"
#include "schema/schema.h"
#include "values/value.h"

namespace onestore {

struct ScanBound {
  Value value;
  bool inclusive = true;
};

struct ScanPlan {
  int index = -1;                // -1: the primary key; else position in t.indexes
  std::vector<int> columns;      // the walked structure's columns (the key for -1)
  std::vector<Value> eq_prefix;  // values of columns[0 .. eq_prefix.size())
  // Every column a top-level eq fixes, with its value (a cursor seek uses it).
  std::vector<std::pair<int, Value>> fixed;
  // Range on columns[eq_prefix.size()]. Either bound excludes nulls.
  std::optional<ScanBound> lower, upper;
  bool reverse = false;  // walk from the end (all order terms desc)
  bool sort = false;     // the walk is not in the query's order: sort after
  // With sort: how many leading order terms (less the eq-fixed ones) the
  // walk already gives. Rows then come in groups that agree on those terms,
  // and only each group needs sorting (as SQLite's "temp b-tree for the
  // right part of ORDER BY"): a page stops after the group that fills it.
  int ordered_terms = 0;

  // "index byPath eq(path) desc", "primary key asc", "primary key, then sort".
  std::string Describe(const TableSchema& t) const;
};

// Plans a walk of table `t` for `where` (null: every row). With `order`, the
// plan produces rows in that order when some candidate can (sort == false),
// else it picks the narrowest candidate and sets sort. With `order` null
// (count, bulk writes) any order will do and sort is false.
ScanPlan PlanScan(const TableSchema& t, const Predicate* where,
                  const std::vector<OrderTerm>* order);

}  // namespace onestore

#endif  // ONESTORE_BACKENDS_MEMORY_PLAN_H_
