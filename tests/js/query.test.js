// Checks that schema builders, predicates, queries and set expressions build
// the wire JSON of design.md, and that they are immutable values.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  add, and, bool, coalesce, col, concat, defineTable, eq, gt, gte, inArray, int, isNull, json, lt, lte,
  max, min, ne, not, num, or, prefix, query, replacePrefix, str, sub, value, when,
} from "../../js/index.js";
import { encodeJson } from "../../js/encode.js";
import { tableRecord } from "../../js/schema.js";
import { throwsWith } from "./helpers.js";

const Edits = defineTable("edits", {
  version: 2,
  columns: { id: str(), path: str(), entry: int(), at: int({ default: 0 }), note: str().optional(), ok: bool(), score: num(), meta: json() },
  key: ["id"],
  indexes: { byPath: ["path", "at"] },
});

const wire = (v) => JSON.parse(encodeJson(v));

test("a table definition gives the wire table record under its full name", () => {
  assert.deepEqual(wire(tableRecord("file-history/edits", Edits)), {
    op: "table",
    table: "file-history/edits",
    version: 2,
    columns: {
      id: { type: "str" },
      path: { type: "str" },
      entry: { type: "int" },
      at: { type: "int", default: 0 },
      note: { type: "str", optional: true },
      ok: { type: "bool" },
      score: { type: "num" },
      meta: { type: "json" },
    },
    key: ["id"],
    indexes: { byPath: ["path", "at"] },
  });
  assert.ok(Object.isFrozen(Edits));
});

test("defineTable refuses a missing key or a column not made by a builder", () => {
  throwsWith(() => defineTable("t", { columns: { id: str() } }), "invalid/args", ["key"]);
  throwsWith(() => defineTable("t", { columns: { id: "str" }, key: ["id"] }), "invalid/args", ["id"]);
  throwsWith(() => defineTable("", { columns: { id: str() }, key: ["id"] }), "invalid/args");
  // A misspelt field is named, not silently dropped (a table without its index).
  throwsWith(() => defineTable("t", { columns: { id: str() }, key: ["id"], index: { byId: ["id"] } }), "invalid/args", ['"index"', "indexes"]);
  throwsWith(() => defineTable("t", { columns: { id: str() }, primaryKey: ["id"], key: ["id"] }), "invalid/args", ['"primaryKey"']);
});

test("a column builder refuses an option it does not know, naming it", () => {
  throwsWith(() => str({ optional: true }), "invalid/args", ['"optional"', "str().optional()"]);
  throwsWith(() => int({ defualt: 0 }), "invalid/args", ['"defualt"', "{ default }"]);
  throwsWith(() => json({ versoin: 2 }), "invalid/args", ['"versoin"', "{ default, version, migrate }"]);
  assert.equal(str({ default: "" }).default, "");
  assert.equal(json({ version: 1 }).version, 1);
});

test("every predicate builds its wire form", () => {
  const q = (w) => wire(query(Edits).where(w).toJSON()).where;
  assert.deepEqual(q((e) => eq(e.path, "a")), { eq: ["path", "a"] });
  assert.deepEqual(q((e) => ne(e.path, "a")), { ne: ["path", "a"] });
  assert.deepEqual(q((e) => lt(e.at, 1)), { lt: ["at", 1] });
  assert.deepEqual(q((e) => lte(e.at, 1)), { lte: ["at", 1] });
  assert.deepEqual(q((e) => gt(e.at, 2n ** 60n)), { gt: ["at", 1152921504606846976] });
  assert.deepEqual(q((e) => gte(e.at, 1)), { gte: ["at", 1] });
  assert.deepEqual(q((e) => inArray(e.entry, [1, 2])), { inArray: ["entry", [1, 2]] });
  assert.deepEqual(q((e) => isNull(e.note)), { isNull: "note" });
  assert.deepEqual(q((e) => prefix(e.path, "a/")), { prefix: ["path", "a/"] });
  assert.deepEqual(q((e) => and(eq(e.path, "a"), undefined, gt(e.at, 1))), { and: [{ eq: ["path", "a"] }, { gt: ["at", 1] }] });
  assert.deepEqual(q((e) => or(eq(e.path, "a"), eq(e.path, "b"))), { or: [{ eq: ["path", "a"] }, { eq: ["path", "b"] }] });
  assert.deepEqual(q((e) => not(isNull(e.note))), { not: { isNull: "note" } });
  assert.deepEqual(q(eq(col("path"), "x")), { eq: ["path", "x"] });
});

