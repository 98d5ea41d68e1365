// The Worker of bench/edge-figures.mjs: one Durable Object (class Bench,
// SQLite) that runs the figures' work on a durable store and times it inside
// workerd (performance.now(), whole batches: workerd's clock may be coarse).
// GET /run?commits=200&bulk=10000&bulkRuns=3&pages=200&fill=50000 -> JSON.

import { defineTable, int, json, openStore, query, str } from "../js/workerd.js";

const Edits = defineTable("edits", {
  columns: { id: str(), path: str(), entry: int(), at: int(), meta: json() },
  key: ["id"],
  indexes: { byPath: ["path", "at"] },
});
const ROW = (i) => ({ id: `e${String(i).padStart(6, "0")}`, path: `src/dir${i % 50}/file${i}.ts`, entry: i, at: i, meta: { lines: i % 7 } });

export class Bench {
  constructor(ctx) {
    this.ctx = ctx;
  }

  async fetch(request) {
    const p = new URL(request.url).searchParams;
    const num = (k, d) => Number(p.get(k) ?? d);
    const store = await openStore({ backend: "durable", storage: this.ctx.storage });
    const owner = store.object({ host: "session", type: "file-history" });
    const edits = owner.table(Edits);
    await edits.count();
    let n = 0;
    const out = {};

    const commits = num("commits", 200);
    let t0 = performance.now();
    for (let i = 0; i < commits; i++) await owner.tx(async (tx) => { await tx.put(edits, ROW(n++)); });
    out.commitMs = (performance.now() - t0) / commits;

    const bulk = num("bulk", 10000);
    const bulkRuns = num("bulkRuns", 3);
    t0 = performance.now();
    for (let r = 0; r < bulkRuns; r++) {
      await owner.tx(async (tx) => { for (let i = 0; i < bulk; i++) await tx.put(edits, ROW(n++)); });
    }
    out.bulkMs = (performance.now() - t0) / bulkRuns;

    // Fill to about `fill` rows in commits of 1000 (a commit's outbox record
    // is one SQLite value: at most 2 MB here).
    const fill = num("fill", 50000);
    while (n < fill) {
      await owner.tx(async (tx) => { for (let i = 0; i < 1000; i++) await tx.put(edits, ROW(n++)); });
    }
    const q = query(Edits).orderBy((e) => e.path).orderBy((e) => e.at);
    const pages = num("pages", 200);
    t0 = performance.now();
    for (let i = 0; i < pages; i++) await edits.page(q, 100);
    out.pageMs = (performance.now() - t0) / pages;

    t0 = performance.now();
    for (let i = 0; i < pages; i++) await edits.get([`e${String(i * 7).padStart(6, "0")}`]);
    out.getMs = (performance.now() - t0) / pages;
    out.rows = await edits.count();
    await store.close();
    return Response.json(out);
  }
}

export default {
  fetch(request, env) {
    return env.BENCH.get(env.BENCH.idFromName(new URL(request.url).searchParams.get("object") ?? "bench")).fetch(request);
  },
};
