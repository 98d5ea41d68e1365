// The workerd runtime of the package (Cloudflare Workers, Durable Objects,
// Miniflare): the wasm core arrives as an imported WebAssembly.Module (the
// platform compiles it at deploy time; a Worker may not compile wasm from
// bytes, and has no fs), and the `durable` backend reaches a Durable
// Object's SQLite through wasm/durable_library.js.
//
// Each durable store registers its ctx.storage here under a number (the
// handle the core's open options carry). Every core call that writes (open,
// commit, txCommit, commitAs, txCommitAs, outboxTrim, and a replica's applyBatch,
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

// The state of one durable store as the durable runtime below reads it.
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
    // The SQL of the store's statements, by the id the C side gave each
    // (its first crossing carries [id, "SQL"]; later ones the id), and
    // whether each is a write whose cursor has nothing left to run
    // (`writesAtExec`), read once per id.
    texts: [],
    done: [],
    // The rows of the page being read, kept here (answerRows) for `page`
    // in attachWorkerdCore.
    held: null,
    // A check's SQL -> { params (joined by NUL), got: its first cell, a
    // string, or null for no row }: the last one read for that SQL.
    known: new Map(),
    check(text, params, expected) {
      const was = state.remember ? state.known.get(text) : undefined;
      if (was !== undefined && sameParams(was.params, params)) return was.got === expected;
      const first = storage.sql.exec(text, ...params).raw().next();
      const got = first.done ? null : String(first.value[0]);
      if (state.remember) state.known.set(text, { params, got });
      return got === expected;
    },
  };
  return state;
}

// A check's params (strings) equal those it was last read with.
function sameParams(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// Whether `sql.exec` of this SQL leaves its cursor nothing to run: an
// INSERT, UPDATE, DELETE or REPLACE alone (no `;`) without RETURNING.
// workerd runs a statement's first step inside `exec` (its writes are made
// and its errors thrown there), and SQLite runs such a statement to its end
// in that step, so reading its cursor, one more call into the runtime per
// statement, adds nothing. Anything else (a SELECT, a PRAGMA, a statement
// with RETURNING, any text the pattern does not match) is read to its end
// as before. tests/edge/durable-batch.test.js checks both kinds.
function writesAtExec(sql) {
  return /^\s*(INSERT|UPDATE|DELETE|REPLACE)\b/i.test(sql) && !/\bRETURNING\b|;/i.test(sql);
}

function forgetChecks() {
  for (const st of stores.values()) st.known.clear();
}

// ---- the calls of wasm/durable_connection.cc (through wasm/durable_library.js) ----
//
// `mod` is the module: its heap (mod.HEAPU8, replaced when memory grows, so
// read again after every malloc), mod._malloc. An answer is a malloc'ed
// buffer that the C side frees: its length (4 bytes), then "[0]", the binary
// answer of a batch's last statement (`answerRows`), "!<n>!" and the host's
// error message for statement n, or "?<n>" for a check that found another
// value; or the address 1, "[0]" without an allocation. No exception leaves
// these functions (it would cross into wasm).

// ignoreBOM: a text that starts with U+FEFF keeps it.
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });
const encoder = new TextEncoder();

// A DataView of the module's heap, made again when memory grows (the heap's
// buffer is then another one).
let heapView = null;
function viewOf(heap) {
  if (heapView === null || heapView.buffer !== heap.buffer) heapView = new DataView(heap.buffer);
  return heapView;
}

function stateOf(handle) {
  const st = stores.get(handle);
  if (!st) throw new Error(`no Durable Object storage is registered as handle ${handle}`);
  return st;
}

function errorText(e) {
  try {
    return e?.message ? String(e.message) : String(e);
  } catch {
    return "unknown JS error";
  }
}

// A text answer: a new malloc'ed buffer of its length and its UTF-8 bytes.
function give(mod, text) {
  const bytes = encoder.encode(text);
  const q = mod._malloc(bytes.length + 4);
  if (!q) return 0;
  mod.HEAPU32[q >> 2] = bytes.length;
  mod.HEAPU8.set(bytes, q + 4);
  return q;
}

// Writes text `v` at heap[at...] (room: 3 bytes a UTF-16 unit); its byte
// count. A short ASCII text (the common cell) by a loop, anything else by
// TextEncoder.encodeInto (one call costs more than a short loop).
function putText(heap, at, v) {
  const n = v.length;
  if (n < 64) {
    let i = 0;
    for (; i < n; i++) {
      const u = v.charCodeAt(i);
      if (u > 127) break;
      heap[at + i] = u;
    }
    if (i === n) return n;
  }
  return encoder.encodeInto(v, heap.subarray(at, at + 3 * n)).written;
}

