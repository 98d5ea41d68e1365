// Replicas through the public package in Node (openReplica, applyBatch,
// replica.table, fingerprint): the conformance vectors replayed into a
// replica on memory and a sqlite file give the same tables row by row, the
// same records and the same fingerprint as the store; gaps, divergence
// (also after reopening a file), already-applied and overlapping batches,
// a batch refused mid-way leaving nothing applied, and owner writes refused.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";

import * as api from "../../js/index.js";
import { defineTable, eq, gte, int, json, openReplica, openStore, prefix, query, str } from "../../js/index.js";
import { conformanceRunner } from "../conformance/runner.js";
import { rejectsWith, repoRoot, tempDir } from "./helpers.js";

const vectorDir = join(repoRoot, "tests", "conformance");
const files = readdirSync(vectorDir).filter((f) => f.endsWith(".json")).sort();
const { replicateCase } = conformanceRunner(api, assert);

let dir;
let counter = 0;
function fileOptions(label = "r") {
  dir ??= tempDir("onestore-replica-");
  return { backend: "sqlite", path: join(dir, `${label}${counter++}.sqlite`) };
}

describe("the conformance vectors replayed into a replica", () => {
  const replicas = [
    ["memory", () => ({ backend: "memory" })],
    ["a sqlite file", () => fileOptions()],
  ];
  for (const [label, replicaOptions] of replicas) {
    test(`give the same tables, records and fingerprint on ${label}`, async () => {
      let cases = 0;
      for (const file of files) {
        const doc = JSON.parse(readFileSync(join(vectorDir, file), "utf8"));
        for (const c of doc.cases) {
          try {
            await replicateCase(doc, c, { backend: "memory" }, replicaOptions());
          } catch (e) {
            e.message = `${file} / ${c.name}: ${e.message}`;
            throw e;
          }
          cases++;
        }
      }
      assert.ok(cases > 20, `only ${cases} cases`);
    });
  }

  test("give the same fingerprint whether the store is memory or a sqlite file", async () => {
    const doc = JSON.parse(readFileSync(join(vectorDir, "writes.json"), "utf8"));
    for (const c of doc.cases) {
      const a = await replicateCase(doc, c, { backend: "memory" }, { backend: "memory" });
      const b = await replicateCase(doc, c, fileOptions("s"), fileOptions());
      assert.equal(b, a, c.name);
    }
  });
});

const Notes = defineTable("notes", {
  columns: { id: str(), path: str(), n: int(), meta: json().optional() },
  key: ["id"],
  indexes: { byPath: ["path"] },
});

// A store with three commits: the table, two puts, an updateWhere of 2 rows.
async function sourceStore() {
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "app" });
  const notes = owner.table(Notes);
  await owner.tx(async (tx) => {
    await tx.put(notes, { id: "a", path: "x/1", n: 1, meta: { k: [1, "x"] } });
    await tx.put(notes, { id: "b", path: "x/2", n: 2, meta: null });
  });
  await owner.tx(async (tx) => { await tx.updateWhere(notes, (e) => prefix(e.path, "x/"), { n: 7 }); });
  return { store, owner, notes };
}

