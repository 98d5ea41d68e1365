// Checks the memory evaluators: predicates under SQL's three-valued logic and
// code point text order, and every set expression, with null propagation,
// overflow and "every expression reads the row as it was before".

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "predicates.h"
#include "query/query.h"
#include "schema/schema.h"
#include "values/value.h"
#include "writes/writes.h"

namespace onestore {
namespace {

using test::Cmp;
using test::Group;
using test::In;
using test::IsNull;

// Columns: 0 id str, 1 n int?, 2 title str?, 3 at int, 4 x num?, 5 flag bool?
TableSchema Items() {
  Json j = Json::parse(R"({"op":"table","table":"t/items","columns":{
      "id":"str","n":{"type":"int","optional":true},"title":{"type":"str","optional":true},
      "at":"int","x":{"type":"num","optional":true},"flag":{"type":"bool","optional":true}},
      "key":["id"]})",
                       nullptr, false);
  TableSchema t;
  Status s = ParseTableSchema(j, "test", &t);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return t;
}

Row ItemRow(std::string id, Value n, Value title, int64_t at) {
  return Row{
      Value::Str(std::move(id)), std::move(n), std::move(title), Value::Int(at), Value(), Value()};
}

Expr Lit(Value v) {
  Expr e;
  e.op = ExprOp::kValue;
  e.type = v.type();
  e.value = std::move(v);
  return e;
}

Expr Col(int column) {
  Expr e;
  e.op = ExprOp::kCol;
  e.column = column;
  return e;
}

Expr Call(ExprOp op, std::vector<Expr> args) {
  Expr e;
  e.op = op;
  e.args = std::move(args);
  return e;
}

Expr ReplacePrefix(int column, std::string from, std::string to) {
  Expr e;
  e.op = ExprOp::kReplacePrefix;
  e.type = Type::kStr;
  e.column = column;
  e.from = std::move(from);
  e.to = std::move(to);
  return e;
}

Expr When(Predicate cond, Expr then, Expr otherwise) {
  Expr e = Call(ExprOp::kWhen, {std::move(then), std::move(otherwise)});
  e.cond = std::make_shared<Predicate>(std::move(cond));
  return e;
}

const Predicate kTrueP = Cmp(PredOp::kEq, 3, Value::Int(1));  // at == 1 on the rows below
const Predicate kFalseP = Cmp(PredOp::kEq, 3, Value::Int(2));
const Predicate kUnknownP = Cmp(PredOp::kEq, 1, Value::Int(5));  // n is null below

TEST(EvalPredicateTest, AComparisonWithANullCellIsUnknown) {
  Row r = ItemRow("a", Value(), Value(), 1);
  for (PredOp op :
       {PredOp::kEq, PredOp::kNe, PredOp::kLt, PredOp::kLte, PredOp::kGt, PredOp::kGte}) {
    EXPECT_EQ(EvalPredicate(Cmp(op, 1, Value::Int(5)), r), Tri::kUnknown) << PredOpName(op);
  }
  EXPECT_EQ(EvalPredicate(In(1, {Value::Int(5)}), r), Tri::kUnknown);
  EXPECT_EQ(EvalPredicate(Cmp(PredOp::kPrefix, 2, Value::Str("")), r), Tri::kUnknown);
}

TEST(EvalPredicateTest, InAnEmptyListIsFalseEvenForANullCell) {
  // As SQL: x IN () is false, never unknown, so its negation matches nulls.
  Row r = ItemRow("a", Value(), Value(), 1);
  EXPECT_EQ(EvalPredicate(In(1, {}), r), Tri::kFalse);
  EXPECT_EQ(EvalPredicate(Group(PredOp::kNot, {In(1, {})}), r), Tri::kTrue);
}

TEST(EvalPredicateTest, IsNullIsNeverUnknown) {
  Row r = ItemRow("a", Value(), Value::Str("t"), 1);
  EXPECT_EQ(EvalPredicate(IsNull(1), r), Tri::kTrue);
  EXPECT_EQ(EvalPredicate(IsNull(2), r), Tri::kFalse);
  EXPECT_EQ(EvalPredicate(Group(PredOp::kNot, {IsNull(1)}), r), Tri::kFalse);
}

TEST(EvalPredicateTest, NotOfUnknownIsUnknownSoNeitherSideMatchesANull) {
  Row r = ItemRow("a", Value(), Value(), 1);
  EXPECT_EQ(EvalPredicate(Group(PredOp::kNot, {kUnknownP}), r), Tri::kUnknown);
  EXPECT_EQ(EvalPredicate(Group(PredOp::kNot, {kTrueP}), r), Tri::kFalse);
  EXPECT_EQ(EvalPredicate(Group(PredOp::kNot, {kFalseP}), r), Tri::kTrue);
}

