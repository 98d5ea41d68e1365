#include "backends/memory/plan.h"

#include <map>

namespace onestore {

namespace {

// The top-level conjuncts of `p`: nested ands flattened.
void Conjuncts(const Predicate& p, std::vector<const Predicate*>* out) {
  if (p.op == PredOp::kAnd) {
    for (const Predicate& c : p.children) Conjuncts(c, out);
  } else {
    out->push_back(&p);
  }
}

// Narrows `*b` with a new bound: the larger of two lower bounds, the smaller
// of two upper bounds, exclusive on a tie.
void Tighten(std::optional<ScanBound>* b, const Value& v, bool inclusive, bool lower) {
  if (!b->has_value()) {
    *b = ScanBound{v, inclusive};
    return;
  }
  int c = CompareValues(v, (*b)->value);
  if (lower ? c > 0 : c < 0) {
    *b = ScanBound{v, inclusive};
  } else if (c == 0 && !inclusive) {
    (*b)->inclusive = false;
  }
}

}  // namespace

std::string ScanPlan::Describe(const TableSchema& t) const {
  auto name = [&](int c) {
    return c >= 0 && static_cast<size_t>(c) < t.columns.size() ? t.columns[c].name : "?";
  };
  std::string out = index < 0 ? "primary key" : "index " + t.indexes[index].name;
  if (!eq_prefix.empty()) {
    out += " eq(";
    for (size_t i = 0; i < eq_prefix.size(); ++i) out += (i ? "," : "") + name(columns[i]);
    out += ")";
  }
  if (lower || upper) out += " range(" + name(columns[eq_prefix.size()]) + ")";
  out += reverse ? " desc" : " asc";
  if (sort && ordered_terms > 0) out += ", then sort each group of " + std::to_string(ordered_terms);
  if (sort && ordered_terms == 0) out += ", then sort";
  return out;
}

ScanPlan PlanScan(const TableSchema& t, const Predicate* where,
                  const std::vector<OrderTerm>* order) {
  std::vector<const Predicate*> conj;
  if (where != nullptr) Conjuncts(*where, &conj);
  std::map<int, const Value*> fixed;  // column -> its eq value (the first eq wins)
  for (const Predicate* p : conj) {
    if (p->op == PredOp::kEq && !p->value.is_null()) fixed.emplace(p->column, &p->value);
  }

  ScanPlan best;
  int best_rank = -1;
  int n = static_cast<int>(t.indexes.size());
  for (int i = -1; i < n; ++i) {
    ScanPlan plan;
    plan.index = i;
    plan.columns = i < 0 ? t.key : t.indexes[i].columns;
    for (const auto& [c, v] : fixed) plan.fixed.emplace_back(c, *v);
    size_t k = 0;
    while (k < plan.columns.size()) {
      auto it = fixed.find(plan.columns[k]);
      if (it == fixed.end()) break;
      plan.eq_prefix.push_back(*it->second);
      ++k;
    }
    if (k < plan.columns.size()) {
      int c = plan.columns[k];
      for (const Predicate* p : conj) {
        if (p->column != c || p->value.is_null()) continue;
        switch (p->op) {
          case PredOp::kGt:
            Tighten(&plan.lower, p->value, false, true);
            break;
          case PredOp::kGte:
            Tighten(&plan.lower, p->value, true, true);
            break;
          case PredOp::kLt:
            Tighten(&plan.upper, p->value, false, false);
            break;
          case PredOp::kLte:
            Tighten(&plan.upper, p->value, true, false);
            break;
          case PredOp::kPrefix: {
            if (p->value.type() != Type::kStr) break;
            Tighten(&plan.lower, p->value, true, true);
            std::string up = PrefixUpperBound(p->value.text());
            if (!up.empty()) Tighten(&plan.upper, Value::Str(up), false, false);
            break;
          }
          default:
            break;
        }
      }
    }
    bool in_order = true;
    if (order != nullptr) {
      std::vector<int> walked, wanted;
      for (int c : plan.columns) {
        if (!fixed.count(c)) walked.push_back(c);
      }
      int asc = 0, desc = 0;
      for (const OrderTerm& term : *order) {
        if (fixed.count(term.column)) continue;
        wanted.push_back(term.column);
        (term.desc ? desc : asc)++;
      }
      in_order = walked == wanted && (asc == 0 || desc == 0);
      plan.reverse = in_order && desc > 0;
      plan.sort = !in_order;
      if (plan.sort) {
        // The leading wanted terms that the walk gives, all one way.
        std::vector<OrderTerm> terms;
        for (const OrderTerm& term : *order) {
          if (!fixed.count(term.column)) terms.push_back(term);
        }
        size_t m = 0;
        while (m < terms.size() && m < walked.size() && walked[m] == terms[m].column &&
               terms[m].desc == terms[0].desc) {
          ++m;
        }
        plan.ordered_terms = static_cast<int>(m);
        plan.reverse = m > 0 && terms[0].desc;
      }
    }
    // Longest exact prefix first, then a walk in order (or partly in order),
    // then a range.
    bool bounded = plan.lower.has_value() || plan.upper.has_value();
    int rank = static_cast<int>(k) * 8 + (in_order ? 4 : 0) + (plan.ordered_terms > 0 ? 2 : 0) +
               (bounded ? 1 : 0);
    if (rank > best_rank) {
      best_rank = rank;
      best = std::move(plan);
    }
  }
  return best;
}

}  // namespace onestore
