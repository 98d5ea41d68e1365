// Archives across every backend pair, through GNU tar: a Node sqlite store's
// export is listed (tar -tf), extracted (tar -xf) and re-packed, imported
// over an OPFS store in Chromium; that store's export goes the same way into
// a Durable Object in workerd (import from a request body); the object's
// export (a streamed Response) into a Node sqlite store. Each copy equals the
// source row by row, document, outbox, blobs (bytes hashed again) and
// fingerprint. A bad or cut archive imported over an OPFS or durable store
// is refused with invalid/archive and leaves it whole, with no generation
// left; progress reaches its total on both. An OPFS switch cut after its
// file moved is finished by the next open.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { unpackTar } from "modern-tar";
import * as api from "../../js/index.js";
import { sessionFixture } from "../js/archive/session.js";
import { tempDir } from "../js/helpers.js";
import { startWorkerd } from "../edge/harness.js";
import { startHarness, call, callFails } from "./harness.js";

const { fill, state } = sessionFixture(api);
const PAGE = "/tests/browser/pages/archive.html";

// Writes `bytes` as a tar, checks GNU tar lists the manifest first and every
// blob, extracts it and re-packs the folder with GNU tar: the re-packed bytes.
function throughGnuTar(dir, label, bytes, blobs) {
  const tar = join(dir, `${label}.tar`);
  writeFileSync(tar, bytes);
  const names = execFileSync("tar", ["-tf", tar], { encoding: "utf8" }).trim().split("\n");
  assert.equal(names[0], "onestore/manifest.json");
  for (const b of blobs) assert.ok(names.includes(`onestore/sha256/${b.hash.slice(0, 2)}/${b.hash}`), `${label}: blob ${b.hash} listed`);
  const out = join(dir, label);
  mkdirSync(out);
  execFileSync("tar", ["-xf", tar, "-C", out]);
  for (const b of blobs) assert.equal(execFileSync("sha256sum", [join(out, "onestore/sha256", b.hash.slice(0, 2), b.hash)], { encoding: "utf8" }).slice(0, 64), b.hash);
  const repacked = join(dir, `${label}-re.tar`);
  execFileSync("tar", ["-cf", repacked, "--sort=name", "-C", out, "onestore"]);
  return readFileSync(repacked);
}

test("an archive goes Node sqlite → OPFS in Chromium → workerd durable → Node sqlite through GNU tar, equal at every step", async () => {
  const dir = tempDir("onestore-archive-pairs-");
  const source = await api.openStore({ backend: "sqlite", path: join(dir, "source.sqlite") });
  await fill(source, { tag: "node" });
  const want = await state(source);
  const { blobs } = JSON.parse(want);
  assert.equal(blobs.length, 3);
  const tar1 = throughGnuTar(dir, "node", new Uint8Array(await new Response(source.export()).arrayBuffer()), blobs);
  await source.close();

  const h = await startHarness();
  const w = await startWorkerd({ script: "archive-worker.js" });
  try {
    // Node → OPFS, over a store with other rows and blobs.
    const page = await h.newPage(PAGE);
    await page.waitForFunction(() => window.ready === true);
    await call(page, "fill", { name: "s1", tag: "previous", rows: 20 });
    const imported = await call(page, "import", { name: "s1", tar: tar1.toString("base64") });
    assert.equal(imported.progress.done, imported.progress.total);
    assert.equal(await call(page, "state", { name: "s1" }), want, "OPFS: the same state as the Node store");
    assert.deepEqual(Object.keys(await call(page, "listing")).filter((n) => n.includes(".import-")), [], "no generation left in OPFS");
    const exported = await call(page, "export", { name: "s1" });
    assert.equal(exported.progress.done, exported.progress.total);
    const tar2 = throughGnuTar(dir, "opfs", Buffer.from(exported.tar, "base64"), blobs);

    // OPFS → workerd, from a request body, over a durable store with other content.
    await w.mf.dispatchFetch("http://t/d1/fill", { method: "POST", body: JSON.stringify({ tag: "previous", rows: 20 }) });
    const answer = await (await w.mf.dispatchFetch("http://t/d1/import", { method: "POST", body: tar2 })).json();
    assert.ok(answer.ok, answer.message);
    assert.equal(answer.state, want, "durable: the same state as the Node store");
    assert.equal(answer.progress.done, answer.progress.total);
    assert.equal(answer.progress.blobBytes, blobs.reduce((n, b) => n + b.size, 0));
    assert.ok(!answer.tables.includes("_blobs_import"), "no staging table left");
    assert.deepEqual(answer.own, [{ id: 1, text: "kept by the class (previous)" }], "the class's own table is not the store's: the import keeps it");

    // workerd (a streamed Response) → Node sqlite, over a store with other content.
    const res = await w.mf.dispatchFetch("http://t/d1/export");
    assert.equal(res.headers.get("content-type"), "application/x-tar");
    const tar3 = throughGnuTar(dir, "durable", new Uint8Array(await res.arrayBuffer()), blobs);
    const path = join(dir, "target.sqlite");
    const previous = await api.openStore({ backend: "sqlite", path });
    await fill(previous, { tag: "previous", rows: 20 });
    await previous.close();
    const back = await api.importStore(tar3, { backend: "sqlite", path });
    assert.equal(await state(back), want, "Node: the same state after the round trip");
    await back.close();
  } finally {
    await w.dispose();
    await h.close();
  }
});

