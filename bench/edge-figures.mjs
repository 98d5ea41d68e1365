// The "Inside workerd" figures of docs/performance.md: commit and query
// times of a durable store measured inside workerd (Miniflare 4, a SQLite
// Durable Object; bench/edge-worker.js), beside the same work as raw
// sql.exec calls in the same object (the raw* figures: no store), and on
// the Node sqlite backend (a file, durability full and relaxed, ":memory:").
// Every figure is a mean over a batch (workerd's clock is coarse): one commit
// of 1 put (200 commits), 10k puts in one tx (3 runs), page(100) in the
// (path, at) index order from about 50k rows (200 pages), get by key (200).
// Prints one JSON object; not a test.
//
//   node bench/edge-figures.mjs [--runs 3]
//   node bench/edge-figures.mjs --json [--quick]   the column-source shape of `npm run bench`

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { Miniflare } from "miniflare";

import { defineTable, int, json, openStore, query, str } from "../js/index.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const runsArg = process.argv.indexOf("--runs");
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : process.argv.includes("--quick") ? 1 : 3;
// --json: the column-source shape `npm run bench` reads (bench/README.md,
// "Column sources"). The bulk transaction stays at 10k puts, not the Node
// columns' 25k: a Durable Object refuses a value above 2 MB, and the outbox
// record of 25k puts is 3.5 MB (a commit fails with `limit` there).
const asSource = process.argv.includes("--json");
const quick = process.argv.includes("--quick");
const W = quick
  ? { commits: 50, bulk: 500, bulkRuns: 1, pages: 200, fill: 2000 }
  : { commits: 200, bulk: 10000, bulkRuns: 3, pages: 200, fill: 50000 };

const Edits = defineTable("edits", {
  columns: { id: str(), path: str(), entry: int(), at: int(), meta: json() },
  key: ["id"],
  indexes: { byPath: ["path", "at"] },
});
const ROW = (i) => ({ id: `e${String(i).padStart(6, "0")}`, path: `src/dir${i % 50}/file${i}.ts`, entry: i, at: i, meta: { lines: i % 7 } });
const now = () => Number(process.hrtime.bigint()) / 1e6;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// The same work as bench/edge-worker.js, on a Node store.
async function nodeRun(options) {
  const store = await openStore(options);
  const owner = store.object({ host: "session", type: "file-history" });
  const edits = owner.table(Edits);
  await edits.count();
  let n = 0;
  const out = {};
  let t0 = now();
  for (let i = 0; i < W.commits; i++) await owner.tx(async (tx) => { await tx.put(edits, ROW(n++)); });
  out.commitMs = (now() - t0) / W.commits;
  t0 = now();
  for (let r = 0; r < W.bulkRuns; r++) await owner.tx(async (tx) => { for (let i = 0; i < W.bulk; i++) await tx.put(edits, ROW(n++)); });
  out.bulkMs = (now() - t0) / W.bulkRuns;
  while (n < W.fill) await owner.tx(async (tx) => { for (let i = 0; i < 1000; i++) await tx.put(edits, ROW(n++)); });
  const q = query(Edits).orderBy((e) => e.path).orderBy((e) => e.at);
  t0 = now();
  for (let i = 0; i < W.pages; i++) await edits.page(q, 100);
  out.pageMs = (now() - t0) / W.pages;
  t0 = now();
  for (let i = 0; i < W.pages; i++) await edits.get([`e${String(i * 7).padStart(6, "0")}`]);
  out.getMs = (now() - t0) / W.pages;
  out.rows = await edits.count();
  await store.close();
  return out;
}

async function workerdRun(mf, object) {
  const qs = new URLSearchParams({ ...Object.fromEntries(Object.entries(W).map(([k, v]) => [k, String(v)])), object });
  const res = await mf.dispatchFetch(`http://bench/run?${qs}`);
  if (!res.ok) throw new Error(`workerd: ${res.status} ${await res.text()}`);
  return res.json();
}

