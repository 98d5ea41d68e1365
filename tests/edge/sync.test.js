// The sync driver against the relay in real workerd (Miniflare: SessionRelay,
// a Durable Object per session over the durable backend, behind relayFetch):
// a Node store drives a session with a token, across a restart of workerd
// in the middle (the driver goes offline and catches up); a second device
// pulls the session with its blobs and continues it; the first splits off
// with its origin. And a Durable Object as the driver: a durable store
// drives its session through relayFetch to SessionRelay in the same Worker.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Miniflare } from "miniflare";

import { defineTable, int, openStore, pullSession, startSync, str } from "../../js/index.js";
import { repoRoot } from "./harness.js";

const Items = defineTable("items", { version: 1, columns: { id: int(), text: str(), file: str({ default: "" }) }, key: ["id"] });
const base = "http://relay.test";

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
    durableObjectsPersist: persist,
  });
  await mf.ready;
  return mf;
}

async function put(store, rows) {
  const owner = store.object({ type: "notes" });
  const items = owner.table(Items);
  await owner.tx(async (tx) => {
    for (const r of rows) await tx.put(items, r);
  });
}

test("a Node store drives a session through SessionRelay in workerd across a restart; a second device pulls it and continues; the first splits off", async () => {
  const dir = mkdtempSync(join(tmpdir(), "onestore-edge-sync-"));
  let mf = await startRelay(dir);
  let down = false;
  // The driver's fetch: Miniflare's dispatchFetch; a network error while
  // workerd restarts.
  const fetch = async (request) => {
    if (down) throw new TypeError("fetch failed (workerd is restarting)");
    const body = ["GET", "HEAD"].includes(request.method) ? undefined : new Uint8Array(await request.arrayBuffer());
    return mf.dispatchFetch(request.url, { method: request.method, headers: Object.fromEntries(request.headers), body });
  };
  const a = await openStore({ backend: "memory" });
  const b = { store: null };
  try {
    const session = a.id;
    const hash = await a.blobs.put(new TextEncoder().encode("a file in workerd"));
    await put(a, [{ id: 1, text: "one", file: hash }]);
    const syncA = startSync(a, { relay: base, fetch, token: "rw", batch: 2 });
    assert.equal(await syncA.settled(), 2);

    // workerd goes away; A commits on, offline; workerd comes back with its
    // Durable Objects' storage, and A catches up.
    down = true;
    await mf.dispose();
    const offline = new Promise((resolve) => { const off = syncA.on("state", (s) => { if (s === "offline") { off(); resolve(); } }); });
    for (let i = 2; i < 6; i++) await put(a, [{ id: i, text: `offline ${i}` }]);
    await offline;
    mf = await startRelay(dir);
    down = false;
    assert.equal(await syncA.settled(), 6);
    assert.equal(syncA.state, "driving");

    // Another device pulls the session (blobs included) and takes it over.
    b.store = await pullSession({ relay: `${base}/sessions/${session}`, fetch, token: "rw" }, { backend: "memory" });
    assert.equal(b.store.id, session);
    assert.equal(b.store.head, 6);
    assert.equal(await b.store.fingerprint(), await a.fingerprint());
    assert.equal(new TextDecoder().decode(await b.store.blobs.get(hash)), "a file in workerd");
    const lost = new Promise((resolve) => syncA.on("lost", resolve));
    const syncB = startSync(b.store, { relay: base, fetch, token: "rw" });
    await put(b.store, [{ id: 7, text: "from b" }]);
    assert.equal(await syncB.settled(), 7);
    await put(a, [{ id: 8, text: "from a, after the takeover" }]);
    const event = await lost;
    assert.deepEqual(event.origin, { id: session, seq: 6 });
    assert.equal(a.id, event.id);
    assert.equal(a.head, 7);
    // The session on the relay is B's.
    const copy = await pullSession({ relay: `${base}/sessions/${session}`, fetch, token: "rw" }, { backend: "memory" });
    assert.equal(await copy.fingerprint(), await b.store.fingerprint());
    await copy.close();
    await syncB.stop();
  } finally {
    await a.close();
    await b.store?.close();
    await mf.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a Durable Object's durable store drives its session through relayFetch to SessionRelay in the same Worker", async () => {
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(repoRoot, "tests", "edge", "sync-worker.js"),
    modulesRoot: repoRoot,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: "2025-01-01",
    compatibilityFlags: ["nodejs_compat"],
    durableObjects: {
      SESSIONS: { className: "TestRelay", useSQLite: true },
      DRIVERS: { className: "TestDriver", useSQLite: true },
    },
  });
  await mf.ready;
  const call = async (op, args = {}) => {
    const res = await mf.dispatchFetch(`http://worker.test/driver/d1/${op}`, { method: "POST", body: JSON.stringify(args) });
    const answer = await res.json();
    if (!answer.ok) throw new Error(`${op}: ${answer.code} ${answer.message}`);
    return answer.result;
  };
  const fetch = async (request) => {
    const body = ["GET", "HEAD"].includes(request.method) ? undefined : new Uint8Array(await request.arrayBuffer());
    return mf.dispatchFetch(request.url, { method: request.method, headers: Object.fromEntries(request.headers), body });
  };
  try {
    const { id } = await call("open");
    const { file } = await call("commit", { from: 0, n: 6, blob: "bytes in a Durable Object" });
    const first = await call("sync");
    assert.deepEqual({ acked: first.acked, state: first.state, head: first.head }, { acked: 7, state: "driving", head: 7 });
    await call("commit", { from: 6, n: 3 });
    const second = await call("sync");
    assert.equal(second.acked, 10);
    // Node pulls the session from the relay objects: the same content and blob.
    const copy = await pullSession({ relay: `http://worker.test/sessions/${id}`, fetch }, { backend: "memory" });
    assert.equal(copy.head, 10);
    assert.equal(await copy.fingerprint(), second.fingerprint);
    assert.equal(new TextDecoder().decode(await copy.blobs.get(file)), "bytes in a Durable Object");
    await copy.close();
    await call("stop");
  } finally {
    await mf.dispose();
  }
});