TEST(EvalPredicateTest, AndAndOrFollowKleeneLogic) {
  Row r = ItemRow("a", Value(), Value(), 1);
  auto eval = [&](PredOp op, std::vector<Predicate> c) {
    return EvalPredicate(Group(op, std::move(c)), r);
  };
  EXPECT_EQ(eval(PredOp::kAnd, {kTrueP, kUnknownP}), Tri::kUnknown);
  EXPECT_EQ(eval(PredOp::kAnd, {kUnknownP, kFalseP}), Tri::kFalse);
  EXPECT_EQ(eval(PredOp::kAnd, {kTrueP, kTrueP}), Tri::kTrue);
  EXPECT_EQ(eval(PredOp::kOr, {kFalseP, kUnknownP}), Tri::kUnknown);
  EXPECT_EQ(eval(PredOp::kOr, {kUnknownP, kTrueP}), Tri::kTrue);
  EXPECT_EQ(eval(PredOp::kOr, {kFalseP, kFalseP}), Tri::kFalse);
  EXPECT_EQ(eval(PredOp::kAnd, {}), Tri::kTrue);
  EXPECT_EQ(eval(PredOp::kOr, {}), Tri::kFalse);
  // not(a or b) over an unknown stays unknown.
  EXPECT_EQ(EvalPredicate(Group(PredOp::kNot, {Group(PredOp::kOr, {kFalseP, kUnknownP})}), r),
            Tri::kUnknown);
}

TEST(EvalPredicateTest, ComparisonsAndInArrayOnValues) {
  Row r = ItemRow("b", Value::Int(7), Value::Str("a/x"), 3);
  EXPECT_EQ(EvalPredicate(Cmp(PredOp::kEq, 1, Value::Int(7)), r), Tri::kTrue);
  EXPECT_EQ(EvalPredicate(Cmp(PredOp::kNe, 1, Value::Int(7)), r), Tri::kFalse);
  EXPECT_EQ(EvalPredicate(Cmp(PredOp::kLt, 1, Value::Int(8)), r), Tri::kTrue);
  EXPECT_EQ(EvalPredicate(Cmp(PredOp::kLte, 1, Value::Int(7)), r), Tri::kTrue);
  EXPECT_EQ(EvalPredicate(Cmp(PredOp::kGt, 1, Value::Int(7)), r), Tri::kFalse);
  EXPECT_EQ(EvalPredicate(Cmp(PredOp::kGte, 1, Value::Int(-1)), r), Tri::kTrue);
  EXPECT_EQ(EvalPredicate(In(1, {Value::Int(1), Value::Int(7)}), r), Tri::kTrue);
  EXPECT_EQ(EvalPredicate(In(1, {Value::Int(1)}), r), Tri::kFalse);
  EXPECT_EQ(EvalPredicate(In(1, {}), r), Tri::kFalse);
  EXPECT_EQ(EvalPredicate(Cmp(PredOp::kLt, 0, Value::Str("c")), r), Tri::kTrue);
}

TEST(EvalPredicateTest, PrefixMatchesBytesAndTheEmptyPrefixMatchesEveryNonNull) {
  Row r = ItemRow("a", Value(), Value::Str("a/b😀"), 1);
  EXPECT_EQ(EvalPredicate(Cmp(PredOp::kPrefix, 2, Value::Str("a/")), r), Tri::kTrue);
  EXPECT_EQ(EvalPredicate(Cmp(PredOp::kPrefix, 2, Value::Str("a/b😀")), r), Tri::kTrue);
  EXPECT_EQ(EvalPredicate(Cmp(PredOp::kPrefix, 2, Value::Str("a/b😀x")), r), Tri::kFalse);
  EXPECT_EQ(EvalPredicate(Cmp(PredOp::kPrefix, 2, Value::Str("b")), r), Tri::kFalse);
  EXPECT_EQ(EvalPredicate(Cmp(PredOp::kPrefix, 2, Value::Str("")), r), Tri::kTrue);
  // A hand-built bound p + U+FFFF would miss this row; prefix does not.
  EXPECT_EQ(EvalPredicate(Cmp(PredOp::kLt, 2, Value::Str("a/b\uffff")), r), Tri::kFalse);
}

