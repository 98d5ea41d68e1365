// Queries: predicates and immutable query values.
//
// A predicate is a frozen wire node ({"eq":["path","a"]}); a query holds its
// table's definition, a where and an order, and every builder method returns
// a new query. limit and the cursor are arguments of the runner, not part of
// the query. The core checks every column and operand and answers
// invalid/args naming the bad one.

import { invalidArgs, userThrew } from "./errors.js";
import { col, isCol, isExpr, isPred, PRED } from "./expr.js";
import { describe, isTableDef } from "./schema.js";

function pred(wire) {
  Object.defineProperty(wire, PRED, { value: true });
  return Object.freeze(wire);
}

function colName(op, c) {
  if (isCol(c)) return c.col;
  throw invalidArgs(`${op}: the first argument must be a column such as e.path or col("path"), got ${describe(c)}`);
}

function literal(op, v) {
  if (isExpr(v) || isPred(v)) {
    throw invalidArgs(`${op}: the second argument must be a literal value (a column is compared with a value, never with another column), got ${describe(v)}`);
  }
  return v;
}

function comparison(op) {
  return (c, v) => pred({ [op]: [colName(op, c), literal(op, v)] });
}

/**
 * column = value. Comparisons with null are false, as in SQL: use isNull.
 *
 * @example
 * query(Edits).where((e) => eq(e.path, "src/app.ts"))
 */
export const eq = comparison("eq");
/**
 * column <> value (rows where the column is null do not match).
 *
 * @example
 * query(Edits).where((e) => ne(e.path, "README.md"))
 */
export const ne = comparison("ne");
/**
 * column < value.
 *
 * @example
 * query(Edits).where((e) => lt(e.at, 10))
 */
export const lt = comparison("lt");
/**
 * column <= value.
 *
 * @example
 * query(Edits).where((e) => lte(e.at, 10))
 */
export const lte = comparison("lte");
/**
 * column > value.
 *
 * @example
 * query(Edits).where((e) => gt(e.at, 10))
 */
export const gt = comparison("gt");
/**
 * column >= value.
 *
 * @example
 * query(Edits).where((e) => and(gte(e.at, from), lt(e.at, to)))
 */
export const gte = comparison("gte");

/**
 * column is one of the values.
 *
 * @example
 * query(Edits).where((e) => inArray(e.entry, [812, 813]))
 */
export function inArray(c, values) {
  const name = colName("inArray", c);
  if (!Array.isArray(values)) throw invalidArgs(`inArray(${name}): the second argument must be an array, got ${describe(values)}`);
  return pred({ inArray: [name, values.map((v) => literal("inArray", v))] });
}

/**
 * column is null.
 *
 * @example
 * query(Edits).where((e) => isNull(e.size))
 */
export function isNull(c) {
  return pred({ isNull: colName("isNull", c) });
}

/**
 * A str column starts with `p` (by code point: emoji included, unlike a
 * hand-built `p + "\uffff"` bound).
 *
 * @example
 * query(Edits).where((e) => prefix(e.path, "a/"))
 */
export function prefix(c, p) {
  return pred({ prefix: [colName("prefix", c), literal("prefix", p)] });
}

function checkPreds(op, ps) {
  const list = ps.filter((p) => p !== undefined);
  for (const p of list) {
    if (!isPred(p)) throw invalidArgs(`${op}: every argument must be a predicate such as eq(e.path, "a"), got ${describe(p)}`);
  }
  return list;
}

/**
 * Every predicate holds. undefined arguments are skipped, so a condition
 * can be left out.
 *
 * @example
 * query(Edits).where((e) => and(gte(e.at, from), to === undefined ? undefined : lt(e.at, to)))
 */
export function and(...ps) {
  return pred({ and: checkPreds("and", ps) });
}

/**
 * At least one predicate holds. undefined arguments are skipped.
 *
 * @example
 * query(Edits).where((e) => or(eq(e.path, "a"), eq(e.path, "b")))
 */
export function or(...ps) {
  return pred({ or: checkPreds("or", ps) });
}

/**
 * The predicate does not hold (unknown stays unknown, as in SQL).
 *
 * @example
 * query(Edits).where((e) => not(prefix(e.path, "tmp/")))
 */
export function not(p) {
  const [one] = checkPreds("not", [p]);
  if (!one) throw invalidArgs("not: needs a predicate, got undefined");
  return pred({ not: one });
}

const refsCache = new WeakMap();

/**
 * The column references of a table: `refs(Edits).path` is `col("path")`.
 * This is the `e` handed to where and orderBy callbacks. A name that is not
 * a column still gives a reference, and the core refuses it naming it.
 *
 * @example
 * const e = columnRefs(Edits); eq(e.path, "a")
 */
export function columnRefs(def) {
  let refs = refsCache.get(def);
  if (!refs) {
    const known = {};
    for (const name of Object.keys(def.columns)) known[name] = col(name);
    refs = new Proxy(Object.freeze(known), {
      get(target, prop) {
        if (typeof prop !== "string") return undefined;
        if (prop in target) return target[prop];
        if (prop === "then" || prop === "toJSON") return undefined;  // never look like a promise
        return col(prop);
      },
    });
    refsCache.set(def, refs);
  }
  return refs;
}