// The answer of a cursor, binary (durable_connection.cc, BinaryReader): '#',
// the changes count (f64), the columns and the rows (u32 each), then each
// cell: 0 null; 1 an int, 2 a num, each an f64 (an integral number within
// int64 is an int, as JSON text would read; a number that is not finite is
// null, as JSON.stringify writes it); 3 a text, 4 a BLOB, each its length
// (u32) and its bytes. Little-endian. `st` given (a page whose rows stay
// here, SqlRows::hold): the rows are kept in st.held for the page's wrapper
// (attachWorkerdCore) and the answer is 'H', the changes, the columns, the
// rows kept, then the last two rows only, as above.
function answerRows(mod, sql, cursor, countChanges, wantRows, st) {
  const rows = [];
  let columns = 0;
  let bound = 21;
  const raw = cursor.raw();
  for (let row = raw.next(); !row.done; row = raw.next()) {
    if (!wantRows) continue;
    const cells = row.value;
    columns = cells.length;
    for (let c = 0; c < cells.length; c++) {
      const v = cells[c];
      bound += typeof v === "string" ? 6 + 3 * v.length : v !== null && typeof v === "object" ? 5 + v.byteLength : 9;
    }
    rows.push(cells);
  }
  const changes = countChanges ? sql.exec("SELECT changes()").raw().next().value[0] : 0;
  const first = st ? Math.max(0, rows.length - 2) : 0;
  const q = mod._malloc(bound + 4);
  if (!q) return 0;
  const heap = mod.HEAPU8;
  const dv = new DataView(heap.buffer);
  let at = q + 4;
  heap[at] = st ? 72 : 35;
  dv.setFloat64(at + 1, changes, true);
  dv.setUint32(at + 9, columns, true);
  at += 13;
  if (st) {
    st.held = rows;
    dv.setUint32(at, rows.length, true);
    at += 4;
  }
  dv.setUint32(at, rows.length - first, true);
  at += 4;
  for (let r = first; r < rows.length; r++) {
    const cells = rows[r];
    for (let c = 0; c < cells.length; c++) {
      const v = cells[c];
      if (typeof v === "string") {
        const n = putText(heap, at + 5, v);
        heap[at] = 3;
        dv.setUint32(at + 1, n, true);
        at += 5 + n;
      } else if (typeof v === "number" && Number.isFinite(v)) {
        heap[at] = Number.isInteger(v) && v >= -9223372036854775808 && v < 9223372036854775808 ? 1 : 2;
        dv.setFloat64(at + 1, v, true);
        at += 9;
      } else if (v !== null && typeof v === "object") {
        const b = ArrayBuffer.isView(v) ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : new Uint8Array(v);
        heap[at] = 4;
        dv.setUint32(at + 1, b.length, true);
        heap.set(b, at + 5);
        at += 5 + b.length;
      } else {
        heap[at++] = 0;
      }
    }
  }
  mod.HEAPU32[q >> 2] = at - q - 4;
  return q;
}

