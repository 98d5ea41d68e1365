// Changing a table through the public package, on memory (reopened through
// export and import) and a sqlite file (closed and reopened): code that
// declares an older version is refused with schema/newer and changes
// nothing; a higher version whose columns no migration explains is refused,
// naming the column; migrations' alters (add with a default, rename, drop)
// and the declared indexes run in one commit when the owner opens the table,
// recorded as alter and index ops; several versions at once; a replica
// that applies those records holds the same rows and fingerprint; eager
// migrations (rows rewritten in pages with progress, update as one bulk op,
// a key change) in the same one commit, 100k rows included; a rows
// function that throws midway leaves the old table whole; and versioned json
// values, migrated when read, stored in the new shape when written, refused
// with schema/newer when newer than the code.

import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";

import { add, bool, coalesce, col, defineTable, eq, importStore, int, json, openReplica, openStore, query, str, StoreError, value, when } from "../../js/index.js";
import { rejectsWith, tempDir, throwsWith } from "./helpers.js";

const V1 = defineTable("items", {
  columns: { id: int(), title: str(), note: str().optional(), n: int() },
  key: ["id"],
  indexes: { byTitle: ["title"] },
});

const V2 = defineTable("items", {
  version: 2,
  columns: { id: int(), name: str(), n: int(), size: int({ default: 0 }), meta: json().optional() },
  key: ["id"],
  indexes: { byName: ["name"], bySize: ["size", "n"] },
  migrations: {
    2: { alter: { drop: ["note"], rename: { title: "name" }, add: { size: int({ default: 0 }), meta: json().optional() } } },
  },
});

const V3 = defineTable("items", {
  version: 3,
  columns: { id: int(), label: str(), n: int(), size: int({ default: 0 }), meta: json().optional(), done: str({ default: "no" }) },
  key: ["id"],
  indexes: { bySize: ["size", "n"] },
  migrations: {
    ...V2.migrations,
    3: { alter: { rename: { name: "label" }, add: { done: str({ default: "no" }) } } },
  },
});

let dir;
let counter = 0;
const paths = new WeakMap();  // sqlite store -> its file
// Each kind of store, with a way to "reopen" it as another process would.
const kinds = {
  memory: {
    open: () => openStore({ backend: "memory" }),
    reopen: async (store) => {
      const back = await importStore(store.export(), { backend: "memory" });
      await store.close();
      return back;
    },
  },
  "sqlite file": {
    open: () => {
      dir ??= tempDir("onestore-migrations-");
      const path = join(dir, `m${counter++}.sqlite`);
      return openStore({ backend: "sqlite", path }).then((s) => (paths.set(s, path), s));
    },
    reopen: async (store) => {
      const path = paths.get(store);
      await store.close();
      const back = await openStore({ backend: "sqlite", path });
      paths.set(back, path);
      return back;
    },
  },
};

async function seeded(kind) {
  const store = await kind.open();
  const items = store.object({ type: "notes" }).table(V1);
  await store.object({ type: "notes" }).tx(async (tx) => {
    await tx.put(items, { id: 1, title: "b", note: "x", n: 30 });
    await tx.put(items, { id: 2, title: "a", n: 10 });
    await tx.put(items, { id: 3, title: "c", note: "y", n: 20 });
  });
  return store;
}

async function rowsOf(handle, q) {
  const out = [];
  for await (const r of handle.rows(q)) out.push(r);
  return out;
}

