// Transactions: `owner.tx(async (tx) => …)`.
//
// A transaction buffers its ops in one binary batch (js/ops-buffer.js: a
// put's row written as bytes, any other op as its wire JSON) and hands them
// to the core at tx.get (which must see them: core.txGet stages the new
// ones) and at its end, in one commit step (core.commit, or core.txCommit
// once the core holds staged ops). It keeps no other copy of
// its ops: what adopt, watches, derives and links see is the commit's ops as
// the core recorded them (js/core-calls.js, Core.lastOps).

import { ErrorCodes, invalidArgs, StoreError, userThrew } from "./errors.js";
import { MAX_OP_DEPTH, encodeJson } from "./encode.js";
import { OpsBuffer } from "./ops-buffer.js";
import { isExpr, isPred, toExpr, value } from "./expr.js";
import { vectorColumns, vectorWire } from "./vectors.js";
import { whereOf } from "./query.js";
import { plainData, readRow } from "./data.js";
import { commitContext } from "./core-calls.js";
import { describe, storedJson, versionedJson } from "./schema.js";
import { txDocuments } from "./documents.js";
import { checkKind, edgesWhere, isEdgesDef } from "./edges.js";

// A put's row as an object, for the wire JSON: the values read, in order
// ("__proto__" kept as a key).
function rowOf(names, vals) {
  const row = {};
  for (let i = 0; i < names.length; i++) {
    if (names[i] === "__proto__") Object.defineProperty(row, "__proto__", { value: vals[i], enumerable: true, writable: true, configurable: true });
    else row[names[i]] = vals[i];
  }
  return row;
}

/**
 * Runs one transaction of an owner. `owner` is what js/owner.js gives a
 * transaction: { name, gate, queue, reads, resolveTable(t, what),
 * adopt(seq, ops) }. Resolves to fn's value once the commit (if any) is
 * durable and adopted.
 *
 * @example
 * await runTx(ownerParts, async (tx) => { await tx.put(edits, row); }, ctx);
 */
export async function runTx(owner, fn, ctx) {
  const { name, gate, queue } = owner;
  const what = `${name}.tx`;
  gate.checkOpen(what);
  if (typeof fn !== "function") throw invalidArgs(`${name}.tx: expected an async function (tx) => ..., got ${describe(fn)}`);
  // ops: the ops written, in order (what the core has staged is marked).
  // A core with the raw commit has its module's heap for the buffer (js/ops-buffer.js, opsHeapOf).
  const st = { ops: OpsBuffer.take(gate.core.opsHeap ?? null), txId: 0, open: true, committed: false, poisoned: null };
  const tx = new Tx(owner, st);
  try {
    const result = await fn(tx);
    st.open = false;
    if (st.poisoned) throw st.poisoned;
    if (st.ops.total > 0) {
      gate.checkOpen(what);
      const meta = commitContext(name, ctx, what);
      await queue.step(
        () => {
          const done = gate.commitOps(what, name, meta, st.ops, st.txId);
          st.committed = true;
          return done;
        },
        owner.adopt,
      );
    }
    return result;
  } finally {
    st.open = false;
    if (st.txId && !st.committed && !gate.closed && !gate.broken) {
      try { gate.core.txClose(st.txId); } catch { /* the tx is gone with the instance */ }
    }
    // Every use of st.ops checks st.open first (live()), so the buffer is
    // free for the next transaction.
    st.ops.release();
  }
}

// What the methods of a transaction's tx (class Tx below) share.
//
// liveTx throws unless the transaction `st` is open (and its store too).
// The core answers a minted id as decimal text: a number while it is
// safe, beyond 2^53 the exact BigInt (reads give ints the same way).
function mintedId(v) {
  if (typeof v !== "string") return v;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : BigInt(v);
}

// What a write answers (tx.put, tx.update, …: they are not async functions,
// which would make a promise per write): done, or refused.
const DONE = Promise.resolve();
// A write the package refused in its open transaction fails the
// transaction: the write rejects, and so do every later call of the tx and
// the commit, with this error, whether or not the callback caught it (as a
// refusal by the core fails the whole commit). The tx() call reports it, so
// the write's rejection is marked handled: one left unawaited does not also
// raise an unhandled rejection. A write refused outside a transaction
// (ended, or a method taken off tx) has nothing else to report it.
function refused(st, e) {
  const p = Promise.reject(e);
  if (st?.open) {
    st.poisoned ??= e;
    p.catch(() => {});
  }
  return p;
}

