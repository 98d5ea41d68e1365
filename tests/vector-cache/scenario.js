// One scenario of the vector cache of nearest (docs/architecture.md, "The
// vector cache") for the runtimes whose tests run code elsewhere: workerd
// (tests/edge/vector-cache.test.js, a durable store) and Chromium
// (tests/browser/vector-cache.test.js, an opfs store). On the store opened
// with `options`: puts, a search (which builds the cache), key ops, a failed
// transaction, a bulk op; after each, the answers of nearest and those of a
// memory store without the cache given the same committed rows, and the
// cache's builds. Returns [{ what, got, want, builds }].

const DIMS = 8;

function vectorOf(seed) {
  let x = seed * 2654435761 >>> 0 || 1;
  const out = new Float32Array(DIMS);
  for (let i = 0; i < DIMS; i++) {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    out[i] = (x % 5) - 2;
  }
  return out;
}

/** Runs the scenario with the package root `api` on a store opened with `options`. */
export async function vectorCacheScenario(api, options) {
  const { defineTable, eq, openStore, str, vector } = api;
  const Docs = defineTable("docs", { columns: { id: str(), kind: str(), embedding: vector(DIMS).optional() }, key: ["id"], indexes: { byKind: ["kind"] } });
  const queries = [[vectorOf(1001), 7, "cosine"], [vectorOf(1002), 5, "l2"], [vectorOf(1003), 300, "dot"]];
  const shown = (hits) => hits.map((h) => [h.row.id, h.row.kind, h.distance, [...h.row.embedding]]);
  async function answers(t) {
    const out = [];
    for (const [q, k, metric] of queries) out.push(shown(await t.nearest((e) => e.embedding, q, k, { metric })));
    out.push(shown(await t.nearest((e) => e.embedding, queries[0][0], 4, { where: (e) => eq(e.kind, "k1") })));
    return out;
  }
  async function expected(t) {
    const rows = [];
    for await (const row of t.rows()) rows.push(row);
    const plain = await openStore({ backend: "memory", vectorCache: 0 });
    const owner = plain.object({ type: "notes" });
    const pt = owner.table(Docs);
    if (rows.length) await owner.tx(async (tx) => { for (const r of rows) await tx.put(pt, { id: r.id, kind: r.kind, embedding: r.embedding ?? null }); });
    const want = await answers(pt);
    await plain.close();
    return want;
  }
  const rowOf = (i) => ({ id: `r${String(i).padStart(3, "0")}`, kind: `k${i % 3}`, embedding: i % 11 === 0 ? null : vectorOf(i) });

  const store = await openStore(options);
  const checks = [];
  try {
    const owner = store.object({ type: "notes" });
    const docs = owner.table(Docs);
    const check = async (what) => checks.push({ what, got: await answers(docs), want: await expected(docs), builds: store.vectorCache().builds, bytes: store.vectorCache().bytes });
    await owner.tx(async (tx) => { for (let i = 0; i < 80; i++) await tx.put(docs, rowOf(i)); });
    await check("after the first puts");
    await owner.tx(async (tx) => {
      await tx.put(docs, { id: "r005", kind: "k1", embedding: queries[0][0] });
      await tx.update(docs, ["r007"], { embedding: queries[2][0] });
      await tx.update(docs, ["r008"], { embedding: null });
      await tx.delete(docs, ["r010"]);
    });
    await check("after key ops");
    try {
      await owner.tx(async (tx) => {
        await tx.put(docs, { id: "failed", kind: "k1", embedding: queries[0][0] });
        await tx.update(docs, ["no such row"], { kind: "k2" });
      });
      checks.push({ what: "the failing transaction committed", got: true, want: false });
    } catch (e) {
      if (e?.code !== "not_found") throw e;
    }
    await check("after a failed transaction");
    await owner.tx((tx) => tx.deleteWhere(docs, (e) => eq(e.kind, "k2")));
    await check("after a bulk op");
  } finally {
    await store.close();
  }
  return checks;
}