for (const [label, kind] of Object.entries(kinds)) {
  describe(`changing a table on ${label}`, () => {
    test("an alter adds, renames and drops columns in one commit recorded as alter and index ops, before the table goes live", async () => {
      let store = await seeded(kind);
      store = await kind.reopen(store);
      const head = store.head;
      const seen = [];
      const notes = store.object({ type: "notes" }, { adopt: (seq, ops) => seen.push({ seq, ops }) });
      // A watch added by the definition, before the table opens, sees the
      // migration's commit, which runs within owner.table (the line is idle).
      const watched = [];
      notes.watch(V2, (ops, seq) => { watched.push({ seq, ops }); });
      const items = notes.table(V2);
      // The first read already sees the new shape: the migration commit ran first.
      assert.deepEqual(await items.get(1), { id: 1, name: "b", n: 30, size: 0, meta: null });
      assert.equal(store.head, head + 1);
      assert.equal(seen.length, 1);
      assert.deepEqual(seen[0].ops, [
        { op: "alter", table: "notes/items", version: 2, drop: ["note"], rename: { title: "name" }, add: { size: { type: "int", default: 0 }, meta: { type: "json", optional: true } } },
        { op: "index", table: "notes/items", version: 2, drop: ["byTitle"], create: { byName: ["name"], bySize: ["size", "n"] } },
      ]);
      const { commits } = await store.outbox.read(head, 1);
      assert.deepEqual(commits[0].ops, seen[0].ops);
      await new Promise((r) => setTimeout(r, 0));  // watches run after the flush
      assert.deepEqual(watched, [{ seq: head + 1, ops: seen[0].ops }]);
      await notes.tx(async (tx) => {
        await tx.put(items, { id: 4, name: "d", n: 5, size: 3, meta: { k: 1 } });
        await tx.update(items, 2, { size: 8 });
      });
      assert.deepEqual((await rowsOf(items, query(V2).where((e) => eq(e.size, 0)))).map((r) => r.id), [1, 3]);
      assert.deepEqual(await items.get(4), { id: 4, name: "d", n: 5, size: 3, meta: { k: 1 } });
      // Reopened once more, the same declaration commits nothing.
      store = await kind.reopen(store);
      const again = store.object({ type: "notes" }).table(V2);
      assert.deepEqual(await again.get(2), { id: 2, name: "a", n: 10, size: 8, meta: null });
      assert.equal(store.head, head + 2);
      await store.close();
    });

    test("code that declares an older version is refused with schema/newer and changes nothing", async () => {
      let store = await seeded(kind);
      store = await kind.reopen(store);
      await store.object({ type: "notes" }).table(V2).count();
      store = await kind.reopen(store);
      const head = store.head;
      const notes = store.object({ type: "notes" });
      throwsWith(() => notes.table(V1), "schema/newer", ["notes/items", "version 2", "version 1"]);
      assert.equal(store.head, head);
      const items = notes.table(V2);
      assert.equal(await items.count(), 3);
      await store.close();
    });

    test("a higher version whose columns no migration explains is refused, naming the column, and changes nothing", async () => {
      let store = await seeded(kind);
      store = await kind.reopen(store);
      const head = store.head;
      const notes = store.object({ type: "notes" });
      const Bare = defineTable("items", { version: 2, columns: { id: int(), title: str(), note: str().optional(), n: int(), size: int({ default: 0 }) }, key: ["id"] });
      throwsWith(() => notes.table(Bare), "invalid/args", ["notes/items", "\"size\"", "no migration", "alter"]);
      const Wrong = defineTable("items", {
        version: 2,
        columns: { id: int(), title: str(), note: str().optional(), n: int(), size: int({ default: 1 }) },
        key: ["id"],
        migrations: { 2: { alter: { add: { size: int({ default: 0 }) } } } },
      });
      throwsWith(() => notes.table(Wrong), "invalid/args", ["\"size\"", "default"]);
      const Retyped = defineTable("items", { version: 2, columns: { id: int(), title: str(), note: str().optional(), n: str() }, key: ["id"] });
      throwsWith(() => notes.table(Retyped), "invalid/args", ["\"n\"", "int in the store", "str in the declaration"]);
      assert.equal(store.head, head);
      assert.deepEqual(await notes.table(V1).get(1), { id: 1, title: "b", note: "x", n: 30 });
      await store.close();
    });

    test("a table two versions behind runs both versions' alters in order in one commit", async () => {
      let store = await seeded(kind);
      store = await kind.reopen(store);
      const head = store.head;
      const items = store.object({ type: "notes" }).table(V3);
      assert.deepEqual(await items.get(3), { id: 3, label: "c", n: 20, size: 0, meta: null, done: "no" });
      assert.equal(store.head, head + 1);
      const { commits } = await store.outbox.read(head, 1);
      assert.deepEqual(commits[0].ops.map((o) => [o.op, o.version]), [["alter", 2], ["alter", 3], ["index", 3]]);
      // From version 2 to 3 later takes only the third step.
      let other = await seeded(kind);
      other = await kind.reopen(other);
      await other.object({ type: "notes" }).table(V2).count();
      other = await kind.reopen(other);
      const h2 = other.head;
      assert.equal((await other.object({ type: "notes" }).table(V3).get(1)).label, "b");
      const step = await other.outbox.read(h2, 1);
      assert.deepEqual(step.commits[0].ops.map((o) => [o.op, o.version]), [["alter", 3], ["index", 3]]);
      await store.close();
      await other.close();
    });

    test("a changed index list alone is diffed into one index op; the same declaration again records nothing", async () => {
      let store = await seeded(kind);
      store = await kind.reopen(store);
      const head = store.head;
      const V1b = defineTable("items", { columns: V1.columns, key: ["id"], indexes: { byN: ["n", "title"] } });
      const items = store.object({ type: "notes" }).table(V1b);
      assert.equal(await items.count(), 3);
      const { commits } = await store.outbox.read(head, 1);
      assert.deepEqual(commits[0].ops, [{ op: "index", table: "notes/items", version: 1, drop: ["byTitle"], create: { byN: ["n", "title"] } }]);
      store = await kind.reopen(store);
      store.object({ type: "notes" }).table(V1b);
      assert.equal(await store.object({ type: "notes" }).table(V1b).count(), 3);
      assert.equal(store.head, head + 1);
      await store.close();
    });

    test("a replica applies the alter and index records and holds the same rows and fingerprint", async () => {
      let store = await seeded(kind);
      store = await kind.reopen(store);
      const items = store.object({ type: "notes" }).table(V3);
      await store.object({ type: "notes" }).tx(async (tx) => {
        await tx.put(items, { id: 7, label: "g", n: 1, size: 2, done: "yes" });
      });
      const replica = await openReplica({ backend: "memory" });
      // The first batch leaves the replica at version 1, the rest migrates it.
      await replica.applyBatch(await store.outbox.read(0, 2));
      assert.deepEqual(await replica.table("notes/items").get(1), { id: 1, title: "b", note: "x", n: 30 });
      await replica.applyBatch(await store.outbox.read(2, 100));
      assert.equal(replica.head, store.head);
      const mirrored = replica.table("notes/items");
      assert.deepEqual(mirrored.def.indexes, { bySize: ["size", "n"] });
      assert.deepEqual(await rowsOf(mirrored), await rowsOf(items));
      assert.equal(await replica.fingerprint(), await store.fingerprint());
      await replica.close();
      await store.close();
    });
  });
}

