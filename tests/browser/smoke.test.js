// The package's browser root loads in a real Chromium Worker and commits.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startHarness } from "./harness.js";

test("a memory store opens and commits inside a dedicated Worker in Chromium", async () => {
  const h = await startHarness();
  try {
    const page = await h.newPage("/tests/browser/pages/smoke.html");
    const result = await page.evaluate(() => window.result);
    assert.equal(result.error, undefined);
    assert.equal(result.ok, true);
    assert.equal(result.seq, 3);  // 1: the table's declaration, 2: the tx, 3: the raw commit
    assert.equal(result.adopted, 1);
    assert.equal(result.head, 3);
    assert.deepEqual(result.rows, [{ id: "a", n: 1 }, { id: "b", n: 2 }]);
    // The browser root exports every name the Node root does: shared code links.
    const node = await import("../../js/index.js");
    assert.deepEqual(result.names, Object.keys(node).sort());
    assert.deepEqual(page.errors, []);
  } finally {
    await h.close();
  }
});
