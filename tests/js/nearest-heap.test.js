// handle.nearest's answer near the wasm heap's end (docs/reliability.md,
// "A full wasm heap"). nearest hands back its k rows whole, with no page
// bound: 30 rows of 16 MiB of text asked for at once needed the rows again
// and their JSON (about 1.9 GB beside the store's own 480 MB), and the
// allocation that failed aborted the core, every row of the memory store
// with it. Now the rows and the answer ask the heap first, and the search
// is refused with `limit`; the store reads on, and a smaller k answers. In
// its own file: its process alone holds the heap.

import { test } from "node:test";
import assert from "node:assert/strict";

import { defineTable, int, openStore, str, vector } from "../../js/index.js";
import { rejectsWith } from "./helpers.js";

test("nearest over rows too large to hand back at once is refused with limit, the store whole; a smaller k answers", async () => {
  const T = defineTable("t", { columns: { id: int(), text: str(), v: vector(2) }, key: ["id"] });
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "o" });
  const t = owner.table(T);
  const big = "x".repeat(16 << 20);
  for (let i = 0; i < 30; i++) await owner.tx(async (tx) => { await tx.put(t, { id: i, text: big, v: [1, i] }); });
  // The outbox keeps the rows' records too: about 960 MB of the heap in all.
  await rejectsWith(t.nearest((e) => e.v, [1, 0], 30), "limit", ["nearest(o/t)", "smaller k"]);
  assert.equal(await t.count(), 30, "the store reads on: no abort");
  const near = await t.nearest((e) => e.v, [1, 0], 2);
  assert.deepEqual(near.map((h) => h.row.id), [0, 1]);
  assert.equal(near[0].row.text.length, big.length);
  await owner.tx(async (tx) => { await tx.delete(t, [29]); });
  assert.equal(await t.count(), 29, "and commits");
  await store.close();
});
