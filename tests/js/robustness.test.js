// Checks the defects a reliability probe found (issue 9, section 4), on the
// memory backend and on a sqlite file: a NUL in a path, a foreign SQLite
// database, BigInts inside json values read back, json objects with many
// keys, JSON nested too deep (cursors, values, queries, keys), an op with
// both a key and a where, and NaN and the infinities in messages. After
// each refusal the store keeps working.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { defineTable, deleteStore, int, json, num, openStore, query, str } from "../../js/index.js";
import { describe } from "../../js/schema.js";
import { loadNodeCore } from "../../js/loader-node.js";
import { rejectsWith, tempDir } from "./helpers.js";

const Items = defineTable("items", {
  columns: { id: str(), n: int().optional(), x: num().optional(), meta: json().optional() },
  key: ["id"],
});

const dir = tempDir("onestore-robust-");
const sqlite3 = "/usr/bin/sqlite3";
let files = 0;

const backends = {
  memory: () => openStore({ backend: "memory" }),
  "sqlite file": () => openStore({ backend: "sqlite", path: join(dir, `s${files++}.sqlite`) }),
};

async function openItems(open) {
  const store = await open();
  const owner = store.object({ type: "t" });
  return { store, owner, items: owner.table(Items) };
}

// Commits one row and reads it back: the store still works.
async function stillWorks({ owner, items }, id) {
  await owner.tx(async (tx) => { await tx.put(items, { id, n: 1 }); });
  assert.equal((await items.get(id)).n, 1, `${id} was committed after the refusal`);
}

// The wasm core without the package around it: what a runtime hands over.
async function rawCore(options) {
  const mod = await loadNodeCore();
  const core = new mod.Core();
  const answer = core.open(JSON.stringify(options));
  return { core, answer };
}

test("a sqlite path with a NUL is refused with invalid/args, and no file is created at the part before it", async () => {
  const sub = join(dir, "nul");
  const path = join(sub, "a\u0000b.sqlite");
  await rejectsWith(openStore({ backend: "sqlite", path }), "invalid/args", ["NUL", "a\\u0000b.sqlite"]);
  await rejectsWith(deleteStore({ backend: "sqlite", path }), "invalid/args", ["NUL"]);
  assert.ok(!existsSync(join(sub, "a")), "the file a was not created");
  // The core checks it too, for every runtime that hands it a path.
  const { core, answer } = await rawCore({ backend: "sqlite", path: join(dir, "c\u0000d.sqlite"), id: "x" });
  assert.match(answer, /^!invalid\/args .*NUL/);
  core.delete();
  assert.ok(!readdirSync(dir).includes("c"), "the file c was not created");
});

test("a SQLite database of another application is refused with invalid/args naming the path and its tables, and left untouched", async () => {
  const path = join(dir, "other-app.db");
  execFileSync(sqlite3, [path, "create table notes(id integer primary key, body text); insert into notes values (1, 'hi'); create view v as select body from notes;"]);
  const before = execFileSync(sqlite3, [path, ".schema"], { encoding: "utf8" });
  await rejectsWith(openStore({ backend: "sqlite", path }), "invalid/args", [path, '"notes"', "adoptForeign"]);
  assert.equal(execFileSync(sqlite3, [path, ".schema"], { encoding: "utf8" }), before, "no table was added");
  assert.equal(execFileSync(sqlite3, [path, "select body from notes"], { encoding: "utf8" }).trim(), "hi");

  // A database with only some of the store's table names is not a store either.
  const partial = join(dir, "partial.db");
  execFileSync(sqlite3, [partial, "create table _meta(k text, v text);"]);
  await rejectsWith(openStore({ backend: "sqlite", path: partial }), "invalid/args", [partial]);
});

