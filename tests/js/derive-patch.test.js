// Checks the pages the flush patches in place (js/derive.js, "pages patched
// in place"): a held derive's first page or all read by another column is
// made from its old page and the rows the commit left, with no page read,
// and is always what a fresh read gives, next cursor included; where the
// old page cannot tell (a row of the page left it and no row after it is
// known, a where or order the package cannot judge), the read goes to the
// core.

import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";

import { and, bool, defineTable, eq, gt, gte, inArray, int, isNull, json, num, lt, ne, not, openStore, or, prefix, query, str } from "../../js/index.js";
import { loadNodeCore } from "../../js/loader-node.js";
import { tempDir } from "./helpers.js";

const Items = defineTable("items", {
  columns: { id: str(), grp: str(), n: int({ default: 0 }), tag: str().optional(), done: bool({ default: false }), meta: json().optional(), x: num().optional() },
  key: ["id"],
  indexes: { byGrp: ["grp"], byN: ["n"] },
});
// A key of two columns, an int last.
const Pairs = defineTable("pairs", { columns: { grp: str(), at: int(), n: int({ default: 0 }) }, key: ["grp", "at"] });

const tick = () => new Promise((r) => setTimeout(r, 0));

// Counts the core's page reads (the wasm module is loaded once a process,
// so its Core's prototype is every store's).
const mod = await loadNodeCore();
const pageOf = mod.Core.prototype.page;
let pageReads = 0;
mod.Core.prototype.page = function page(...args) {
  pageReads++;
  return pageOf.apply(this, args);
};

async function open(options = { backend: "memory" }) {
  const store = await openStore(options);
  const owner = store.object({ type: "list" });
  const items = owner.table(Items);
  const pairs = owner.table(Pairs);
  await items.count();
  await pairs.count();
  const values = {};
  const held = (name, fn) => store.derive(name, fn).hold(({ value, error }) => { values[name] = error ?? value; });
  return { store, items, pairs, tx: (fn) => owner.tx(fn), values, held };
}

// Every row of a query, as read.all reads it.
async function allOf(t, q) {
  const rows = [];
  let after;
  for (;;) {
    const page = await t.page(q, 100, undefined, after ? { after } : undefined);
    rows.push(...page.rows);
    if (!page.next) return rows;
    after = page.next;
  }
}

test("pages of the highest n, every one changed by each put: patched with no page read, each as a fresh read, next included", async () => {
  const { store, items, tx, values, held } = await open();
  await tx(async (t) => {
    for (let i = 0; i < 12; i++) await t.put(items, { id: `r${String(i).padStart(2, "0")}`, grp: `g${i % 3}`, n: i });
  });
  const queries = [0, 1, 2, 3].map((g) => query(Items).where((r) => gte(r.n, -g)).orderBy((r) => r.n, "desc"));
  queries.forEach((q, g) => held(`top${g}`, (read) => read.page(items, q, 3)));
  await tick();
  let n = 100;
  // A new key, a key in every page, a key that is every page's peek, a key
  // past every window: each commit puts one row with the highest n.
  for (const id of ["x1", "x1", "r09", "r08", "r00"]) {
    const before = pageReads;
    await tx(async (t) => { await t.put(items, { id, grp: "g9", n: n++ }); });
    assert.equal(pageReads - before, 0, `no page read for the put of ${id}`);
    await tick();
    for (let g = 0; g < queries.length; g++) {
      const fresh = await items.page(queries[g], 3);
      assert.ok(fresh.next, "the page has a next");
      assert.deepEqual(values[`top${g}`], fresh, `top${g} after the put of ${id}`);
    }
  }
  // A row of the page leaves it and no row after the page is known (the
  // next row is past the old page's peek): the page is read again.
  const before = pageReads;
  await tx(async (t) => { await t.delete(items, ["r00"]); });
  assert.equal(pageReads - before, queries.length, "one page read per derive");
  await tick();
  for (let g = 0; g < queries.length; g++) assert.deepEqual(values[`top${g}`], await items.page(queries[g], 3));
  // The page the derive got is its own: changing it changes no later one.
  values.top0.rows[0].n = -1;
  values.top0.rows.length = 0;
  await tx(async (t) => { await t.put(items, { id: "z", grp: "g0", n: -50 }); });  // past every window
  await tx(async (t) => { await t.put(items, { id: "y", grp: "g0", n: n++ }); });
  await tick();
  assert.deepEqual(values.top0, await items.page(queries[0], 3));
  await store.close();
});

