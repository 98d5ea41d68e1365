// The store: opening, owners, table handles, transactions and the commit
// queue.
//
// Every backend is synchronous, so a commit step (core.commit, then adopt)
// runs inside one JS turn: with an idle queue it runs inside the call that
// asked for it, and `adopt` has run before `commit` returns. A commit asked
// for while a step runs (from an adopt hook, say) is queued and runs right
// after the current step, in order. One JS loop drains the queue, so commit
// order, seq order and adoption order are one order.
//
// JS crosses into the wasm core once per commit and once per page of rows
// (wasm/ABI.md): a transaction buffers its ops as encoded JSON and hands them
// over at tx.get (which must see them) and at its end.

import { asStoreError, ErrorCodes, invalidArgs, StoreError, unwrap } from "./errors.js";
import { encodeJson, parseJsonExact, rowDecoder, toWire } from "./encode.js";
import { isPred, toExpr } from "./expr.js";
import { isQuery, query as makeQuery, resolveWhere } from "./query.js";
import { describe, isTableDef, ownerName, tableName, tableRecord } from "./schema.js";
import { makeLive } from "./live.js";

const PAGE_SIZE = 100;

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
  if (options === null || typeof options !== "object") {
    throw invalidArgs(`openStore: options must be an object such as { backend: "memory" }, got ${describe(options)}`);
  }
  const { backend, path, name, id, durability, lockTimeout, onFenced, storage } = options;
  if (!runtime.backends.includes(backend)) {
    const names = runtime.backends.map((b) => JSON.stringify(b)).join(" or ");
    throw invalidArgs(`openStore: backend must be ${names} here, got ${describe(backend)}`);
  }
  if (backend === "sqlite" && (typeof path !== "string" || path === "")) {
    throw invalidArgs(`openStore: a sqlite store needs a path (a file, or ":memory:"), got ${describe(path)}`);
  }
  if (id !== undefined && (typeof id !== "string" || id === "")) {
    throw invalidArgs(`openStore: id must be a non-empty string, got ${describe(id)}`);
  }
  // A new store gets a random session id; an existing one keeps its own.
  // `session`: what a runtime holds for the store (opfs: its Web Lock and
  // file handles), released after the core closes; see makeStore.
  const { session, ...wire } = await runtime.prepare({
    backend, path, id: id ?? globalThis.crypto.randomUUID(), durability, lockTimeout,
    ...(backend === "opfs" ? { name, onFenced } : {}),
    ...(backend === "durable" ? { storage } : {}),
  });
  const release = () => { try { session?.release(); } catch { /* closing anyway */ } };
  let mod;
  let core;
  try {
    mod = await runtime.load();
    core = new mod.Core();
    // A runtime may wrap the core (workerd: the durable backend's writing
    // calls run inside ctx.storage.transactionSync).
    if (runtime.attach) core = runtime.attach(core, wire);
  } catch (e) {
    release();
    throw asStoreError(e, "openStore");
  }
  let info;
  try {
    info = JSON.parse(unwrap(core.open(encodeJson(wire, "options"))));
  } catch (e) {
    try { core.delete(); } catch { /* already gone */ }
    release();
    throw asStoreError(e, "openStore");
  }
  return makeStore(core, info, session);
}

function closedError(what) {
  return new StoreError(ErrorCodes.Closed, `${what}: the store is closed; open it again with openStore()`);
}

/**
 * The store over an opened wasm `Core`.
 *
 * @example
 * const store = makeStore(core, { id: "s1", head: 0 });
 */
