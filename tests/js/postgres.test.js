// The PostgreSQL mirror (openReplica({ backend: "postgres" })) against a
// real PostgreSQL server that this file starts itself (tests/pg-server.js):
// the conformance vectors' reads give the same answers on it as on every
// backend, its rows and documents equal the store's after every case
// (documents also through a restore); its tables are real
// tables with real columns and indexes, readable with plain SQL; two
// sessions live side by side in one database; gaps, already-applied
// batches and divergence behave as on every replica; values keep their
// fidelity (ints beyond 2^53, code-point text order, -0 as the store writes it, JSON); and
// followRelay keeps a mirror up to date from a relay fed by startSync,
// resuming from the mirror's head after a restart.

import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import pg from "pg";

import * as api from "../../js/index.js";
import {
  createRelay, defineTable, eq, followRelay, gt, gte, int, json, ne, num, openReplica, openStore, or, and, prefix, query, startSync, str,
} from "../../js/index.js";
import { parseJsonExact } from "../../js/encode.js";
import { conformanceRunner } from "../conformance/runner.js";
import { endPool, startPostgres } from "../pg-server.js";
import { rejectsWith, repoRoot } from "./helpers.js";

const vectorDir = join(repoRoot, "tests", "conformance");
const files = readdirSync(vectorDir).filter((f) => f.endsWith(".json")).sort();

let server;
let pool;
// An idle connection the server ended while the tests ran: the pool's
// 'error'. Nothing here should make the server end one (the test that
// does uses a pool of its own), so after() fails if one was seen.
const poolErrors = [];
let sessions = 0;
const nextSession = (label = "s") => `${label}${++sessions}`;
const mirroredDocs = { count: 0 };

before(async () => {
  server = await startPostgres();
  pool = new pg.Pool({ connectionString: server.url, max: 8, application_name: "onestore-tests" });
  pool.on("error", (e) => poolErrors.push(e));
});

after(async () => {
  if (pool) await endPool(pool);
  await server?.stop();
  assert.deepEqual(poolErrors.map((e) => e.message), [], "idle connections the server ended during the tests");
});

// The package's api with openStore replaced: a memory store whose every
// commit is then applied into a fresh PostgreSQL mirror, and whose table
// handles read from the mirror. The runner's writes go to the store, its
// reads (get, page, count, cursors) to PostgreSQL.
function mirroredApi(skipped) {
  return {
    ...api,
    async openStore() {
      const store = await openStore({ backend: "memory" });
      const replica = await openReplica({ backend: "postgres", pool, session: nextSession("c") });
      const catchUp = async () => {
        while (replica.head < store.head) await replica.applyBatch(await store.outbox.read(replica.head, 50));
      };
      // The runner's tx steps write through `handle.owner.tx` and name the
      // handle in each write: both reach the store's own handle.
      const real = new WeakMap();
      const unwrap = (t) => real.get(t) ?? t;
      // tx's methods are on its prototype (js/tx.js, class Tx), documents a getter there.
      const txOf = (tx) => Object.fromEntries(Object.getOwnPropertyNames(Object.getPrototypeOf(tx)).filter((k) => k !== "constructor").map((k) =>
        [k, typeof tx[k] === "function" ? (t, ...rest) => tx[k](unwrap(t), ...rest) : tx[k]]));
      const mirrored = (handle) => {
        const m = mirroredReads(handle);
        m.owner = { tx: (fn, ctx) => handle.owner.tx((tx) => fn(txOf(tx)), ctx) };
        real.set(m, handle);
        return m;
      };
      const mirroredReads = (handle) => ({
        name: handle.name,
        async get(key) {
          await catchUp();
          return replica.table(handle.name).get(key);
        },
        async count(q) {
          await catchUp();
          return replica.table(handle.name).count(q);
        },
        async nearest(column, vector, k, options) {
          await catchUp();
          return replica.table(handle.name).nearest(column, vector, k, options);
        },
        async neighbours(node, options) {
          await catchUp();
          return replica.table(handle.name).neighbours(node, options);
        },
        async page(q, limit, _ctx, options) {
          await catchUp();
          return replica.table(handle.name).page(q, limit, options);
        },
        rows: (q) => handle.rows(q),
      });
      return {
        get head() { return store.head; },
        outbox: store.outbox,
        object(spec) {
          const owner = store.object(spec);
          return { table: (def) => mirrored(owner.table(def)), documents: owner.documents };
        },
        commit: (...args) => store.commit(...args),
        // After the steps: every table's rows, in key order, equal the store's.
        async checkMirror(tables) {
          await catchUp();
          assert.equal(replica.head, store.head, "the mirror's head");
          for (const [name, t] of tables) {
            const want = [];
            for await (const row of t.handle.rows()) want.push(row);
            const got = [];
            for await (const row of replica.table(name).rows()) got.push(row);
            assert.deepStrictEqual(got, want, `the rows of ${name}`);
          }
          // Documents: each one's current value, version and deltas, as the store has them.
          const exists = await pool.query("SELECT to_regclass($1) AS t", [`"${replica.schema}"."_documents"`]);
          if (exists.rows[0].t === null) return;
          const docs = await pool.query(`SELECT id, owner, version, retired, value::text AS value,
            (SELECT count(*) FROM "${replica.schema}"."_deltas" WHERE doc = d.id) AS deltas FROM "${replica.schema}"."_documents" d ORDER BY id`);
          for (const d of docs.rows) {
            const owner = store.object({ host: "session", type: d.owner }).documents;
            const loaded = await owner.load(Number(d.id));
            if (d.retired !== null) assert.equal(loaded, undefined, `document ${d.id} is retired`);
            else {
              assert.equal(Number(d.version), loaded.version, `document ${d.id}'s version`);
              assert.deepStrictEqual(parseJsonExact(d.value), loaded.value, `document ${d.id}'s value`);
            }
            assert.equal(Number(d.deltas), (await owner.versions(Number(d.id))).length, `document ${d.id}'s versions`);
          }
          mirroredDocs.count += docs.rows.length;
        },
        async close() {
          await replica.close();
          await store.close();
        },
        skipped,
      };
    },
  };
}

