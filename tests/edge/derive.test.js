// Held derives on a durable store inside real workerd: pages and alls read
// by a column that is not the key, kept by windows and patched in the flush
// (js/derive.js), hold what a fresh read gives after every commit. The
// pages of this table stay with the host (no bool or vector column), so
// this also runs the package's wrapper that names the row after such a
// page (js/loader-workerd.js).

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { startWorkerd } from "./harness.js";

let workerd;
before(async () => { workerd = await startWorkerd({ script: "derive-worker.js" }); });
after(async () => { await workerd?.dispose(); });

test("held derives over pages read by another column always hold what a fresh read gives on a durable store (random commits)", async () => {
  const got = await workerd.call("derives", "random", { commits: 150, seed: 5 });
  assert.deepEqual(got.mismatches, [], `${got.count} mismatches`);
  assert.equal(got.count, 0);
  assert.ok(got.withNext > 100, `${got.withNext} fresh first pages had a next`);
});
