// Replicas: a store that changes only by applying its driver's outbox
// batches, without any owner's code (design.md, "Sync: a driver, a relay,
// replicas"; the C++ side is src/sync/replica.h).
//
// A replica is opened with the same options as a store, on any backend of
// the runtime, and read by stored table name: the schema comes from the log
// (the `table` records it applied), so no defineTable is needed. Each
// replica.table(name) carries a `def` built from that record, so the query
// builders work on it: query(items.def).where((e) => eq(e.n, 3)), or
// items.query().where(...).
//
// JS crosses into the wasm core once per batch and once per page of rows,
// as the store does (wasm/ABI.md).

import { neighboursWith } from "./edges.js";
import { ErrorCodes, invalidArgs, StoreError } from "./errors.js";
import { openCore } from "./open.js";
import { closeCoreOf, fenceWith, makeGate } from "./core-calls.js";
import { makeReads } from "./reads.js";
import { blobStorageCall, contentFingerprint, makeBlobs, memoryBlobs, webSha256 } from "./blobs.js";
import { MAX_BATCH_DEPTH, encodeJson, parseJsonExact, rowDecoder, wellFormed } from "./encode.js";
import { query as makeQuery } from "./query.js";
import { bool, defineTable, describe, int, json, num, str, vector } from "./schema.js";
import { vectorOf } from "./vectors.js";

const utf8 = new TextEncoder();
const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const isWellFormed = typeof String.prototype.isWellFormed === "function" ? (s) => s.isWellFormed() : (s) => !lone.test(s);

const builders = { str, int, bool, num, json };

/**
 * Opens a replica with a runtime's loader. Each package root binds this to
 * its runtime as `openReplica`. The options are openStore's (backend, path,
 * name, id, durability, lockTimeout, onFenced, storage), checked by the same
 * js/open.js.
 *
 * @example
 * const replica = await openReplicaWith(nodeRuntime, { backend: "sqlite", path: ".data/copy.sqlite" });
 */
export async function openReplicaWith(runtime, options) {
  // A replica takes no snapshots: their options would be silently ignored.
  for (const k of ["keepSnapshots", "snapshotEvery"]) {
    if (options?.[k] !== undefined) throw invalidArgs(`openReplica: ${k} is for openStore; a replica takes no snapshots`);
  }
  const { core, info, session, blobs } = await openCore(runtime, options, "openReplica", { replica: true });
  return makeReplica(core, info, session, blobs);
}

/** A table definition (for the query builders) from a stored table record. */
export function defOf(record) {
  const columns = {};
  for (const [c, spec] of Object.entries(record.columns)) {
    let b = spec.type === "vector"
      ? vector(spec.dims, "default" in spec ? { default: spec.default === null ? null : vectorOf(spec.default) } : undefined)
      : builders[spec.type]("default" in spec ? { default: spec.default } : undefined);
    if (spec.optional) b = b.optional();
    columns[c] = b;
  }
  // defineTable takes a plain name: the part after the owner's "/".
  const plain = record.table.slice(record.table.lastIndexOf("/") + 1);
  return defineTable(plain, { version: record.version, columns, key: record.key, indexes: record.indexes ?? {} });
}

function noOwnerWrites(what) {
  return invalidArgs(`${what}: a replica takes no owner writes; it changes only by replica.applyBatch(batch)`);
}

/**
 * The replica over an opened wasm `Core` (opened with `replica: true`); its
 * blobs in `blobs` (`{ backend, sha256 }`, js/blobs.js; in memory when omitted).
 *
 * @example
 * const replica = makeReplica(core, { id: "s1", head: 0 });
 */
