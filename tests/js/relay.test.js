// The relay in Node (createRelay, in-process over the standard Request and
// Response), on memory replicas and on sqlite files: every protocol call of
// docs/formats.md ("The relay protocol"), the lease and its fencing, pushes
// that are duplicated, overlapping, ahead of the head or diverged, bodies
// that are malformed or too large (a 4xx with a code, nothing applied),
// blobs and their hashes, a push naming a blob the relay lacks, authorize,
// the download, and the relay's state surviving a reopen of its files.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";

import { createRelay, defineTable, int, openReplica, openStore, str } from "../../js/index.js";
import { isSha256Hex as isHex } from "../../js/relay.js";
import { rejectsWith, tempDir } from "./helpers.js";

const Files = defineTable("files", {
  version: 1,
  columns: { id: str(), path: str(), blob: str().optional(), n: int() },
  key: ["id"],
});

const sha = (bytes) => createHash("sha256").update(bytes).digest("hex");
const text = (s) => new TextEncoder().encode(s);
const origin = "http://relay.test";

/** One request to the relay: { status, body } (body parsed when JSON). */
async function call(relay, method, path, body, headers = {}) {
  const init = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body);
    if (!(body instanceof Uint8Array)) init.headers["content-type"] = "application/json";
  }
  const response = await relay.fetch(new Request(origin + path, init));
  const type = response.headers.get("content-type") ?? "";
  const out = type.includes("json") ? await response.json() : new Uint8Array(await response.arrayBuffer());
  return { status: response.status, body: out, headers: response.headers };
}

function assertError(answer, status, code, mentions = []) {
  assert.equal(answer.status, status, `expected ${status}, got ${answer.status}: ${JSON.stringify(answer.body)}`);
  assert.equal(answer.body?.error?.code, code, JSON.stringify(answer.body));
  for (const m of mentions) assert.ok(answer.body.error.message.includes(m), `${JSON.stringify(answer.body.error.message)} should mention ${m}`);
}

/** A driver's store with commits: 1 the table, 2..n+1 one put each. */
async function driverStore(n = 3, blobFor = () => null) {
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "app" });
  const files = owner.table(Files);
  for (let i = 0; i < n; i++) {
    await owner.tx(async (tx) => tx.put(files, { id: `f${i}`, path: `p/${i}`, blob: blobFor(i), n: i }));
  }
  return store;
}

const memoryRelay = (options = {}) => createRelay({ open: () => ({ backend: "memory" }), ...options });

async function take(relay, session, device = "d1") {
  const answer = await call(relay, "POST", `/sessions/${session}/lease`, { op: "take", device });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
}