// Version 2 adds dir, filled by a rows step; version 3 adds big, filled by
// one update of every row.
const Eager = defineTable("items", {
  version: 3,
  columns: { id: int(), title: str(), note: str().optional(), n: int(), dir: str({ default: "" }), big: int({ default: 0 }) },
  key: ["id"],
  indexes: { byTitle: ["title"], byDir: ["dir"] },
  migrations: {
    2: { alter: { add: { dir: str({ default: "" }) } }, rows: (row) => ({ dir: `${row.title}/${row.note ?? "-"}` }) },
    3: { alter: { add: { big: int({ default: 0 }) } }, update: { big: add(col("n"), 100) } },
  },
});

for (const [label, kind] of Object.entries(kinds)) {
  describe(`eager migrations on ${label}`, () => {
    test("rows are rewritten and an update runs as one bulk op, in the one migration commit that a replica repeats", async () => {
      let store = await seeded(kind);
      store = await kind.reopen(store);
      const head = store.head;
      const progress = [];
      const items = store.object({ type: "notes" }).table(Eager, { onProgress: (p) => progress.push(p) });
      assert.deepEqual(await rowsOf(items), [
        { id: 1, title: "b", note: "x", n: 30, dir: "b/x", big: 130 },
        { id: 2, title: "a", note: null, n: 10, dir: "a/-", big: 110 },
        { id: 3, title: "c", note: "y", n: 20, dir: "c/y", big: 120 },
      ]);
      assert.deepEqual(progress, [{ table: "notes/items", version: 2, done: 3, total: 3 }]);
      assert.equal(store.head, head + 1);
      const { commits } = await store.outbox.read(head, 1);
      assert.deepEqual(commits[0].ops.map((o) => o.op + (o.key ? ":key" : o.where !== undefined ? ":where" : "")), [
        "alter", "update:key", "update:key", "update:key", "alter", "update:where", "index",
      ]);
      assert.equal(commits[0].ops[5].count, 3);
      assert.deepEqual(await items.count(query(Eager).where((e) => eq(e.dir, "c/y"))), 1);
      const replica = await openReplica({ backend: "memory" });
      await replica.applyBatch(await store.outbox.read(0, 100));
      assert.deepEqual(await rowsOf(replica.table("notes/items")), await rowsOf(items));
      assert.equal(await replica.fingerprint(), await store.fingerprint());
      await replica.close();
      await store.close();
    });

    test("a rows step that changes the key deletes every old key before it puts the new ones", async () => {
      let store = await seeded(kind);
      store = await kind.reopen(store);
      const Shifted = defineTable("items", {
        version: 2,
        columns: V1.columns,
        key: ["id"],
        indexes: V1.indexes,
        migrations: { 2: { rows: (row) => ({ id: row.id + 1, n: row.n + 1 }) } },
      });
      const items = store.object({ type: "notes" }).table(Shifted);
      assert.deepEqual((await rowsOf(items)).map((r) => [r.id, r.title, r.n]), [[2, "b", 31], [3, "a", 11], [4, "c", 21]]);
      await store.close();
    });

    test("a moved row that would undo an update or replace another row is refused, naming the keys, and changes nothing", async () => {
      let store = await seeded(kind);
      store = await kind.reopen(store);
      const head = store.head;
      const v2 = (migrations) => defineTable("items", { version: 2, columns: V1.columns, key: ["id"], indexes: V1.indexes, migrations });
      const cases = [
        // A moved row is put whole, from the row rows saw: it lacks the update.
        [{ 2: { update: { n: add(col("n"), 100) }, rows: (row) => ({ id: row.id + 10 }) } },
          ["migrations.2.rows moves the row of key [1] to [11]", "after migrations.2.update"]],
        [{ 2: { rows: () => ({ id: 7 }) } }, ["keys [1] and [2] both to [7]"]],
        [{ 2: { rows: (row) => (row.id === 1 ? { id: 3 } : {}) } }, ["moves the row of key [1] to [3], the key of a row it keeps"]],
        // Values are held to tx.put's rule, a Promise (an async rows) too.
        [{ 2: { rows: () => ({ note: new Date(0) }) } }, ["migrations.2.rows(row).note", "class Date"]],
        [{ 2: { rows: async () => ({ note: "x" }) } }, ["migrations.2.rows(row)", "class Promise"]],
        // A bad update names its step when the owner opens the table.
        [{ 2: { update: { zz: 1 } } }, ["table.migrations.2.update.set.zz", "unknown column"]],
      ];
      for (const [migrations, words] of cases) {
        throwsWith(() => store.object({ type: "notes" }).table(v2(migrations)), "invalid/args", words);
        assert.equal(store.head, head);
      }
      const old = store.object({ type: "notes" }).table(V1);
      assert.deepEqual((await rowsOf(old)).map((r) => [r.id, r.title, r.note, r.n]), [[1, "b", "x", 30], [2, "a", null, 10], [3, "c", "y", 20]]);
      // Two rows may swap keys; a column returned as undefined keeps its value.
      store = await kind.reopen(store);
      const swapped = store.object({ type: "notes" }).table(v2({ 2: { rows: (row) => ({ id: row.id === 1 ? 2 : row.id === 2 ? 1 : row.id, note: undefined }) } }));
      assert.deepEqual((await rowsOf(swapped)).map((r) => [r.id, r.title, r.note, r.n]), [[1, "a", null, 10], [2, "b", "x", 30], [3, "c", "y", 20]]);
      await store.close();
    });

    test("a rows function that throws midway commits nothing: the old table is whole, old code opens it, and the migration can run again", async () => {
      let store = await kind.open();
      const notes = store.object({ type: "notes" });
      const v1 = notes.table(V1);
      await notes.tx(async (tx) => {
        for (let id = 0; id < 2500; id++) await tx.put(v1, { id, title: `t${id}`, n: id });
      });
      store = await kind.reopen(store);
      const head = store.head;
      const Failing = defineTable("items", {
        ...Eager,
        migrations: {
          ...Eager.migrations,
          2: { ...Eager.migrations[2], rows: (row) => { if (row.id === 1500) throw new Error("disk full"); return { dir: "x" }; } },
        },
      });
      const progress = [];
      throwsWith(() => store.object({ type: "notes" }).table(Failing, { onProgress: (p) => progress.push(p.done) }), "invalid/args", ["migrations.2.rows threw", "disk full"]);
      assert.deepEqual(progress, [1000]);  // the first page was staged, then the second one threw
      assert.equal(store.head, head);
      // A StoreError of the rows function's own passes as it is.
      const mine = new StoreError("limit", "mine");
      const Own = defineTable("items", { ...Eager, migrations: { ...Eager.migrations, 2: { ...Eager.migrations[2], rows: () => { throw mine; } } } });
      assert.throws(() => store.object({ type: "notes" }).table(Own), (e) => e === mine);
      assert.equal(store.head, head);
      store = await kind.reopen(store);
      const old = store.object({ type: "notes" }).table(V1);
      assert.equal(await old.count(), 2500);
      assert.deepEqual(await old.get(1700), { id: 1700, title: "t1700", note: null, n: 1700 });
      assert.equal(store.head, head);
      store = await kind.reopen(store);
      const items = store.object({ type: "notes" }).table(Eager);
      assert.deepEqual(await items.get(1700), { id: 1700, title: "t1700", note: null, n: 1700, dir: "t1700/-", big: 1800 });
      await store.close();
    });
  });
}

