// Set expressions: what `update` and `updateWhere` write into a column.
//
// Each builder returns a frozen wire node ({"add":[a,b]}, ...). A plain JS
// value anywhere in an expression means value(v). `col("at")` is the same
// column reference as `e.at` in a where. Every expression of one set reads
// the row as it was before the update, as SQL does.

import { invalidArgs } from "./errors.js";
import { describe } from "./schema.js";

export const EXPR = Symbol.for("onestore.expr");
export const COL = Symbol.for("onestore.col");
export const PRED = Symbol.for("onestore.pred");

function node(wire) {
  Object.defineProperty(wire, EXPR, { value: true });
  return Object.freeze(wire);
}

/**
 * A column reference: in a where or orderBy the column itself, in a set the
 * column's value before the update.
 *
 * @example
 * tx.update(edits, ["e1"], { at: add(col("at"), 1) })
 */
export function col(name) {
  if (typeof name !== "string" || name === "") throw invalidArgs(`col: the column name must be a non-empty string, got ${describe(name)}`);
  const wire = { col: name };
  Object.defineProperty(wire, COL, { value: true });
  return node(wire);
}

/**
 * True for a column reference (`e.path`, `col("path")`).
 *
 * @example
 * isCol(col("a"))   // true
 */
export function isCol(v) {
  return v !== null && typeof v === "object" && v[COL] === true;
}

/**
 * True for an expression node (a column reference included).
 *
 * @example
 * isExpr(add(col("n"), 1))   // true
 */
export function isExpr(v) {
  return v !== null && typeof v === "object" && v[EXPR] === true;
}

/**
 * True for a predicate (`eq(e.path, "a")`, `and(...)`).
 *
 * @example
 * isPred(eq(col("a"), 1))   // true
 */
export function isPred(v) {
  return v !== null && typeof v === "object" && v[PRED] === true;
}

/**
 * The expression of `v`: itself if it is one, else value(v).
 *
 * @example
 * toExpr(3)          // { value: 3 }
 * toExpr(col("a"))   // { col: "a" }
 */
export function toExpr(v) {
  if (isExpr(v)) return v;
  if (isPred(v)) throw invalidArgs(`a predicate (${describe(v)}) is not a value; use when(pred, a, b)`);
  return value(v);
}

/**
 * A literal. A plain value in a set means the same.
 *
 * @example
 * tx.update(edits, ["e1"], { meta: value({ a: 1 }) })   // same as { meta: { a: 1 } }
 */
export function value(v) {
  if (v === undefined) throw invalidArgs("value: undefined is not a value (use null)");
  return node({ value: v });
}

/**
 * a + b for ints; overflow is an error, not a float.
 *
 * @example
 * tx.update(edits, ["e1"], { at: add(col("at"), 1) })
 */
export function add(a, b) {
  return node({ add: [toExpr(a), toExpr(b)] });
}

/**
 * a - b for ints; overflow is an error.
 *
 * @example
 * tx.updateWhere(stock, (s) => gt(s.n, 0), { n: sub(col("n"), 1) })
 */
export function sub(a, b) {
  return node({ sub: [toExpr(a), toExpr(b)] });
}

/**
 * The largest of its arguments (text by code point); null if any is null.
 *
 * @example
 * tx.update(edits, ["e1"], { at: max(col("at"), now) })
 */
export function max(...args) {
  return node({ max: args.map(toExpr) });
}

/**
 * The smallest of its arguments; null if any is null.
 *
 * @example
 * tx.update(edits, ["e1"], { first: min(col("first"), at) })
 */
export function min(...args) {
  return node({ min: args.map(toExpr) });
}

/**
 * Text concatenation; null if any is null.
 *
 * @example
 * tx.update(files, ["f1"], { path: concat("archive/", col("path")) })
 */
export function concat(...args) {
  return node({ concat: args.map(toExpr) });
}

/**
 * Replaces the prefix `from` of the column being set by `to` (rows without
 * the prefix keep their value). Pair it with a prefix() where: one op, about
 * 150 bytes in the outbox, whatever the row count.
 *
 * @example
 * tx.updateWhere(edits, (e) => prefix(e.path, "a/"), { path: replacePrefix("a/", "b/") })
 */
export function replacePrefix(from, to) {
  if (typeof from !== "string" || typeof to !== "string") {
    throw invalidArgs(`replacePrefix: both arguments must be strings, got ${describe(from)} and ${describe(to)}`);
  }
  return node({ replacePrefix: [from, to] });
}

/**
 * The first non-null argument.
 *
 * @example
 * tx.update(edits, ["e1"], { title: coalesce(col("title"), "untitled") })
 */
export function coalesce(...args) {
  return node({ coalesce: args.map(toExpr) });
}

/**
 * `a` where the predicate holds, else `b` (unknown counts as false).
 *
 * @example
 * tx.updateWhere(items, undefined, { size: when(gte(col("n"), 10), "big", col("size")) })
 */
export function when(pred, a, b) {
  if (!isPred(pred)) throw invalidArgs(`when: the first argument must be a predicate such as gte(col("n"), 10), got ${describe(pred)}`);
  return node({ when: [pred, toExpr(a), toExpr(b)] });
}
