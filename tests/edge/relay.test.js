// The relay in real workerd (Miniflare): SessionRelay, a Durable Object per
// session over the durable backend, behind relayFetch, driven over HTTP with
// batches and blobs of a Node store: every protocol call, fenced pushes,
// gaps, duplicate pushes, divergence, malformed and oversized bodies (a 4xx
// with a code, nothing applied), a blob whose hash differs, a blob larger
// than a Durable Object row, authorize refusing, the router's refusals, and
// the relay's state surviving a workerd restart with a persist folder.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Miniflare } from "miniflare";

import { defineTable, int, openReplica, openStore, str } from "../../js/index.js";
import { repoRoot } from "./harness.js";

const Files = defineTable("files", {
  version: 1,
  columns: { id: str(), path: str(), blob: str().optional(), n: int() },
  key: ["id"],
});

const sha = (bytes) => createHash("sha256").update(bytes).digest("hex");
const text = (s) => new TextEncoder().encode(s);

async function startRelay(persist) {
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(repoRoot, "tests", "edge", "relay-worker.js"),
    modulesRoot: repoRoot,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: "2025-01-01",
    compatibilityFlags: ["nodejs_compat"],
    durableObjects: { SESSIONS: { className: "TestRelay", useSQLite: true } },
    durableObjectsPersist: persist ?? false,
  });
  await mf.ready;
  return mf;
}

/** One request: { status, body } (JSON parsed, else bytes). */
async function call(mf, method, path, body, token = "rw") {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  const init = { method, headers };
  if (body !== undefined) {
    init.body = typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body);
    if (!(body instanceof Uint8Array)) headers["content-type"] = "application/json";
  }
  const res = await mf.dispatchFetch(`http://relay.test${path}`, init);
  const type = res.headers.get("content-type") ?? "";
  const out = type.includes("json") ? await res.json() : new Uint8Array(await res.arrayBuffer());
  return { status: res.status, body: out };
}

function assertError(answer, status, code, mentions = []) {
  assert.equal(answer.status, status, `expected ${status}, got ${answer.status}: ${JSON.stringify(answer.body)}`);
  assert.equal(answer.body?.error?.code, code, JSON.stringify(answer.body));
  for (const m of mentions) assert.ok(answer.body.error.message.includes(m), `${JSON.stringify(answer.body.error.message)} should mention ${m}`);
}

/** A Node store with commits: 1 the table, then one put per file. */
async function driverStore(n, blobFor = () => null) {
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "app" });
  const files = owner.table(Files);
  for (let i = 0; i < n; i++) await owner.tx(async (tx) => tx.put(files, { id: `f${i}`, path: `p/${i}`, blob: blobFor(i), n: i }));
  return store;
}

async function take(mf, session, device = "d1") {
  const answer = await call(mf, "POST", `/sessions/${session}/lease`, { op: "take", device });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.epoch;
}

let mf;
before(async () => { mf = await startRelay(); });
after(async () => { await mf?.dispose(); });

