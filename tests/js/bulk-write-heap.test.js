// Writes that grow a memory store past the wasm heap's end (docs/
// reliability.md, "A full wasm heap"). The ops of these commits are small
// (one updateWhere of a 1 MiB value, one update by concat) but what they
// make is not: 3000 rows of 1 MiB each, or a str of 1 GiB. The memory
// backend made it all and the allocation that failed aborted the core,
// every row of the store with it (a sqlite file refuses them with SQLite's
// own "out of memory"). Now a bulk write counts its rows against the heap
// and a concat checks its result first: `limit`, nothing written, the
// store whole. A concat longer than a JS string could be read back (2^29 -
// 24 characters) is refused the same way: committed, it was a row no get,
// page or fingerprint could hand back. In its own file: its process alone
// holds the heap.

import { test } from "node:test";
import assert from "node:assert/strict";

import { col, concat, defineTable, int, lt, openStore, str } from "../../js/index.js";
import { rejectsWith } from "./helpers.js";

const T = defineTable("t", { columns: { id: int(), s: str() }, key: ["id"] });

test("an updateWhere whose rows outgrow the wasm heap is refused with limit on a memory store, and the store stays whole", async () => {
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "o" });
  const t = owner.table(T);
  await owner.tx(async (tx) => { for (let i = 0; i < 3000; i++) await tx.put(t, { id: i, s: "small" }); });
  const head = store.head;
  await rejectsWith(owner.tx(async (tx) => { await tx.updateWhere(t, undefined, { s: "x".repeat(1 << 20) }); }), "limit", ["bulk write", "o/t", "nothing was changed"]);
  assert.equal(store.head, head);
  assert.equal(await t.count(), 3000);
  assert.deepEqual(await t.get(2999), { id: 2999, s: "small" });
  // A smaller one goes through.
  await owner.tx(async (tx) => { await tx.updateWhere(t, (e) => lt(e.id, 100), { s: "x".repeat(1 << 20) }); });
  assert.equal((await t.get(99)).s.length, 1 << 20);
  await store.close();
});

test("a concat longer than a JS string may be is refused with limit before it is made; the row reads as it was", async () => {
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "o" });
  const t = owner.table(T);
  await owner.tx(async (tx) => {
    await tx.put(t, { id: 0, s: "keep me" });
    await tx.put(t, { id: 1, s: "x".repeat(16 << 20) });
  });
  // 64 x 16 MiB = 1 GiB; 33 x 16 MiB = 528 MiB: both past 2^29 - 24.
  for (const n of [64, 33]) {
    await rejectsWith(owner.tx(async (tx) => { await tx.update(t, 1, { s: concat(...Array(n).fill(col("s"))) }); }), "limit", ['set "s"', "concat", "longer than a JavaScript string may be"]);
  }
  assert.equal((await t.get(1)).s.length, 16 << 20);
  assert.equal((await t.get(0)).s, "keep me");
  // 2 x 16 MiB is fine.
  await owner.tx(async (tx) => { await tx.update(t, 1, { s: concat(col("s"), col("s")) }); });
  assert.equal((await t.get(1)).s.length, 32 << 20);
  assert.match(await store.fingerprint(), /^f1-/);
  await store.close();
});
