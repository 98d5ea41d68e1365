// Runs the bad-input corpus (tests/bad-input/cases.json) on the durable
// backend inside real workerd, through the same runner as Node and Chromium
// (tests/bad-input/runner.js): every case on a durable store, and the raw
// batches on a durable replica too. Each case ends in its documented
// acceptance or its StoreError code, a refused call changes nothing, and the
// store keeps committing and reading.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { repoRoot, startWorkerd } from "./harness.js";

const { cases } = JSON.parse(readFileSync(join(repoRoot, "tests", "bad-input", "cases.json"), "utf8"));

let workerd;
before(async () => { workerd = await startWorkerd({ script: "bad-input-worker.js" }); });
after(async () => { await workerd?.dispose(); });

test("every bad-input case ends as documented on a durable store in workerd, and the store keeps working", async () => {
  const report = await workerd.call("bad-input-store", "run", { cases, pass: "store" });
  assert.deepStrictEqual(report.failures, []);
  assert.equal(report.ran, cases.length, "every case ran");
});

test("every raw batch of the bad-input corpus ends as documented on a durable replica in workerd", async () => {
  const report = await workerd.call("bad-input-replica", "run", { cases, pass: "replica" });
  assert.ok(report.ran >= 15, `${report.ran} batch cases ran`);
  assert.deepStrictEqual(report.failures, []);
});
