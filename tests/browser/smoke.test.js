// The package's browser root loads in a real Chromium Worker and commits.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startHarness } from "./harness.js";

// A page served over plain http from a name that is not localhost is not a
// secure context: it has no crypto.randomUUID, which the open called for a
// new store's id (a raw TypeError, for every backend). It has
// getRandomValues, which the id now comes from there.
test("a memory store opens on a page that is not a secure context (plain http, not localhost)", async () => {
  const h = await startHarness({ args: ["--host-resolver-rules=MAP insecure.test 127.0.0.1"] });
  try {
    const page = await h.context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`${h.url.replace("127.0.0.1", "insecure.test")}/tests/browser/pages/smoke.html`);
    assert.equal(await page.evaluate(() => window.isSecureContext), false);
    assert.equal(await page.evaluate(() => typeof crypto.randomUUID), "undefined");
    const result = await page.evaluate(() => window.result);
    assert.equal(result.error, undefined);
    assert.equal(result.ok, true);
    assert.equal(result.head, 3);
    assert.match(result.id, /^[0-9a-f]{32}$/, "the new store's id: 32 hex digits");
    assert.deepEqual(errors, []);
  } finally {
    await h.close();
  }
});

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
