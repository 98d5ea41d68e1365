// Blobs through the public package in Node: put, get, has, list and
// putWithHash on memory, sqlite ":memory:" and a sqlite file (its layout on
// disk, a reopen, a kill -9 right after put resolves, a folder that cannot
// be written, deleteStore), on a
// replica, and the refusals: not bytes, a bad hash, a wrong hash, a blob
// above the size limit, a closed store.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";

import { deleteStore, openReplica, openStore } from "../../js/index.js";
import { rejectsWith, repoRoot, tempDir } from "./helpers.js";

const sha = (bytes) => createHash("sha256").update(bytes).digest("hex");
const text = (s) => new TextEncoder().encode(s);

let dir;
let counter = 0;
function filePath(label = "b") {
  dir ??= tempDir("onestore-blobs-");
  return join(dir, `${label}${counter++}.sqlite`);
}

const backends = {
  memory: () => ({ backend: "memory" }),
  "sqlite :memory:": () => ({ backend: "sqlite", path: ":memory:" }),
  "sqlite file": () => ({ backend: "sqlite", path: filePath() }),
};

for (const [label, options] of Object.entries(backends)) {
  describe(`blobs on ${label}`, () => {
    test("put returns the sha256 of the bytes, and get, has and list find the blob", async () => {
      const store = await openStore(options());
      const bytes = text("hello, blobs");
      const hash = await store.blobs.put(bytes);
      assert.equal(hash, sha(bytes));
      assert.equal(await store.blobs.has(hash), true);
      const got = await store.blobs.get(hash);
      assert.ok(got instanceof Uint8Array);
      assert.deepEqual(got, bytes);
      assert.deepEqual(await store.blobs.list(), { hashes: [hash] });
      await store.close();
    });

    test("Buffer, ArrayBuffer and the empty blob are bytes too, and a put of an existing blob changes nothing", async () => {
      const store = await openStore(options());
      const fromBuffer = await store.blobs.put(Buffer.from("same"));
      const fromArrayBuffer = await store.blobs.put(text("same").buffer);
      assert.equal(fromBuffer, fromArrayBuffer);
      const empty = await store.blobs.put(new Uint8Array(0));
      assert.equal(empty, sha(new Uint8Array(0)));
      assert.deepEqual(await store.blobs.get(empty), new Uint8Array(0));
      assert.deepEqual((await store.blobs.list()).hashes, [fromBuffer, empty].sort());
      await store.close();
    });

    test("the blob is a copy: changing the caller's buffer after put, or the bytes get returned, changes nothing stored", async () => {
      const store = await openStore(options());
      const bytes = text("original");
      const pending = store.blobs.put(bytes);
      bytes.fill(0);
      const hash = await pending;
      assert.equal(hash, sha(text("original")));
      const got = await store.blobs.get(hash);
      got.fill(1);
      assert.deepEqual(await store.blobs.get(hash), text("original"));
      // A Node Buffer too (its own slice() is a view, not a copy), by put
      // and by putWithHash, changed before and after the put resolved.
      for (const [i, put] of [(b) => store.blobs.put(b), (b) => store.blobs.putWithHash(sha(b), b)].entries()) {
        const buf = Buffer.from(`a buffer ${i}`);
        const want = sha(buf);
        const p = put(buf);
        buf.fill(88);
        assert.equal(await p, want);
        buf.fill(0);
        assert.equal(sha(await store.blobs.get(want)), want);
      }
      await store.close();
    });

    test("get and has of a hash never stored answer undefined and false", async () => {
      const store = await openStore(options());
      const missing = sha(text("never stored"));
      assert.equal(await store.blobs.get(missing), undefined);
      assert.equal(await store.blobs.has(missing), false);
      assert.deepEqual(await store.blobs.list(), { hashes: [] });
      await store.close();
    });

    test("list pages through every blob in hash order with after and limit", async () => {
      const store = await openStore(options());
      const hashes = [];
      for (let i = 0; i < 25; i++) hashes.push(await store.blobs.put(text(`blob ${i}`)));
      hashes.sort();
      const seen = [];
      let page = await store.blobs.list({ limit: 7 });
      for (;;) {
        seen.push(...page.hashes);
        if (!page.next) break;
        assert.equal(page.next, page.hashes.at(-1));
        page = await store.blobs.list({ after: page.next, limit: 7 });
      }
      assert.deepEqual(seen, hashes);
      assert.deepEqual(await store.blobs.list({ limit: 25 }), { hashes });
      assert.deepEqual(await store.blobs.list({ after: hashes[23] }), { hashes: [hashes[24]] });
      await store.close();
    });

    test("putWithHash stores bytes under their own hash and refuses bytes whose sha256 differs", async () => {
      const store = await openStore(options());
      const bytes = text("arrived with a name");
      assert.equal(await store.blobs.putWithHash(sha(bytes), bytes), sha(bytes));
      assert.deepEqual(await store.blobs.get(sha(bytes)), bytes);
      const other = sha(text("something else"));
      await rejectsWith(store.blobs.putWithHash(other, bytes), "invalid/args", [other, sha(bytes)]);
      assert.equal(await store.blobs.has(other), false);
      await store.close();
    });

    test("not bytes, a malformed hash, a bad list option and a blob above 64 MiB are refused, naming the value", async () => {
      const store = await openStore(options());
      await rejectsWith(store.blobs.put("hello"), "invalid/args", ['"hello"', "Uint8Array"]);
      await rejectsWith(store.blobs.put([1, 2, 3]), "invalid/args", ["Uint8Array"]);
      await rejectsWith(store.blobs.put(new Uint16Array(2)), "invalid/args", ["Uint8Array"]);
      await rejectsWith(store.blobs.put(undefined), "invalid/args", ["undefined"]);
      // A buffer transferred away: named, not a storage failure.
      const gone = new ArrayBuffer(8);
      const view = new Uint8Array(gone);
      structuredClone(gone, { transfer: [gone] });
      await rejectsWith(store.blobs.put(gone), "invalid/args", ["detached"]);
      await rejectsWith(store.blobs.put(view), "invalid/args", ["detached"]);
      const upper = sha(text("x")).toUpperCase();
      await rejectsWith(store.blobs.get(upper), "invalid/args", [upper.slice(0, 40)]);
      await rejectsWith(store.blobs.has("9f3a"), "invalid/args", ['"9f3a"']);
      await rejectsWith(store.blobs.get("../../etc/passwd".padEnd(64, "a")), "invalid/args", ["64 lowercase hex"]);
      await rejectsWith(store.blobs.putWithHash("nope", text("x")), "invalid/args", ['"nope"']);
      await rejectsWith(store.blobs.list({ after: "zz" }), "invalid/args", ['"zz"']);
      await rejectsWith(store.blobs.list({ limit: 0 }), "invalid/args", ["limit"]);
      await rejectsWith(store.blobs.list({ limit: 10001 }), "invalid/args", ["10001"]);
      await rejectsWith(store.blobs.put(new Uint8Array(64 * 1024 * 1024 + 1)), "limit", [String(64 * 1024 * 1024 + 1)]);
      assert.deepEqual(await store.blobs.list(), { hashes: [] });
      // The store goes on.
      assert.equal(await store.blobs.put(text("fine")), sha(text("fine")));
      await store.close();
    });

    test("blob calls on a closed store are refused with closed", async () => {
      const store = await openStore(options());
      const hash = await store.blobs.put(text("kept"));
      await store.close();
      await rejectsWith(store.blobs.get(hash), "closed", ["blobs.get"]);
      await rejectsWith(store.blobs.put(text("late")), "closed", ["blobs.put"]);
      await rejectsWith(store.blobs.list(), "closed", ["blobs.list"]);
    });
  });
}

