// The Worker the workerd tests run (tests/edge/*.test.js, through
// tests/edge/harness.js). POST /<object>/<op> with a JSON body goes to the
// Durable Object named <object> (class TestSession, SQLite storage), which
// runs <op> against a store opened with { backend: "durable", storage:
// ctx.storage } and answers { ok, result } or { ok: false, code, message }.
// BigInts cross as {"$bigint":"digits"}.

import assert from "node:assert/strict";

import * as api from "../../js/workerd.js";
import { conformanceRunner, createCaseRunner } from "../conformance/runner.js";
import { afterTrim, runHistory } from "../history/scenario.js";

const { openStore, defineTable, str, int, num, add, col, and, or, eq, gt, isNull, query, prefix } = api;

const CaseRunner = createCaseRunner(api, assert);
const { replicateCase } = conformanceRunner(api, assert);

const Notes = defineTable("notes", {
  columns: { id: int(), title: str(), body: str().optional(), n: int({ default: 0 }), score: num().optional() },
  key: ["id"],
  indexes: { byTitle: ["title"] },
});

function encode(v) {
  return JSON.stringify(v, (k, x) => (typeof x === "bigint" ? { $bigint: x.toString() } : x));
}
function decode(text) {
  return JSON.parse(text, (k, x) =>
    x !== null && typeof x === "object" && !Array.isArray(x) && Object.keys(x).length === 1 && typeof x.$bigint === "string"
      ? BigInt(x.$bigint) : x);
}

const ctxOf = (who) => ({ actor: { kind: "service", id: who } });