export function makeStore(core, info, session) {
  const owners = new Map();
  const queue = [];
  let running = false;
  let holds = 0;
  let closing = false;
  let closed = false;
  let closePromise;
  let broken = null;  // a StoreError after a wasm trap: the instance is not trusted any more
  let lastHead = info.head;

  // A runtime session (opfs) fences the store when another owner takes it
  // over: every later call rejects with `err` (fenced), and the core closes
  // now so that the session can release its files.
  if (session) {
    session.fence = (err) => {
      if (closed || broken) return;
      broken = err;
      try { lastHead = Number(core.head()); } catch { /* keep it */ }
      try { core.close(); } catch { /* closing anyway */ }
    };
  }

  // Calls the core; returns its payload or throws a StoreError.
  function call(what, fn) {
    if (closed) throw closedError(what);
    if (broken) throw broken;
    let answer;
    try {
      answer = fn();
    } catch (e) {
      const err = asStoreError(e, what);
      if (err.code === ErrorCodes.StorageFailed) broken = err;
      throw err;
    }
    return unwrap(answer);
  }

  function checkOpen(what) {
    if (closing || closed) throw closedError(what);
  }

  // ---- the commit queue ----

  function drain() {
    if (running) return;
    running = true;
    try {
      while (queue.length > 0 && holds === 0) queue.shift()();
    } finally {
      running = false;
    }
  }

  // Queues one commit step: `commit()` crosses into the core and returns its
  // parsed answer; `adopt(seq, result)` runs right after, inside the step;
  // then the flush (js/live.js) gets the commit's ops from `opsOf(result)`.
  // Resolves to the seq.
  function step(commit, adopt, opsOf) {
    return new Promise((resolve, reject) => {
      queue.push(() => {
        let result;
        try {
          result = commit();
        } catch (e) {
          reject(e);
          return;
        }
        lastHead = result.seq;
        let failed = null;
        try {
          if (adopt) adopt(result.seq, result);
        } catch (e) {
          failed = e;  // committed and durable; the adopt hook failed
        }
        liveParts.flush(result.seq, () => opsOf(result));
        if (failed) reject(failed);
        else resolve(result.seq);
      });
      drain();
    });
  }

  function metaText(owner, ctx, what) {
    if (ctx !== undefined && ctx !== null && typeof ctx !== "object") {
      throw invalidArgs(`${what}: the context must be an object such as { actor: { kind: "person", id: "ana" } }, got ${describe(ctx)}`);
    }
    const actor = ctx?.actor;
    if (actor !== undefined && (actor === null || typeof actor !== "object" || typeof actor.kind !== "string" || typeof actor.id !== "string")) {
      throw invalidArgs(`${what}: ctx.actor must be { kind, id, for?, via? } with string kind and id (for: another actor), got ${describe(actor)}`);
    }
    const meta = { owner, at: Date.now() };
    if (actor !== undefined) meta.actor = actor;
    return encodeJson(meta, "meta");
  }

  // ---- reads of committed state ----

  function columnsOf(h) {
    if (!h.decode) {
      const tables = JSON.parse(call("tables", () => core.tables()));
      const record = tables.find((t) => t.table === h.name);
      const cols = record
        ? Object.entries(record.columns).map(([name, c]) => ({ name, type: c.type }))
        : Object.entries(h.def.columns).map(([name, c]) => ({ name, type: c.type }));
      h.decode = rowDecoder(cols);
    }
    return h.decode;
  }

  function keyText(h, key) {
    if (key === undefined) throw invalidArgs(`${h.name}: a key is needed, such as ["e1"] or "e1", got undefined`);
    return encodeJson(Array.isArray(key) ? key : [key], "key");
  }

  function queryText(h, q) {
    const qq = q === undefined || q === null ? makeQuery(h.def) : q;
    if (!isQuery(qq)) throw invalidArgs(`${h.name}: expected a query such as query(${h.def.name}).where(...), got ${describe(q)}`);
    if (qq.table !== h.def && qq.table.name !== h.def.name) {
      throw invalidArgs(`${h.name}: the query is over table ${JSON.stringify(qq.table.name)}, not ${JSON.stringify(h.def.name)}`);
    }
    return encodeJson(qq.toJSON(), "query");
  }

  async function ready(h) {
    if (!h.settled) await h.pending;
    if (h.failed) throw h.failed;
  }

  function getNow(h, key) {
    const text = keyText(h, key);
    const answer = call(`${h.name}.get`, () => core.get(h.name, text));
    return answer === "null" || answer === "" ? undefined : columnsOf(h)(JSON.parse(answer));
  }

  function pageNow(h, q, limit, options) {
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw invalidArgs(`${h.name}.page: limit must be a positive integer, got ${describe(limit)}`);
    }
    if (options !== undefined && (options === null || typeof options !== "object")) {
      throw invalidArgs(`${h.name}.page: the last argument must be { after }, got ${describe(options)}`);
    }
    const after = options?.after ?? "";
    if (typeof after !== "string") {
      throw new StoreError(ErrorCodes.InvalidCursor, `${h.name}.page: ${describe(after)} is not a cursor (use the next of an earlier page)`);
    }
    const text = queryText(h, q);
    const answer = JSON.parse(call(`${h.name}.page`, () => core.page(h.name, text, limit, after)));
    const decode = columnsOf(h);
    const page = { rows: answer.rows.map(decode) };
    if (answer.next !== undefined && answer.next !== null && answer.next !== "") page.next = answer.next;
    return page;
  }

  function countNow(h, q) {
    const text = queryText(h, q);
    return Number(call(`${h.name}.count`, () => core.count(h.name, text)));
  }

  async function* rowsOf(h, q) {
    let after = "";
    for (;;) {
      checkOpen(`${h.name}.rows`);
      const page = pageNow(h, q, PAGE_SIZE, { after });
      yield* page.rows;
      if (!page.next) return;
      after = page.next;
    }
  }

  // Reads share one form: (handle, ...args). These check the handle and wait
  // for its declaration to commit.
  const reads = {
    async get(h, key) {
      checkOpen("get");
      if (!h.settled || h.failed) await ready(h);
      return getNow(h, key);
    },
    async page(h, q, limit, options) {
      checkOpen("page");
      if (!h.settled || h.failed) await ready(h);
      return pageNow(h, q, limit, options);
    },
    rows(h, q) {
      return {
        async *[Symbol.asyncIterator]() {
          checkOpen("rows");
          if (!h.settled || h.failed) await ready(h);
          yield* rowsOf(h, q);
        },
      };
    },
    async count(h, q) {
      checkOpen("count");
      if (!h.settled || h.failed) await ready(h);
      return countNow(h, q);
    },
  };

  const handles = new WeakMap();  // public handle -> its state
  const byFullName = new Map();   // "file-history/edits" -> its state

  function asHandle(t, what) {
    const h = t !== null && typeof t === "object" ? handles.get(t) : undefined;
    if (h) return h;
    throw invalidArgs(`${what}: expected a table handle from owner.table(${isTableDef(t) ? t.name : "..."}), got ${describe(t)}`);
  }

  // ---- owners and their tables ----

  function makeOwner(name, address, hooks) {
    const tables = new Map();
    let line = Promise.resolve();

    function adoptHook(seq, ops) {
      if (hooks?.adopt) hooks.adopt(seq, ops);
    }

    function table(def) {
      checkOpen(`${name}.table`);
      if (!isTableDef(def)) throw invalidArgs(`${name}.table: expected a table made by defineTable, got ${describe(def)}`);
      const known = tables.get(def.name);
      if (known) {
        if (known.def !== def) {
          throw invalidArgs(`${name}.table: table ${JSON.stringify(def.name)} is already open with another definition`);
        }
        return known;
      }
      const full = tableName(name, def);
      const recordText = encodeJson(tableRecord(full, def), "table");
      const records = call(`${name}.table(${def.name})`, () => core.declare(recordText));
      // The handle's own state stays here; users get the frozen `handle`.
      const h = { owner, name: full, def, settled: true, pending: null, failed: null, decode: null };
      const handle = Object.freeze({
        /** The table's full name in the store ("file-history/edits"). */
        name: full,
        /** The definition it was opened with. */
        def,
        /** The owner that opened it. */
        owner,
        /**
         * The row with this key, or undefined. Committed state. A one-column
         * key may be given bare.
         * @example const e1 = await edits.get(["e1"], ctx);
         */
        get: (key, ctx) => reads.get(h, key),
        /**
         * One page of a query: { rows, next? }. Pass `next` as `after` for the
         * following page.
         * @example const { rows, next } = await edits.page(q, 20, ctx, { after: cursor });
         */
        page: (q, limit, ctx, options) => reads.page(h, q, limit, options),
        /**
         * Every row of a query, page by page.
         * @example for await (const row of edits.rows(q, ctx)) console.log(row.path);
         */
        rows: (q, ctx) => reads.rows(h, q),
        /**
         * The number of rows of a query.
         * @example const n = await edits.count(query(Edits).where((e) => prefix(e.path, "a/")), ctx);
         */
        count: (q, ctx) => reads.count(h, q),
      });
      handles.set(handle, h);
      tables.set(def.name, handle);
      byFullName.set(full, h);
      if (records !== "") {
        const ops = parseJsonExact(records);
        const meta = metaText(name, undefined, `${name}.table`);
        h.settled = false;
        h.pending = step(
          () => {
            try {
              return JSON.parse(call(`${name}.table(${def.name})`, () => core.commit(records, meta)));
            } catch (e) {
              h.failed = e;
              h.settled = true;
              if (tables.get(def.name) === handle) tables.delete(def.name);
              if (byFullName.get(full) === h) byFullName.delete(full);
              throw e;
            }
          },
          (seq) => {
            h.settled = true;
            adoptHook(seq, ops);
          },
          () => ops,
        ).then(() => undefined, () => undefined);
        if (h.failed) throw h.failed;  // the step ran at once and failed
      }
      return handle;
    }

    function resolveTable(t, what) {
      const h = asHandle(isTableDef(t) ? table(t) : t, what);
      if (h.owner !== owner) {
        throw invalidArgs(`${what}: table ${h.name} belongs to owner ${JSON.stringify(h.owner.name)}, not ${JSON.stringify(name)}`);
      }
      return h;
    }

    async function runTx(fn, ctx) {
      checkOpen(`${name}.tx`);
      if (typeof fn !== "function") throw invalidArgs(`${name}.tx: expected an async function (tx) => ..., got ${describe(fn)}`);
      const st = { ops: [], bulk: [], texts: [], sent: 0, txId: 0, open: true, committed: false, poisoned: null };
      const tx = makeTx(st);
      try {
        const result = await fn(tx);
        st.open = false;
        if (st.poisoned) throw st.poisoned;
        if (st.ops.length > 0) {
          checkOpen(`${name}.tx`);
          const meta = metaText(name, ctx, `${name}.tx`);
          await step(
            () => {
              const batch = `[${st.texts.slice(st.sent).join(",")}]`;
              const answer = st.txId
                ? call(`${name}.tx`, () => core.txCommit(st.txId, toWire(batch), meta))
                : call(`${name}.tx`, () => core.commit(toWire(batch), meta));
              st.committed = true;
              return JSON.parse(answer);
            },
            (seq, res) => {
              const counts = res.counts ?? [];
              st.ops.forEach((op, i) => {
                if (st.bulk[i]) op.count = counts[i];
              });
              adoptHook(seq, st.ops);
            },
            () => st.ops,
          );
        }
        return result;
      } finally {
        st.open = false;
        if (st.txId && !st.committed && !closed && !broken) {
          try { core.txClose(st.txId); } catch { /* the tx is gone with the instance */ }
        }
      }
    }

    function makeTx(st) {
      function live(what) {
        if (!st.open) throw invalidArgs(`${what}: the transaction has ended; use tx only inside its callback`);
        if (st.poisoned) throw st.poisoned;
        checkOpen(what);
      }
      function push(op, text, bulk = false) {
        st.ops.push(op);
        st.bulk.push(bulk);
        st.texts.push(text);
      }
      function opText(op, what) {
        return encodeJson(op, what);
      }
      function setOf(h, set, what) {
        if (set === null || typeof set !== "object" || Array.isArray(set) || isPred(set)) {
          throw invalidArgs(`${what}: set must be an object of column: value or expression, got ${describe(set)}`);
        }
        const out = {};
        for (const [c, v] of Object.entries(set)) {
          if (v === undefined) continue;
          out[c] = toExpr(v);
        }
        return out;
      }
      const tx = {
        /**
         * Writes a whole row (insert or replace).
         * @example await tx.put(edits, { id: "e1", path: "a/x.ts", entry: 812, at: 1, meta: {} });
         */
        async put(t, row) {
          live("tx.put");
          const h = resolveTable(t, "tx.put");
          if (row === null || typeof row !== "object" || Array.isArray(row)) {
            throw invalidArgs(`tx.put(${h.name}): the row must be an object, got ${describe(row)}`);
          }
          const op = { op: "put", table: h.name, row: { ...row } };
          push(op, opText(op, "put"));
        },
        /**
         * Sets columns of one row, by key. A plain value means value(v).
         * @example await tx.update(edits, ["e1"], { at: add(col("at"), 1) });
         */
        async update(t, key, set) {
          live("tx.update");
          const h = resolveTable(t, "tx.update");
          const op = { op: "update", table: h.name, key: Array.isArray(key) ? [...key] : [key], set: setOf(h, set, `tx.update(${h.name})`) };
          push(op, opText(op, "update"));
        },
        /**
         * Deletes one row, by key.
         * @example await tx.delete(edits, ["e1"]);
         */
        async delete(t, key) {
          live("tx.delete");
          const h = resolveTable(t, "tx.delete");
          const op = { op: "delete", table: h.name, key: Array.isArray(key) ? [...key] : [key] };
          push(op, opText(op, "delete"));
        },
        /**
         * Sets columns of every row matching a predicate: one op in the outbox,
         * whatever the row count. `where` undefined means every row.
         * @example await tx.updateWhere(edits, (e) => prefix(e.path, "a/"), { path: replacePrefix("a/", "b/") });
         */
        async updateWhere(t, where, set) {
          live("tx.updateWhere");
          const h = resolveTable(t, "tx.updateWhere");
          const w = resolveWhere(h.def, where, `tx.updateWhere(${h.name})`);
          // No predicate (where: null) means every row.
          const op = { op: "update", table: h.name, where: w ?? null };
          op.set = setOf(h, set, `tx.updateWhere(${h.name})`);
          push(op, opText(op, "update"), true);
        },
        /**
         * Deletes every row matching a predicate: one op in the outbox.
         * @example await tx.deleteWhere(edits, (e) => lt(e.at, 10));
         */
        async deleteWhere(t, where) {
          live("tx.deleteWhere");
          const h = resolveTable(t, "tx.deleteWhere");
          const w = resolveWhere(h.def, where, `tx.deleteWhere(${h.name})`);
          const op = { op: "delete", table: h.name, where: w ?? null };
          push(op, opText(op, "delete"), true);
        },
        /**
         * The row with this key as this transaction sees it (its own writes
         * included), or undefined. Throws read_after_bulk after an
         * updateWhere or deleteWhere on the table in this transaction.
         * @example const mine = await tx.get(edits, ["e2"]);
         */
        async get(t, key) {
          live("tx.get");
          const h = resolveTable(t, "tx.get");
          if (!h.settled || h.failed) await ready(h);
          live("tx.get");
          const kt = keyText(h, key);
          if (!st.txId) st.txId = Number(call("tx.get", () => core.txOpen()));
          const batch = `[${st.texts.slice(st.sent).join(",")}]`;
          let answer;
          try {
            answer = call(`tx.get(${h.name})`, () => core.txGet(st.txId, toWire(batch), h.name, kt));
          } catch (e) {
            // read_after_bulk comes after the ops were staged; any other
            // failure leaves the staged state unknown, so the tx cannot commit.
            if (e instanceof StoreError && e.code === ErrorCodes.ReadAfterBulk) st.sent = st.texts.length;
            else st.poisoned = e;
            throw e;
          }
          st.sent = st.texts.length;
          return answer === "null" || answer === "" ? undefined : columnsOf(h)(JSON.parse(answer));
        },
        /**
         * A page of committed rows (not this transaction's own writes).
         * @example const { rows, next } = await tx.page(edits, q, 100);
         */
        async page(t, q, limit, options) {
          live("tx.page");
          const h = resolveTable(t, "tx.page");
          if (!h.settled || h.failed) await ready(h);
          return pageNow(h, q, limit, options);
        },
        /**
         * Every committed row of a query, page by page.
         * @example for await (const row of tx.rows(edits, q)) await tx.update(edits, [row.id], { dir: "a" });
         */
        rows(t, q) {
          live("tx.rows");
          const h = resolveTable(t, "tx.rows");
          return reads.rows(h, q);
        },
        /**
         * The number of committed rows of a query.
         * @example const n = await tx.count(edits, q);
         */
        async count(t, q) {
          live("tx.count");
          const h = resolveTable(t, "tx.count");
          if (!h.settled || h.failed) await ready(h);
          return countNow(h, q);
        },
        /**
         * A new id for an int-keyed table: above every stored id and every id
         * minted before. Synchronous.
         * @example const id = tx.mintId(tasks); await tx.put(tasks, { id, title: "x" });
         */
        mintId(t) {
          live("tx.mintId");
          const h = resolveTable(t, "tx.mintId");
          if (!h.settled) throw invalidArgs(`tx.mintId(${h.name}): the table is still being declared; await a read on it first`);
          const v = call(`tx.mintId(${h.name})`, () => core.mintId(h.name));
          return typeof v === "string" ? Number(v) : v;
        },
      };
      return Object.freeze(tx);
    }

    const owner = {
      /** The owner's name: its type, or "<host>:<type>". */
      name,
      /** The object address it was opened with. */
      address: Object.freeze({ host: "session", ...address }),
      /**
       * Opens one of the owner's tables ("<owner>/<name>" in the store). A new
       * or changed table is declared in a commit of its own.
       * @example const edits = fileHistory.table(Edits);
       */
      table,
      /**
       * Runs a transaction on the owner's line: the tx callbacks of one
       * owner never overlap. Resolves to the callback's value once the
       * commit is durable and the owner's adopt hook has run; a throwing
       * callback commits nothing and the tx rejects with its error. A tx
       * without writes commits nothing (no seq). If the adopt hook throws,
       * the commit stays (it is durable) and the tx rejects with the hook's
       * error. Do not await another tx of the same owner inside the
       * callback: it waits for this one.
       * @example await fileHistory.tx(async (tx) => { await tx.put(edits, row); }, ctx);
       */
      tx(fn, ctx) {
        const run = line.then(() => runTx(fn, ctx));
        line = run.then(() => undefined, () => undefined);
        return run;
      },
      /**
       * Calls `listener(ops, seq)` after the flush of each commit that
       * touched the table, in seq order, with that commit's ops for it.
       * Returns the unsubscribe function. (js/watch.js)
       * @example const off = fileHistory.watch(edits, (ops, seq) => console.log(seq, ops.length));
       */
      watch(t, listener) {
        checkOpen(`${name}.watch`);
        const h = resolveTable(t, `${name}.watch`);
        return liveParts.watches.add(h.name, listener, `${name}.watch(${h.name})`);
      },
    };
    return Object.freeze(owner);
  }

  // ---- the store ----

  const store = {
    /** The session id. */
    get id() {
      return info.id;
    },
    /** The last committed seq (0 for a new store). */
    get head() {
      if (closed || broken) return lastHead;
      try {
        const h = core.head();
        lastHead = typeof h === "string" ? Number(h) : h;
      } catch { /* keep the last known head */ }
      return lastHead;
    },
    /**
     * The owner of an object address. The same address gives the same owner.
     * `adopt(seq, ops)` runs inside each of its commit steps.
     * @example const fileHistory = store.object({ host: "session", type: "file-history" }, { adopt(seq, ops) { view.apply(ops); } });
     */
    object(address, hooks) {
      checkOpen("store.object");
      const name = ownerName(address);
      if (hooks !== undefined && (hooks === null || typeof hooks !== "object" || (hooks.adopt !== undefined && typeof hooks.adopt !== "function"))) {
        throw invalidArgs(`store.object(${name}): the second argument must be { adopt(seq, ops) }, got ${describe(hooks)}`);
      }
      const known = owners.get(name);
      if (known) {
        if (hooks !== undefined) throw invalidArgs(`store.object(${name}): the owner is already open; pass its hooks only the first time`);
        return known;
      }
      const o = makeOwner(name, address, hooks);
      owners.set(name, o);
      return o;
    },
    /**
     * The low-level commit seam: `writes` are wire ops, `adopt(seq)` runs
     * once, synchronously, after the commit is durable and before the next
     * commit starts. With an idle queue it has run before this returns.
     * @example const seq = await store.commit([{ op: "put", table: "notes/items", row: { id: "n1" } }], (seq) => { view.seq = seq; }, ctx);
     */
    commit(writes, adopt, ctx) {
      try {
        checkOpen("store.commit");
        if (!Array.isArray(writes)) throw invalidArgs(`store.commit: writes must be an array of ops, got ${describe(writes)}`);
        if (adopt !== undefined && adopt !== null && typeof adopt !== "function") {
          throw invalidArgs(`store.commit: adopt must be a function (seq) => void, got ${describe(adopt)}`);
        }
        const ops = encodeJson(writes, "ops");
        const meta = metaText("store", ctx, "store.commit");
        return step(
          () => JSON.parse(call("store.commit", () => core.commit(toWire(ops), meta))),
          adopt ? (seq) => adopt(seq) : undefined,
          (res) => parseJsonExact(ops).map((op, i) => (op && op.where !== undefined ? { ...op, count: res.counts?.[i] } : op)),
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
      checkOpen("store.derive");
      return liveParts.derives.define(name, fn);
    },
    /**
     * Runs several reads on one consistent state: the commit queue waits
     * while the callback runs, and its commits run afterwards in order.
     * Do not await a commit of this store inside the callback.
     * @example const [a, n] = await store.read(async (r) => [await r.get(edits, "e1"), await r.count(edits)]);
     */
    async read(fn) {
      checkOpen("store.read");
      if (typeof fn !== "function") throw invalidArgs(`store.read: expected an async function (r) => ..., got ${describe(fn)}`);
      holds++;
      try {
        return await fn(reader);
      } finally {
        holds--;
        drain();
      }
    },
    /**
     * A short digest of the content at the current head (every table's
     * schema and rows; not the head or the outbox): equal content gives
     * equal fingerprints on every backend, replicas included.
     * @example const fp = await store.fingerprint();
     */
    async fingerprint() {
      checkOpen("store.fingerprint");
      return call("store.fingerprint", () => core.fingerprint());
    },
    outbox: Object.freeze({
      /**
       * The commits after seq `after`, at most `limit` of them:
       * { from, to, commits: [record, ...] }.
       * @example const batch = await store.outbox.read(0, 100); await relay.send(batch);
       */
      async read(after = 0, limit = 100) {
        checkOpen("outbox.read");
        if (!Number.isSafeInteger(after) || after < 0) throw invalidArgs(`outbox.read: after must be a seq (an integer >= 0), got ${describe(after)}`);
        if (!Number.isSafeInteger(limit) || limit < 1) throw invalidArgs(`outbox.read: limit must be a positive integer, got ${describe(limit)}`);
        return parseJsonExact(call("outbox.read", () => core.outboxRead(after, limit)));
      },
      /**
       * Removes the records up to seq `upTo` (after the relay acknowledged
       * them). Resolves to the number removed.
       * @example await store.outbox.trim(batch.to);
       */
      async trim(upTo) {
        checkOpen("outbox.trim");
        if (!Number.isSafeInteger(upTo) || upTo < 0) throw invalidArgs(`outbox.trim: upTo must be a seq (an integer >= 0), got ${describe(upTo)}`);
        return Number(call("outbox.trim", () => core.outboxTrim(upTo)));
      },
    }),
    /**
     * Closes the store after the commits already queued. Later calls reject
     * with `closed`. Closing twice is fine.
     * @example await store.close();
     */
    close() {
      if (!closePromise) {
        closing = true;
        closePromise = new Promise((resolve) => {
          queue.push(() => {
            try { if (!broken) lastHead = Number(core.head()); } catch { /* keep it */ }
            try { core.close(); } catch { /* closing anyway */ }
            try { core.delete(); } catch { /* already freed */ }
            try { session?.release(); } catch { /* released anyway */ }
            closed = true;
            liveParts.close();
            resolve();
          });
          drain();
        });
      }
      return closePromise;
    },
    [Symbol.asyncDispose]() {
      return store.close();
    },
  };

  // Synchronous reads of committed state, for derives and links.
  const io = {
    handleOf(t, what) {
      checkOpen(what);
      const h = typeof t === "string" ? byFullName.get(t) : asHandle(t, what);
      if (!h) throw invalidArgs(`${what}: no table ${JSON.stringify(t)} is open in this store; open it with owner.table(def) first`);
      return h;
    },
    getNow,
    pageNow,
    countNow,
    head: () => lastHead,
    outboxRead: (after, limit) => parseJsonExact(call("read.outbox", () => core.outboxRead(after, limit))),
  };
  const liveParts = makeLive(io);
  internals.set(store, { live: liveParts, io });

  const reader = Object.freeze({
    get: (t, key) => reads.get(asHandle(t, "read.get"), key),
    page: (t, q, limit, options) => reads.page(asHandle(t, "read.page"), q, limit, options),
    rows: (t, q) => reads.rows(asHandle(t, "read.rows"), q),
    count: (t, q) => reads.count(asHandle(t, "read.count"), q),
  });

  return store;
}
