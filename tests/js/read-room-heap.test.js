// Reads of large rows with the wasm heap nearly full (docs/reliability.md,
// "A full wasm heap"). A document whose every change is a base of 10 MB
// more (10 to 90 MB) on a memory store, then a second memory store in the
// same process (the same wasm heap) filled with rows of 4 MiB until a
// commit is refused. Loading the document copies its latest base, 90 MB,
// which the heap no longer has: the copy aborted the core, every row of
// both stores gone with it. The memory backend now asks the heap before it
// copies a row above 8 MiB, and the read is refused with `limit`; the list
// of versions reads no base (Backend::ScanColumns) and works. In its own
// file: its process alone holds the full heap.
// The second test reads a 90 MB row of a sqlite file store the same way,
// and lists the versions of a document with a 30 MB base.

import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";

import { defineTable, int, openStore, str, StoreError } from "../../js/index.js";
import { tempDir } from "./helpers.js";

const PART = 10 << 20;
const part = (i) => `${i}:`.padEnd(PART, "z");
const Ballast = defineTable("ballast", { columns: { id: int(), v: str() }, key: ["id"] });

// Fills the wasm heap with rows of 4 MiB in `ballast` (a memory store)
// until a commit is refused with limit, and trims its outbox.
async function fillHeap(ballast) {
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
  return { b, rows, big, n };
}

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

    const { b, rows, big, n } = await fillHeap(ballast);

    // The latest version's base (90 MB) and an earlier one's (40 MB).
    for (const read of [() => owner.documents.load(id), () => owner.documents.load(id, { at: 5 })]) {
      let error = null;
      try {
        await read();
      } catch (e) {
        error = e;
      }
      assert.ok(error instanceof StoreError, `a StoreError, not ${error}`);
      assert.equal(error.code, "limit", error.message);
      // Refused before the row's copy, or (since session 58) before its
      // text's long string is read, whose blocks the reader grows by doubling.
      assert.match(error.message, /a row of \d+ MiB: the wasm heap has no room left to read it|a string of \d+ bytes in a JSON text would not fit in what is left of the wasm heap/);
    }
    // The versions list reads no base (before session 55 it read the
    // version rows, bases included, and was refused here with limit).
    const listed = await owner.documents.versions(id);
    assert.deepEqual(listed.map((v) => [v.version, v.op]), [[1, "create"], ...Array.from({ length: 9 }, (_, i) => [i + 2, "change"])]);
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

// A sqlite file store's read copies each value out of SQLite's buffer. With
// the heap nearly full, SQLite's own buffer may still fit where the copy
// (and the answer made of it) does not: that copy aborted the core (the
// store answered storage_failed, "the wasm core stopped"). The connection
// now asks the heap before it copies a value above 8 MiB. The ballast's
// rows are freed 8 MiB at a time, and the row is read after each step:
// every read either gives the whole row or is refused with limit, and the
// store reads and commits after.
test("with the wasm heap full, a sqlite file store's read of a row it cannot copy is refused with limit, never a stopped core", async () => {
  const Big = defineTable("big", { columns: { id: int(), v: str() }, key: ["id"] });
  const store = await openStore({ backend: "sqlite", path: join(tempDir("onestore-read-room-"), "big.sqlite") });
  const ballast = await openStore({ backend: "memory" });
  try {
    const owner = store.object({ type: "big" });
    const t = owner.table(Big);
    const V = 90 << 20;
    await owner.tx(async (tx) => { await tx.put(t, { id: 1, v: "q".repeat(V) }); });
    const doc = await owner.tx(async (tx) => tx.documents.create({ kind: "notes" }, { text: "d".repeat(30 << 20) }));
    await owner.tx(async (tx) => { await tx.documents.change(doc, [{ op: "replace", path: "/text", value: "short" }]); });
    await store.outbox.trim(store.head);

    const { b, rows, n } = await fillHeap(ballast);

    // The versions list selects no base: it works with the heap this full
    // (before session 55 it read the 30 MB base and was refused).
    assert.deepEqual((await owner.documents.versions(doc)).map((v) => [v.version, v.op]), [[1, "create"], [2, "change"]]);

    const outcomes = [];
    for (let freed = 0; freed < n; freed += 2) {
      await b.tx(async (tx) => { await tx.delete(rows, [freed]); await tx.delete(rows, [freed + 1]); });
      await ballast.outbox.trim(ballast.head);
      try {
        const row = await t.get([1]);
        assert.equal(row.v.length, V);
        outcomes.push("read");
        break;
      } catch (e) {
        assert.ok(e instanceof StoreError, `a StoreError, not ${e}`);
        assert.equal(e.code, "limit", e.message);
        outcomes.push(/no room left to read it/.test(e.message) ? "copy refused" : "sqlite refused");
      }
    }
    // The heap passed through the window where SQLite's buffer fits and the
    // copy does not (before: the core stopped there), and then had room.
    assert.ok(outcomes.includes("copy refused"), outcomes.join(", "));
    assert.equal(outcomes.at(-1), "read", outcomes.join(", "));
    await owner.tx(async (tx) => { await tx.put(t, { id: 2, v: "small" }); });
    assert.equal((await t.get([2])).v, "small");
  } finally {
    await ballast.close();
    await store.close();
  }
});
