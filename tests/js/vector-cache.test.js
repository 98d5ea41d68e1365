// Checks the vector cache of nearest (docs/architecture.md, "The vector
// cache") through the public package in Node, on a sqlite file (where it is
// on by default) and on memory with `vectorCache` set: after every kind of
// change (puts, updates and deletes by key, a failed transaction, bulk ops, a
// migration's alter, a snapshot's restore, an archive's import, a replica's batches)
// nearest answers exactly what a store without the cache answers over the
// same committed rows, and store.vectorCache() shows the searches were
// answered from the cache (no build after key ops) or that it was built again
// (after bulk ops). Also: vectorCache: 0 turns it off, a bad value is refused.

import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";

import { defineTable, eq, importStore, openReplica, openStore, str, vector, ErrorCodes } from "../../js/index.js";
import { rejectsWith, tempDir } from "./helpers.js";

const columns = { id: str(), kind: str(), embedding: vector(8).optional() };
const Docs = defineTable("docs", { columns, key: ["id"], indexes: { byKind: ["kind"] } });
let dir;
let counter = 0;
function fileOptions() {
  dir ??= tempDir("onestore-vector-cache-");
  return { backend: "sqlite", path: join(dir, `c${counter++}.sqlite`) };
}

const backends = [
  ["a sqlite file (the cache's default)", fileOptions],
  ["memory with vectorCache set", () => ({ backend: "memory", vectorCache: 1 << 24 })],
];

/** A deterministic pseudo-random Float32Array (xorshift); few values, so ties happen. */
function vectorOf(seed) {
  let x = seed * 2654435761 >>> 0 || 1;
  const out = new Float32Array(8);
  for (let i = 0; i < 8; i++) {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    out[i] = (x % 5) - 2;
  }
  return out;
}

const queries = [
  [vectorOf(1001), 7, "cosine"],
  [vectorOf(1002), 5, "l2"],
  [vectorOf(1003), 300, "dot"],
];

function shown(hits) {
  return hits.map((h) => [h.row.id, h.row.kind, h.distance, [...h.row.embedding]]);
}

async function answers(table) {
  const out = [];
  for (const [q, k, metric] of queries) out.push(shown(await table.nearest((e) => e.embedding, q, k, { metric })));
  out.push(shown(await table.nearest((e) => e.embedding, queries[0][0], 4, { where: (e) => eq(e.kind, "k1") })));
  return out;
}

// What a store without the cache answers over the same committed rows.
async function expected(table) {
  const rows = [];
  for await (const row of table.rows()) rows.push(row);
  const plain = await openStore({ backend: "memory", vectorCache: 0 });
  const t = plain.object({ type: "notes" }).table(Docs);
  if (rows.length) await plain.object({ type: "notes" }).tx(async (tx) => { for (const r of rows) await tx.put(t, { id: r.id, kind: r.kind, embedding: r.embedding ?? null }); });
  const want = await answers(t);
  await plain.close();
  return want;
}

async function check(store, table, what) {
  assert.deepEqual(await answers(table), await expected(table), what);
  return store.vectorCache().builds;
}

function rowOf(i) {
  return { id: `r${String(i).padStart(3, "0")}`, kind: `k${i % 3}`, embedding: i % 11 === 0 ? null : vectorOf(i) };
}

