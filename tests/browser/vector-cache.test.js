// Checks the vector cache of nearest on the opfs backend in real Chromium,
// inside a dedicated Worker (pages/opfs-worker.js running
// tests/vector-cache/scenario.js): after puts, key ops, a failed transaction
// and a bulk op, nearest answers what a memory store without the cache
// answers over the same rows; the searches after the key ops and the failed
// transaction were answered from the cache (no build), the bulk op made the
// next search build it again.
import { test } from "node:test";
import assert from "node:assert/strict";

import { startHarness } from "./harness.js";

const PAGE = "/tests/browser/pages/opfs.html";

test("an opfs store's searches answer as without the cache, which its commits keep", async () => {
  const h = await startHarness();
  try {
    const page = await h.newPage(PAGE);
    await page.waitForFunction(() => window.ready === true);
    const r = await page.evaluate(() => window.call("vectorCache", {}));
    if (!r.ok) throw Object.assign(new Error(`vectorCache: ${r.error.code}: ${r.error.message}`), r.error);
    const checks = r.value;
    assert.deepEqual(checks.map((c) => c.what), ["after the first puts", "after key ops", "after a failed transaction", "after a bulk op"]);
    for (const c of checks) assert.deepEqual(c.got, c.want, c.what);
    assert.deepEqual(checks.map((c) => c.builds), [1, 1, 1, 2]);
    assert.deepEqual(page.errors, []);
  } finally {
    await h.close();
  }
});