test("a foreign database is adopted when the open says adoptForeign: true, and is a store from then on", async () => {
  const path = join(dir, "adopt.db");
  execFileSync(sqlite3, [path, "create table notes(id integer primary key, body text); insert into notes values (1, 'hi');"]);
  await rejectsWith(openStore({ backend: "sqlite", path, adoptForeign: "yes" }), "invalid/args", ["adoptForeign", '"yes"']);
  const adopting = await openStore({ backend: "sqlite", path, id: "adopted", adoptForeign: true });
  await adopting.close();
  const { store, owner, items } = await openItems(() => openStore({ backend: "sqlite", path }));
  assert.equal(store.id, "adopted");
  await stillWorks({ owner, items }, "r1");
  await store.close();
  assert.equal(execFileSync(sqlite3, [path, "select body from notes"], { encoding: "utf8" }).trim(), "hi", "the other tables are kept");
});

test("a new path, an empty file and an empty SQLite database each become a new store", async () => {
  const empty = join(dir, "empty.sqlite");
  writeFileSync(empty, "");
  const emptyDb = join(dir, "empty-db.sqlite");
  execFileSync(sqlite3, [emptyDb, "pragma user_version = 7; vacuum;"]);
  for (const path of [join(dir, "new", "s.sqlite"), empty, emptyDb]) {
    const s = await openItems(() => openStore({ backend: "sqlite", path }));
    await stillWorks(s, "r1");
    await s.store.close();
  }
});

