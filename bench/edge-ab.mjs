// Before and after, inside workerd: the durable backend's one-put commit,
// 10k puts in one tx, page(100) and get (workloads 1, 2, 4, 5 of
// bench/edge-worker.js, its "main" and "read" phases) on two package trees,
// each with its own js/, dist/ and bench/ (for example a copy of main with
// its built dist/, and this worktree), beside the raw sql.exec anchor, in
// rounds whose order rotates (the interleaved method of bench/README.md).
// Each phase runs on a fresh Durable Object. Prints the median of each
// figure per tree, and its ratio to raw; the one-put commit also by Node's
// clock (commitWall: a request of 2,000 commits less one of none). Not a test; used for
// docs/performance.md ("Issue 13, Durable Objects, step two").
//
//   node bench/edge-ab.mjs --before /tmp/main-copy --after . [--rounds 5]

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

import { commitWall, runPhase, startBenchWorker } from "./lib/edge-bench.mjs";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const trees = { before: resolve(arg("--before", ".")), after: resolve(arg("--after", ".")) };
const ROUNDS = Number(arg("--rounds", 3));
// Workload sizes: those of bench/edge-figures.mjs for 1 and 2; a table of
// 20k rows (not 100k: a shorter fill) for 4 and 5.
const COMMITS = 2000;
const W = { commitsBatch: 200, edgeBulk: 10000, bulkRuns: 3, readRows: 20000, renames: 2, pages: 200, pageSize: 100, pageRuns: 1, gets: 2000 };

const dir = mkdtempSync(join(tmpdir(), "onestore-edge-ab-"));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const phase = (mf, name, impl, object) => runPhase(mf, name, impl, object, { W });

const mfs = { before: startBenchWorker(trees.before, join(dir, "before")), after: startBenchWorker(trees.after, join(dir, "after")) };
try {
  const variants = ["before", "after", "raw"];
  const runs = Object.fromEntries(variants.map((v) => [v, []]));
  for (let r = 0; r < ROUNDS; r++) {
    const order = variants.map((_, i) => variants[(i + r) % variants.length]);
    for (const v of order) {
      const mf = v === "raw" ? mfs.after : mfs[v];
      const impl = v === "raw" ? "raw" : "store";
      const out = { ...(await phase(mf, "main", impl, `main-${v}-${r}`)), ...(await phase(mf, "read", impl, `read-${v}-${r}`)) };
      // The one-put commit by Node's clock (workerd's does not move inside
      // a request without I/O).
      out.commitWall = await commitWall(mf, impl, W, COMMITS, `${v}-${r}`);
      runs[v].push(out);
      console.error(`edge-ab: round ${r + 1} ${v}: ${["commit", "commitWall", "bulk", "page", "get"].map((k) => `${k} ${out[k].toFixed(3)} ms`).join(", ")}`);
    }
  }
  const figures = Object.fromEntries(variants.map((v) => [v, Object.fromEntries(["commit", "commitWall", "bulk", "page", "get"].map((k) => [k, median(runs[v].map((o) => o[k]))]))]));
  const ratios = Object.fromEntries(["before", "after"].map((v) => [v, Object.fromEntries(Object.keys(figures.raw).map((k) => [k, figures[v][k] / figures.raw[k]]))]));
  console.log(JSON.stringify({ W, rounds: ROUNDS, trees, figures, ratios, runs }, null, 2));
} finally {
  await Promise.all(Object.values(mfs).map((mf) => mf.dispose()));
  rmSync(dir, { recursive: true, force: true });
}