/**
 * Resolves a where argument: a function of the column refs (one that
 * returns nothing is refused), a predicate, or undefined (every row).
 *
 * @example
 * resolveWhere(Edits, (e) => eq(e.path, "a"))   // { eq: ["path", "a"] }
 */
export function resolveWhere(def, w, what = "where") {
  const p = typeof w === "function" ? w(columnRefs(def)) : w;
  if (p === undefined || p === null) {
    // `(e) => { eq(e.path, "a"); }` (braces, no return) would otherwise
    // mean "every row": no where at all is how a caller says that.
    if (typeof w === "function") throw invalidArgs(`${what}: the where callback returned ${p}; return a predicate, or pass no where for every row`);
    return undefined;
  }
  if (!isPred(p)) throw invalidArgs(`${what}: expected a predicate such as eq(e.path, "a"), got ${describe(p)}`);
  return p;
}

/**
 * The predicate of a store call that takes a where (updateWhere,
 * deleteWhere, nearest). A `where` callback that throws gives invalid/args
 * with the callback's error as `cause` (a StoreError it throws passes as it
 * is); a builder's `query(T).where(fn)` is the caller's own call and lets
 * the error through as it is.
 *
 * @example
 * whereOf(def, (e) => eq(e.path, "a"), "tx.deleteWhere(notes/items)")   // { eq: ["path", "a"] }
 */
export function whereOf(def, where, what) {
  try {
    return resolveWhere(def, where, what);
  } catch (e) {
    throw userThrew(e, `${what}: the where callback`);
  }
}

const QUERY = Symbol.for("onestore.query");

function makeQuery(def, where, order) {
  const q = {
    /** The table definition this query reads. */
    table: def,
    /**
     * A new query that also requires `w` (several where calls are and-ed).
     *
     * @example
     * query(Edits).where((e) => eq(e.path, "a")).where((e) => gt(e.at, 3))
     */
    where(w) {
      const p = resolveWhere(def, w);
      if (p === undefined) return q;
      return makeQuery(def, where === undefined ? p : and(where, p), order);
    },
    /**
     * A new query ordered also by a column, "asc" (default) or "desc".
     * The key columns not named finish the order, so it is total.
     *
     * @example
     * query(Edits).orderBy((e) => e.path).orderBy((e) => e.at, "desc")
     */
    orderBy(c, dir = "asc") {
      const ref = typeof c === "function" ? c(columnRefs(def)) : typeof c === "string" ? col(c) : c;
      if (!isCol(ref)) throw invalidArgs(`orderBy: expected a column such as (e) => e.at, got ${describe(ref)}`);
      if (dir !== "asc" && dir !== "desc") throw invalidArgs(`orderBy(${ref.col}): the direction must be "asc" or "desc", got ${describe(dir)}`);
      return makeQuery(def, where, Object.freeze([...order, Object.freeze([ref.col, dir])]));
    },
    /** The wire form: { where, orderBy }. */
    toJSON() {
      return { where: where ?? null, orderBy: order };
    },
  };
  Object.defineProperty(q, QUERY, { value: true });
  return Object.freeze(q);
}

/**
 * A query over a table: every row, in key order, until where and orderBy
 * narrow it.
 *
 * @example
 * const recent = query(Edits).where((e) => eq(e.path, "src/app.ts")).orderBy((e) => e.at, "desc");
 * const { rows, next } = await edits.page(recent, 20, ctx);
 */
export function query(def) {
  if (!isTableDef(def)) throw invalidArgs(`query: expected a table made by defineTable, got ${describe(def)}`);
  return makeQuery(def, undefined, Object.freeze([]));
}

/**
 * A query of `def` from its wire form ({ where, orderBy }, what toJSON gives),
 * as it arrives over a link. The core checks the columns and operands.
 *
 * @example
 * queryFromWire(Edits, query(Edits).orderBy((e) => e.at).toJSON())
 */
export function queryFromWire(def, wire) {
  if (wire === undefined || wire === null) return query(def);
  if (typeof wire !== "object" || !Array.isArray(wire.orderBy ?? [])) {
    throw invalidArgs(`query: expected { where, orderBy } (a query's toJSON()), got ${describe(wire)}`);
  }
  const order = (wire.orderBy ?? []).map((o) => {
    if (!Array.isArray(o) || typeof o[0] !== "string" || (o[1] !== "asc" && o[1] !== "desc")) {
      throw invalidArgs(`query: each orderBy entry must be [column, "asc" | "desc"], got ${describe(o)}`);
    }
    return Object.freeze([o[0], o[1]]);
  });
  const where = wire.where === undefined || wire.where === null ? undefined : wire.where;
  if (where !== undefined && (typeof where !== "object" || Array.isArray(where))) {
    throw invalidArgs(`query: where must be a predicate object such as { eq: [col, v] }, got ${describe(where)}`);
  }
  return makeQuery(def, where, Object.freeze(order));
}

/**
 * True for a query value.
 *
 * @example
 * isQuery(query(Edits))   // true
 */
export function isQuery(v) {
  return v !== null && typeof v === "object" && v[QUERY] === true;
}