for (const [name, open] of Object.entries(backends)) {
  test(`${name}: a BigInt inside a json value reads back exactly, from get, page, rows and tx.get`, async () => {
    const s = await openItems(open);
    const meta = { big: 2n ** 60n + 1n, list: [2n ** 63n - 1n, -(2n ** 63n), -(2n ** 53n), 2 ** 53 - 1, 1.5], s: "12345678901234567890", deep: { a: [{ b: 9007199254740993n }] } };
    await s.owner.tx(async (tx) => {
      await tx.put(s.items, { id: "b", meta });
      await tx.put(s.items, { id: "str", meta: "a string, not JSON text" });
      await tx.put(s.items, { id: "jsonish", meta: '{"big":1152921504606846977}' });
      assert.deepEqual((await tx.get(s.items, "b")).meta, meta, "tx.get of the transaction's own write");
    });
    assert.deepEqual((await s.items.get("b")).meta, meta);
    assert.equal((await s.items.get("b")).meta.big, 1152921504606846977n);
    assert.deepEqual((await s.items.page(query(Items), 10)).rows.find((r) => r.id === "b").meta, meta);
    for await (const row of s.items.rows()) if (row.id === "b") assert.deepEqual(row.meta, meta);
    assert.equal((await s.items.get("str")).meta, "a string, not JSON text");
    assert.equal((await s.items.get("jsonish")).meta, '{"big":1152921504606846977}', "a string stays a string");
    await s.owner.tx(async (tx) => {
      assert.deepEqual((await tx.get(s.items, "b")).meta, meta, "tx.get of a committed row");
    });
    await s.store.close();
  });

  test(`${name}: a json object of 100,000 keys is written and read back exactly, in its key order`, async () => {
    const s = await openItems(open);
    const ints = {};
    const mixed = {};
    for (let i = 0; i < 100000; i++) {
      const k = `k${(i * 7919) % 100000}`;  // not in sorted order
      ints[k] = i;
      mixed[k] = i % 2 ? i + 0.5 : `v${i}`;  // fractions and strings: read by the DOM path
    }
    await s.owner.tx(async (tx) => {
      await tx.put(s.items, { id: "ints", meta: ints });
      await tx.put(s.items, { id: "mixed", meta: mixed });
    });
    for (const [id, want] of [["ints", ints], ["mixed", mixed]]) {
      const got = (await s.items.get(id)).meta;
      assert.deepEqual(Object.keys(got), Object.keys(want), `${id}: the keys in their order`);
      assert.deepEqual(got, want);
    }
    const record = (await s.store.outbox.read(s.store.head - 1, 1)).commits[0];
    assert.deepEqual(Object.keys(record.ops[1].row.meta), Object.keys(mixed), "the outbox keeps the order too");
    await s.store.close();
  });

  test(`${name}: a cursor nested 10,000 levels deep is invalid/cursor, and the store keeps working`, async () => {
    const s = await openItems(open);
    await s.owner.tx(async (tx) => {
      for (let i = 0; i < 3; i++) await tx.put(s.items, { id: `r${i}` });
    });
    // A real cursor whose position value is replaced by an array nested
    // 10,000 levels deep: it passed every check of its shape, and describing
    // the bad value overflowed the wasm stack ("Maximum call stack size
    // exceeded", reported as invalid/args).
    const { next } = await s.items.page(query(Items), 1);
    const [where, order, direction] = JSON.parse(Buffer.from(next.slice(3), "base64url").toString());
    const nested = "[".repeat(10000) + "]".repeat(10000);
    const forged = `c1.${Buffer.from(`[${JSON.stringify(where)},${JSON.stringify(order)},${JSON.stringify(direction)},[${nested}]]`).toString("base64url")}`;
    await rejectsWith(s.items.page(query(Items), 1, undefined, { after: forged }), "invalid/cursor", ["is damaged"]);
    const deep = `c1.${Buffer.from(nested).toString("base64url")}`;
    await rejectsWith(s.items.page(query(Items), 1, undefined, { after: deep }), "invalid/cursor", ["is damaged"]);
    // A direction the store never writes (it was read as it came, and a
    // long one was quoted whole in the other-direction message).
    const position = JSON.parse(Buffer.from(next.slice(3), "base64url").toString())[3];
    for (const dir of ["asc ", "DESC", "x".repeat(100000)]) {
      const odd = `c1.${Buffer.from(JSON.stringify([where, order, dir, position])).toString("base64url")}`;
      const e = await rejectsWith(s.items.page(query(Items), 1, undefined, { after: odd }), "invalid/cursor", ["is damaged"]);
      assert.ok(e.message.length < 200, e.message.slice(0, 300));
    }
    assert.equal((await s.items.page(query(Items), 1, undefined, { after: next })).rows.length, 1, "the real cursor still reads");
    await stillWorks(s, "after-cursor");
    await s.store.close();
  });

  test(`${name}: a json value nested deeper than the limit is invalid/args, and the store keeps working`, async () => {
    const s = await openItems(open);
    let v = 1;
    for (let i = 0; i < 100000; i++) v = [v];
    await rejectsWith(s.owner.tx(async (tx) => { await tx.put(s.items, { id: "deep", meta: v }); }), "invalid/args", ["row.meta[0]", "deeper than 997"]);
    // 997 levels inside the row is the most a put can carry.
    const nested = (n) => { let a = 1; for (let i = 0; i < n; i++) a = [a]; return a; };
    const ok = nested(997);
    await s.owner.tx(async (tx) => { await tx.put(s.items, { id: "deepest", meta: ok }); });
    let back = (await s.items.get("deepest")).meta;
    for (let i = 0; i < 997; i++) back = back[0];
    assert.equal(back, 1);
    // One level more is refused by the package, naming the value (before,
    // 998 reached the core, whose message named no value).
    const head = s.store.head;
    await rejectsWith(s.owner.tx(async (tx) => { await tx.put(s.items, { id: "deeper", meta: nested(998) }); }), "invalid/args", ["tx.put(t/items): row.meta[0][0]", "deeper than 997 levels"]);
    // An update's set holds its value a level further down ({ value: v }
    // in the op): 996 levels, and 997 is refused naming the value.
    await s.owner.tx(async (tx) => { await tx.update(s.items, ["deepest"], { meta: nested(996) }); });
    await rejectsWith(s.owner.tx(async (tx) => { await tx.update(s.items, ["deepest"], { meta: nested(997) }); }), "invalid/args", ["update.set.meta.value", "deeper than 999 levels"]);
    assert.equal(s.store.head, head + 1, "only the 996-level update committed");
    assert.equal(await s.items.get("deeper"), undefined);
    await stillWorks(s, "after-deep");
    await s.store.close();
  });

  test(`${name}: an update or delete with both a key and a where is refused, and changes nothing`, async () => {
    const s = await openItems(open);
    await s.owner.tx(async (tx) => {
      await tx.put(s.items, { id: "a", n: 1 });
      await tx.put(s.items, { id: "b", n: 2 });
    });
    const head = s.store.head;
    const where = { eq: ["n", 2] };
    await rejectsWith(s.store.commit([{ op: "update", table: "t/items", key: ["a"], where, set: { n: { value: 5 } } }]), "invalid/args", ["key", "where", "not both"]);
    await rejectsWith(s.store.commit([{ op: "delete", table: "t/items", key: ["a"], where }]), "invalid/args", ["not both"]);
    assert.equal(s.store.head, head);
    assert.deepEqual((await s.items.page(query(Items), 10)).rows.map((r) => [r.id, r.n]), [["a", 1], ["b", 2]]);
    await stillWorks(s, "c");
    await s.store.close();
  });

  test(`${name}: messages print NaN, Infinity and -Infinity as they are, not as null`, async () => {
    const s = await openItems(open);
    const e1 = await rejectsWith(s.items.page(query(Items), NaN), "invalid/args", ["NaN"]);
    assert.ok(!e1.message.includes("null"), e1.message);
    await rejectsWith(s.store.outbox.read(0, Infinity), "invalid/args", ["Infinity"]);
    await rejectsWith(s.store.outbox.trim(-Infinity), "invalid/args", ["-Infinity"]);
    await rejectsWith(s.owner.tx(async (tx) => { await tx.put(s.items, { id: "x", x: -Infinity }); }), "invalid/args", ["-Infinity"]);
    await s.store.close();
  });
}

