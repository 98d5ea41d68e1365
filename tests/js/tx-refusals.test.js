// A transaction is all or nothing, whichever layer refuses a write in it.
// Before, a tx.put the package refused (a Date in a row, a throwing getter)
// failed only that put: a callback that caught it, or did not await it,
// committed the rest. A value the core refuses (1.5 in an int column) failed
// the whole commit. Now both fail the transaction.
// And a tx that awaits another tx of its own owner waits forever (the owner
// runs one at a time); close() used to leave both, and every tx queued
// behind them, pending for good. Now close() rejects them with `closed`.

import assert from "node:assert/strict";
import { test } from "node:test";

import { defineTable, int, json, openStore, str, StoreError } from "../../js/index.js";

const Items = defineTable("items", { columns: { id: str(), n: int().optional(), meta: json().optional() }, key: ["id"] });

async function open() {
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "o" });
  return { store, owner, items: owner.table(Items) };
}

test("a refused write left unawaited raises no unhandled rejection: its transaction reports the error", async () => {
  const { store, owner, items } = await open();
  const unhandled = [];
  const listener = (e) => unhandled.push(e);
  process.on("unhandledRejection", listener);
  try {
    const writes = [
      (tx) => tx.put(items, null),
      (tx) => tx.put("items", { id: "a" }),
      (tx) => tx.update(items, ["a"], null),
      (tx) => tx.delete(items, Symbol("k")),
      (tx) => tx.updateWhere(items, () => undefined, { n: 1 }),
      (tx) => tx.deleteWhere(items, () => { throw new Error("where"); }),
      (tx) => tx.documents.create({ kind: "note", key: "k" }, undefined),
      (tx) => tx.documents.change(-1, []),
      (tx) => tx.documents.retire("x"),
    ];
    for (const write of writes) {
      await assert.rejects(owner.tx(async (tx) => {
        write(tx);                              // the refusal, not awaited
        tx.put(items, { id: "after", n: 1 });   // rejects with the same error, not awaited
      }), (e) => e instanceof StoreError && e.code === "invalid/args", String(write));
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Before, each refusal (and each write after it) was also an unhandled
    // rejection, which ends a Node process by default.
    assert.deepEqual(unhandled.map((e) => e.message), []);
    // A write after its transaction ended has nothing else to report it:
    // it rejects as before.
    let ended;
    await owner.tx(async (tx) => { ended = tx; });
    await assert.rejects(ended.put(items, { id: "late", n: 1 }), /the transaction has ended/);
    assert.equal(await items.count(), 0);
  } finally {
    process.off("unhandledRejection", listener);
    await store.close();
  }
});

test("a write the package refuses fails its transaction, caught or not awaited; later writes reject with the same error", async () => {
  const { store, owner, items } = await open();
  assert.equal(await items.count(), 0);
  const head = store.head;  // the table's declaration
  const isDate = (e) => e instanceof StoreError && e.code === "invalid/args" && /class Date/.test(e.message);
  // Not awaited: the callback returns normally.
  const unawaited = [];
  await assert.rejects(owner.tx(async (tx) => {
    unawaited.push(tx.put(items, { id: "a1", n: 1 }));
    unawaited.push(tx.put(items, { id: "a2", meta: new Date(0) }));
    unawaited.push(tx.put(items, { id: "a3", n: 3 }));
  }), isDate);
  const settled = await Promise.allSettled(unawaited);
  assert.deepEqual(settled.map((s) => s.status), ["fulfilled", "rejected", "rejected"]);
  assert.ok(isDate(settled[2].reason), "a write after the refusal rejects with the refusal's error");
  // Caught: the callback goes on, and its other writes are refused too.
  let later = null;
  await assert.rejects(owner.tx(async (tx) => {
    await tx.put(items, { id: "b1", n: 1 });
    try { await tx.put(items, { id: "b2", get n() { throw new Error("getter"); } }); } catch { /* caught */ }
    try { await tx.update(items, ["b1"], { n: 2 }); } catch (e) { later = e; }
  }), (e) => e instanceof StoreError && /reading its properties threw: getter/.test(e.message));
  assert.match(later?.message ?? "", /getter/);
  // A refused document write, and a refused where.
  await assert.rejects(owner.tx(async (tx) => {
    await tx.put(items, { id: "c1", n: 1 });
    try { await tx.documents.create({ kind: "note", key: "k" }, { at: new Date(0) }); } catch { /* caught */ }
  }), isDate);
  await assert.rejects(owner.tx(async (tx) => {
    await tx.put(items, { id: "d1", n: 1 });
    try { await tx.deleteWhere(items, () => { throw new Error("where"); }); } catch { /* caught */ }
  }), /where/);
  assert.equal(store.head, head);
  assert.equal(await items.count(), 0);
  // The owner goes on: the next transaction commits.
  await owner.tx(async (tx) => { await tx.put(items, { id: "ok", n: 1 }); });
  assert.equal(await items.count(), 1);
  await store.close();
});

test("close() rejects a tx that awaits a tx of its own owner, that inner tx and the ones queued behind, with closed", async () => {
  const { store, owner, items } = await open();
  await owner.tx(async (tx) => { await tx.put(items, { id: "kept", n: 1 }); });
  const outer = owner.tx(async (tx) => {
    await tx.put(items, { id: "outer", n: 1 });
    await owner.tx(async (tx2) => { await tx2.put(items, { id: "inner", n: 1 }); });
  });
  const next = owner.tx(async (tx) => { await tx.put(items, { id: "next", n: 1 }); });
  const other = store.object({ type: "other" });
  await other.tx(async (tx) => { await tx.put(other.table(Items), { id: "x", n: 1 }); });
  const race = (p) => Promise.race([p.then(() => "resolved", (e) => e), new Promise((r) => setTimeout(() => r("pending"), 300))]);
  assert.equal(await race(outer), "pending", "the nested tx waits for its outer one");
  const head = store.head;
  await store.close();
  for (const p of [outer, next]) {
    const e = await race(p);
    assert.ok(e instanceof StoreError && e.code === "closed", `settled with closed, got ${e}`);
  }
  assert.equal(store.head, head);
});

test("a table opened inside store.read is refused by its reads (invalid/args), where they waited for the read itself for ever", async () => {
  const { store, owner } = await open();
  const Later = defineTable("later", { columns: { id: str() }, key: ["id"] });
  const answer = await store.read(async (r) => {
    const later = owner.table(Later);
    try {
      await r.get(later, "x");
      return "read";
    } catch (e) {
      return e;
    }
  });
  assert.ok(answer instanceof StoreError && answer.code === "invalid/args" && /still being declared; open it before store.read/.test(answer.message), String(answer));
  // The read ended: the declaration then commits, and the store goes on.
  const later = owner.table(Later);
  assert.equal(await later.get("x"), undefined);
  assert.equal(await store.read(async (r) => r.count(later)), 0);
  await store.close();
});
