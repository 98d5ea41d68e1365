// Compares two checkouts (each with js/ and its own dist/ build) on the
// reads of issue 13's "links and gets" step: a get by key on the memory
// backend and on a Node sqlite file (workload 5's shape: pseudo-random keys
// of a 10,000-row table), and a one-put commit on a memory store with and
// without 100 held derives (workload 16's derives, in Node: each the first 10
// rows of its group of 20; a derive tracks the rows its page read, so a
// commit makes one of the 100 dirty, the goal's shape). Runs are
// interleaved in one process, the order of the two checkouts rotated run by
// run, so that the machine's load falls on both alike; each figure is the
// median over the runs. Not part of `npm run bench`: docs/performance.md,
// "Issue 13, links and gets", has its figures.
//
//   node bench/compare-reads.mjs <root A> <root B> [runs] [--only <text>]
//
// --only: just the workloads whose name contains <text> ("get", "derives").

import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { ROW, getKeys, median } from "./lib/common.mjs";

const onlyAt = process.argv.indexOf("--only");
const only = onlyAt > 0 ? process.argv[onlyAt + 1] : null;
const [rootA, rootB, runsArg] = process.argv.slice(2).filter((a, i, all) => a !== "--only" && all[i - 1] !== "--only");
if (!rootA || !rootB) {
  console.error("usage: node bench/compare-reads.mjs <root A> <root B> [runs]");
  process.exit(2);
}
const runs = Number(runsArg ?? 7);
const ROWS = 10000;
const GETS = 20000;
const COMMITS = 200;
const DERIVES = 100;

async function load(root) {
  const api = await import(pathToFileURL(`${resolve(root)}/js/index.js`).href);
  const Edits = api.defineTable("edits", {
    columns: { id: api.str(), path: api.str(), entry: api.int(), at: api.int(), meta: api.json() },
    key: ["id"],
    indexes: { byPath: ["path", "at"] },
  });
  const Items = api.defineTable("items", { columns: { id: api.str(), n: api.int() }, key: ["id"] });
  return { root, api, Edits, Items };
}

const dir = mkdtempSync(join(os.tmpdir(), "onestore-compare-reads-"));
let fileNo = 0;

// µs per get over GETS pseudo-random keys.
async function gets(b, backend) {
  const { api, Edits } = b;
  const store = await api.openStore(backend === "memory" ? { backend } : { backend, path: join(dir, `s${fileNo++}.sqlite`), durability: "relaxed" });
  const owner = store.object({ type: "bench" });
  const edits = owner.table(Edits);
  await owner.tx(async (tx) => {
    for (let i = 0; i < ROWS; i++) await tx.put(edits, ROW(i));
  });
  const keys = getKeys(GETS, ROWS);
  for (const k of keys.slice(0, 1000)) await edits.get(k);  // warm
  const t = performance.now();
  for (const k of keys) if ((await edits.get(k)) === undefined) throw new Error(`${b.root}: ${k} not found`);
  const us = ((performance.now() - t) * 1000) / GETS;
  await store.close();
  return us;
}

// µs per one-put commit on a memory store holding `derives` derives.
async function commits(b, derives) {
  const { api, Items } = b;
  const groupOf = (g) => `g${String(g).padStart(3, "0")}/`;
  const store = await api.openStore({ backend: "memory" });
  const owner = store.object({ type: "bench" });
  const items = owner.table(Items);
  await owner.tx(async (tx) => {
    for (let g = 0; g < DERIVES; g++) for (let i = 0; i < 20; i++) await tx.put(items, { id: `${groupOf(g)}${String(i).padStart(3, "0")}`, n: 0 });
  });
  let seen = 0;
  for (let g = 0; g < derives; g++) {
    const q = api.query(Items).where((r) => api.prefix(r.id, groupOf(g)));
    store.derive(`slice${g}`, (read) => read.page(items, q, 10).rows.reduce((sum, r) => sum + r.n, 0)).hold(() => { seen++; });
  }
  const put = (i) => owner.tx((tx) => tx.put(items, { id: `${groupOf(i % DERIVES)}000`, n: i }));
  for (let i = 0; i < 20; i++) await put(i);  // warm
  const t = performance.now();
  for (let i = 0; i < COMMITS; i++) await put(i);
  const us = ((performance.now() - t) * 1000) / COMMITS;
  await store.close();
  // Each derive's first value, then one a commit: the one derive it made
  // dirty (derives track the rows they read; before, every commit made all
  // 100 dirty, and this counted derives * (COMMITS + 21)).
  const expected = derives === 0 ? 0 : derives + 20 + COMMITS;
  if (seen !== expected) throw new Error(`${b.root}: the listeners saw ${seen} values, not ${expected}`);
  return us;
}

const WORK = {
  "get, memory (µs)": (b) => gets(b, "memory"),
  "get, sqlite file (µs)": (b) => gets(b, "sqlite"),
  "one-put commit, memory, no derives (µs)": (b) => commits(b, 0),
  "one-put commit, memory, 100 held derives (µs)": (b) => commits(b, DERIVES),
};

if (only !== null) for (const k of Object.keys(WORK)) if (!k.includes(only)) delete WORK[k];
const builds = [await load(rootA), await load(rootB)];
const figures = builds.map(() => Object.fromEntries(Object.keys(WORK).map((k) => [k, []])));
const load0 = os.loadavg();
try {
  for (let r = 0; r < runs; r++) {
    for (let j = 0; j < builds.length; j++) {
      const i = (j + r) % builds.length;
      for (const [k, fn] of Object.entries(WORK)) figures[i][k].push(await fn(builds[i]));
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const load1 = os.loadavg();
console.log(`| workload (median of ${runs}) | A: ${builds[0].root} | B: ${builds[1].root} | B/A |`);
console.log("|---|---:|---:|---:|");
for (const k of Object.keys(WORK)) {
  const [a, b] = figures.map((f) => median(f[k]));
  console.log(`| ${k} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(b / a).toFixed(2)}× |`);
}
console.log(`\nload average (1 min) at the start ${load0[0].toFixed(1)}, at the end ${load1[0].toFixed(1)}; ${os.cpus().length} cores`);
