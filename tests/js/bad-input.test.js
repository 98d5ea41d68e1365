// Runs the bad-input corpus (tests/bad-input/cases.json, over 500 cases) on
// the memory backend and on a sqlite file, with a replica of the same
// backend for the raw batches: each case ends in its documented acceptance
// or a StoreError with its expected code, a refused call changes nothing,
// and the store still commits and reads after every case.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import * as api from "../../js/index.js";
import { badInputRunner } from "../bad-input/runner.js";
import { tempDir } from "./helpers.js";

const { cases } = JSON.parse(readFileSync(new URL("../bad-input/cases.json", import.meta.url), "utf8"));
const { runCases } = badInputRunner(api);
const dir = tempDir("onestore-bad-input-");

const backends = {
  memory: { open: () => api.openStore({ backend: "memory" }), openReplica: () => api.openReplica({ backend: "memory" }) },
  "sqlite file": {
    open: () => api.openStore({ backend: "sqlite", path: join(dir, "store.sqlite") }),
    openReplica: () => api.openReplica({ backend: "sqlite", path: join(dir, "replica.sqlite") }),
  },
};

for (const [name, backend] of Object.entries(backends)) {
  test(`every bad-input case ends as documented on ${name}, and the store keeps working`, async () => {
    const report = await runCases(cases, backend);
    assert.ok(cases.length >= 500, "at least 500 cases");
    assert.deepStrictEqual(report.failures, []);
    assert.equal(report.ran, cases.length, "every case ran");
  });
}

test("a stack overflow inside the core is taken for a trap (storage_failed: the instance is no longer trusted), another RangeError is not", async () => {
  const { isTrap, asStoreError } = await import("../../js/errors.js");
  const overflow = new RangeError("Maximum call stack size exceeded");
  assert.equal(isTrap(overflow), true);
  assert.equal(asStoreError(overflow, "replica.applyBatch").code, "storage_failed");
  // Another RangeError of JS's own (a bad argument) is still the caller's.
  assert.equal(isTrap(new RangeError("Invalid array length")), false);
});
