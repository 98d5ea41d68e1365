// Checks the vector cache of nearest on a durable store inside real workerd
// (tests/vector-cache/scenario.js): after puts, key ops, a failed transaction
// and a bulk op, nearest answers what a memory store without the cache
// answers over the same rows; the searches after the key ops and the failed
// transaction were answered from the cache (no build), the bulk op made the
// next search build it again.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { startWorkerd } from "./harness.js";

let workerd;
before(async () => { workerd = await startWorkerd({ script: "vector-cache-worker.js" }); });
after(async () => { await workerd?.dispose(); });

test("a durable store's searches answer as without the cache, which its commits keep", async () => {
  const checks = await workerd.call("vector-cache", "scenario");
  assert.deepEqual(checks.map((c) => c.what), ["after the first puts", "after key ops", "after a failed transaction", "after a bulk op"]);
  for (const c of checks) assert.deepEqual(c.got, c.want, c.what);
  assert.deepEqual(checks.map((c) => c.builds), [1, 1, 1, 2]);
  assert.ok(checks[0].bytes > 0);
});