describe("a replica", () => {
  test("is read by stored table name, with queries built on its def", async () => {
    const { store } = await sourceStore();
    const replica = await openReplica({ backend: "memory" });
    assert.deepEqual(await replica.applyBatch(await store.outbox.read(0, 100)), { head: 3, applied: 3 });
    assert.equal(replica.head, 3);
    assert.deepEqual(replica.tables(), ["app/notes"]);
    const notes = replica.table("app/notes");
    assert.equal(notes.name, "app/notes");
    assert.deepEqual(await notes.get("a"), { id: "a", path: "x/1", n: 7, meta: { k: [1, "x"] } });
    assert.equal(await notes.get(["zz"]), undefined);
    assert.equal(await notes.count(), 2);
    assert.equal(await notes.count(notes.query().where((e) => eq(e.path, "x/2"))), 1);
    const page = await notes.page(query(notes.def).where((e) => gte(e.n, 7)).orderBy((e) => e.path, "desc"), 1);
    assert.deepEqual(page.rows.map((r) => r.id), ["b"]);
    const next = await notes.page(query(notes.def).where((e) => gte(e.n, 7)).orderBy((e) => e.path, "desc"), 1, { after: page.next });
    assert.deepEqual(next.rows.map((r) => r.id), ["a"]);
    const all = [];
    for await (const row of notes.rows()) all.push(row.id);
    assert.deepEqual(all, ["a", "b"]);
    // The owner's own definition of the table reads its replica too; a
    // query over another table is refused.
    assert.equal(await notes.count(query(Notes).where((e) => eq(e.path, "x/2"))), 1);
    const Other = defineTable("other", { columns: { id: str() }, key: ["id"] });
    await rejectsWith(() => notes.count(query(Other)), "invalid/args", ["other"]);
    assert.throws(() => replica.table("app/none"), (e) => e.code === "invalid/args" && e.message.includes("app/none"));
    assert.equal(await replica.fingerprint(), await store.fingerprint());
    assert.match(await replica.fingerprint(), /^f1-[0-9a-f]{32}$/);
    await replica.close();
    await store.close();
  });

  test("takes no owner writes", async () => {
    const { store } = await sourceStore();
    const replica = await openReplica({ backend: "memory" });
    await replica.applyBatch(await store.outbox.read(0, 100));
    assert.throws(() => replica.object({ type: "app" }), (e) => e.code === "invalid/args" && e.message.includes("applyBatch"));
    await rejectsWith(replica.commit([{ op: "put", table: "app/notes", row: { id: "z", path: "", n: 0, meta: null } }]), "invalid/args");
    assert.equal(await replica.table("app/notes").count(), 2);
    assert.equal(replica.head, 3);
    await replica.close();
    await store.close();
    // Nor snapshots: their options were taken, whatever their value, and ignored.
    for (const options of [{ keepSnapshots: 3 }, { snapshotEvery: -5 }]) {
      await rejectsWith(openReplica({ backend: "memory", ...options }), "invalid/args", [Object.keys(options)[0], "no snapshots"]);
    }
  });

  test("applies an already applied batch as a no-op, and only the new commits of an overlapping one", async () => {
    const { store } = await sourceStore();
    const replica = await openReplica({ backend: "memory" });
    assert.deepEqual(await replica.applyBatch(await store.outbox.read(0, 2)), { head: 2, applied: 2 });
    assert.deepEqual(await replica.applyBatch(await store.outbox.read(0, 2)), { head: 2, applied: 0 });
    assert.deepEqual(await replica.applyBatch(await store.outbox.read(1, 2)), { head: 3, applied: 1 });
    assert.deepEqual(await replica.outbox.read(0, 10), await store.outbox.read(0, 10));
    assert.equal(await replica.fingerprint(), await store.fingerprint());
    await replica.close();
    await store.close();
  });

  test("refuses a batch that starts after its head with sync/gap, and changes nothing", async () => {
    const { store } = await sourceStore();
    const replica = await openReplica({ backend: "memory" });
    await rejectsWith(replica.applyBatch(await store.outbox.read(1, 2)), "sync/gap", ["1", "head is 0"]);
    assert.equal(replica.head, 0);
    assert.deepEqual(replica.tables(), []);
    await replica.applyBatch(await store.outbox.read(0, 100));
    assert.equal(replica.head, 3);
    await replica.close();
    await store.close();
  });

  test("refuses a malformed batch with invalid/args and applies nothing of it", async () => {
    const { store } = await sourceStore();
    const replica = await openReplica({ backend: "memory" });
    const good = await store.outbox.read(0, 100);
    const bad = [
      null,
      { from: 0, to: 3 },
      { ...good, to: 2 },
      { ...good, commits: good.commits.map((r, i) => (i === 1 ? { ...r, seq: 5 } : r)) },
      { ...good, commits: good.commits.map((r, i) => (i === 2 ? { ...r, from: 0 } : r)) },
      // The last commit's op names a column the table lacks: refused after
      // the first two were written in the same transaction.
      { ...good, commits: good.commits.map((r, i) => (i === 2 ? { ...r, ops: [{ ...r.ops[0], set: { nope: { value: 1 } } }] } : r)) },
    ];
    for (const b of bad) await rejectsWith(replica.applyBatch(b), "invalid/args");
    assert.equal(replica.head, 0);
    assert.deepEqual(replica.tables(), []);
    assert.equal(replica.diverged, undefined);
    await replica.applyBatch(good);
    assert.equal(await replica.fingerprint(), await store.fingerprint());
    await replica.close();
    await store.close();
  });

  test("checks a key op's count (a put's 1, a delete's 1 or 0), and refuses a malformed count or document op without diverging", async () => {
    const { store } = await sourceStore();
    const good = await store.outbox.read(0, 100);
    const at = good.commits.findIndex((r) => r.ops.some((o) => o.op === "put"));
    const withOps = (ops) => ({ ...good, commits: good.commits.map((r, i) => (i === at ? { ...r, ops: ops(r.ops) } : r)) });
    const counted = withOps(([put, ...rest]) => [{ ...put, count: 1 }, ...rest, { op: "delete", table: "app/notes", key: ["zz"], count: 0 }]);
    const malformed = [
      [withOps(([put, ...rest]) => [{ ...put, count: 0 }, ...rest]), ["count", "a key op's count is 1, got 0"]],
      [withOps((ops) => [...ops, { op: "delete", table: "app/notes", key: ["a"], count: 7 }]), ["count", "1 or 0, got 7"]],
      [withOps((ops) => [...ops, { op: "doc.create", owner: "app", id: 1, kind: "note", value: 1 }]), ["carries its version"]],
    ];
    for (const options of [{ backend: "memory" }, fileOptions("counts")]) {
      const replica = await openReplica(options);
      for (const [batch, words] of malformed) await rejectsWith(replica.applyBatch(batch), "invalid/args", words);
      assert.equal(replica.head, 0);
      assert.equal(replica.diverged, undefined, "a malformed record is refused, not a divergence");
      assert.deepEqual(await replica.applyBatch(counted), { head: 3, applied: 3 });
      assert.equal(await replica.fingerprint(), await store.fingerprint());
      await replica.close();
      // A delete of a row the replica holds, recorded as having found none, diverges.
      const other = await openReplica({ backend: "memory" });
      await rejectsWith(other.applyBatch(withOps((ops) => [...ops, { op: "delete", table: "app/notes", key: ["a"], count: 0 }])), "sync/diverged", ["affected 1 rows, the record says 0"]);
      await other.close();
    }
    await store.close();
  });

  test("takes a batch as its JSON text (sent to the core as UTF-8 bytes), and refuses a text with a lone surrogate", async () => {
    const { store } = await sourceStore();
    const replica = await openReplica({ backend: "memory" });
    const text = JSON.stringify(await store.outbox.read(0, 100));
    // A lone surrogate in the owner's name is not text: Emscripten's encoder
    // (embind's, and the Core's since: wasm/ABI.md, "Calls") folds it into
    // the next character (U+D800 and the "a" of "app" become U+10061), and
    // TextEncoder would write U+FFFD.
    const lone = text.replace('"owner":"', '"owner":"\uD800');
    assert.notEqual(lone, text);
    await rejectsWith(replica.applyBatch(lone), "invalid/args", ["lone surrogate"]);
    assert.equal(replica.head, 0);
    assert.deepEqual(await replica.applyBatch(text.replaceAll('"owner":"', '"owner":"\u00e9\uD83D\uDE00')), { head: 3, applied: 3 });
    const records = (await replica.outbox.read(0, 100)).commits;
    assert.ok(records.every((r) => r.owner.startsWith("\u00e9\uD83D\uDE00")), JSON.stringify(records));
    assert.equal(await replica.fingerprint(), await store.fingerprint());
    await replica.close();
    await store.close();
  });

  test("diverges on a mutated count: nothing of the batch applied, later batches refused, also after reopening", async () => {
    const { store, owner, notes } = await sourceStore();
    const options = fileOptions("diverge");
    let replica = await openReplica(options);
    await replica.applyBatch(await store.outbox.read(0, 1));  // the table
    const batch = await store.outbox.read(1, 100);
    assert.equal(batch.commits[1].ops[0].count, 2);
    batch.commits[1].ops[0].count = 3;
    await rejectsWith(replica.applyBatch(batch), "sync/diverged", ["seq 3", "3", "2"]);
    assert.equal(replica.head, 1);
    assert.equal(await replica.table("app/notes").count(), 0);  // seq 2's puts rolled back too
    assert.match(replica.diverged, /seq 3/);
    // A good batch is refused now, and after reopening the file too.
    await rejectsWith(replica.applyBatch(await store.outbox.read(1, 1)), "sync/diverged");
    await replica.close();
    replica = await openReplica(options);
    assert.match(replica.diverged, /seq 3/);
    await owner.tx(async (tx) => { await tx.put(notes, { id: "c", path: "y", n: 0, meta: null }); });
    await rejectsWith(replica.applyBatch(await store.outbox.read(1, 100)), "sync/diverged");
    assert.equal(replica.head, 1);
    await replica.close();
    await store.close();
  });

  test("diverges on an update of a row it does not hold", async () => {
    const { store, owner, notes } = await sourceStore();
    const replica = await openReplica({ backend: "memory" });
    await replica.applyBatch(await store.outbox.read(0, 100));
    await owner.tx(async (tx) => { await tx.update(notes, ["b"], { n: 9 }); });
    const batch = await store.outbox.read(3, 100);
    batch.commits[0].ops[0].key = ["gone"];
    await rejectsWith(replica.applyBatch(batch), "sync/diverged", ["gone"]);
    assert.equal(replica.head, 3);
    assert.equal((await replica.table("app/notes").get("b")).n, 7);
    await replica.close();
    await store.close();
  });

  test("opens its file only with openReplica, and never over an owner's commits", async () => {
    const { store } = await sourceStore();
    const options = fileOptions("role");
    const replica = await openReplica(options);
    await replica.applyBatch(await store.outbox.read(0, 100));
    await replica.close();
    await rejectsWith(openStore(options), "invalid/args", ["replica", "openReplica"]);
    const owned = fileOptions("owned");
    const owner = await openStore(owned);
    await owner.commit([{ op: "table", table: "a/t", version: 1, columns: { id: { type: "str" } }, key: ["id"], indexes: {} }]);
    await owner.close();
    await rejectsWith(openReplica(owned), "invalid/args", ["owner", "head 1"]);
    const again = await openReplica(options);
    assert.equal(again.head, 3);
    await again.close();
    await store.close();
  });

  test("applies index changes from the log: the sqlite3 command sees the new index, not the dropped one", async () => {
    const store = await openStore({ backend: "memory" });
    const table = (indexes) => ({ op: "table", table: "app/t", version: 1, columns: { id: { type: "str" }, a: { type: "int" }, b: { type: "str" } }, key: ["id"], indexes });
    await store.commit([table({ byA: ["a"] })]);
    await store.commit([{ op: "put", table: "app/t", row: { id: "x", a: 2, b: "q" } }, { op: "put", table: "app/t", row: { id: "y", a: 1, b: "p" } }]);
    await store.commit([table({ byB: ["b"] })]);
    const options = fileOptions("indexes");
    const replica = await openReplica(options);
    await replica.applyBatch(await store.outbox.read(0, 2));
    await replica.applyBatch(await store.outbox.read(2, 1));
    const t = replica.table("app/t");
    assert.deepEqual(t.def.indexes, { byB: ["b"] });
    const { rows } = await t.page(t.query().orderBy((e) => e.b), 10);
    assert.deepEqual(rows.map((r) => r.id), ["y", "x"]);
    assert.equal(await replica.fingerprint(), await store.fingerprint());
    await replica.close();
    const names = execFileSync("/usr/bin/sqlite3", [options.path, "select name from sqlite_master where type = 'index' and tbl_name = 'app/t' order by name"], { encoding: "utf8" });
    assert.match(names, /app\/t\/byB/);
    assert.doesNotMatch(names, /byA/);
    await store.close();
  });

  test("keeps its head and rows across a reopen of its sqlite file", async () => {
    const { store } = await sourceStore();
    const options = fileOptions("reopen");
    let replica = await openReplica(options);
    await replica.applyBatch(await store.outbox.read(0, 100));
    const fp = await replica.fingerprint();
    await replica.close();
    await rejectsWith(replica.applyBatch(await store.outbox.read(0, 100)), "closed");
    replica = await openReplica(options);
    assert.equal(replica.head, 3);
    assert.equal(await replica.fingerprint(), fp);
    assert.deepEqual(await replica.applyBatch(await store.outbox.read(0, 100)), { head: 3, applied: 0 });
    await replica.close();
    await store.close();
  });

  test("a table handle reads the new columns after an alter, however the batch's JSON spells it", async () => {
    // The core says when a batch changed a table's columns; the text is valid
    // JSON either way, so no spelling of "op" may leave a reader's decoder stale.
    const table = { op: "table", table: "t/items", version: 1, key: ["id"], indexes: {},
      columns: { id: { type: "str" }, a: { type: "str" }, b: { type: "str" } } };
    for (const spelling of ['"op" : "alter"', '"op":"\\u0061lter"']) {
      for (const options of [{ backend: "memory" }, fileOptions("alter")]) {
        const replica = await openReplica(options);
        await replica.applyBatch({ from: 0, to: 1, commits: [{ seq: 1, from: 0, at: 1, owner: "t",
          ops: [table, { op: "put", table: "t/items", row: { id: "x", a: "A", b: "B" } }] }] });
        const items = replica.table("t/items");
        assert.deepEqual(await items.get("x"), { id: "x", a: "A", b: "B" });
        const alter = `{${spelling},"table":"t/items","version":2,"drop":["a"],"add":{"c":{"type":"str","default":"C"}}}`;
        const answer = await replica.applyBatch(`{"from":1,"to":2,"commits":[{"seq":2,"from":1,"at":1,"owner":"t","ops":[${alter}]}]}`);
        assert.deepEqual(answer, { head: 2, applied: 1 });
        assert.deepEqual(await items.get("x"), { id: "x", b: "B", c: "C" }, spelling);
        await replica.close();
      }
    }
  });
});

