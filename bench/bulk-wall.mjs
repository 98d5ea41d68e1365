// Workload 2 (25,000 puts in one transaction) as `npm run bench` runs it,
// with what the report does not show: each run's CPU time and the garbage
// collections inside it. The bench's own columns (bench/lib/, workloads 1–6
// each round, the columns rotated round by round, `settle()` before each)
// run in one process for one or more checkouts; the bulk's window is the
// span between the column's two log lines around it ("one-put commit" and
// "puts in one tx"), so the columns themselves are not changed.
//
//   node --expose-gc bench/bulk-wall.mjs [--rounds N] [--columns a,b] <checkout>...
//
// Columns (default onestore-memory,better-sqlite3-memory): onestore-memory
// of each checkout (named by its index: onestore-memory#0, #1...) and
// better-sqlite3-memory (the first checkout's). Prints, per column, the
// medians of the bulk's wall time, CPU time (process.cpuUsage: every thread
// of the process, the collector's helpers included) and time in GC (the
// main thread's pauses, from perf_hooks), and each run's figures.
//
// Figures only (no assertion); see docs/performance.md, "Issue 13, a
// seventh step".
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { PerformanceObserver, performance } from "node:perf_hooks";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  if (i < 0) return dflt;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const rounds = +opt("--rounds", 5);
const wanted = opt("--columns", "onestore-memory,better-sqlite3-memory").split(",");
const roots = args.map((r) => pathToFileURL(`${resolve(r)}/`).href);
if (!roots.length) {
  console.error("usage: node --expose-gc bench/bulk-wall.mjs [--rounds N] [--columns a,b] <checkout>...");
  process.exit(2);
}

const gcs = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) gcs.push(e); }).observe({ entryTypes: ["gc"] });
const GC_KIND = { 1: "minor", 2: "major", 4: "incremental", 8: "weakcb" };

const dir = mkdtempSync(join(os.tmpdir(), "bulk-wall-"));
const columns = [];
for (let k = 0; k < roots.length; k++) {
  const lib = (f) => import(new URL(`bench/lib/${f}`, roots[k]).href);
  const [{ onestoreColumn }, { sqlColumn }, { plan }, { storeSchema }, { betterSqlite }] =
    await Promise.all([lib("onestore-column.mjs"), lib("sql-column.mjs"), lib("work.mjs"), lib("fixture.mjs"), lib("drivers.mjs")]);
  const schema = await storeSchema(dir);
  const tag = roots.length > 1 ? `#${k}` : "";
  if (wanted.includes("onestore-memory")) columns.push({ name: `onestore-memory${tag}`, c: onestoreColumn({ id: "onestore-memory", label: "", backend: "memory", dir, anchors: [] }), plan });
  if (k === 0 && wanted.includes("better-sqlite3-memory")) {
    columns.push({ name: "better-sqlite3-memory", c: sqlColumn({ id: "better-sqlite3-memory", label: "", open: betterSqlite, mode: "memory", dir, schema, settings: {} }), plan });
  }
}

function settle() {
  try { execFileSync("sync", [], { stdio: "ignore" }); } catch { /* none */ }
  globalThis.gc?.();
}
const cpuNow = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const res = Object.fromEntries(columns.map((x) => [x.name, []]));
const loads = [os.loadavg()[0]];
try {
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < columns.length; k++) {
      const { name, c, plan } = columns[(k + r) % columns.length];
      const p = { ...plan(false), runs: 1 };
      let w = null;
      const log = (msg) => {
        if (/one-put commit/.test(msg)) w = { t0: performance.now(), c0: cpuNow() };
        else if (/puts in one tx/.test(msg) && w) Object.assign(w, { t1: performance.now(), c1: cpuNow() });
      };
      settle();
      const f = await c.main(p, log);
      await new Promise((done) => setTimeout(done, 100));  // the gc entries delivered (a task, after the column's microtasks)
      const inside = gcs.filter((g) => g.startTime >= w.t0 && g.startTime < w.t1);
      const gcMs = inside.reduce((s, g) => s + g.duration, 0);
      const kinds = {};
      for (const g of inside) {
        const kind = GC_KIND[g.detail?.kind ?? g.kind] ?? "?";
        kinds[kind] = (kinds[kind] ?? 0) + 1;
      }
      const heapMB = process.memoryUsage().heapUsed / 2 ** 20;
      res[name].push({ wall: f.bulk.value, cpu: w.c1 - w.c0, gc: gcMs, kinds, heapMB });
      console.log(`round ${r} ${name}: wall ${f.bulk.value.toFixed(1)} ms, CPU ${(w.c1 - w.c0).toFixed(1)} ms, GC ${gcMs.toFixed(1)} ms ${JSON.stringify(kinds)}, heap after ${heapMB.toFixed(0)} MB`);
    }
    loads.push(os.loadavg()[0]);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
console.log(`load average (1 min) during the run: ${loads.map((x) => x.toFixed(2)).join(" ")}`);
for (const [name, xs] of Object.entries(res)) {
  console.log(`${name}: wall ${med(xs.map((x) => x.wall)).toFixed(1)} ms, CPU ${med(xs.map((x) => x.cpu)).toFixed(1)} ms, GC ${med(xs.map((x) => x.gc)).toFixed(1)} ms (medians of ${xs.length})`);
}
const b = res["better-sqlite3-memory"];
if (b) {
  for (const [name, xs] of Object.entries(res)) {
    if (name === "better-sqlite3-memory") continue;
    console.log(`${name} / better-sqlite3: wall ${(med(xs.map((x) => x.wall)) / med(b.map((x) => x.wall))).toFixed(2)}×, CPU ${(med(xs.map((x) => x.cpu)) / med(b.map((x) => x.cpu))).toFixed(2)}×`);
  }
}
