// Replicas on the durable backend inside real workerd: every conformance
// case, committed on a store and replayed into a replica on a Durable
// Object's SQLite, holds the same rows (checked in workerd) and the
// fingerprint Node computes for the same case; a divergence rolls the
// whole batch back and is still refused after reopening the replica.

import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import * as api from "../../js/index.js";
import { conformanceRunner } from "../conformance/runner.js";
import { repoRoot, startWorkerd } from "./harness.js";

const vectorDir = join(repoRoot, "tests", "conformance");
const files = readdirSync(vectorDir).filter((f) => f.endsWith(".json")).sort();
const { replicateCase } = conformanceRunner(api, assert);

let workerd;
before(async () => { workerd = await startWorkerd(); });
after(async () => { await workerd?.dispose(); });

describe("a durable replica (workerd)", () => {
  test("of every conformance case holds the store's rows and the fingerprint Node computes", async () => {
    let cases = 0;
    for (const file of files) {
      const doc = JSON.parse(readFileSync(join(vectorDir, file), "utf8"));
      for (const [index, c] of doc.cases.entries()) {
        const expected = await replicateCase(doc, c, { backend: "memory" }, { backend: "memory" });
        const got = await workerd.call(`replica/${file}/${index}`, "replicaConformance", { doc, index });
        assert.equal(got, expected, `${file} / ${c.name}`);
        cases++;
      }
    }
    assert.ok(cases > 20);
  });

  test("refuses a diverging batch whole, then every batch, also after reopening", async () => {
    const store = await api.openStore({ backend: "memory" });
    const owner = store.object({ type: "app" });
    const Items = api.defineTable("items", { columns: { id: api.str(), n: api.int() }, key: ["id"] });
    const items = owner.table(Items);
    await owner.tx(async (tx) => {
      await tx.put(items, { id: "a", n: 1 });
      await tx.put(items, { id: "b", n: 2 });
    });
    await owner.tx(async (tx) => { await tx.deleteWhere(items, (e) => api.gte(e.n, 1)); });
    const good = await store.outbox.read(0, 10);
    const first = structuredClone(good);
    assert.equal(first.commits[2].ops[0].count, 2);
    first.commits[2].ops[0].count = 1;
    const out = await workerd.call("replica-diverges", "replicaDiverges", { first, good });
    assert.deepEqual(out, {
      first: "sync/diverged",
      headAfterFirst: 0,
      tablesAfterFirst: [],  // the table record of seq 1 was rolled back with the rest
      good: "sync/diverged",
      divergedAfterReopen: out.divergedAfterReopen,
      goodAfterReopen: "sync/diverged",
      headAfterReopen: 0,
    });
    assert.match(out.divergedAfterReopen, /seq 3/);
    // A fresh object takes the same good batch, in two pieces, and refuses owner writes.
    const applied = await workerd.call("replica-good", "replicaApply", { batches: [await store.outbox.read(0, 2), await store.outbox.read(1, 5)] });
    assert.deepEqual(applied, { head: 3, tables: ["app/items"], fingerprint: await store.fingerprint(), refused: "invalid/args" });
    await store.close();
  });
});