// The runtime the module factory gets as `onestoreDurable`.
const durableRuntime = Object.freeze({
  // A batch of statements, run in order (durable_connection.cc,
  // onestore_durable_batch; wasm/ABI.md "The durable batch"): binary, at
  // heap[at, at + length): the mode, the entry count, a statement word an
  // entry (its SQL's id; the SQL itself follows the words on the id's first
  // crossing), then each entry's params, each a tag and its value: 0 null,
  // 1 a number (f64), 2 a text (its start and end in `chars`, the UTF-8
  // bytes at heap[charsAt, charsAt + charsLength] decoded with one call), 3
  // a BLOB (bound as an ArrayBuffer of its bytes), 4 a text decoded alone;
  // a check's expected text after its params. Every id is resolved before
  // anything runs.
  batch(mod, handle, at, length, charsAt, charsLength) {
    let n = 0;
    try {
      const st = stateOf(handle);
      const sql = st.storage.sql;
      const texts = st.texts;
      const done = st.done;
      const heap = mod.HEAPU8;
      const dv = viewOf(heap);
      const mode = dv.getUint32(at, true);
      const count = dv.getUint32(at + 4, true);
      const words = at + 8;
      let p = words + 4 * count;
      const sqls = new Array(count);
      for (let i = 0; i < count; i++) {
        const w = dv.getUint32(words + 4 * i, true);
        const id = w & 0x3fffffff;
        if (w & 0x40000000) {
          const len = dv.getUint32(p, true);
          const text = utf8.decode(heap.subarray(p + 4, p + 4 + len));
          p += 4 + len;
          if (id !== 0x3fffffff) {
            texts[id] = text;
            done[id] = writesAtExec(text);
          }
          sqls[i] = text;
        } else {
          if (texts[id] === undefined) throw new Error(`durable: no statement text kept under id ${id}`);
          sqls[i] = texts[id];
        }
      }
      const chars = charsLength > 0 ? utf8.decode(heap.subarray(charsAt, charsAt + charsLength)) : "";
      for (n = 1; n <= count; n++) {
        const w = dv.getUint32(words + 4 * (n - 1), true);
        const text = sqls[n - 1];
        const pc = dv.getUint32(p, true);
        p += 4;
        const params = [];
        for (let k = 0; k < pc; k++) {
          const tag = heap[p];
          if (tag === 2) {
            params.push(chars.substring(dv.getUint32(p + 1, true), dv.getUint32(p + 5, true)));
            p += 9;
          } else if (tag === 1) {
            params.push(dv.getFloat64(p + 1, true));
            p += 9;
          } else if (tag === 0) {
            params.push(null);
            p += 1;
          } else {
            const from = p + 5;
            p = from + dv.getUint32(p + 1, true);
            params.push(tag === 3 ? heap.slice(from, p).buffer : utf8.decode(heap.subarray(from, p)));
          }
        }
        // A check (the epoch's): the runtime answers it, from what it knows
        // or by running it (`check`).
        if (w & 0x80000000) {
          const expected = chars.substring(dv.getUint32(p, true), dv.getUint32(p + 4, true));
          p += 8;
          if (!st.check(text, params, expected)) return give(mod, `?${n}`);
          continue;
        }
        const cursor = pc ? sql.exec(text, ...params) : sql.exec(text);
        if (n === count && mode) return answerRows(mod, sql, cursor, mode & 2, mode & 1, mode & 4 ? st : null);
        const id = w & 0x3fffffff;
        if (id === 0x3fffffff ? writesAtExec(text) : done[id]) continue;
        while (!cursor.next().done) { /* a cursor with rows: run it through */ }
      }
      return 1;  // "[0]", without an answer to allocate (durable_connection.cc)
    } catch (e) {
      return give(mod, `!${n}!${errorText(e)}`);
    }
  },

  // SQL text of one or more statements without parameters.
  exec(mod, handle, sqlPtr) {
    try {
      const heap = mod.HEAPU8;
      let end = sqlPtr;
      while (heap[end]) end++;
      // Consume the cursor: a multi-statement text runs as it is read.
      stateOf(handle).storage.sql.exec(utf8.decode(heap.subarray(sqlPtr, end))).toArray();
      return give(mod, "[0]");
    } catch (e) {
      return give(mod, `!${errorText(e)}`);
    }
  },

  // 0 when the runtime has a transactionSync open around this call.
  begin(handle) {
    const st = stores.get(handle);
    if (!st || !st.inTransaction) return -1;
    st.began = true;
    st.rollback = false;
    return 0;
  },

  end(handle, commit) {
    const st = stores.get(handle);
    if (!st) return;  // the store is gone; nothing to end
    st.began = false;
    if (!commit) st.rollback = true;
  },
});

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
      onestoreDurable: durableRuntime,
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
    // A class that is not SQLite-backed has sql.exec too, which throws:
    // said here as the setup it is, not as the storage failing.
    try {
      out.storage.sql.exec("SELECT 1");
    } catch (e) {
      throw invalidArgs(`openStore: the Durable Object's storage runs no SQL: its class must be SQLite-backed ` +
        `(new_sqlite_classes in wrangler.toml, useSQLite: true in Miniflare): ${e?.message ?? e}`);
    }
    const handle = nextHandle++;
    stores.set(handle, newState(out.storage, false));
    out.handle = handle;
    out.session = durableSession(out.storage);
  }
  delete out.storage;
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}

// The session of the store open on each Durable Object's storage. A second
// open on the same storage fences the first at once (js/store.js keeps the
// session; fenceWith sets `fence`): every later call of the first rejects
// with `fenced`, reads and exports too, and its links are told. Without it
// the first found out only at its next commit (the epoch), and went on
// reading, snapshotting and exporting at a head that was no longer the
// storage's.
const durableHeld = new WeakMap();  // storage -> session

