// Checks that a big `or` answers the same on every Node backend: or-trees of
// up to 10,000 equalities (which the sqlite backends fold into one IN list
// per column, src/query/sql.cc) beside inArrays, other columns' terms, NULL
// cells and `not`, with page, count and the rows iterator, against the
// memory store (which evaluates the tree in C++) and a plain JS filter of
// the same rows; and an `or` and an `and` of 1,200 comparisons that do not
// fold, which the sqlite backends write as balanced groups (an `or` of
// 12,000 overflowed the wasm stack inside SQLite before; their depth is
// checked in tests/cpp/sql_test.cc, a durable store's in
// tests/edge/big-where.test.js: SQLite prepares so many terms slowly, so
// this file keeps them few).
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";

import { and, bool, defineTable, eq, gt, inArray, int, isNull, lt, ne, not, num, openReplica, openStore, or, query, str, StoreError } from "../../js/index.js";
import { tempDir } from "./helpers.js";

const Items = defineTable("items", {
  columns: { id: int(), name: str().optional(), n: int().optional(), x: num().optional(), flag: bool().optional() },
  key: ["id"],
});
const ROWS = 1000;

function rowOf(i) {
  return {
    id: i,
    name: i % 11 === 0 ? null : `name-${i % 500}`,
    n: i % 13 === 0 ? null : (i * 7) % 20000,
    x: i % 17 === 0 ? null : (i % 50) / 4,
    flag: i % 19 === 0 ? null : i % 2 === 0,
  };
}

// Each case: a where and the same test in JS, in SQL's three values (null:
// unknown), so that `not` is checked too.
const range = (n, f) => Array.from({ length: n }, (_, i) => f(i));
const eqT = (c, v) => (r) => (r[c] === null ? null : r[c] === v);
const orT = (...ts) => (r) => {
  let unknown = false;
  for (const t of ts) {
    const v = t(r);
    if (v === true) return true;
    if (v === null) unknown = true;
  }
  return unknown ? null : false;
};
const andT = (...ts) => (r) => {
  let unknown = false;
  for (const t of ts) {
    const v = t(r);
    if (v === false) return false;
    if (v === null) unknown = true;
  }
  return unknown ? null : true;
};
const notT = (t) => (r) => { const v = t(r); return v === null ? null : !v; };
const cmpT = (c, f) => (r) => (r[c] === null ? null : f(r[c]));
const inT = (c, vs) => { const set = new Set(vs); return (r) => (r[c] === null ? null : set.has(r[c])); };

const tenThousand = range(10000, (i) => i * 3);
const cases = [
  ["10,000 equalities on one int column", (e) => or(...tenThousand.map((v) => eq(e.n, v))), orT(...[inT("n", tenThousand)])],
  ["10,000 equalities under not", (e) => not(or(...tenThousand.map((v) => eq(e.n, v)))), notT(inT("n", tenThousand))],
  ["equalities on two columns, an inArray and other terms, interleaved",
    (e) => or(...range(2000, (i) => (i % 2 ? eq(e.n, i * 5) : eq(e.name, `name-${i}`))), inArray(e.n, [1, 2, 3, 7]), isNull(e.x), eq(e.flag, true)),
    orT(inT("n", [...range(2000, (i) => i * 5).filter((_, i) => i % 2), 1, 2, 3, 7]), inT("name", range(2000, (i) => `name-${i}`).filter((_, i) => i % 2 === 0)),
      (r) => r.x === null, eqT("flag", true))],
  ["a big or inside an and, beside a num column's equalities",
    (e) => and(or(...range(5000, (i) => eq(e.n, i * 2))), not(or(eq(e.x, 1.5), eq(e.x, 2), eq(e.x, 0.25)))),
    andT(inT("n", range(5000, (i) => i * 2)), notT(inT("x", [1.5, 2, 0.25])))],
  ["one equality per column stays as it is", (e) => or(eq(e.n, 14), eq(e.name, "name-3")), orT(eqT("n", 14), eqT("name", "name-3"))],
  ["1,200 comparisons that do not fold, under or",
    (e) => or(...range(1200, (i) => (i % 2 ? and(gt(e.n, i * 3), lt(e.n, i * 3 + 2)) : ne(e.name, `name-${i % 500}`)))),
    orT(...range(1200, (i) => (i % 2 ? andT(cmpT("n", (v) => v > i * 3), cmpT("n", (v) => v < i * 3 + 2)) : cmpT("name", (v) => v !== `name-${i % 500}`))))],
  ["1,200 comparisons under and", (e) => and(...range(1200, (i) => ne(e.n, i * 2 + 1))), andT(...range(1200, (i) => cmpT("n", (v) => v !== i * 2 + 1)))],
];

