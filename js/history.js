// History: the log (what each retained commit changed) and read views of
// the whole store at a past seq (design.md "Archives, snapshots, history";
// docs/api.md "store.log", "store.at").
//
// `store.log` reads the retained outbox: one crossing per call (a commit, or
// one page of a filter; src/history/log.h). `store.at(seq)` builds a new
// memory replica of the core (src/sync/replica.h): from the newest snapshot
// at or below seq when there is one (copied in by the core, one crossing:
// Snapshots::CopyInto), else from the empty store, then replays the outbox
// records after it up to seq: one crossing out (a page of records, as text,
// never parsed in JS) and one in (applyBatch) per page. Its cost is the
// snapshot's content plus the history after it; its memory the store's
// content at seq.

import { ErrorCodes, invalidArgs, StoreError } from "./errors.js";
import { encodeJson, parseJsonExact } from "./encode.js";
import { makeGate } from "./core-calls.js";
import { makeReads } from "./reads.js";
import { query as makeQuery } from "./query.js";
import { defOf } from "./replica.js";
import { ownerDocuments } from "./documents.js";
import { describe, isTableDef, ownerName } from "./schema.js";
import { isEdgesDef, neighboursWith } from "./edges.js";
import { jsonColumnThrough } from "./migrate.js";

const LOG_FIELDS = ["seq", "owner", "actor", "from", "to", "after", "limit"];
// Records per crossing while a view replays the outbox.
const REPLAY_PAGE = 512;

function seqOf(v, name, min, what) {
  if (!Number.isSafeInteger(v) || v < min) throw invalidArgs(`${what}: ${name} must be an integer >= ${min}, got ${describe(v)}`);
  return v;
}

/**
 * Checks a `store.log` request and returns it as the core's JSON text.
 *
 * @example
 * logRequest({ owner: "notes", limit: 20 })   // '{"owner":"notes","limit":20}'
 */
export function logRequest(request, what = "store.log") {
  if (request === null || typeof request !== "object" || Array.isArray(request)) {
    throw invalidArgs(`${what}: expected { seq } or { owner?, actor?, from?, to?, after?, limit? }, got ${describe(request)}`);
  }
  const out = {};
  for (const [k, v] of Object.entries(request)) {
    if (!LOG_FIELDS.includes(k)) throw invalidArgs(`${what}: unknown field ${JSON.stringify(k)} (${LOG_FIELDS.join(", ")})`);
    if (v !== undefined) out[k] = v;
  }
  if (out.seq !== undefined) {
    seqOf(out.seq, "seq", 1, what);
    if (Object.keys(out).length > 1) throw invalidArgs(`${what}: { seq } asks for one commit; it takes no filter (got ${Object.keys(out).join(", ")})`);
    return encodeJson(out, what);
  }
  if (out.owner !== undefined) {
    // An owner's address or its name ("notes", "host:type").
    if (typeof out.owner === "object" && out.owner !== null) out.owner = ownerName(out.owner);
    else if (typeof out.owner !== "string" || out.owner === "") throw invalidArgs(`${what}: owner must be an owner name or address, got ${describe(out.owner)}`);
  }
  if (out.actor !== undefined) {
    // A field set to undefined is left out, as the request's own fields are.
    const a = out.actor !== null && typeof out.actor === "object" && !Array.isArray(out.actor)
      ? Object.fromEntries(Object.entries(out.actor).filter(([, v]) => v !== undefined))
      : out.actor;
    const ok = a !== null && typeof a === "object" && !Array.isArray(a) && Object.keys(a).length > 0 &&
      Object.entries(a).every(([k, v]) => (k === "kind" || k === "id") && typeof v === "string");
    if (!ok) throw invalidArgs(`${what}: actor must be { kind?, id? } with string values, one at least, got ${describe(out.actor)}`);
    out.actor = a;
  }
  for (const k of ["from", "to", "after"]) if (out[k] !== undefined) seqOf(out[k], k, 0, what);
  if (out.limit !== undefined && (!Number.isSafeInteger(out.limit) || out.limit < 1 || out.limit > 1000)) {
    throw invalidArgs(`${what}: limit must be an integer from 1 to 1000, got ${describe(out.limit)}`);
  }
  return encodeJson(out, what);
}

/**
 * `store.log(request)` over a store's gate: one commit's record for
 * `{ seq }`, else one page `{ commits, next? }`.
 *
 * @example
 * const log = makeLog(gate);
 * const { commits, next } = await log({ owner: "notes" });
 */