function durableSession(storage) {
  durableHeld.get(storage)?.handOver();
  let ended = false;
  const session = {
    fence: null,
    handOver() {
      if (ended) return;
      session.fence?.(new StoreError(ErrorCodes.Fenced,
        "store (durable): another openStore on this Durable Object's storage took it over; this one is fenced (its commits are kept; use the new store)"));
      session.release();
    },
    release() {
      ended = true;
      if (durableHeld.get(storage) === session) durableHeld.delete(storage);
    },
  };
  durableHeld.set(storage, session);
  return session;
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

// Whether a writing call's answer says the core committed: a seq above 0
// (commitAs, txCommitAs: 0 is a failure, told by lastError), or any text but
// a failure ("!<code> <message>"; wasm/ABI.md).
function committed(answer) {
  if (typeof answer === "number") return answer > 0;
  return answer !== undefined && !String(answer).startsWith("!");
}

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
  const inTransaction = (fn, opens) => {
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
      if (committed(answer)) {
        // The core committed, then the host's COMMIT failed: the outcome is
        // unknown and the store stops.
        throw new StoreError(ErrorCodes.StorageFailed, `durable: the Durable Object's transaction failed to commit: ${e?.message ?? e}`, { cause: e });
      }
      throw e;
    }
    return answer;
  };
  const wrapped = {
    // A page whose rows stayed here (the core answers {"held":n,"next"?}:
    // SqliteBackend::HoldNextPage) is given as { rows, next?, peekRow? }, its rows the
    // host's own arrays (ints within 2^53 as numbers, beyond as text; json as
    // its text), as the core's JSON page would read; any other answer as it
    // is.
    page: (table, queryText, limit, after) => {
      state.held = null;
      let answer;
      let rows;
      try {
        answer = core.page(table, queryText, limit, after);
        rows = state.held;
      } finally {
        state.held = null;
      }
      if (rows === null || typeof answer !== "string" || !answer.startsWith('{"held":')) return answer;
      const { held, next } = JSON.parse(answer);
      // The core asked for one row more: with a next, its cells are the
      // page's peek row (js/reads.js gives its key to derives).
      const peekRow = rows.length > held ? rows[held] : undefined;
      rows.length = held;
      return next === undefined ? { rows } : { rows, next, peekRow };
    },
    open: (o) => inTransaction(() => core.open(o), true),
    commit: (ops, meta) => inTransaction(() => core.commit(ops, meta)),
    txCommit: (tx, ops, meta) => inTransaction(() => core.txCommit(tx, ops, meta)),
    commitAs: (ops, owner, at) => inTransaction(() => core.commitAs(ops, owner, at)),
    txCommitAs: (tx, ops, owner, at) => inTransaction(() => core.txCommitAs(tx, ops, owner, at)),
    outboxTrim: (upTo) => inTransaction(() => core.outboxTrim(upTo)),
    applyBatch: (batch) => inTransaction(() => core.applyBatch(batch)),
    recordDivergence: () => inTransaction(() => core.recordDivergence()),
    promote: () => inTransaction(() => core.promote()),
    split: (id, origin) => inTransaction(() => core.split(id, origin)),
    restoreBatch: (batch) => inTransaction(() => core.restoreBatch(batch)),
    snapshotRestoreCopies: (copies, marker, meta) => inTransaction(() => core.snapshotRestoreCopies(copies, marker, meta)),
    setHostNote: (name, value) => inTransaction(() => core.setHostNote(name, value)),
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
 * of the old store is dropped (not the class's own tables beside it),
 * _blobs_import becomes _blobs, and a durable
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
      options: { backend: "memory", storage: undefined },  // staged in memory: not the object's storage
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
// The tables of the store in a Durable Object's SQLite (docs/formats.md):
// its system tables, its snapshots' copies and the tables _tables records.
// The class's own tables beside them are not the store's, and stay.
const STORE_SYSTEM_TABLES = new Set(["_meta", "_outbox", "_outbox_parts", "_tables", "_blobs", "_snapshots"]);

function storeTables(storage) {
  const all = storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray().map((r) => r.name);
  const declared = new Set(all.includes("_tables") ? storage.sql.exec("SELECT name FROM _tables").toArray().map((r) => r.name) : []);
  return all.filter((n) => STORE_SYSTEM_TABLES.has(n) || n.startsWith("_snap_") || declared.has(n));
}

function switchDurable(mod, storage, manifest, outboxText, staged) {
  for (const n of storeTables(storage)) storage.sql.exec(`DROP TABLE "${n.replaceAll('"', '""')}"`);
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
