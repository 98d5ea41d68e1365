// The store: opening it, and the wiring of its parts.
//
// Where each concern lives (docs/architecture.md):
// - js/core-calls.js   the one way to call the core; closed/broken state; a
//                      commit's lazy ops (Core.lastOps)
// - js/commit-queue.js the commit queue: steps, adopt, flush, holds
// - js/owner.js        owners and table handles
// - js/tx.js           transactions
// - js/reads.js        reads of committed state, cursors, the rows iterator
// - js/data.js         what a write takes from the caller's values
// - js/live.js         the flush: watches, derives, links
//
// JS crosses into the wasm core once per commit and once per page of rows
// (wasm/ABI.md).

import { asStoreError, invalidArgs, refuseUnknownOptions } from "./errors.js";
import { openCore } from "./open.js";
import { MAX_BATCH_DEPTH, encodeJson, parseJsonExact, toWire } from "./encode.js";
import { describe, ownerName } from "./schema.js";
import { makeLive } from "./live.js";
import { closeCoreOf, commitContext, fenceWith, makeGate } from "./core-calls.js";

// The ops that give a table new columns: the row decoders follow them.
const SCHEMA_OPS = new Set(["table", "alter", "index"]);

// The fields of each op store.commit takes (docs/formats.md, "Ops"), and of
// a column in a table or alter op. The core reads the fields it knows and
// ignored the others: a misspelt `optinal: true` declared a column that is
// not optional, with no word. (Document ops are checked by the core.)
const OP_FIELDS = {
  put: new Set(["op", "table", "row"]),
  update: new Set(["op", "table", "key", "where", "set", "count"]),
  delete: new Set(["op", "table", "key", "where", "count"]),
  table: new Set(["op", "table", "version", "columns", "key", "indexes"]),
  alter: new Set(["op", "table", "version", "drop", "rename", "add"]),
  index: new Set(["op", "table", "version", "drop", "create"]),
};
const COLUMN_FIELDS = new Set(["type", "optional", "default", "dims"]);

function refuseUnknownFields(writes) {
  for (let i = 0; i < writes.length; i++) {
    const w = writes[i];
    if (w === null || typeof w !== "object" || Array.isArray(w)) continue;  // the core words it
    const fields = Object.hasOwn(OP_FIELDS, w.op) ? OP_FIELDS[w.op] : undefined;
    if (fields === undefined) continue;
    for (const k of Object.keys(w)) {
      if (!fields.has(k)) throw invalidArgs(`store.commit: ops[${i}]: a ${w.op} op has no field ${JSON.stringify(k)} (it takes ${[...fields].join(", ")})`);
    }
    const columns = w.op === "table" ? w.columns : w.op === "alter" ? w.add : undefined;
    if (columns === null || typeof columns !== "object" || Array.isArray(columns)) continue;
    for (const [name, c] of Object.entries(columns)) {
      if (c === null || typeof c !== "object" || Array.isArray(c)) continue;
      for (const k of Object.keys(c)) {
        if (!COLUMN_FIELDS.has(k)) throw invalidArgs(`store.commit: ops[${i}]: column ${JSON.stringify(name)} has no field ${JSON.stringify(k)} (a column takes type, optional, default, dims)`);
      }
    }
  }
}
import { makeCommitQueue } from "./commit-queue.js";
import { makeReads } from "./reads.js";
import { makeHandles, makeOwner } from "./owner.js";
import { plainData } from "./data.js";
import { cancelArchive, exportArchive, readArchive } from "./archive.js";
import { blobStorageCall, contentFingerprint, makeBlobs, memoryBlobs, webSha256 } from "./blobs.js";
import { makeSnapshots, snapshotOptions } from "./snapshots.js";
import { lockArgs, localLocks, withLocks } from "./locks.js";
import { makeLog, openView } from "./history.js";

// store -> { live, io }: what js/link.js needs of a store (watches,
// derives and links live in js/watch.js, js/derive.js, js/link.js).
const internals = new WeakMap();

/**
 * The live part of a store (its derives and link sinks), for js/link.js.
 *
 * @example
 * const { live } = storeInternals(store);
 */
export function storeInternals(store) {
  const i = internals.get(store);
  if (!i) throw invalidArgs(`expected a store from openStore(), got ${describe(store)}`);
  return i;
}

