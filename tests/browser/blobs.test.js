// Blobs of the opfs backend in real Chromium, inside a dedicated Worker
// (pages/opfs-worker.js through pages/opfs.html): a blob is the file
// blobs/sha256/<2 hex>/<hash> in the store's OPFS folder, it is there after
// a page reload, list pages in hash order, a wrong hash is refused, and
// deleteStore removes the blobs with the store; a tab fenced by a take-over
// is refused blob calls.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { startHarness, openTab, call, callFails } from "./harness.js";

const sha = (s) => createHash("sha256").update(s).digest("hex");

test("opfs blobs are files in the store's folder, kept across a page reload, listed in order, and removed by deleteStore", async () => {
  const h = await startHarness();
  try {
    let page = await openTab(h);
    await call(page, "open", { name: "blobby" });
    const texts = ["first blob", "second blob", "third blob", ""];  // a racing put adds one
    const hashes = [];
    for (const t of texts) hashes.push(await call(page, "blobPut", { text: t }));
    assert.deepEqual(hashes, texts.map(sha));
    assert.equal(await call(page, "blobPut", { text: "first blob" }), hashes[0], "a second put is a no-op");
    assert.deepEqual(await call(page, "blobPutMany", { text: "third blob", n: 4 }), Array(4).fill(hashes[2]), "racing puts of a stored blob");
    const racing = await call(page, "blobPutMany", { text: "racing new blob", n: 4 });
    assert.deepEqual(racing, Array(4).fill(sha("racing new blob")), "racing puts of a new blob all succeed");
    texts.push("racing new blob");
    hashes.push(sha("racing new blob"));
    const files = await call(page, "blobFiles", { name: "blobby" });
    assert.deepEqual(files, Object.fromEntries(texts.map((t) => [`sha256/${sha(t).slice(0, 2)}/${sha(t)}`, Buffer.byteLength(t)])));
    // The page reloads without closing its store: the worker dies with it.
    await page.reload();
    await page.waitForFunction(() => window.ready === true);
    await call(page, "open", { name: "blobby" });
    for (const t of texts) assert.deepEqual(await call(page, "blobGet", { hash: sha(t) }), { text: t, isUint8Array: true });
    assert.equal(await call(page, "blobGet", { hash: sha("never") }), null);
    assert.equal(await call(page, "blobHas", { hash: sha("never") }), false);
    assert.equal(await call(page, "blobHas", { hash: hashes[1] }), true);
    const sorted = [...hashes].sort();
    const first = await call(page, "blobList", { limit: 3 });
    assert.deepEqual(first, { hashes: sorted.slice(0, 3), next: sorted[2] });
    assert.deepEqual(await call(page, "blobList", { after: first.next }), { hashes: sorted.slice(3) });
    const wrong = await callFails(page, "blobPutWithHash", { hash: sha("other"), text: "these bytes" });
    assert.equal(wrong.code, "invalid/args");
    assert.match(wrong.message, new RegExp(sha("these bytes")));
    const bad = await callFails(page, "blobGet", { hash: "not-a-hash" });
    assert.equal(bad.code, "invalid/args");
    assert.match(bad.message, /"not-a-hash"/);
    assert.equal(await call(page, "blobPutWithHash", { hash: sha("named"), text: "named" }), sha("named"));
    await call(page, "close");
    assert.equal(await call(page, "delete", { name: "blobby" }), true);
    assert.equal(await call(page, "blobFiles", { name: "blobby" }), null);
    await call(page, "open", { name: "blobby" });
    assert.deepEqual(await call(page, "blobList", {}), { hashes: [] });
    await call(page, "close");
    assert.deepEqual(page.errors, []);
  } finally {
    await h.close();
  }
});

test("a tab whose opfs store was taken over is refused blob calls with fenced, and the new owner reads the blobs it put", async () => {
  const h = await startHarness();
  try {
    const a = await openTab(h);
    const b = await openTab(h);
    await call(a, "open", { name: "blob-takeover" });
    const hash = await call(a, "blobPut", { text: "put by A" });
    await call(b, "open", { name: "blob-takeover" });
    await a.waitForFunction(() => window.events.length > 0);
    assert.equal((await callFails(a, "blobPut", { text: "late" })).code, "fenced");
    assert.equal((await callFails(a, "blobGet", { hash })).code, "fenced");
    assert.deepEqual(await call(b, "blobGet", { hash }), { text: "put by A", isUint8Array: true });
    assert.deepEqual(await call(b, "blobList", {}), { hashes: [hash] });
    await call(b, "close");
  } finally {
    await h.close();
  }
});