function summarize(runs) {
  const keys = ["commitMs", "bulkMs", "pageMs", "getMs", "rawCommitMs", "rawBulkMs", "rawPageMs", "rawGetMs"].filter((k) => k in runs[0]);
  return Object.fromEntries([...keys.map((k) => [k, median(runs.map((r) => r[k]))]), ["rows", runs[0].rows], ["runs", runs.length]]);
}

const dir = mkdtempSync(join(tmpdir(), "onestore-edge-figures-"));
const persist = join(dir, "do");
const mf = new Miniflare({
  modules: true,
  scriptPath: join(root, "bench", "edge-worker.js"),
  modulesRoot: root,
  modulesRules: [
    { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
    { type: "CompiledWasm", include: ["**/*.wasm"] },
  ],
  compatibilityDate: "2025-01-01",
  durableObjects: { BENCH: { className: "Bench", useSQLite: true } },
  // On disk, like a deployed object (its SQLite is a file).
  durableObjectsPersist: persist,
});
try {
  const results = { workerd: [], sqliteFileFull: [], sqliteFileRelaxed: [], sqliteMemory: [] };
  // Interleaved runs, each on a fresh object or file.
  for (let r = 0; r < RUNS; r++) {
    results.workerd.push(await workerdRun(mf, `bench-${r}`));
    results.sqliteFileFull.push(await nodeRun({ backend: "sqlite", path: join(dir, `full-${r}.sqlite`) }));
    results.sqliteFileRelaxed.push(await nodeRun({ backend: "sqlite", path: join(dir, `relaxed-${r}.sqlite`), durability: "relaxed" }));
    results.sqliteMemory.push(await nodeRun({ backend: "sqlite", path: ":memory:" }));
  }
  const out = {
    what: "onestore durable backend inside workerd vs the Node sqlite backend (ms, mean per operation within a batch; median over runs)",
    node: process.version,
    workload: W,
    figures: Object.fromEntries(Object.entries(results).map(([k, v]) => [k, summarize(v)])),
  };
  console.log(JSON.stringify(asSource ? asColumnSource(out) : out, null, 2));
} finally {
  await mf.dispose();
  rmSync(dir, { recursive: true, force: true });
}

// The durable backend in workerd and its raw sql.exec anchor as bench
// columns (the Node sqlite runs are the Node columns' business).
function asColumnSource(out) {
  const w = out.figures.workerd;
  const notHere = { na: "not measured inside workerd (bench/edge-figures.mjs measures commit, bulk, page and get)" };
  // workerd's clock is coarse (it moves in whole steps): a batch that took
  // less than one step reads as 0, which is no figure.
  const ms = (value, per, extra = {}) => (value > 0 ? { value, unit: "ms", per, ...extra } : { na: `the batch took less than one tick of workerd's clock (${per})` });
  const figures = (commit, bulk, page, get) => ({
    commit: ms(commit, "commit"),
    bulk: ms(bulk, `tx of ${out.workload.bulk} puts`, bulk > 0 ? { putsPerSecond: out.workload.bulk / (bulk / 1000) } : {}),
    page: ms(page, "page of 100 rows"),
    get: ms(get, "get"),
    rename: notHere, replay: notHere, open: notHere,
  });
  return {
    source: "workerd",
    environment: { runtime: "workerd via Miniflare 4", node: out.node, notes: `a SQLite Durable Object persisted to disk; batch means, median of ${w.runs} runs; pages from ${w.rows} rows; workload 2 is a tx of ${out.workload.bulk} puts, not 25000: the outbox record of 25000 puts (3.5 MB) is above a Durable Object's 2 MB per value, so that commit fails with \`limit\`; workerd's clock moves in coarse steps, so single figures are batch means` },
    columns: [
      { id: "workerd-onestore-durable", label: "onestore durable (workerd)", kind: "onestore", group: "workerd", settings: { backend: "durable" }, anchors: ["workerd-raw-sql-exec"], figures: figures(w.commitMs, w.bulkMs, w.pageMs, w.getMs) },
      { id: "workerd-raw-sql-exec", label: "raw sql.exec from JS (workerd)", kind: "anchor", group: "workerd", settings: { backend: "sql.exec" }, figures: figures(w.rawCommitMs, w.rawBulkMs, w.rawPageMs, w.rawGetMs) },
    ],
  };
}
