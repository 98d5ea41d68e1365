// The memory evaluator of set expressions. It must give what the SQL that
// writes/sql.cc compiles gives for the same expression; the conformance
// vectors in tests/conformance/ check that it does.

#include <cstring>
#include <string>

#include "onestore/heap.h"
#include "writes/writes.h"

namespace onestore {

namespace {

// Names the column being set in error messages ("set \"at\"").
std::string Where(const TableSchema& t, int set_column) {
  if (set_column < 0 || static_cast<size_t>(set_column) >= t.columns.size()) return "set";
  return "set \"" + t.columns[set_column].name + "\"";
}

bool IsIntLike(const Value& v) { return v.type() == Type::kInt || v.type() == Type::kBool; }

double AsDouble(const Value& v) {
  return v.type() == Type::kNum ? v.num_value() : static_cast<double>(v.int_value());
}

// Text of a value for concat, as SQLite's || renders it (ints in decimal,
// bools as 0/1). The parser only lets str operands through; kept for safety.
std::string ConcatText(const Value& v) {
  switch (v.type()) {
    case Type::kStr:
    case Type::kJson:
      return v.text();
    case Type::kVector:  // never a concat operand (the parser refuses it)
      break;
    case Type::kBool:
    case Type::kInt:
      return std::to_string(v.int_value());
    case Type::kNum: {
      std::string s;
      v.AppendJson(&s);
      return s;
    }
    case Type::kNull:
      break;
  }
  return "";
}

Status Eval(const Expr& e, const Row& row, const TableSchema& t, int set_column, Value* out);

// Evaluates every argument; *any_null tells whether one of them was null.
Status EvalArgs(const Expr& e, const Row& row, const TableSchema& t, int set_column,
                std::vector<Value>* vals, bool* any_null) {
  vals->clear();
  *any_null = false;
  for (const Expr& a : e.args) {
    Value v;
    ONESTORE_RETURN_IF_ERROR(Eval(a, row, t, set_column, &v));
    *any_null |= v.is_null();
    vals->push_back(std::move(v));
  }
  return Status::OK();
}

Status Arith(const Expr& e, const std::vector<Value>& vals, const TableSchema& t, int set_column,
             Value* out) {
  bool ints = true;
  for (const Value& v : vals) ints &= IsIntLike(v);
  if (ints) {
    int64_t acc = vals[0].int_value();
    for (size_t i = 1; i < vals.size(); ++i) {
      int64_t next;
      bool overflow = e.op == ExprOp::kAdd
                          ? __builtin_add_overflow(acc, vals[i].int_value(), &next)
                          : __builtin_sub_overflow(acc, vals[i].int_value(), &next);
      if (overflow) {
        return Status::InvalidArgs(
            Where(t, set_column) + ": " + ExprOpName(e.op) + "(" + std::to_string(acc) + ", " +
            std::to_string(vals[i].int_value()) + ") overflows a 64-bit int");
      }
      acc = next;
    }
    *out = Value::Int(acc);
    return Status::OK();
  }
  double acc = AsDouble(vals[0]);
  for (size_t i = 1; i < vals.size(); ++i) {
    acc = e.op == ExprOp::kAdd ? acc + AsDouble(vals[i]) : acc - AsDouble(vals[i]);
  }
  *out = Value::Num(acc);
  return Status::OK();
}

Status Eval(const Expr& e, const Row& row, const TableSchema& t, int set_column, Value* out) {
  switch (e.op) {
    case ExprOp::kValue:
      *out = e.value;
      return Status::OK();
    case ExprOp::kCol:
    case ExprOp::kReplacePrefix: {
      if (e.column < 0 || static_cast<size_t>(e.column) >= row.size()) {
        return Status::InvalidArgs(Where(t, set_column) + ": " + ExprOpName(e.op) +
                                   " names column #" + std::to_string(e.column) +
                                   ", which the row does not have");
      }
      const Value& cell = row[e.column];
      if (e.op == ExprOp::kCol || cell.is_null() || cell.type() != Type::kStr) {
        *out = cell;
        return Status::OK();
      }
      const std::string& s = cell.text();
      if (s.size() >= e.from.size() && std::memcmp(s.data(), e.from.data(), e.from.size()) == 0) {
        *out = Value::Str(e.to + s.substr(e.from.size()));
      } else {
        *out = cell;
      }
      return Status::OK();
    }
    case ExprOp::kAdd:
    case ExprOp::kSub:
    case ExprOp::kMax:
    case ExprOp::kMin:
    case ExprOp::kConcat: {
      if (e.args.empty()) {
        return Status::InvalidArgs(Where(t, set_column) + ": " + ExprOpName(e.op) +
                                   " needs arguments");
      }
      std::vector<Value> vals;
      bool any_null;
      ONESTORE_RETURN_IF_ERROR(EvalArgs(e, row, t, set_column, &vals, &any_null));
      if (any_null) {
        *out = Value();
        return Status::OK();
      }
      if (e.op == ExprOp::kAdd || e.op == ExprOp::kSub) return Arith(e, vals, t, set_column, out);
      if (e.op == ExprOp::kConcat) {
        const auto is_text = [](const Value& v) { return v.type() == Type::kStr || v.type() == Type::kJson; };
        size_t n = 0;
        for (const Value& v : vals) n += is_text(v) ? v.text().size() : ConcatText(v).size();
        // A str no read could hand back (JS takes a string of at most 2^29 -
        // 24 characters), or one the heap cannot hold: refused, before it
        // is made (a memory store's commit would keep a row no get reads,
        // or abort on the way).
        if (n > kMaxJsStringBytes || !HeapHasRoomFor(2.0 * static_cast<double>(n), static_cast<double>(n))) {
          return Status::Limit(Where(t, set_column) + ": concat would make a str of " +
                               std::to_string(n >> 20) + " MiB, " +
                               (n > kMaxJsStringBytes ? "longer than a JavaScript string may be"
                                                 : "more than the wasm heap has room for"));
        }
        std::string s;
        s.reserve(n);
        for (const Value& v : vals) {
          if (is_text(v)) s += v.text();
          else s += ConcatText(v);
        }
        *out = Value::Str(std::move(s));
        return Status::OK();
      }
      size_t best = 0;
      for (size_t i = 1; i < vals.size(); ++i) {
        int c = CompareValues(vals[i], vals[best]);
        if (e.op == ExprOp::kMax ? c > 0 : c < 0) best = i;
      }
      *out = std::move(vals[best]);
      return Status::OK();
    }
    case ExprOp::kCoalesce:
      for (const Expr& a : e.args) {
        Value v;
        ONESTORE_RETURN_IF_ERROR(Eval(a, row, t, set_column, &v));
        if (!v.is_null()) {
          *out = std::move(v);
          return Status::OK();
        }
      }
      *out = Value();
      return Status::OK();
    case ExprOp::kWhen: {
      if (e.cond == nullptr || e.args.size() != 2) {
        return Status::InvalidArgs(Where(t, set_column) +
                                   ": when needs a condition, a then and an else");
      }
      bool yes = EvalPredicate(*e.cond, row) == Tri::kTrue;
      return Eval(e.args[yes ? 0 : 1], row, t, set_column, out);
    }
  }
  return Status::InvalidArgs(Where(t, set_column) + ": unknown expression");
}

}  // namespace

Status EvalExpr(const Expr& e, const Row& row, const TableSchema& t, Value* out) {
  return Eval(e, row, t, -1, out);
}

Status ApplySet(const std::vector<SetItem>& set, const TableSchema& t, Row* row) {
  const Row before = *row;
  std::vector<Value> results(set.size());
  for (size_t i = 0; i < set.size(); ++i) {
    const SetItem& item = set[i];
    if (item.column < 0 || static_cast<size_t>(item.column) >= t.columns.size() ||
        static_cast<size_t>(item.column) >= before.size()) {
      return Status::InvalidArgs("set: column #" + std::to_string(item.column) +
                                 " is not in table \"" + t.name + "\"");
    }
    ONESTORE_RETURN_IF_ERROR(Eval(item.expr, before, t, item.column, &results[i]));
    const Column& col = t.columns[item.column];
    Value& v = results[i];
    if (v.is_null() && !col.optional) {
      return Status::InvalidArgs(Where(t, item.column) +
                                 ": the expression gave null, and column \"" + col.name +
                                 "\" of table \"" + t.name + "\" is not optional");
    }
    // A REAL column stores an integer as a double; so does the memory backend.
    if (col.type == Type::kNum && IsIntLike(v)) v = Value::Num(static_cast<double>(v.int_value()));
  }
  for (size_t i = 0; i < set.size(); ++i) (*row)[set[i].column] = std::move(results[i]);
  return Status::OK();
}

}  // namespace onestore