describe("the conformance vectors on a PostgreSQL mirror", { concurrency: 4 }, () => {
  for (const file of files) {
    test(`${file}: every read gives the vectors' answers and the mirror's rows equal the store's`, async (t) => {
      const doc = JSON.parse(readFileSync(join(vectorDir, file), "utf8"));
      const skipped = [];
      const { CaseRunner } = conformanceRunner(mirroredApi(skipped), assert);
      for (const c of doc.cases) {
        // The mirror keeps documents as rows (its _documents and _deltas,
        // each document's value as jsonb), read with SQL: the vectors'
        // documents reads (owner.documents.find/load/list at a seq) have
        // no mirror call, so they are skipped; checkMirror compares every
        // document's value, version and versions with the store's.
        // A neighbours read of a kind the edges definition does not list is
        // refused by the writer's definition; the stored record (all a
        // mirror has) does not hold the kinds, so a mirror reads any kind.
        const unknownKind = (s) => s.neighbours?.kind !== undefined && !(doc.edges?.[s.neighbours.table]?.kinds ?? []).includes(s.neighbours.kind);
        const steps = c.steps.filter((s) => s.doc === undefined && !unknownKind(s));
        if (steps.length < c.steps.length) skipped.push(`${c.name}: ${c.steps.length - steps.length} documents read(s) or neighbours of an unlisted kind`);
        const runner = new CaseRunner(doc, {});
        runner.afterSteps = (store, tables) => store.checkMirror(tables);
        try {
          await runner.run(steps);
        } catch (e) {
          e.message = `${file} / ${c.name}: ${e.message}`;
          throw e;
        }
      }
      if (skipped.length > 0) t.diagnostic(`skipped (a documents read has no mirror call, the documents are compared row by row instead; a mirror does not know an edges table's kinds): ${skipped.join("; ")}`);
      if (file === "documents.json") assert.ok(mirroredDocs.count > 5, `only ${mirroredDocs.count} documents compared`);
    });
    const docReads = JSON.parse(readFileSync(join(vectorDir, file), "utf8")).cases.reduce((n, c) => n + c.steps.filter((st) => st.doc !== undefined).length, 0);
    if (docReads > 0) {
      test(`${file}: its ${docReads} documents reads`, { skip: "a mirror has no documents reader (owner.documents.find/load/list/versions at a seq): its documents are rows read with SQL, compared with the store's after every case above" }, () => {});
    }
  }
});

const Notes = defineTable("notes", {
  columns: { id: str(), path: str(), n: int(), score: num().optional(), done: api.bool(), meta: json().optional() },
  key: ["id"],
  indexes: { byPath: ["path"] },
});

// A store holding the notes table and `rows`, committed one transaction each.
async function notesStore(rows, type = "app") {
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type });
  const notes = owner.table(Notes);
  for (const r of rows) await owner.tx(async (tx) => { await tx.put(notes, r); });
  return { store, owner, notes };
}

const row = (id, path, n, extra = {}) => ({ id, path, n, score: null, done: false, meta: null, ...extra });

