// Compares two checkouts of the package on a Node store file's writes
// (issue 13): one-put commits with durability relaxed and full, and one
// transaction of 25k puts, interleaved run by run in one process, with the
// wall time and the process's CPU time of each (on a loaded machine the CPU
// time is the steadier figure; the wall time holds the syncs). Not part of
// `npm run bench`; docs/performance.md, "Issue 13, a Node file's commit and
// bulk puts", has what it measured.
//
//   node bench/compare-file-commits.mjs <repo root A> <repo root B> [runs] [relaxed commits]
//
// Each root is a checkout with js/ and dist/ (its own build). Relaxed
// commits run 1000 a run by default: a WAL checkpoints about every 200, so
// a run holds several checkpoints and their syncs, as a long session does.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { loadBuild, median, ROW } from "./lib/common.mjs";

const [rootA, rootB, runsArg, relaxedArg] = process.argv.slice(2);
if (!rootA || !rootB) {
  console.error("usage: node bench/compare-file-commits.mjs <root A> <root B> [runs] [relaxed commits]");
  process.exit(2);
}
const runs = Number(runsArg ?? 5);
const COMMITS = { relaxed: Number(relaxedArg ?? 1000), full: 100 };
const BULK = 25_000;
const dir = mkdtempSync(join(tmpdir(), "onestore-compare-file-commits-"));

const load = loadBuild;

// Times `fn` (wall and CPU, ms) over `per` units; pushes both per unit.
async function timed(out, name, per, fn) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  (out[`${name}, wall`] ??= []).push(wall / per);
  (out[`${name}, cpu`] ??= []).push((c.user + c.system) / 1000 / per);
}

let files = 0;
async function once(b, out) {
  const { api, Edits } = b;
  for (const durability of ["relaxed", "full"]) {
    const store = await api.openStore({ backend: "sqlite", path: join(dir, `s${files++}.sqlite`), durability });
    const owner = store.object({ type: "bench" });
    const edits = owner.table(Edits);
    await edits.get("x");
    let n = 0;
    const count = COMMITS[durability];
    await timed(out, `one-put commit ${durability} (ms)`, count, async () => {
      for (let i = 0; i < count; i++) await owner.tx(async (tx) => { await tx.put(edits, ROW(n++)); });
    });
    if (durability === "relaxed") {
      await timed(out, `${BULK} puts in one tx, relaxed (ms)`, 1, async () => {
        await owner.tx(async (tx) => { for (let i = 0; i < BULK; i++) await tx.put(edits, ROW(n++)); });
      });
    }
    await store.close();
  }
}

try {
  const builds = [await load(rootA), await load(rootB)];
  const figures = builds.map(() => ({}));
  await once(builds[0], {});  // warm-up: both modules compiled, the disk's first files
  await once(builds[1], {});
  for (let r = 0; r < runs; r++) for (let i = 0; i < builds.length; i++) await once(builds[(i + r) % 2], figures[(i + r) % 2]);
  console.log(`| workload (median of ${runs}) | ${builds.map((b) => b.root).join(" | ")} | B/A |`);
  console.log("|---|---:|---:|---:|");
  for (const k of Object.keys(figures[0])) {
    const [a, b] = figures.map((f) => median(f[k]));
    console.log(`| ${k} | ${a.toFixed(4)} | ${b.toFixed(4)} | ${(b / a).toFixed(2)}× |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
