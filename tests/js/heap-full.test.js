// A memory store whose transactions fill the wasm heap (docs/reliability.md,
// "A full wasm heap"). The module's heap grows to at most 2 GB, and C++
// without exceptions stops the whole module when an allocation fails there:
// before, the transaction that did not fit aborted the core, and the memory
// store answered storage_failed from then on, its rows gone with it. Now a
// commit that would not fit is refused before it starts, with `limit`, and
// the store keeps every row it held and goes on taking commits that fit.
// Real allocations all the way: transactions of 50,000 rows of 4 KB (200 MB
// of ops each) until one is refused; on the code before, the fourth aborted
// the core inside its commit (the outbox record's allocation). Then, the
// heap that full, calls whose arguments alone would not fit (a tx.get's
// staged batch, a huge key): refused with `limit` before they start, where
// they aborted the core. In its own file, so its process alone holds the
// full heap.

import { test } from "node:test";
import assert from "node:assert/strict";

import { defineTable, openStore, str, int, StoreError } from "../../js/index.js";

const Notes = defineTable("notes", { columns: { id: str(), n: int(), body: str() }, key: ["id"] });
const ROWS = 50000;
const BODY = "x".repeat(4000);
const key = (t, i) => `t${t}-${String(i).padStart(5, "0")}`;

test("a transaction, or a call's arguments, too large for what is left of the wasm heap is refused with limit; the memory store keeps its rows and takes the commits that fit", async () => {
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "heap" });
  const notes = owner.table(Notes);
  let committed = 0;
  let refused = null;
  for (let t = 0; t < 40 && refused === null; t++) {
    try {
      await owner.tx(async (tx) => {
        for (let i = 0; i < ROWS; i++) await tx.put(notes, { id: key(t, i), n: i, body: `${t}:${i}:${BODY}` });
      });
      committed++;
    } catch (e) {
      refused = e;
    }
  }
  // 2 GB hold some ten such transactions' rows at the most: one was refused.
  assert.ok(refused !== null, `a transaction was refused after ${committed}`);
  assert.ok(refused instanceof StoreError, `a StoreError, not ${refused}`);
  assert.equal(refused.code, "limit", refused.message);
  assert.match(refused.message, /wasm heap/);
  assert.match(refused.message, /smaller transactions/);
  assert.ok(committed >= 2, `${committed} transactions of 200 MB committed before the refusal`);
  // Nothing of the refused transaction, everything of the others.
  assert.equal(await notes.get(key(committed, 0)), undefined);
  assert.deepEqual(await notes.get(key(0, 0)), { id: key(0, 0), n: 0, body: `0:0:${BODY}` });
  const last = committed - 1;
  assert.deepEqual(await notes.get(key(last, ROWS - 1)), { id: key(last, ROWS - 1), n: ROWS - 1, body: `${last}:${ROWS - 1}:${BODY}` });
  assert.equal(await notes.count(), committed * ROWS);
  // With the heap this full, a call whose own arguments would not fit is
  // refused before it starts, with limit, where the core aborted before
  // (each of these stopped the module, the rows with it): a tx.get after a
  // transaction's 200 MB of puts (the batch crosses to the core to be
  // staged), and a get by a key of 300 MB of UTF-8.
  await assert.rejects(
    owner.tx(async (tx) => {
      for (let i = 0; i < ROWS; i++) await tx.put(notes, { id: key(99, i), n: i, body: `99:${i}:${BODY}` });
      await tx.get(notes, key(99, 0));
    }),
    (e) => e instanceof StoreError && e.code === "limit" && /tx\.get/.test(e.message) && /wasm heap/.test(e.message),
  );
  await assert.rejects(notes.get("\u00e9".repeat(150e6)), (e) => e instanceof StoreError && e.code === "limit" && /wasm heap/.test(e.message));
  assert.equal(await notes.get(key(99, 0)), undefined);
  assert.equal(await notes.count(), committed * ROWS);
  // The store goes on: a transaction that fits commits.
  const head = store.head;
  await owner.tx(async (tx) => { await tx.put(notes, { id: "after", n: 1, body: "small" }); });
  assert.equal(store.head, head + 1);
  assert.deepEqual(await notes.get("after"), { id: "after", n: 1, body: "small" });
  await store.close();
});