test("100k rows migrate eagerly in one commit, with progress after each page of 1000", async () => {
  dir ??= tempDir("onestore-migrations-");
  const path = join(dir, "big.sqlite");
  let store = await openStore({ backend: "sqlite", path });
  store.object({ type: "notes" }).table(V1);
  const puts = [];
  for (let id = 0; id < 100_000; id++) puts.push({ op: "put", table: "notes/items", row: { id, title: `t${id % 97}`, n: id } });
  await store.commit(puts);
  await store.close();
  store = await openStore({ backend: "sqlite", path });
  const progress = [];
  const items = store.object({ type: "notes" }).table(Eager, { onProgress: (p) => progress.push(p) });
  assert.equal(progress.length, 100);
  assert.deepEqual(progress[0], { table: "notes/items", version: 2, done: 1000, total: 100_000 });
  assert.deepEqual(progress.at(-1), { table: "notes/items", version: 2, done: 100_000, total: 100_000 });
  assert.equal(store.head, 3);
  assert.equal(await items.count(query(Eager).where((e) => eq(e.dir, "t5/-"))), Math.ceil((100_000 - 5) / 97));
  assert.deepEqual(await items.get(99_999), { id: 99_999, title: `t${99_999 % 97}`, note: null, n: 99_999, dir: `t${99_999 % 97}/-`, big: 100_099 });
  await store.close();
});

const Notes1 = defineTable("docs", { columns: { id: int(), n: int(), meta: json() }, key: ["id"] });
function notesAt(version, calls = []) {
  const migrate = (old, from) => {
    calls.push(from);
    let v = old;
    if (from < 2) v = { title: v.name, tags: [] };
    if (from < 3 && version >= 3) v = { ...v, tags: v.tags.map((t) => t.toUpperCase()), v3: true };
    return v;
  };
  return defineTable("docs", { columns: { id: int(), n: int(), meta: json({ version, migrate }) }, key: ["id"] });
}