describe("SessionRelay in workerd", () => {
  test("answers every protocol call: the session, the lease, push, pull, blobs, download and release", async () => {
    const bytes = text("a file's body");
    const hash = sha(bytes);
    const store = await driverStore(3, (i) => (i === 1 ? hash : null));
    await store.blobs.put(bytes);

    assert.deepEqual((await call(mf, "GET", "/sessions/all-calls")).body, { session: "all-calls", head: 0, epoch: 0, driver: null, expires: 0 });
    const taken = await call(mf, "POST", "/sessions/all-calls/lease", { op: "take", device: "laptop" });
    assert.equal(taken.body.epoch, 1);
    assert.equal(taken.body.head, 0);
    const hb = await call(mf, "POST", "/sessions/all-calls/lease", { op: "heartbeat", epoch: 1 });
    assert.equal(hb.status, 200);
    assert.ok(hb.body.expires >= taken.body.expires);

    assert.equal((await call(mf, "HEAD", `/sessions/all-calls/blobs/${hash}`)).status, 404);
    const put = await call(mf, "PUT", `/sessions/all-calls/blobs/${hash}`, bytes);
    assert.equal(put.status, 201);
    assert.equal((await call(mf, "PUT", `/sessions/all-calls/blobs/${hash}`, bytes)).status, 200);
    assert.equal((await call(mf, "HEAD", `/sessions/all-calls/blobs/${hash}`)).status, 200);
    assert.deepEqual((await call(mf, "GET", `/sessions/all-calls/blobs/${hash}`)).body, bytes);
    assert.deepEqual((await call(mf, "GET", "/sessions/all-calls/blobs")).body, { hashes: [hash] });

    const pushed = await call(mf, "POST", "/sessions/all-calls/push", { epoch: 1, batch: await store.outbox.read(0, 10) });
    assert.deepEqual(pushed.body, { acked: 4, head: 4 });
    assert.deepEqual((await call(mf, "GET", "/sessions/all-calls/pull?after=1&limit=2")).body, await store.outbox.read(1, 2));
    assert.deepEqual((await call(mf, "GET", "/sessions/all-calls/pull?after=4")).body, { from: 4, to: 4, commits: [] });

    const down = (await call(mf, "GET", "/sessions/all-calls/download", undefined, "ro")).body;
    assert.equal(down.head, 4);
    assert.deepEqual(down.blobs, [hash]);
    const copy = await openReplica({ backend: "memory" });
    await copy.applyBatch(down.batch);
    // The fingerprint covers blobs: equal once the copy holds the one the download names.
    assert.notEqual(await copy.fingerprint(), await store.fingerprint());
    await copy.blobs.putWithHash(hash, (await call(mf, "GET", `/sessions/all-calls/blobs/${hash}`, undefined, "ro")).body);
    assert.equal(await copy.fingerprint(), await store.fingerprint());

    const info = (await call(mf, "GET", "/sessions/all-calls", undefined, "ro")).body;
    assert.equal(info.driver, "laptop");
    assert.equal(info.head, 4);
    assert.deepEqual((await call(mf, "POST", "/sessions/all-calls/lease", { op: "release", epoch: 1 })).body, { released: true });
    assert.equal((await call(mf, "GET", "/sessions/all-calls")).body.driver, null);
  });

  test("fences the previous holder after a takeover, and acks a duplicate push without applying it twice", async () => {
    const store = await driverStore(4);
    const first = await take(mf, "fencing", "laptop");
    await call(mf, "POST", "/sessions/fencing/push", { epoch: first, batch: await store.outbox.read(0, 2) });
    const again = await call(mf, "POST", "/sessions/fencing/push", { epoch: first, batch: await store.outbox.read(0, 2) });
    assert.deepEqual(again.body, { acked: 2, head: 2 });
    const second = await take(mf, "fencing", "phone");
    assert.equal(second, first + 1);
    const fenced = await call(mf, "POST", "/sessions/fencing/push", { epoch: first, batch: await store.outbox.read(2, 10) });
    assertError(fenced, 409, "fenced", ["phone"]);
    assert.equal(fenced.body.error.epoch, second);
    assertError(await call(mf, "POST", "/sessions/fencing/lease", { op: "heartbeat", epoch: first }), 409, "fenced");
    assert.equal((await call(mf, "GET", "/sessions/fencing")).body.head, 2);
    assert.deepEqual((await call(mf, "POST", "/sessions/fencing/push", { epoch: second, batch: await store.outbox.read(1, 10) })).body, { acked: 5, head: 5 });
    const all = (await call(mf, "GET", "/sessions/fencing/pull?after=0")).body;
    assert.deepEqual(all.commits.map((c) => c.seq), [1, 2, 3, 4, 5]);
  });

  test("refuses a batch ahead of its head with sync/gap, and a diverging one with sync/diverged, applying neither", async () => {
    const store = await driverStore(3);
    const epoch = await take(mf, "gaps");
    const gap = await call(mf, "POST", "/sessions/gaps/push", { epoch, batch: await store.outbox.read(2, 10) });
    assertError(gap, 409, "sync/gap", ["head 0"]);
    assert.equal(gap.body.error.head, 0);
    const batch = await store.outbox.read(0, 10);
    // A delete of the row just put, recorded as having found none.
    const put = batch.commits[2].ops[0];
    batch.commits[2].ops.push({ op: "delete", table: put.table, key: [put.row.id], count: 0 });
    assertError(await call(mf, "POST", "/sessions/gaps/push", { epoch, batch }), 409, "sync/diverged", ["seq 3"]);
    const info = (await call(mf, "GET", "/sessions/gaps")).body;
    assert.equal(info.head, 0);
    assert.ok(info.diverged.includes("seq 3"));
  });

  test("refuses malformed and oversized bodies with a 4xx and a code, applying nothing", async () => {
    const store = await driverStore(3);
    const epoch = await take(mf, "bodies");
    const push = (body) => call(mf, "POST", "/sessions/bodies/push", body);
    assertError(await push("{"), 400, "invalid/args", ["not JSON"]);
    assertError(await push("null"), 400, "invalid/args", ["JSON object"]);
    assertError(await push({ epoch, batch: [] }), 400, "invalid/args", ["batch"]);
    const good = await store.outbox.read(0, 3);
    assertError(await push({ epoch, batch: { ...good, to: 9 } }), 400, "invalid/args");
    assertError(await call(mf, "POST", "/sessions/bodies/lease", { op: "take" }), 400, "invalid/args", ["device"]);
    // A good batch in a body above the limit (64 KiB in relay-worker.js).
    assertError(await push({ epoch, batch: good, note: "x".repeat(64 * 1024) }), 413, "limit", ["65536"]);
    // Far above it, with its content-length declared: the 413 still comes
    // back (answered before the body was taken, workerd reset the
    // connection: the client saw ECONNRESET, and a driver never halved).
    for (let i = 0; i < 4; i++) assertError(await push({ epoch, batch: good, note: "x".repeat(6 * 2 ** 20) }), 413, "limit", ["65536"]);
    assert.equal((await call(mf, "GET", "/sessions/bodies")).body.head, 0);
    assert.equal((await call(mf, "GET", "/sessions/bodies")).body.epoch, 1);
  });

  test("refuses a blob whose bytes have another hash, a push naming a blob it lacks, and stores a blob larger than a row in parts", async () => {
    const bytes = new Uint8Array(1_500_000).map((_, i) => (i * 7) & 255);
    const hash = sha(bytes);
    const wrong = sha(text("something else"));
    assertError(await call(mf, "PUT", `/sessions/blobs/blobs/${wrong}`, bytes), 400, "invalid/args", [wrong, hash]);
    assert.equal((await call(mf, "HEAD", `/sessions/blobs/blobs/${wrong}`)).status, 404);

    const store = await driverStore(1, () => hash);
    const epoch = await take(mf, "blobs");
    const missing = await call(mf, "POST", "/sessions/blobs/push", { epoch, batch: await store.outbox.read(0, 10) });
    assertError(missing, 409, "not_found", [hash]);
    assert.equal(missing.body.error.hash, hash);
    assert.equal((await call(mf, "GET", "/sessions/blobs")).body.head, 0);

    assert.equal((await call(mf, "PUT", `/sessions/blobs/blobs/${hash}`, bytes)).status, 201);
    assert.deepEqual((await call(mf, "GET", `/sessions/blobs/blobs/${hash}`)).body, bytes);
    assert.deepEqual((await call(mf, "POST", "/sessions/blobs/push", { epoch, batch: await store.outbox.read(0, 10) })).body, { acked: 2, head: 2 });
    const tooBig = new Uint8Array(4 * 1024 * 1024 + 1);
    assertError(await call(mf, "PUT", `/sessions/blobs/blobs/${sha(tooBig)}`, tooBig), 413, "limit");
  });

  test("asks authorize: 401 without a token, 403 for a reader that drives, nothing taken", async () => {
    assertError(await call(mf, "GET", "/sessions/access", undefined, null), 401, "unauthorized", ["token"]);
    assertError(await call(mf, "POST", "/sessions/access/lease", { op: "take", device: "x" }, "ro"), 403, "unauthorized", ["drive"]);
    assertError(await call(mf, "PUT", `/sessions/access/blobs/${sha(text("x"))}`, text("x"), "ro"), 403, "unauthorized");
    assertError(await call(mf, "GET", "/sessions/access", undefined, "wrong"), 403, "unauthorized");
    assert.deepEqual((await call(mf, "GET", "/sessions/access", undefined, "ro")).body.epoch, 0);
  });

  test("routes only /sessions/<id>: 404 elsewhere, 400 for a bad id, 500 naming a missing binding", async () => {
    assertError(await call(mf, "GET", "/"), 404, "not_found");
    assertError(await call(mf, "GET", "/nope/sessions/x"), 404, "not_found");
    assertError(await call(mf, "GET", "/sessions/-bad"), 400, "invalid/args", ["session id"]);
    assertError(await call(mf, "GET", "/unbound/sessions/x"), 500, "invalid/args", ["env.NOPE"]);
    // Before, a misspelt option was ignored (the request went to env.SESSIONS).
    assertError(await call(mf, "GET", "/misspelt/sessions/x"), 500, "invalid/args", ["bindng"]);
    assertError(await call(mf, "GET", "/sessions/x/elsewhere"), 404, "not_found");
  });
});

