// The memory evaluator of predicates: SQL's three-valued logic over one row.
// It must agree with the SQL that query/sql.cc compiles for the same tree; the
// conformance vectors in tests/conformance/ check that it does.

#include <cstring>

#include "query/query.h"

namespace onestore {

namespace {

// True if `cell` starts with the bytes of `prefix` (code points, for UTF-8).
bool StartsWith(const std::string& cell, const std::string& prefix) {
  return cell.size() >= prefix.size() &&
         std::memcmp(cell.data(), prefix.data(), prefix.size()) == 0;
}

Tri FromBool(bool b) { return b ? Tri::kTrue : Tri::kFalse; }

// A comparison of a non-null cell with the predicate's operand(s).
Tri Compare(const Predicate& p, const Value& cell) {
  switch (p.op) {
    case PredOp::kEq:
      return FromBool(CompareValues(cell, p.value) == 0);
    case PredOp::kNe:
      return FromBool(CompareValues(cell, p.value) != 0);
    case PredOp::kLt:
      return FromBool(CompareValues(cell, p.value) < 0);
    case PredOp::kLte:
      return FromBool(CompareValues(cell, p.value) <= 0);
    case PredOp::kGt:
      return FromBool(CompareValues(cell, p.value) > 0);
    case PredOp::kGte:
      return FromBool(CompareValues(cell, p.value) >= 0);
    case PredOp::kIn: {
      // As SQL's IN: a match is true; no match is false, or unknown when the
      // list holds a null (the parser refuses null operands; kept for parity).
      bool saw_null = false;
      for (const Value& v : p.values) {
        if (v.is_null()) {
          saw_null = true;
        } else if (CompareValues(cell, v) == 0) {
          return Tri::kTrue;
        }
      }
      return saw_null ? Tri::kUnknown : Tri::kFalse;
    }
    case PredOp::kPrefix:
      if (cell.type() != Type::kStr) return Tri::kFalse;
      return FromBool(StartsWith(cell.text(), p.value.text()));
    default:
      return Tri::kUnknown;
  }
}

}  // namespace

Tri EvalPredicate(const Predicate& p, const Row& row) {
  switch (p.op) {
    case PredOp::kAnd: {
      bool unknown = false;
      for (const Predicate& c : p.children) {
        Tri t = EvalPredicate(c, row);
        if (t == Tri::kFalse) return Tri::kFalse;
        unknown |= (t == Tri::kUnknown);
      }
      return unknown ? Tri::kUnknown : Tri::kTrue;
    }
    case PredOp::kOr: {
      bool unknown = false;
      for (const Predicate& c : p.children) {
        Tri t = EvalPredicate(c, row);
        if (t == Tri::kTrue) return Tri::kTrue;
        unknown |= (t == Tri::kUnknown);
      }
      return unknown ? Tri::kUnknown : Tri::kFalse;
    }
    case PredOp::kNot: {
      if (p.children.size() != 1) return Tri::kUnknown;  // the parser refuses it
      Tri t = EvalPredicate(p.children[0], row);
      if (t == Tri::kUnknown) return Tri::kUnknown;
      return t == Tri::kTrue ? Tri::kFalse : Tri::kTrue;
    }
    case PredOp::kIsNull:
      if (p.column < 0 || static_cast<size_t>(p.column) >= row.size()) return Tri::kUnknown;
      return FromBool(row[p.column].is_null());
    default: {
      if (p.column < 0 || static_cast<size_t>(p.column) >= row.size()) return Tri::kUnknown;
      const Value& cell = row[p.column];
      // As SQL: x IN () is false, even for a null x.
      if (p.op == PredOp::kIn && p.values.empty()) return Tri::kFalse;
      if (cell.is_null()) return Tri::kUnknown;
      if (p.op != PredOp::kIn && p.value.is_null()) return Tri::kUnknown;
      return Compare(p, cell);
    }
  }
}

}  // namespace onestore
