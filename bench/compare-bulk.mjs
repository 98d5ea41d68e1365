// Two checkouts in one process, interleaved: one transaction of N bench rows
// put on a fresh memory store (after a first one of 1000), the two checkouts
// alternating round by round; prints the medians and their ratio.
//
//   node --expose-gc bench/compare-bulk.mjs <checkout A> <checkout B> [N=25000] [rounds=7] [memory|file|grow]
//
// "file": a fresh SQLite file store (backend "sqlite") in a temporary directory each time
// (durability "full", as the bench's Node file workload). "grow": one memory
// store per checkout (and one better-sqlite3 ":memory:" database) for the
// whole run, each round's transaction adding N rows to the ones before it,
// as an app's store grows: its rows land in memory the process has not
// touched before (the minor page faults of each transaction are printed).
//
// With a third checkout-independent column, better-sqlite3 doing the same
// work (":memory:" for memory, a WAL file with synchronous=FULL for file):
// BEGIN IMMEDIATE, one prepared INSERT OR REPLACE per row, the outbox
// record (the ops' JSON) inserted into _outbox, COMMIT; a STRICT table of
// the same columns, an index on (path, at), and _outbox (written here, not
// read from a store's file as the bench's anchors are).
//
// Each store column's CPU time is also split into the put loop (the tx
// callback) and the commit after it (the core's commit step, steadier on a
// loaded machine than the whole).
//
// The timed transaction follows a 1,000-put one and a gc() in the same
// store, unlike the bench's, which is a store's first big transaction after
// 300 one-put commits: bench/bulk-wall.mjs runs the bench's own columns.
//
// Figures only (no assertion); see docs/performance.md, "Issue 13, a second
// step", "Issue 13, a fourth step", "Issue 13, a fifth step" and "Issue 13,
// a seventh step".
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [a, b] = [process.argv[2], process.argv[3]].map((r) => (r ? pathToFileURL(resolve(r)).href : ""));
if (!a || !b) {
  console.error("usage: node --expose-gc bench/compare-bulk.mjs <checkout A> <checkout B> [N] [rounds] [memory|file|grow]");
  process.exit(2);
}
const roots = { main: a, mine: b };
const N = +(process.argv[4] || 25000), R = +(process.argv[5] || 7);
const backend = process.argv[6] || "memory";
const grow = backend === "grow";
const faults = () => process.resourceUsage().minorPageFault;
const apis = {};
for (const [k, r] of Object.entries(roots)) apis[k] = await import(`${r}/js/index.js`);
const keyOf = (i) => `e${String(i).padStart(7, "0")}`;
const ROW = (i) => ({ id: keyOf(i), path: `src/dir${i % 10}/file${i}.ts`, entry: i, at: i, meta: { lines: i % 7 } });
import { betterSqlite } from "./lib/drivers.mjs";

// The process's CPU time (user + system, all its threads) since `c0`, in ms:
// on a loaded machine far steadier than the wall time, which counts the
// time other processes held the cores.
const cpuMs = (c0) => { const d = process.cpuUsage(c0); return (d.user + d.system) / 1000; };
const T = '"bench/edits"';
// "grow": each column's next transaction on its kept store, by the column's
// name ("main", "mine", "anchor"); they stay open until the process ends.
const kept = new Map();
async function anchor() {
  if (kept.has("anchor")) return kept.get("anchor")();
  const dir = backend === "file" ? mkdtempSync(join(tmpdir(), "compare-bulk-")) : null;
  const db = betterSqlite(dir ? join(dir, "b.sqlite") : ":memory:");
  if (dir) db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;");
  db.exec(`CREATE TABLE ${T} (id TEXT NOT NULL PRIMARY KEY, path TEXT NOT NULL, entry INTEGER NOT NULL, at INTEGER NOT NULL, meta TEXT NOT NULL) STRICT;` +
    `CREATE INDEX "bench/edits.byPath" ON ${T} (path, at); CREATE TABLE _outbox (seq INTEGER PRIMARY KEY, record TEXT NOT NULL) STRICT;`);
  const PUT = `INSERT OR REPLACE INTO ${T} (id, path, entry, at, meta) VALUES (?, ?, ?, ?, ?)`;
  let seq = 0;
  const tx = (from, to) => {
    db.exec("BEGIN IMMEDIATE");
    const ops = [];
    for (let i = from; i < to; i++) {
      const r = ROW(i);
      db.run(PUT, [r.id, r.path, r.entry, r.at, JSON.stringify(r.meta)]);
      ops.push({ op: "put", table: "bench/edits", row: r });
    }
    seq++;
    db.run("INSERT INTO _outbox (seq, record) VALUES (?, ?)", [seq, JSON.stringify({ seq, from: seq - 1, at: Date.now(), owner: "bench", ops })]);
    db.exec("COMMIT");
  };
  tx(0, 1000);
  let next = 1000;
  const timed = () => {
    globalThis.gc?.();
    const f0 = faults();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    tx(next, next + N);
    next += N;
    const ms = performance.now() - t0;
    return [ms, ms, cpuMs(c0), 0, faults() - f0];
  };
  if (grow) {
    kept.set("anchor", timed);
    return timed();
  }
  const out = timed();
  db.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  return out;
}

