// Values too large for JS or for the wasm heap are refused with `limit`, and
// the store keeps what it holds (docs/reliability.md, "A full wasm heap").
// Two arrays with one BigInt each, so the package writes them with its own
// encoder rather than JSON.stringify: before, that encoder kept a piece per
// item and V8 killed the process ("invalid size", which nothing can catch),
// and a json cell of tens of millions of items passed the core's heap check
// (a bound per byte and per op, not per json node): one of 70 million
// aborted the core in a probe, the memory
// store's rows with it. Sparse arrays, so that building them is instant.

import assert from "node:assert/strict";
import { test } from "node:test";

import { and, col, defineTable, eq, int, json, max, openStore, query, str, StoreError } from "../../js/index.js";

const Docs = defineTable("docs", { columns: { id: str(), body: json().optional() }, key: ["id"] });

function sparse(length) {
  const a = [];
  a.length = length;
  a[length - 1] = 1n;
  return a;
}

test("a json value with more items than the wasm heap can parse, or a JSON text longer than a JS string, is refused with limit; the memory store keeps its rows", async () => {
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "docs" });
  const docs = owner.table(Docs);
  await owner.tx(async (tx) => { await tx.put(docs, { id: "kept", body: { n: 1 } }); });
  const head = store.head;

  // 40 million items: 200 MB of text ("null,"), 40 million nodes in the core.
  await assert.rejects(owner.tx(async (tx) => { await tx.put(docs, { id: "wide", body: sparse(4e7) }); }),
    (e) => e instanceof StoreError && e.code === "limit" && /wasm heap/.test(e.message) && /smaller transactions/.test(e.message));
  // 110 million items: 550 million characters, beyond V8's longest string.
  await assert.rejects(owner.tx(async (tx) => { await tx.put(docs, { id: "long", body: sparse(1.1e8) }); }),
    (e) => e instanceof StoreError && e.code === "limit" && /row\.body|body/.test(e.message) && /longer than a JavaScript string/.test(e.message));

  // Plain JSON whose text is longer than a string may be: three strings of
  // 200 million characters.
  const big = "x".repeat(2e8);
  await assert.rejects(owner.tx(async (tx) => { await tx.put(docs, { id: "plain", body: [big, big, big] }); }),
    (e) => e instanceof StoreError && e.code === "limit");

  assert.equal(store.head, head);
  assert.deepEqual(await docs.get("kept"), { id: "kept", body: { n: 1 } });
  assert.equal(await docs.get("wide"), undefined);
  await owner.tx(async (tx) => { await tx.put(docs, { id: "after", body: [1, 2n ** 60n] }); });
  assert.deepEqual((await docs.get("after")).body, [1, 2n ** 60n]);
  assert.equal(await docs.count(), 2);
  await store.close();
});

// A key of 200 MB was taken, and a get by it then aborted the core (its
// copies did not fit in the wasm heap): the memory store was lost.
test("a put's str key value above 1 MiB of UTF-8 is refused with limit naming it, on memory and sqlite; 1 MiB is taken; a get by a longer key finds nothing", async () => {
  for (const options of [{ backend: "memory" }, { backend: "sqlite", path: ":memory:" }]) {
    const store = await openStore(options);
    const owner = store.object({ type: "docs" });
    const docs = owner.table(Docs);
    const most = "k".repeat(2 ** 20);
    await owner.tx(async (tx) => { await tx.put(docs, { id: most, body: 1 }); });
    const head = store.head;
    const wide = "é".repeat(600000);  // 600,000 characters, 1,200,000 bytes of UTF-8
    await assert.rejects(owner.tx(async (tx) => {
      await tx.put(docs, { id: "small", body: 2 });
      await tx.put(docs, { id: wide, body: 3 });
    }), (e) => e instanceof StoreError && e.code === "limit" && e.message.includes("ops[1].row.id") && e.message.includes("1200000 bytes"));
    await assert.rejects(owner.tx(async (tx) => { await tx.put(docs, { id: "x".repeat(200 * 2 ** 20) }); }),
      (e) => e instanceof StoreError && e.code === "limit", options.backend);
    assert.equal(store.head, head);
    assert.equal(await docs.get(wide), undefined);
    assert.equal(await docs.get("small"), undefined);
    assert.equal((await docs.get(most))?.body, 1);
    await owner.tx(async (tx) => { await tx.delete(docs, [wide]); });
    assert.equal(await docs.count(), 1);
    await store.close();
  }
});

