// The OPFS figures (bench/opfs-figures.mjs drives this through opfs.html):
// onestore's opfs backend next to the official @sqlite.org/sqlite-wasm on
// its opfs-sahpool VFS doing the same SQL, in one dedicated Worker of one
// Chromium run. Posts { ok, rows: [...], env } or { ok: false, error }.
//
// Each figure is a mean over a batch (performance.now() is coarse outside a
// cross-origin-isolated page), the median of ROUNDS batches.
import { defineTable, deleteStore, int, json, openStore, str } from "../../js/browser.js";
import sqlite3InitModule from "../../node_modules/@sqlite.org/sqlite-wasm/dist/index.mjs";

const ROUNDS = 5;
const COMMITS = 100;   // one-row commits per batch
const GETS = 2000;     // gets by key per batch
const BULK = 25000;    // puts in one transaction
const PRELOAD = 1000;  // rows before the gets

const Edits = defineTable("edits", {
  columns: { id: str(), path: str(), entry: int(), at: int(), meta: json() },
  key: ["id"],
  indexes: { byPath: ["path", "at"] },
});
const ROW = (i) => ({ id: `e${String(i).padStart(7, "0")}`, path: `src/dir${i % 50}/file${i}.ts`, entry: i, at: i, meta: { lines: i % 7 } });
const IDS = Array.from({ length: PRELOAD }, (_, i) => ROW(i).id);  // the keys the gets read

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
async function perOp(fn, n) {
  const out = [];
  let k = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await fn(k++);
    out.push((performance.now() - t0) / n);
  }
  return median(out);
}
function perOpSync(fn, n) {
  const out = [];
  let k = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn(k++);
    out.push((performance.now() - t0) / n);
  }
  return median(out);
}

async function onestore(label, durability) {
  const name = `bench-${durability}`;
  await deleteStore({ backend: "opfs", name });
  const store = await openStore({ backend: "opfs", name, durability });
  const owner = store.object({ type: "file-history" });
  const edits = owner.table(Edits);
  await edits.count();
  let n = 0;
  await owner.tx(async (tx) => { for (let i = 0; i < PRELOAD; i++) await tx.put(edits, ROW(n++)); });
  const commit = await perOp(() => owner.tx(async (tx) => { await tx.put(edits, ROW(n++)); }), COMMITS);
  const get = await perOp((i) => edits.get(IDS[i % PRELOAD]), GETS);
  const t0 = performance.now();
  await owner.tx(async (tx) => { for (let i = 0; i < BULK; i++) await tx.put(edits, ROW(n++)); });
  const bulk = performance.now() - t0;
  await store.close();
  await deleteStore({ backend: "opfs", name });
  return { label, engine: "onestore", durability, commit, get, bulk };
}

let sqlite3;
let pool;
async function sahpool(label, pragmas, durability) {
  sqlite3 ??= await sqlite3InitModule();
  pool ??= await sqlite3.installOpfsSAHPoolVfs({ name: "bench-sahpool", directory: ".bench-sahpool", clearOnInit: true });
  const file = `/${label.replace(/[^a-z0-9]+/gi, "-")}.db`;
  const db = new pool.OpfsSAHPoolDb(file);
  try {
    if (pragmas) db.exec(pragmas);
    db.exec(`CREATE TABLE "file-history/edits" (id TEXT NOT NULL, path TEXT NOT NULL, entry INTEGER NOT NULL, at INTEGER NOT NULL, meta TEXT NOT NULL, PRIMARY KEY (id)) STRICT;
      CREATE INDEX "file-history/edits/byPath" ON "file-history/edits" (path, at, id);
      CREATE TABLE _meta (key TEXT PRIMARY KEY, value ANY) STRICT;
      CREATE TABLE _outbox (seq INTEGER PRIMARY KEY, record TEXT NOT NULL) STRICT;
      INSERT INTO _meta VALUES ('epoch', 1), ('head', 0);`);
    // The statements of one onestore commit: check the epoch, write the row,
    // the outbox record and the head.
    const epoch = db.prepare("SELECT value FROM _meta WHERE key = 'epoch'");
    const put = db.prepare('INSERT OR REPLACE INTO "file-history/edits" (id, path, entry, at, meta) VALUES (?, ?, ?, ?, ?)');
    const out = db.prepare("INSERT INTO _outbox (seq, record) VALUES (?, ?)");
    const head = db.prepare("INSERT OR REPLACE INTO _meta (key, value) VALUES ('head', ?)");
    const get = db.prepare('SELECT id, path, entry, at, meta FROM "file-history/edits" WHERE id = ?');
    let n = 0;
    let seq = 0;
    const write = (r) => put.bind([r.id, r.path, r.entry, r.at, JSON.stringify(r.meta)]).stepReset();
    const commitRows = (rows) => {
      db.exec("BEGIN IMMEDIATE");
      epoch.step(); epoch.reset();
      for (const r of rows) write(r);
      seq++;
      out.bind([seq, JSON.stringify({ seq, ops: rows.map((row) => ({ op: "put", table: "file-history/edits", row })) })]).stepReset();
      head.bind([seq]).stepReset();
      db.exec("COMMIT");
    };
    commitRows(Array.from({ length: PRELOAD }, () => ROW(n++)));
    const commit = perOpSync(() => commitRows([ROW(n++)]), COMMITS);
    const getOne = perOpSync((i) => {
      get.bind([IDS[i % PRELOAD]]);
      get.step();
      const row = get.get([]);
      get.reset();
      return row;
    }, GETS);
    const rows = Array.from({ length: BULK }, () => ROW(n++));
    const t0 = performance.now();
    commitRows(rows);
    const bulk = performance.now() - t0;
    for (const s of [epoch, put, out, head, get]) s.finalize();
    return { label, engine: "opfs-sahpool", durability, commit, get: getOne, bulk };
  } finally {
    db.close();
    pool.unlink(file);
  }
}

self.onmessage = async () => {
  try {
    const rows = [];
    rows.push(await onestore("onestore opfs (full)", "full"));
    rows.push(await onestore("onestore opfs (relaxed)", "relaxed"));
    rows.push(await sahpool("sahpool, defaults", "", "full"));
    rows.push(await sahpool("sahpool, exclusive lock", "PRAGMA locking_mode=EXCLUSIVE", "full"));
    rows.push(await sahpool("sahpool, exclusive + WAL, synchronous=NORMAL", "PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL", "relaxed"));
    self.postMessage({ ok: true, rows, env: { userAgent: navigator.userAgent, sqliteWasm: sqlite3.version.libVersion, hardwareConcurrency: navigator.hardwareConcurrency } });
  } catch (e) {
    self.postMessage({ ok: false, error: String(e?.stack ?? e) });
  }
};
