// Checks that the reads issue 13 made cheaper keep their behaviour: a query's
// wire text is kept per query only while it cannot change (a literal with
// toJSON is encoded again at every read), a derive's reader is reused
// between computations yet still refused outside one, and a get by a bare
// key, a one-item list or a key that needs escaping finds the same rows.

import { test } from "node:test";
import assert from "node:assert/strict";

import { defineTable, eq, gt, int, openStore, query, str } from "../../js/index.js";
import { throwsWith } from "./helpers.js";

const Notes = defineTable("notes", { columns: { id: str(), n: int() }, key: ["id"] });
const Counters = defineTable("counters", { columns: { id: int(), n: int() }, key: ["id"] });

async function setup() {
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "notes" });
  const notes = owner.table(Notes);
  const counters = owner.table(Counters);
  await notes.count();
  await counters.count();
  const put = async (t, row) => { await owner.tx(async (tx) => { await tx.put(t, row); }); return store.head; };
  return { store, notes, counters, put };
}

test("a query whose literal has toJSON is encoded again at each read, so it follows the literal", async () => {
  const { store, notes, put } = await setup();
  for (let i = 1; i <= 4; i++) await put(notes, { id: `n${i}`, n: i });
  let bound = 1;
  const q = query(Notes).where((r) => gt(r.n, { toJSON: () => bound }));
  assert.equal(await notes.count(q), 3);
  bound = 3;
  assert.equal(await notes.count(q), 1);
  assert.deepEqual((await notes.page(q, 10)).rows.map((r) => r.id), ["n4"]);
  // A query of primitives reads the same rows every time.
  const fixed = query(Notes).where((r) => eq(r.n, 2));
  assert.deepEqual((await notes.page(fixed, 10)).rows.map((r) => r.id), ["n2"]);
  await put(notes, { id: "n2", n: 5 });
  assert.deepEqual((await notes.page(fixed, 10)).rows, []);
  await store.close();
});

test("a held derive over one query sees every commit's rows, and its reader kept from an earlier computation is refused", async () => {
  const { store, notes, put } = await setup();
  const q = query(Notes).where((r) => gt(r.n, 0));
  let kept;
  const seen = [];
  const d = store.derive("positive", (read) => { kept = read; return read.page(notes, q, 10).rows.map((r) => r.id); });
  d.hold(({ value }) => seen.push(value));
  await put(notes, { id: "a", n: 1 });
  await put(notes, { id: "b", n: 0 });
  await put(notes, { id: "c", n: 2 });
  await put(notes, { id: "a", n: -1 });
  await new Promise((r) => setTimeout(r, 0));
  // b (n = 0) is outside the page and its where: that commit cannot change
  // the page, so the derive is not recomputed for it (js/derive.js, "pages
  // read by another column").
  assert.deepEqual(seen, [[], ["a"], ["a", "c"], ["c"]]);
  throwsWith(() => kept.page(notes, q, 10), "invalid/args", ["after the derive returned"]);
  // Another derive cannot use it either while it computes.
  const other = store.derive("other", () => kept.count(notes));
  throwsWith(() => other.value, "invalid/args", ["positive", "after the derive returned"]);
  await store.close();
});

test("a get finds the same row by a bare key, a one-item list and a key that needs escaping or is not ASCII", async () => {
  const { store, notes, counters, put } = await setup();
  const ids = ["plain", "", 'quo"te', "back\\slash", "tab\there", "café", "emoji 🎉", "lone \uD800"];
  for (const [i, id] of ids.entries()) await put(notes, { id, n: i });
  for (const [i, id] of ids.entries()) {
    const stored = id.toWellFormed();
    assert.deepEqual(await notes.get(id), { id: stored, n: i }, JSON.stringify(id));
    assert.deepEqual(await notes.get([id]), { id: stored, n: i }, JSON.stringify(id));
  }
  assert.equal(await notes.get("missing"), undefined);
  await put(counters, { id: -7, n: 1 });
  await put(counters, { id: 0, n: 2 });
  await put(counters, { id: 2 ** 53 - 1, n: 3 });
  assert.deepEqual(await counters.get(-7), { id: -7, n: 1 });
  assert.deepEqual(await counters.get([0]), { id: 0, n: 2 });
  assert.deepEqual(await counters.get(2 ** 53 - 1), { id: 2 ** 53 - 1, n: 3 });
  assert.equal(await counters.get(5), undefined);
  await assert.rejects(counters.get("0"), (e) => e.code === "invalid/args" && /key/.test(e.message));
  await assert.rejects(counters.get(1.5), (e) => e.code === "invalid/args");
  await assert.rejects(notes.get(1), (e) => e.code === "invalid/args");
  await assert.rejects(notes.get("a\u0000b"), (e) => e.code === "invalid/args");
  await store.close();
});