for (const [label, kind] of Object.entries(kinds)) {
  test(`a table declared with its columns in another order than stored reads and writes them by name (${label})`, async () => {
    const Stored = defineTable("people", { columns: { id: str(), first: str(), last: str(), meta: json(), ok: bool() }, key: ["id"] });
    const Reordered = defineTable("people", { columns: { ok: bool(), meta: json(), id: str(), last: str(), first: str() }, key: ["id"] });
    const V2 = defineTable("people", {
      version: 2,
      columns: { id: str(), last: str(), note: str({ default: "none" }), first: str(), meta: json(), ok: bool() },
      key: ["id"],
      migrations: { 2: { alter: { add: { note: str({ default: "none" }) } } } },
    });
    const ada = { id: "u1", first: "Ada", last: "Lovelace", meta: { born: 1815 }, ok: true };
    let store = await kind.open();
    let owner = store.object({ type: "app" });
    await owner.tx(async (tx) => { await tx.put(owner.table(Stored), ada); });
    store = await kind.reopen(store);
    owner = store.object({ type: "app" });
    const head = store.head;
    const t = owner.table(Reordered);
    // Before, the values were read by the declared order: { ok: "u1", meta: "Ada", ... },
    // or a raw SyntaxError for the json and bool columns.
    assert.deepEqual(await t.get("u1"), ada);
    assert.deepEqual((await t.page(query(Reordered).where((e) => eq(e.first, "Ada")), 10)).rows, [ada]);
    assert.equal(store.head, head, "another order is no change: nothing is committed");
    const row = await t.get("u1");
    await owner.tx(async (tx) => { await tx.put(t, { ...row }); assert.deepEqual(await tx.get(t, "u1"), ada); });
    store = await kind.reopen(store);
    owner = store.object({ type: "app" });
    assert.deepEqual(await owner.table(Stored).get("u1"), ada, "the row written back is as it was");
    store = await kind.reopen(store);
    owner = store.object({ type: "app" });
    // A column added by an alter may be declared anywhere: after the
    // migration, and on every later open with the same code.
    assert.deepEqual(await owner.table(V2).get("u1"), { ...ada, note: "none" });
    store = await kind.reopen(store);
    owner = store.object({ type: "app" });
    assert.deepEqual(await owner.table(V2).get("u1"), { ...ada, note: "none" });
    await store.close();
  });

  describe(`versioned json values on ${label}`, () => {
    async function seededNotes() {
      const store = await kind.open();
      const owner = store.object({ type: "notes" });
      const t = owner.table(Notes1);
      await owner.tx(async (tx) => {
        await tx.put(t, { id: 1, n: 1, meta: { name: "a" } });
        await tx.put(t, { id: 2, n: 2, meta: { name: "b" } });
      });
      return kind.reopen(store);
    }

    test("a view at a seq reads versioned json as the owner does: out of its envelope, an older one migrated", async () => {
      const store = await seededNotes();
      const owner = store.object({ type: "notes" });
      const Notes2 = notesAt(2);
      const t = owner.table(Notes2);
      await owner.tx(async (tx) => { await tx.put(t, { id: 3, n: 3, meta: { title: "c", tags: ["x"] } }); });
      const view = await store.at(store.head);
      try {
        const want = [{ id: 1, n: 1, meta: { title: "a", tags: [] } }, { id: 3, n: 3, meta: { title: "c", tags: ["x"] } }];
        // Before, the view gave { $v: 2, $value: … } for row 3 and row 1's old shape.
        for (const named of [t, Notes2, t.name]) {
          const vt = view.table(named);
          assert.deepEqual([await vt.get(1), await vt.get(3)], want, `named by ${typeof named === "string" ? "its stored name" : named === t ? "the handle" : "the definition"}`);
          assert.deepEqual((await vt.page(undefined, 10)).rows.filter((r) => r.id !== 2), want);
        }
      } finally {
        await view.close();
      }
      await store.close();
    });

    // A view read a table through the code's current definition by column
    // name, whatever the table was at its seq: a str column dropped and
    // added back as a versioned json one read "hello" as migrate("hello"),
    // and a versioned json column renamed since gave its raw envelope. Each
    // seq has one answer: the record at that seq says which column it is.
    test("a view at a seq before a migration reads each column as the table was then, whichever definition is open", async () => {
      const meta = json({ version: 2, migrate: (old, from) => ({ migratedFrom: from, old }) }).optional();
      const Tags1 = defineTable("tags", { columns: { id: str(), note: str(), meta }, key: ["id"] });
      const Tags2 = defineTable("tags", {
        version: 2,
        columns: { id: str(), note: meta, info: meta },
        key: ["id"],
        migrations: { 2: { alter: { drop: ["note"], rename: { meta: "info" }, add: { note: meta } } } },
      });
      let store = await kind.open();
      let owner = store.object({ type: "tags" });
      await owner.tx(async (tx) => { await tx.put(owner.table(Tags1), { id: "1", note: "hello", meta: { k: 1 } }); });
      const then = { id: "1", note: "hello", meta: { k: 1 } };
      const before = store.head;
      const readBefore = async (named) => {
        const view = await store.at(before);
        try {
          return await view.table(named).get("1");
        } finally {
          await view.close();
        }
      };
      assert.deepEqual(await readBefore("tags/tags"), then, "with the definition of that seq open");
      store = await kind.reopen(store);
      owner = store.object({ type: "tags" });
      const t = owner.table(Tags2);
      assert.deepEqual(await t.get("1"), { id: "1", note: null, info: { k: 1 } });
      await owner.tx(async (tx) => { await tx.put(t, { id: "2", note: { n: 2 }, info: null }); });
      for (const named of ["tags/tags", Tags2, t]) {
        assert.deepEqual(await readBefore(named), then, `with the migrated definition open, named by ${typeof named === "string" ? "its stored name" : named === t ? "the handle" : "the definition"}`);
      }
      const view = await store.at(store.head);
      try {
        assert.deepEqual(await view.table(t).get("2"), { id: "2", note: { n: 2 }, info: null });
      } finally {
        await view.close();
      }
      await store.close();
    });

    test("a value set through coalesce or when is stored at the column's version; an expression that makes no json is refused", async () => {
      const store = await seededNotes();
      const owner = store.object({ type: "notes" });
      const calls = [];
      const t = owner.table(notesAt(2, calls));
      await owner.tx(async (tx) => {
        await tx.put(t, { id: 3, n: 3, meta: { title: "x", tags: [] } });
        // Before, the values in the arms were stored bare, and read back
        // through migrate(value, 1).
        await tx.updateWhere(t, (e) => eq(e.id, 3), { meta: coalesce(value(null), value({ title: "c", tags: [] })) });
        await tx.update(t, 2, { meta: when(eq(col("n"), 2), value({ title: "two", tags: ["w"] }), col("meta")) });
      });
      calls.length = 0;
      assert.deepEqual((await t.get(3)).meta, { title: "c", tags: [] });
      assert.deepEqual((await t.get(2)).meta, { title: "two", tags: ["w"] });
      assert.deepEqual(calls, [], "read as stored at version 2, not migrated");
      await rejectsWith(owner.tx(async (tx) => { await tx.update(t, 2, { meta: add(col("n"), 1) }); }), "invalid/args", ["versioned json", '"add"']);
      await store.close();
    });

    test("an older value is migrated when read, with no commit, and stored in the new shape when its column is written", async () => {
      let store = await seededNotes();
      const head = store.head;
      const calls = [];
      const seen = [];
      const owner = store.object({ type: "notes" }, { adopt: (seq, ops) => seen.push(...ops) });
      const t = owner.table(notesAt(2, calls));
      assert.deepEqual(await t.get(1), { id: 1, n: 1, meta: { title: "a", tags: [] } });
      assert.deepEqual(calls, [1]);
      assert.equal(store.head, head);
      await owner.tx(async (tx) => {
        const row = await tx.get(t, 1);
        await tx.put(t, { ...row, n: 10 });
        await tx.update(t, 2, { n: 20 });
      });
      // The put wrote the envelope; the update left row 2's value as it was.
      assert.deepEqual(seen[0].row.meta, { $v: 2, $value: { title: "a", tags: [] } });
      calls.length = 0;
      assert.deepEqual(await t.get(1), { id: 1, n: 10, meta: { title: "a", tags: [] } });
      assert.deepEqual(calls, []);
      assert.deepEqual(await t.get(2), { id: 2, n: 20, meta: { title: "b", tags: [] } });
      assert.deepEqual(calls, [1]);
      await owner.tx(async (tx) => { await tx.update(t, 2, { meta: { title: "c", tags: ["x"] } }); });
      // Code of version 3 migrates a version-2 value from 2, and old values from 1.
      store = await kind.reopen(store);
      const calls3 = [];
      const t3 = store.object({ type: "notes" }).table(notesAt(3, calls3));
      assert.deepEqual(await rowsOf(t3), [
        { id: 1, n: 10, meta: { title: "a", tags: [], v3: true } },
        { id: 2, n: 20, meta: { title: "c", tags: ["X"], v3: true } },
      ]);
      assert.deepEqual(calls3, [2, 2]);
      await store.close();
    });

    test("a value newer than the code reads as schema/newer, for versioned and plain json columns alike, and changes nothing", async () => {
      let store = await seededNotes();
      const owner = store.object({ type: "notes" });
      const t3 = owner.table(notesAt(3));
      await owner.tx(async (tx) => { await tx.put(t3, { id: 3, n: 3, meta: { title: "z", tags: [] } }); });
      store = await kind.reopen(store);
      const head = store.head;
      const t2 = store.object({ type: "notes" }).table(notesAt(2));
      await rejectsWith(t2.get(3), "schema/newer", ["notes/docs", "meta", "version 3", "version 2"]);
      await rejectsWith(rowsOf(t2), "schema/newer", ["version 3"]);
      assert.deepEqual(await t2.get(1), { id: 1, n: 1, meta: { title: "a", tags: [] } });
      store = await kind.reopen(store);
      const plain = store.object({ type: "notes" }).table(Notes1);
      await rejectsWith(plain.get(3), "schema/newer", ["version 3", "version 1"]);
      assert.equal(store.head, head);
      await store.close();
    });

    test("a table's migration (update, rows, and an alter adding a versioned json column with a default) reads and writes versioned json values as tx does", async () => {
      let store = await seededNotes();  // meta at version 1: { name }
      const calls = [];
      const migrate = (old, from) => { calls.push(from); return { title: old.name, tags: [] }; };
      const meta = () => json({ version: 2, migrate });
      const extra = () => json({ version: 2, migrate: (old, from) => ({ migrated: from, old }), default: { d: 1 } });
      const V2 = defineTable("docs", {
        version: 2,
        columns: { id: int(), n: int(), meta: meta(), extra: extra() },
        key: ["id"],
        // rows sees meta as a read gives it (migrated from 1) and extra as
        // declared; what it writes is stored in the envelope.
        migrations: { 2: { alter: { add: { extra: extra() } }, rows: (r) => ({ meta: { ...r.meta, seen: r.extra.d } }) } },
      });
      const owner = store.object({ type: "notes" });
      const t = owner.table(V2);
      const expected = [
        { id: 1, n: 1, meta: { title: "a", tags: [], seen: 1 }, extra: { d: 1 } },
        { id: 2, n: 2, meta: { title: "b", tags: [], seen: 1 }, extra: { d: 1 } },
      ];
      assert.deepEqual(await rowsOf(t), expected);
      const { ops } = await store.log({ seq: store.head });
      assert.deepEqual(ops.find((o) => o.op === "update" && o.key?.[0] === 1).set.meta, { value: { $v: 2, $value: { title: "a", tags: [], seen: 1 } } });
      assert.deepEqual(ops.find((o) => o.op === "update" && o.where === null).set.extra, { value: { $v: 2, $value: { d: 1 } } });
      store = await kind.reopen(store);
      calls.length = 0;
      const again = store.object({ type: "notes" }).table(V2);
      assert.deepEqual(await rowsOf(again), expected);
      assert.deepEqual(calls, [], "nothing is migrated again: every value was stored at version 2");
      // A migration's update of a versioned json column writes the envelope.
      const V3 = defineTable("docs", {
        version: 3,
        columns: { id: int(), n: int(), meta: meta(), extra: extra() },
        key: ["id"],
        migrations: { 2: V2.migrations[2], 3: { update: { meta: { title: "reset", tags: [] } } } },
      });
      store = await kind.reopen(store);
      const t3 = store.object({ type: "notes" }).table(V3);
      assert.deepEqual(await t3.get(2), { id: 2, n: 2, meta: { title: "reset", tags: [] }, extra: { d: 1 } });
      assert.deepEqual(calls, []);
      await store.close();
    });

    // Before, the stored values of the column dropped were read through the
    // new column's migrate (here, n's ints as if they were meta's { name }).
    test("a column dropped and added back as a versioned json column, in a step with rows, starts from its default: its migrate never sees the dropped values", async () => {
      let store = await seededNotes();  // n: 1 and 2, ints
      const seen = [];
      const V2 = defineTable("docs", {
        version: 2,
        columns: { id: int(), n: json({ version: 2, migrate: (old, from) => { seen.push(old); return { was: old, from }; }, default: { fresh: true } }), meta: Notes1.columns.meta },
        key: ["id"],
        migrations: { 2: { alter: { drop: ["n"], add: { n: json({ version: 2, migrate: (old) => old, default: { fresh: true } }) } }, rows: (r) => ({ meta: { name: `${r.meta.name}!`, n: r.n } }) } },
      });
      const t = store.object({ type: "notes" }).table(V2);
      const expected = [
        { id: 1, n: { fresh: true }, meta: { name: "a!", n: { fresh: true } } },
        { id: 2, n: { fresh: true }, meta: { name: "b!", n: { fresh: true } } },
      ];
      assert.deepEqual(await rowsOf(t), expected);
      assert.deepEqual(seen, [], "no dropped value reached the new column's migrate");
      store = await kind.reopen(store);
      assert.deepEqual(await rowsOf(store.object({ type: "notes" }).table(V2)), expected);
      await store.close();
    });

    test("a migrate that throws fails the read with invalid/args naming the column", async () => {
      const store = await seededNotes();
      const Broken = defineTable("docs", { columns: { id: int(), n: int(), meta: json({ version: 2, migrate: () => { throw new Error("bad shape"); } }) }, key: ["id"] });
      const t = store.object({ type: "notes" }).table(Broken);
      await rejectsWith(t.get(1), "invalid/args", ["meta", "from version 1", "bad shape"]);
      await store.close();
    });
  });
}