async function once(api, name) {
  if (kept.has(name)) return kept.get(name)();
  const { openStore, defineTable, str, int, json } = api;
  const edits = defineTable("edits", { columns: { id: str(), path: str(), entry: int(), at: int(), meta: json() }, key: ["id"], indexes: { byPath: ["path", "at"] } });
  const dir = backend === "file" ? mkdtempSync(join(tmpdir(), "compare-bulk-")) : null;
  const store = await openStore(dir ? { backend: "sqlite", path: join(dir, "s.sqlite"), durability: "full" } : { backend: "memory" });
  const o = store.object({ type: "bench" });
  const t = o.table(edits);
  await t.get("none");
  await o.tx(async (tx) => { for (let i = 0; i < 1000; i++) await tx.put(t, ROW(i)); });
  let next = 1000;
  const timed = async () => {
    globalThis.gc?.();
    const f0 = faults();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    let tp = 0, cpuPut = 0;
    await o.tx(async (tx) => { for (let i = next; i < next + N; i++) await tx.put(t, ROW(i)); tp = performance.now() - t0; cpuPut = cpuMs(c0); });
    next += N;
    const ms = performance.now() - t0;
    const cpu = cpuMs(c0);
    return [ms, tp, cpu, cpu - cpuPut, faults() - f0];
  };
  if (grow) {
    kept.set(name, timed);
    return timed();
  }
  const out = await timed();
  await store.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  return out;
}
const res = { main: [], mine: [], anchor: [] };
const keys = ["main", "mine", "anchor"];
for (let r = 0; r < R; r++) {
  const order = keys.map((_, i) => keys[(i + r) % keys.length]);  // rotated each round
  for (const k of order) res[k].push(k === "anchor" ? await anchor() : await once(apis[k], k));
}
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[(s.length - 1) >> 1]; };
for (const k of ["main", "mine"]) {
  const tot = med(res[k].map((x) => x[0])), put = med(res[k].map((x) => x[1]));
  console.log(`${k === "main" ? "A" : "B"}: ${backend}, ${N} puts ${tot.toFixed(1)} ms median (${(N / tot * 1000).toFixed(0)}/s), tx.put part ${put.toFixed(1)} ms, commit part ${(tot - put).toFixed(1)} ms; runs ${res[k].map((x) => x[0].toFixed(0)).join(" ")}`);
}
for (const k of keys) {
  const cpu = med(res[k].map((x) => x[2]));
  console.log(`${k === "main" ? "A" : k === "mine" ? "B" : "better-sqlite3"}: CPU time ${cpu.toFixed(1)} ms median (${(N / cpu * 1000).toFixed(0)}/s); runs ${res[k].map((x) => x[2].toFixed(0)).join(" ")}`);
}
const cpuOf = (k) => med(res[k].map((x) => x[2]));
console.log(`CPU time ratios: B/A ${(cpuOf("mine") / cpuOf("main")).toFixed(2)}; A/better-sqlite3 ${(cpuOf("main") / cpuOf("anchor")).toFixed(2)}, B/better-sqlite3 ${(cpuOf("mine") / cpuOf("anchor")).toFixed(2)}`);
const anchorMs = med(res.anchor.map((x) => x[0]));
console.log(`better-sqlite3 (${backend === "file" ? "WAL, synchronous=FULL" : ":memory:"}${grow ? ", one database for the run" : ""}): ${anchorMs.toFixed(1)} ms median (${(N / anchorMs * 1000).toFixed(0)}/s); runs ${res.anchor.map((x) => x[0].toFixed(0)).join(" ")}`);
console.log(`ratio B/A: ${(med(res.mine.map((x) => x[0])) / med(res.main.map((x) => x[0]))).toFixed(2)}; A/better-sqlite3 ${(med(res.main.map((x) => x[0])) / anchorMs).toFixed(2)}, B/better-sqlite3 ${(med(res.mine.map((x) => x[0])) / anchorMs).toFixed(2)}`);
for (const k of keys) console.log(`${k === "main" ? "A" : k === "mine" ? "B" : "better-sqlite3"}: minor page faults ${med(res[k].map((x) => x[4]))} median a transaction; runs ${res[k].map((x) => x[4]).join(" ")}`);
for (const k of ["main", "mine"]) console.log(`${k === "main" ? "A" : "B"}: commit CPU ${med(res[k].map((x) => x[3])).toFixed(1)} ms median; put loop CPU ${med(res[k].map((x) => x[2] - x[3])).toFixed(1)} ms (${res[k].map((x) => (x[2] - x[3]).toFixed(0)).join(" ")}); commit runs ${res[k].map((x) => x[3].toFixed(0)).join(" ")}`);