describe("the relay's session and lease", () => {
  test("a take repeated with the same take id (a retry, a network's duplicate) keeps its epoch; another take bumps it; a bad take id is invalid/args", async () => {
    const relay = memoryRelay();
    const lease = (body) => call(relay, "POST", "/sessions/s1/lease", { op: "take", ...body });
    const first = (await lease({ device: "laptop", take: "t1" })).body;
    assert.equal(first.epoch, 1);
    assert.equal((await lease({ device: "laptop", take: "t1" })).body.epoch, 1, "the duplicate does not fence its own driver");
    assert.equal((await lease({ device: "phone", take: "t2" })).body.epoch, 2);
    assert.equal((await lease({ device: "laptop", take: "t1" })).body.epoch, 3, "an old take after a takeover is a new take");
    assert.equal((await lease({ device: "laptop" })).body.epoch, 4);
    assert.equal((await lease({ device: "laptop" })).body.epoch, 5, "a take without an id always bumps");
    assertError(await lease({ device: "d", take: 7 }), 400, "invalid/args", ["take", "7"]);
    assertError(await lease({ device: "d", take: "" }), 400, "invalid/args", ["take"]);
    await relay.close();
  });

  test("a new session has head 0, epoch 0 and no driver", async () => {
    const relay = memoryRelay();
    const answer = await call(relay, "GET", "/sessions/s1");
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { session: "s1", head: 0, epoch: 0, driver: null, expires: 0 });
    await relay.close();
  });

  test("a take bumps the epoch and fences the previous holder's heartbeat, release and push", async () => {
    let now = 1_000_000;
    const relay = memoryRelay({ now: () => now, leaseTtl: 5000 });
    const store = await driverStore(1);
    const a = await take(relay, "s1", "laptop");
    assert.deepEqual(a, { epoch: 1, head: 0, expires: 1_005_000 });
    assert.deepEqual((await call(relay, "GET", "/sessions/s1")).body, { session: "s1", head: 0, epoch: 1, driver: "laptop", expires: 1_005_000 });

    now += 1000;
    const hb = await call(relay, "POST", "/sessions/s1/lease", { op: "heartbeat", epoch: 1 });
    assert.deepEqual(hb.body, { epoch: 1, expires: 1_006_000 });

    const b = await take(relay, "s1", "phone");
    assert.equal(b.epoch, 2);
    assertError(await call(relay, "POST", "/sessions/s1/lease", { op: "heartbeat", epoch: 1 }), 409, "fenced", ["epoch 1", "epoch 2", "phone"]);
    assertError(await call(relay, "POST", "/sessions/s1/lease", { op: "release", epoch: 1 }), 409, "fenced");
    const fenced = await call(relay, "POST", "/sessions/s1/push", { epoch: 1, batch: await store.outbox.read(0, 10) });
    assertError(fenced, 409, "fenced");
    assert.equal(fenced.body.error.epoch, 2);
    assert.equal((await call(relay, "GET", "/sessions/s1")).body.head, 0);

    assert.deepEqual((await call(relay, "POST", "/sessions/s1/lease", { op: "release", epoch: 2 })).body, { released: true });
    assert.equal((await call(relay, "GET", "/sessions/s1")).body.driver, null);
    await relay.close();
  });

  test("an expired lease shows no driver, yet its epoch still pushes while nobody took it over", async () => {
    let now = 0;
    const relay = memoryRelay({ now: () => now, leaseTtl: 100 });
    const store = await driverStore(2);
    const { epoch } = await take(relay, "s1");
    now = 500;
    assert.equal((await call(relay, "GET", "/sessions/s1")).body.driver, null);
    const pushed = await call(relay, "POST", "/sessions/s1/push", { epoch, batch: await store.outbox.read(0, 10) });
    assert.deepEqual(pushed.body, { acked: 3, head: 3 });
    await relay.close();
  });

  test("refuses a push before any take, under a future epoch, and a lease call it does not know", async () => {
    const relay = memoryRelay();
    const store = await driverStore(1);
    const batch = await store.outbox.read(0, 10);
    assertError(await call(relay, "POST", "/sessions/s1/push", { epoch: 0, batch }), 409, "fenced", ["nobody took the lease"]);
    await take(relay, "s1");
    assertError(await call(relay, "POST", "/sessions/s1/push", { epoch: 7, batch }), 409, "fenced", ["epoch 7"]);
    assertError(await call(relay, "POST", "/sessions/s1/lease", { op: "steal", device: "x" }), 400, "invalid/args", ['"steal"']);
    assertError(await call(relay, "POST", "/sessions/s1/lease", { op: "take", device: "" }), 400, "invalid/args", ["device"]);
    assertError(await call(relay, "POST", "/sessions/s1/lease", { op: "heartbeat", epoch: "1" }), 400, "invalid/args", ["epoch"]);
    assert.equal((await call(relay, "GET", "/sessions/s1")).body.head, 0);
    await relay.close();
  });
});