test("a batch of a few records of large values (30 puts of 1.9 MB, 57 MB of JSON) applies: the heap check counts its ops, not an op per 16 bytes", async () => {
  const Texts = defineTable("texts", { columns: { id: str(), text: str() }, key: ["id"] });
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "app" });
  const texts = owner.table(Texts);
  for (let i = 0; i < 30; i++) await owner.tx(async (tx) => { await tx.put(texts, { id: `k${i}`, text: "x".repeat(1_900_000) }); });
  // One batch of the 31 records (a read stops at 8 MiB of records: joined
  // from the reads, as a relay's download does).
  const batch = { from: 0, to: 0, commits: [] };
  while (batch.to < store.head) {
    const part = await store.outbox.read(batch.to, 500);
    batch.commits.push(...part.commits);
    batch.to = part.to;
  }
  assert.equal(batch.commits.length, 31);
  // Before, every replica refused it with limit: "(57003785 bytes, 3562737
  // ops) need about 3674 MiB of the wasm heap ...; commit them in smaller
  // transactions", and pullSession could not download such a session.
  for (const options of [{ backend: "memory" }, { backend: "sqlite", path: ":memory:" }]) {
    const replica = await openReplica(options);
    assert.deepEqual(await replica.applyBatch(batch), { head: 31, applied: 31 });
    assert.equal(await replica.fingerprint(), await store.fingerprint());
    await replica.close();
  }
  await store.close();
});