describe("SessionRelay across a workerd restart", () => {
  test("keeps the head, the lease, the batches and the blobs in the Durable Object's SQLite", async () => {
    const persist = mkdtempSync(join(tmpdir(), "onestore-relay-persist-"));
    try {
      const bytes = text("kept across restarts");
      const hash = sha(bytes);
      const store = await driverStore(3, (i) => (i === 0 ? hash : null));
      let w = await startRelay(persist);
      const epoch = await take(w, "kept", "laptop");
      await call(w, "PUT", `/sessions/kept/blobs/${hash}`, bytes);
      assert.deepEqual((await call(w, "POST", "/sessions/kept/push", { epoch, batch: await store.outbox.read(0, 2) })).body, { acked: 2, head: 2 });
      await w.dispose();

      w = await startRelay(persist);
      try {
        const info = (await call(w, "GET", "/sessions/kept")).body;
        assert.equal(info.head, 2);
        assert.equal(info.epoch, epoch);
        assert.equal(info.driver, "laptop");
        assert.deepEqual((await call(w, "GET", `/sessions/kept/blobs/${hash}`)).body, bytes);
        // The driver goes on under its epoch after the restart.
        assert.deepEqual((await call(w, "POST", "/sessions/kept/push", { epoch, batch: await store.outbox.read(0, 10) })).body, { acked: 4, head: 4 });
        assert.deepEqual((await call(w, "GET", "/sessions/kept/pull?after=0")).body, await store.outbox.read(0, 10));
        assert.equal(await take(w, "kept", "phone"), epoch + 1);
      } finally {
        await w.dispose();
      }
      w = await startRelay(persist);
      try {
        assertError(await call(w, "POST", "/sessions/kept/push", { epoch, batch: await store.outbox.read(0, 10) }), 409, "fenced");
        assert.equal((await call(w, "GET", "/sessions/kept")).body.driver, "phone");
      } finally {
        await w.dispose();
      }
    } finally {
      rmSync(persist, { recursive: true, force: true });
    }
  });
});
