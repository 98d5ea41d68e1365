// Checks that a transaction's ops buffer is reused by the next transaction
// (OpsBuffer.take and release, issue 13's seventh step: the put path's
// optimized code keeps the buffer's hidden class alive) without anything of
// one transaction reaching another: a released buffer is empty, a grown one
// gives its bytes up, a failed transaction's puts are not in the next commit,
// and transactions open at once each write their own ops.

import { test } from "node:test";
import assert from "node:assert/strict";

import { OpsBuffer, opsHeapOf } from "../../js/ops-buffer.js";
import { loadNodeCore } from "../../js/loader-node.js";
import { openStore, defineTable, str, int, json } from "../../js/index.js";

const Items = defineTable("items", { columns: { id: str(), n: int(), meta: json() }, key: ["id"] });

async function open() {
  const store = await openStore({ backend: "memory" });
  return { store, a: store.object({ type: "a" }), b: store.object({ type: "b" }) };
}

// The ops of the commit at `seq`, as the outbox recorded them.
async function opsAt(store, seq) {
  const { commits } = await store.outbox.read(seq - 1, 1);
  return commits[0].ops.filter((op) => op.op === "put").map((op) => op.row.id);
}

test("the buffer a transaction wrote is handed back empty when it ends, and the next take() gets it", async () => {
  const { store, a } = await open();
  const items = a.table(Items);
  // A store's transactions keep their ops in the wasm heap of its module
  // (Node loads one module per process).
  const heap = opsHeapOf(await loadNodeCore());
  let used = null;
  await a.tx(async (tx) => {
    for (let i = 0; i < 50; i++) await tx.put(items, { id: `k${i}`, n: i, meta: { i } });
    used = heap.spare === null ? "taken" : heap.spare;
  });
  assert.equal(used, "taken", "the transaction took the heap's spare (or made a buffer there)");
  const spare = OpsBuffer.take(heap);
  assert.equal(spare.heap, heap);
  assert.equal(spare.total, 0);
  assert.equal(spare.pending, 0);
  assert.deepEqual([...spare.batch()], [0xB1], "only the batch's magic byte");
  assert.notEqual(OpsBuffer.take(heap), spare, "one spare: a second take() makes a new buffer");
  assert.notEqual(OpsBuffer.take(), spare, "a buffer in JS memory is another home's");
  spare.release();
  assert.equal(OpsBuffer.take(heap), spare, "release() hands it to the next take()");
  spare.release();
  await store.close();
});

test("a buffer in the wasm heap keeps its bytes when a call grows the heap between two writes, and its commit records them", async () => {
  const mod = await loadNodeCore();
  const heap = opsHeapOf(mod);
  const { store, a, b } = await open();
  const ia = a.table(Items);
  const ib = b.table(Items);
  await ib.get("none");
  const before = mod.HEAPU8.length;
  let detached = false;
  await a.tx(async (tx) => {
    for (let i = 0; i < 10; i++) await tx.put(ia, { id: `a${i}`, n: i, meta: { i } });
    // Another owner's transaction of 64 rows of 200 KB each: the heap grows
    // under a's buffer, whose view is then detached.
    await b.tx(async (txb) => {
      for (let i = 0; i < 64; i++) await txb.put(ib, { id: `big${i}`, n: i, meta: { pad: "x".repeat(200000) } });
    });
    detached = mod.HEAPU8.length > before;
    for (let i = 10; i < 20; i++) await tx.put(ia, { id: `a${i}`, n: i, meta: { i } });
  });
  assert.ok(detached, `the heap grew during the transaction (${before} -> ${mod.HEAPU8.length} bytes)`);
  assert.equal(heap.spare?.heap, heap, "the transactions' buffers were in the heap");
  const ids = await opsAt(store, store.head);
  assert.deepEqual(ids, Array.from({ length: 20 }, (_, i) => `a${i}`));
  assert.deepEqual(await ia.get("a15"), { id: "a15", n: 15, meta: { i: 15 } });
  assert.equal((await ib.get("big63")).meta.pad.length, 200000);
  await store.close();
});

