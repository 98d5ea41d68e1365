// Compares two checkouts of the package on a Node store file: one-put
// commits (durability full and relaxed), gets and pages, interleaved run by
// run in one process so that the machine's load falls on both alike. Not
// part of `npm run bench`; it is how the file mode of issue 13 (a WAL held
// for the life of the store, docs/architecture.md) was measured against the
// rollback journal with a lock per transaction (docs/performance.md).
//
//   node bench/compare-files.mjs <repo root A> <repo root B> [runs]
//
// Each root is a checkout with js/ and dist/ (its own build).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { getKeys, loadBuild, median, ROW } from "./lib/common.mjs";

const [rootA, rootB, runsArg] = process.argv.slice(2);
if (!rootA || !rootB) {
  console.error("usage: node bench/compare-files.mjs <root A> <root B> [runs]");
  process.exit(2);
}
const runs = Number(runsArg ?? 5);
const dir = mkdtempSync(join(tmpdir(), "onestore-compare-files-"));

const load = loadBuild;

const COMMITS = 100;
const ROWS = 5000;
let files = 0;
async function once(b, out) {
  const { api, Edits } = b;
  for (const durability of ["full", "relaxed"]) {
    const store = await api.openStore({ backend: "sqlite", path: join(dir, `s${files++}.sqlite`), durability });
    const owner = store.object({ type: "bench" });
    const edits = owner.table(Edits);
    await edits.get("x");
    let n = 0;
    let t = performance.now();
    for (let i = 0; i < COMMITS; i++) await owner.tx(async (tx) => { await tx.put(edits, ROW(n++)); });
    (out[`commit ${durability}`] ??= []).push((performance.now() - t) / COMMITS);
    if (durability === "relaxed") {
      await owner.tx(async (tx) => { for (let i = 0; i < ROWS; i++) await tx.put(edits, ROW(n++)); });
      const keys = getKeys(5000, n);
      t = performance.now();
      for (const k of keys) await edits.get(k);
      (out.get ??= []).push((performance.now() - t) / keys.length);
      const q = b.api.query(Edits).orderBy((e) => e.path).orderBy((e) => e.at);
      t = performance.now();
      let after;
      for (let i = 0; i < 40; i++) after = (await edits.page(q, 100, undefined, after ? { after } : undefined)).next;
      (out.page ??= []).push((performance.now() - t) / 40);
    }
    await store.close();
  }
}

try {
  const builds = [await load(rootA), await load(rootB)];
  const figures = builds.map(() => ({}));
  for (let r = 0; r < runs; r++) for (let i = 0; i < builds.length; i++) await once(builds[(i + r) % 2], figures[(i + r) % 2]);
  console.log(`| workload (ms, median of ${runs}) | ${builds.map((b) => b.root).join(" | ")} | B/A |`);
  console.log("|---|---:|---:|---:|");
  for (const k of Object.keys(figures[0])) {
    const [a, b] = figures.map((f) => median(f[k]));
    console.log(`| ${k} | ${a.toFixed(4)} | ${b.toFixed(4)} | ${(b / a).toFixed(2)}× |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