function liveTx(st, gate, what) {
  if (!st.open) throw invalidArgs(`${what}: the transaction has ended; use tx only inside its callback`);
  if (st.poisoned) throw st.poisoned;
  gate.checkOpen(what);
}
// Each value of the caller's is read once, by plainData/readRow, before
// it is encoded.
function pushOp(st, op, what) {
  st.ops.json(encodeJson(plainData(op, what, MAX_OP_DEPTH), what, MAX_OP_DEPTH));
}
function setOf(set, what) {
  if (set === null || typeof set !== "object" || Array.isArray(set) || isPred(set)) {
    throw invalidArgs(`${what}: set must be an object of column: value or expression, got ${describe(set)}`);
  }
  const out = {};
  for (const [c, v] of Object.entries(plainSet(set, what))) {
    if (v === undefined) continue;
    out[c] = toExpr(v);
  }
  return out;
}
// The set's own entries, each read once (an expression is kept as it is).
function plainSet(set, what) {
  let entries;
  try {
    entries = Object.entries(set);
  } catch (e) {
    throw userThrew(e, `${what}: reading set`);
  }
  return Object.fromEntries(entries);
}
// A set's literal values of versioned json columns, in their envelope;
// of vector columns, in their wire form.
function versionedSet(h, set, what) {
  for (const [c, col] of versionedJson(h.def)) {
    if (set[c] !== undefined) set[c] = storedJson(col, set[c]);
  }
  for (const [c, col] of vectorColumns(h.def)) {
    const e = set[c];
    if (e !== undefined && isExpr(e) && Object.prototype.hasOwnProperty.call(e, "value") && e.value !== null) {
      set[c] = value(vectorWire(e.value, col.dims, `${what}: set.${c}`));
    }
  }
  return set;
}
// A call that stages the ops written since the last crossing into the
// core's transaction (opened at the first), then reads (tx.get's txGet,
// tx.mintId's txStage): `call(batch)` inside the gate, its answer returned.
// read_after_bulk comes after the ops were staged; any other failure leaves
// the staged state unknown, so the tx cannot commit.
function withStaged(st, gate, what, call) {
  if (!st.txId) st.txId = Number(gate.call(what, () => gate.core.txOpen()));
  // Its own copy: sizing the call's room may grow the wasm heap (where the
  // buffer may be) before the core reads the batch.
  const batch = st.ops.batchCopy();
  let answer;
  try {
    answer = gate.call(what, () => call(batch));
  } catch (e) {
    if (e instanceof StoreError && e.code === ErrorCodes.ReadAfterBulk) st.ops.mark();
    else st.poisoned = e;
    throw e;
  }
  st.ops.mark();
  return answer;
}

function keyOf(key) {
  return Array.isArray(key) ? [...key] : [key];
}
// What tx.put needs of a table: the root of its messages, its versioned
// json, vector and edge columns, and the names of the last row put into it
// (a row with the same keys reads them as that array: js/data.js,
// readRow). Kept per handle state while its definition stays (a handle's
// state is the one object its owner made it with, for the life of the
// handle), so a transaction makes none.
const putPlans = new WeakMap();
function putPlanOf(h) {
  let plan = putPlans.get(h);
  if (plan === undefined || plan.def !== h.def) {
    plan = {
      h,
      def: h.def,
      root: `tx.put(${h.name}): row`,
      edges: isEdgesDef(h.def),
      versioned: versionedJson(h.def),
      vectors: vectorColumns(h.def),
      names: null,
    };
    putPlans.set(h, plan);
  }
  return plan;
}
const NO_PLAN = { h: null, def: null };

/**
 * A transaction's `tx`: its methods are shared by every transaction (on
 * the prototype), its state is private, and the object itself is frozen.
 * A transaction makes this one object (it made a closure per method:
 * docs/performance.md, "Issue 13, a transaction's own JS"). Call the
 * methods on it (`tx.put(...)`): one taken off it has no transaction, and
 * says so (invalid/args).
 */