test("each derive gets rows of its own from a patched page, though the written row is one object for every page", async () => {
  const { store, pairs, tx, values, held } = await open();
  await tx(async (t) => {
    for (let i = 0; i < 6; i++) await t.put(pairs, { grp: "g", at: i, n: i });
  });
  const q = query(Pairs).where((r) => gte(r.n, 0)).orderBy((r) => r.n, "desc");
  // Recomputed first (derives run in the order they were made): sums its
  // rows, then spoils every one. The written row is one object for every
  // page the flush patches; each derive must get its own copy.
  held("spoiler", (read) => {
    const { rows } = read.page(pairs, q, 3);
    const sum = rows.reduce((s, r) => s + r.n, 0);
    for (const r of rows) {
      r.n = -1;
      r.grp = "spoilt";
    }
    return sum;
  });
  held("reader", (read) => read.page(pairs, q, 3));
  await tick();
  for (let n = 10; n < 14; n++) {
    const before = pageReads;
    await tx(async (t) => { await t.put(pairs, { grp: "g", at: n, n }); });
    assert.equal(pageReads - before, 0, `no page read for the put of n ${n}`);
    await tick();
    const fresh = await pairs.page(q, 3);
    assert.deepEqual(values.reader, fresh, `the reader's page after the put of n ${n}`);
    assert.equal(values.spoiler, fresh.rows.reduce((s, r) => s + r.n, 0), `the spoiler's sum after the put of n ${n}`);
  }
  await store.close();
});

test("a derive recomputed for another read is served its untouched page without a page read", async () => {
  const { store, items, tx, values, held } = await open();
  await tx(async (t) => {
    for (let i = 0; i < 5; i++) await t.put(items, { id: `a${i}`, grp: "g1", n: i });
  });
  const g1 = query(Items).where((r) => eq(r.grp, "g1"));
  held("both", (read) => ({ page: read.page(items, g1, 2), head: read.head }));
  await tick();
  const before = pageReads;
  await tx(async (t) => { await t.put(items, { id: "b", grp: "g2", n: 1 }); });  // outside g1's where
  assert.equal(pageReads - before, 0);
  await tick();
  assert.deepEqual(values.both, { page: await items.page(g1, 2), head: store.head });
  await store.close();
});