test("bytes of another realm (a vm context, an iframe) are bytes: a Uint8Array or ArrayBuffer made there is stored; what is not bytes is refused", async () => {
  const { runInNewContext } = await import("node:vm");
  const store = await openStore({ backend: "memory" });
  const hash = createHash("sha256").update(Buffer.from([1, 2, 3])).digest("hex");
  // Before: "expected bytes (a Uint8Array, Buffer or ArrayBuffer), got Uint8Array of 3 bytes".
  assert.equal(await store.blobs.put(runInNewContext("new Uint8Array([1, 2, 3])")), hash);
  assert.equal(await store.blobs.put(runInNewContext("new Uint8Array([1, 2, 3]).buffer")), hash);
  for (const bad of [{ [Symbol.toStringTag]: "Uint8Array" }, { [Symbol.toStringTag]: "ArrayBuffer", byteLength: 3 }, new Uint16Array(2), "abc"]) {
    await rejectsWith(store.blobs.put(bad), "invalid/args", ["expected bytes"]);
  }
  await store.close();
});

describe("blobs of a sqlite file on disk", () => {
  test("a blob is the file <file>.blobs/sha256/<2 hex>/<hash> holding its bytes, and no temporary file is left", async () => {
    const path = filePath();
    const store = await openStore({ backend: "sqlite", path });
    const bytes = text("on disk");
    const hash = await store.blobs.put(bytes);
    const file = join(`${path}.blobs`, "sha256", hash.slice(0, 2), hash);
    assert.ok(statSync(file).isFile());
    assert.deepEqual(new Uint8Array(readFileSync(file)), bytes);
    assert.deepEqual(readdirSync(join(`${path}.blobs`, "sha256", hash.slice(0, 2))), [hash]);
    await store.close();
  });

  test("blobs, one of 3 MiB among them, survive closing and reopening the store", async () => {
    const path = filePath();
    let store = await openStore({ backend: "sqlite", path });
    const big = new Uint8Array(3 * 1024 * 1024).map((_, i) => i % 251);
    const hash = await store.blobs.put(big);
    const small = await store.blobs.put(text("small"));
    await store.close();
    store = await openStore({ backend: "sqlite", path });
    assert.deepEqual(await store.blobs.get(hash), big);
    assert.deepEqual(await store.blobs.get(small), text("small"));
    assert.deepEqual((await store.blobs.list()).hashes, [hash, small].sort());
    await store.close();
  });

  test("list skips files in the blob folders that are not blobs (a temporary file left by a crash)", async () => {
    const path = filePath();
    const store = await openStore({ backend: "sqlite", path });
    const hash = await store.blobs.put(text("real"));
    const { writeFileSync } = await import("node:fs");
    writeFileSync(join(`${path}.blobs`, "sha256", hash.slice(0, 2), `.tmp-${hash}-leftover`), "half");
    assert.deepEqual(await store.blobs.list(), { hashes: [hash] });
    await store.close();
  });

  test("a blob folder that cannot be written makes put fail with storage_failed, leaves no blob, and the store goes on", async () => {
    const path = filePath();
    const store = await openStore({ backend: "sqlite", path });
    const { writeFileSync, rmSync } = await import("node:fs");
    writeFileSync(`${path}.blobs`, "a file where the blob folder belongs");
    const err = await rejectsWith(store.blobs.put(text("blocked")), "storage_failed", ["blobs.put"]);
    assert.ok(err.cause, "the file system's error is the cause");
    assert.deepEqual(await store.blobs.list(), { hashes: [] });
    assert.equal(await store.blobs.has(sha(text("blocked"))), false);
    await store.commit([]);
    rmSync(`${path}.blobs`);
    assert.equal(await store.blobs.put(text("blocked")), sha(text("blocked")));
    assert.deepEqual(await store.blobs.get(sha(text("blocked"))), text("blocked"));
    await store.close();
  });

  test("a blob whose put resolved is kept when the process is killed with SIGKILL right after", async () => {
    const path = filePath("killed");
    const child = spawn(process.execPath, [join(repoRoot, "tests/js/fixtures/blob-writer.mjs"), path, String(2 * 1024 * 1024), "7"], { stdio: ["ignore", "pipe", "inherit"] });
    const hash = await new Promise((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
        if (out.includes("\n")) {
          child.kill("SIGKILL");
          resolve(out.trim());
        }
      });
      child.on("exit", (code) => reject(new Error(`the writer exited (${code}) before printing a hash`)));
    });
    await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.on("exit", r)));
    assert.equal(child.signalCode, "SIGKILL");
    const expected = new Uint8Array(2 * 1024 * 1024).fill(7);
    assert.equal(hash, sha(expected));
    const store = await openStore({ backend: "sqlite", path });
    assert.deepEqual(await store.blobs.get(hash), expected);
    await store.close();
  });

  test("deleteStore removes the store's blobs with its file", async () => {
    const path = filePath();
    const store = await openStore({ backend: "sqlite", path });
    const hash = await store.blobs.put(text("doomed"));
    await store.close();
    assert.equal(await deleteStore({ backend: "sqlite", path }), true);
    assert.equal(existsSync(`${path}.blobs`), false);
    const again = await openStore({ backend: "sqlite", path });
    assert.equal(await again.blobs.has(hash), false);
    await again.close();
  });
});