class Tx {
  #owner;
  #st;
  // The plan of the table tx.put wrote last (a bulk loop writes one).
  #plan = NO_PLAN;
  // The scratch array of tx.put's values (null while a put holds it; it
  // keeps the last row's values until the next put or the end of the tx).
  #scratch = null;
  // The handle tx.put resolved last and its state, so a bulk loop resolves
  // its table once. A table definition passed instead of a handle is
  // resolved each time (owner.table checks it).
  #lastHandle = null;
  #lastH = null;
  // tx.documents, made at its first use.
  #documents = null;

  constructor(owner, st) {
    this.#owner = owner;
    this.#st = st;
    Object.freeze(this);
  }

  // `tx` when it is a transaction's tx (a method called on it), or throws.
  static #of(tx, what) {
    if (tx === null || typeof tx !== "object" || !(#st in tx)) {
      throw invalidArgs(`${what}: call it on the transaction's tx; a method taken off tx has no transaction`);
    }
    return tx;
  }
  // A write's refusal (see refused) in the transaction of `tx`, if any.
  static #refused(tx, e) {
    return refused(tx !== null && typeof tx === "object" && #st in tx ? tx.#st : undefined, e);
  }
  // The state of the open transaction `tx`, or throws.
  static #open(tx, what) {
    const st = Tx.#of(tx, what).#st;
    liveTx(st, tx.#owner.gate, what);
    return st;
  }

