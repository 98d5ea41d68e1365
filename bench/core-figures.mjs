// The first figures of docs/performance.md: the time of one commit, of 10k
// puts in one transaction and of page(100), on each backend, next to the
// same SQL run raw through onestore's own wasm SQLite (RawSqlite, no store
// logic). Not a test and not the benchmark proper (a later issue brings
// `npm run bench`); run it with `node bench/core-figures.mjs`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { defineTable, int, json, openStore, query, str } from "../js/index.js";
import { loadNodeCore } from "../js/loader-node.js";

const Edits = defineTable("edits", {
  columns: { id: str(), path: str(), entry: int(), at: int(), meta: json() },
  key: ["id"],
  indexes: { byPath: ["path", "at"] },
});
const ROW = (i) => ({ id: `e${String(i).padStart(6, "0")}`, path: `src/dir${i % 50}/file${i}.ts`, entry: i, at: i, meta: { lines: i % 7 } });

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
function time(fn, runs) {
  const out = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    fn(i);
    out.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(out);
}
async function timeAsync(fn, runs) {
  const out = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await fn(i);
    out.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(out);
}

const dir = mkdtempSync(join(tmpdir(), "onestore-figures-"));
const results = [];

async function measureStore(label, options) {
  const store = await openStore(options);
  const owner = store.object({ host: "session", type: "file-history" });
  const edits = owner.table(Edits);
  let n = 0;
  const commit = await timeAsync(() => owner.tx(async (tx) => { await tx.put(edits, ROW(n++)); }), 200);
  const bulk = await timeAsync(async () => {
    await owner.tx(async (tx) => { for (let i = 0; i < 10000; i++) await tx.put(edits, ROW(n++)); });
  }, 5);
  const q = query(Edits).orderBy((e) => e.path).orderBy((e) => e.at);  // the byPath index order
  const page = await timeAsync(() => edits.page(q, 100), 200);
  await store.close();
  results.push({ label, commit, bulk, page });
}

function measureRaw(label, path, synchronous) {
  return loadNodeCore().then((mod) => {
    const db = new mod.RawSqlite();
    const check = (r) => { if (typeof r === "string" && r.startsWith("!")) throw new Error(r); return r; };
    check(db.open(path));
    check(db.exec(`PRAGMA journal_mode=TRUNCATE; PRAGMA synchronous=${synchronous};
      CREATE TABLE "file-history/edits" (id TEXT NOT NULL, path TEXT NOT NULL, entry INTEGER NOT NULL, at INTEGER NOT NULL, meta TEXT NOT NULL, PRIMARY KEY (id)) STRICT;
      CREATE INDEX "file-history/edits/byPath" ON "file-history/edits" (path, at, id);
      CREATE TABLE _outbox (seq INTEGER PRIMARY KEY, record TEXT NOT NULL) STRICT;`));
    const put = 'INSERT OR REPLACE INTO "file-history/edits" (id, path, entry, at, meta) VALUES (?, ?, ?, ?, ?)';
    const out = "INSERT INTO _outbox (seq, record) VALUES (?, ?)";
    let n = 0, seq = 0;
    const params = (r) => JSON.stringify([r.id, r.path, r.entry, r.at, JSON.stringify(r.meta)]);
    const commit = time(() => {
      const r = ROW(n++);
      check(db.exec("BEGIN IMMEDIATE"));
      check(db.run(put, params(r)));
      check(db.run(out, JSON.stringify([++seq, JSON.stringify({ seq, ops: [{ op: "put", row: r }] })])));
      check(db.exec("COMMIT"));
    }, 200);
    const bulk = time(() => {
      check(db.exec("BEGIN IMMEDIATE"));
      const rows = [];
      for (let i = 0; i < 10000; i++) { const r = ROW(n++); rows.push(r); check(db.run(put, params(r))); }
      check(db.run(out, JSON.stringify([++seq, JSON.stringify({ seq, ops: rows.map((row) => ({ op: "put", row })) })])));
      check(db.exec("COMMIT"));
    }, 5);
    const page = time(() => JSON.parse(check(db.all('SELECT * FROM "file-history/edits" ORDER BY path, at, id LIMIT ?', "[100]"))), 200);
    db.close();
    results.push({ label, commit, bulk, page });
  });
}

await measureStore("onestore memory", { backend: "memory" });
await measureStore("onestore sqlite :memory:", { backend: "sqlite", path: ":memory:" });
await measureRaw("raw wasm SQLite :memory:", ":memory:", "FULL");
await measureStore("onestore sqlite file (full)", { backend: "sqlite", path: join(dir, "full.sqlite") });
await measureRaw("raw wasm SQLite file (FULL)", join(dir, "raw-full.sqlite"), "FULL");
await measureStore("onestore sqlite file (relaxed)", { backend: "sqlite", path: join(dir, "relaxed.sqlite"), durability: "relaxed" });
await measureRaw("raw wasm SQLite file (NORMAL)", join(dir, "raw-normal.sqlite"), "NORMAL");
rmSync(dir, { recursive: true, force: true });

const f = (ms) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);
console.log("| column | one commit (1 put) | 10k puts in one tx | page(100) |");
console.log("|---|---|---|---|");
for (const r of results) console.log(`| ${r.label} | ${f(r.commit)} | ${f(r.bulk)} | ${f(r.page)} |`);