describe("a PostgreSQL mirror's tables", () => {
  test("are real tables with real columns, the key and the declared indexes, readable with plain SQL", async () => {
    const { store } = await notesStore([row("a", "x/1", 1, { score: 2.5, done: true, meta: { k: [1, "v"] } }), row("b", "x/2", 2)]);
    const session = nextSession();
    const replica = await openReplica({ backend: "postgres", url: server.url, session });
    await replica.applyBatch(await store.outbox.read(0, 100));
    const types = await pool.query(
      `SELECT column_name, data_type, collation_name, is_nullable FROM information_schema.columns
        WHERE table_schema = $1 AND table_name = 'app/notes' ORDER BY ordinal_position`, [session]);
    assert.deepEqual(types.rows.map((r) => [r.column_name, r.data_type, r.collation_name, r.is_nullable]), [
      ["id", "text", "C", "NO"],
      ["path", "text", "C", "NO"],
      ["n", "bigint", null, "NO"],
      ["score", "double precision", null, "YES"],
      ["done", "boolean", null, "NO"],
      ["meta", "jsonb", null, "YES"],
    ]);
    const indexes = await pool.query("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'app/notes' ORDER BY indexname", [session]);
    assert.deepEqual(indexes.rows.map((r) => r.indexname), ["app/notes#byPath", "app/notes_pkey"]);
    assert.match(indexes.rows[0].indexdef, /\(path, id\)/, "an index ends with the key columns it does not list");
    // What psql shows: the rows as real values.
    const plain = await pool.query(`SELECT id, n, meta->'k'->>1 AS k FROM "${session}"."app/notes" WHERE done ORDER BY id`);
    assert.deepEqual(plain.rows, [{ id: "a", n: "1", k: "v" }]);
    assert.deepEqual(replica.tables(), ["app/notes"]);
    await replica.close();
    await store.close();
  });

  test("of two sessions live side by side in one database, each in its own schema", async () => {
    const one = await notesStore([row("a", "one", 1)]);
    const two = await notesStore([row("a", "two", 2), row("b", "two", 3)]);
    const [s1, s2] = [nextSession("side"), nextSession("side")];
    const r1 = await openReplica({ backend: "postgres", pool, session: s1 });
    const r2 = await openReplica({ backend: "postgres", pool, session: s2 });
    await r1.applyBatch(await one.store.outbox.read(0, 100));
    await r2.applyBatch(await two.store.outbox.read(0, 100));
    assert.deepEqual(await r1.table("app/notes").get("a"), row("a", "one", 1));
    assert.deepEqual(await r2.table("app/notes").get("a"), row("a", "two", 2));
    assert.equal(await r1.table("app/notes").count(), 1);
    assert.equal(await r2.table("app/notes").count(), 2);
    assert.equal(r1.head, 2);
    assert.equal(r2.head, 3);
    const schemas = await pool.query("SELECT table_schema FROM information_schema.tables WHERE table_name = 'app/notes' AND table_schema = ANY($1) ORDER BY 1", [[s1, s2]]);
    assert.deepEqual(schemas.rows.map((r) => r.table_schema), [s1, s2].sort());
    // Reopened, each finds its own head and tables.
    await r1.close();
    const again = await openReplica({ backend: "postgres", pool, session: s1 });
    assert.equal(again.head, 2);
    assert.deepEqual(again.tables(), ["app/notes"]);
    await again.close();
    // A misspelt option is refused, not ignored (a "sesion" mirrored into
    // the "default" schema, beside another session's tables).
    await rejectsWith(openReplica({ backend: "postgres", pool, sesion: s1 }), "invalid/args", ["sesion"]);
    await rejectsWith(openReplica({ backend: "postgres", pool, session: s2, poool: 1 }), "invalid/args", ["poool"]);
    await rejectsWith(r2.table("app/notes").page(undefined, 1, { aftr: "x" }), "invalid/args", ["aftr"]);
    await r2.close();
    await one.store.close();
    await two.store.close();
  });

  test("keep the values every other backend reads: ints beyond 2^53, -0, JSON, code-point text order", async () => {
    const texts = ["a", "Z", "é", "\uffff", "😀", "𝄞", "\u{10ffff}", "ab", "", "中"];
    const rows = texts.map((p, i) => row(`k${i}`, p, i));
    rows[0].n = 2n ** 63n - 1n;
    rows[1].n = -(2n ** 63n);
    rows[2].n = 2n ** 53n + 1n;
    rows[3].score = -0;
    rows[4].score = 1e300;
    rows[5].meta = { big: 2n ** 60n, nested: [true, null, "ü", 0.5], empty: {} };
    const { store, notes } = await notesStore(rows);
    const memory = await openReplica({ backend: "memory" });
    const mirror = await openReplica({ backend: "postgres", pool, session: nextSession() });
    const batch = await store.outbox.read(0, 100);
    await memory.applyBatch(batch);
    await mirror.applyBatch(batch);
    for (const q of [
      query(Notes).orderBy((e) => e.path),
      query(Notes).orderBy((e) => e.path, "desc"),
      query(Notes).orderBy((e) => e.n),
      query(Notes).orderBy((e) => e.score, "desc"),
      query(Notes).where((e) => prefix(e.path, "\uffff")),
      query(Notes).where((e) => gte(e.path, "é")).orderBy((e) => e.path),
    ]) {
      const want = await memory.table("app/notes").page(q, 3);
      const got = await mirror.table("app/notes").page(q, 3);
      assert.deepStrictEqual(got.rows, want.rows, JSON.stringify(q.toJSON()));
      const rest = [];
      for await (const r of mirror.table("app/notes").rows(q)) rest.push(r);
      const all = [];
      for await (const r of memory.table("app/notes").rows(q)) all.push(r);
      assert.deepStrictEqual(rest, all, JSON.stringify(q.toJSON()));
    }
    const got = await mirror.table("app/notes").get("k0");
    assert.equal(got.n, 2n ** 63n - 1n);
    // The store writes -0 as 0 (its outbox says 0): the mirror reads what memory reads.
    assert.ok(Object.is((await mirror.table("app/notes").get("k3")).score, (await memory.table("app/notes").get("k3")).score));
    assert.deepStrictEqual((await mirror.table("app/notes").get("k5")).meta, { big: 2n ** 60n, nested: [true, null, "ü", 0.5], empty: {} });
    await mirror.close();
    await memory.close();
    await store.close();
  });

  test("hold table and column names longer than PostgreSQL's 63 bytes", async () => {
    const long = "t".repeat(100);
    const Long = defineTable(long, { columns: { id: str(), [`c${"é".repeat(50)}`]: int() }, key: ["id"], indexes: { [`i${"x".repeat(90)}`]: [`c${"é".repeat(50)}`] } });
    const store = await openStore({ backend: "memory" });
    const owner = store.object({ type: "y".repeat(27) });
    const h = owner.table(Long);
    await owner.tx(async (tx) => { await tx.put(h, { id: "a", [`c${"é".repeat(50)}`]: 5 }); });
    const mirror = await openReplica({ backend: "postgres", pool, session: "s".repeat(128) });
    await mirror.applyBatch(await store.outbox.read(0, 10));
    assert.deepEqual(await mirror.table(h.name).get("a"), { id: "a", [`c${"é".repeat(50)}`]: 5 });
    assert.equal(mirror.schema.length <= 63, true);
    await mirror.close();
    await store.close();
  });
});