describe("declaring migrations", () => {
  test("defineTable refuses a migration keyed outside 2 to the declared version, or with an unknown part", () => {
    throwsWith(() => defineTable("t", { version: 2, columns: { id: int() }, key: ["id"], migrations: { 3: { alter: {} } } }), "invalid/args", ["migrations.3"]);
    throwsWith(() => defineTable("t", { version: 2, columns: { id: int() }, key: ["id"], migrations: { 1: { alter: {} } } }), "invalid/args", ["migrations.1"]);
    throwsWith(() => defineTable("t", { version: 2, columns: { id: int() }, key: ["id"], migrations: { 2: { retype: {} } } }), "invalid/args", ["migrations.2.retype"]);
    throwsWith(() => defineTable("t", { version: 2, columns: { id: int() }, key: ["id"], migrations: [] }), "invalid/args", ["migrations"]);
    throwsWith(() => defineTable("t", { version: 2, columns: { id: int() }, key: ["id"], migrations: { 2: { rows: {} } } }), "invalid/args", ["migrations.2.rows", "function"]);
    throwsWith(() => json({ version: 0 }), "invalid/args", ["version"]);
    throwsWith(() => json({ version: 2 }), "invalid/args", ["migrate"]);
    // A default is held to a put's rule: a Date is not stored as its text,
    // and undefined is not a default.
    throwsWith(() => json({ default: new Date(0) }), "invalid/args", ["json().default", "Date"]);
    // Before, a str column took it and stored "1970-01-01T00:00:00.000Z".
    throwsWith(() => str({ default: new Date(0) }), "invalid/args", ["str().default", "Date"]);
    throwsWith(() => int({ default: new Date(0) }), "invalid/args", ["int().default", "Date"]);
    throwsWith(() => json({ default: undefined }), "invalid/args", ["default is undefined"]);
    throwsWith(() => str({ default: undefined }), "invalid/args", ["str()", "default is undefined"]);
    const given = { a: [1] };
    const copied = json({ default: given }).default;
    given.a.push(2);
    assert.deepEqual(copied, { a: [1] }, "the definition keeps its own copy");
  });

  test("a bad alter is refused when the owner opens the table, naming its version and part, and changes nothing", async () => {
    const store = await kinds.memory.reopen(await seeded(kinds.memory));
    const head = store.head;
    const notes = store.object({ type: "notes" });
    const Bad = defineTable("items", {
      version: 2,
      columns: { id: int(), title: str(), note: str().optional(), n: int(), size: int() },
      key: ["id"],
      migrations: { 2: { alter: { add: { size: int() } } } },
    });
    throwsWith(() => notes.table(Bad), "invalid/args", ["migrations.2.alter.add.size", "default"]);
    const DropKey = defineTable("items", { version: 2, columns: { title: str(), note: str().optional(), n: int() }, key: ["title"], migrations: { 2: { alter: { drop: ["id"] } } } });
    throwsWith(() => notes.table(DropKey), "invalid/args", ["\"id\"", "key"]);
    assert.equal(store.head, head);
    await rejectsWith(store.commit([{ op: "alter", table: "notes/items", version: 2, drop: ["nope"] }]), "invalid/args", ["nope"]);
    assert.equal(store.head, head);
    await store.close();
  });
});