let dir;
const backends = [
  ["memory", () => ({ backend: "memory" })],
  ["sqlite :memory:", () => ({ backend: "sqlite", path: ":memory:" })],
  ["a sqlite file", () => ({ backend: "sqlite", path: join(dir ??= tempDir("onestore-big-or-"), "big-or.sqlite") })],
];

test("a big or gives the same rows, pages and counts on memory, sqlite :memory: and a sqlite file as a JS filter", async () => {
  const rows = range(ROWS, rowOf);
  const stores = [];
  for (const [name, options] of backends) {
    const store = await openStore(options());
    const items = store.object({ type: "t" }).table(Items);
    await store.object({ type: "t" }).tx(async (tx) => { for (const r of rows) await tx.put(items, r); });
    stores.push({ name, store, items });
  }
  for (const [label, where, truth] of cases) {
    const expected = rows.filter((r) => truth(r) === true).map((r) => r.id);
    assert.ok(expected.length > 0 && expected.length < ROWS, `${label}: a case that tells rows apart`);
    for (const { name, items } of stores) {
      const q = query(Items).where(where);
      const got = [];
      for await (const r of items.rows(q)) got.push(r.id);
      assert.deepEqual(got, expected, `${label} on ${name}`);
      assert.equal(await items.count(q), expected.length, `${label}: count on ${name}`);
      const first = await items.page(q, 7);
      assert.deepEqual(first.rows.map((r) => r.id), expected.slice(0, 7), `${label}: first page on ${name}`);
      assert.equal(first.next === undefined, expected.length <= 7, `${label}: a next page on ${name} exactly when there are more rows`);
      if (first.next !== undefined) {
        const second = await items.page(q, 7, undefined, { after: first.next });
        assert.deepEqual(second.rows.map((r) => r.id), expected.slice(7, 14), `${label}: second page on ${name}`);
      }
    }
  }
  for (const { store } of stores) await store.close();
});

// SQLite binds at most 32,766 values per statement. A where with more has
// its small values written into its text (SqlDialect::Embedded); only one
// with more long strings than that is refused, as `limit`.
test("a where of 40,000 values beyond SQLite's 32,766 parameters answers as on memory, and a sqlite replica applies it", async () => {
  const rows = range(200, rowOf);
  const where = (e) => and(...range(40000, (i) => gt(e.n, -i - 1)), lt(e.n, 1000));
  const expected = rows.filter((r) => r.n !== null && r.n < 1000).length;
  assert.ok(expected > 0 && expected < rows.length);
  const driver = await openStore({ backend: "memory" });
  const replica = await openReplica({ backend: "sqlite", path: ":memory:" });
  const sqlite = await openStore({ backend: "sqlite", path: ":memory:" });
  for (const store of [driver, sqlite]) {
    const owner = store.object({ type: "t" });
    const items = owner.table(Items);
    await owner.tx(async (tx) => { for (const r of rows) await tx.put(items, r); });
    assert.equal(await items.count(query(Items).where(where)), expected);
    await owner.tx(async (tx) => { await tx.deleteWhere(items, where); });
    assert.equal(await items.count(), rows.length - expected);
  }
  await replica.applyBatch(await driver.outbox.read(0, 100));
  assert.equal(replica.head, driver.head);
  assert.equal(await replica.fingerprint(), await driver.fingerprint());

  const sqliteItems = sqlite.object({ type: "t" }).table(Items);
  const long = (i) => `${"x".repeat(300)}-${i}`;
  const head = sqlite.head;
  await assert.rejects(sqliteItems.count(query(Items).where((e) => and(...range(33000, (i) => ne(e.name, long(i)))))),
    (e) => e instanceof StoreError && e.code === "limit" && /33000 values/.test(e.message) && /32766/.test(e.message));
  assert.equal(sqlite.head, head);
  assert.equal(await sqliteItems.count(), rows.length - expected);
  for (const store of [driver, replica, sqlite]) await store.close();
});