export function makeLog(gate) {
  return async function log(request = {}) {
    gate.checkOpen("store.log");
    const text = logRequest(request);
    const answer = parseJsonExact(gate.call("store.log", () => gate.core.log(text)));
    if (request.seq !== undefined) return answer;
    return answer.next === undefined ? { commits: answer.commits } : { commits: answer.commits, next: answer.next };
  };
}

const viewClosed = (what) => new StoreError(ErrorCodes.Closed, `${what}: this view is closed; open another with store.at(seq)`);

/**
 * Replays the source core's outbox records after `from` up to `seq` into
 * the view core (a replica at `from`). Synchronous: no commit can trim the
 * records in between. not_found when a record is missing (trimmed).
 */
function replay(source, view, from, seq, what) {
  let head = from;
  while (head < seq) {
    const text = source.call(`${what}: reading the outbox`, () => source.core.outboxRead(head, Math.min(REPLAY_PAGE, seq - head)));
    const m = /^\{"from":(\d+),"to":(\d+)/.exec(text);
    if (!m || Number(m[2]) === head || Number(m[1]) !== head) {
      throw new StoreError(ErrorCodes.NotFound, `${what}: commit ${head + 1} is no longer in the outbox (trimmed), so the store cannot be rebuilt at seq ${seq}`);
    }
    head = JSON.parse(view.call(`${what}: replaying the outbox`, () => view.core.applyBatch(text))).head;
  }
}

/**
 * Checks that the outbox still holds the record after `from` (when `seq` >
 * `from`): not_found naming the oldest one kept otherwise.
 */
function checkRetained(source, from, seq, what) {
  if (seq <= from) return;
  const first = parseJsonExact(source.call("store.at", () => source.core.outboxRead(from, 1)));
  if (first.commits.length === 0 || first.commits[0].seq !== from + 1) {
    const oldest = first.commits[0]?.seq;
    const head = Number(source.call("store.at", () => source.core.head()));
    const start = from === 0 ? "" : ` (its newest snapshot at or below it is at seq ${from})`;
    throw new StoreError(ErrorCodes.NotFound, `${what}: the outbox no longer holds the commits before ${oldest ?? head + 1} (trimmed), so the store cannot be rebuilt at seq ${seq}${start}`);
  }
}

/**
 * Opens a read view of the store behind `source` (a gate) at `seq`:
 * `openCore()` resolves to a new memory replica core `{ core, info }`. The
 * view starts from the newest of `snapshots` (js/snapshots.js, or null) at
 * or below seq, copied into the view core (one crossing), else from the
 * empty store, and replays the outbox records after that up to seq.
 * not_found when those records are not all retained.
 *
 * @example
 * const view = await openView(gate, 12, () => openCore(runtime, { backend: "memory" }, "store.at", { replica: true }), handles, snaps);
 */
export async function openView(source, seq, openCore, storeHandles, snapshots = null) {
  const what = `store.at(${typeof seq === "number" ? seq : "…"})`;
  source.checkOpen("store.at");
  seqOf(seq, "seq", 0, "store.at");
  const head = Number(source.call("store.at", () => source.core.head()));
  if (seq > head) throw invalidArgs(`${what}: seq ${seq} is beyond the head (${head})`);
  // Refused before a core is opened when nothing can cover seq.
  const release = await snapshots?.prepareStart(seq);
  try {
    checkRetained(source, snapshots?.startFor(seq)?.seq ?? 0, seq, what);
    return await seededView(source, seq, openCore, storeHandles, snapshots, what);
  } finally {
    release?.();
  }
}

async function seededView(source, seq, openCore, storeHandles, snapshots, what) {
  const { core } = await openCore();
  const gate = makeGate(core, 0, "view");
  const close = () => {
    if (gate.closed) return;
    gate.closing = true;
    try { core.close(); } catch { /* closing anyway */ }
    try { core.delete(); } catch { /* already freed */ }
    gate.closed = true;
  };
  try {
    source.checkOpen("store.at");
    // From here to the end of the replay nothing awaits: no commit, trim
    // or prune of a snapshot comes between the choice of start and the copy.
    const start = snapshots?.startFor(seq) ?? null;
    let from = 0;
    if (start) {
      from = JSON.parse(gate.call(`${what}: copying snapshot ${start.id}`, () => (start.copies !== undefined
        ? core.seedViewCopies(source.core, start.copies, start.seq)
        : core.seedView(source.core, start.id, start.file)))).head;
      // A copy cut to 0 bytes opens as an empty store: not the snapshot.
      if (from !== start.seq) {
        throw new StoreError(ErrorCodes.StorageFailed, `${what}: snapshot ${start.id}'s copy holds seq ${from}, not seq ${start.seq}, the one it was taken at: it was damaged or replaced outside the store (cut short, overwritten)`);
      }
    }
    checkRetained(source, from, seq, what);
    replay(source, gate, from, seq, what);
  } catch (e) {
    close();
    throw e;
  }
  return makeView(gate, seq, close, storeHandles);
}

/**
 * The json columns of a table's `record` at a seq as the code's definition
 * `code` reads them: `{ columns }` by their stored names then, or null
 * without a definition. The record, not the code, says what the table was
 * then: a stored column is followed through the code's migrations from the
 * record's version to the code's, so a renamed one reads as the column it
 * became, and one dropped (or added back under its name by a later
 * version: another column) reads as stored, as does every column of a
 * record newer than the code (whose migrations do not reach it).
 *
 * @example
 * jsonAt({ version: 1, columns: { meta: { type: "json" } } }, V2)   // { columns: { meta: V2.columns.info } }
 */
function jsonAt(record, code) {
  if (!code) return null;
  const columns = {};
  if (code.version >= record.version) {
    const alters = [];
    for (let v = record.version + 1; v <= code.version; v++) alters.push(code.migrations?.[v]?.alter ?? {});
    for (const [name, c] of Object.entries(record.columns)) {
      const mine = c.type === "json" ? jsonColumnThrough(code, alters, name) : undefined;
      if (mine) columns[name] = mine[1];
    }
  }
  return { columns };
}

function makeView(gate, seq, close, storeHandles) {
  const reads = makeReads(gate);
  const handles = new Map();  // stored name -> { record, handle }
  const docs = new Map();     // owner name -> documents reads
  const call = (what, fn) => {
    if (gate.closing || gate.closed) throw viewClosed(what);
    return gate.call(what, fn);
  };
  const records = () => JSON.parse(call("view.tables", () => gate.core.tables()));

  function nameOf(t) {
    if (typeof t === "string" && t !== "") return t;
    // A table handle of the store: its full name.
    if (t !== null && typeof t === "object" && typeof t.name === "string" && isTableDef(t.def)) return t.name;
    if (isTableDef(t)) {
      // A definition: the one open in the store, else the one stored table of that name.
      const open = storeHandles?.nameOfDef(t);
      if (open) return open;
      const matches = records().map((r) => r.table).filter((n) => n.slice(n.lastIndexOf("/") + 1) === t.name);
      if (matches.length === 1) return matches[0];
      if (matches.length > 1) throw invalidArgs(`view.table: several owners have a table ${JSON.stringify(t.name)} (${matches.join(", ")}); pass its stored name`);
      throw invalidArgs(`view.table: the store held no table ${JSON.stringify(t.name)} at seq ${seq}`);
    }
    throw invalidArgs(`view.table: expected a stored table name ("notes/items"), a table handle or a definition, got ${describe(t)}`);
  }

  // `edges`: the store's defineEdges definition the caller named the table
  // by, whose kinds neighbours checks as the live table does (the stored
  // record does not hold them); null reads any kind.
  function makeHandle(record, edges, versions) {
    const def = defOf(record);
    const h = { name: record.table, def, versions: jsonAt(record, versions), settled: true, pending: null, failed: null, decode: null };
    const live = (what) => { if (gate.closing || gate.closed) throw viewClosed(`${h.name}.${what}`); };
    return Object.freeze({
      /** The table's stored name ("file-history/edits"). */
      name: h.name,
      /** A definition built from the table's record at that seq. */
      def,
      /** A query over this table. @example const q = items.query().where((e) => eq(e.n, 3)); */
      query: () => makeQuery(def),
      /** The row with this key at that seq, or undefined. @example const row = await items.get(["e1"]); */
      get: async (key) => { live("get"); return reads.getNow(h, key); },
      /** One page of a query at that seq: { rows, next? }. @example const { rows, next } = await items.page(undefined, 50, { after }); */
      page: async (q, limit, options) => { live("page"); return reads.pageNow(h, q, limit, options); },
      /** Every row of a query at that seq. @example for await (const row of items.rows()) … */
      rows: (q) => {
        live("rows");
        return {
          async *[Symbol.asyncIterator]() {
            let after = "";
            for (;;) {
              live("rows");
              const page = reads.pageNow(h, q, 100, { after });
              yield* page.rows;
              if (!page.next) return;
              after = page.next;
            }
          },
        };
      },
      /** The number of rows of a query at that seq. @example const n = await items.count(); */
      count: async (q) => { live("count"); return reads.countNow(h, q); },
      /**
       * The k rows nearest a vector at that seq: [{ row, distance }], as the
       * store's table.nearest answered then.
       * @example const hits = await docs.nearest((e) => e.embedding, queryVector, 5, { metric: "l2" });
       */
      nearest: async (column, vector, k, options) => { live("nearest"); return reads.nearestNow(h, column, vector, k, options); },
      /**
       * The edges of a node at that seq, one page: { rows, next? }, in the
       * order of the store's links.neighbours (a table with str columns
       * from, to and kind; the kinds are checked when the table was named
       * by its defineEdges definition or handle).
       * @example const { rows, next } = await links.neighbours("a", { direction: "both", limit: 20 });
       */
      neighbours: async (node, options) => {
        live("neighbours");
        return neighboursWith({ name: h.name, def: edges ?? def }, node, options, async () => {},
          (q, limit) => { live("neighbours"); return reads.pageNow(h, q, limit); });
      },
    });
  }

  const view = {
    /** The seq this view shows. */
    seq,
    /**
     * A reader of a table as it was at this seq: by stored name, by the
     * store's table handle, or by definition. invalid/args when the store
     * held no such table then.
     * @example const items = view.table(Items); const n = await items.count();
     */
    table(t) {
      const name = nameOf(t);
      const record = records().find((r) => r.table === name);
      if (!record) throw invalidArgs(`view.table: the store held no table ${JSON.stringify(name)} at seq ${seq}`);
      // A defineEdges definition (or a store handle of one) of this table:
      // neighbours checks its kinds.
      const given = isTableDef(t) ? t : isTableDef(t?.def) ? t.def : null;
      const edges = isEdgesDef(given) ? given : null;
      // The code's definition (the one named, else the store's open
      // handle's): the json columns it reaches from the record at this seq
      // are read as the owner reads them (jsonAt). Without one the values
      // are given as stored.
      const versions = given ?? storeHandles?.byName(name)?.def ?? null;
      const known = handles.get(name);
      if (known && known.edges === edges && known.versions === versions && JSON.stringify(known.record) === JSON.stringify(record)) return known.handle;
      const handle = makeHandle(record, edges, versions);
      handles.set(name, { record, handle, edges, versions });
      return handle;
    },
    /** The stored names of the tables at this seq, in byte order. @example view.tables() */
    tables() {
      return records().map((r) => r.table);
    },
    /**
     * The documents of an owner as they were at this seq: find, load, list,
     * versions (owner.documents' reads). `owner` is the owner, its address
     * or its name.
     * @example const note = await view.documents(notes).find({ kind: "note", key: "n1" });
     */
    documents(owner) {
      if (gate.closing || gate.closed) throw viewClosed("view.documents");
      let name;
      if (typeof owner === "string" && owner !== "") name = owner;
      else if (owner !== null && typeof owner === "object" && typeof owner.name === "string" && typeof owner.tx === "function") name = owner.name;
      else {
        try {
          name = ownerName(owner);
        } catch {
          throw invalidArgs(`view.documents: expected an owner, its address { host?, type } or its name, got ${describe(owner)}`);
        }
      }
      if (!docs.has(name)) docs.set(name, ownerDocuments(viewGate, name));
      return docs.get(name);
    },
    /** The content fingerprint at this seq (store.fingerprint's digest). @example await view.fingerprint() */
    async fingerprint() {
      return call("view.fingerprint", () => gate.core.fingerprint());
    },
    /** Frees the view's memory. Later calls reject with `closed`. Closing twice is fine. @example view.close(); */
    close() {
      close();
      return Promise.resolve();
    },
    [Symbol.asyncDispose]() {
      return view.close();
    },
  };
  // ownerDocuments checks the gate with checkOpen: the view's own wording.
  const viewGate = {
    core: gate.core,
    checkOpen(what) { if (gate.closing || gate.closed) throw viewClosed(what); },
    call: (what, fn) => call(what, fn),
  };
  return Object.freeze(view);
}
