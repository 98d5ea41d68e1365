// The sync driver and pullSession in Node against the relay in process
// (createRelay on memory replicas, read through its protocol): a store drives a
// session (batches in flight, the outbox trimmed only up to what was
// acknowledged, blobs before the batch naming them), a second device pulls
// the session and continues it while the first splits off with its origin
// and syncs to a new relay session, a fault-injecting fetch that drops,
// delays and duplicates requests and responses, and a power loss after
// upload (the driver pulls its own batches back; its seqs never fork).

import assert from "node:assert/strict";
import { copyFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";

import { defineTable, followRelay, int, json, openReplica, openStore, pullSession, startSync, str } from "../../js/index.js";
import { rejectsWith, tempDir } from "./helpers.js";
import { faultyFetch, memoryRelay, origin as base, relayFingerprint, relayHasBlob, relayInfo, relayRecords } from "./sync-helpers.js";

const Items = defineTable("items", { version: 1, columns: { id: int(), text: str(), file: str({ default: "" }) }, key: ["id"] });

let dir;
const filePath = (name) => join((dir ??= tempDir("onestore-sync-")), name);

async function put(store, rows) {
  const notes = store.object({ type: "notes" });
  const items = notes.table(Items);
  await notes.tx(async (tx) => {
    for (const r of rows) await tx.put(items, r);
  });
}


describe("startSync", () => {
  // The push body wraps a batch one level down, and a pull's answer was
  // encoded with a json value's own limit: a value nested 994 to 997 levels
  // (which a put takes) stopped the sync with invalid/args, and a relay
  // that held one answered every pull and download with 400.
  test("a json value nested as deep as a put takes (997 levels) syncs, and the relay serves it back to pullSession and followRelay", { timeout: 20000 }, async () => {
    const relay = memoryRelay();
    const fetch = (request) => relay.fetch(request);
    const Deep = defineTable("deep", { columns: { id: int(), j: json().optional() }, key: ["id"] });
    let value = 1;
    for (let i = 0; i < 997; i++) value = [value];
    const store = await openStore({ backend: "memory" });
    const owner = store.object({ type: "app" });
    const deep = owner.table(Deep);
    await owner.tx(async (tx) => { await tx.put(deep, { id: 1, j: value }); });
    await owner.tx(async (tx) => { await tx.put(deep, { id: 2, j: "after" }); });
    const sync = startSync(store, { relay: base, fetch });
    assert.equal(await sync.settled(), store.head);
    assert.equal(await relayFingerprint(relay, store.id), await store.fingerprint());
    const pulled = await pullSession({ relay: `${base}/sessions/${store.id}`, fetch }, { backend: "memory" });
    assert.deepEqual(await pulled.object({ type: "app" }).table(Deep).get(1), { id: 1, j: value });
    const replica = await openReplica({ backend: "memory" });
    await followRelay({ relay: base, replica, session: store.id, fetch }).sync();
    assert.equal(replica.head, store.head);
    assert.deepEqual(await replica.table("app/deep").get([1]), { id: 1, j: value });
    await sync.stop();
    for (const s of [pulled, replica, store]) await s.close();
    await relay.close();
  });

  test("a relay that lost the session (its storage reset: lease and head back to 0) stops the sync with sync/gap, not a split-off as if another device took over", { timeout: 20000 }, async () => {
    let relay = memoryRelay();
    const fetch = (request) => relay.fetch(request);
    const store = await openStore({ backend: "memory" });
    const id = store.id;
    await put(store, [{ id: 1, text: "a" }]);
    const sync = startSync(store, { relay: base, fetch });
    assert.equal(await sync.settled(), 2);
    await relay.close();
    relay = memoryRelay();  // the same relay, its storage gone
    await put(store, [{ id: 2, text: "b" }]);
    await rejectsWith(sync.settled(), "sync/gap", ["epoch 1 to 0", "lost the session"]);
    assert.notEqual(sync.state, "lost");
    assert.equal(store.id, id, "the store keeps its session");
    await store.close();
  });

  test("a lease take that the network delivers twice does not fence the driver that sent it", { timeout: 20000 }, async () => {
    const relay = memoryRelay();
    const fetch = async (request) => {
      if (request.url.endsWith("/lease")) {
        const copy = request.clone();
        const body = await request.clone().json();
        const answer = await relay.fetch(request);
        // The copy lands 5 ms later, its answer lost.
        if (body.op === "take") await new Promise((r) => setTimeout(r, 5)).then(() => relay.fetch(copy));
        return answer;
      }
      return relay.fetch(request);
    };
    const store = await openStore({ backend: "memory" });
    const id = store.id;
    await put(store, [{ id: 1, text: "a" }]);
    const sync = startSync(store, { relay: base, fetch });
    const states = [];
    sync.on("state", (s) => states.push(s));
    assert.equal(await sync.settled(), 2);
    await put(store, [{ id: 2, text: "b" }]);
    assert.equal(await sync.settled(), 3);
    assert.equal(store.id, id, "the store did not split off");
    assert.ok(!states.includes("lost"), states.join());
    assert.equal(await relayFingerprint(relay, id), await store.fingerprint());
    await sync.stop();
    await store.close();
  });

  test("a commit naming a blob the store does not hold (a string of a blob's shape) stops the sync with not_found naming it, after one upload try, not a loop of pushes", { timeout: 20000 }, async () => {
    const relay = memoryRelay();
    let pushes = 0;
    const fetch = (request) => {
      if (request.url.endsWith("/push")) pushes++;
      return relay.fetch(request);
    };
    const store = await openStore({ backend: "memory" });
    const sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";  // of "test": no blob of this store
    await put(store, [{ id: 1, text: "a file's digest", file: sha }]);
    const sync = startSync(store, { relay: base, fetch });
    await rejectsWith(sync.settled(), "not_found", [sha, "does not hold", "isBlobName"]);
    assert.ok(pushes <= 2, `pushes: ${pushes}`);
    await store.close();
  });

  test("drives a session: every commit reaches the relay, the outbox is trimmed only up to what was acknowledged, and new commits wake it", async () => {
    const relay = memoryRelay();
    const pushes = [];
    const fetch = async (request) => {
      const body = request.url.endsWith("/push") ? await request.clone().json() : null;
      const response = await relay.fetch(request);
      if (body && response.ok) pushes.push([body.batch.from, body.batch.to]);
      return response;
    };
    const store = await openStore({ backend: "memory" });
    for (let i = 0; i < 10; i++) await put(store, [{ id: i, text: `row ${i}` }]);
    const sync = startSync(store, { relay: base, fetch, parallel: 3, batch: 2 });
    assert.equal(sync.state, "connecting");
    // Seq 1 is the table's record, then one commit per put.
    assert.equal(await sync.settled(), 11);
    assert.equal(sync.state, "driving");
    assert.equal(sync.acked, 11);
    assert.equal((await relayInfo(relay, store.id)).head, 11);
    assert.equal(await relayFingerprint(relay, store.id), await store.fingerprint());
    assert.deepEqual((await store.outbox.read(0, 100)).commits, []);
    // Batches of two: six pushes, each applied once.
    assert.deepEqual(pushes.sort((x, y) => x[0] - y[0]), [[0, 2], [2, 4], [4, 6], [6, 8], [8, 10], [10, 11]]);
    // A commit after settling wakes the driver.
    await put(store, [{ id: 99, text: "later" }]);
    assert.equal(await sync.settled(), 12);
    assert.equal((await relayInfo(relay, store.id)).head, 12);
    await sync.stop();
    assert.equal((await relayInfo(relay, store.id)).driver, null, "stop released the lease");
    await store.close();
  });

  test("a gap answer that arrives after a later acknowledgement is a batch still in flight, not a relay that lost data", async () => {
    // Two batches in flight: the relay answers the second (seq 1..2) with a
    // gap at head 1 before the first lands; that answer is held back until
    // the first batch has landed and been acknowledged (acked = 1), as a slow
    // network can deliver it. The driver must resubmit, not fail.
    const relay = memoryRelay();
    let sync;
    let releaseFirst;
    const firstMayGo = new Promise((resolve) => { releaseFirst = resolve; });
    let staleDelivered = false;
    const fetch = async (request) => {
      if (!request.url.endsWith("/push")) return relay.fetch(request);
      const { batch } = await request.clone().json();
      if (batch.from === 0) {
        await firstMayGo;
        return relay.fetch(request);
      }
      const response = await relay.fetch(request);
      if (batch.from === 1 && !staleDelivered) {
        staleDelivered = true;
        assert.equal(response.status, 409, "the second batch found a gap");
        releaseFirst();
        while (sync.acked < 1) await new Promise((r) => setTimeout(r, 1));
      }
      return response;
    };
    const store = await openStore({ backend: "memory" });
    await put(store, [{ id: 1, text: "one" }]);
    await put(store, [{ id: 2, text: "two" }]);
    sync = startSync(store, { relay: base, fetch, parallel: 2, batch: 1 });
    assert.equal(await sync.settled(), 3);
    assert.ok(staleDelivered, "the late gap answer was delivered after the first acknowledgement");
    assert.equal(sync.error, null);
    assert.equal(sync.state, "driving");
    assert.equal((await relayInfo(relay, store.id)).head, 3);
    assert.equal(await relayFingerprint(relay, store.id), await store.fingerprint());
    await sync.stop();
    await store.close();
  });

  test("uploads every blob before the batch that could name it", async () => {
    const relay = memoryRelay();
    const order = [];
    const fetch = (url) => {
      order.push(`${url.method} ${new URL(url.url).pathname.replace(/^\/sessions\/[^/]+/, "")}`);
      return relay.fetch(url);
    };
    const store = await openStore({ backend: "memory" });
    const hash = await store.blobs.put(new TextEncoder().encode("attachment"));
    await put(store, [{ id: 1, text: "with a file", file: hash }]);
    const sync = startSync(store, { relay: base, fetch });
    await sync.settled();
    const firstPush = order.indexOf("POST /push");
    const blobPut = order.indexOf(`PUT /blobs/${hash}`);
    assert.ok(blobPut >= 0 && blobPut < firstPush, order.join(", "));
    assert.ok(await relayHasBlob(relay, store.id, hash));
    await sync.stop();
    await store.close();
  });

  test("splits a batch the relay finds too large (413 limit) and fails on one commit that is", async () => {
    const relay = memoryRelay({ maxBody: 4096 });
    const store = await openStore({ backend: "memory" });
    for (let i = 0; i < 12; i++) await put(store, [{ id: i, text: "x".repeat(900) }]);
    const sync = startSync(store, { relay: base, fetch: relay.fetch, batch: 12 });
    assert.equal(await sync.settled(), 13);
    assert.equal(await relayFingerprint(relay, store.id), await store.fingerprint());
    await put(store, [{ id: 99, text: "y".repeat(5000) }]);
    await rejectsWith(sync.settled(), "limit", ["413"]);
    assert.equal(sync.error.code, "limit");
    assert.equal(sync.state, "offline");
    await sync.stop();
    await store.close();
  });

  test("refuses bad options with invalid/args naming the value", { timeout: 20000 }, async () => {
    const store = await openStore({ backend: "memory" });
    assert.throws(() => startSync(store, { relay: 42 }), (e) => e.code === "invalid/args" && /42/.test(e.message));
    assert.throws(() => startSync(store, { relay: "not a url" }), (e) => e.code === "invalid/args" && /not a url/.test(e.message));
    assert.throws(() => startSync(store, { relay: base, parallel: 0 }), (e) => e.code === "invalid/args" && /parallel/.test(e.message));
    assert.throws(() => startSync(store, { relay: base, fetch: "no" }), (e) => e.code === "invalid/args" && /fetch/.test(e.message));
    assert.throws(() => startSync({}, { relay: base }), (e) => e.code === "invalid/args");
    await rejectsWith(pullSession({ relay: base }, { backend: "memory" }), "invalid/args", ["sessions"]);
    assert.throws(() => startSync(store, { relay: base, paralel: 2 }), (e) => e.code === "invalid/args" && /unknown option "paralel"/.test(e.message));
    assert.throws(() => startSync(store, { relay: base, timeout: 0 }), (e) => e.code === "invalid/args" && /timeout/.test(e.message));
    // A relay whose answers are not the protocol's: a StoreError, not a TypeError.
    const answering = (body) => async () => new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
    await rejectsWith(pullSession({ relay: `${base}/sessions/s1`, fetch: answering({ head: "abc" }) }, { backend: "memory" }), "invalid/args", ["head"]);
    await rejectsWith(pullSession({ relay: `${base}/sessions/s1`, fetch: async (r) => (r.url.includes("/blobs") ? answering({ nope: 1 })() : answering({ head: 3 })()) }, { backend: "memory" }), "invalid/args", ["hashes"]);
    // A blob list whose `next` does not go on: before, pullSession listed
    // for ever; a fetch that answers no Response: before, a TypeError; an
    // error body whose code is none of onestore's: before, a StoreError of
    // code 42 and the message "[object Object]".
    const hash = "a".repeat(64);
    await rejectsWith(pullSession({ relay: `${base}/sessions/s1`, fetch: async (r) => (r.url.includes("/blobs") ? answering({ hashes: [], next: hash })() : answering({ head: 0 })()) }, { backend: "memory" }), "invalid/args", ["does not go on", hash]);
    await rejectsWith(pullSession({ relay: `${base}/sessions/s1`, fetch: async () => undefined }, { backend: "memory" }), "storage_failed", ["not a Response"]);
    const odd = async () => new Response(JSON.stringify({ error: { code: 42, message: { a: 1 } } }), { status: 400, headers: { "content-type": "application/json" } });
    const err = await pullSession({ relay: `${base}/sessions/s1`, fetch: odd }, { backend: "memory" }).catch((e) => e);
    assert.equal(err.code, "invalid/args");
    assert.doesNotMatch(err.message, /object Object/);
    // A proxy's page for a 502: the server failed (before, invalid/args).
    const proxy = async () => new Response("<html>Bad gateway</html>", { status: 502, headers: { "content-type": "text/html" } });
    await rejectsWith(pullSession({ relay: `${base}/sessions/s1`, fetch: proxy }, { backend: "memory" }), "storage_failed", ["502"]);
    const replica = await openReplica({ backend: "memory" });
    await rejectsWith(followRelay({ relay: base, replica, session: "s1", fetch: odd }).sync(), "storage_failed", ["400"]);
    await rejectsWith(followRelay({ relay: base, replica, session: "s1", fetch: async () => undefined }).sync(), "storage_failed", ["not a Response"]);
    await replica.close();
    await store.close();
  });

  // A relay that takes the request and never answers: before, the store's
  // commits waited for the first connection for good, and stop() and
  // close() never resolved.
  test("a relay that never answers: commits go on after the timeout, stop() and close() resolve", { timeout: 30000 }, async () => {
    for (const never of [() => new Promise(() => {}), (request) => new Promise((_, reject) => request.signal.addEventListener("abort", () => reject(request.signal.reason)))]) {
      const store = await openStore({ backend: "memory" });
      let calls = 0;
      const sync = startSync(store, { relay: base, timeout: 200, fetch: (request) => { calls++; return never(request); } });
      const t0 = Date.now();
      await put(store, [{ id: 1, text: "a" }]);
      assert.ok(Date.now() - t0 >= 150, "the commit waited for the first attempt");
      assert.equal(store.head, 2);
      assert.equal(sync.state, "offline");
      assert.ok(calls >= 1);
      const stopping = sync.stop();
      const result = await Promise.race([stopping.then(() => "stopped"), new Promise((r) => setTimeout(() => r("hung"), 2000))]);
      assert.equal(result, "stopped");
      const closed = await Promise.race([store.close().then(() => "closed"), new Promise((r) => setTimeout(() => r("hung"), 2000))]);
      assert.equal(closed, "closed");
    }
  });

  // A token function that throws (an auth provider down) used to end the
  // sync for good, with a TypeError as its error; now the calls are retried
  // as when the relay is out of reach, and each asks the function again.
  test("a token function that throws is retried as an unreachable relay; one that gives a number ends the sync with invalid/args", { timeout: 30000 }, async () => {
    const relay = memoryRelay();
    const seen = [];
    const fetch = (request) => { seen.push(request.headers.get("authorization")); return relay.fetch(request); };
    let asked = 0;
    const store = await openStore({ backend: "memory" });
    const states = [];
    const sync = startSync(store, {
      relay: base, fetch,
      token: async () => { if (++asked <= 2) throw new TypeError(`provider down (${asked})`); return "t0k"; },
    });
    sync.on("state", (s) => states.push(s));
    await put(store, [{ id: 1, text: "a" }]);
    assert.equal(await sync.settled(), 2);
    assert.equal(sync.error, null);
    assert.ok(asked > 2, `asked ${asked} times`);
    assert.ok(states.includes("offline") && states.at(-1) === "driving", states.join(" "));
    assert.ok(seen.length > 0 && seen.every((h) => h === "Bearer t0k"), seen.join(" "));
    assert.equal((await relayInfo(relay, store.id)).head, 2);
    await sync.stop();
    await store.close();

    const other = await openStore({ backend: "memory" });
    await put(other, [{ id: 1, text: "b" }]);
    const bad = startSync(other, { relay: base, fetch: relay.fetch, token: () => 42 });
    await rejectsWith(bad.settled(), "invalid/args", ["token function must return a string", "42"]);
    assert.equal(bad.error.code, "invalid/args");
    await bad.stop();
    await other.close();
  });

  test("gets every commit to the relay exactly once through a fetch that drops, delays and duplicates requests and responses", async () => {
    for (const seed of [1, 2, 3]) {
      const relay = memoryRelay();
      const fetch = faultyFetch(relay.fetch, { seed, drop: 0.2, lose: 0.2, dup: 0.2 });
      const store = await openStore({ backend: "memory" });
      const sync = startSync(store, { relay: base, fetch, parallel: 4, batch: 3 });
      for (let i = 0; i < 40; i++) await put(store, [{ id: i % 7, text: `v${i}` }]);
      assert.equal(await sync.settled(), 41);
      fetch.heal();
      assert.equal((await relayInfo(relay, store.id)).head, 41);
      assert.equal(await relayFingerprint(relay, store.id), await store.fingerprint());
      // The relay holds each seq once, in order, as the store recorded it.
      const served = await relayRecords(relay, store.id);
      assert.deepEqual(served.map((c) => c.seq), Array.from({ length: 41 }, (_, i) => i + 1));
      assert.ok(fetch.log.dropped + fetch.log.lost + fetch.log.duplicated > 0, JSON.stringify(fetch.log));
      await sync.stop();
      await store.close();
    }
  });
});

describe("pullSession and losing the lease", () => {
  test("a second device pulls the session and continues it; the first splits off with its origin and syncs to a new relay session", async () => {
    const relay = memoryRelay();
    const a = await openStore({ backend: "sqlite", path: filePath("a.sqlite") });
    const session = a.id;
    const hash = await a.blobs.put(new TextEncoder().encode("shared file"));
    const unnamed = await a.blobs.put(new TextEncoder().encode("a blob no row names"));
    await put(a, [{ id: 1, text: "one", file: hash }, { id: 2, text: "two" }]);
    const syncA = startSync(a, { relay: base, fetch: relay.fetch });
    await syncA.settled();

    const b = await pullSession({ relay: `${base}/sessions/${session}`, fetch: relay.fetch }, { backend: "sqlite", path: filePath("b.sqlite") });
    assert.equal(b.id, session);
    assert.equal(b.head, a.head);
    assert.equal(b.origin, null);
    assert.equal(await b.fingerprint(), await a.fingerprint());
    assert.equal(new TextDecoder().decode(await b.blobs.get(hash)), "shared file");
    assert.equal(new TextDecoder().decode(await b.blobs.get(unnamed)), "a blob no row names");
    // B is an owner's store: it commits, and its sync takes the session over.
    await put(b, [{ id: 3, text: "from b" }]);
    assert.equal(b.head, 3);
    const lost = new Promise((resolve) => syncA.on("lost", resolve));
    const syncB = startSync(b, { relay: base, fetch: relay.fetch });
    assert.equal(await syncB.settled(), 3);

    // A commits on; its push is fenced: A becomes a separate session.
    await put(a, [{ id: 4, text: "from a after the takeover" }]);
    const event = await lost;
    assert.notEqual(event.id, session);
    assert.deepEqual(event.origin, { id: session, seq: 2 });
    assert.equal(syncA.state, "lost");
    assert.equal(a.id, event.id);
    assert.deepEqual(a.origin, { id: session, seq: 2 });
    await rejectsWith(syncA.settled(), "closed", ["lost"]);
    // Nothing is lost on either side: A keeps its commit, B's session goes on.
    assert.equal(a.head, 3);
    await put(b, [{ id: 5, text: "b goes on" }]);
    await syncB.settled();
    assert.equal(await relayFingerprint(relay, session), await b.fingerprint());
    assert.ok(!JSON.stringify(await relayRecords(relay, session)).includes("after the takeover"));

    // A's sync, restarted, goes to a new relay session: its origin's records
    // first (pulled from the original session), then its own.
    const again = startSync(a, { relay: base, fetch: relay.fetch });
    assert.equal(again.session, event.id);
    assert.equal(await again.settled(), 3);
    assert.equal(await relayFingerprint(relay, event.id), await a.fingerprint());
    assert.ok(await relayHasBlob(relay, event.id, hash));
    await again.stop();
    await syncB.stop();

    // The split is durable: reopened, A keeps its new id and origin.
    await a.close();
    const reopened = await openStore({ backend: "sqlite", path: filePath("a.sqlite") });
    assert.equal(reopened.id, event.id);
    assert.deepEqual(reopened.origin, { id: session, seq: 2 });
    await reopened.close();
    // So is the promotion: B reopens as an owner's store of the session.
    await b.close();
    const b2 = await openStore({ backend: "sqlite", path: filePath("b.sqlite") });
    assert.equal(b2.id, session);
    assert.equal(b2.head, 4);
    await put(b2, [{ id: 6, text: "after reopening" }]);
    assert.equal(b2.head, 5);
    await b2.close();
  });

  test("a store that went on committing after a takeover splits off when its sync starts again, without fencing the new driver", async () => {
    const relay = memoryRelay();
    const a = await openStore({ backend: "memory" });
    const session = a.id;
    await put(a, [{ id: 1, text: "one" }]);
    const syncA = startSync(a, { relay: base, fetch: relay.fetch });
    await syncA.settled();
    await syncA.stop();
    const b = await pullSession({ relay: `${base}/sessions/${session}`, fetch: relay.fetch }, { backend: "memory" });
    const syncB = startSync(b, { relay: base, fetch: relay.fetch });
    await put(b, [{ id: 2, text: "b's seq 3" }]);
    await syncB.settled();
    // A, offline meanwhile, made its own seq 3.
    await put(a, [{ id: 2, text: "a's seq 3" }]);
    const again = startSync(a, { relay: `${base}/sessions/${session}`, fetch: relay.fetch });
    const event = await new Promise((resolve) => again.on("lost", resolve));
    assert.deepEqual(event.origin, { id: session, seq: 2 });
    assert.deepEqual(a.origin, { id: session, seq: 2 });
    assert.equal(again.state, "lost");
    // B still drives: its next commit is accepted.
    assert.equal((await relayInfo(relay, session)).epoch, syncB.epoch);
    await put(b, [{ id: 3, text: "b goes on" }]);
    assert.equal(await syncB.settled(), 4);
    // A's sync, started again with the old session's URL, goes to its own.
    const own = startSync(a, { relay: `${base}/sessions/${session}`, fetch: relay.fetch });
    assert.equal(own.session, a.id);
    assert.equal(await own.settled(), 3);
    assert.equal(await relayFingerprint(relay, a.id), await a.fingerprint());
    await own.stop();
    await syncB.stop();
    await a.close();
    await b.close();
  });

  test("a device whose lease take was lost, and which committed meanwhile, splits off when the session moved on: the driver keeps its lease", { timeout: 20000 }, async () => {
    const relay = memoryRelay();
    const a = await openStore({ backend: "memory" });
    const session = a.id;
    await put(a, [{ id: 1, text: "one" }]);
    const syncA = startSync(a, { relay: base, fetch: relay.fetch, device: "A" });
    assert.equal(await syncA.settled(), 2);
    const e = await pullSession({ relay: `${base}/sessions/${session}`, fetch: relay.fetch }, { backend: "memory" });
    // E's first take never reaches the relay; its second waits until A has
    // committed seq 3 (the race: the session moves between E's compare and
    // its take).
    let takes = 0;
    let letGo;
    const later = new Promise((r) => { letGo = r; });
    const fetchE = async (request) => {
      if (request.url.endsWith("/lease") && (await request.clone().json()).op === "take") {
        takes++;
        if (takes === 1) throw new TypeError("fetch failed (lost on the way)");
        if (takes === 2) await later;
      }
      return relay.fetch(request);
    };
    const syncE = startSync(e, { relay: base, fetch: fetchE, device: "E" });
    const lost = new Promise((resolve) => syncE.on("lost", resolve));
    // Offline, E commits: the start's hold is released (offline first).
    await put(e, [{ id: 2, text: "E's seq 3" }]);
    await put(a, [{ id: 2, text: "A's seq 3" }]);
    assert.equal(await syncA.settled(), 3);
    letGo();
    const event = await lost;
    assert.deepEqual(event.origin, { id: session, seq: 2 });
    assert.equal(syncE.state, "lost");
    // Before, E took the lease (fencing A) and then found itself forked: the
    // session was left with no driver. A drives on.
    assert.equal(syncA.state, "driving");
    assert.equal((await relayInfo(relay, session)).driver, "A");
    await put(a, [{ id: 3, text: "A goes on" }]);
    assert.equal(await syncA.settled(), 4);
    assert.equal(await relayFingerprint(relay, session), await a.fingerprint());
    await syncE.stop();
    await syncA.stop();
    await a.close();
    await e.close();
  });

  test("a split-off store whose origin's records are too large for one push gets them to its new session in halves", { timeout: 30000 }, async () => {
    const relay = memoryRelay({ maxBody: 64 * 1024 });
    const a = await openStore({ backend: "memory" });
    const session = a.id;
    for (let i = 0; i < 12; i++) await put(a, [{ id: i, text: "t".repeat(20_000) }]);
    const syncA = startSync(a, { relay: base, fetch: relay.fetch, batch: 2 });
    assert.equal(await syncA.settled(), 13);
    await syncA.stop();
    // Another device takes the session over; A, offline, commits: it forks.
    const b = await pullSession({ relay: `${base}/sessions/${session}`, fetch: relay.fetch }, { backend: "memory" });
    const syncB = startSync(b, { relay: base, fetch: relay.fetch, batch: 2 });
    await put(b, [{ id: 100, text: "b" }]);
    await syncB.settled();
    await put(a, [{ id: 100, text: "a" }]);
    const again = startSync(a, { relay: `${base}/sessions/${session}`, fetch: relay.fetch, batch: 2 });
    await new Promise((resolve) => again.on("lost", resolve));
    await again.stop();
    // A's new session starts with the origin's 13 records, about 240 KB:
    // pushed whole, it was refused with 413 and the sync stopped.
    const own = startSync(a, { relay: `${base}/sessions/${session}`, fetch: relay.fetch, batch: 2 });
    assert.equal(own.session, a.id);
    assert.equal(await own.settled(), 14);
    assert.equal(await relayFingerprint(relay, a.id), await a.fingerprint());
    await own.stop();
    await syncB.stop();
    await a.close();
    await b.close();
    await relay.close();
  });

  test("a split store whose new session another device pulled empty and drove splits again from the same origin instead of forking it", async () => {
    const relay = memoryRelay();
    const a = await openStore({ backend: "memory" });
    const session = a.id;
    await put(a, [{ id: 1, text: "one" }]);
    const syncA = startSync(a, { relay: base, fetch: relay.fetch });
    await syncA.settled();
    const b = await pullSession({ relay: `${base}/sessions/${session}`, fetch: relay.fetch }, { backend: "memory" });
    const syncB = startSync(b, { relay: base, fetch: relay.fetch });
    await syncB.settled();
    const lost = new Promise((resolve) => syncA.on("lost", resolve));
    await put(a, [{ id: 2, text: "a after the takeover" }]);
    const first = await lost;
    assert.deepEqual(first.origin, { id: session, seq: 2 });
    // Before A uploads its new session, C pulls it (empty) and drives it.
    const c = await pullSession({ relay: `${base}/sessions/${first.id}`, fetch: relay.fetch }, { backend: "memory" });
    assert.equal(c.head, 0);
    await put(c, [{ id: 9, text: "c's own" }]);
    const syncC = startSync(c, { relay: base, fetch: relay.fetch });
    await syncC.settled();
    // A's sync of its new session finds someone else's records there.
    const again = startSync(a, { relay: base, fetch: relay.fetch });
    const second = await Promise.race([
      new Promise((resolve) => again.on("lost", resolve)),
      again.settled().then(() => { throw new Error("A's sync pushed its commits onto C's session"); }),
    ]);
    assert.notEqual(second.id, first.id);
    assert.deepEqual(second.origin, { id: session, seq: 2 });
    assert.equal((await relayInfo(relay, first.id)).epoch, syncC.epoch, "C still drives its session");
    const own = startSync(a, { relay: base, fetch: relay.fetch });
    assert.equal(await own.settled(), 3);
    assert.equal(await relayFingerprint(relay, second.id), await a.fingerprint());
    await own.stop();
    await syncB.stop();
    await syncC.stop();
    for (const s of [a, b, c]) await s.close();
  });

  test("pullSession into memory gives the session's tables at the relay's head", async () => {
    const relay = memoryRelay();
    const a = await openStore({ backend: "memory" });
    for (let i = 0; i < 30; i++) await put(a, [{ id: i, text: `r${i}` }]);
    const sync = startSync(a, { relay: base, fetch: relay.fetch, batch: 7 });
    await sync.settled();
    await sync.stop();
    const b = await pullSession({ relay: `${base}/sessions/${a.id}`, fetch: relay.fetch }, { backend: "memory" });
    assert.equal(b.head, 31);
    assert.equal(await b.fingerprint(), await a.fingerprint());
    const items = b.object({ type: "notes" }).table(Items);
    assert.equal((await items.get([29])).text, "r29");
    await b.close();
    await a.close();
  });

  // The pulled store was made without the shelf and the view core that
  // openStore gives: store.at rejected "made without a runtime to open a
  // view in", snapshot() "this backend takes no snapshots (memory, sqlite,
  // … do)", though it was one of those, until the file was reopened.
  for (const [label, options] of [["memory", () => ({ backend: "memory" })], ["a sqlite file", () => ({ backend: "sqlite", path: filePath("pulled-at.sqlite") })]]) {
    test(`a store pulled into ${label} opens views at past seqs and takes snapshots, as an opened one does`, async () => {
      const relay = memoryRelay();
      const a = await openStore({ backend: "memory" });
      await put(a, [{ id: 1, text: "one" }]);
      await put(a, [{ id: 1, text: "uno" }, { id: 2, text: "two" }]);
      const sync = startSync(a, { relay: base, fetch: relay.fetch });
      await sync.settled();
      await sync.stop();
      const b = await pullSession({ relay: `${base}/sessions/${a.id}`, fetch: relay.fetch }, options());
      const view = await b.at(2);
      try {
        assert.deepEqual(await view.table(Items).get(1), { id: 1, text: "one", file: "" });
        assert.equal(await view.table("notes/items").count(), 1);
      } finally {
        await view.close();
      }
      const taken = await b.snapshot({ label: "pulled" });
      assert.equal(taken.seq, 3);
      assert.deepEqual((await b.snapshots()).map((s) => [s.id, s.seq, s.label]), [[taken.id, 3, "pulled"]]);
      await put(b, [{ id: 3, text: "three" }]);
      // From the snapshot the view replays only the commit after it.
      const later = await b.at(4);
      assert.equal(await later.table(Items).count(), 3);
      await later.close();
      await b.close();
      await a.close();
    });
  }
});

describe("after a power loss", () => {
  test("the driver pulls its own acknowledged batches back before going on; its seqs never fork", async () => {
    const relay = memoryRelay();
    const path = filePath("p.sqlite");
    const backup = filePath("p-backup.sqlite");
    let store = await openStore({ backend: "sqlite", path, durability: "relaxed" });
    const session = store.id;
    await put(store, [{ id: 1, text: "one" }]);
    await put(store, [{ id: 2, text: "two" }]);
    await store.close();
    // The file as it was at head 3 (the table's record, two puts): the newer commits are "lost" later.
    for (const ext of ["", "-wal", "-shm"]) if (existsSync(path + ext)) copyFileSync(path + ext, backup + ext);
    store = await openStore({ backend: "sqlite", path });
    await put(store, [{ id: 3, text: "three" }]);
    await put(store, [{ id: 4, text: "four" }]);
    let sync = startSync(store, { relay: base, fetch: relay.fetch });
    assert.equal(await sync.settled(), 5);
    await sync.stop();
    const before = await store.fingerprint();
    await store.close();
    for (const ext of ["", "-wal", "-shm"]) if (existsSync(backup + ext)) copyFileSync(backup + ext, path + ext);

    store = await openStore({ backend: "sqlite", path });
    assert.equal(store.id, session);
    assert.equal(store.head, 3);
    sync = startSync(store, { relay: base, fetch: relay.fetch });
    // A commit asked for right away waits for the pull-back: it gets seq 6.
    await put(store, [{ id: 5, text: "five" }]);
    assert.equal(store.head, 6);
    assert.equal(await sync.settled(), 6);
    assert.equal(sync.state, "driving");
    assert.equal((await relayInfo(relay, session)).head, 6);
    assert.equal(await relayFingerprint(relay, session), await store.fingerprint());
    const items = store.object({ type: "notes" }).table(Items);
    assert.equal((await items.get([4])).text, "four");
    assert.notEqual(before, await store.fingerprint());
    await sync.stop();
    await store.close();
  });
});

describe("sync and pullSession, as a session probe found them", () => {
  test("pullSession into a replica's file that already follows another session is refused, and the file keeps its session", async () => {
    const relay = memoryRelay();
    const a = await openStore({ backend: "memory" });
    await put(a, [{ id: 1, text: "a1" }, { id: 2, text: "a2" }]);
    const syncA = startSync(a, { relay: base, fetch: relay.fetch });
    await syncA.settled();
    const b = await openStore({ backend: "memory" });
    await put(b, [{ id: 1, text: "b1" }]);
    const bBatch = await b.outbox.read(0, 100);  // before the sync trims it
    const syncB = startSync(b, { relay: base, fetch: relay.fetch });
    await syncB.settled();
    // A replica of B in a file (as followRelay keeps one).
    const path = filePath("replica-of-b.sqlite");
    const first = await openReplica({ backend: "sqlite", path, id: b.id });
    await first.applyBatch(bBatch);
    const bPrint = await first.fingerprint();
    await first.close();
    // Before: A's records after B's head went on top of B's rows, and the
    // file then said it was B at A's head.
    await rejectsWith(pullSession({ relay: `${base}/sessions/${a.id}`, fetch: relay.fetch }, { backend: "sqlite", path }), "invalid/args", ["not empty", b.id]);
    const again = await openReplica({ backend: "sqlite", path });
    assert.equal(again.id, b.id);
    assert.equal(await again.fingerprint(), bPrint);
    await Promise.all([again.close(), syncA.stop(), syncB.stop()]);
    await Promise.all([a.close(), b.close()]);
  });

  test("pullSession stops at the head it read before the blobs: a commit the driver makes meanwhile, naming a new blob, is not pulled without it", async () => {
    const relay = memoryRelay();
    const a = await openStore({ backend: "memory" });
    await put(a, [{ id: 1, text: "one" }]);
    const syncA = startSync(a, { relay: base, fetch: relay.fetch });
    await syncA.settled();
    let raced = false;
    // The driver commits a row naming a new blob right after the pull read
    // the session's head, before it lists the blobs... then the list
    // misses the blob while the records hold its row.
    const fetch = async (request) => {
      const answer = await relay.fetch(request);
      if (!raced && request.method === "GET" && new URL(request.url).pathname === `/sessions/${a.id}`) {
        raced = true;
        const hash = await a.blobs.put(new TextEncoder().encode("late blob"));
        await put(a, [{ id: 2, text: "two", file: hash }]);
        await syncA.settled();
      }
      return answer;
    };
    const b = await pullSession({ relay: `${base}/sessions/${a.id}`, fetch }, { backend: "memory" });
    assert.ok(raced, "the driver committed during the pull");
    assert.equal(b.head, 2, "the pull ends at the head it read (the declaration and row 1)");
    const rows = await b.object({ type: "notes" }).table(Items).page(undefined, 10);
    assert.deepEqual(rows.rows.map((r) => r.id), [1]);
    await Promise.all([b.close(), syncA.stop()]);
    await a.close();
  });

  test("a sync that stopped (lost, or a fatal error) can be started again from its own listener, and stays offline after a fatal error", async () => {
    const relay = memoryRelay();
    const a = await openStore({ backend: "memory" });
    await put(a, [{ id: 1, text: "one" }]);
    // Every push refused for good (a 400 the relay would not repeat
    // differently): the sync stops with that error.
    const refusing = async (request) => (new URL(request.url).pathname.endsWith("/push")
      ? new Response(JSON.stringify({ error: "invalid/args", message: "refused by the test" }), { status: 400, headers: { "content-type": "application/json" } })
      : relay.fetch(request));
    const sync = startSync(a, { relay: base, fetch: refusing });
    const restarted = new Promise((resolve) => sync.on("error", () => {
      // Before: "this store already has a running sync" (it had stopped).
      try { resolve(startSync(a, { relay: base, fetch: relay.fetch })); } catch (e) { resolve(e); }
    }));
    const next = await restarted;
    assert.equal(typeof next.settled, "function", `startSync from the error listener: ${next?.message}`);
    assert.equal(sync.state, "offline");
    assert.ok(sync.error, "the first sync keeps its error");
    assert.equal(await next.settled(), a.head);
    await new Promise((ok) => setTimeout(ok, 100));
    assert.equal(sync.state, "offline", "a stopped sync's late answers do not make it driving again");
    // The stopped sync's own end does not free the store from the running one.
    await sync.stop();
    assert.throws(() => startSync(a, { relay: base, fetch: relay.fetch }), (e) => e.code === "invalid/args" && e.message.includes("already has a running sync"));
    await next.stop();
    await a.close();
  });

  test("sync.stop() returns within a moment when the relay stops answering", async () => {
    const relay = memoryRelay();
    const a = await openStore({ backend: "memory" });
    await put(a, [{ id: 1, text: "one" }]);
    let answering = true;
    const fetch = (request) => (answering ? relay.fetch(request) : new Promise(() => {}));
    const sync = startSync(a, { relay: base, fetch });
    await sync.settled();
    answering = false;
    const t0 = Date.now();
    await sync.stop();
    // Before: the lease's release waited for the whole timeout (30 s).
    assert.ok(Date.now() - t0 < 10000, `stop took ${Date.now() - t0} ms`);
    await a.close();
  });

  test("startSync refuses a relay URL no fetch can reach and a device the relay would refuse, at once", async () => {
    const a = await openStore({ backend: "memory" });
    for (const relay of ["ftp://relay.example", "file:///tmp/relay", "mailto:x@example.com", "not a url"]) {
      assert.throws(() => startSync(a, { relay }), (e) => e.code === "invalid/args" && e.message.includes("http(s)"), relay);
    }
    assert.throws(() => startSync(a, { relay: base, device: "d".repeat(201) }), (e) => e.code === "invalid/args" && /1 to 200/.test(e.message));
    await a.close();
  });
});
