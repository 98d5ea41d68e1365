// Before and after, inside workerd: the durable backend on two package
// trees, beside the raw sql.exec anchor, in rounds whose order rotates.
// Two works of bench/edge-worker.js's "main" phase:
// - one-put commits (default): each request runs `commits` commits on a
//   fresh Durable Object; figures in us a commit (docs/performance.md,
//   "Issue 13, the commit's fixed cost");
// - `--bulk`: each request runs `txs` transactions of `puts` puts (the
//   issue's 10k-put goal); figures in ms a transaction ("Issue 13, a ninth
//   step").
// A request of none on another fresh object is subtracted, so the open and
// the first declaration drop out. Two figures per request: the wall time by
// Node's clock and the CPU time of the tree's own workerd process (/proc,
// 10 ms ticks: keep the work large), the steadier one on a loaded machine.
// Medians. Not a test.
//
//   node bench/edge-commits-ab.mjs --before /tmp/main-copy --after . [--rounds 9] [--commits 3000]
//   node bench/edge-commits-ab.mjs --bulk --before /tmp/main-copy --after . [--rounds 9] [--puts 10000] [--txs 3]

import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";

import { runPhase, startBenchWorker } from "./lib/edge-bench.mjs";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const trees = { before: resolve(arg("--before", ".")), after: resolve(arg("--after", ".")) };
const ROUNDS = Number(arg("--rounds", 9));
const BULK = process.argv.includes("--bulk");
const PUTS = Number(arg("--puts", 10000));
// What one request does: N commits, or N bulk transactions of PUTS puts.
const N = Number(BULK ? arg("--txs", 3) : arg("--commits", 3000));
const dir = mkdtempSync(join(tmpdir(), "onestore-edge-ab-"));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// The workerd processes that are children of this process (Miniflare's).
function workerdPids() {
  const out = new Set();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === process.pid && /workerd/.test(stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")))) out.add(Number(d));
    } catch { /* gone */ }
  }
  return out;
}
// user + system CPU of a process, ms.
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

async function start(root, name) {
  const known = workerdPids();
  const mf = startBenchWorker(root, join(dir, name));
  await mf.ready;
  const pid = [...workerdPids()].find((p) => !known.has(p));
  if (pid === undefined) throw new Error(`no workerd process found for ${name}`);
  return { mf, pid };
}

const W = { commitsBatch: 0, edgeBulk: BULK ? PUTS : 0, bulkRuns: 0 };
let objects = 0;
async function request(w, impl, n) {
  const c0 = cpuMs(w.pid);
  const t0 = performance.now();
  await runPhase(w.mf, "main", impl, `o${objects++}`, { W: { ...W, [BULK ? "bulkRuns" : "commitsBatch"]: n } });
  return { wall: performance.now() - t0, cpu: cpuMs(w.pid) - c0 };
}
// One figure: a request of N less one of none, per commit (us) or per
// bulk transaction (ms).
const unit = BULK ? 1 : 1000;
async function figure(w, impl) {
  const none = await request(w, impl, 0);
  const some = await request(w, impl, N);
  return { wall: ((some.wall - none.wall) * unit) / N, cpu: ((some.cpu - none.cpu) * unit) / N };
}

const workers = { before: await start(trees.before, "before"), after: await start(trees.after, "after") };
const runs = [["before", "store"], ["after", "store"], ["after", "raw"]];
const out = Object.fromEntries(runs.map(([t, impl]) => [`${t} ${impl}`, { wall: [], cpu: [] }]));
const loads = [];
try {
  for (const [t, impl] of runs) await figure(workers[t], impl);  // warm each
  for (let r = 0; r < ROUNDS; r++) {
    loads.push(loadavg()[0]);
    for (let k = 0; k < runs.length; k++) {
      const [t, impl] = runs[(k + r) % runs.length];
      const f = await figure(workers[t], impl);
      out[`${t} ${impl}`].wall.push(f.wall);
      out[`${t} ${impl}`].cpu.push(f.cpu);
    }
  }
} finally {
  await Promise.all(Object.values(workers).map((w) => w.mf.dispose()));
  rmSync(dir, { recursive: true, force: true });
}
const what = BULK
  ? `bulk puts on a Durable Object, ${N} transactions of ${PUTS} puts a request, ${ROUNDS} rounds, medians in ms a transaction`
  : `one-put commits on a Durable Object, ${N} a request, ${ROUNDS} rounds, medians in us a commit`;
console.log(`${what}; 1-min load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`);
const raw = out["after raw"];
for (const [k, v] of Object.entries(out)) {
  const w = median(v.wall);
  const c = median(v.cpu);
  console.log(`${k.padEnd(14)} wall ${w.toFixed(1).padStart(7)} (${(w / median(raw.wall)).toFixed(2)}x raw)   workerd cpu ${c.toFixed(1).padStart(7)} (${(c / median(raw.cpu)).toFixed(2)}x raw)`);
}
const b = out["before store"];
const a = out["after store"];
console.log(`after / before: wall ${(median(a.wall) / median(b.wall)).toFixed(2)}x, workerd cpu ${(median(a.cpu) / median(b.cpu)).toFixed(2)}x`);