describe("a PostgreSQL mirror's applyBatch", () => {
  test("applies a batch once, answers a batch already applied with no change, and refuses a gap with sync/gap", async () => {
    const { store, owner, notes } = await notesStore([row("a", "x/1", 1), row("b", "x/2", 2)]);
    const mirror = await openReplica({ backend: "postgres", pool, session: nextSession() });
    assert.deepEqual(await mirror.applyBatch(await store.outbox.read(0, 2)), { head: 2, applied: 2 });
    assert.deepEqual(await mirror.applyBatch(await store.outbox.read(0, 2)), { head: 2, applied: 0 });
    await owner.tx(async (tx) => { await tx.updateWhere(notes, (e) => prefix(e.path, "x/"), { n: 7 }); });
    await rejectsWith(mirror.applyBatch(await store.outbox.read(3, 1)), "sync/gap", ["head is 2"]);
    // An overlapping batch applies only its commits after the head.
    assert.deepEqual(await mirror.applyBatch(await store.outbox.read(1, 10)), { head: 4, applied: 2 });
    assert.equal(await mirror.table("app/notes").count(query(mirror.table("app/notes").def).where((e) => api.eq(e.n, 7))), 2);
    await rejectsWith(mirror.applyBatch({ from: 4, to: 5, commits: [] }), "invalid/args", ["holds 1 commits"]);
    await rejectsWith(mirror.applyBatch("{not json"), "invalid/args", ["not valid JSON"]);
    assert.equal(mirror.head, 4);
    await mirror.close();
    await store.close();
  });

  test("stops with sync/diverged when a bulk op's count differs, rolls the batch back, and refuses later batches, also after reopening", async () => {
    const { store, owner, notes } = await notesStore([row("a", "x/1", 1), row("b", "x/2", 2)]);
    const session = nextSession();
    const mirror = await openReplica({ backend: "postgres", pool, session });
    await mirror.applyBatch(await store.outbox.read(0, 3));
    // Someone changed the mirror behind its back: one row fewer under x/.
    await pool.query(`UPDATE "${session}"."app/notes" SET path = 'y/2' WHERE id = 'b'`);
    await owner.tx(async (tx) => {
      await tx.put(notes, row("c", "z", 3));
      await tx.updateWhere(notes, (e) => prefix(e.path, "x/"), { n: 9 });
    });
    await rejectsWith(mirror.applyBatch(await store.outbox.read(3, 10)), "sync/diverged", ["at seq 4", "affected 1 rows, the record says 2"]);
    assert.equal(mirror.head, 3);
    assert.equal(await mirror.table("app/notes").get("c"), undefined, "the batch rolled back whole");
    assert.match(mirror.diverged, /at seq 4/);
    await owner.tx(async (tx) => { await tx.put(notes, row("d", "z", 4)); });
    await rejectsWith(mirror.applyBatch(await store.outbox.read(3, 10)), "sync/diverged", ["a new one"]);
    await mirror.close();
    const again = await openReplica({ backend: "postgres", pool, session });
    assert.match(again.diverged, /at seq 4/);
    await rejectsWith(again.applyBatch(await store.outbox.read(3, 10)), "sync/diverged");
    await again.close();
    await store.close();
  });

  test("stops with sync/diverged when an update by key finds no row", async () => {
    const { store, owner, notes } = await notesStore([row("a", "x/1", 1)]);
    const session = nextSession();
    const mirror = await openReplica({ backend: "postgres", pool, session });
    await mirror.applyBatch(await store.outbox.read(0, 10));
    await pool.query(`DELETE FROM "${session}"."app/notes"`);
    await owner.tx(async (tx) => { await tx.update(notes, ["a"], { n: 5 }); });
    await rejectsWith(mirror.applyBatch(await store.outbox.read(2, 10)), "sync/diverged", ["no row has the key"]);
    await mirror.close();
    await store.close();
  });

  test("keeps documents as rows with their current value, through changes, a retire and a restore of the store", async () => {
    const { store, owner, notes } = await notesStore([row("a", "x/1", 1)]);
    let id;
    let other;
    await owner.tx(async (tx) => {
      id = await tx.documents.create({ kind: "chat", key: "c1" }, { title: "t", turns: [] });
      other = await tx.documents.create({ kind: "chat", key: "c2" }, { n: 2n ** 60n });
    });
    await owner.tx(async (tx) => { await tx.documents.change(id, [{ op: "add", path: "/turns/-", value: { who: "ana", text: "hi" } }]); });
    const snap = await store.snapshot();
    await owner.tx(async (tx) => {
      await tx.documents.change(id, [{ op: "replace", path: "/title", value: "later" }, { op: "add", path: "/turns/0", value: "first" }]);
      await tx.documents.retire(other);
      await tx.put(notes, row("b", "x/2", 2));
    });
    const session = nextSession();
    const mirror = await openReplica({ backend: "postgres", pool, session });
    await mirror.applyBatch(await store.outbox.read(0, 100));
    const docs = async () => (await pool.query(`SELECT id, version, retired IS NOT NULL AS retired, value FROM "${session}"."_documents" ORDER BY id`)).rows
      .map((r) => [Number(r.id), Number(r.version), r.retired, r.value]);
    assert.deepEqual(await docs(), [
      [id, 3, false, { title: "later", turns: ["first", { who: "ana", text: "hi" }] }],
      [other, 2, true, { n: 2 ** 60 }],
    ]);
    // The restore's record rewrites the document rows; the mirror follows.
    await store.restore(snap.id);
    await mirror.applyBatch(await store.outbox.read(mirror.head, 100));
    assert.deepEqual(await docs(), [
      [id, 2, false, { title: "t", turns: [{ who: "ana", text: "hi" }] }],
      [other, 1, false, { n: 2 ** 60 }],
    ]);
    assert.deepStrictEqual((await owner.documents.load(id)).value, { title: "t", turns: [{ who: "ana", text: "hi" }] });
    assert.equal(await mirror.table("app/notes").get("b"), undefined);
    // The restored document goes on changing from its restored version.
    await owner.tx(async (tx) => { await tx.documents.change(id, [{ op: "replace", path: "/title", value: "again" }]); });
    await mirror.applyBatch(await store.outbox.read(mirror.head, 100));
    assert.deepEqual((await docs())[0], [id, 3, false, { title: "again", turns: [{ who: "ana", text: "hi" }] }]);
    await mirror.close();
    await store.close();
  });

  // jsonb gives a number back as its exact decimal: the float 1e20 as
  // 100000000000000000000, read as a BigInt no int holds, so the change of
  // a document that held it was refused (and a follower retried it for
  // ever); 2 ** 60 (text 1152921504606847000) came back as a BigInt that a
  // patch's test found unequal (sync/diverged); a batch's text holding 2 **
  // 64 was refused.
  test("applies what every other replica applies of numbers jsonb writes out in full: floats past 64 bits, 2 ** 60 under a patch test, 2 ** 64 in a batch's text", async () => {
    const { store, owner, notes } = await notesStore([row("a", "x/1", 1)]);
    let big;
    let exact;
    await owner.tx(async (tx) => {
      big = await tx.documents.create({ kind: "n", key: "big" }, { big: 1e20, text: "hi" });
      exact = await tx.documents.create({ kind: "n", key: "exact" }, { x: 2 ** 60, t: 1 });
      await tx.put(notes, { ...row("j", "x/j", 3), meta: [2 ** 64, 1e300] });
    });
    await owner.tx(async (tx) => {
      await tx.documents.change(big, [{ op: "replace", path: "/text", value: "changed" }]);
      await tx.documents.change(exact, [{ op: "test", path: "/x", value: 2 ** 60 }, { op: "replace", path: "/t", value: 2 }]);
    });
    const batch = await store.outbox.read(0, 100);
    const session = nextSession();
    const mirror = await openReplica({ backend: "postgres", pool, session });
    const memory = await openReplica({ backend: "memory" });
    for (const r of [mirror, memory]) assert.equal((await r.applyBatch(JSON.stringify(batch))).head, store.head, "the batch's JSON text applies");
    const values = (await pool.query(`SELECT value::text AS v FROM "${session}"."_documents" ORDER BY id`)).rows.map((r) => parseJsonExact(r.v));
    assert.deepEqual(values.map((v) => Object.keys(v).sort()), [["big", "text"], ["t", "x"]]);
    assert.equal((await mirror.table("app/notes").get("j")).meta[0], 2 ** 64);
    assert.deepEqual(await mirror.table("app/notes").get("j"), await memory.table("app/notes").get("j"));
    await memory.close();
    await mirror.close();
    await store.close();
  });

  // The mirror's own code read these records' missing or mistyped fields
  // and threw a TypeError, answered as storage_failed ("PostgreSQL failed:
  // Cannot read properties of undefined"), which a follower retries for ever.
  test("answers a record of another shape (a table without its key, an index that is no list, a vector that is no base64) with sync/diverged, as documented", async () => {
    const table = { op: "table", table: "app/t", version: 1, columns: { id: { type: "str" }, v: { type: "vector", dims: 2, optional: true } }, key: ["id"], indexes: {} };
    for (const ops of [[{ ...table, key: undefined }], [{ ...table, indexes: { byV: null } }], [table, { op: "put", table: "app/t", row: { id: "a", v: 1.5 } }]]) {
      const mirror = await openReplica({ backend: "postgres", pool, session: nextSession() });
      const batch = JSON.stringify({ from: 0, to: 1, commits: [{ seq: 1, from: 0, at: 1, owner: "store", ops }] });
      await rejectsWith(mirror.applyBatch(batch), "sync/diverged", ["at seq 1", "malformed"]);
      await mirror.close();
    }
  });

  // PostgreSQL casts a text parameter to the column's type: a 3 in a str
  // column was stored as "3", and "yes" in a bool column failed as a
  // refusal; the core of every other replica refuses such a put.
  test("refuses a put or update whose value is of another type than its column, as the other replicas do, with sync/diverged and nothing applied", async () => {
    const table = { op: "table", table: "app/t", version: 1, columns: { id: { type: "str" }, s: { type: "str", optional: true }, n: { type: "int", optional: true }, b: { type: "bool", optional: true } }, key: ["id"], indexes: {} };
    const good = { op: "put", table: "app/t", row: { id: "a", s: "x", n: 1, b: true } };
    for (const bad of [{ op: "put", table: "app/t", row: { id: "b", s: 3 } }, { op: "put", table: "app/t", row: { id: "b", n: 1.5 } },
      { op: "put", table: "app/t", row: { id: "b", b: 1 } }, { op: "update", table: "app/t", key: ["a"], set: { s: { value: 7 } } }]) {
      const mirror = await openReplica({ backend: "postgres", pool, session: nextSession() });
      const memory = await openReplica({ backend: "memory" });
      const batch = JSON.stringify({ from: 0, to: 2, commits: [{ seq: 1, from: 0, at: 1, owner: "store", ops: [table, good] }, { seq: 2, from: 1, at: 2, owner: "store", ops: [bad] }] });
      await assert.rejects(memory.applyBatch(batch), (e) => e instanceof api.StoreError, "the memory replica refuses it too");
      await rejectsWith(mirror.applyBatch(batch), "sync/diverged", ["at seq ", "is not a value of a"]);
      assert.equal(mirror.head, 0);
      await memory.close();
      await mirror.close();
    }
  });

  test("lets two appliers of one session follow each other: the second applies only what is after the first's head, knowing the tables the first declared", async () => {
    const { store, owner, notes } = await notesStore([row("a", "x/1", 1)]);
    const session = nextSession();
    const first = await openReplica({ backend: "postgres", pool, session });
    const second = await openReplica({ backend: "postgres", pool, session });
    await owner.tx(async (tx) => { await tx.updateWhere(notes, (e) => prefix(e.path, "x/"), { n: 4 }); });
    // `second` opened before `first` declared the table.
    assert.deepEqual(await first.applyBatch(await store.outbox.read(0, 2)), { head: 2, applied: 2 });
    assert.deepEqual(await second.applyBatch(await store.outbox.read(0, 3)), { head: 3, applied: 1 });
    assert.equal(second.head, 3);
    assert.deepEqual(await second.table("app/notes").get("a"), row("a", "x/1", 4));
    await first.close();
    await second.close();
    await store.close();
  });

  test("stops with sync/diverged on a table record that changes a stored table's columns", async () => {
    const { store } = await notesStore([row("a", "x/1", 1)]);
    const mirror = await openReplica({ backend: "postgres", pool, session: nextSession() });
    const batch = await store.outbox.read(0, 10);
    await mirror.applyBatch(batch);
    const declared = batch.commits[0].ops[0];
    const changed = { ...declared, version: 2, columns: { ...declared.columns, extra: { type: "int", optional: true } } };
    await rejectsWith(mirror.applyBatch({ from: 2, to: 3, commits: [{ seq: 3, from: 2, at: 1, owner: "app", ops: [changed] }] }), "sync/diverged", ["columns"]);
    await mirror.close();
    await store.close();
  });

  test("of its own pool goes on applying after the server ends its idle connections, and the process sees no uncaught error", async () => {
    const { store, owner, notes } = await notesStore([row("a", "x/1", 1)]);
    const session = nextSession();
    const mirror = await openReplica({ backend: "postgres", url: server.url, session });
    await mirror.applyBatch(await store.outbox.read(0, 10));
    const uncaught = [];
    const onUncaught = (e) => uncaught.push(e);
    process.on("uncaughtException", onUncaught);
    try {
      // What a server restart or an administrator does to every idle
      // connection: ends it. The mirror's pool holds one, idle.
      const ended = await pool.query(`SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
        WHERE datname = 'postgres' AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND state = 'idle'
          AND application_name <> 'onestore-tests'`);
      assert.ok(ended.rows.length >= 1, "no idle connection to end");
      await new Promise((resolve) => setTimeout(resolve, 200));
      await owner.tx(async (tx) => { await tx.put(notes, row("b", "x/2", 2)); });
      assert.deepEqual(await mirror.applyBatch(await store.outbox.read(mirror.head, 10)), { head: 3, applied: 1 });
      assert.deepEqual(await mirror.table("app/notes").get("b"), row("b", "x/2", 2));
    } finally {
      process.removeListener("uncaughtException", onUncaught);
    }
    assert.deepEqual(uncaught.map((e) => e.message), [], "uncaught errors");
    await mirror.close();
    await store.close();
  });

  test("applies wheres of 70,000 values (PostgreSQL binds at most 65,535 parameters a statement) as the store did", { timeout: 300_000 }, async () => {
    const { store, owner, notes } = await notesStore(Array.from({ length: 300 }, (_, i) => row(`k${i}`, `p/${i}`, i)));
    const many = (f) => Array.from({ length: 70_000 }, (_, i) => f(i));
    await owner.tx(async (tx) => {
      // Equalities under or, inequalities under and: one array each.
      await tx.deleteWhere(notes, (e) => or(...many((i) => eq(e.id, `absent${i}`)), eq(e.id, "k1"), eq(e.id, "k2")));
      await tx.updateWhere(notes, (e) => and(...many((i) => ne(e.n, 1000 + i)), ne(e.n, 3)), { n: 0 });
      // Comparisons that fold into no array: 70,000 values, past the limit.
      await tx.deleteWhere(notes, (e) => or(...many((i) => gt(e.n, 1_000_000 + i)), eq(e.id, "k4")));
    });
    const mirror = await openReplica({ backend: "postgres", pool, session: nextSession("big") });
    while (mirror.head < store.head) await mirror.applyBatch(await store.outbox.read(mirror.head, 10));
    const mine = mirror.table("app/notes");
    assert.equal(await mine.count(), 297);
    assert.equal(await mine.count(query(mine.def).where((e) => eq(e.n, 0))), 296, "every row but k3 set to 0");
    assert.equal((await mine.get("k3")).n, 3);
    await mirror.close();
    await store.close();
  });

  test("a permission PostgreSQL refuses is storage_failed, not a divergence: granted again, the same batch applies", async () => {
    const role = `app${Date.now()}`;
    const session = nextSession("perm");
    await pool.query(`CREATE ROLE ${role} LOGIN`);
    await pool.query(`GRANT CREATE ON DATABASE postgres TO ${role}`);
    await pool.query(`CREATE SCHEMA "${session}" AUTHORIZATION ${role}`);
    const url = server.url.replace("postgres://postgres@", `postgres://${role}@`);
    const { store, owner, notes } = await notesStore([row("a", "x/1", 1)]);
    const mirror = await openReplica({ backend: "postgres", url, session });
    await mirror.applyBatch(await store.outbox.read(0, 10));
    await pool.query(`ALTER SCHEMA "${session}" OWNER TO postgres`);
    await pool.query(`ALTER TABLE "${session}"."app/notes" OWNER TO postgres`);
    await pool.query(`GRANT USAGE ON SCHEMA "${session}" TO ${role}`);
    await pool.query(`GRANT SELECT ON "${session}"."app/notes" TO ${role}`);
    await owner.tx(async (tx) => { await tx.put(notes, row("b", "x/2", 2)); });
    await rejectsWith(mirror.applyBatch(await store.outbox.read(mirror.head, 10)), "storage_failed", ["permission denied"]);
    assert.equal(mirror.diverged, undefined);
    await pool.query(`GRANT INSERT, UPDATE, DELETE ON "${session}"."app/notes" TO ${role}`);
    assert.deepEqual(await mirror.applyBatch(await store.outbox.read(mirror.head, 10)), { head: store.head, applied: 1 });
    // A batch asked for before close() is applied; close waits for it.
    await owner.tx(async (tx) => { await tx.put(notes, row("c", "x/3", 3)); });
    const applied = mirror.applyBatch(await store.outbox.read(mirror.head, 10));
    await mirror.close();
    assert.deepEqual(await applied, { head: store.head, applied: 1 });
    await store.close();
  });

  test("refuses bad options and closed use with a StoreError naming the value", async () => {
    await rejectsWith(openReplica({ backend: "postgres" }), "invalid/args", ["url"]);
    for (const bad of [null, {}, "postgres://x"]) await rejectsWith(openReplica({ backend: "postgres", pool: bad }), "invalid/args", ["pool must be a pg.Pool"]);
    await rejectsWith(openReplica({ backend: "postgres", pool, url: server.url }), "invalid/args", ["url or pool, not both"]);
    for (const session of ["pg_notes", "public", "information_schema"]) {
      await rejectsWith(openReplica({ backend: "postgres", pool, session }), "invalid/args", [JSON.stringify(session), "another session name"]);
    }
    await rejectsWith(openReplica({ backend: "postgres", url: server.url, session: "no spaces" }), "invalid/args", ["no spaces"]);
    await rejectsWith(openReplica({ backend: "postgres", url: "postgres://postgres@127.0.0.1:1/none" }), "storage_failed", ["PostgreSQL"]);
    // Before: pg took these for host names, and the lookup failed (storage_failed, "ENOTFOUND base").
    for (const url of ["not a url", "postgres//missing-colon", "http://127.0.0.1/db"]) {
      await rejectsWith(openReplica({ backend: "postgres", url, session: "s" }), "invalid/args", [JSON.stringify(url)]);
    }
    const mirror = await openReplica({ backend: "postgres", pool, session: nextSession() });
    assert.throws(() => mirror.table("nope/none"), (e) => e.code === "invalid/args" && /nope\/none/.test(e.message));
    await rejectsWith(mirror.commit([]), "invalid/args", ["no owner writes"]);
    await mirror.close();
    await rejectsWith(mirror.applyBatch({ from: 0, to: 0, commits: [] }), "closed");
  });
});