/**
 * Opens a store with a runtime's loader. The package root binds this to the
 * runtime (Node: js/loader-node.js) as `openStore`.
 *
 * @example
 * const store = await openStoreWith(nodeRuntime, { backend: "memory" });
 */
export async function openStoreWith(runtime, options) {
  const snapshotting = snapshotOptions(options, "openStore");
  const { core, info, session, blobs, snapshots, locks } = await openCore(runtime, options, "openStore");
  const shelf = await openShelf(snapshots, snapshotting, () => {
    try { core.close(); } catch { /* closing anyway */ }
    try { core.delete(); } catch { /* already freed */ }
    try { session?.release(); } catch { /* released anyway */ }
  });
  return makeStore(core, info, session, { blobs, snapshots: shelf, locks, openViewCore: viewCoreOf(runtime), AsyncLocalStorage: runtime.AsyncLocalStorage });
}

/**
 * The snapshot shelf of a store with its list at open: `{ shelf, known,
 * keep, every }`, or null where the backend takes no snapshots. `what`
 * names the call that opens it (openStore, pullSession: js/sync.js).
 *
 * @example
 * const shelf = await openShelf(snapshots, snapshotOptions(options, "openStore"), closeCore);
 */
export async function openShelf(shelf, { keep, every }, closeCore, what = "openStore") {
  if (!shelf) return { shelf: null, known: [], keep, every };
  if (every > 0 && shelf.noEvery) {
    closeCore();
    throw invalidArgs(`${what}: snapshotEvery must be 0 here: ${shelf.noEvery}; got ${every}`);
  }
  try {
    if (every > 0) await shelf.prepare?.();
    return { shelf, known: await shelf.list(), keep, every };
  } catch (e) {
    closeCore();
    throw asStoreError(e, `${what}: reading its snapshots`);
  }
}

/**
 * A new memory replica core of the same runtime: what store.at(seq)
 * replays into. Every store made over a runtime's core is given it
 * (openStore, importStore, pullSession).
 *
 * @example
 * makeStore(core, info, session, { openViewCore: viewCoreOf(runtime), AsyncLocalStorage: runtime.AsyncLocalStorage });
 */
export function viewCoreOf(runtime) {
  return () => openCore(runtime, { backend: "memory" }, "store.at", { replica: true });
}

/**
 * The store over an opened wasm `Core`; its blobs in `blobs`
 * (`{ backend, sha256 }`, js/blobs.js; in memory when omitted); its
 * snapshots' shelf in `snapshots` (`{ shelf, known, keep, every }`,
 * js/snapshots.js; none when omitted); `AsyncLocalStorage`, the runtime's
 * class where it has one (Node), by which store.read tells a nested read.
 *
 * @example
 * const store = makeStore(core, { id: "s1", head: 0 });
 */