describe("blobs of a replica", () => {
  test("a replica stores blobs that arrive with their hash, reads them back after reopening, and has no put", async () => {
    const path = filePath("replica");
    let replica = await openReplica({ backend: "sqlite", path });
    const bytes = text("synced blob");
    assert.equal(replica.blobs.put, undefined);
    await replica.blobs.putWithHash(sha(bytes), bytes);
    await rejectsWith(replica.blobs.putWithHash(sha(text("other")), bytes), "invalid/args", ["replica.blobs.putWithHash"]);
    await replica.close();
    await rejectsWith(replica.blobs.get(sha(bytes)), "closed");
    replica = await openReplica({ backend: "sqlite", path });
    assert.deepEqual(await replica.blobs.get(sha(bytes)), bytes);
    assert.deepEqual(await replica.blobs.list(), { hashes: [sha(bytes)] });
    await replica.close();
  });
});

test("bytes of a kind blobs.put does not take are named by their kind and size, not printed as an object of indexes", async () => {
  const store = await openStore({ backend: "memory" });
  try {
    await rejectsWith(store.blobs.put(new Uint16Array([1, 2])), "invalid/args", ["got Uint16Array of 4 bytes"]);
    await rejectsWith(store.blobs.put(new DataView(new ArrayBuffer(3))), "invalid/args", ["got DataView of 3 bytes"]);
  } finally {
    await store.close();
  }
});

