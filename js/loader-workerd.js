// The workerd runtime of the package (Cloudflare Workers, Durable Objects,
// Miniflare): the wasm core arrives as an imported WebAssembly.Module (the
// platform compiles it at deploy time; a Worker may not compile wasm from
// bytes, and has no fs), and the `durable` backend reaches a Durable
// Object's SQLite through wasm/durable_library.js.
//
// Each durable store registers its ctx.storage here under a number (the
// handle the core's open options carry). Every core call that writes (open,
// commit, txCommit, outboxTrim, and a replica's applyBatch,
// recordDivergence and setHostNote) runs inside ctx.storage.transactionSync: the core's
// transaction joins it, and a core that rolls back makes the callback throw,
// so the host rolls back the data and the outbox record together.

import wasmModule from "../dist/onestore-core.wasm";
import factory from "../dist/onestore-core.mjs";

import { ErrorCodes, StoreError, invalidArgs, unwrap } from "./errors.js";
import { encodeJson } from "./encode.js";
import { copyRestored } from "./archive.js";
import { describe } from "./schema.js";
import { memoryBlobs, webSha256 } from "./blobs.js";
import { durableBlobs } from "./blobs-durable.js";
import { durableSnapshots } from "./snapshots-durable.js";
import { memorySnapshots } from "./snapshots.js";

const stores = new Map();  // handle -> newState(storage)
let nextHandle = 1;
const registry = Object.freeze({ get: (handle) => stores.get(handle) });

// The state of one durable store as wasm/durable_library.js reads it.
//
// `check` answers the core's checks: the epoch in _meta, which each commit
// compares with the one its store's open wrote (fencing: a newer opener
// fences an older store). Only an open writes the epoch, and every store on
// a Durable Object's storage lives in its one isolate, so an answer read
// once stays true until the next open in this isolate: `known` keeps it (a
// commit's check then runs no statement), and every open forgets what every
// store knows (`forgetChecks`; a store may be opened through a wrapper of
// ctx.storage, so the storage object does not tell which stores share a
// database). A check outside a store's calls (`remember` false) runs its
// statement. Its params are strings (no BLOB).
function newState(storage, inTransaction) {
  const state = {
    storage, inTransaction, began: false, rollback: false,
    remember: false,
    // A check's SQL -> { params (joined by NUL), got: its first cell, a
    // string, or null for no row }: the last one read for that SQL.
    known: new Map(),
    check(text, params, expected) {
      const key = params.join("\u0000");
      const was = state.remember ? state.known.get(text) : undefined;
      if (was !== undefined && was.params === key) return was.got === expected;
      const first = storage.sql.exec(text, ...params).raw().next();
      const got = first.done ? null : String(first.value[0]);
      if (state.remember) state.known.set(text, { params: key, got });
      return got === expected;
    },
  };
  return state;
}

function forgetChecks() {
  for (const st of stores.values()) st.known.clear();
}

let modulePromise = null;

/**
 * The wasm module (the factory's instance), instantiated once per isolate
 * from the imported WebAssembly.Module and shared by every store in it.
 *
 * @example
 * const mod = await loadWorkerdCore(); const core = new mod.Core();
 */
export function loadWorkerdCore() {
  if (!modulePromise) {
    modulePromise = factory({
      onestoreDurable: registry,
      // No locateFile: the glue has no import.meta (wasm/flags.cmake), so it
      // builds no URL that workerd, whose import.meta.url is no base URL,
      // would refuse.
      instantiateWasm(imports, done) {
        WebAssembly.instantiate(wasmModule, imports).then((instance) => done(instance, wasmModule));
        return {};  // Emscripten's "instantiating asynchronously" answer
      },
    }).catch((e) => {
      modulePromise = null;
      throw e;
    });
  }
  return modulePromise;
}

function isStorage(s) {
  return s !== null && typeof s === "object" && typeof s.transactionSync === "function" &&
    s.sql !== null && typeof s.sql === "object" && typeof s.sql.exec === "function";
}

/**
 * Open options as the core takes them. A durable store's `storage`
 * (ctx.storage of a Durable Object with SQLite) is registered and replaced by
 * its handle.
 *
 * @example
 * await prepareWorkerdOpen({ backend: "durable", storage: ctx.storage }) // { backend: "durable", handle: 1 }
 */
