// Reads of large rows with the wasm heap nearly full (docs/reliability.md,
// "A full wasm heap"). A document whose every change is a base of 10 MB
// more (10 to 90 MB) on a memory store, then a second memory store in the
// same process (the same wasm heap) filled with rows of 4 MiB until a
// commit is refused. Loading the document copies its latest base, 90 MB,
// which the heap no longer has: the copy aborted the core, every row of
// both stores gone with it. The memory backend now asks the heap before it
// copies a row above 8 MiB, and the read is refused with `limit` (the list
// of versions too: it reads the version rows, bases included, a page of 8
// MiB at a time). In its own file: its process alone holds the full heap.

import { test } from "node:test";
import assert from "node:assert/strict";

import { defineTable, int, openStore, str, StoreError } from "../../js/index.js";

const PART = 10 << 20;
const part = (i) => `${i}:`.padEnd(PART, "z");
const Ballast = defineTable("ballast", { columns: { id: int(), v: str() }, key: ["id"] });

test("with the wasm heap full, a read of a row it cannot copy is refused with limit; once room is freed the read works", async () => {
  const store = await openStore({ backend: "memory" });
  const ballast = await openStore({ backend: "memory" });
  try {
    const owner = store.object({ type: "docs" });
    const id = await owner.tx(async (tx) => tx.documents.create({ kind: "notes", key: "big" }, { parts: [] }));
    for (let i = 0; i < 9; i++) {
      await owner.tx(async (tx) => { await tx.documents.change(id, [{ op: "add", path: "/parts/-", value: part(i) }]); });
    }
    await store.outbox.trim(store.head);

    const b = ballast.object({ type: "ballast" });
    const rows = b.table(Ballast);
    const big = "y".repeat(4 << 20);
    let n = 0;
    let refused = null;
    while (refused === null && n < 1000) {
      try {
        await b.tx(async (tx) => { await tx.put(rows, { id: n, v: big }); });
        n++;
      } catch (e) {
        refused = e;
      }
    }
    assert.equal(refused?.code, "limit", `the ballast was not refused after ${n} rows: ${refused}`);
    await ballast.outbox.trim(ballast.head);

    // The latest version's base (90 MB), an earlier one's (40 MB), and the
    // versions list, which reads the version rows (bases included) a page
    // of 8 MiB at a time.
    for (const read of [() => owner.documents.load(id), () => owner.documents.load(id, { at: 5 }), () => owner.documents.versions(id)]) {
      let error = null;
      try {
        await read();
      } catch (e) {
        error = e;
      }
      assert.ok(error instanceof StoreError, `a StoreError, not ${error}`);
      assert.equal(error.code, "limit", error.message);
      assert.match(error.message, /a row of \d+ MiB: the wasm heap has no room left to read it/);
    }
    // Both stores are whole: the ballast's rows read back, and it commits.
    assert.equal((await rows.get([n - 1])).v.length, big.length);
    await b.tx(async (tx) => { await tx.delete(rows, [0]); });

    await ballast.close();
    const doc = await owner.documents.load(id);
    assert.equal(doc.version, 10);
    assert.deepEqual(doc.value.parts.map((p) => p.slice(0, 2)), Array.from({ length: 9 }, (_, i) => `${i}:`));
    assert.equal((await owner.documents.load(id, { at: 5 })).value.parts.length, 4);
    const versions = await owner.documents.versions(id);
    assert.deepEqual(versions.map((v) => [v.version, v.op]), [[1, "create"], ...Array.from({ length: 9 }, (_, i) => [i + 2, "change"])]);
  } finally {
    await ballast.close();
    await store.close();
  }
});