test("a bad or cut archive imported over an OPFS or a durable store is refused with invalid/archive and leaves it whole", async () => {
  const source = await api.openStore({ backend: "memory" });
  await fill(source, { tag: "source", rows: 1500 });
  const good = new Uint8Array(await new Response(source.export()).arrayBuffer());
  await source.close();
  // The last blob entry's first byte flipped: its bytes no longer hash to its name.
  const bad = good.slice();
  const entries = await unpackTar(good);
  let at = 0;
  for (const e of entries) {
    at += 512;
    if (e.header.name.startsWith("onestore/sha256/")) { bad[at] ^= 1; break; }
    at += Math.ceil(e.header.size / 512) * 512;
  }

  const h = await startHarness();
  const w = await startWorkerd({ script: "archive-worker.js" });
  try {
    const page = await h.newPage(PAGE);
    await page.waitForFunction(() => window.ready === true);
    await call(page, "fill", { name: "kept", tag: "kept", rows: 30 });
    const before = await call(page, "state", { name: "kept" });
    for (const args of [{ tar: Buffer.from(bad).toString("base64") }, { tar: Buffer.from(good).toString("base64"), cut: Math.floor(good.length * 0.6) }]) {
      const e = await callFails(page, "import", { name: "kept", ...args });
      assert.equal(e.code, "invalid/archive", e.message);
      assert.equal(await call(page, "state", { name: "kept" }), before);
      assert.deepEqual(Object.keys(await call(page, "listing")).filter((n) => n.includes(".import-")), [], "no generation left in OPFS");
    }
    // Refused while the store stays open: its owner goes on committing (before,
    // the import's first step took the store's lock and fenced it).
    for (const args of [{ tar: Buffer.from(bad).toString("base64") }, { tar: Buffer.from(good.slice(0, 700)).toString("base64") }]) {
      const e = await callFails(page, "import", { name: "kept", keepOpen: true, ...args });
      assert.equal(e.code, "invalid/archive", e.message);
      await call(page, "fill", { name: "kept", tag: `open-${args.tar.length}`, rows: 3 });
    }
    assert.notEqual(await call(page, "state", { name: "kept" }), before, "the open store committed after the refused imports");

    await w.mf.dispatchFetch("http://t/kept/fill", { method: "POST", body: JSON.stringify({ tag: "kept", rows: 30 }) });
    const durableBefore = (await (await w.mf.dispatchFetch("http://t/kept/state")).json()).state;
    for (const body of [bad, good.slice(0, Math.floor(good.length * 0.9))]) {
      const answer = await (await w.mf.dispatchFetch("http://t/kept/import", { method: "POST", body })).json();
      assert.equal(answer.ok, false);
      assert.equal(answer.code, "invalid/archive", answer.message);
      assert.equal(answer.state, durableBefore);
      assert.ok(!answer.tables.includes("_blobs_import"), "no staging table left");
    }
  } finally {
    await w.dispose();
    await h.close();
  }
});

test("an OPFS import over a store takes the place of its snapshots too", async () => {
  const source = await api.openStore({ backend: "memory" });
  await fill(source, { tag: "source", rows: 10 });
  const tar = Buffer.from(new Uint8Array(await new Response(source.export()).arrayBuffer())).toString("base64");
  const want = await state(source);
  await source.close();
  const h = await startHarness();
  try {
    const page = await h.newPage(PAGE);
    await page.waitForFunction(() => window.ready === true);
    await call(page, "fill", { name: "snapped", tag: "previous", rows: 10 });
    await call(page, "snapshot", { name: "snapped", label: "the previous session's" });
    assert.equal((await call(page, "snapshots", { name: "snapped" })).length, 1);
    await call(page, "import", { name: "snapped", tar });
    assert.deepEqual(await call(page, "snapshots", { name: "snapped" }), []);
    assert.deepEqual(Object.keys(await call(page, "listing")).filter((n) => n.startsWith("snapped/snapshots/")), []);
    assert.equal(await call(page, "state", { name: "snapped" }), want);
  } finally {
    await h.close();
  }
});

test("an OPFS import whose switch was cut after its file moved is finished by the next open: its blobs in, the others out", async () => {
  const h = await startHarness();
  try {
    const page = await h.newPage(PAGE);
    await page.waitForFunction(() => window.ready === true);
    await call(page, "fill", { name: "cut", tag: "old", rows: 5 });
    const old = await call(page, "blobs", { name: "cut" });
    assert.equal(old.length, 3);
    const hash = await call(page, "cutSwitch", { name: "cut", text: "the archive's only blob" });
    assert.ok(Object.keys(await call(page, "listing")).includes("cut.import-0123456789ab/blobs.json"));
    assert.deepEqual(await call(page, "blobs", { name: "cut" }), [hash]);
    assert.deepEqual(Object.keys(await call(page, "listing")).filter((n) => n.includes(".import-")), []);
  } finally {
    await h.close();
  }
});