test("the core refuses any JSON text nested too deep with invalid/args, whatever the call, and goes on working", async () => {
  const { core, answer } = await rawCore({ backend: "memory", id: "x" });
  assert.ok(!answer.startsWith("!"), answer);
  const record = JSON.stringify({ op: "table", table: "t/items", version: 1, columns: { id: { type: "str" }, meta: { type: "json" } }, key: ["id"], indexes: {} });
  assert.ok(!core.commit(`[${record}]`, '{"owner":"t","at":1}').startsWith("!"));
  const deep = "[".repeat(100000) + "]".repeat(100000);
  const meta = '{"owner":"t","at":2}';
  for (const [what, call] of [
    ["commit", () => core.commit(`[{"op":"put","table":"t/items","row":{"id":"a","meta":${deep}}}]`, meta)],
    ["commit context", () => core.commit('[{"op":"put","table":"t/items","row":{"id":"a","meta":1}}]', `{"owner":"t","at":2,"actor":${deep}}`)],
    ["page", () => core.page("t/items", `{"where":${deep}}`, 10, "")],
    ["count", () => core.count("t/items", `{"where":${deep}}`)],
    ["get", () => core.get("t/items", deep)],
    ["declare", () => core.declare(`{"op":"table","table":"t/x","version":1,"columns":{"id":{"type":"str","default":${deep}}},"key":["id"]}`)],
  ]) {
    const a = call();
    assert.match(String(a), /^!invalid\/args .*nested deeper than 1000/, `${what}: ${String(a).slice(0, 200)}`);
  }
  assert.equal(core.commit('[{"op":"put","table":"t/items","row":{"id":"a","meta":[[1]]}}]', meta), '{"seq":2,"at":2,"counts":[1]}');
  assert.equal(core.get("t/items", '["a"]'), '["a",[[1]]]');
  core.close();
  core.delete();
});

test("describe prints NaN, the infinities and BigInts inside values as JS writes them", () => {
  assert.equal(describe(NaN), "NaN");
  assert.equal(describe({ at: NaN, b: [Infinity, -Infinity, 2n] }), '{"at":NaN,"b":[Infinity,-Infinity,2n]}');
  assert.equal(describe({ s: "\u0001NaN\u0001" }), JSON.stringify({ s: "\u0001NaN\u0001" }));
});