describe("followRelay", () => {
  test("keeps a PostgreSQL mirror of a session that startSync drives into a relay, and resumes from the mirror's head after a restart", async () => {
    const relay = createRelay({ open: () => ({ backend: "memory" }) });
    const origin = "http://relay.test";
    const { store, owner, notes } = await notesStore([row("a", "x/1", 1), row("b", "x/2", 2)]);
    const sync = startSync(store, { relay: origin, fetch: relay.fetch });
    assert.equal(await sync.settled(), 3);
    const session = store.id;
    const pulls = [];
    const fetch = (request) => {
      pulls.push(new URL(request.url).search);
      return relay.fetch(request);
    };
    let mirror = await openReplica({ backend: "postgres", pool, session });
    let follower = followRelay({ relay: origin, replica: mirror, fetch, limit: 2 });
    assert.deepEqual(await follower.sync(), { head: 3, applied: 3 });
    assert.deepEqual(pulls, ["?after=0&limit=2", "?after=2&limit=2", "?after=3&limit=2"]);
    await follower.stop();
    await mirror.close();

    // More commits while the follower is down; a new process resumes at 3.
    await owner.tx(async (tx) => { await tx.updateWhere(notes, (e) => prefix(e.path, "x/"), { n: 5 }); });
    await owner.tx(async (tx) => { await tx.put(notes, row("c", "y", 3, { meta: { big: 2n ** 62n } })); });
    assert.equal(await sync.settled(), 5);
    pulls.length = 0;
    mirror = await openReplica({ backend: "postgres", pool, session });
    assert.equal(mirror.head, 3);
    follower = followRelay({ relay: origin, replica: mirror, fetch, interval: 5 });
    const deadline = Date.now() + 20_000;
    while (mirror.head < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await follower.stop();
    assert.equal(pulls[0], "?after=3&limit=500");
    assert.equal(mirror.head, 5);
    const want = [];
    for await (const r of notes.rows()) want.push(r);
    const got = [];
    for await (const r of mirror.table("app/notes").rows()) got.push(r);
    assert.deepStrictEqual(got, want);
    await mirror.close();
    await sync.stop();
    await store.close();
    await relay.close?.();
  });

  test("refuses bad options with invalid/args naming the value", async () => {
    const mirror = await openReplica({ backend: "postgres", pool, session: nextSession() });
    assert.throws(() => followRelay({ relay: "ftp://x", replica: mirror }), (e) => e.code === "invalid/args" && /ftp/.test(e.message));
    assert.throws(() => followRelay({ relay: "http://x", replica: 42 }), (e) => e.code === "invalid/args" && /42/.test(e.message));
    assert.throws(() => followRelay({ relay: "http://x", replica: mirror, limit: 0 }), (e) => e.code === "invalid/args" && /limit/.test(e.message));
    assert.throws(() => followRelay({ relay: "http://x", replica: mirror, token: 42 }), (e) => e.code === "invalid/args" && /token/.test(e.message));
    assert.throws(() => followRelay({ relay: "http://x", replica: mirror, onError: 5 }), (e) => e.code === "invalid/args" && /onError/.test(e.message));
    // A token function is asked before each pull (it was sent as its source
    // text), and a fetch that answers no Response is a StoreError.
    const seen = [];
    const follower = followRelay({
      relay: "http://x", replica: mirror, token: async () => "secret",
      fetch: async (request) => { seen.push(request.headers.get("authorization")); return {}; },
    });
    await assert.rejects(follower.sync(), (e) => e.code === "storage_failed");
    assert.deepEqual(seen, ["Bearer secret"]);
    // A token function that throws is a StoreError naming its error (it was the raw error).
    const failing = followRelay({ relay: "http://x", replica: mirror, token: () => { throw new TypeError("provider down"); }, fetch: async () => new Response("{}") });
    await assert.rejects(failing.sync(), (e) => e.code === "storage_failed" && /token function threw: provider down/.test(e.message));
    await mirror.close();
  });
});