export function makeStore(core, info, session, { blobs = { backend: memoryBlobs(), sha256: webSha256 }, snapshots, locks, openViewCore, AsyncLocalStorage } = {}) {
  const gate = makeGate(core, info.head);
  const owners = new Map();
  const adopters = new Map();  // owner name -> adopt hook (a restore reaches them all)
  const handles = makeHandles();
  let closePromise;

  if (session) fenceWith(gate, session);  // opfs: another tab may take it over
  let lastOrigin = null;
  const readOrigin = () => {
    const o = gate.call("store.origin", () => core.origin());
    return (lastOrigin = o === "" ? null : Object.freeze(JSON.parse(o)));
  };
  try { readOrigin(); } catch { /* known before a fence; a failure here is the first call's to say */ }

  const reads = makeReads(gate);
  // The read whose callback runs (an AsyncLocalStorage's store: `{ on }`,
  // on until its hold is released), or null without AsyncLocalStorage.
  // The runtime gives it where it has one (Node: js/loader-node.js); there
  // a store.read knows whether it was started inside another read of the
  // same store: that one joins the holds at once (its outer read awaits
  // it), where a read beside them takes its turn behind the commits queued
  // before it (js/commit-queue.js, holdInTurn).
  const inRead = AsyncLocalStorage ? new AsyncLocalStorage() : null;
  // A hold for a read or an export, in its turn (js/commit-queue.js). At
  // once where waiting could deadlock: inside a read of this store still
  // on (it awaits this one, and the commits this one would wait for wait
  // for it), and, without AsyncLocalStorage, whenever a hold is on (a read
  // inside another cannot be told from one beside it there).
  function holdInTurn() {
    const now = inRead ? inRead.getStore()?.on === true : queue.held;
    return queue.holdInTurn(now);
  }

  // The outbox read of store.outbox.read and of a derive's read.outbox.
  function outboxRead(after, limit, what) {
    if (!Number.isSafeInteger(after) || after < 0) throw invalidArgs(`${what}: after must be a seq (a safe integer >= 0), got ${describe(after)}`);
    if (!Number.isSafeInteger(limit) || limit < 1) throw invalidArgs(`${what}: limit must be a positive integer, got ${describe(limit)}`);
    return parseJsonExact(gate.call(what, () => core.outboxRead(after, limit)));
  }
  // Synchronous reads of committed state, for derives and links.
  const io = {
    handleOf(t, what) {
      gate.checkOpen(what);
      const h = typeof t === "string" ? handles.byName(t) : handles.of(t, what);
      if (!h) throw invalidArgs(`${what}: no table ${JSON.stringify(t)} is open in this store; open it with owner.table(def) first`);
      return h;
    },
    getNow: reads.getNow,
    cellsNow: reads.cellsNow,
    decoderOf: reads.columnsOf,
    pageNow: reads.pageNow,
    countNow: reads.countNow,
    head: () => gate.lastHead,
    outboxRead: (after, limit) => outboxRead(after, limit, "read.outbox"),
    // A documents read (find, load, …) of committed state, for links.
    documentsNow: (request, what) => parseJsonExact(gate.call(what, () => core.documents(encodeJson(request, what)))),
  };
  const live = makeLive(io);
  if (session) {
    // Fenced: the links' tabs are told (their holds would never move again).
    const fence = session.fence;
    session.fence = (err) => { fence(err); live.close(err); };
  }
  const commitListeners = new Set();  // js/sync.js: a new commit wakes the driver
  let snaps = null;
  const queue = makeCommitQueue({
    flush(seq, ops) {
      live.flush(seq, ops);
      snaps?.afterCommit(seq);
      for (const fn of commitListeners) fn(seq);
    },
  });
  const parts = { gate, queue, reads, handles, watches: () => live.watches, adopters };
  // A restore's ops reach every owner's adopt hook: the marker op, then the
  // ops on that owner's tables.
  function adoptAll(seq, opsOf) {
    if (adopters.size === 0) return;
    const ops = opsOf();
    let failed = null;
    for (const [name, hook] of adopters) {
      const mine = ops.filter((op, i) => i === 0 || (typeof op.table === "string" && op.table.startsWith(`${name}/`)));
      try { hook(seq, mine); } catch (e) { failed ??= e; }
    }
    if (failed) throw failed;
  }
  if (snapshots?.shelf) snaps = makeSnapshots({ gate, queue, adoptAll, ...snapshots });
  const lockLayers = locks ? [localLocks(), locks] : [localLocks()];
  function noSnapshots(what) {
    return invalidArgs(`${what}: this backend takes no snapshots (memory, sqlite, opfs and durable stores do)`);
  }

  // A table whose declaration is still queued waits for the read's own
  // hold: refused, where waiting for it would hang the read and the store.
  const settled = (t, what) => {
    const h = handles.of(t, what);
    if (!h.settled) throw invalidArgs(`${what}(${h.name}): the table is still being declared; open it before store.read`);
    return h;
  };
  // Its reads refuse a closed store, not a closing one: close() waits for
  // the read's hold, and the core stays open until then (a read running
  // when close() was asked for failed halfway, with `closed`).
  const held = reads.held;
  const reader = Object.freeze({
    get: (t, key) => held.get(settled(t, "read.get"), key),
    page: (t, q, limit, options) => held.page(settled(t, "read.page"), q, limit, options),
    rows: (t, q) => held.rows(settled(t, "read.rows"), q),
    count: (t, q) => held.count(settled(t, "read.count"), q),
  });

  const store = {
    /** The session id. */
    get id() {
      return info.id;
    },
    /**
     * The session this store split off (its driver lost the lease, js/sync.js):
     * `{ id, seq }`, the original session's id and the last seq both share;
     * null for a store that never split.
     */
    get origin() {
      // Closed, fenced or stopped: the last known, as head does (a getter
      // that threw would break a listener that only reads it).
      return gate.closed || gate.broken ? lastOrigin : readOrigin();
    },
    /** The last committed seq (0 for a new store). */
    get head() {
      if (gate.closed || gate.broken) return gate.lastHead;
      try {
        const h = core.head();
        gate.lastHead = typeof h === "string" ? Number(h) : h;
      } catch { /* keep the last known head */ }
      return gate.lastHead;
    },
    /**
     * The owner of an object address. The same address gives the same owner.
     * `adopt(seq, ops)` runs inside each of its commit steps, with the
     * commit's ops as the outbox records them.
     * @example const fileHistory = store.object({ host: "session", type: "file-history" }, { adopt(seq, ops) { view.apply(ops); } });
     */
    object(address, hooks) {
      gate.checkOpen("store.object");
      const name = ownerName(address);
      if (hooks !== undefined && (hooks === null || typeof hooks !== "object" || (hooks.adopt !== undefined && typeof hooks.adopt !== "function"))) {
        throw invalidArgs(`store.object(${name}): the second argument must be { adopt(seq, ops)?, checkpointWhen? }, got ${describe(hooks)}`);
      }
      refuseUnknownOptions(hooks, ["adopt", "checkpointWhen"], `store.object(${name})`);
      const known = owners.get(name);
      if (known) {
        if (hooks !== undefined) throw invalidArgs(`store.object(${name}): the owner is already open; pass its hooks only the first time`);
        return known;
      }
      const o = makeOwner(parts, name, address, hooks);
      owners.set(name, o);
      return o;
    },
    /**
     * The low-level commit seam: `writes` are wire ops, `adopt(seq)` runs
     * once, synchronously, after the commit is durable and before the next
     * commit starts. With an idle queue it has run before this returns.
     * An empty `writes` commits nothing: it resolves to the head once the
     * commits queued before it have run, and `adopt` is not called.
     * @example const seq = await store.commit([{ op: "put", table: "notes/items", row: { id: "n1" } }], (seq) => { view.seq = seq; }, ctx);
     */
    commit(writes, adopt, ctx) {
      try {
        gate.checkOpen("store.commit");
        if (!Array.isArray(writes)) throw invalidArgs(`store.commit: writes must be an array of ops, got ${describe(writes)}`);
        if (adopt !== undefined && adopt !== null && typeof adopt !== "function") {
          throw invalidArgs(`store.commit: adopt must be a function (seq) => void, got ${describe(adopt)}`);
        }
        const plain = plainData(writes, "ops");
        refuseUnknownFields(plain);
        const ops = encodeJson(plain, "ops");
        const meta = commitContext("store", ctx, "store.commit");
        if (ops === "[]") return queue.after(() => gate.lastHead);
        const schema = writes.some((w) => w !== null && typeof w === "object" && SCHEMA_OPS.has(w.op));
        return queue.step(
          () => {
            const seq = gate.commitOps("store.commit", "store", meta, toWire(ops));
            if (schema) gate.schema++;
            return seq;
          },
          adopt ? (seq) => adopt(seq) : undefined,
        );
      } catch (e) {
        return Promise.reject(e);
      }
    },
    /**
     * A value computed synchronously from committed tables by
     * `fn(read)`; recomputed in the flush after each commit that touched
     * what it read, when someone holds it. (js/derive.js)
     * @example const count = store.derive("count", (read) => read.count(notes));
     */
    derive(name, fn) {
      gate.checkOpen("store.derive");
      return live.derives.define(name, fn);
    },
    /**
     * Runs several reads on one consistent state: the commit queue waits
     * while the callback runs, and its commits run afterwards in order.
     * The callback starts once the commits asked for before the call have
     * run (a read inside another's callback starts at once). Do not await
     * a commit, a snapshot, a restore or close() of this store inside it.
     * @example const [a, n] = await store.read(async (r) => [await r.get(edits, "e1"), await r.count(edits)]);
     */
    async read(fn) {
      gate.checkOpen("store.read");
      if (typeof fn !== "function") throw invalidArgs(`store.read: expected an async function (r) => ..., got ${describe(fn)}`);
      // Behind the commits queued before it, so that they wait for the
      // reads already running and not for those that begin after them.
      const turn = holdInTurn();
      try {
        if (turn.ready) await turn.ready;
        const scope = { on: true };
        try {
          return await (inRead ? inRead.run(scope, () => fn(reader)) : fn(reader));
        } finally {
          scope.on = false;
        }
      } finally {
        turn.release();
      }
    },
    /**
     * A short digest of the content at the current head (every table's
     * schema and rows, documents, blobs; not the head or the outbox): equal
     * content gives equal fingerprints on every backend, replicas included.
     * @example const fp = await store.fingerprint();
     */
    async fingerprint() {
      gate.checkOpen("store.fingerprint");
      const tables = gate.call("store.fingerprint", () => core.fingerprint());
      return blobStorageCall("store.fingerprint", () => contentFingerprint(tables, blobs.backend, blobs.sha256));
    },
    /**
     * What nearest keeps of vector columns in the core (docs/architecture.md,
     * "The vector cache"): `{ budget, bytes, builds }`: the most bytes it may
     * hold (openStore's `vectorCache`), the bytes it holds now, and how many
     * columns it has built since the store opened.
     * @example const { bytes } = store.vectorCache();
     */
    vectorCache() {
      gate.checkOpen("store.vectorCache");
      return JSON.parse(gate.call("store.vectorCache", () => core.vectorCache()));
    },
    /**
     * Bytes named by their sha256: put, putWithHash, get, has, list
     * (js/blobs.js). Kept beside the store for its whole session; a put
     * resolves once the blob is durable, before any commit that names it.
     * @example const hash = await store.blobs.put(bytes); await notes.put({ id: "n1", file: hash });
     */
    blobs: makeBlobs(blobs.backend, {
      sha256: blobs.sha256,
      checkOpen(what) {
        gate.checkOpen(what);
        if (gate.broken) throw gate.broken;
      },
    }),
    /**
     * The store as one tar archive at its head once the commits asked for
     * before the call have run (docs/formats.md, "Archive"): a
     * ReadableStream of bytes. The commit queue is held until
     * the stream was read to its end or cancelled; commits asked for
     * meanwhile wait, then run in order. `onProgress({ done, total, bytes })`
     * counts rows and outbox records, and the bytes made so far.
     * @example await new Response(store.export()).arrayBuffer();
     */
    export(options = {}) {
      return exportArchive({ gate, hold: holdInTurn, info, blobs }, options);
    },
    /**
     * Takes a snapshot of the content at the current head (after the
     * commits queued before it): `{ id, seq, at, label }`. The last
     * `keepSnapshots` (default 10) are kept. A memory store copies its rows
     * in memory; a sqlite file's is a copy of the file in
     * `<file>.snapshots/`, an opfs store's a copy of its database in its
     * OPFS folder `snapshots/`, a durable store's copies of its tables
     * inside the Durable Object's SQLite (docs/api.md gives each backend's
     * cost).
     * @example const snap = await store.snapshot({ label: "before the import" });
     */
    async snapshot(options) {
      if (!snaps) throw noSnapshots("store.snapshot");
      return snaps.snapshot(options);
    },
    /**
     * The kept snapshots, newest first: `[{ id, seq, at, label }]`.
     * @example for (const s of await store.snapshots()) console.log(s.id, s.seq, s.label);
     */
    async snapshots() {
      if (!snaps) throw noSnapshots("store.snapshots");
      return snaps.snapshots();
    },
    /**
     * Gives back the content of snapshot `id` (the newest when omitted) in
     * one commit: it first snapshots the current state (so `restore()` again
     * undoes it), then commits a marker op and the puts and deletes that
     * make the rows the snapshot's (docs/formats.md, "Restore"); adopt
     * hooks, watches, links and replicas see that commit. Resolves to
     * `{ seq, snapshot, undo }` (undo: the id of the snapshot taken first).
     * @example const { undo } = await store.restore(snap.id); await store.restore(undo);
     */
    async restore(id, ctx) {
      if (!snaps) throw noSnapshots("store.restore");
      return snaps.restore(id, ctx);
    },
    /**
     * Runs `fn()` holding the advisory lock `name` and resolves to its
     * value; the lock is released when fn settles. It reaches every
     * process sharing a sqlite file (a lock file in `<file>.locks/`), every
     * tab of an OPFS store (Web Locks), and the callers of this store
     * (memory, a Durable Object's requests). Waiting longer than
     * `timeout` ms (default: no limit) rejects with `lock/timeout`.
     * @example await store.lock("nightly-import", async () => { await importAll(); }, { timeout: 5000 });
     */
    async lock(name, fn, options = {}) {
      gate.checkOpen("store.lock");
      const timeout = lockArgs(name, fn, options);
      return withLocks(lockLayers, name, timeout, fn);
    },
    /**
     * What commits changed, from the retained outbox (js/history.js):
     * `{ seq }` resolves to that commit's record { seq, from, at, owner,
     * actor?, ops } (not_found when it was trimmed or is beyond the head);
     * `{ owner?, actor?, from?, to?, after?, limit? }` to one page
     * { commits, next? } of the matching records, oldest first; pass next
     * as `after`.
     * @example const { ops, actor } = await store.log({ seq: 42 });
     * @example const { commits, next } = await store.log({ owner: "notes", actor: { id: "ana" }, limit: 20 });
     */
    log: makeLog(gate),
    /**
     * A read view of the whole store as it was at `seq`: table(name | handle
     * | def) with get, page, rows, count; documents(owner) with find, load,
     * list, versions; fingerprint(); close(). Built in memory from the
     * newest snapshot at or below seq (if any), then the retained outbox
     * records after it up to seq: its cost grows with the store's size at
     * that snapshot plus the history replayed. not_found when neither a
     * snapshot nor the outbox covers seq.
     * @example const view = await store.at(12); const n = await view.table(items).count(); view.close();
     */
    async at(seq) {
      gate.checkOpen("store.at");
      if (!openViewCore) throw invalidArgs("store.at: this store was made without a runtime to open a view in");
      return openView(gate, seq, openViewCore, handles, snaps);
    },
    outbox: Object.freeze({
      /**
       * The commits after seq `after`, at most `limit` of them:
       * { from, to, commits: [record, ...] }.
       * @example const batch = await store.outbox.read(0, 100); await relay.send(batch);
       */
      async read(after = 0, limit = 100) {
        gate.checkOpen("outbox.read");
        return outboxRead(after, limit, "outbox.read");
      },
      /**
       * Removes the records up to seq `upTo` (after the relay acknowledged
       * them). Resolves to the number removed.
       * @example await store.outbox.trim(batch.to);
       */
      async trim(upTo) {
        gate.checkOpen("outbox.trim");
        if (!Number.isSafeInteger(upTo) || upTo < 0) throw invalidArgs(`outbox.trim: upTo must be a seq (a safe integer >= 0), got ${describe(upTo)}`);
        return Number(gate.call("outbox.trim", () => core.outboxTrim(upTo)));
      },
    }),
    /**
     * Closes the store after the commits already queued. Later calls reject
     * with `closed`. Closing twice is fine.
     * @example await store.close();
     */
    close() {
      if (!closePromise) {
        gate.closing = true;
        // The snapshots' list writes first: a copy whose .json is not
        // written is deleted by the next open.
        closePromise = queue.after(() => snaps?.idle()).then(() => queue.after(() => {
          const failed = closeCoreOf(gate, session, "store");
          live.close();
          if (failed) throw failed;
        }));
      }
      return closePromise;
    },
    [Symbol.asyncDispose]() {
      return store.close();
    },
  };

  // What the sync driver (js/sync.js) needs of the store, beside its API.
  const sync = {
    running: false,
    queue,
    onCommit(fn) {
      commitListeners.add(fn);
      return () => commitListeners.delete(fn);
    },
    origin: () => store.origin,
    // The driver lost its lease: this store becomes session `id` (Store::Split).
    split(id, origin) {
      gate.checkOpen("sync.split");
      gate.call("sync.split", () => core.split(id, encodeJson(origin, "origin")));
      info.id = id;
    },
    // A batch of the session's own records pulled back after a power loss.
    restoreBatch(batch) {
      gate.checkOpen("sync.restoreBatch");
      const r = JSON.parse(gate.call("sync.restoreBatch", () => core.restoreBatch(encodeJson(batch, "batch", MAX_BATCH_DEPTH))));
      gate.lastHead = r.head;
      return r;
    },
  };
  internals.set(store, { live, io, sync, queue, checkOpen: (what) => gate.checkOpen(what) });
  return store;
}