TEST(EvalPredicateTest, TextComparesByCodePoint) {
  // In UTF-16 (JS sort) the emoji sorts first; by code point it sorts last.
  Row r = ItemRow("a", Value(), Value::Str("测试（一）"), 1);
  EXPECT_EQ(EvalPredicate(Cmp(PredOp::kLt, 2, Value::Str("测试😀")), r), Tri::kTrue);
  EXPECT_LT(CompareValues(Value::Str("测试（一）"), Value::Str("测试😀")), 0);
  EXPECT_LT(CompareValues(Value::Str("\uffff"), Value::Str("😀")), 0);
}

TEST(EvalExprTest, ValueAndColReadTheRow) {
  TableSchema t = Items();
  Row r = ItemRow("a", Value::Int(4), Value::Str("hi"), 9);
  Value v;
  ASSERT_TRUE(EvalExpr(Lit(Value::Int(3)), r, t, &v).ok());
  EXPECT_EQ(v, Value::Int(3));
  ASSERT_TRUE(EvalExpr(Col(2), r, t, &v).ok());
  EXPECT_EQ(v, Value::Str("hi"));
}

TEST(EvalExprTest, AddAndSubAreChecked64BitArithmetic) {
  TableSchema t = Items();
  Row r = ItemRow("a", Value::Int(INT64_MAX), Value(), INT64_MIN);
  Value v;
  ASSERT_TRUE(EvalExpr(Call(ExprOp::kAdd, {Col(1), Lit(Value::Int(-1))}), r, t, &v).ok());
  EXPECT_EQ(v, Value::Int(INT64_MAX - 1));
  ASSERT_TRUE(EvalExpr(Call(ExprOp::kSub, {Col(3), Lit(Value::Int(-5))}), r, t, &v).ok());
  EXPECT_EQ(v, Value::Int(INT64_MIN + 5));

  Status s = EvalExpr(Call(ExprOp::kSub, {Col(3), Lit(Value::Int(1))}), r, t, &v);
  EXPECT_EQ(s.code(), Code::kInvalidArgs);

  std::vector<SetItem> set = {{1, Call(ExprOp::kAdd, {Col(1), Lit(Value::Int(1))})}};
  Row copy = r;
  s = ApplySet(set, t, &copy);
  ASSERT_EQ(s.code(), Code::kInvalidArgs);
  EXPECT_NE(s.message().find("\"n\""), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("9223372036854775807"), std::string::npos) << s.message();
  EXPECT_EQ(copy, r);  // nothing written on failure
}

TEST(EvalExprTest, NullPropagatesThroughAddSubMaxMinConcat) {
  TableSchema t = Items();
  Row r = ItemRow("a", Value(), Value(), 1);
  Value v = Value::Int(99);
  for (ExprOp op : {ExprOp::kAdd, ExprOp::kSub, ExprOp::kMax, ExprOp::kMin}) {
    ASSERT_TRUE(EvalExpr(Call(op, {Lit(Value::Int(1)), Col(1)}), r, t, &v).ok());
    EXPECT_TRUE(v.is_null()) << ExprOpName(op);
  }
  ASSERT_TRUE(EvalExpr(Call(ExprOp::kConcat, {Lit(Value::Str("x")), Col(2)}), r, t, &v).ok());
  EXPECT_TRUE(v.is_null());
}

TEST(EvalExprTest, MaxMinAndConcatOnValues) {
  TableSchema t = Items();
  Row r = ItemRow("a", Value::Int(5), Value::Str("测试😀"), 1);
  Value v;
  ASSERT_TRUE(
      EvalExpr(Call(ExprOp::kMax, {Lit(Value::Int(2)), Col(1), Lit(Value::Int(3))}), r, t, &v)
          .ok());
  EXPECT_EQ(v, Value::Int(5));
  ASSERT_TRUE(
      EvalExpr(Call(ExprOp::kMin, {Lit(Value::Int(2)), Col(1), Lit(Value::Int(3))}), r, t, &v)
          .ok());
  EXPECT_EQ(v, Value::Int(2));
  // Text max/min by code point.
  ASSERT_TRUE(EvalExpr(Call(ExprOp::kMax, {Lit(Value::Str("测试（一）")), Col(2)}), r, t, &v).ok());
  EXPECT_EQ(v, Value::Str("测试😀"));
  ASSERT_TRUE(EvalExpr(Call(ExprOp::kMin, {Lit(Value::Str("测试（一）")), Col(2)}), r, t, &v).ok());
  EXPECT_EQ(v, Value::Str("测试（一）"));
  ASSERT_TRUE(
      EvalExpr(Call(ExprOp::kConcat, {Col(2), Lit(Value::Str("/")), Col(0)}), r, t, &v).ok());
  EXPECT_EQ(v, Value::Str("测试😀/a"));
}

