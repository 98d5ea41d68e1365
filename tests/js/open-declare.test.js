// Checks the two shortcuts issue 13 took in an open's declare and first
// read (docs/performance.md, "Issue 13, the declare and the first read of an
// open") keep their behaviour: a definition's declaration text is kept per
// full name and only while nothing in it can change (a json default object
// and an object spread from a definition are the caller's), and the first read of a
// table found stored in the definition's shape decodes every column type
// as the stored table gives it.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { bool, defineTable, int, json, num, openStore, str, vector } from "../../js/index.js";

test("one definition opened by two owners declares two tables, each under its owner's name", async () => {
  const Items = defineTable("items", { columns: { id: str(), n: int() }, key: ["id"] });
  const store = await openStore({ backend: "memory" });
  const a = store.object({ type: "alpha" });
  const b = store.object({ type: "beta" });
  const ia = a.table(Items);
  const ib = b.table(Items);
  assert.equal(ia.name, "alpha/items");
  assert.equal(ib.name, "beta/items");
  await a.tx(async (tx) => { await tx.put(ia, { id: "x", n: 1 }); });
  await b.tx(async (tx) => { await tx.put(ib, { id: "x", n: 2 }); });
  assert.deepEqual(await ia.get("x"), { id: "x", n: 1 });
  assert.deepEqual(await ib.get("x"), { id: "x", n: 2 });
  // The second owner's declaration reached the core under its own name: the
  // outbox records both tables.
  const { commits } = await store.outbox.read(0, 10);
  const declared = commits.flatMap((c) => c.ops).filter((op) => op.op === "table").map((op) => op.table);
  assert.deepEqual(declared.sort(), ["alpha/items", "beta/items"]);
  await store.close();
});

test("a json default is the definition's own copy: the caller's object changed after defineTable changes nothing", async () => {
  const dflt = { tags: ["a"] };
  const Docs = defineTable("docs", { columns: { id: str(), meta: json({ default: dflt }) }, key: ["id"] });
  const first = await openStore({ backend: "memory" });
  const d1 = first.object({ type: "o" }).table(Docs);
  await first.object({ type: "o" }).tx(async (tx) => { await tx.put(d1, { id: "1" }); });
  assert.deepEqual((await d1.get("1")).meta, { tags: ["a"] });
  await first.close();

  dflt.tags.push("b");  // the caller's object, not the definition's
  const second = await openStore({ backend: "memory" });
  const d2 = second.object({ type: "o" }).table(Docs);
  await second.object({ type: "o" }).tx(async (tx) => { await tx.put(d2, { id: "1" }); });
  assert.deepEqual((await d2.get("1")).meta, { tags: ["a"] });
  const { commits } = await second.outbox.read(0, 10);
  const record = commits.flatMap((c) => c.ops).find((op) => op.op === "table");
  assert.deepEqual(record.columns.meta.default, { tags: ["a"] });
  await second.close();
});

test("an object spread from a definition and changed after a declare is declared as it is now", async () => {
  const Items = defineTable("items", { columns: { id: str(), n: int() }, key: ["id"] });
  const copy = { ...Items };  // passes for a definition; not frozen
  const first = await openStore({ backend: "memory" });
  const o1 = first.object({ type: "o" });
  const t1 = o1.table(copy);
  await o1.tx(async (tx) => { await tx.put(t1, { id: "a", n: 1 }); });
  await first.close();

  copy.columns = { ...Items.columns, note: str().optional() };
  const second = await openStore({ backend: "memory" });
  const o2 = second.object({ type: "o" });
  const t2 = o2.table(copy);
  await o2.tx(async (tx) => { await tx.put(t2, { id: "a", n: 1, note: "x" }); });
  assert.deepEqual(await t2.get("a"), { id: "a", n: 1, note: "x" });
  await second.close();
});

test("the first read after reopening a store file decodes every column type by the stored table", async () => {
  const All = defineTable("all", {
    columns: { id: str(), n: int(), big: int(), x: num(), ok: bool(), meta: json(), text: json(), v: vector(3), maybe: str().optional() },
    key: ["id"],
  });
  const row = { id: "r1", n: 42, big: 2n ** 60n, x: 1.5, ok: true, meta: { deep: [1, { two: 2 }], huge: 2n ** 62n }, text: "a json string", v: new Float32Array([1, 2, 3]), maybe: null };
  const dir = mkdtempSync(join(tmpdir(), "open-declare-"));
  try {
    const path = join(dir, "s.sqlite");
    let store = await openStore({ backend: "sqlite", path });
    let o = store.object({ type: "o" });
    let t = o.table(All);
    await o.tx(async (tx) => { await tx.put(t, row); });
    await store.close();
    for (let i = 0; i < 2; i++) {  // the second open's definition text is the kept one
      store = await openStore({ backend: "sqlite", path });
      o = store.object({ type: "o" });
      t = o.table(All);
      const got = await t.get("r1");
      assert.deepEqual({ ...got, v: [...got.v] }, { ...row, v: [1, 2, 3] });
      assert.ok(got.v instanceof Float32Array);
      assert.equal(typeof got.big, "bigint");
      assert.equal(typeof got.meta.huge, "bigint");
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
