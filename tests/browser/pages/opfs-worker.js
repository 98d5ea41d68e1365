// A dedicated Worker for tests/browser/opfs.test.js: opens OPFS stores
// through the package's browser root and answers the page's calls
// (opfs.html). Each call is { id, op, args }; each answer { id, ok, value }
// or { id, ok: false, error: { code, name, message } }.
import * as api from "../../../js/browser.js";
import { defineTable, deleteStore, int, openStore, query, str } from "../../../js/browser.js";
import { loadBrowserCore } from "../../../js/loader-browser.js";
import { OPFS_DIR, OPFS_FILES, opfsDbPath, opfsFiles } from "../../../js/files-opfs.js";
import { storeFiles } from "./opfs-integrity.js";
import { conformanceRunner } from "../../conformance/runner.js";
import { assert } from "./assert.js";
import { afterTrim, runHistory } from "../../history/scenario.js";
import { vectorCacheScenario } from "../../vector-cache/scenario.js";

const Items = defineTable("items", { columns: { id: str(), n: int(), tab: str() }, key: ["id"] });

let store = null;
let items = null;
let loop = null;  // a background commit loop: { acked, error, done }

function errorOf(e) {
  return { code: e?.code, name: e?.name, message: String(e?.message ?? e) };
}

async function put(id, n, tab) {
  return store.object({ type: "t" }).tx(async (tx) => { await tx.put(items, { id, n, tab }); });
}

// Fails the k-th call of `method` ("write" or "sync") of the module's files
// object from now on (once), with a DOMException named `name`: a fault the
// real OPFS cannot be made to produce on demand.
function injectFault(mod, method, k, name) {
  const real = mod.onestoreFiles;
  let calls = 0;
  const faulty = Object.create(real);
  faulty[method] = function (...args) {
    if (++calls === k) throw new DOMException(`injected ${method} failure (call ${k})`, name);
    return real[method].apply(real, args);
  };
  mod.onestoreFiles = faulty;
  return () => { mod.onestoreFiles = real; };
}
let heal = null;
let sync = null;
let lost = null;
let releaseLock = null;
let heldFile = null;  // holdFile's handle
let heldReplica = null;  // holdReplica's replica