test("a value SQLite cannot allocate (300 MB in the wasm heap) is refused with limit, and the store goes on committing", async () => {
  const Texts = defineTable("texts", { columns: { id: str(), text: str() }, key: ["id"] });
  const store = await openStore({ backend: "sqlite", path: ":memory:" });
  const owner = store.object({ type: "app" });
  const texts = owner.table(Texts);
  // Before, SQLite's "out of memory" was storage_failed, a code that says
  // the store stopped, while it went on.
  await assert.rejects(owner.tx(async (tx) => { await tx.put(texts, { id: "big", text: "x".repeat(300 * 2 ** 20) }); }),
    (e) => e instanceof StoreError && e.code === "limit" && /out of memory|wasm heap/.test(e.message) && /app\/texts|transaction's ops/.test(e.message));
  await owner.tx(async (tx) => { await tx.put(texts, { id: "small", text: "y" }); });
  assert.equal(await texts.count(), 1);
  await store.close();
});

test("a get or tx.get by a key whose text is longer than any key can be (300 MB, of any shape) is refused with invalid/args before it is parsed; the memory store keeps its rows", async () => {
  // Before, the parse of such a key (an object holding the string) took
  // more of the heap than the call's room check keeps, and aborted the core.
  const store = await openStore({ backend: "memory" });
  try {
    const owner = store.object({ type: "docs" });
    const docs = owner.table(Docs);
    await owner.tx(async (tx) => { await tx.put(docs, { id: "kept", body: { n: 1 } }); });
    const big = "z".repeat(300 * 2 ** 20);
    const refused = (e) => e instanceof StoreError && e.code === "invalid/args" &&
      /key: \d{9} bytes of JSON, longer than any key of table "docs\/docs" can be$/.test(e.message);
    for (const key of [{ id: big }, [big], big]) {
      await assert.rejects(() => docs.get(key), refused);
    }
    // As any failed tx.get, it fails its transaction: nothing of it lands.
    await assert.rejects(owner.tx(async (tx) => {
      await tx.put(docs, { id: "lost", body: 3 });
      await tx.get(docs, { id: big });
    }), refused);
    assert.equal(await docs.get("lost"), undefined);
    await owner.tx(async (tx) => { await tx.put(docs, { id: "after", body: 2 }); });
    assert.deepEqual((await docs.get("kept")).body, { n: 1 });
    assert.equal((await docs.get("after")).body, 2);
    // A key of the right shape up to that size is read as before: no row.
    assert.equal(await docs.get("k".repeat(3 * 2 ** 20)), undefined);
  } finally {
    await store.close();
  }
});

// A value built with shared references is small in memory and huge written
// out (JSON writes a shared object each time it is reached). Before: the
// package's copy expanded a json value or a set expression in full, and
// the Node process ran out of memory (`e = max(e, e)` 26 times); a where of
// and()s sharing their operands (24 levels, 400 MB of text) reached the
// core, whose parse aborted it, a memory store's rows with it.
test("values built with shared references: written out in full when their text fits, refused with limit when not; a where of shared and()s too; the memory store keeps its rows", async () => {
  const store = await openStore({ backend: "memory" });
  const owner = store.object({ type: "docs" });
  const Items = defineTable("items", { columns: { id: str(), n: int().optional(), body: json().optional() }, key: ["id"] });
  const items = owner.table(Items);
  await owner.tx(async (tx) => { await tx.put(items, { id: "kept", n: 1, body: { a: 1 } }); });
  const head = store.head;

  // 2^22 leaves, 16 MB written out: taken, and read back as the whole tree.
  let wide = 0;
  for (let i = 0; i < 22; i++) wide = [wide, wide];
  await owner.tx(async (tx) => { await tx.put(items, { id: "wide", body: wide }); });
  const read = (await items.get("wide")).body;
  assert.equal(JSON.stringify(read), JSON.stringify(wide));
  assert.notEqual(read[0], read[1]);  // a tree, not the caller's shared objects

  const isLimit = (e) => e instanceof StoreError && e.code === "limit";
  // 2^30 leaves: refused before it is written out.
  let deep = { n: 1 };
  for (let i = 0; i < 30; i++) deep = { a: deep, b: deep };
  await assert.rejects(owner.tx(async (tx) => { await tx.put(items, { id: "deep", body: deep }); }),
    (e) => isLimit(e) && /row\.body/.test(e.message) && /shared references/.test(e.message));
  // A set expression of 2^30 column references.
  let e = col("n");
  for (let i = 0; i < 30; i++) e = max(e, e);
  await assert.rejects(owner.tx(async (tx) => { await tx.update(items, ["kept"], { n: e }); }),
    (err) => isLimit(err) && /set\.n/.test(err.message));
  // A where of 2^24 comparisons: its 400 MB of text reach the core, which
  // refuses to parse what the heap could not hold; of 2^40, refused in JS.
  for (const levels of [24, 40]) {
    let p = eq(col("n"), 1);
    for (let i = 0; i < levels; i++) p = and(p, p);
    await assert.rejects(items.page(query(Items).where(() => p), 10), isLimit);
  }

  assert.equal(store.head, head + 1);
  assert.deepEqual(await items.get("kept"), { id: "kept", n: 1, body: { a: 1 } });
  assert.equal(await items.count(), 2);
  await owner.tx(async (tx) => { await tx.update(items, ["kept"], { n: max(col("n"), 5) }); });
  assert.equal((await items.get("kept")).n, 5);
  await store.close();
});
