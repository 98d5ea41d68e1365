// Snapshots of a memory store too large for the wasm heap to hold twice
// (docs/reliability.md, "A full wasm heap"). A memory store's snapshot is a
// second memory store inside the core, every row copied, and `store.at(seq)`
// from a snapshot copies it again into a view. Before, the copy took the
// heap with no room check: a snapshot of 130 rows of 4 MiB (with their
// outbox records, about 1 GB) and `store.at` from a snapshot of 105 such
// rows aborted the core, and the memory store lost every row. Now the copy
// asks for its room as it goes and is refused with `limit` when the heap
// cannot take it; the store keeps every row and takes the commits that fit.
// In its own file: its process alone holds the full heap.

import { test } from "node:test";
import assert from "node:assert/strict";

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { defineTable, openStore, str, int, StoreError } from "../../js/index.js";

const Big = defineTable("bigrows", { columns: { id: str(), n: int(), body: str() }, key: ["id"] });
const SIZE = 4 << 20;
const id = (i) => `r${String(i).padStart(4, "0")}`;
// A body of SIZE bytes that names its row (its first and last characters).
const body = (i) => `${i}:`.padEnd(SIZE - 2, "x") + `:${i % 10}`;

async function fill(owner, h, from, to) {
  for (let i = from; i < to; i += 5) {
    await owner.tx(async (tx) => {
      for (let j = i; j < Math.min(to, i + 5); j++) await tx.put(h, { id: id(j), n: j, body: body(j) });
    });
  }
}

function refusedWithLimit(e, what) {
  assert.ok(e instanceof StoreError, `${what}: a StoreError, not ${e?.stack ?? e}`);
  assert.equal(e.code, "limit", e.message);
  assert.match(e.message, /wasm heap/, e.message);
}

// The store after a refusal: every row there, whole, and a commit taken.
async function checkStore(store, owner, h, rows) {
  const first = await h.get(id(0));
  assert.equal(first.body, body(0));
  const last = await h.get(id(rows - 1));
  assert.equal(last.body, body(rows - 1));
  let count = 0;
  for await (const r of h.rows()) {
    assert.equal(r.id, id(count));
    assert.equal(r.body.length, SIZE);
    count++;
  }
  assert.equal(count, rows);
  const head = store.head;
  await owner.tx(async (tx) => { await tx.put(h, { id: "after", n: -1, body: "small" }); });
  assert.equal(store.head, head + 1);
  assert.equal((await h.get("after")).body, "small");
}

const ROWS = 200;  // 800 MiB of rows: with their outbox records 1.6 GiB of the 2 GiB heap

test("a memory store's snapshot that the wasm heap cannot hold is refused with limit; the store keeps its rows, and the snapshot is taken once there is room", async () => {
  const store = await openStore({ backend: "memory" });
  try {
    const owner = store.object({ type: "big" });
    const h = owner.table(Big);
    await fill(owner, h, 0, ROWS);
    const head = store.head;
    let refused = null;
    try {
      await store.snapshot();
    } catch (e) {
      refused = e;
    }
    refusedWithLimit(refused, "store.snapshot");
    assert.deepEqual(await store.snapshots(), []);
    await checkStore(store, owner, h, ROWS);
    // The outbox's copies of the rows trimmed, the heap has room for the copy.
    await store.outbox.trim(store.head);
    const snap = await store.snapshot({ label: "after the trim" });
    assert.equal(snap.seq, head + 1);
    assert.deepEqual((await store.snapshots()).map((s) => s.id), [snap.id]);
  } finally {
    await store.close();
  }
});

test("store.at from a memory snapshot that the wasm heap cannot copy is refused with limit; the store keeps its rows and its snapshot", async () => {
  const store = await openStore({ backend: "memory" });
  try {
    const owner = store.object({ type: "big" });
    const h = owner.table(Big);
    for (let i = 0; i < ROWS; i += 50) {
      await fill(owner, h, i, i + 50);
      await store.outbox.trim(store.head);
    }
    const snap = await store.snapshot();
    let refused = null;
    try {
      // The records after the snapshot are kept, the view starts from it.
      const view = await store.at(snap.seq);
      await view.close();
    } catch (e) {
      refused = e;
    }
    refusedWithLimit(refused, "store.at");
    await checkStore(store, owner, h, ROWS);
    assert.deepEqual((await store.snapshots()).map((s) => s.id), [snap.id]);
    // A view of a small store's snapshot in the same instance still opens.
    const other = await openStore({ backend: "memory" });
    try {
      const o = other.object({ type: "big" });
      const oh = o.table(Big);
      await fill(o, oh, 0, 2);
      const s2 = await other.snapshot();
      const view = await other.at(s2.seq);
      assert.equal((await view.table(oh).get(id(1))).body, body(1));
      await view.close();
    } finally {
      await other.close();
    }
  } finally {
    await store.close();
  }
});

test("a file store's restore whose snapshot rows the wasm heap cannot hold is refused with limit; the store keeps its rows, and restores once there is room", async () => {
  const dir = mkdtempSync(join(tmpdir(), "onestore-restore-heap-"));
  // Every store of a process shares one wasm heap: a memory store of 1.6
  // GiB (its rows and their outbox records) leaves the restore less room
  // than the 400 MiB of rows it compares.
  const ballast = await openStore({ backend: "memory" });
  let closed = false;
  const store = await openStore({ backend: "sqlite", path: join(dir, "s.db"), durability: "relaxed" });
  try {
    const b = ballast.object({ type: "big" });
    await fill(b, b.table(Big), 0, 200);
    const owner = store.object({ type: "big" });
    const h = owner.table(Big);
    await fill(owner, h, 0, 100);
    const snap = await store.snapshot();
    await owner.tx(async (tx) => {
      await tx.put(h, { id: id(3), n: 3, body: "changed" });
      await tx.delete(h, id(4));
    });
    const head = store.head;
    let refused = null;
    try {
      await store.restore(snap.id);
    } catch (e) {
      refused = e;
    }
    refusedWithLimit(refused, "store.restore");
    assert.match(refused.message, /^the restore needs more of the wasm heap than is left \(at \d+ MiB\); nothing was changed$/);
    assert.equal(store.head, head);
    assert.equal((await h.get(id(3))).body, "changed");
    assert.equal(await h.get(id(4)), undefined);
    assert.equal((await h.get(id(99))).body, body(99));
    // The memory store beside it kept its rows too.
    assert.equal((await b.table(Big).get(id(199))).body, body(199));
    await ballast.close();
    closed = true;
    // With the heap given back, the same restore is taken.
    const r = await store.restore(snap.id);
    assert.ok(r.seq > head);
    assert.equal((await h.get(id(3))).body, body(3));
    assert.equal((await h.get(id(4))).body, body(4));
  } finally {
    await store.close();
    if (!closed) await ballast.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
