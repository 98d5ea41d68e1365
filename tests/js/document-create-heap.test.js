// Documents of 128 MiB created on a memory store, one after another, until
// the wasm heap (2 GB) cannot take the next (docs/reliability.md, "A third
// hunt"). Before, the second aborted the core, every row of the store lost
// with it: the outbox record's text of the value was written into a new
// string and appended, two strings grown by doubling (a block of 256 MiB
// each), and once the value's copies filled the heap, a later create's JSON
// reader grew its token the same way into holes its own smaller blocks
// split. Now the record's text is written once into room reserved at its
// length, a create asks for its copies' room first, and a large string in a
// JSON text is refused with `limit` when the reader's blocks cannot be had.
// In its own file: its process alone holds the full heap.

import { test } from "node:test";
import assert from "node:assert/strict";

import { openStore, StoreError } from "../../js/index.js";

const MiB = 1 << 20;

test("documents of 128 MiB created until the heap is full: each is created or refused with limit, and the memory store keeps every one", async () => {
  const store = await openStore({ backend: "memory" });
  try {
    const owner = store.object({ type: "docs" });
    const created = [];
    const refused = [];
    const sizes = [127 * MiB, 128 * MiB - 64, 129 * MiB, ...new Array(12).fill(100 * MiB)];
    for (const [i, n] of sizes.entries()) {
      if (refused.length >= 2) break;  // 129 MiB, and the first the heap refused
      const value = String.fromCharCode(97 + i).repeat(n);
      try {
        const id = await owner.tx((tx) => tx.documents.create({ kind: "big", key: String(i) }, value));
        created.push({ id, i, n });
      } catch (e) {
        assert.ok(e instanceof StoreError, `a StoreError, not ${e}`);
        assert.equal(e.code, "limit", e.message);
        assert.match(e.message, /wasm heap|128 MiB a document may hold/);
        refused.push(i);
      }
    }
    // The first two fit (the second aborted the core before); 129 MiB is
    // past a document's bound; the heap refuses one of the rest (a memory
    // store holds each value three times: its base, its row's text and its
    // outbox record).
    assert.deepEqual(created.slice(0, 2).map((c) => c.i), [0, 1]);
    assert.ok(refused.includes(2), `129 MiB refused (refused: ${refused})`);
    assert.ok(refused.length >= 2, `the heap refused one of the 100 MiB documents (created ${created.map((c) => c.i)})`);
    for (const { id, i, n } of created) {
      const doc = await owner.documents.load(id);
      assert.equal(doc.value.length, n, `document ${i} read back whole`);
      assert.equal(doc.value[n - 1], String.fromCharCode(97 + i));
    }
    // The store goes on: a small document is still created.
    const small = await owner.tx((tx) => tx.documents.create({ kind: "small" }, { ok: true }));
    assert.deepEqual((await owner.documents.load(small)).value, { ok: true });
  } finally {
    await store.close();
  }
});