// The storage with every sql.exec recorded: its text, and whether it ran
// inside transactionSync. It only watches; the calls go to the real storage.
function watched(storage, log) {
  let depth = 0;
  const sql = new Proxy(storage.sql, {
    get(target, prop) {
      if (prop === "exec") {
        return (text, ...params) => {
          log.push({ text, inTransaction: depth > 0 });
          return target.exec(text, ...params);
        };
      }
      const v = target[prop];
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return new Proxy(storage, {
    get(target, prop) {
      if (prop === "sql") return sql;
      if (prop === "transactionSync") {
        return (fn) => target.transactionSync(() => {
          depth++;
          try { return fn(); } finally { depth--; }
        });
      }
      const v = target[prop];
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

export class TestSession {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.adopted = [];
    this.log = [];
  }

  async open() {
    if (!this.store) {
      this.storage ??= watched(this.ctx.storage, this.log);
      this.store = await openStore({ backend: "durable", storage: this.storage, id: "edge-test" });
      // Adoption order, with the titles each commit put.
      this.owner = this.store.object({ host: "session", type: "notes" }, {
        adopt: (seq, ops) => this.adopted.push({ seq, titles: (ops ?? []).map((o) => o.row?.title ?? null) }),
      });
      this.notes = this.owner.table(Notes);
    }
    return this.store;
  }

  async fetch(request) {
    const op = new URL(request.url).pathname.split("/")[2];
    const args = decode(await request.text());
    try {
      if (typeof this[`op_${op}`] !== "function") throw new Error(`no op ${op}`);
      const result = await this[`op_${op}`](args);
      return new Response(encode({ ok: true, result }));
    } catch (e) {
      return new Response(encode({ ok: false, code: e?.code, message: String(e?.message ?? e), stack: e?.stack }));
    }
  }

  // tests/history/scenario.js on a fresh store in this object's SQLite: the
  // store's state and store.at's views at every seq, the log, then what a
  // trim leaves.
  async op_history() {
    const store = await openStore({ backend: "durable", storage: this.ctx.storage });
    try {
      const run = await runHistory(api, store);
      return { run, trim: await afterTrim(store, 3) };
    } finally {
      await store.close();
    }
  }

  // One conformance case on a fresh store in this object's SQLite.
  async op_conformance({ doc, index }) {
    await new CaseRunner(doc, { backend: "durable", storage: this.ctx.storage }).run(doc.cases[index].steps);
    return true;
  }

  // One conformance case on a memory store in this isolate, replayed into a
  // replica on this object's SQLite (durable) and checked row by row;
  // returns the fingerprint (tests/edge/replica.test.js compares it with
  // Node's).
  async op_replicaConformance({ doc, index }) {
    return replicateCase(doc, doc.cases[index], { backend: "memory" }, { backend: "durable", storage: this.ctx.storage });
  }

  // A durable replica given `first` (a batch with a mutated count), then
  // `good` (the batch as recorded), then reopened on the same storage and
  // given `good` again: what each step answered.
  async op_replicaDiverges({ first, good }) {
    const out = {};
    const attempt = async (replica, batch) => {
      try {
        return (await replica.applyBatch(batch)).head;
      } catch (e) {
        return e.code;
      }
    };
    let replica = await api.openReplica({ backend: "durable", storage: this.ctx.storage });
    out.first = await attempt(replica, first);
    out.headAfterFirst = replica.head;
    out.tablesAfterFirst = replica.tables();
    out.good = await attempt(replica, good);
    await replica.close();
    replica = await api.openReplica({ backend: "durable", storage: this.ctx.storage });
    out.divergedAfterReopen = replica.diverged;
    out.goodAfterReopen = await attempt(replica, good);
    out.headAfterReopen = replica.head;
    await replica.close();
    return out;
  }

  // A durable replica given `batches` in order, then closed; its head,
  // tables and fingerprint, and a refused owner write's code.
  async op_replicaApply({ batches }) {
    const replica = await api.openReplica({ backend: "durable", storage: this.ctx.storage });
    try {
      for (const b of batches) await replica.applyBatch(b);
      let refused;
      try { await replica.commit([]); } catch (e) { refused = e.code; }
      return { head: replica.head, tables: replica.tables(), fingerprint: await replica.fingerprint(), refused };
    } finally {
      await replica.close();
    }
  }

  // Puts rows [{id, title, body?}] in one transaction; returns the seq.
  async op_put({ rows, who = "put" }) {
    await this.open();
    await this.owner.tx(async (tx) => {
      for (const r of rows) await tx.put(this.notes, r);
    }, ctxOf(who));
    return this.store.head;
  }

  // Trims the outbox up to `upTo`; what is left of it, raw.
  async op_trim({ upTo }) {
    await this.open();
    const removed = await this.store.outbox.trim(upTo);
    const sql = this.ctx.storage.sql;
    const parts = sql.exec("SELECT count(*) AS n FROM _outbox_parts").one().n;
    const records = sql.exec("SELECT count(*) AS n FROM _outbox").one().n;
    return { removed, parts, records };
  }

  // Puts `n` rows (ids from 1, title "<prefix><id>") in one transaction,
  // then reads its outbox record back: a summary (the record is megabytes).
  async op_bulk({ n, prefix: titlePrefix = "t" }) {
    await this.open();
    const before = this.store.head;
    await this.owner.tx(async (tx) => {
      for (let id = 1; id <= n; id++) await tx.put(this.notes, { id, title: `${titlePrefix}${id}` });
    });
    const seq = this.store.head;
    const read = await this.store.outbox.read(seq - 1, 1);
    const record = read.commits[0];
    const sql = this.ctx.storage.sql;
    const parts = sql.exec("SELECT count(*) AS n FROM _outbox_parts WHERE seq = ?", seq).one().n;
    const format = sql.exec("SELECT CAST(value AS TEXT) AS v FROM _meta WHERE key = 'outbox_format'").one().v;
    let titlesInOrder = record.ops.length === n;
    for (let i = 0; titlesInOrder && i < n; i++) titlesInOrder = record.ops[i].op === "put" && record.ops[i].row.id === i + 1 && record.ops[i].row.title === `${titlePrefix}${i + 1}`;
    return {
      before, seq, to: read.to, recordSeq: record.seq, ops: record.ops.length, titlesInOrder,
      recordBytes: new TextEncoder().encode(JSON.stringify(record)).length,
      parts, format, count: await this.notes.count(), last: await this.notes.get(n),
    };
  }

  // Puts rows in one transaction with a watch on the table; returns the ops
  // the adopt hook, the watch and the outbox record saw for that commit.
  async op_putSeen({ rows }) {
    await this.open();
    let adopted;
    const hook = this.store.object({ host: "session", type: "seen" }, { adopt: (seq, ops) => { adopted = { seq, ops }; } });
    const notes = hook.table(Notes);
    await notes.count();
    let watched;
    const off = hook.watch(notes, (ops, seq) => { watched = { seq, ops }; });
    await hook.tx(async (tx) => { for (const r of rows) await tx.put(notes, r); });
    const seq = this.store.head;
    await new Promise((r) => setTimeout(r, 0));
    off();
    const record = (await this.store.outbox.read(seq - 1, 1)).commits[0];
    return { seq, adopted, watched, record: { seq: record.seq, ops: record.ops } };
  }

  // Puts a row, then throws inside the same transaction.
  async op_putThenThrow({ row }) {
    await this.open();
    await this.owner.tx(async (tx) => {
      await tx.put(this.notes, row);
      throw new Error("boom in the transaction");
    }, ctxOf("thrower"));
  }

  // Puts a row and deletes where a predicate of `terms` isNull tests (no
  // parameters: the statement's length grows with terms).
  async op_putAndLongDelete({ row, terms }) {
    await this.open();
    const w = and(...Array.from({ length: terms }, () => isNull(col("body"))));
    await this.owner.tx(async (tx) => {
      await tx.put(this.notes, row);
      await tx.deleteWhere(this.notes, () => w);
    }, ctxOf("long"));
    return this.store.head;
  }

  // Puts a row and deletes where one of `n` titles (or, with on: "score",
  // a score above each of n nums, which stay bound parameters: comparisons
  // other than equalities are not folded into one IN list) matches (n
  // parameters).
  async op_putAndWideDelete({ row, n, on = "title" }) {
    await this.open();
    const w = or(...Array.from({ length: n }, (_, i) => (on === "score" ? gt(col("score"), i + 0.5) : eq(col("title"), `t${i}`))));
    await this.owner.tx(async (tx) => {
      await tx.put(this.notes, row);
      await tx.deleteWhere(this.notes, () => w);
    }, ctxOf("wide"));
    return this.store.head;
  }

  // A table of 100 columns (the most a table has: the key and c0..c98, ints,
  // strs and nums in turn): puts a row, updates every column by key with
  // expressions that bind two values each (148 parameters; c0 from c2 as the
  // row was), then every column again with a where (101 parameters), and
  // reads the row back after each; the record of the last commit.
  async op_wideWrites() {
    await this.open();
    const width = 99;
    const columns = { id: str() };
    const kind = (i) => (i % 10 === 9 ? "num" : i % 2 ? "str" : "int");
    for (let i = 0; i < width; i++) columns[`c${i}`] = { int: int(), str: str(), num: num() }[kind(i)];
    const Wide = defineTable("wide", { columns, key: ["id"] });
    const wide = this.owner.table(Wide);
    const value = (i, round) => (kind(i) === "int" ? i * 1000 + round : kind(i) === "str" ? `it's ${i}/${round}` : i + round / 4);
    const row = (round) => Object.fromEntries([["id", "w"], ...Array.from({ length: width }, (_, i) => [`c${i}`, value(i, round)])]);
    await this.owner.tx(async (tx) => { await tx.put(wide, row(0)); }, ctxOf("wide"));
    const set = {};
    const expected1 = row(1);
    for (let i = 0; i < width; i++) {
      if (kind(i) !== "int") {
        set[`c${i}`] = value(i, 1);
      } else {
        set[`c${i}`] = add(add(col(`c${i}`), 400), 600);
        expected1[`c${i}`] = value(i, 0) + 1000;
      }
    }
    set.c0 = col("c2");  // read from the row as it was
    expected1.c0 = value(2, 0);
    await this.owner.tx(async (tx) => { await tx.update(wide, ["w"], set); }, ctxOf("wide"));
    const afterKey = await wide.get("w");
    const set2 = row(2);
    delete set2.id;
    await this.owner.tx(async (tx) => { await tx.updateWhere(wide, (w) => and(eq(w.id, "w"), eq(w.c1, value(1, 1))), set2); }, ctxOf("wide"));
    const afterWhere = await wide.get("w");
    const { commits } = await this.store.outbox.read(this.store.head - 1, 1);
    return { afterKey, afterWhere, expected1, expected2: row(2), record: commits[0] };
  }

  // `count` transactions, each reading then writing, with a turn of the event
  // loop between them, so that two requests interleave.
  async op_race({ who, count }) {
    await this.open();
    for (let i = 0; i < count; i++) {
      await new Promise((r) => setTimeout(r, 0));
      await this.owner.tx(async (tx) => {
        const row = await tx.get(this.notes, [1]);
        await new Promise((r) => setTimeout(r, 0));
        await tx.put(this.notes, { id: 1, title: `${who}-${i}`, n: (row?.n ?? 0) + 1 });
      }, ctxOf(who));
    }
    return count;
  }

  // Adds `by` to n of note `id`.
  async op_add({ id, by }) {
    await this.open();
    await this.owner.tx(async (tx) => { await tx.update(this.notes, [id], { n: add(col("n"), by) }); }, ctxOf("add"));
    return this.store.head;
  }

  async op_mintId() {
    await this.open();
    let id;
    await this.owner.tx(async (tx) => { id = tx.mintId(this.notes); }, ctxOf("mint"));
    return id;
  }

  // Everything the store holds, through the API, and what the Durable
  // Object's SQLite holds, read with sql.exec directly.
  async op_state() {
    await this.open();
    const rows = [];
    for await (const r of this.notes.rows(query(Notes).orderBy((n) => n.id))) rows.push(r);
    const outbox = await this.store.outbox.read(0, 10000);
    const sql = this.ctx.storage.sql;
    const tables = sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").toArray().map((r) => r.name);
    const name = this.notes.name;
    const raw = sql.exec(`SELECT CAST(id AS TEXT) AS id, title FROM "${name.replaceAll('"', '""')}" ORDER BY id`).toArray();
    const rawOutbox = sql.exec("SELECT CAST(seq AS TEXT) AS seq FROM _outbox ORDER BY seq").toArray().map((r) => BigInt(r.seq));
    const head = sql.exec("SELECT CAST(value AS TEXT) AS v FROM _meta WHERE key = 'head'").one().v;
    return { head: this.store.head, rows, outbox, tables, raw, rawOutbox, rawHead: BigInt(head), adopted: this.adopted, table: name };
  }

  async op_page({ limit, after, titlePrefix }) {
    await this.open();
    let q = query(Notes).orderBy((n) => n.id);
    if (titlePrefix !== undefined) q = q.where((n) => prefix(n.title, titlePrefix));
    return this.notes.page(q, limit, undefined, after === undefined ? undefined : { after });
  }

  async op_get({ id }) {
    await this.open();
    return (await this.notes.get([id])) ?? null;
  }

  // The statements the store sent since the object started.
  async op_log() {
    return this.log;
  }

  // Sets the head in _meta directly (the store must be closed), to reach
  // seqs beyond 2^53 without 2^53 commits.
  async op_setHead({ head }) {
    if (this.store) { await this.store.close(); this.store = undefined; }
    this.ctx.storage.sql.exec("UPDATE _meta SET value = CAST(? AS INTEGER) WHERE key = 'head'", String(head));
    return true;
  }

  // A commit inside a transaction of the app's own, which the app then rolls
  // back: the store had reported the commit; its next one is refused, not
  // written past a hole in the outbox; a store opened again commits on.
  // `first`: the rolled-back commit is the store's very first (head 0 on
  // disk after the rollback), and the next commit writes another owner's
  // table (the notes table's declaration was rolled back with it).
  async op_rolledBackByApp({ first = false } = {}) {
    if (first) {
      this.store = await openStore({ backend: "durable", storage: this.ctx.storage, id: "edge-test" });
    } else {
      await this.open();
      await this.owner.tx((tx) => tx.put(this.notes, { id: 1, title: "before" }));
    }
    const head = this.store.head;
    let thrown;
    try {
      await this.ctx.storage.transaction(async () => {
        if (first) {  // the table's declaration commits here too
          this.owner = this.store.object({ host: "session", type: "notes" });
          this.notes = this.owner.table(Notes);
        }
        await this.owner.tx((tx) => tx.put(this.notes, { id: 2, title: "inside the app's transaction" }));
        throw new Error("the app rolls back");
      });
    } catch (e) {
      thrown = e.message;
    }
    const reported = this.store.head;
    let next;
    try {
      if (first) {
        const other = this.store.object({ host: "session", type: "other" });
        await other.tx((tx) => tx.put(other.table(Notes), { id: 3, title: "after" }));
      } else {
        await this.owner.tx((tx) => tx.put(this.notes, { id: 3, title: "after" }));
      }
      next = { seq: this.store.head };
    } catch (e) {
      next = { code: e.code, message: e.message };
    }
    const again = await openStore({ backend: "durable", storage: this.ctx.storage, id: "edge-test" });
    this.store = undefined;
    const owner = again.object({ host: "session", type: "notes" });
    const notes = owner.table(Notes);
    await owner.tx((tx) => tx.put(notes, { id: 4, title: "after opening again" }));
    const seqs = [...this.ctx.storage.sql.exec("SELECT seq FROM _outbox ORDER BY seq")].map((r) => r.seq);
    const ids = (await notes.page(undefined, 10)).rows.map((r) => r.id);
    const replica = await api.openReplica({ backend: "memory" });
    const applied = await replica.applyBatch(await again.outbox.read(0, 100));
    const out = { head, thrown, reported, next, reopened: again.head, seqs, ids, replicaHead: applied.head };
    await replica.close();
    await again.close();
    return out;
  }

  // A store whose file an earlier version opened: its _outbox_next trigger
  // (which let any outbox row follow head 0) is replaced by _outbox_follows
  // at the next open. Answers the triggers before and after, and whether a
  // row that does not follow the head is refused after.
  async op_oldTrigger() {
    await this.open();
    await this.owner.tx((tx) => tx.put(this.notes, { id: 1, title: "one" }));
    await this.store.close();
    this.store = undefined;
    const sql = this.ctx.storage.sql;
    const triggers = () => [...sql.exec("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")].map((r) => r.name);
    sql.exec("DROP TRIGGER _outbox_follows");
    sql.exec("CREATE TRIGGER _outbox_next BEFORE INSERT ON _outbox WHEN (SELECT value FROM _meta WHERE key = 'head') NOT IN (0, NEW.seq - 1) BEGIN SELECT RAISE(ABORT, 'onestore: a commit was rolled back after it was done'); END");
    const before = triggers();
    await this.open();
    const after = triggers();
    const head = this.store.head;
    let refused;
    try {
      sql.exec("INSERT INTO _outbox (seq, record) VALUES (?, '{}')", head + 2);
    } catch (e) {
      refused = String(e.message);
    }
    return { before, after, refused, head };
  }

  // What workerd answers to BEGIN through sql.exec.
  async op_rawBegin() {
    try {
      this.ctx.storage.sql.exec("BEGIN");
      return "accepted";
    } catch (e) {
      return String(e.message);
    }
  }

  // store.commit's adopt: called once, synchronously, before commit returns.
  async op_adoptInStep() {
    await this.open();
    await this.notes.count();
    const calls = [];
    const p = this.store.commit([{ op: "put", table: this.notes.name, row: { id: 77, title: "seam", n: 0 } }], (seq) => calls.push(seq));
    const beforeReturn = [...calls];
    const seq = await p;
    return { beforeReturn, calls, seq, head: this.store.head };
  }

  // A second store opened on the same storage fences the first.
  async op_fence() {
    await this.open();
    await this.notes.count();
    // The same storage object (the first store's is this.ctx.storage under
    // the test's watching Proxy; an app passes this.ctx.storage both times,
    // which is one object: checked below).
    const second = await openStore({ backend: "durable", storage: this.storage });
    let code;
    try {
      await this.owner.tx(async (tx) => { await tx.put(this.notes, { id: 5, title: "from the first" }); });
    } catch (e) {
      code = e.code;
    }
    // Its reads, snapshots, blobs and exports are refused too (they read a
    // head that is no longer the storage's).
    const others = {};
    for (const [what, call] of Object.entries({
      count: () => this.notes.count(),
      snapshot: () => this.store.snapshot(),
      blobs: () => this.store.blobs.put(new Uint8Array([1])),
      export: async () => { await this.store.export().getReader().read(); },
    })) {
      try { await call(); others[what] = "answered"; } catch (e) { others[what] = e.code; }
    }
    const owner2 = second.object({ host: "session", type: "notes" });
    const notes2 = owner2.table(Notes);
    await owner2.tx(async (tx) => { await tx.put(notes2, { id: 6, title: "from the second" }); });
    const rows = [];
    for await (const r of notes2.rows(query(Notes).orderBy((n) => n.id))) rows.push(r.title);
    await second.close();
    return { code, rows, others, sameStorage: this.ctx.storage === this.ctx.storage };
  }

  // store.lock across requests of this object (tests/edge/durable.test.js):
  // holds `name` until op_lockRelease.
  async op_lockHold({ name }) {
    await this.open();
    await new Promise((held, failed) => {
      this.store.lock(name, () => { held(); return new Promise((r) => { this.releaseLock = r; }); }).catch(failed);
    });
    return true;
  }

  async op_lockRelease() {
    this.releaseLock?.();
    this.releaseLock = undefined;
    return true;
  }

  async op_lockTry({ name, timeout }) {
    await this.open();
    try {
      return await this.store.lock(name, () => "ran", { timeout });
    } catch (e) {
      return e.code;
    }
  }

  // store.snapshot on the durable store (tests/edge/snapshots.test.js has
  // the rest), and snapshot, change, restore on a memory store in this
  // isolate: the fingerprints.
  async op_snapshots() {
    await this.open();
    const taken = await this.store.snapshot();
    const durable = { seq: taken.seq, head: this.store.head };
    const store = await openStore({ backend: "memory" });
    const owner = store.object({ host: "session", type: "notes" });
    const notes = owner.table(Notes);
    await owner.tx(async (tx) => { await tx.put(notes, { id: 1, title: "one" }); });
    const before = await store.fingerprint();
    const snap = await store.snapshot();
    await owner.tx(async (tx) => { await tx.put(notes, { id: 2, title: "two" }); await tx.delete(notes, [1]); });
    const changed = await store.fingerprint();
    await store.restore(snap.id);
    const restored = await store.fingerprint();
    await store.restore();
    const undone = await store.fingerprint();
    await store.close();
    return { durable, before, changed, restored, undone };
  }

  // A memory store through the workerd root.
  async op_memory() {
    const store = await openStore({ backend: "memory" });
    const owner = store.object({ host: "session", type: "notes" });
    const notes = owner.table(Notes);
    await owner.tx(async (tx) => { await tx.put(notes, { id: 1, title: "in memory" }); });
    const row = await notes.get([1]);
    const head = store.head;
    await store.close();
    return { row, head };
  }

  // The workerd root's export names, and what its deleteStore says.
  async op_exports() {
    let refused = null;
    try { await api.deleteStore({ backend: "durable" }); } catch (e) { refused = { code: e.code, message: e.message }; }
    return { names: Object.keys(api).sort(), refused };
  }

  // Blobs (tests/edge/blobs.test.js). Bytes are made here from a pattern,
  // so megabytes never travel as JSON: byte i is (i * 31 + fill) % 256.
  async op_blobPut({ size, fill }) {
    await this.open();
    const bytes = new Uint8Array(size);
    for (let i = 0; i < size; i++) bytes[i] = (i * 31 + fill) % 256;
    return this.store.blobs.put(bytes);
  }

  // Blob `hash` read back: its size, whether it follows the pattern of
  // `fill`, and its sha256 computed here; or null when it is missing.
  async op_blobGet({ hash, fill }) {
    await this.open();
    const bytes = await this.store.blobs.get(hash);
    if (bytes === undefined) return { has: await this.store.blobs.has(hash), bytes: null };
    let pattern = true;
    for (let i = 0; i < bytes.length; i++) if (bytes[i] !== (i * 31 + fill) % 256) { pattern = false; break; }
    const digest = [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
    return { has: await this.store.blobs.has(hash), bytes: { size: bytes.length, pattern, digest } };
  }

  async op_blobList(options) {
    await this.open();
    return this.store.blobs.list(options);
  }

  // The _blobs table as stored: [{ hash, part, size }] in order.
  async op_blobRows() {
    return this.ctx.storage.sql.exec("SELECT hash, part, length(data) AS size FROM _blobs ORDER BY hash, part").toArray();
  }

  // What putWithHash and put answer for bad input: [{ code, message }].
  async op_blobRefusals({ hash }) {
    await this.open();
    const out = [];
    const attempt = async (fn) => {
      try { await fn(); out.push(null); } catch (e) { out.push({ code: e.code, message: e.message }); }
    };
    await attempt(() => this.store.blobs.putWithHash(hash, new TextEncoder().encode("not those bytes")));
    await attempt(() => this.store.blobs.put("a string"));
    await attempt(() => this.store.blobs.get("ABC"));
    return out;
  }

  async op_close() {
    if (this.store) await this.store.close();
    this.store = undefined;
    return true;
  }
}

export default {
  async fetch(request, env) {
    const object = decodeURIComponent(new URL(request.url).pathname.split("/")[1]);
    return env.SESSION.get(env.SESSION.idFromName(object)).fetch(request);
  },
};