test("a tx.get after the heap grew stages the transaction's writes as they were", async () => {
  const mod = await loadNodeCore();
  const { store, a, b } = await open();
  const ia = a.table(Items);
  const ib = b.table(Items);
  await ib.get("none");
  const before = mod.HEAPU8.length;
  await a.tx(async (tx) => {
    await tx.put(ia, { id: "mine", n: 7, meta: { note: "staged" } });
    await b.tx(async (txb) => {
      for (let i = 0; i < 96; i++) await txb.put(ib, { id: `big${i}`, n: i, meta: { pad: "y".repeat(400000) } });
    });
    assert.ok(mod.HEAPU8.length > before, "the heap grew");
    assert.deepEqual(await tx.get(ia, "mine"), { id: "mine", n: 7, meta: { note: "staged" } });
    await tx.put(ia, { id: "after", n: 8, meta: {} });
  });
  assert.deepEqual(await opsAt(store, store.head), ["mine", "after"]);
  await store.close();
});

test("a released buffer grown past 64 KiB gives its bytes up and keeps 256", () => {
  const buf = OpsBuffer.take();
  buf.json(JSON.stringify({ op: "put", table: "a/items", row: { id: "x".repeat(100000) } }));
  assert.ok(buf.bytes.length > 64 * 1024);
  buf.release();
  const again = OpsBuffer.take();
  assert.equal(again, buf);
  assert.equal(again.bytes.length, 256);
  assert.deepEqual([...again.batch()], [0xB1]);
  again.release();
});

test("a transaction that threw after its puts leaves none of them in the next transaction's commit", async () => {
  const { store, a } = await open();
  const items = a.table(Items);
  await items.get("none");
  await assert.rejects(a.tx(async (tx) => {
    for (let i = 0; i < 20; i++) await tx.put(items, { id: `lost${i}`, n: i, meta: {} });
    throw new Error("stop");
  }), /stop/);
  await a.tx(async (tx) => { await tx.put(items, { id: "kept", n: 1, meta: {} }); });
  assert.deepEqual(await opsAt(store, store.head), ["kept"]);
  assert.equal(await items.get("lost0"), undefined);
  assert.deepEqual((await items.get("kept")).id, "kept");
  await store.close();
});

test("two transactions open at once, one ending inside the other, each commit only their own puts", async () => {
  const { store, a, b } = await open();
  const ia = a.table(Items);
  const ib = b.table(Items);
  await ia.get("none");
  await ib.get("none");
  let bSeq = 0;
  await a.tx(async (tx) => {
    await tx.put(ia, { id: "a1", n: 1, meta: {} });
    // b's transaction takes a buffer, commits and hands it back while a's is open.
    await b.tx(async (txb) => { await txb.put(ib, { id: "b1", n: 1, meta: {} }); });
    bSeq = store.head;
    // a third one, which may take b's buffer, writes while a is still open.
    await b.tx(async (txb) => { await txb.put(ib, { id: "b2", n: 2, meta: {} }); });
    await tx.put(ia, { id: "a2", n: 2, meta: {} });
  });
  assert.deepEqual(await opsAt(store, bSeq), ["b1"]);
  assert.deepEqual(await opsAt(store, bSeq + 1), ["b2"]);
  assert.deepEqual(await opsAt(store, store.head), ["a1", "a2"]);
  await store.close();
});

test("a buffer in the wasm heap reads back its batch, and takes more writes, after a call grew the heap under it", async () => {
  const mod = await loadNodeCore();
  const buf = new OpsBuffer(opsHeapOf(mod));
  const op = (id) => JSON.stringify({ op: "put", table: "a/items", row: { id, n: 1, meta: null } });
  buf.json(op("x"));
  const written = [...buf.batch()];
  const size = mod.HEAPU8.length;
  const big = mod._malloc(size);  // more than the heap has free: it grows, and the buffer's view is detached
  try {
    assert.ok(big !== 0 && mod.HEAPU8.length > size, "the heap grew");
    assert.equal(buf.bytes.length, 0, "the old view is detached");
    assert.deepEqual([...buf.batch()], written);
    buf.json(op("y"));
    const both = [...buf.batch()];
    assert.deepEqual(both.slice(0, written.length), written);
    assert.equal(both.length, written.length + 1 + (written.length - 2));
  } finally {
    mod._free(big);
  }
});