test("queries are immutable: where and orderBy return new queries", () => {
  const base = query(Edits);
  const narrowed = base.where((e) => eq(e.path, "a"));
  const ordered = narrowed.orderBy((e) => e.at, "desc").orderBy("id");
  assert.deepEqual(base.toJSON(), { where: null, orderBy: [] });
  assert.deepEqual(wire(narrowed.toJSON()), { where: { eq: ["path", "a"] }, orderBy: [] });
  assert.deepEqual(wire(ordered.toJSON()), { where: { eq: ["path", "a"] }, orderBy: [["at", "desc"], ["id", "asc"]] });
  assert.deepEqual(wire(narrowed.where((e) => gt(e.at, 1)).toJSON()).where, { and: [{ eq: ["path", "a"] }, { gt: ["at", 1] }] });
  assert.ok(Object.isFrozen(ordered));
  assert.equal(base.table, Edits);
});

test("a where callback that returns nothing is refused, never taken for every row; no where at all is every row", () => {
  throwsWith(() => query(Edits).where((e) => { eq(e.path, "a"); }), "invalid/args", ["where callback returned undefined", "no where"]);
  throwsWith(() => query(Edits).where(() => null), "invalid/args", ["returned null"]);
  assert.deepEqual(query(Edits).where(undefined).toJSON(), { where: null, orderBy: [] });
  assert.deepEqual(query(Edits).where(null).toJSON(), { where: null, orderBy: [] });
});

test("e.name is col(name), and an unknown name still gives a column the core can refuse by name", () => {
  let seen;
  query(Edits).where((e) => { seen = e; return eq(e.path, "a"); });
  assert.deepEqual(wire(seen.path), { col: "path" });
  assert.deepEqual(wire(seen.nope), { col: "nope" });
  assert.equal(seen.then, undefined);
});

test("predicates refuse a non-column first operand, a column as literal, and a bad direction", () => {
  throwsWith(() => eq("path", "a"), "invalid/args", ['"path"']);
  throwsWith(() => eq(col("a"), col("b")), "invalid/args", ["literal"]);
  throwsWith(() => inArray(col("a"), "x"), "invalid/args", ["array"]);
  throwsWith(() => and(eq(col("a"), 1), "x"), "invalid/args", ['"x"']);
  throwsWith(() => query(Edits).orderBy((e) => e.at, "up"), "invalid/args", ['"up"']);
  throwsWith(() => query(Edits).where(() => 3), "invalid/args", ["3"]);
  throwsWith(() => query({}), "invalid/args");
});

test("set expressions build their wire form and a plain value means value(v)", () => {
  assert.deepEqual(wire(add(col("at"), 1)), { add: [{ col: "at" }, { value: 1 }] });
  assert.deepEqual(wire(sub(col("at"), 2n ** 60n)), { sub: [{ col: "at" }, { value: 1152921504606846976 }] });
  assert.deepEqual(wire(max(col("a"), 3, col("b"))), { max: [{ col: "a" }, { value: 3 }, { col: "b" }] });
  assert.deepEqual(wire(min(1, 2)), { min: [{ value: 1 }, { value: 2 }] });
  assert.deepEqual(wire(concat("x/", col("path"))), { concat: [{ value: "x/" }, { col: "path" }] });
  assert.deepEqual(wire(replacePrefix("a/", "b/")), { replacePrefix: ["a/", "b/"] });
  assert.deepEqual(wire(coalesce(col("note"), "none")), { coalesce: [{ col: "note" }, { value: "none" }] });
  assert.deepEqual(wire(when(gte(col("n"), 10), "big", col("title"))), {
    when: [{ gte: ["n", 10] }, { value: "big" }, { col: "title" }],
  });
  assert.deepEqual(wire(value({ a: 1 })), { value: { a: 1 } });
  throwsWith(() => when("x", 1, 2), "invalid/args", ["predicate"]);
  throwsWith(() => replacePrefix("a/", 1), "invalid/args");
});