  /**
   * The owner's documents: create, change (RFC 6902 JSON Patch), retire,
   * in this transaction's commit (js/documents.js).
   * @example const id = await tx.documents.create({ kind: "note", key: "n1" }, { title: "Plan" });
   */
  get documents() {
    if (Tx.#of(this, "tx.documents").#documents === null) {
      const owner = this.#owner;
      const st = this.#st;
      const { gate } = owner;
      this.#documents = txDocuments({
        name: owner.name,
        checkpoint: owner.checkpoint,
        live: (what) => liveTx(st, gate, what),
        push: (op, what) => st.ops.json(encodeJson(op, what, MAX_OP_DEPTH)),
        refused: (e) => refused(st, e),
        mint: () => {
          const what = `${owner.name}: tx.documents.create`;
          const id = mintedId(gate.call(what, () => gate.core.mintId("_documents")));
          // Document ids are safe integers; a store.commit doc.create can
          // take the largest, 2^53-1, and then none is left to mint.
          if (typeof id !== "number") throw new StoreError(ErrorCodes.Limit, `${what}: no document id is left: the largest, 2^53-1, is taken`);
          return id;
        },
      });
    }
    return this.#documents;
  }
  /**
   * Writes a whole row (insert or replace). The row's own data is read
   * once (docs/api.md, "What a row may hold").
   * @example await tx.put(edits, { id: "e1", path: "a/x.ts", entry: 812, at: 1, meta: {} });
   */
  put(t, row) {
    try {
      const st = Tx.#open(this, "tx.put");
      let h = this.#lastH;
      if (t !== this.#lastHandle || t === null) {
        h = this.#owner.resolveTable(t, "tx.put");
        if (h.def !== t) {  // a handle (a definition resolves to the state of its handle, whose def it is)
          this.#lastHandle = t;
          this.#lastH = h;
        }
      }
      // The row's values, each read once, straight from the caller's row
      // (no copy of it: issue 13's put loop); `scratch` is handed back at the
      // end, so a getter that puts a row meanwhile takes an array of its own.
      const vals = this.#scratch ?? [];
      this.#scratch = null;
      let plan = this.#plan;
      if (h !== plan.h || h.def !== plan.def) this.#plan = plan = putPlanOf(h);
      // A row with the keys of the last row put into this table reads them as
      // that row's array (no array of its own: a bulk loop's rows, and a
      // one-put commit's after the first, have them). Never changed once
      // read: the batch may keep it as its shape.
      const read = readRow(row, plan.root, vals, plan.names);
      plan.names = read;
      let names = read;
      if (plan.edges) {
        const k = names.indexOf("kind");
        checkKind(h, k < 0 ? undefined : vals[k], "tx.put");
      }
      // Versioned json columns are written in their envelope (a left-out one
      // with its default too, which the core would store bare).
      const { versioned, vectors } = plan;
      for (let j = 0; j < versioned.length; j++) {
        const [c, col] = versioned[j];
        const i = names.indexOf(c);
        let v = i < 0 ? undefined : vals[i];
        if (v === undefined && col.hasDefault) v = col.default;
        if (v === undefined) continue;
        v = storedJson(col, v);
        if (i < 0) {
          if (names === read) names = names.slice();
          names.push(c);
          vals[names.length - 1] = v;
        } else {
          vals[i] = v;
        }
      }
      // Vector columns cross as the base64 of their float32 (js/vectors.js).
      for (let j = 0; j < vectors.length; j++) {
        const [c, col] = vectors[j];
        const i = names.indexOf(c);
        if (i >= 0 && vals[i] !== undefined && vals[i] !== null) vals[i] = vectorWire(vals[i], col.dims, `tx.put(${h.name}): row.${c}`);
      }
      // The row straight into the batch; a value it leaves to JSON (a
      // BigInt, NaN...) sends the op as wire JSON, whose encoder words any error.
      if (!st.ops.putValues(h.name, names, vals)) {
        st.ops.json(encodeJson({ op: "put", table: h.name, row: rowOf(names, vals) }, "put", MAX_OP_DEPTH));
      }
      this.#scratch = vals;
    } catch (e) {
      return Tx.#refused(this, e);
    }
    return DONE;
  }
  /**
   * Sets columns of one row, by key. A plain value means value(v).
   * @example await tx.update(edits, ["e1"], { at: add(col("at"), 1) });
   */
  update(t, key, set) {
    try {
      const st = Tx.#open(this, "tx.update");
      const h = this.#owner.resolveTable(t, "tx.update");
      pushOp(st, { op: "update", table: h.name, key: keyOf(key), set: versionedSet(h, setOf(set, `tx.update(${h.name})`), `tx.update(${h.name})`) }, "update");
    } catch (e) {
      return Tx.#refused(this, e);
    }
    return DONE;
  }
  /**
   * Deletes one row, by key.
   * @example await tx.delete(edits, ["e1"]);
   */
  delete(t, key) {
    try {
      const st = Tx.#open(this, "tx.delete");
      const h = this.#owner.resolveTable(t, "tx.delete");
      pushOp(st, { op: "delete", table: h.name, key: keyOf(key) }, "delete");
    } catch (e) {
      return Tx.#refused(this, e);
    }
    return DONE;
  }
  /**
   * Sets columns of every row matching a predicate: one op in the outbox,
   * whatever the row count. `where` undefined means every row.
   * @example await tx.updateWhere(edits, (e) => prefix(e.path, "a/"), { path: replacePrefix("a/", "b/") });
   */
  updateWhere(t, where, set) {
    try {
      const st = Tx.#open(this, "tx.updateWhere");
      const h = this.#owner.resolveTable(t, "tx.updateWhere");
      const w = whereOf(h.def, where, `tx.updateWhere(${h.name})`);
      // No predicate (where: null) means every row.
      pushOp(st, { op: "update", table: h.name, where: w ?? null, set: versionedSet(h, setOf(set, `tx.updateWhere(${h.name})`), `tx.updateWhere(${h.name})`) }, "update");
    } catch (e) {
      return Tx.#refused(this, e);
    }
    return DONE;
  }
  /**
   * Deletes every row matching a predicate: one op in the outbox.
   * @example await tx.deleteWhere(edits, (e) => lt(e.at, 10));
   */
  deleteWhere(t, where) {
    try {
      const st = Tx.#open(this, "tx.deleteWhere");
      const h = this.#owner.resolveTable(t, "tx.deleteWhere");
      const w = whereOf(h.def, where, `tx.deleteWhere(${h.name})`);
      pushOp(st, { op: "delete", table: h.name, where: w ?? null }, "delete");
    } catch (e) {
      return Tx.#refused(this, e);
    }
    return DONE;
  }
  /**
   * Deletes the edges of a node (a table made by defineEdges): out (from
   * = node), in (to = node) or both (the default), of one kind when
   * given. One `delete … where` op in the outbox, with its count.
   * @example await tx.deleteEdges(links, "a", { direction: "both" });
   */
  deleteEdges(t, node, options) {
    try {
      const st = Tx.#open(this, "tx.deleteEdges");
      const h = this.#owner.resolveTable(t, "tx.deleteEdges");
      pushOp(st, { op: "delete", table: h.name, where: edgesWhere(h, node, options, "tx.deleteEdges") }, "delete");
    } catch (e) {
      return Tx.#refused(this, e);
    }
    return DONE;
  }
  /**
   * The row with this key as this transaction sees it (its own writes
   * included), or undefined. Throws read_after_bulk after an
   * updateWhere or deleteWhere on the table in this transaction.
   * @example const mine = await tx.get(edits, ["e2"]);
   */
  async get(t, key) {
    const st = Tx.#open(this, "tx.get");
    const { gate, reads, resolveTable } = this.#owner;
    const h = resolveTable(t, "tx.get");
    if (!h.settled || h.failed) await reads.ready(h);
    Tx.#open(this, "tx.get");
    const kt = reads.keyText(h, key);
    const answer = withStaged(st, gate, `tx.get(${h.name})`, (batch) => gate.core.txGet(st.txId, batch, h.name, kt));
    return reads.rowOf(h, answer);
  }
  /**
   * A page of committed rows (not this transaction's own writes).
   * @example const { rows, next } = await tx.page(edits, q, 100);
   */
  async page(t, q, limit, options) {
    Tx.#open(this, "tx.page");
    const { reads, resolveTable } = this.#owner;
    const h = resolveTable(t, "tx.page");
    if (!h.settled || h.failed) await reads.ready(h);
    return reads.pageNow(h, q, limit, options);
  }
  /**
   * Every committed row of a query, page by page.
   * @example for await (const row of tx.rows(edits, q)) await tx.update(edits, [row.id], { dir: "a" });
   */
  rows(t, q) {
    Tx.#open(this, "tx.rows");
    const h = this.#owner.resolveTable(t, "tx.rows");
    return this.#owner.reads.rows(h, q);
  }
  /**
   * The number of committed rows of a query.
   * @example const n = await tx.count(edits, q);
   */
  async count(t, q) {
    Tx.#open(this, "tx.count");
    const { reads, resolveTable } = this.#owner;
    const h = resolveTable(t, "tx.count");
    if (!h.settled || h.failed) await reads.ready(h);
    return reads.countNow(h, q);
  }
  /**
   * A new id for an int-keyed table: above every stored id, every id
   * minted before and every id this transaction has put. Synchronous.
   * @example const id = tx.mintId(tasks); await tx.put(tasks, { id, title: "x" });
   */
  mintId(t) {
    const st = Tx.#open(this, "tx.mintId");
    const h = this.#owner.resolveTable(t, "tx.mintId");
    if (!h.settled) throw invalidArgs(`tx.mintId(${h.name}): the table is still being declared; await a read on it first`);
    const { gate } = this.#owner;
    const what = `tx.mintId(${h.name})`;
    // Above the ids this transaction has put, too: the ops written since the
    // last crossing are staged first (as tx.get stages them), so the core
    // sees their keys. A transaction that has written nothing mints as a
    // store does.
    if (st.ops.pending > 0) withStaged(st, gate, what, (batch) => gate.core.txStage(st.txId, batch));
    return mintedId(gate.call(what, () => gate.core.mintId(h.name, st.txId)));
  }

  // A tx kept for the life of the module, with a state of its own (ended).
  // Optimized code holds the classes it was compiled for weakly, and the
  // classes of a frozen tx and of its state were held only by live
  // transactions: a full collection with none open took them, and with
  // them the put path's code, compiled again in the next transaction
  // (docs/performance.md, "Issue 13, the class of a frozen tx").
  // Its state is a literal of runTx's members in runTx's order: V8 gives
  // such literals one class. Change both together (a shared function for
  // them cost download bytes); tests/js/tx-kept.test.js fails if their
  // classes part.
  static #kept = new Tx(null, { ops: null, txId: 0, open: false, committed: false, poisoned: null });
}
