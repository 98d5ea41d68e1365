// `npm run bench`: every workload of issue 5 on every column, in one run, on
// this machine; writes bench/report.md and bench/report.json.
//
//   node bench/run.mjs [--quick] [--out DIR] [--no-sources] [--columns id,id] [--note TEXT]
//
// --quick: tiny sizes, one run (what `npm test` runs to check that the bench
// works and that its report is well formed; it never asserts a speed).
// --out: where the report goes (default: bench/). --no-sources: skip the
// column scripts that plug in (bench/README.md, "Column sources").
//
// The Node columns live in bench/lib/; other columns (Chromium, workerd) come
// from scripts that print their figures as JSON (bench/lib/sources.mjs).

import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { browserModules, bundledSize, figure, median, mergeRun, na, plan, sizeOf } from "./lib/common.mjs";
import { betterSqlite, loadOfficial, officialWasm, rawWasm } from "./lib/drivers.mjs";
import { archiveFigures } from "./lib/archive.mjs";
import { nearestFigures } from "./lib/nearest.mjs";
import { storeFixture, storeSchema } from "./lib/fixture.mjs";
import { onestoreColumn } from "./lib/onestore-column.mjs";
import { postgresApplyFigure } from "./lib/postgres.mjs";
import { toMarkdown } from "./lib/report.mjs";
import { externalSources } from "./lib/sources.mjs";
import { sqlColumn } from "./lib/sql-column.mjs";

const root = new URL("../", import.meta.url);
const args = process.argv.slice(2);
const quick = args.includes("--quick");
const outAt = args.indexOf("--out");
const outDir = outAt >= 0 ? args[outAt + 1] : fileURLToPath(new URL("bench/", root));
const p = plan(quick);
const log = (msg) => process.stderr.write(`bench: ${msg}\n`);
const t0 = Date.now();
const loadStart = os.loadavg();

// Other work on the machine moves every figure: sample, every 15 s, the load
// average and how many compilers and test runners are running besides us
// (the Chromium and workerd the bench starts itself, descendants of this
// process, are not counted).
const busy = /^(cc1plus|cc1|clang|clang\+\+|clang-\d+|wasm-opt|wasm-ld|ld|emcc|ctest|onestore_tests|chromium|chrome|workerd)$/;
const samples = [];
function sample() {
  let others = 0;
  try {
    const procs = execFileSync("ps", ["-eo", "pid=,ppid=,comm="], { encoding: "utf8" }).split("\n")
      .map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l)).filter(Boolean)
      .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), comm: m[3].trim() }));
    const parent = new Map(procs.map((x) => [x.pid, x.ppid]));
    const ours = (pid) => {
      for (let at = pid, hops = 0; at > 1 && hops < 64; at = parent.get(at) ?? 0, hops++) if (at === process.pid) return true;
      return false;
    };
    others = procs.filter((x) => busy.test(x.comm) && !ours(x.pid)).length;
  } catch { /* no ps: load average only */ }
  samples.push({ load1: os.loadavg()[0], others });
}
sample();
const sampler = setInterval(sample, 15000);
sampler.unref();

// Before each column's measurement: the previous column's (or the
// fixture's) dirty pages flushed to disk, so that its fsyncs do not wait for
// them (ext4 orders an fsync after the data written before it), and, with
// --expose-gc (npm run bench), the JS garbage of the previous step collected.
function settle() {
  try {
    execFileSync("sync", [], { stdio: "ignore" });
  } catch { /* no sync command: the figures are noisier */ }
  globalThis.gc?.();
}