// A blob file damaged on the disk (a flipped bit, a file cut short).
// Before, get handed the damaged bytes out as the blob, export wrote them
// into an archive that its own import refused, and a put of the right
// bytes did nothing (the blob "was there"). Now the bytes are checked
// against their name when read, and a put replaces damaged ones.
test("a blob damaged on the disk is refused by get and export with storage_failed, and a put of its bytes repairs it", async () => {
  const path = join(tempDir("onestore-blob-damage-"), "s.sqlite");
  const store = await openStore({ backend: "sqlite", path });
  try {
    const a = text("the first blob, whose bit flips");
    const b = text("the second blob, cut short on the disk");
    const [ha, hb] = [await store.blobs.put(a), await store.blobs.put(b)];
    const fileOf = (h) => join(`${path}.blobs`, "sha256", h.slice(0, 2), h);
    const flipped = readFileSync(fileOf(ha));
    flipped[3] ^= 1;
    writeFileSync(fileOf(ha), flipped);
    truncateSync(fileOf(hb), 5);
    await rejectsWith(store.blobs.get(ha), "storage_failed", [ha, "damaged"]);
    await rejectsWith(store.blobs.get(hb), "storage_failed", [hb, "damaged", "5 bytes"]);
    await rejectsWith(new Response(store.export()).arrayBuffer(), "storage_failed", ["store.export", "damaged"]);
    // Put again: repaired.
    assert.equal(await store.blobs.put(a), ha);
    assert.equal(await store.blobs.putWithHash(hb, b), hb);
    assert.deepEqual(await store.blobs.get(ha), a);
    assert.deepEqual(await store.blobs.get(hb), b);
    const archive = new Uint8Array(await new Response(store.export()).arrayBuffer());
    assert.ok(archive.byteLength > 0);
  } finally {
    await store.close();
  }
});