for (const backend of ["memory", "sqlite"]) {
  test(`held first pages and alls read by another column, patched or read, always hold what a fresh read gives (random writes, ${backend})`, async () => {
    const dir = backend === "sqlite" ? tempDir() : null;
    const { store, items, pairs, tx, values, held } = await open(backend === "sqlite" ? { backend, path: join(dir, "p.sqlite") } : { backend });
    // Texts whose code point order differs from JS's (U+E000 against an
    // emoji), and ones the cursor escapes.
    const grps = ["g1", "g2", "é", "", "\ue000", "😀", "a\"b", "t\tb", "x\by"];
    const itemQueries = [
      [query(Items).where((r) => eq(r.grp, "g1")), 3],
      [query(Items).where((r) => and(eq(r.grp, "g2"), gte(r.n, 5))), 2],
      [query(Items).where((r) => gte(r.n, 10)).orderBy((r) => r.n, "desc"), 4],
      [query(Items).where((r) => or(eq(r.tag, "x"), isNull(r.tag))).orderBy((r) => r.grp), 3],
      [query(Items).where((r) => not(inArray(r.grp, ["g1", "é"]))).orderBy((r) => r.grp, "desc").orderBy((r) => r.n), 5],
      [query(Items).where((r) => prefix(r.grp, "g")).orderBy((r) => r.n), 1],
      [query(Items).where((r) => ne(r.n, 3)).orderBy((r) => r.done).orderBy((r) => r.tag, "desc"), 2],
      [query(Items).orderBy((r) => r.tag), 3],
      [query(Items).where((r) => and(eq(r.done, false), not(isNull(r.tag)))).orderBy((r) => r.n, "desc"), 2],
      // Not judged by the package: str order, a num column.
      [query(Items).where((r) => and(gt(r.grp, "g1"), lt(r.grp, "h"))).orderBy((r) => r.grp, "desc"), 2],
      [query(Items).where((r) => gte(r.n, 2)).orderBy((r) => r.x), 2],
    ];
    const pairQueries = [
      [query(Pairs).where((r) => gte(r.n, 3)), 3],
      [query(Pairs).where((r) => lt(r.n, 8)).orderBy((r) => r.n, "desc"), 2],
    ];
    const allQueries = [query(Items).where((r) => eq(r.done, true)).orderBy((r) => r.n), query(Pairs).where((r) => ne(r.grp, "g1"))];
    itemQueries.forEach(([q, limit], i) => held(`i${i}`, (read) => read.page(items, q, limit)));
    pairQueries.forEach(([q, limit], i) => held(`p${i}`, (read) => read.page(pairs, q, limit)));
    held("all0", (read) => read.all(items, allQueries[0]));
    held("all1", (read) => read.all(pairs, allQueries[1]));
    let seed = 7;
    const rand = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
    const id = () => `k${rand(30)}`;
    const commits = 200;
    let reads = 0;
    for (let i = 0; i < commits; i++) {
      const before = pageReads;
      await tx(async (t) => {
        for (let k = rand(3) + 1; k > 0; k--) {
          const pick = rand(24);
          if (pick < 10) await t.put(items, { id: id(), grp: grps[rand(grps.length)], n: rand(15), done: rand(2) === 0, ...(rand(3) ? { tag: grps[rand(grps.length)] } : {}), ...(rand(2) ? { meta: { k: rand(3) }, x: rand(4) / 2 } : {}) });
          else if (pick < 12) await t.delete(items, [id()]);
          else if (pick < 16) {
            const key = id();
            if (await t.get(items, [key])) {
              const sets = [{ n: rand(15) }, { grp: grps[rand(grps.length)] }, { tag: rand(2) ? "x" : null }, { done: rand(2) === 0 }];
              await t.update(items, [key], sets[rand(sets.length)]);
            }
          } else if (pick < 20) await t.put(pairs, { grp: grps[rand(3)], at: rand(12) - 4, n: rand(12) });
          else if (pick < 23) await t.delete(pairs, [grps[rand(3)], rand(12) - 4]);
          else await t.updateWhere(items, (r) => eq(r.grp, grps[rand(grps.length)]), { n: i % 15 });
        }
      });
      reads += pageReads - before;
      await tick();
      for (let q = 0; q < itemQueries.length; q++) assert.deepEqual(values[`i${q}`], await items.page(...itemQueries[q]), `i${q} after commit ${i}`);
      for (let q = 0; q < pairQueries.length; q++) assert.deepEqual(values[`p${q}`], await pairs.page(...pairQueries[q]), `p${q} after commit ${i}`);
      assert.deepEqual(values.all0, await allOf(items, allQueries[0]), `all0 after commit ${i}`);
      assert.deepEqual(values.all1, await allOf(pairs, allQueries[1]), `all1 after commit ${i}`);
    }
    // Patching spared page reads: fewer than half of one per derive and commit.
    const derives = itemQueries.length + pairQueries.length + allQueries.length;
    assert.ok(reads < derives * commits * 0.5, `${reads} page reads in the flushes of ${commits} commits for ${derives} derives`);
    await store.close();
  });
}

test("a patched page is cut at about 8 MiB of text as a fresh read is: rows that grow past it send the read to the core", async () => {
  const { store, items, tx, values, held } = await open();
  await tx(async (t) => {
    for (let i = 0; i < 12; i++) await t.put(items, { id: `r${String(i).padStart(2, "0")}`, grp: "g", n: i });
  });
  const q = query(Items).where((r) => gte(r.n, 0)).orderBy((r) => r.n, "desc");
  held("top", (read) => read.page(items, q, 10));
  await tick();
  const big = "é".repeat(600_000);  // 1.2 MB of UTF-8 in 600,000 chars
  let cut = false;
  for (let i = 11; i >= 2; i--) {
    await tx(async (t) => { await t.put(items, { id: `r${String(i).padStart(2, "0")}`, grp: "g", n: i, tag: big }); });
    await tick();
    const fresh = await items.page(q, 10);
    cut ||= fresh.rows.length < 10;
    assert.deepEqual(values.top.rows.map((r) => r.id), fresh.rows.map((r) => r.id), `the derive's page after row ${i} grew`);
    assert.equal(values.top.next, fresh.next);
  }
  assert.ok(cut, "a fresh read was cut by then (7 rows of 1.2 MB)");
  await store.close();
});
