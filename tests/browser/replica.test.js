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