/**
 * Restores an archive made by `store.export()` as the store of
 * `openOptions` and opens it: a new store (memory), or a new generation
 * built beside the store (runtime.generations: a sqlite file in Node, an
 * OPFS folder in a browser, a staged copy in a Durable Object) and switched
 * in only once the whole archive was read and checked (every table's rows
 * and digest, every blob's hash, the fingerprint). The session id, the head
 * and the retained outbox are the archive's. A hostile or broken archive is
 * `invalid/archive` (a newer format `schema/newer`) and the previous store
 * stays as it was. Close the store at those options first.
 *
 * @example
 * const store = await importStoreWith(nodeRuntime, fs.createReadStream("s.tar"), { backend: "sqlite", path: "s.sqlite" });
 */
export async function importStoreWith(runtime, archive, openOptions, options = {}) {
  let begun;
  try {
    begun = await beginImport(runtime, openOptions, options);
  } catch (e) {
    // Refused before the archive is read: it is stopped all the same (an
    // unread store.export() stream would hold that store's commits).
    await cancelArchive(archive, e);
    throw e;
  }
  const { onProgress, snapshotting, rest, gen } = begun;
  let opened = null;
  const closeCore = () => {
    if (!opened) return;
    try { opened.core.close(); } catch { /* closing anyway */ }
    try { opened.core.delete(); } catch { /* already freed */ }
    try { opened.session?.release(); } catch { /* released anyway */ }
    opened = null;
  };
  let blobs = null;
  const target = {
    async open(manifest) {
      const o = { ...rest, id: manifest.session, ...(gen ? gen.options : {}) };
      opened = await openCore(runtime, o, "importStore");
      blobs = gen?.blobs ?? opened.blobs;
      return makeGate(opened.core, 0);
    },
    blobs() {
      return blobs;
    },
  };
  try {
    const read = await readArchive(archive, target, onProgress);
    if (!gen) {
      const { core, session, snapshots, locks } = opened;
      opened = null;
      const shelf = { shelf: snapshots, known: [], ...snapshotting };
      return makeStore(core, { id: read.manifest.session, head: read.manifest.head }, session, { blobs, snapshots: shelf, locks, openViewCore: viewCoreOf(runtime), AsyncLocalStorage: runtime.AsyncLocalStorage });
    }
    await gen.commit({ ...read, core: opened.core, closeCore });
    closeCore();
  } catch (e) {
    closeCore();
    if (gen) await gen.discard().catch(() => {});
    throw e;
  }
  return openStoreWith(runtime, rest);
}