TEST(EvalExprTest, ReplacePrefixRewritesOnlyMatchingCells) {
  TableSchema t = Items();
  Value v;
  ASSERT_TRUE(EvalExpr(ReplacePrefix(2, "a/", "b/c/"),
                       ItemRow("a", Value(), Value::Str("a/x.ts"), 1), t, &v)
                  .ok());
  EXPECT_EQ(v, Value::Str("b/c/x.ts"));
  ASSERT_TRUE(
      EvalExpr(ReplacePrefix(2, "a/", "b/"), ItemRow("a", Value(), Value::Str("ba/x"), 1), t, &v)
          .ok());
  EXPECT_EQ(v, Value::Str("ba/x"));
  ASSERT_TRUE(
      EvalExpr(ReplacePrefix(2, "a/", "b/"), ItemRow("a", Value(), Value::Str("a/"), 1), t, &v)
          .ok());
  EXPECT_EQ(v, Value::Str("b/"));
  ASSERT_TRUE(
      EvalExpr(ReplacePrefix(2, "a/", "b/"), ItemRow("a", Value(), Value(), 1), t, &v).ok());
  EXPECT_TRUE(v.is_null());
}

TEST(EvalExprTest, CoalescePicksTheFirstNonNull) {
  TableSchema t = Items();
  Row r = ItemRow("a", Value(), Value(), 1);
  Value v;
  ASSERT_TRUE(EvalExpr(Call(ExprOp::kCoalesce,
                            {Col(1), Lit(Value()), Lit(Value::Int(8)), Lit(Value::Int(9))}),
                       r, t, &v)
                  .ok());
  EXPECT_EQ(v, Value::Int(8));
  ASSERT_TRUE(EvalExpr(Call(ExprOp::kCoalesce, {Col(1), Lit(Value())}), r, t, &v).ok());
  EXPECT_TRUE(v.is_null());
}

TEST(EvalExprTest, WhenTakesTheElseBranchOnFalseAndOnUnknown) {
  TableSchema t = Items();
  Row r = ItemRow("a", Value(), Value::Str("old"), 12);
  Value v;
  Expr big = When(Cmp(PredOp::kGte, 3, Value::Int(10)), Lit(Value::Str("big")), Col(2));
  ASSERT_TRUE(EvalExpr(big, r, t, &v).ok());
  EXPECT_EQ(v, Value::Str("big"));
  r[3] = Value::Int(3);
  ASSERT_TRUE(EvalExpr(big, r, t, &v).ok());
  EXPECT_EQ(v, Value::Str("old"));
  Expr on_null =
      When(Cmp(PredOp::kGte, 1, Value::Int(0)), Lit(Value::Str("yes")), Lit(Value::Str("no")));
  ASSERT_TRUE(EvalExpr(on_null, r, t, &v).ok());
  EXPECT_EQ(v, Value::Str("no"));
}

TEST(ApplySetTest, EveryExpressionReadsTheRowAsItWasBefore) {
  TableSchema t = Items();
  Row r = ItemRow("a", Value::Int(1), Value::Str("t"), 2);
  // Swap n and at, and derive title from the old n.
  std::vector<SetItem> set = {
      {1, Col(3)},
      {3, Col(1)},
      {2, When(Cmp(PredOp::kEq, 1, Value::Int(1)), Lit(Value::Str("n was 1")),
               Lit(Value::Str("n was not 1")))},
  };
  ASSERT_TRUE(ApplySet(set, t, &r).ok());
  EXPECT_EQ(r[1], Value::Int(2));
  EXPECT_EQ(r[3], Value::Int(1));
  EXPECT_EQ(r[2], Value::Str("n was 1"));
}

TEST(ApplySetTest, NullIntoAColumnThatIsNotOptionalIsRefused) {
  TableSchema t = Items();
  Row r = ItemRow("a", Value(), Value(), 2);
  std::vector<SetItem> set = {{3, Call(ExprOp::kAdd, {Col(1), Lit(Value::Int(1))})}};
  Status s = ApplySet(set, t, &r);
  EXPECT_EQ(s.code(), Code::kInvalidArgs);
  EXPECT_NE(s.message().find("\"at\""), std::string::npos) << s.message();
  EXPECT_EQ(r[3], Value::Int(2));
}

TEST(ApplySetTest, AnIntIntoANumColumnIsStoredAsANum) {
  TableSchema t = Items();
  Row r = ItemRow("a", Value(), Value(), 2);
  std::vector<SetItem> set = {{4, Lit(Value::Int(3))}};
  ASSERT_TRUE(ApplySet(set, t, &r).ok());
  EXPECT_EQ(r[4], Value::Num(3.0));
}

}  // namespace
}  // namespace onestore
