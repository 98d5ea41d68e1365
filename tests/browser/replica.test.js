// Replicas on the opfs backend in real Chromium, inside a dedicated Worker
// (pages/opfs-worker.js): every conformance case, committed on a store and
// replayed into an OPFS replica, holds the store's rows (checked in the
// Worker) and the fingerprint Node computes for the same case; a replica
// keeps its head and content across a reopen, and a divergence across one.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

import * as api from "../../js/index.js";
import { conformanceRunner } from "../conformance/runner.js";
import { root, startHarness, call } from "./harness.js";

const PAGE = "/tests/browser/pages/opfs.html";
const { replicateCase } = conformanceRunner(api, assert);

test("an opfs replica of every conformance case holds the store's rows and the fingerprint Node computes", async () => {
  const dir = join(root, "tests", "conformance");
  const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
  const expected = [];
  for (const file of files) {
    const doc = JSON.parse(readFileSync(join(dir, file), "utf8"));
    for (const c of doc.cases) {
      expected.push({ file, name: c.name, fingerprint: await replicateCase(doc, c, { backend: "memory" }, { backend: "memory" }) });
    }
  }
  const h = await startHarness();
  try {
    const page = await h.newPage(PAGE);
    await page.waitForFunction(() => window.ready === true);
    const results = await call(page, "replicaConformance", { files });
    assert.deepEqual(results.filter((r) => !r.ok).map((r) => `${r.file} / ${r.name}: ${r.error}`), []);
    assert.deepEqual(results.map(({ file, name, fingerprint }) => ({ file, name, fingerprint })), expected);
    assert.deepEqual(page.errors, []);
  } finally {
    await h.close();
  }
});

test("an open in the other role (openStore of a replica, openReplica of an owner's store) is refused without fencing the tab that has it open", async () => {
  const h = await startHarness();
  try {
    const a = await h.newPage(PAGE);
    await a.waitForFunction(() => window.ready === true);
    const b = await h.newPage(PAGE);
    await b.waitForFunction(() => window.ready === true);
    await call(a, "open", { name: "role-own" });
    await call(a, "put", { id: "x" });
    await call(a, "holdReplica", { name: "role-rep" });
    const asStore = await call(b, "tryOpen", { name: "role-rep", replica: false });
    assert.equal(asStore.code, "invalid/args", JSON.stringify(asStore));
    assert.match(asStore.message, /open as a replica in another tab or worker/);
    const asReplica = await call(b, "tryOpen", { name: "role-own", replica: true });
    assert.equal(asReplica.code, "invalid/args", JSON.stringify(asReplica));
    assert.match(asReplica.message, /open as an owner's store in another tab or worker/);
    // Tab a still has both: it commits and reads.
    await call(a, "put", { id: "y" });
    assert.deepEqual((await call(a, "rows")).sort(), ["x", "y"]);
    assert.equal((await call(a, "heldReplicaHead")).head, 0);
    // The same role still takes a store over, as before.
    assert.deepEqual(await call(b, "tryOpen", { name: "role-own", replica: false }), { ok: true });
  } finally {
    await h.close();
  }
});

test("an opfs replica keeps its head and content across a reopen, and a divergence too", async () => {
  const store = await api.openStore({ backend: "memory" });
  const owner = store.object({ type: "app" });
  const items = owner.table(api.defineTable("items", { columns: { id: api.str(), n: api.int() }, key: ["id"] }));
  await owner.tx(async (tx) => { await tx.put(items, { id: "a", n: 1 }); });
  await owner.tx(async (tx) => { await tx.updateWhere(items, undefined, { n: 2 }); });
  const batches = [await store.outbox.read(0, 2)];
  const diverging = await store.outbox.read(2, 1);
  diverging.commits[0].ops[0].count = 5;
  const h = await startHarness();
  try {
    const page = await h.newPage(PAGE);
    await page.waitForFunction(() => window.ready === true);
    const out = await call(page, "replicaReopen", { batches, diverging });
    const fingerprint = await (async () => {
      const r = await api.openReplica({ backend: "memory" });
      await r.applyBatch(batches[0]);
      try { return await r.fingerprint(); } finally { await r.close(); }
    })();
    assert.deepEqual(out, {
      before: { head: 2, fingerprint },
      after: { head: 2, fingerprint },
      code: "sync/diverged",
      reopened: { head: 2, diverged: true },
    });
  } finally {
    await h.close();
    await store.close();
  }
});