// A store several versions behind runs each step's rows on the row as the
// earlier steps left it. A column an earlier step returned as undefined
// (kept) reached the later step as undefined, and was stored as what the
// later step made of it ("undefined!"). A key column returned unchanged
// (undefined, or a BigInt equal to the stored int) was taken for a move.
for (const [label, kind] of Object.entries(kinds)) {
  describe(`eager migrations several versions at once on ${label}`, () => {
    const cols = { id: int(), s: str(), n: int() };
    const step2 = { rows: (r) => ({ n: r.n + 1, s: r.n > 100 ? "big" : undefined }) };
    const step3 = { rows: (r) => ({ s: `${r.s}!` }) };
    const T1 = defineTable("t", { columns: cols, key: ["id"] });
    const T2 = defineTable("t", { version: 2, columns: cols, key: ["id"], migrations: { 2: step2 } });
    const T3 = defineTable("t", { version: 3, columns: cols, key: ["id"], migrations: { 2: step2, 3: step3 } });

    async function migrated(versions) {
      let store = await kind.open();
      await store.object({ type: "o" }).tx(async (tx) => {
        const t = store.object({ type: "o" }).table(T1);
        await tx.put(t, { id: 1, s: "hello", n: 1 });
        await tx.put(t, { id: 2, s: "large", n: 500 });
      });
      for (const def of versions) {
        store = await kind.reopen(store);
        store.object({ type: "o" }).table(def);
      }
      const rows = await rowsOf(store.object({ type: "o" }).table(T3), query(T3));
      await store.close();
      return rows;
    }

    test("a column an earlier step keeps (returned as undefined) reaches the later step with its value: v1 -> v3 equals v1 -> v2 -> v3", async () => {
      const expected = [{ id: 1, s: "hello!", n: 2 }, { id: 2, s: "big!", n: 501 }];
      assert.deepEqual(await migrated([T2, T3]), expected);
      assert.deepEqual(await migrated([T3]), expected);
    });

    test("a key column returned as undefined or as the BigInt of its int is no move: the rows are updated in place", async () => {
      for (const id of [(r) => undefined, (r) => BigInt(r.id)]) {
        const K2 = defineTable("k", {
          version: 2, columns: cols, key: ["id"],
          migrations: { 2: { update: { n: add(col("n"), 1) }, rows: (r) => ({ id: id(r), s: `${r.s}!` }) } },
        });
        let store = await kind.open();
        const K1 = defineTable("k", { columns: cols, key: ["id"] });
        await store.object({ type: "o" }).tx(async (tx) => { await tx.put(store.object({ type: "o" }).table(K1), { id: 1, s: "a", n: 1 }); });
        store = await kind.reopen(store);
        const k = store.object({ type: "o" }).table(K2);  // refused before: "moves the row of key [1] to [1]"
        assert.deepEqual(await k.get(1), { id: 1, s: "a!", n: 2 });
        const ops = (await store.outbox.read(store.head - 1, 1)).commits[0].ops.map((o) => o.op);
        assert.ok(!ops.includes("delete") && !ops.includes("put"), `updates, not a delete and a put: ${ops}`);
        await store.close();
      }
    });
  });
}