describe("the vector cache of nearest", () => {
  for (const [name, options] of backends) {
    test(`on ${name}, searches answer as without the cache across key ops, a failed transaction, bulk ops and an alter`, async () => {
      const store = await openStore(options());
      const owner = store.object({ type: "notes" });
      const docs = owner.table(Docs);
      await owner.tx(async (tx) => { for (let i = 0; i < 120; i++) await tx.put(docs, rowOf(i)); });
      let builds = await check(store, docs, "after the first puts");
      assert.equal(builds, 1);
      assert.ok(store.vectorCache().bytes >= 100 * 32, JSON.stringify(store.vectorCache()));

      // Key ops: answered from the cache, which the commits kept.
      await owner.tx(async (tx) => {
        await tx.put(docs, { id: "r005", kind: "k1", embedding: queries[0][0] });  // now the nearest
        await tx.put(docs, { id: "new", kind: "k1", embedding: queries[1][0] });
        await tx.update(docs, ["r007"], { embedding: queries[2][0] });
        await tx.update(docs, ["r008"], { embedding: null });
        await tx.update(docs, ["r011"], { embedding: vectorOf(5) });  // was null
        await tx.delete(docs, ["r010"]);
        await tx.put(docs, { id: "gone", kind: "k0", embedding: vectorOf(9) });
        await tx.delete(docs, ["gone"]);
      });
      assert.equal(await check(store, docs, "after key ops"), builds);

      // A transaction that fails at its commit leaves the cache as it was:
      // its put would have been the nearest row.
      await rejectsWith(owner.tx(async (tx) => {
        await tx.put(docs, { id: "failed", kind: "k1", embedding: queries[0][0] });
        await tx.delete(docs, ["r005"]);
        await tx.update(docs, ["no such row"], { kind: "k2" });
      }), ErrorCodes.NotFound);
      assert.equal(await check(store, docs, "after a failed transaction"), builds);
      assert.ok(!(await docs.nearest((e) => e.embedding, queries[0][0], 3)).some((h) => h.row.id === "failed"));

      // Bulk ops drop the table's cache; the next search builds it again.
      await owner.tx(async (tx) => {
        await tx.deleteWhere(docs, (e) => eq(e.kind, "k2"));
        await tx.updateWhere(docs, (e) => eq(e.kind, "k0"), { embedding: vectorOf(77) });
      });
      assert.equal(await check(store, docs, "after bulk ops"), ++builds);
      await owner.tx((tx) => tx.put(docs, rowOf(500)));
      assert.equal(await check(store, docs, "after a put that follows a rebuild"), builds);

      // A migration's alter (the op a migration commits; a handle of the
      // new version cannot open beside this one) drops it too.
      await store.commit([{ op: "alter", table: "notes/docs", version: 2, add: { note: { type: "str", default: "-" } } }]);
      assert.equal(await check(store, docs, "after an alter"), ++builds);
      await owner.tx((tx) => tx.put(docs, rowOf(501)));
      assert.equal(await check(store, docs, "after a put that follows the alter"), builds);
      await store.close();
    });

    test(`on ${name}, a snapshot's restore, an archive's import and a replica's batches leave nearest answering as without the cache`, async () => {
      const store = await openStore(options());
      const owner = store.object({ type: "notes" });
      const docs = owner.table(Docs);
      await owner.tx(async (tx) => { for (let i = 0; i < 60; i++) await tx.put(docs, rowOf(i)); });
      const { id } = await store.snapshot();
      await check(store, docs, "before the changes");
      await owner.tx(async (tx) => {
        for (let i = 0; i < 60; i += 2) await tx.delete(docs, [rowOf(i).id]);
        await tx.put(docs, { id: "late", kind: "k1", embedding: queries[0][0] });
      });
      await check(store, docs, "after the changes");
      await store.restore(id);
      await check(store, docs, "after the restore");
      assert.ok(!(await docs.nearest((e) => e.embedding, queries[0][0], 3)).some((h) => h.row.id === "late"));

      const imported = await importStore(store.export(), options());
      const owner2 = imported.object({ type: "notes" });
      const docs2 = owner2.table(Docs);
      const builds = await check(imported, docs2, "after the import");
      await owner2.tx((tx) => tx.update(docs2, ["r001"], { embedding: queries[1][0] }));
      assert.equal(await check(imported, docs2, "after a commit on the imported store"), builds);

      const replica = await openReplica(options());
      await replica.applyBatch(await store.outbox.read(0, 1));
      const rt = () => replica.table("notes/docs");
      await rt().nearest((e) => e.embedding, queries[0][0], 3);
      await replica.applyBatch(await store.outbox.read(replica.head, 1000));
      assert.deepEqual(await answers(rt()), await answers(docs));
      await Promise.all([store.close(), imported.close(), replica.close()]);
    });
  }

  test("vectorCache: 0 turns the cache off; a value that is not a number of bytes is refused", async () => {
    const store = await openStore({ ...fileOptions(), vectorCache: 0 });
    const owner = store.object({ type: "notes" });
    const docs = owner.table(Docs);
    await owner.tx((tx) => tx.put(docs, rowOf(1)));
    await docs.nearest((e) => e.embedding, queries[0][0], 3);
    assert.deepEqual(store.vectorCache(), { budget: 0, bytes: 0, builds: 0 });
    await store.close();
    const mem = await openStore({ backend: "memory" });
    assert.equal(mem.vectorCache().budget, 0);  // memory reads its rows in place
    await mem.close();
    for (const bad of [-1, 1.5, "big"]) {
      await rejectsWith(openStore({ ...fileOptions(), vectorCache: bad }), ErrorCodes.InvalidArgs, ["vectorCache"]);
    }
  });
});
