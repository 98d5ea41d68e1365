// Compares two checkouts of the package on one-put commits (issue 13, "the
// commit's fixed cost"): on the memory backend and on a Node store file
// (durability relaxed), each run on a new store, interleaved run by run in
// one process (A, B, B, A, ...), with the wall time and the process's CPU
// time of each (on a loaded machine the CPU time is the steadier figure).
// Not part of `npm run bench`; docs/performance.md, "Issue 13, the commit's
// fixed cost", has what it measured.
//
//   node bench/compare-commits.mjs <repo root A> <repo root B> [runs] [commits a run]
//
// Each root is a checkout with js/ and dist/ (its own build).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { loadBuild, median, ROW } from "./lib/common.mjs";

const [rootA, rootB, runsArg, commitsArg] = process.argv.slice(2);
if (!rootA || !rootB) {
  console.error("usage: node bench/compare-commits.mjs <root A> <root B> [runs] [commits a run]");
  process.exit(2);
}
const runs = Number(runsArg ?? 11);
const COMMITS = Number(commitsArg ?? 2000);
const dir = mkdtempSync(join(tmpdir(), "onestore-compare-commits-"));

const load = loadBuild;

let files = 0;
async function once(b, out) {
  const { api, Edits } = b;
  for (const backend of ["memory", "sqlite"]) {
    const store = await api.openStore(backend === "memory" ? { backend }
      : { backend, path: join(dir, `s${files++}.sqlite`), durability: "relaxed" });
    const owner = store.object({ type: "bench" });
    const edits = owner.table(Edits);
    await edits.get("none");  // the table's declaration has committed
    let n = 0;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < COMMITS; i++) await owner.tx(async (tx) => { await tx.put(edits, ROW(n++)); });
    const wall = performance.now() - t0;
    const c = process.cpuUsage(c0);
    (out[`${backend} commit, wall`] ??= []).push((wall * 1000) / COMMITS);
    (out[`${backend} commit, cpu`] ??= []).push((c.user + c.system) / COMMITS);
    await store.close();
  }
}

const A = await load(rootA);
const B = await load(rootB);
const outA = {};
const outB = {};
await once(A, {});  // warm both
await once(B, {});
for (let r = 0; r < runs; r++) {
  if (r % 2 === 0) { await once(A, outA); await once(B, outB); } else { await once(B, outB); await once(A, outA); }
}
rmSync(dir, { recursive: true, force: true });
const fmt = (x) => x.toFixed(2).padStart(8);
console.log(`one-put commits, ${COMMITS} a run, ${runs} runs, medians in us (load ${(await import("node:os")).loadavg().map((l) => l.toFixed(1)).join(" ")})`);
console.log(`${"".padEnd(24)}${"A".padStart(8)}${"B".padStart(8)}     B/A`);
for (const k of Object.keys(outA)) {
  const a = median(outA[k]);
  const b = median(outB[k]);
  console.log(`${k.padEnd(24)}${fmt(a)}${fmt(b)}   ${(b / a).toFixed(2)}x`);
}