const dir = mkdtempSync(join(os.tmpdir(), "onestore-bench-"));
try {
  const schema = await storeSchema(dir);
  const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));
  const bsPkg = JSON.parse(readFileSync(new URL("node_modules/better-sqlite3/package.json", root), "utf8"));
  const swPkg = JSON.parse(readFileSync(new URL("node_modules/@sqlite.org/sqlite-wasm/package.json", root), "utf8"));
  const official = await loadOfficial();
  const rawProbe = await rawWasm(":memory:");
  const rawVersion = rawProbe.all("SELECT sqlite_version()", [])[0][0];
  rawProbe.close();
  const bsProbe = betterSqlite(":memory:");
  const bsVersion = bsProbe.version;
  bsProbe.close();

  const raw = { open: rawWasm, settings: { engine: `onestore's own wasm SQLite ${rawVersion} (RawSqlite, wasm/raw_sqlite.cc, in the bench-only build of the same objects)` } };
  const sw = { open: officialWasm, settings: { engine: `@sqlite.org/sqlite-wasm ${swPkg.version} (SQLite ${official.version.libVersion}, oo1 API)` } };
  const bs = { open: betterSqlite, settings: { engine: `better-sqlite3 ${bsPkg.version} (SQLite ${bsVersion}, native)` } };
  const sql = (id, label, d, mode, journal) => sqlColumn({ id, label, open: d.open, mode, dir, schema, settings: d.settings, journal });

  const columns = [
    onestoreColumn({ id: "onestore-memory", label: "onestore memory", backend: "memory", dir, anchors: ["raw-wasm-memory", "sqlite-wasm-memory", "better-sqlite3-memory"] }),
    onestoreColumn({ id: "onestore-file-full", label: "onestore sqlite file, durability full", backend: "sqlite", durability: "full", dir, anchors: ["raw-wasm-full", "better-sqlite3-full", "better-sqlite3-wal-full"] }),
    onestoreColumn({ id: "onestore-file-relaxed", label: "onestore sqlite file, durability relaxed", backend: "sqlite", durability: "relaxed", dir, anchors: ["raw-wasm-normal", "better-sqlite3-normal", "better-sqlite3-wal-normal"] }),
    sql("raw-wasm-memory", "raw onestore wasm SQLite, :memory:", raw, "memory"),
    sql("raw-wasm-full", "raw onestore wasm SQLite, file, synchronous=FULL", raw, "FULL"),
    sql("raw-wasm-normal", "raw onestore wasm SQLite, file, synchronous=NORMAL", raw, "NORMAL"),
    sql("sqlite-wasm-memory", "official sqlite-wasm, :memory:", sw, "memory"),
    sql("better-sqlite3-memory", "better-sqlite3, :memory:", bs, "memory"),
    sql("better-sqlite3-full", "better-sqlite3, file, synchronous=FULL", bs, "FULL"),
    sql("better-sqlite3-normal", "better-sqlite3, file, synchronous=NORMAL", bs, "NORMAL"),
    sql("better-sqlite3-wal-full", "better-sqlite3, file, WAL, synchronous=FULL", bs, "FULL", "WAL"),
    sql("better-sqlite3-wal-normal", "better-sqlite3, file, WAL, synchronous=NORMAL", bs, "NORMAL", "WAL"),
  ];
  // --columns a,b: only those (for profiling one column; the report then
  // lacks the others' anchors).
  const only = args.includes("--columns") ? args[args.indexOf("--columns") + 1].split(",") : null;
  if (only) columns.splice(0, columns.length, ...columns.filter((c) => only.includes(c.id)));
  const figures = Object.fromEntries(columns.map((c) => [c.id, {}]));

  // Workloads 1-6, interleaved: each round runs every column once (one run
  // of each workload), in an order rotated round by round, so that a drift
  // of the machine's speed during the bench falls on every column alike; the
  // figure is the median over the rounds.
  const one = { ...p, runs: 1 };
  for (let round = 0; round < p.runs; round++) {
    for (let k = 0; k < columns.length; k++) {
      const c = columns[(k + round) % columns.length];
      settle();
      mergeRun(figures[c.id], await c.main(one, log), p);
    }
  }

  // Workload 8: the memory columns grow their own table; the file columns
  // share one store file, grown stage by stage (the SQL ones use a copy, so
  // that their commits leave the store's outbox alone).
  for (const c of columns) {
    if (!c.memory) continue;
    settle();
    figures[c.id].commitAt = await c.commitAtAll(p, log);
  }
  const fixture = storeFixture(dir);
  for (const size of p.commitAt) {
    let tf = Date.now();
    await fixture.growTo(size);
    log(`fixture: ${size} rows in ${Date.now() - tf} ms`);
    fixture.makeCopy();
    for (const c of columns) {
      if (c.memory) continue;
      settle();
      (figures[c.id].commitAt ??= {})[size] = await c.commitAt(size, fixture, p, log);
    }
    fixture.dropCopy();
  }

  // Workload 7: the same file with 20k outbox records.
  let tf = Date.now();
  await fixture.addOutbox(p.openOutbox);
  log(`fixture: ${p.openOutbox} outbox records in ${Date.now() - tf} ms`);
  for (const c of columns) {
    settle();
    figures[c.id].open = await c.open(fixture, p, log);
  }

  // Workload 15: a snapshot of the same file.
  for (const c of columns) {
    settle();
    figures[c.id].snapshot = await c.snapshot(fixture, p, log);
  }

  // Workload 16: write → link message → a tab's 100 held derives. A link
  // joins a tab to its worker, so it is measured in Chromium
  // (bench/link-figures.mjs, a column source of its own).
  for (const c of columns) figures[c.id].link = na("measured in Chromium by bench/link-figures.mjs (a link joins a tab to the worker serving its store); see its columns");

  // Workload 14: the same open after an alter added a column (issue 11:
  // no slower than before), interleaved with opens of a copy from before
  // the alter; onestore's columns only.
  tf = Date.now();
  await fixture.alterAdd();
  log(`fixture: an alter add in ${Date.now() - tf} ms`);
  for (const c of columns) {
    settle();
    figures[c.id].openAltered = c.openAltered ? await c.openAltered(fixture, p, log) : na("an alter is onestore's migration; the SQL anchors have no such step");
  }
  fixture.dropAlterCopy();

  // Workload "postgres apply" (bench/lib/postgres.mjs): workload 10's
  // batches into a PostgreSQL mirror, beside plain pg statements. Measured
  // once, in the onestore memory column (the batches come from a memory
  // store; the mirror is PostgreSQL whatever the store's backend).
  {
    settle();
    const pgFigure = await postgresApplyFigure(p, log);
    for (const c of columns) {
      figures[c.id].postgresApply = c.id === "onestore-memory" ? pgFigure
        : na(c.kind === "onestore" ? "measured once, in the onestore memory column: the mirror is PostgreSQL whatever the store's backend" : "a SQLite anchor; the plain pg statements are the figure's own anchor (plainPg)");
    }
  }

  // Workload 9: download sizes.
  const dist = (f) => new URL(`dist/${f}`, root);
  const onestoreFiles = [dist("onestore-core.wasm"), dist("onestore-core.mjs"), ...browserModules(root)];
  const os1 = sizeOf(onestoreFiles);
  const wasmOnly = sizeOf([dist("onestore-core.wasm")]);
  const glue = sizeOf([dist("onestore-core.mjs")]);
  const swDir = new URL("node_modules/@sqlite.org/sqlite-wasm/dist/", root);
  const swSize = sizeOf([new URL("sqlite3.wasm", swDir), new URL("index.mjs", swDir)]);
  const bsNode = sizeOf([new URL("node_modules/better-sqlite3/build/Release/better_sqlite3.node", root)]);
  // The figure is what a production build of a web app downloads: the .wasm
  // plus every export of the browser root bundled and minified by esbuild
  // (the glue included). The source files as they are (comments and all)
  // and the bundle of an app importing only openStore are given beside it.
  const bundleAll = await bundledSize(root);
  const bundleOpen = await bundledSize(root, `export { openStore } from ${JSON.stringify(fileURLToPath(new URL("js/browser.js", root)))};`);
  const oneSize = figure(wasmOnly.gzip + bundleAll.gzip, "bytes", { per: "download, gzipped", raw: wasmOnly.raw + bundleAll.raw, gzip: wasmOnly.gzip + bundleAll.gzip, parts: { wasm: wasmOnly, bundledJs: { what: "every export of the browser root, esbuild --bundle --minify (glue included)", ...bundleAll }, bundledOpenStoreOnly: { what: "an app importing only openStore, the same build", ...bundleOpen }, unminifiedSources: { what: "the .wasm, the glue and js/ files reachable from js/browser.js as they are in the package", ...os1 }, glue, packageJs: { files: onestoreFiles.length - 2, ...sizeOf(onestoreFiles.slice(2)) } } });
  for (const c of columns) {
    if (c.kind === "onestore") figures[c.id].size = oneSize;
    else if (c.id.startsWith("raw-wasm")) figures[c.id].size = na("not downloaded: RawSqlite is only in the bench-only build (build/wasm/bench/onestore-bench.wasm, the shipped core's objects plus it)");
    else if (c.id.startsWith("sqlite-wasm")) figures[c.id].size = figure(swSize.gzip, "bytes", { per: "download, gzipped", raw: swSize.raw, gzip: swSize.gzip, parts: { files: "dist/sqlite3.wasm + dist/index.mjs" } });
    else figures[c.id].size = na(`a native addon, not downloaded (better_sqlite3.node: ${bsNode.raw} bytes, ${bsNode.gzip} gzipped)`);
  }

  // Workloads 11 and 12: export and import of an archive with blobs
  // (bench/lib/archive.mjs), on the onestore columns.
  for (const c of columns) {
    if (c.kind !== "onestore") {
      figures[c.id].export = na("an onestore archive (tar of tables, outbox and blobs): a SQL column has no such export");
      figures[c.id].import = na("an onestore archive (tar of tables, outbox and blobs): a SQL column has no such import");
      continue;
    }
    settle();
    Object.assign(figures[c.id], await archiveFigures({ id: c.id, backend: c.backend, durability: c.durability, dir, p, log }));
  }

  // Workload "nearest" (issue 15): k = 10 over 100k vectors of 384, on the
  // memory and the Node sqlite columns, beside a plain JS loop
  // (bench/lib/nearest.mjs).
  for (const c of columns) {
    if (c.id !== "onestore-memory" && c.id !== "onestore-file-relaxed") {
      figures[c.id].nearest = na(c.kind === "onestore" ? "measured on memory and on the relaxed file (the search reads, so durability changes nothing)" : "a vector search: the SQL columns have no vector type (the plain JS loop is given beside onestore's figure)");
      continue;
    }
    settle();
    Object.assign(figures[c.id], await nearestFigures({ id: c.id, backend: c.backend, durability: c.durability, dir, p, log }));
  }

  // Columns from other runtimes (Chromium, workerd), when their scripts exist.
  const sources = args.includes("--no-sources") ? [] : await externalSources(root, quick, log);

  let emcc = "unknown";
  try {
    emcc = execFileSync("emcc", ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).split("\n")[0];
  } catch { /* not installed here */ }
  const flags = readFileSync(new URL("wasm/flags.cmake", root), "utf8");
  const report = {
    format: 1,
    generated: new Date().toISOString(),
    quick,
    plan: p,
    machine: {
      cpu: os.cpus()[0]?.model ?? "unknown",
      cores: os.cpus().length,
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      os: `${os.type()} ${os.release()}`,
      loadAverage: { start: loadStart, end: os.loadavg() },
      otherWork: {
        samples: samples.length,
        samplesWithCompilersOrTests: samples.filter((x) => x.others > 0).length,
        maxAtOnce: Math.max(...samples.map((x) => x.others)),
        meanLoad1: samples.reduce((a, x) => a + x.load1, 0) / samples.length,
      },
      tmpdir: os.tmpdir(),
    },
    versions: {
      node: process.version,
      onestore: pkg.version,
      emscripten: emcc,
      wasmFlags: [...flags.matchAll(/^\s+(-O\S+|-f\S+)\s*$/gm)].map((m) => m[1]),
      sqliteInOnestore: rawVersion,
      betterSqlite3: bsPkg.version,
      betterSqlite3Sqlite: bsVersion,
      sqliteWasm: swPkg.version,
      sqliteWasmSqlite: official.version.libVersion,
    },
    columns: [
      ...columns.map((c) => ({ id: c.id, label: c.label, kind: c.kind, group: c.group, settings: c.settings, anchors: c.anchors ?? [], figures: figures[c.id] })),
      ...sources.flatMap((s) => s.columns ?? []),
    ],
    sources: sources.map((s) => ({ script: s.script, ok: s.ok, error: s.error, source: s.source, environment: s.environment })),
    seconds: Math.round((Date.now() - t0) / 1000),
    notes: args.includes("--note") ? { load: args[args.indexOf("--note") + 1] } : undefined,
  };
  clearInterval(sampler);
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, "report.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(outDir, "report.md"), toMarkdown(report));
  log(`done in ${report.seconds} s: ${join(outDir, "report.md")}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