const ops = {
  async open({ name, durability, lockTimeout, keepSnapshots, snapshotEvery }) {
    store = await openStore({
      backend: "opfs", name, durability, lockTimeout, keepSnapshots, snapshotEvery,
      onFenced: (e) => self.postMessage({ event: "fenced", code: e.code, message: e.message }),
    });
    items = store.object({ type: "t" }).table(Items);
    await items.count();
    return { head: store.head, id: store.id };
  },
  // One opener of a race (tests/browser/opfs-race.test.js): the open's
  // outcome, { opened } or { opened: false, code, message }, its time, and
  // whether onFenced was called before the open settled (never: a take-over
  // during the open rejects it instead).
  async openRace({ name, lockTimeout }) {
    let settled = false;
    let toldEarly = false;
    const t0 = performance.now();
    store = null;
    items = null;
    try {
      const s = await openStore({
        backend: "opfs", name, lockTimeout,
        onFenced: (e) => {
          if (!settled) toldEarly = true;
          self.postMessage({ event: "fenced", code: e.code, message: e.message });
        },
      });
      settled = true;
      store = s;
      items = s.object({ type: "t" }).table(Items);
      return { opened: true, toldEarly, ms: Math.round(performance.now() - t0) };
    } catch (e) {
      settled = true;
      return { opened: false, code: e?.code, message: String(e?.message ?? e), toldEarly, ms: Math.round(performance.now() - t0) };
    }
  },
  // Two opens of one name at once: each { ok } or { code, message }; the
  // stores that opened are closed.
  // With `delay`, the second open starts that many ms after the first. Then
  // a third open of the name: "again" is "ok" when it opens within 3 s.
  async openTwice({ name, delay = 0 }) {
    const first = openStore({ backend: "opfs", name });
    if (delay) await new Promise((r) => setTimeout(r, delay));
    const results = await Promise.allSettled([first, openStore({ backend: "opfs", name })]);
    const out = [];
    for (const r of results) {
      if (r.status === "fulfilled") { out.push({ ok: true }); await r.value.close().catch(() => {}); } else out.push({ code: r.reason?.code, message: r.reason?.message });
    }
    try {
      await (await openStore({ backend: "opfs", name, lockTimeout: 3000 })).close();
      out.again = "ok";
    } catch (e) {
      out.again = `${e.code}: ${e.message}`;
    }
    return { results: out, again: out.again };
  },
  async put({ id, n = 0, tab = "" }) {
    return put(id, n, tab);
  },
  // Commits "<prefix><i>" one after another, every `everyMs`, until one fails.
  startLoop({ prefix, tab, everyMs = 2 }) {
    loop = { acked: [], error: null, done: false };
    const mine = loop;
    (async () => {
      for (let i = 0; ; i++) {
        try {
          await put(`${prefix}${i}`, i, tab);
          mine.acked.push(`${prefix}${i}`);
        } catch (e) {
          mine.error = errorOf(e);
          mine.done = true;
          return;
        }
        await new Promise((r) => setTimeout(r, everyMs));
      }
    })();
    return true;
  },
  // Keeps the worker busy (no task runs, so no take-over is noticed).
  busy({ ms }) {
    const end = Date.now() + ms;
    while (Date.now() < end) { /* spin */ }
    return true;
  },
  loopResult() {
    return loop;
  },
  async rows() {
    const out = [];
    for await (const row of items.rows(query(Items))) out.push(row.id);
    return out;
  },
  head() {
    return store.head;
  },
  // Whether SQLite's -wal file holds frames now (the open store's handles).
  walInUse({ name }) {
    return opfsFiles.exists(`${opfsDbPath(name)}-wal`);
  },
  // The store's folder in OPFS: { file: size } (no handle may be open).
  async listing({ name }) {
    const dir = await (await (await navigator.storage.getDirectory()).getDirectoryHandle(OPFS_DIR)).getDirectoryHandle(name);
    const out = {};
    for await (const [file, handle] of dir.entries()) if (handle.kind === "file") out[file] = (await handle.getFile()).size;  // blobs/ is a folder
    return { files: out, expected: OPFS_FILES };
  },
  // Blobs (tests/browser/blobs.test.js), as text.
  async blobPut({ text }) {
    return store.blobs.put(new TextEncoder().encode(text));
  },
  // `n` puts of the same bytes at once: their answers.
  async blobPutMany({ text, n }) {
    return Promise.all(Array.from({ length: n }, () => store.blobs.put(new TextEncoder().encode(text))));
  },
  async blobPutWithHash({ hash, text }) {
    return store.blobs.putWithHash(hash, new TextEncoder().encode(text));
  },
  async blobGet({ hash }) {
    const bytes = await store.blobs.get(hash);
    return bytes === undefined ? null : { text: new TextDecoder().decode(bytes), isUint8Array: bytes.constructor === Uint8Array };
  },
  async blobHas({ hash }) {
    return store.blobs.has(hash);
  },
  async blobList(options) {
    return store.blobs.list(options);
  },
  // Every file under the store's OPFS folder "blobs": { "sha256/9f/9f3a…": size }.
  async blobFiles({ name }) {
    const out = {};
    const walk = async (dir, prefix) => {
      for await (const [entry, handle] of dir.entries()) {
        if (handle.kind === "directory") await walk(handle, `${prefix}${entry}/`);
        else out[`${prefix}${entry}`] = (await handle.getFile()).size;
      }
    };
    let dir;
    try {
      dir = await (await (await navigator.storage.getDirectory()).getDirectoryHandle(OPFS_DIR)).getDirectoryHandle(name);
      dir = await dir.getDirectoryHandle("blobs");
    } catch (e) {
      if (e?.name === "NotFoundError") return null;
      throw e;
    }
    await walk(dir, "");
    return out;
  },
  async close() {
    await store.close();
    store = null;
    return true;
  },
  // Holds a sync access handle on one file of a store's folder, as another
  // owner that has not let go yet would (opfs.test.js), until heldRelease.
  async holdFile({ name, file }) {
    const dir = await (await (await navigator.storage.getDirectory()).getDirectoryHandle(OPFS_DIR)).getDirectoryHandle(name);
    heldFile = await (await dir.getFileHandle(file)).createSyncAccessHandle();
    return true;
  },
  heldRelease() {
    heldFile?.close();
    heldFile = null;
    return true;
  },
  // store.lock (tests/browser/store-lock.test.js): holds `name` until lockRelease.
  async lockHold({ name }) {
    await new Promise((held, failed) => {
      store.lock(name, () => { held(); return new Promise((r) => { releaseLock = r; }); }).catch(failed);
    });
    return true;
  },
  lockRelease() {
    releaseLock?.();
    releaseLock = null;
    return true;
  },
  // store.lock with a timeout: "ran", or the error.
  async lockTry({ name, timeout }) {
    return store.lock(name, () => "ran", { timeout });
  },
  async snapshot({ label } = {}) {
    return store.snapshot(label === undefined ? undefined : { label });
  },
  async snapshots() {
    return store.snapshots();
  },
  // The ids and ns of items in store.at(seq)'s view, by id.
  async rowsAt({ seq }) {
    const view = await store.at(seq);
    try {
      const out = [];
      for await (const row of view.table(items).rows()) out.push([row.id, row.n]);
      return out;
    } finally {
      view.close();
    }
  },
  // Asks for one commit per id at once, none awaited before the next is
  // asked (they queue behind each other); answers the head after them.
  async putAll({ ids }) {
    await Promise.all(ids.map((id, n) => store.object({ type: "t" }).tx(async (tx) => { await tx.put(items, { id, n, tab: "" }); })));
    return store.head;
  },
  async restore({ id } = {}) {
    return store.restore(id);
  },
  // The files of the store's OPFS folder snapshots/ (no handle may be open).
  async snapshotFiles({ name }) {
    const dir = await (await (await (await navigator.storage.getDirectory()).getDirectoryHandle(OPFS_DIR)).getDirectoryHandle(name)).getDirectoryHandle("snapshots");
    const out = [];
    for await (const [file] of dir.entries()) out.push(file);
    return out.sort();
  },
  // Empties one file of snapshots/ (a copy lost outside onestore), or makes
  // it empty (a .json a crash left before its write).
  async snapshotFileEmpty({ name, file }) {
    const dir = await (await (await (await navigator.storage.getDirectory()).getDirectoryHandle(OPFS_DIR)).getDirectoryHandle(name)).getDirectoryHandle("snapshots");
    const w = await (await dir.getFileHandle(file, { create: true })).createWritable();
    await w.close();
    return true;
  },
  async listStores({ prefix }) {
    return api.listStores({ backend: "opfs", prefix });
  },
  // Copies the database file of closed store `from` into a new OPFS folder
  // `to` (what an import's generation looks like).
  async copyStoreFolder({ from, to }) {
    const top = await (await navigator.storage.getDirectory()).getDirectoryHandle(OPFS_DIR);
    const bytes = await (await (await (await top.getDirectoryHandle(from)).getFileHandle("db.sqlite")).getFile()).arrayBuffer();
    const w = await (await (await top.getDirectoryHandle(to, { create: true })).getFileHandle("db.sqlite", { create: true })).createWritable();
    await w.write(bytes);
    await w.close();
    return true;
  },
  async fault({ method, k, name = "InvalidStateError" }) {
    heal?.();
    heal = injectFault(await loadBrowserCore(), method, k, name);
    return true;
  },
  heal() {
    heal?.();
    heal = null;
    return true;
  },
  // The store's files, for the sqlite3 command's integrity_check in Node
  // (harness.js, integrity), read with nothing of the store's code between.
  storeFiles({ name }) {
    return storeFiles(name);
  },
  async delete({ name }) {
    return deleteStore({ backend: "opfs", name });
  },
  // Every conformance vector on a fresh OPFS store per case.
  async conformance({ files }) {
    const { CaseRunner } = conformanceRunner(api, assert);
    const results = [];
    let n = 0;
    for (const file of files) {
      const doc = await (await fetch(new URL(`../../conformance/${file}`, import.meta.url))).json();
      for (const c of doc.cases) {
        const name = `conformance-${n++}`;
        try {
          await new CaseRunner(doc, { backend: "opfs", name }).run(c.steps);
          results.push({ file, name: c.name, ok: true });
        } catch (e) {
          results.push({ file, name: c.name, ok: false, error: String(e?.stack ?? e) });
        }
        await deleteStore({ backend: "opfs", name });
      }
    }
    return results;
  },
  // Every conformance case on a memory store, replayed into a replica on a
  // fresh OPFS store and checked row by row; the fingerprint of each
  // (tests/browser/replica.test.js compares them with Node's).
  async replicaConformance({ files }) {
    const { replicateCase } = conformanceRunner(api, assert);
    const results = [];
    let n = 0;
    for (const file of files) {
      const doc = await (await fetch(new URL(`../../conformance/${file}`, import.meta.url))).json();
      for (const c of doc.cases) {
        const name = `replica-${n++}`;
        try {
          const fingerprint = await replicateCase(doc, c, { backend: "memory" }, { backend: "opfs", name });
          results.push({ file, name: c.name, ok: true, fingerprint });
        } catch (e) {
          results.push({ file, name: c.name, ok: false, error: String(e?.stack ?? e) });
        }
        await deleteStore({ backend: "opfs", name });
      }
    }
    return results;
  },
  // Sync (tests/browser/sync.test.js): the open store drives a session on
  // the relay at `relay`; "lost" events are kept for syncLost.
  syncStart({ relay }) {
    lost = null;
    sync = api.startSync(store, { relay, batch: 3 });
    sync.on("lost", (e) => { lost = e; });
    return { session: sync.session };
  },
  async syncSettled() {
    return { acked: await sync.settled(), state: sync.state, head: store.head };
  },
  async syncLost() {
    while (!lost && sync.state !== "lost") await new Promise((r) => setTimeout(r, 10));
    return { event: lost, id: store.id, origin: store.origin, head: store.head, state: sync.state };
  },
  async syncStop() {
    await sync.stop();
  },
  async pullSession({ relay, name }) {
    await deleteStore({ backend: "opfs", name });
    store = await api.pullSession({ relay }, { backend: "opfs", name });
    items = store.object({ type: "t" }).table(Items);
    return { id: store.id, head: store.head, fingerprint: await store.fingerprint() };
  },
  async fingerprint() {
    return { fingerprint: await store.fingerprint(), head: store.head, id: store.id };
  },
  // Holds the OPFS replica `name` open in this worker (heldReplica).
  async holdReplica({ name }) {
    heldReplica = await api.openReplica({ backend: "opfs", name });
    return { head: heldReplica.head };
  },
  async heldReplicaHead() {
    return { head: heldReplica.head, fingerprint: await heldReplica.fingerprint() };
  },
  // openStore or openReplica of `name` here: { ok } or { code, message }.
  async tryOpen({ name, replica }) {
    try {
      const s = replica ? await api.openReplica({ backend: "opfs", name }) : await openStore({ backend: "opfs", name });
      await s.close();
      return { ok: true };
    } catch (e) {
      return { code: e.code, message: e.message };
    }
  },
  // An OPFS replica given `batches`, closed, reopened: its head and
  // fingerprint after each, and what a diverging batch then answers.
  async replicaReopen({ batches, diverging }) {
    const name = "replica-reopen";
    await deleteStore({ backend: "opfs", name });
    let replica = await api.openReplica({ backend: "opfs", name });
    for (const b of batches) await replica.applyBatch(b);
    const before = { head: replica.head, fingerprint: await replica.fingerprint() };
    await replica.close();
    replica = await api.openReplica({ backend: "opfs", name });
    const after = { head: replica.head, fingerprint: await replica.fingerprint() };
    let code;
    try { await replica.applyBatch(diverging); } catch (e) { code = e.code; }
    await replica.close();
    replica = await api.openReplica({ backend: "opfs", name });
    const reopened = { head: replica.head, diverged: replica.diverged !== undefined };
    await replica.close();
    await deleteStore({ backend: "opfs", name });
    return { before, after, code, reopened };
  },
  // tests/history/scenario.js on a fresh OPFS store: the store's state and
  // store.at's views at every seq, the log, then what a trim leaves.
  async history() {
    const name = "history";
    await deleteStore({ backend: "opfs", name });
    const s = await openStore({ backend: "opfs", name });
    try {
      const run = await runHistory(api, s);
      return { run, trim: await afterTrim(s, 3) };
    } finally {
      await s.close();
      await deleteStore({ backend: "opfs", name });
    }
  },
  // tests/vector-cache/scenario.js on a fresh OPFS store.
  async vectorCache() {
    const name = "vector-cache";
    await deleteStore({ backend: "opfs", name });
    try {
      return await vectorCacheScenario(api, { backend: "opfs", name });
    } finally {
      await deleteStore({ backend: "opfs", name });
    }
  },
};

self.onmessage = async (e) => {
  const { id, op, args } = e.data;
  try {
    self.postMessage({ id, ok: true, value: await ops[op](args ?? {}) });
  } catch (err) {
    self.postMessage({ id, ok: false, error: errorOf(err) });
  }
};
