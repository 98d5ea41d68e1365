// What every column of the benchmark shares: the table, its rows, the
// workloads' sizes, timing, the ops of the replica workload and the sizes of
// the downloads. A column (bench/lib/onestore-column.mjs, sql-column.mjs, or
// a script that plugs in, see bench/README.md) does the same work from these.

import { gzipSync } from "node:zlib";
import { fileURLToPath, pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { readFileSync } from "node:fs";

import * as api from "../../js/index.js";

export * from "./work.mjs";
import { OWNER, editsTable, median, replicaCommits, rowChanges } from "./work.mjs";

// The table, built with the Node root's builders.
export const Edits = editsTable(api);

// A build of the package at `root` (a checkout with js/ and dist/), for the
// bench/compare-*.mjs scripts that run two builds side by side: its API and
// the bench's table defined with it.
export async function loadBuild(root) {
  const built = await import(pathToFileURL(`${resolve(root)}/js/index.js`).href);
  return { root, api: built, Edits: editsTable(built) };
}

// Workload 14: the same table at version 2, with one column added by an
// alter (its default is read by SQLite for the rows stored before; nothing
// is rewritten).
export const EditsAltered = api.defineTable(Edits.name, {
  version: 2,
  columns: { ...Edits.columns, tag: api.str({ default: "" }) },
  key: Edits.key,
  indexes: Edits.indexes,
  migrations: { 2: { alter: { add: { tag: api.str({ default: "" }) } } } },
});

// ---- the replica workload's batches ----

const batchesByPlan = new Map();
/**
 * The outbox batches of the replica workload (10), built once per process
 * and plan: the table's declaration and `p.replicaCommits` recorded commits
 * committed on a memory store, read back `p.replicaBatch` commits a batch.
 * Resolves to { batches, changes } (changes: the row changes of them all).
 */
export function replicaBatches(p) {
  const key = `${p.replicaCommits}/${p.replicaBatch}`;
  if (!batchesByPlan.has(key)) batchesByPlan.set(key, (async () => {
    const store = await api.openStore({ backend: "memory" });
    const edits = store.object({ type: OWNER }).table(Edits);
    await edits.get("none");
    for (const ops of replicaCommits(p.replicaCommits, p.replayOpsPerCommit)) await store.commit(ops);
    const batches = [];
    for (let after = 0; after < store.head; after += p.replicaBatch) batches.push(await store.outbox.read(after, p.replicaBatch));
    await store.close();
    return { batches, changes: batches.reduce((n, b) => n + rowChanges(b), 0) };
  })());
  return batchesByPlan.get(key);
}

// ---- timing ----

export const now = () => Number(process.hrtime.bigint()) / 1e6;  // ms
// Runs `fn(run)` `runs` times; each call returns the figure of one run (or
// undefined: then its wall time in ms is the figure). Returns { value, runs }.
export async function repeat(runs, fn) {
  const out = [];
  for (let r = 0; r < runs; r++) {
    const t0 = now();
    const v = await fn(r);
    out.push(typeof v === "number" ? v : now() - t0);
  }
  return { value: median(out), runs: out };
}

// ---- download sizes ----

export function sizeOf(paths) {
  let raw = 0;
  let gz = 0;
  for (const p of paths) {
    const bytes = readFileSync(p);
    raw += bytes.length;
    gz += gzipSync(bytes, { level: 9 }).length;
  }
  return { raw, gzip: gz };
}

// What a web app's production build downloads of the package's JS: the
// browser root bundled and minified by esbuild (the core's glue included,
// the .wasm left as the asset it is), gzipped. `entry` is the app's import:
// every export of the root by default (the most an app can pull in), or a
// narrower one such as `export { openStore } from ...` (what tree-shaking
// leaves of it).
export async function bundledSize(rootUrl, entry) {
  const { build } = await import("esbuild");
  const rootDir = fileURLToPath(rootUrl);
  const contents = entry ?? `export * from ${JSON.stringify(`${rootDir}js/browser.js`)};`;
  const out = await build({
    stdin: { contents, resolveDir: rootDir, loader: "js" },
    bundle: true, minify: true, format: "esm", platform: "browser", write: false, logLevel: "silent",
    // The wasm's URL stays a URL (new URL(..., import.meta.url)), as in Vite.
    external: ["*.wasm"],
  });
  const bytes = out.outputFiles[0].contents;
  return { raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
}

// The package's JS a browser downloads: js/browser.js and what it imports,
// without the core's dist/ files (its static import of the .mjs), which the
// caller counts apart.
export function browserModules(rootUrl) {
  const seen = new Set();
  const visit = (url) => {
    if (seen.has(url.href)) return;
    seen.add(url.href);
    const text = readFileSync(url, "utf8");
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"/g)) {
      const next = new URL(m[1], url);
      if (!next.pathname.includes("/dist/")) visit(next);
    }
  };
  visit(new URL("js/browser.js", rootUrl));
  return [...seen].map((h) => new URL(h));
}

/**
 * Adds one round's figures (workload -> figure) to a column's: the runs
 * gathered, the median and the figures derived from it recomputed.
 *
 * @example
 * const col = {};
 * for (let r = 0; r < p.runs; r++) mergeRun(col, await column.main({ ...p, runs: 1 }, log), p);
 */
export function mergeRun(into, round, p) {
  for (const [w, f] of Object.entries(round)) {
    const had = into[w];
    if (!had || had.na || f.na) {
      into[w] = { ...f, runs: [...(f.runs ?? [])] };
      for (const [k, v] of Object.entries(f)) if (k.endsWith("Runs") && Array.isArray(v)) into[w][k] = [...v];
      continue;
    }
    had.runs.push(...f.runs);
    had.value = median(had.runs);
    // A figure's side measurements (xRuns beside xMs, such as the plain-JS
    // loops beside the memory bulk) are medians over the rounds too, not
    // the first round's: that one runs cold, before the JIT has compiled
    // the loop, and read up to several times a warm run.
    for (const [k, v] of Object.entries(f)) {
      const ms = k.endsWith("Runs") ? `${k.slice(0, -4)}Ms` : null;
      if (ms === null || !Array.isArray(v) || !Array.isArray(had[k]) || !(ms in had)) continue;
      had[k].push(...v);
      had[ms] = median(had[k]);
    }
    if (had.putsPerSecond !== undefined) had.putsPerSecond = p.bulk / (had.value / 1000);
    if (had.rowChangesPerSecond !== undefined) had.rowChangesPerSecond = 1000 / had.value;
  }
}