describe("the relay's batches", () => {
  test("applies a pushed batch, acks it, and serves the driver's records back by pull", async () => {
    const relay = memoryRelay();
    const store = await driverStore(4);
    const { epoch } = await take(relay, "s1");
    const first = await store.outbox.read(0, 2);
    assert.deepEqual((await call(relay, "POST", "/sessions/s1/push", { epoch, batch: first })).body, { acked: 2, head: 2 });
    const rest = await store.outbox.read(2, 10);
    assert.deepEqual((await call(relay, "POST", "/sessions/s1/push", { epoch, batch: rest })).body, { acked: 5, head: 5 });

    const pulled = await call(relay, "GET", "/sessions/s1/pull?after=1&limit=3");
    assert.equal(pulled.status, 200);
    assert.deepEqual(pulled.body, await store.outbox.read(1, 3));
    const none = await call(relay, "GET", "/sessions/s1/pull?after=5");
    assert.deepEqual(none.body, { from: 5, to: 5, commits: [] });

    // A replica built from the pulls holds what the driver holds.
    const copy = await openReplica({ backend: "memory" });
    await copy.applyBatch((await call(relay, "GET", "/sessions/s1/pull?after=0&limit=1000")).body);
    assert.equal(await copy.fingerprint(), await store.fingerprint());
    assertError(await call(relay, "GET", "/sessions/s1/pull?after=-1"), 400, "invalid/args", ["after"]);
    assertError(await call(relay, "GET", "/sessions/s1/pull?limit=5000"), 400, "invalid/args", ["limit"]);
    await relay.close();
  });

  test("acks a duplicate push without applying it again, and applies only the new part of an overlapping one", async () => {
    const relay = memoryRelay();
    const store = await driverStore(4);
    const { epoch } = await take(relay, "s1");
    const batch = await store.outbox.read(0, 3);
    await call(relay, "POST", "/sessions/s1/push", { epoch, batch });
    assert.deepEqual((await call(relay, "POST", "/sessions/s1/push", { epoch, batch })).body, { acked: 3, head: 3 });
    const overlap = await store.outbox.read(1, 10);
    assert.deepEqual((await call(relay, "POST", "/sessions/s1/push", { epoch, batch: overlap })).body, { acked: 5, head: 5 });
    const all = (await call(relay, "GET", "/sessions/s1/pull?after=0")).body;
    assert.deepEqual(all.commits.map((c) => c.seq), [1, 2, 3, 4, 5]);
    await relay.close();
  });

  test("refuses a batch that starts after its head with sync/gap and its head, applying nothing", async () => {
    const relay = memoryRelay();
    const store = await driverStore(4);
    const { epoch } = await take(relay, "s1");
    await call(relay, "POST", "/sessions/s1/push", { epoch, batch: await store.outbox.read(0, 2) });
    const gap = await call(relay, "POST", "/sessions/s1/push", { epoch, batch: await store.outbox.read(3, 10) });
    assertError(gap, 409, "sync/gap", ["seq 3", "head 2"]);
    assert.equal(gap.body.error.head, 2);
    assert.equal((await call(relay, "GET", "/sessions/s1")).body.head, 2);
    await relay.close();
  });

  test("refuses a batch whose recorded count differs with sync/diverged, and every later batch", async () => {
    const relay = memoryRelay();
    const store = await driverStore(2);
    const { epoch } = await take(relay, "s1");
    const batch = await store.outbox.read(0, 10);
    // A delete of the row just put (f0), recorded as having found none.
    const put = batch.commits[1].ops[0];
    batch.commits[1].ops.push({ op: "delete", table: put.table, key: [put.row.id], count: 0 });
    assertError(await call(relay, "POST", "/sessions/s1/push", { epoch, batch }), 409, "sync/diverged");
    const info = (await call(relay, "GET", "/sessions/s1")).body;
    assert.equal(info.head, 0);
    assert.ok(info.diverged.includes("seq 2"), info.diverged);
    assertError(await call(relay, "POST", "/sessions/s1/push", { epoch, batch: await store.outbox.read(0, 10) }), 409, "sync/diverged");
    await relay.close();
  });

  test("refuses malformed and oversized bodies with a 4xx and a code, applying nothing", async () => {
    const relay = memoryRelay({ maxBody: 2048 });
    const store = await driverStore(30);
    const { epoch } = await take(relay, "s1");
    const good = await store.outbox.read(0, 2);
    const push = (body) => call(relay, "POST", "/sessions/s1/push", body);
    assertError(await push("{not json"), 400, "invalid/args", ["not JSON"]);
    assertError(await push("[1,2]"), 400, "invalid/args", ["JSON object"]);
    assertError(await push(new Uint8Array([0x7b, 0xff, 0x7d])), 400, "invalid/args", ["UTF-8"]);
    assertError(await push({ epoch }), 400, "invalid/args", ["batch"]);
    assertError(await push({ epoch, batch: { from: 0, to: "2", commits: [] } }), 400, "invalid/args", ["from"]);
    assertError(await push({ epoch, batch: { ...good, commits: good.commits.slice(0, 1) } }), 400, "invalid/args");
    assertError(await push({ epoch, batch: { ...good, commits: [good.commits[0], { ...good.commits[1], seq: 9 }] } }), 400, "invalid/args");
    // A value nested 20,000 deep: it overflowed the stack of the relay's
    // blob search, answered 500 storage_failed.
    const roomy = memoryRelay();
    const roomyEpoch = (await take(roomy, "s1")).epoch;
    const deep = `{"epoch":${roomyEpoch},"batch":{"from":0,"to":1,"commits":[{"seq":1,"from":0,"at":1,"owner":"o","ops":[{"op":"put","table":"o/t","row":{"v":${"[".repeat(20000)}${"]".repeat(20000)}}}]}]}}`;
    assertError(await call(roomy, "POST", "/sessions/s1/push", deep), 400, "invalid/args", ["1000 levels"]);
    await roomy.close();
    const big = await store.outbox.read(0, 31);
    assert.ok(JSON.stringify({ epoch, batch: big }).length > 2048);
    assertError(await push({ epoch, batch: big }), 413, "limit", ["2048"]);
    // A body that streams in above the limit without saying its length.
    const chunks = [text('{"epoch":1,"batch":'), text(" ".repeat(4000)), text("}")];
    const stream = new ReadableStream({ pull(c) { const next = chunks.shift(); if (next) c.enqueue(next); else c.close(); } });
    const streamed = await relay.fetch(new Request(`${origin}/sessions/s1/push`, { method: "POST", body: stream, duplex: "half" }));
    assert.equal(streamed.status, 413);
    assert.equal((await streamed.json()).error.code, "limit");
    assert.equal((await call(relay, "GET", "/sessions/s1")).body.head, 0);
    await relay.close();
  });

  test("answers unknown paths with 404, a wrong method with 405, and a bad session id with 400", async () => {
    const relay = memoryRelay();
    assertError(await call(relay, "GET", "/elsewhere"), 404, "not_found");
    assertError(await call(relay, "GET", "/sessions/s1/nothing"), 404, "not_found", ["nothing"]);
    assertError(await call(relay, "GET", "/sessions/s1/push"), 405, "invalid/args", ["POST"]);
    assertError(await call(relay, "DELETE", "/sessions/s1"), 405, "invalid/args", ["GET"]);
    assertError(await call(relay, "GET", "/sessions/..%2Fetc"), 400, "invalid/args", ["session id"]);
    assertError(await call(relay, "GET", "/sessions/s1/blobs/XYZ"), 400, "invalid/args", ["64 lowercase hex"]);
    // A 405 names the methods the path takes (RFC 9110's Allow header).
    assert.equal((await call(relay, "GET", "/sessions/s1/push")).headers.get("allow"), "POST");
    assert.equal((await call(relay, "DELETE", "/sessions/s1")).headers.get("allow"), "GET, HEAD");
    await relay.close();
  });

  test("answers a HEAD wherever it takes a GET, as the GET with no body; a HEAD's error has its status and no body", async () => {
    const relay = memoryRelay();
    const store = await driverStore(2);
    const { epoch } = await take(relay, "s1");
    const pushed = await call(relay, "POST", "/sessions/s1/push", { epoch, batch: await store.outbox.read(0, 100) });
    assert.equal(pushed.status, 200, JSON.stringify(pushed.body));
    for (const path of ["/sessions/s1", "/sessions/s1/pull?after=0", "/sessions/s1/download", "/sessions/s1/blobs"]) {
      const get = await relay.fetch(new Request(origin + path));
      const head = await relay.fetch(new Request(origin + path, { method: "HEAD" }));
      assert.equal(get.status, 200, path);
      assert.ok((await get.arrayBuffer()).byteLength > 0, path);
      assert.equal(head.status, 200, path);
      assert.equal(head.body, null, path);
      assert.equal(head.headers.get("content-type"), get.headers.get("content-type"), path);
    }
    const missing = await relay.fetch(new Request(`${origin}/sessions/s1/nothing`, { method: "HEAD" }));
    assert.equal(missing.status, 404);
    assert.equal(missing.body, null);
    const postOnly = await relay.fetch(new Request(`${origin}/sessions/s1/lease`, { method: "HEAD" }));
    assert.equal(postOnly.status, 405);
    assert.equal(postOnly.headers.get("allow"), "POST");
    await store.close();
    await relay.close();
  });
});

