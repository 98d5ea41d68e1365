// Blobs of the durable backend inside real workerd (Miniflare 4): a store's
// blobs live in its Durable Object's own SQLite, table _blobs, cut into
// parts of 1 MiB under the platform's 2 MB row limit; a 5 MiB blob comes
// back whole after a restart of workerd; list pages in hash order; a wrong
// hash and bad input are refused.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { startWorkerd } from "./harness.js";

const pattern = (size, fill) => Uint8Array.from({ length: size }, (_, i) => (i * 31 + fill) % 256);
const sha = (bytes) => createHash("sha256").update(bytes).digest("hex");

test("a blob above 2 MB is stored in 1 MiB parts in the object's SQLite and read back whole after workerd restarts", async () => {
  const dir = mkdtempSync(join(tmpdir(), "onestore-edge-blobs-"));
  try {
    const size = 5 * 1024 * 1024 + 123;
    let w = await startWorkerd({ persist: dir });
    let big;
    let small;
    try {
      big = await w.call("blobs", "blobPut", { size, fill: 3 });
      assert.equal(big, sha(pattern(size, 3)));
      small = await w.call("blobs", "blobPut", { size: 10, fill: 1 });
      assert.equal(await w.call("blobs", "blobPut", { size, fill: 3 }), big, "a second put of the same bytes is a no-op");
      const rows = await w.call("blobs", "blobRows");
      const parts = rows.filter((r) => r.hash === big);
      assert.deepEqual(parts.map((r) => r.part), [0, 1, 2, 3, 4, 5]);
      assert.ok(parts.every((r) => r.size <= 1024 * 1024), "every part is at most 1 MiB");
      assert.equal(parts.reduce((n, r) => n + r.size, 0), size);
      assert.deepEqual(rows.filter((r) => r.hash === small).map((r) => [r.part, r.size]), [[0, 10]]);
    } finally {
      await w.dispose();
    }
    w = await startWorkerd({ persist: dir });
    try {
      assert.deepEqual(await w.call("blobs", "blobGet", { hash: big, fill: 3 }), { has: true, bytes: { size, pattern: true, digest: big } });
      assert.deepEqual(await w.call("blobs", "blobGet", { hash: small, fill: 1 }), { has: true, bytes: { size: 10, pattern: true, digest: small } });
      assert.deepEqual(await w.call("blobs", "blobList", {}), { hashes: [big, small].sort() });
    } finally {
      await w.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("list pages through a durable store's blobs in hash order, a missing blob is undefined, and bad input is refused", async () => {
  const w = await startWorkerd();
  try {
    const hashes = [];
    for (let i = 0; i < 5; i++) hashes.push(await w.call("paging", "blobPut", { size: 100 + i, fill: i }));
    hashes.sort();
    const first = await w.call("paging", "blobList", { limit: 3 });
    assert.deepEqual(first, { hashes: hashes.slice(0, 3), next: hashes[2] });
    assert.deepEqual(await w.call("paging", "blobList", { after: first.next, limit: 3 }), { hashes: hashes.slice(3) });
    const missing = sha(new Uint8Array([9, 9]));
    assert.deepEqual(await w.call("paging", "blobGet", { hash: missing, fill: 0 }), { has: false, bytes: null });
    const [wrong, notBytes, badHash] = await w.call("paging", "blobRefusals", { hash: missing });
    assert.equal(wrong.code, "invalid/args");
    assert.match(wrong.message, new RegExp(missing));
    assert.equal(notBytes.code, "invalid/args");
    assert.match(notBytes.message, /"a string"/);
    assert.equal(badHash.code, "invalid/args");
    assert.match(badHash.message, /"ABC"/);
    assert.deepEqual((await w.call("paging", "blobList", {})).hashes, hashes, "nothing was stored by the refused calls");
  } finally {
    await w.dispose();
  }
});