// importStore's checks of its options, and the new generation begun.
async function beginImport(runtime, openOptions, options) {
  if (openOptions === null || typeof openOptions !== "object") {
    throw invalidArgs(`importStore: openOptions must be an object such as { backend: "memory" }, got ${describe(openOptions)}`);
  }
  if (options === null || typeof options !== "object") {
    throw invalidArgs(`importStore: options must be { onProgress }, got ${describe(options)}`);
  }
  refuseUnknownOptions(options, ["onProgress"], "importStore");
  const { onProgress } = options;
  if (onProgress !== undefined && typeof onProgress !== "function") {
    throw invalidArgs(`importStore: onProgress must be a function ({ done, total, bytes, blobBytes, blobTotal }) => void, got ${describe(onProgress)}`);
  }
  const { backend } = openOptions;
  if (!runtime.backends.includes(backend)) {
    const names = runtime.backends.map((b) => JSON.stringify(b)).join(" or ");
    throw invalidArgs(`importStore: backend must be ${names} here, got ${describe(backend)}`);
  }
  const snapshotting = snapshotOptions(openOptions, "importStore");
  const { id: _ignored, ...rest } = openOptions;
  // null: the store is built in place (memory, sqlite ":memory:").
  const gen = await runtime.generations.begin(openOptions);
  return { onProgress, snapshotting, rest, gen };
}
