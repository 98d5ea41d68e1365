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

    // The anchors: the same work as raw sql.exec calls from JS, no store (a
    // table of the same shape in the same object).
    const sql = this.ctx.storage.sql;
    sql.exec('CREATE TABLE IF NOT EXISTS raw_edits (id TEXT PRIMARY KEY, path TEXT NOT NULL, entry INTEGER NOT NULL, at INTEGER NOT NULL, meta TEXT NOT NULL) STRICT, WITHOUT ROWID');
    sql.exec('CREATE INDEX IF NOT EXISTS raw_by_path ON raw_edits (path, at)');
    sql.exec('CREATE TABLE IF NOT EXISTS raw_outbox (seq INTEGER PRIMARY KEY, record TEXT NOT NULL) STRICT');
    let seq = 0;
    let m = 0;
    const put = (r) => sql.exec("INSERT OR REPLACE INTO raw_edits VALUES (?, ?, ?, ?, ?)", r.id, r.path, r.entry, r.at, JSON.stringify(r.meta));
    t0 = performance.now();
    for (let i = 0; i < commits; i++) {
      this.ctx.storage.transactionSync(() => {
        const r = ROW(m++);
        put(r);
        sql.exec("INSERT INTO raw_outbox VALUES (?, ?)", ++seq, JSON.stringify({ seq, ops: [{ op: "put", row: r }] }));
      });
    }
    out.rawCommitMs = (performance.now() - t0) / commits;
    t0 = performance.now();
    for (let r = 0; r < bulkRuns; r++) {
      this.ctx.storage.transactionSync(() => {
        const rows = [];
        for (let i = 0; i < bulk; i++) { const row = ROW(m++); rows.push(row); put(row); }
        sql.exec("INSERT INTO raw_outbox VALUES (?, ?)", ++seq, JSON.stringify({ seq, ops: rows.map((row) => ({ op: "put", row })) }));
      });
    }
    out.rawBulkMs = (performance.now() - t0) / bulkRuns;
    while (m < fill) {
      this.ctx.storage.transactionSync(() => { for (let i = 0; i < 1000; i++) put(ROW(m++)); });
    }
    t0 = performance.now();
    for (let i = 0; i < pages; i++) sql.exec("SELECT * FROM raw_edits ORDER BY path, at, id LIMIT ?", 100).toArray();
    out.rawPageMs = (performance.now() - t0) / pages;
    t0 = performance.now();
    for (let i = 0; i < pages; i++) sql.exec("SELECT * FROM raw_edits WHERE id = ?", `e${String(i * 7).padStart(6, "0")}`).toArray();
    out.rawGetMs = (performance.now() - t0) / pages;
    return Response.json(out);
  }
}

export default {
  fetch(request, env) {
    return env.BENCH.get(env.BENCH.idFromName(new URL(request.url).searchParams.get("object") ?? "bench")).fetch(request);
  },
};
