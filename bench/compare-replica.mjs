// Compares two checkouts of the package on the replica workload (10 of
// bench/run.mjs): the same recorded outbox batches (4,000 commits, 100 a
// batch, bench/lib/common.mjs replicaBatches) applied into a fresh replica
// on memory, on a Node file with durability full and with relaxed,
// interleaved build by build, round by round, in one process; wall and the
// process's CPU time of each, per row change. Not part of `npm run bench`;
// docs/performance.md, "Replica apply on a file", has what it measured.
//
//   node bench/compare-replica.mjs <repo root A> <repo root B> [rounds]

import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";

import { loadBuild, median, plan, replicaBatches } from "./lib/common.mjs";

const [rootA, rootB, roundsArg] = process.argv.slice(2);
if (!rootA || !rootB) {
  console.error("usage: node bench/compare-replica.mjs <root A> <root B> [rounds]");
  process.exit(2);
}
const rounds = Number(roundsArg ?? 5);
const dir = mkdtempSync(join(tmpdir(), "onestore-compare-replica-"));
const MODES = [["memory", { backend: "memory" }], ["file full", { durability: "full" }], ["file relaxed", { durability: "relaxed" }]];

let files = 0;
async function once(b, batches, changes, out) {
  for (const [name, o] of MODES) {
    const options = o.backend === "memory" ? o : { backend: "sqlite", path: join(dir, `r${files++}.sqlite`), ...o };
    const replica = await b.api.openReplica(options);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (const batch of batches) await replica.applyBatch(batch);
    const wall = performance.now() - t0;
    const c = process.cpuUsage(c0);
    await replica.close();
    (out[`${name}: row changes/s, wall`] ??= []).push((changes * 1000) / wall);
    (out[`${name}: row changes/s, cpu`] ??= []).push((changes * 1000 * 1000) / (c.user + c.system));
  }
}

try {
  const { batches, changes } = await replicaBatches(plan(false));
  const builds = [await loadBuild(rootA), await loadBuild(rootB)];
  const figures = builds.map(() => ({}));
  const loads = [];
  await once(builds[0], batches, changes, {});  // warm-up
  await once(builds[1], batches, changes, {});
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < builds.length; i++) await once(builds[(i + r) % 2], batches, changes, figures[(i + r) % 2]);
    loads.push(loadavg()[0]);
  }
  console.log(`${batches.length} batches, ${changes} row changes; 1-min load ${loads.map((l) => l.toFixed(1)).join(", ")}`);
  console.log(`| workload (median of ${rounds}) | A ${builds[0].root} | B ${builds[1].root} | B/A |`);
  console.log("|---|---:|---:|---:|");
  for (const k of Object.keys(figures[0])) {
    const [a, b] = figures.map((f) => median(f[k]));
    console.log(`| ${k} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(b / a).toFixed(2)}× |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
