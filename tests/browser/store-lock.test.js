// store.lock and listStores of OPFS stores in real Chromium, each store in a
// dedicated Worker of its own tab (pages/opfs.html): a lock one tab holds
// keeps another tab of the same store waiting (lock/timeout) until it is
// released; listStores gives every OPFS store with its id and head (read
// from its files, also while a tab holds it open, which it marks open).
import { test } from "node:test";
import assert from "node:assert/strict";
import { startHarness, openTab, call, callFails } from "./harness.js";

test("a lock held in one tab keeps another tab of the same store waiting until it is released", async () => {
  const h = await startHarness();
  try {
    const a = await openTab(h);
    const b = await openTab(h);
    await call(a, "open", { name: "locked" });
    await call(a, "lockHold", { name: "nightly" });
    await call(b, "open", { name: "locked" });  // takes the store over; the lock is apart from it
    const e = await callFails(b, "lockTry", { name: "nightly", timeout: 50 });
    assert.equal(e.code, "lock/timeout");
    assert.match(e.message, /"nightly"/);
    assert.equal(await call(b, "lockTry", { name: "another", timeout: 50 }), "ran");
    const waiting = call(b, "lockTry", { name: "nightly", timeout: 30_000 });
    await call(a, "lockRelease");
    assert.equal(await waiting, "ran");
  } finally {
    await h.close();
  }
});

test("listStores lists the OPFS stores with id and head, and marks the one a tab holds open", async () => {
  const h = await startHarness();
  try {
    const a = await openTab(h);
    const made = {};
    for (const name of ["conv-1", "global", "conv-2"]) {
      made[name] = await call(a, "open", { name });
      if (name !== "global") await call(a, "put", { id: "x" });
      if (name !== "conv-2") await call(a, "close");
    }
    // conv-2 stays open in tab a. A folder named as an import's new
    // generation (a copy of a store's file) is not a store of its own.
    await call(a, "copyStoreFolder", { from: "conv-1", to: "conv-1.import-0123456789ab" });
    const b = await openTab(h);
    const all = await call(b, "listStores", {});
    assert.deepEqual(all.map((s) => [s.name, s.id, s.head, s.open]), [
      ["conv-1", made["conv-1"].id, 2, false],
      ["conv-2", made["conv-2"].id, 2, true],
      ["global", made.global.id, 1, false],
    ]);
    assert.ok(all[0].size >= 4096);
    const convs = await call(b, "listStores", { prefix: "conv-" });
    assert.deepEqual(convs.map((s) => s.name), ["conv-1", "conv-2"]);
    await call(a, "close");
    const again = await call(b, "listStores", { prefix: "conv-2" });
    assert.deepEqual(again.map((s) => [s.id, s.head, s.open]), [[made["conv-2"].id, 2, false]]);
  } finally {
    await h.close();
  }
});