describe("the relay's blobs", () => {
  test("stores a blob under its hash (201, then 200), serves it, and refuses bytes with another hash", async () => {
    const relay = memoryRelay();
    const bytes = text("hello, relay");
    const hash = sha(bytes);
    const put = await call(relay, "PUT", `/sessions/s1/blobs/${hash}`, bytes);
    assert.equal(put.status, 201);
    assert.deepEqual(put.body, { hash, size: bytes.byteLength });
    assert.equal((await call(relay, "PUT", `/sessions/s1/blobs/${hash}`, bytes)).status, 200);
    const got = await call(relay, "GET", `/sessions/s1/blobs/${hash}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, bytes);
    assert.equal((await call(relay, "HEAD", `/sessions/s1/blobs/${hash}`)).status, 200);

    const other = sha(text("other"));
    assertError(await call(relay, "PUT", `/sessions/s1/blobs/${other}`, bytes), 400, "invalid/args", [other, hash]);
    assert.equal((await call(relay, "HEAD", `/sessions/s1/blobs/${other}`)).status, 404);
    assertError(await call(relay, "GET", `/sessions/s1/blobs/${other}`), 404, "not_found", [other]);
    assert.deepEqual((await call(relay, "GET", "/sessions/s1/blobs")).body, { hashes: [hash] });
    await relay.close();
  });

  test("refuses a push whose commit names a blob it lacks with not_found and the hash, then takes it once the blob is there", async () => {
    const relay = memoryRelay();
    const bytes = text("file body");
    const hash = sha(bytes);
    const store = await driverStore(2, (i) => (i === 1 ? hash : null));
    await store.blobs.put(bytes);
    const { epoch } = await take(relay, "s1");
    const batch = await store.outbox.read(0, 10);
    const missing = await call(relay, "POST", "/sessions/s1/push", { epoch, batch });
    assertError(missing, 409, "not_found", [hash]);
    assert.equal(missing.body.error.hash, hash);
    assert.equal((await call(relay, "GET", "/sessions/s1")).body.head, 0);

    assert.equal((await call(relay, "PUT", `/sessions/s1/blobs/${hash}`, bytes)).status, 201);
    assert.deepEqual((await call(relay, "POST", "/sessions/s1/push", { epoch, batch })).body, { acked: 3, head: 3 });
    await relay.close();
  });

  test("checks no blobs when isBlobName is false", async () => {
    const relay = memoryRelay({ isBlobName: false });
    const store = await driverStore(1, () => sha(text("never uploaded")));
    const { epoch } = await take(relay, "s1");
    assert.equal((await call(relay, "POST", "/sessions/s1/push", { epoch, batch: await store.outbox.read(0, 10) })).status, 200);
    await relay.close();
  });

  test("refuses a blob above maxBlob with 413 limit", async () => {
    const relay = memoryRelay({ maxBlob: 16 });
    const bytes = text("seventeen bytes!!");
    assertError(await call(relay, "PUT", `/sessions/s1/blobs/${sha(bytes)}`, bytes), 413, "limit", ["16"]);
    assert.equal((await call(relay, "HEAD", `/sessions/s1/blobs/${sha(bytes)}`)).status, 404);
    await relay.close();
  });
});

describe("the relay's download and access", () => {
  test("downloads the whole session at its head: every record and every blob's hash", async () => {
    const relay = memoryRelay();
    const bytes = text("attached");
    const hash = sha(bytes);
    const store = await driverStore(3, (i) => (i === 0 ? hash : null));
    await store.blobs.put(bytes);
    const { epoch } = await take(relay, "s1");
    await call(relay, "PUT", `/sessions/s1/blobs/${hash}`, bytes);
    await call(relay, "POST", "/sessions/s1/push", { epoch, batch: await store.outbox.read(0, 10) });
    const down = await call(relay, "GET", "/sessions/s1/download");
    assert.equal(down.status, 200);
    assert.equal(down.body.format, 1);
    assert.equal(down.body.session, "s1");
    assert.equal(down.body.head, 4);
    assert.deepEqual(down.body.blobs, [hash]);
    assert.deepEqual(down.body.batch, await store.outbox.read(0, 10));
    const copy = await openReplica({ backend: "memory" });
    await copy.applyBatch(down.body.batch);
    // The fingerprint covers blobs: equal only once the copy has the blob the download names.
    assert.notEqual(await copy.fingerprint(), await store.fingerprint());
    const blob = await call(relay, "GET", `/sessions/s1/blobs/${hash}`);
    await copy.blobs.putWithHash(hash, blob.body);
    assert.equal(await copy.fingerprint(), await store.fingerprint());
    await relay.close();
  });

  test("asks authorize for read or drive access with the bearer token: 401 without one, 403 with one it refuses", async () => {
    const asked = [];
    const relay = memoryRelay({
      authorize: async ({ session, access, token, request }) => {
        assert.ok(request instanceof Request);
        asked.push(`${session}:${access}:${token}`);
        return token === "rw" || (token === "ro" && access === "read");
      },
    });
    const anonymous = await call(relay, "GET", "/sessions/s1");
    assertError(anonymous, 401, "unauthorized", ["token"]);
    assert.equal(anonymous.headers.get("www-authenticate"), "Bearer");
    assert.equal((await call(relay, "GET", "/sessions/s1", undefined, { authorization: "Bearer ro" })).status, 200);
    assertError(await call(relay, "POST", "/sessions/s1/lease", { op: "take", device: "d" }, { authorization: "Bearer ro" }), 403, "unauthorized", ["drive"]);
    assertError(await call(relay, "PUT", `/sessions/s1/blobs/${sha(text("x"))}`, text("x"), { authorization: "Bearer ro" }), 403, "unauthorized");
    assert.equal((await call(relay, "POST", "/sessions/s1/lease", { op: "take", device: "d" }, { authorization: "Bearer rw" })).status, 200);
    assert.deepEqual(asked, ["s1:read:undefined", "s1:read:ro", "s1:drive:ro", "s1:drive:ro", "s1:drive:rw"]);
    assert.equal((await call(relay, "GET", "/sessions/s1", undefined, { authorization: "Bearer ro" })).body.epoch, 1);
    await relay.close();
  });

  test("answers a CORS preflight and marks answers for any origin unless cors is false", async () => {
    const relay = memoryRelay();
    const pre = await relay.fetch(new Request(`${origin}/sessions/s1/push`, { method: "OPTIONS" }));
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get("access-control-allow-origin"), "*");
    assert.match(pre.headers.get("access-control-allow-headers"), /authorization/);
    assert.equal((await call(relay, "GET", "/sessions/s1")).headers.get("access-control-allow-origin"), "*");
    const closed = memoryRelay({ cors: false });
    assert.equal((await call(closed, "GET", "/sessions/s1")).headers.get("access-control-allow-origin"), null);
    await relay.close();
    await closed.close();
  });

  test("refuses options it cannot use with invalid/args", () => {
    assert.throws(() => createRelay(), (e) => e.code === "invalid/args" && e.message.includes("open"));
    assert.throws(() => createRelay({ open: "x" }), (e) => e.code === "invalid/args" && e.message.includes("open"));
    assert.throws(() => createRelay({ open: () => ({}), maxBody: 0 }), (e) => e.code === "invalid/args" && e.message.includes("maxBody"));
    assert.throws(() => createRelay({ open: () => ({}), isBlobName: true }), (e) => e.code === "invalid/args" && e.message.includes("isBlobName"));
    // An origin no header can hold: before, it was taken, and then every
    // relay.fetch rejected with a raw TypeError.
    for (const cors of ["a\nb", "a\u0000b", "a\uD800b", "", 5]) {
      assert.throws(() => createRelay({ open: () => ({}), cors }), (e) => e.code === "invalid/args" && e.message.includes("cors"), JSON.stringify(cors));
    }
  });

  test("relay.fetch never rejects: what is not a Request gets an error answer", async () => {
    const relay = memoryRelay({ cors: "https://app.example" });
    for (const request of [undefined, null, 42, {}]) {
      const res = await relay.fetch(request);
      assert.ok(res.status >= 400, `${String(request)}: ${res.status}`);
    }
    assert.equal((await call(relay, "GET", "/sessions/s1")).headers.get("access-control-allow-origin"), "https://app.example");
    await relay.close();
  });
});

describe("the relay on sqlite files", () => {
  test("keeps its lease, batches, head and blobs across a restart (a new relay on the same files)", async () => {
    const dir = tempDir("onestore-relay-");
    const open = (session) => ({ backend: "sqlite", path: join(dir, `${session}.sqlite`) });
    const bytes = text("kept");
    const hash = sha(bytes);
    const store = await driverStore(3, (i) => (i === 2 ? hash : null));
    await store.blobs.put(bytes);

    // An hour's lease: the restart below cannot outlast it, however slow.
    const relay = createRelay({ open, leaseTtl: 3_600_000 });
    const { epoch } = await take(relay, "s1", "laptop");
    await call(relay, "PUT", `/sessions/s1/blobs/${hash}`, bytes);
    await call(relay, "POST", "/sessions/s1/push", { epoch, batch: await store.outbox.read(0, 3) });
    await relay.close();
    assertError(await call(relay, "GET", "/sessions/s1"), 503, "closed");

    const again = createRelay({ open, leaseTtl: 3_600_000 });
    const info = (await call(again, "GET", "/sessions/s1")).body;
    assert.equal(info.head, 3);
    assert.equal(info.epoch, 1);
    assert.equal(info.driver, "laptop");
    assert.deepEqual((await call(again, "GET", `/sessions/s1/blobs/${hash}`)).body, bytes);
    // The same driver goes on under its epoch; a stale one stays fenced after a take.
    assert.deepEqual((await call(again, "POST", "/sessions/s1/push", { epoch, batch: await store.outbox.read(3, 10) })).body, { acked: 4, head: 4 });
    assert.equal((await take(again, "s1", "phone")).epoch, 2);
    await again.close();
    const third = createRelay({ open });
    assertError(await call(third, "POST", "/sessions/s1/lease", { op: "heartbeat", epoch: 1 }), 409, "fenced");
    assert.deepEqual((await call(third, "GET", "/sessions/s1/pull?after=0")).body, await store.outbox.read(0, 10));
    await third.close();
  });

  test("fences a push whose lease was taken over while it checked its blobs: no push lands under a superseded epoch", async () => {
    const dir = tempDir("onestore-relay-race-");
    let takeover = null;
    let relay;
    const takeNow = () => {
      takeover ??= call(relay, "POST", "/sessions/race/lease", { op: "take", device: "phone" });
      return true;
    };
    // The blob check of the push starts the takeover (its blobs on files: each
    // check is a real file system call, so the take lands between them).
    relay = createRelay({ open: (id) => ({ backend: "sqlite", path: join(dir, `${id}.sqlite`) }), isBlobName: (v) => isHex(v) && takeNow() });
    const blobs = [];
    for (let i = 0; i < 50; i++) blobs.push(text(`blob ${i}`));
    const store = await driverStore(50, (i) => sha(blobs[i]));
    for (const b of blobs) await store.blobs.put(b);
    const { epoch } = await take(relay, "race", "laptop");
    for (const b of blobs) assert.equal((await call(relay, "PUT", `/sessions/race/blobs/${sha(b)}`, b)).status, 201);
    const pushed = await call(relay, "POST", "/sessions/race/push", { epoch, batch: await store.outbox.read(0, 100) });
    const taken = await takeover;
    assert.equal(taken.status, 200);
    assert.equal(taken.body.epoch, epoch + 1);
    // Linearizable either way: a push acked before the take shows in the
    // take's head; a push after it is fenced and applied nothing.
    if (pushed.status === 200) {
      assert.equal(taken.body.head, 51);
    } else {
      assertError(pushed, 409, "fenced");
      assert.equal(taken.body.head, 0);
      assert.equal((await call(relay, "GET", "/sessions/race")).body.head, 0);
    }
    await relay.close();
  });

  // It used to open the session's replica after close() had resolved, and
  // left it open: its file locked, its lock file and WAL on disk.
  test("a request on its way when close() runs answers 503 closed and leaves no replica open", async () => {
    const dir = tempDir("onestore-relay-");
    const relay = createRelay({ open: (session) => ({ backend: "sqlite", path: join(dir, `${session}.sqlite`) }) });
    const taking = call(relay, "POST", "/sessions/s1/lease", { op: "take", device: "d" });
    await relay.close();
    assertError(await taking, 503, "closed");
    assert.deepEqual(readdirSync(dir), [], "no file opened after close()");
  });

  test("refuses a session whose storage holds another session", async () => {
    const path = join(tempDir("onestore-relay-"), "one.sqlite");
    const relay = createRelay({ open: () => ({ backend: "sqlite", path }) });
    assert.equal((await call(relay, "GET", "/sessions/first")).status, 200);
    await relay.close();
    const again = createRelay({ open: () => ({ backend: "sqlite", path }) });
    assertError(await call(again, "GET", "/sessions/second"), 400, "invalid/args", ['"second"', '"first"']);
    assert.equal((await call(again, "GET", "/sessions/first")).body.session, "first");
    await again.close();
  });

  // Opening the refused session's storage took the file over from the open
  // replica of the first, which then answered every request with 409
  // fenced, for good: its driver took that for the lease's fence and split
  // off. Now the first answers 503 once (a relay briefly away, which a
  // driver retries) and takes its file back on the next request.
  test("a session whose file another session's open took over answers 503 once, then goes on: its driver keeps the session", async () => {
    const path = join(tempDir("onestore-relay-"), "shared.sqlite");
    const relay = createRelay({ open: () => ({ backend: "sqlite", path }) });
    const { epoch } = await take(relay, "first", "laptop");
    const store = await driverStore(3);
    assert.equal((await call(relay, "POST", "/sessions/first/push", { epoch, batch: await store.outbox.read(0, 2) })).status, 200);
    assertError(await call(relay, "GET", "/sessions/second"), 400, "invalid/args", ['"second"', '"first"']);
    assertError(await call(relay, "POST", "/sessions/first/lease", { op: "heartbeat", epoch }), 503, "closed", ["taken over", "opened again"]);
    const heartbeat = await call(relay, "POST", "/sessions/first/lease", { op: "heartbeat", epoch });
    assert.equal(heartbeat.status, 200, JSON.stringify(heartbeat.body));
    assert.equal((await call(relay, "POST", "/sessions/first/push", { epoch, batch: await store.outbox.read(2, 10) })).status, 200);
    const info = (await call(relay, "GET", "/sessions/first")).body;
    assert.equal(info.head, store.head);
    assert.equal(info.epoch, epoch);
    await store.close();
    await relay.close();
  });
});

describe("a replica's host notes", () => {
  test("are kept in its storage across a reopen, and refuse a bad name", async () => {
    const path = join(tempDir("onestore-notes-"), "r.sqlite");
    const replica = await openReplica({ backend: "sqlite", path });
    assert.equal(replica.hostNotes.get("relay.lease"), undefined);
    replica.hostNotes.set("relay.lease", '{"epoch":3}');
    await replica.close();
    const again = await openReplica({ backend: "sqlite", path });
    assert.equal(again.hostNotes.get("relay.lease"), '{"epoch":3}');
    assert.throws(() => again.hostNotes.set("Bad Name", "x"), (e) => e.code === "invalid/args" && e.message.includes("Bad Name"));
    assert.throws(() => again.hostNotes.set("ok", 5), (e) => e.code === "invalid/args");
    // A lone surrogate becomes U+FFFD, as in a str column; before, the
    // crossing glued it to the next character ("a\u{10062}": the b lost).
    again.hostNotes.set("lone", "a\uD800b");
    assert.equal(again.hostNotes.get("lone"), "a\uFFFDb");
    await again.close();
    await rejectsWith(async () => again.hostNotes.get("relay.lease"), "closed");
  });
});