export function makeReplica(core, info, session, blobs = { backend: memoryBlobs(), sha256: webSha256 }) {
  const gate = makeGate(core, info.head, "replica");
  const reads = makeReads(gate);
  const handles = new Map();  // full name -> { record, handle }

  if (session) fenceWith(gate, session);  // opfs: another tab may take it over
  const call = (what, fn) => {
    gate.checkOpen(what);
    return gate.call(what, fn);
  };

  function records() {
    return JSON.parse(call("replica.tables", () => core.tables()));
  }

  // A reader of one stored table: js/reads.js over a handle state whose
  // decoder comes from the stored record.
  function makeHandle(record) {
    const def = defOf(record);
    const h = {
      name: record.table,
      def,
      settled: true,
      pending: null,
      failed: null,
      decode: rowDecoder(Object.entries(record.columns).map(([name, c]) => ({ name, type: c.type }))),
    };
    return Object.freeze({
      /** The table's stored name ("file-history/edits"). */
      name: h.name,
      /** A definition built from the stored record, for query(def). */
      def,
      /**
       * A query over this table (query(def)).
       * @example const q = items.query().where((e) => eq(e.path, "a"));
       */
      query: () => makeQuery(def),
      /**
       * The row with this key, or undefined. A one-column key may be bare.
       * @example const row = await items.get(["e1"]);
       */
      get: (key) => reads.get(h, key),
      /**
       * One page of a query: { rows, next? }; pass next as `after`.
       * @example const { rows, next } = await items.page(items.query(), 50, { after });
       */
      page: (q, limit, options) => reads.page(h, q, limit, options),
      /**
       * Every row of a query, page by page.
       * @example for await (const row of items.rows()) console.log(row);
       */
      rows: (q) => reads.rows(h, q),
      /**
       * The number of rows of a query.
       * @example const n = await items.count();
       */
      count: (q) => reads.count(h, q),
      /**
       * The k rows nearest a vector: [{ row, distance }], as a store's
       * table.nearest (docs/guide.md, "Search by meaning").
       * @example const hits = await docs.nearest((e) => e.embedding, queryVector, 5, { metric: "l2" });
       */
      nearest: (column, vector, k, options) => reads.nearest(h, column, vector, k, options),
      /**
       * The edges of a node in a table made by defineEdges, one page:
       * { rows, next? }, in the order of a store's links.neighbours (the
       * kinds are not in the stored record, so any kind is read).
       * @example const { rows, next } = await links.neighbours("a", { direction: "both", limit: 20 });
       */
      neighbours: (node, options) => {
        gate.checkOpen("neighbours");
        return neighboursWith({ name: h.name, def }, node, options, async () => {
          if (!h.settled || h.failed) await reads.ready(h);
        }, (q, limit) => reads.pageNow(h, q, limit));
      },
    });
  }

  let closing = null;  // close()'s answer, the same to every call
  const replica = {
    /** The replica's own id (a new random id unless given as `id`). */
    get id() {
      return info.id;
    },
    /** The seq of the last applied commit (0 for a new replica). */
    get head() {
      if (gate.closed || gate.broken) return gate.lastHead;
      try { gate.lastHead = Number(core.head()); } catch { /* keep the last known head */ }
      return gate.lastHead;
    },
    /**
     * Why the replica stopped applying batches (a sync/diverged message),
     * or undefined while it applies them.
     */
    get diverged() {
      if (gate.closed || gate.broken) return undefined;
      const d = call("replica.diverged", () => core.diverged());
      return d === "" ? undefined : d;
    },
    /**
     * Applies one batch of `store.outbox.read(after, limit)` (or its JSON
     * text): whole, in one backend transaction with the new head, only when
     * `batch.from <= replica.head`. Resolves to { head, applied } (applied:
     * the commits it added; 0 when the batch was already applied). Rejects
     * with sync/gap (the batch starts after the head), sync/diverged (a
     * recorded count or row differs; the replica then refuses every later
     * batch, also after reopening: apply from 0 into a new replica) or invalid/args (a
     * malformed batch; on a diverged replica every batch, malformed or not,
     * is sync/diverged); nothing is applied then.
     * @example const { head } = await replica.applyBatch(await store.outbox.read(replica.head, 500));
     */
    async applyBatch(batch) {
      let text;
      try {
        text = typeof batch === "string" ? batch : encodeJson(batch, "batch", MAX_BATCH_DEPTH);
        // Not UTF-8 text: a lone surrogate would reach the core mangled
        // (Emscripten's encoder) or replaced (TextEncoder).
        if (!isWellFormed(text)) throw invalidArgs("applyBatch: the batch text holds a lone surrogate (a UTF-16 half without its pair), which is not text");
      } catch (e) {
        // A diverged replica answers every batch with sync/diverged, one it
        // cannot even encode too (the core does the same for malformed text),
        // one whose getter or toJSON throws included.
        let diverged;
        try { diverged = replica.diverged; } catch { /* closed: the error below says what failed */ }
        if (diverged !== undefined) {
          throw new StoreError(ErrorCodes.SyncDiverged, `applyBatch: the replica diverged (${diverged}) and takes no more batches: apply from 0 into a new one`);
        }
        if (e instanceof StoreError) throw e;
        throw invalidArgs(`applyBatch: reading the batch threw: ${e?.message ?? e}`, { cause: e });
      }
      let answer;
      try {
        // Its UTF-8 bytes: one copy into the heap (wasm/ABI.md, "applyBatch").
        const bytes = utf8.encode(text);
        answer = call("replica.applyBatch", () => core.applyBatch(bytes));
      } catch (e) {
        // A divergence is recorded in the store's own transaction, after the
        // batch's rolled back (a Durable Object rolls a call back whole).
        if (e instanceof StoreError && e.code === ErrorCodes.SyncDiverged) {
          try { call("replica.applyBatch", () => core.recordDivergence()); } catch { /* refused again on reopen: the same batch diverges */ }
        }
        throw e;
      }
      const { head, applied, schema } = JSON.parse(answer);
      gate.lastHead = head;
      // The core says whether a table, alter or index record changed a
      // table's columns: the readers' decoders are built again.
      if (schema) gate.schema++;
      return { head, applied };
    },
    /**
     * A reader of a stored table, by its stored name; the schema comes from
     * the log. Throws invalid/args when the replica holds no such table.
     * @example const items = replica.table("notes/items"); const n = await items.count();
     */
    table(name) {
      if (typeof name !== "string" || name === "") throw invalidArgs(`replica.table: expected a stored table name such as "notes/items", got ${describe(name)}`);
      const record = records().find((t) => t.table === name);
      if (!record) {
        throw invalidArgs(`replica.table: the replica holds no table ${JSON.stringify(name)} (yet); its tables come from the batches it applied`);
      }
      const known = handles.get(name);
      if (known && JSON.stringify(known.record) === JSON.stringify(record)) return known.handle;
      const handle = makeHandle(record);
      handles.set(name, { record, handle });
      return handle;
    },
    /**
     * The stored names of the replica's tables, in byte order.
     * @example for (const name of replica.tables()) console.log(name, await replica.table(name).count());
     */
    tables() {
      return records().map((t) => t.table);
    },
    /**
     * A short digest of the content (every table's schema and rows,
     * documents, blobs; not the
     * head or the outbox): equal to the driver's store's at the same head,
     * on every backend.
     * @example assert.equal(await replica.fingerprint(), await store.fingerprint());
     */
    async fingerprint() {
      const tables = call("replica.fingerprint", () => core.fingerprint());
      return blobStorageCall("replica.fingerprint", () => contentFingerprint(tables, blobs.backend, blobs.sha256));
    },
    /**
     * The replica's blobs: get, has, list, and putWithHash (blobs arrive
     * with their hash; bytes whose sha256 differs are refused). No put: a
     * replica takes no owner writes.
     * @example const bytes = await replica.blobs.get(hash);
     */
    blobs: makeBlobs(blobs.backend, {
      sha256: blobs.sha256,
      prefix: "replica.blobs",
      writable: false,
      checkOpen(what) {
        gate.checkOpen(what);
        if (gate.broken) throw gate.broken;
      },
    }),
    hostNotes: Object.freeze({
      /**
       * The text of the host note `name`, or undefined: small notes a host
       * keeps in the replica's own storage, beside its head (the relay keeps
       * its driver lease in one, js/relay.js). Synchronous: one crossing.
       * `name` is 1 to 64 of a-z 0-9 _ . - (else invalid/args).
       * @example const lease = replica.hostNotes.get("relay.lease");
       */
      get(name) {
        if (typeof name !== "string") throw invalidArgs(`replica.hostNotes.get: name must be a string, got ${describe(name)}`);
        const text = call("replica.hostNotes.get", () => core.hostNote(name));
        return text === "" ? undefined : text;
      },
      /**
       * Writes the host note `name` (a string of at most 64 KiB; "" removes
       * it) in a transaction of its own, durable when the call returns.
       * Synchronous: one crossing. Works on a diverged replica too.
       * @example replica.hostNotes.set("relay.lease", JSON.stringify({ epoch: 1 }));
       */
      set(name, text) {
        if (typeof name !== "string") throw invalidArgs(`replica.hostNotes.set: name must be a string, got ${describe(name)}`);
        if (typeof text !== "string") throw invalidArgs(`replica.hostNotes.set: text must be a string, got ${describe(text)}`);
        // Well formed: the crossing would glue a lone surrogate to the next
        // character (str()'s rule: it becomes U+FFFD).
        call("replica.hostNotes.set", () => core.setHostNote(name, wellFormed(text)));
      },
    }),
    outbox: Object.freeze({
      /**
       * The records the replica applied, after seq `after`: the same batch
       * shape and records as the driver's outbox, to serve them on.
       * @example const batch = await replica.outbox.read(0, 100);
       */
      async read(after = 0, limit = 100) {
        if (!Number.isSafeInteger(after) || after < 0) throw invalidArgs(`replica.outbox.read: after must be a seq (a safe integer >= 0), got ${describe(after)}`);
        if (!Number.isSafeInteger(limit) || limit < 1) throw invalidArgs(`replica.outbox.read: limit must be a positive integer, got ${describe(limit)}`);
        return parseJsonExact(call("replica.outbox.read", () => core.outboxRead(after, limit)));
      },
      /**
       * Removes the records up to seq `upTo`; resolves to the number removed.
       * @example await replica.outbox.trim(100);
       */
      async trim(upTo) {
        if (!Number.isSafeInteger(upTo) || upTo < 0) throw invalidArgs(`replica.outbox.trim: upTo must be a seq (a safe integer >= 0), got ${describe(upTo)}`);
        return Number(call("replica.outbox.trim", () => core.outboxTrim(upTo)));
      },
    }),
    /** Refused: a replica has no owners. Throws invalid/args. */
    object() {
      throw noOwnerWrites("replica.object");
    },
    /** Refused: a replica takes no owner writes. Rejects with invalid/args. */
    async commit() {
      throw noOwnerWrites("replica.commit");
    },
    /**
     * Closes the replica. Later calls reject with `closed`. Closing twice is fine.
     * @example await replica.close();
     */
    close() {
      if (!gate.closing) {
        closing = Promise.resolve();
        gate.closing = true;
        const failed = closeCoreOf(gate, session, "replica");
        if (failed) closing = Promise.reject(failed);
      }
      return closing;
    },
    [Symbol.asyncDispose]() {
      return replica.close();
    },
  };
  return Object.freeze(replica);
}
