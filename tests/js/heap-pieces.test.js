// A memory store near the wasm heap's cap whose free room lies in holes
// (docs/reliability.md, "A full wasm heap"). Rows of 4 MiB fill the heap
// until a commit is refused; a trim of the outbox then frees each row's
// record, a hole of about 4 MiB between two rows. The heap's check counted
// those holes as room: commits of 6 MiB rows took what was left past the
// last row, then one found no piece large enough and aborted the core, the
// store's rows with it. Now the check also asks for its room as one block
// (a malloc tried and given back) and refuses such a commit with `limit`;
// rows that fit the holes still commit. In its own file: its process alone
// holds the full heap.

import { test } from "node:test";
import assert from "node:assert/strict";

import { defineTable, openStore, str, int, StoreError } from "../../js/index.js";

const T = defineTable("rows", { columns: { id: str(), n: int(), body: str() }, key: ["id"] });
const body = (i, mib) => `${i}:`.padEnd(mib << 20, "x");

test("a commit whose room lies only in holes smaller than its row is refused with limit; the memory store keeps its rows and takes the rows that fit", async () => {
  const store = await openStore({ backend: "memory" });
  try {
    const owner = store.object({ type: "big" });
    const h = owner.table(T);
    let rows = 0;
    let full = null;
    while (full === null && rows < 600) {
      try {
        await owner.tx(async (tx) => { await tx.put(h, { id: `r${rows}`, n: rows, body: body(rows, 4) }); });
        rows++;
      } catch (e) {
        full = e;
      }
    }
    assert.ok(full instanceof StoreError && full.code === "limit", String(full));
    assert.ok(rows > 200, `${rows} rows of 4 MiB`);
    await store.outbox.trim(store.head);

    let big = 0;
    let refused = null;
    while (refused === null && big < 200) {
      try {
        await owner.tx(async (tx) => { await tx.put(h, { id: `b${big}`, n: big, body: body(big, 6) }); });
        big++;
      } catch (e) {
        refused = e;
      }
    }
    assert.ok(refused instanceof StoreError, `a StoreError, not ${refused?.stack ?? refused}`);
    assert.equal(refused.code, "limit", refused.message);
    assert.match(refused.message, /in free pieces too small for it/);

    // Every row there and whole; rows that fit the holes still commit.
    assert.equal((await h.get("r0")).body, body(0, 4));
    assert.equal((await h.get(`r${rows - 1}`)).body, body(rows - 1, 4));
    if (big > 0) assert.equal((await h.get(`b${big - 1}`)).body, body(big - 1, 6));
    assert.equal(await h.count(), rows + big);
    for (let i = 0; i < 10; i++) {
      await owner.tx(async (tx) => { await tx.put(h, { id: `s${i}`, n: i, body: body(i, 2) }); });
    }
    assert.equal((await h.get("s9")).body, body(9, 2));
    assert.equal(await h.count(), rows + big + 10);
  } finally {
    await store.close();
  }
});