export async function prepareWorkerdOpen(options) {
  const out = { ...options };
  if (out.backend === "durable") {
    if (!isStorage(out.storage)) {
      throw invalidArgs(`openStore: a durable store needs storage: ctx.storage of a Durable Object with SQLite ` +
        `(new_sqlite_classes in wrangler.toml), got ${describe(out.storage)}`);
    }
    const handle = nextHandle++;
    stores.set(handle, newState(out.storage, false));
    out.handle = handle;
  }
  delete out.storage;
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}

const ROLLBACK = Symbol("onestore: roll back the host transaction");

// A Durable Object can be dropped without closing its store (eviction, a
// reset): once the store's core is unreachable, free its wasm memory and
// forget its storage, which the registry would otherwise hold for the life of
// the isolate.
const dropped = typeof FinalizationRegistry === "function"
  ? new FinalizationRegistry(({ core, handle }) => {
    stores.delete(handle);
    try { core.close(); core.delete(); } catch { /* already closed and freed */ }
  })
  : null;

/**
 * The core as the store calls it: for a durable store, the writing calls run
 * inside ctx.storage.transactionSync; closing forgets the storage.
 */
export function attachWorkerdCore(core, wire) {
  if (wire.backend !== "durable") return core;
  const handle = wire.handle;
  const state = stores.get(handle);
  // `opens`: the call writes the epoch (an open): every store's checks are
  // read again (newState). Any other call may answer them from `known`.
  const inTransaction = (fn, opens) => () => {
    let answer;
    if (opens) forgetChecks();
    try {
      state.storage.transactionSync(() => {
        state.inTransaction = true;
        state.remember = !opens;
        state.began = false;
        state.rollback = false;
        try {
          answer = fn();
        } finally {
          state.inTransaction = false;
          state.remember = false;
        }
        // The core rolled back (or never ended its transaction): undo every
        // statement of the call.
        if (state.rollback || state.began) throw ROLLBACK;
      });
    } catch (e) {
      if (e === ROLLBACK) return answer;
      if (answer !== undefined && !String(answer).startsWith("!")) {
        // The core committed, then the host's COMMIT failed: the outcome is
        // unknown and the store stops.
        throw new StoreError(ErrorCodes.StorageFailed, `durable: the Durable Object's transaction failed to commit: ${e?.message ?? e}`, { cause: e });
      }
      throw e;
    }
    return answer;
  };
  const wrapped = {
    open: (o) => inTransaction(() => core.open(o), true)(),
    commit: (ops, meta) => inTransaction(() => core.commit(ops, meta))(),
    txCommit: (tx, ops, meta) => inTransaction(() => core.txCommit(tx, ops, meta))(),
    outboxTrim: (upTo) => inTransaction(() => core.outboxTrim(upTo))(),
    applyBatch: (batch) => inTransaction(() => core.applyBatch(batch))(),
    recordDivergence: () => inTransaction(() => core.recordDivergence())(),
    promote: () => inTransaction(() => core.promote())(),
    split: (id, origin) => inTransaction(() => core.split(id, origin))(),
    restoreBatch: (batch) => inTransaction(() => core.restoreBatch(batch))(),
    snapshotRestoreCopies: (copies, marker, meta) => inTransaction(() => core.snapshotRestoreCopies(copies, marker, meta))(),
    setHostNote: (name, value) => inTransaction(() => core.setHostNote(name, value))(),
    close: () => {
      try { return core.close(); } finally { stores.delete(handle); }
    },
  };
  const proxy = new Proxy(core, {
    get(target, prop) {
      if (Object.prototype.hasOwnProperty.call(wrapped, prop)) return wrapped[prop];
      const v = target[prop];
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  dropped?.register(proxy, { core, handle }, proxy);
  wrapped.delete = () => {
    dropped?.unregister(proxy);
    stores.delete(handle);
    return core.delete();
  };
  return proxy;
}

/**
 * Where a store's blobs live (js/blobs.js): a durable store's in its Durable
 * Object's SQLite (table _blobs), a memory store's in memory.
 */
export function openWorkerdBlobs(options, wire) {
  return { backend: wire.backend === "durable" ? durableBlobs(options.storage) : memoryBlobs(), sha256: webSha256 };
}

/**
 * Where a store's snapshots are (js/snapshots.js): a durable store's in
 * copies of its tables inside the Durable Object's SQLite
 * (js/snapshots-durable.js), a memory store's in memory.
 */
export function openWorkerdSnapshots(wire) {
  if (wire.backend !== "durable") return memorySnapshots();
  return durableSnapshots(stores.get(wire.handle).storage);
}

/**
 * The new generation of a durable store that importStore builds. A Durable
 * Object has one SQLite, so the generation is staged: the archive is read
 * into a memory store (the rows, checked) and the table _blobs_import (the
 * blobs, each checked), and the switch is one transactionSync: every table
 * of the old store is dropped, _blobs_import becomes _blobs, and a durable
 * core is opened and given the staged tables, rows, outbox and head, and
 * checked again against the manifest's digests. An error anywhere rolls the
 * whole switch back; a Durable Object reset during the reading leaves only
 * _blobs_import, which the next import drops.
 *
 * @example const gen = await durableGenerations.begin({ backend: "durable", storage: ctx.storage });
 */
const durableGenerations = Object.freeze({
  async begin(openOptions) {
    if (openOptions.backend !== "durable") return null;
    const { storage } = openOptions;
    if (!isStorage(storage)) {
      throw invalidArgs(`importStore: a durable store needs storage: ctx.storage of a Durable Object with SQLite, got ${describe(storage)}`);
    }
    storage.sql.exec("DROP TABLE IF EXISTS _blobs_import");
    return {
      options: { backend: "memory" },
      blobs: { backend: durableBlobs(storage, "_blobs_import"), sha256: webSha256 },
      async commit({ manifest, outboxText, core: staged, closeCore }) {
        const mod = await loadWorkerdCore();
        storage.transactionSync(() => switchDurable(mod, storage, manifest, outboxText, staged));
        closeCore();
      },
      async discard() {
        storage.sql.exec("DROP TABLE IF EXISTS _blobs_import");
      },
    };
  },
});

// The switch, inside the caller's transactionSync (see durableGenerations).
function switchDurable(mod, storage, manifest, outboxText, staged) {
  const tables = storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray().map((r) => r.name)
    .filter((n) => !n.startsWith("_cf_") && !n.startsWith("sqlite_") && n !== "_blobs_import");
  for (const n of tables) storage.sql.exec(`DROP TABLE "${n.replaceAll('"', '""')}"`);
  storage.sql.exec("CREATE TABLE IF NOT EXISTS _blobs_import (hash TEXT NOT NULL, part INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (hash, part)) WITHOUT ROWID");
  storage.sql.exec("ALTER TABLE _blobs_import RENAME TO _blobs");
  const handle = nextHandle++;
  const state = newState(storage, true);
  forgetChecks();  // this open writes the epoch (newState)
  stores.set(handle, state);
  const core = new mod.Core();
  // Each core call ends its own transaction (joined to this one); one that
  // rolled back, or left one open, fails the switch.
  const call = (what, fn) => {
    const answer = unwrap(fn());
    if (state.rollback || state.began) throw new StoreError(ErrorCodes.StorageFailed, `importStore: the durable switch failed at ${what}`);
    return answer;
  };
  try {
    call("open", () => core.open(encodeJson({ backend: "durable", handle, id: manifest.session }, "options")));
    copyRestored(staged, core, manifest, outboxText, call);
  } finally {
    try { core.close(); } catch { /* closing anyway */ }
    try { core.delete(); } catch { /* already freed */ }
    stores.delete(handle);
  }
}

/** The runtime handed to openStoreWith. */
export const workerdRuntime = Object.freeze({
  backends: ["memory", "durable"],
  load: loadWorkerdCore,
  prepare: prepareWorkerdOpen,
  attach: attachWorkerdCore,
  openBlobs: openWorkerdBlobs,
  openSnapshots: openWorkerdSnapshots,
  generations: durableGenerations,
});
