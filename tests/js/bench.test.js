// `npm run bench` in its quick mode (tiny sizes, one run): checks that the
// benchmark works end to end and that its report is well formed: every
// workload of issue 5 in every column, every figure a finite positive number
// (or n/a with a reason), the targets evaluated. Never a speed.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { mergeRun } from "../../bench/lib/common.mjs";
import { WORKLOADS, targets } from "../../bench/lib/report.mjs";
import { externalSources } from "../../bench/lib/sources.mjs";
import { tempDir } from "./helpers.js";

const root = new URL("../../", import.meta.url);
const COLUMNS = [
  "onestore-memory", "onestore-file-full", "onestore-file-relaxed",
  "raw-wasm-memory", "raw-wasm-full", "raw-wasm-normal",
  "sqlite-wasm-memory", "better-sqlite3-memory", "better-sqlite3-full", "better-sqlite3-normal",
  "better-sqlite3-wal-full", "better-sqlite3-wal-normal",
];

function checkFigure(f, where) {
  assert.ok(f && typeof f === "object", `${where}: missing`);
  if (f.na !== undefined) {
    assert.equal(typeof f.na, "string", `${where}: n/a without a reason`);
    assert.ok(f.na.length > 10, `${where}: n/a without a reason`);
    return;
  }
  assert.ok(Number.isFinite(f.value) && f.value > 0, `${where}: ${f.value} is not a finite positive number`);
  assert.equal(typeof f.unit, "string", `${where}: no unit`);
  for (const [k, v] of Object.entries(f)) {
    if (typeof v === "number") assert.ok(Number.isFinite(v) && v > 0, `${where}.${k}: ${v}`);
  }
}

test("npm run bench -- --quick writes a well-formed report.md and report.json", { timeout: 300_000 }, () => {
  const out = tempDir("onestore-bench-test-");
  const r = spawnSync(process.execPath, [fileURLToPath(new URL("bench/run.mjs", root)), "--quick", "--no-sources", "--out", out], { encoding: "utf8" });
  assert.equal(r.status, 0, `the bench failed:\n${r.stderr}`);
  const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8"));
  assert.equal(report.quick, true);
  assert.deepEqual(report.columns.map((c) => c.id), COLUMNS);
  for (const key of ["node", "onestore", "sqliteInOnestore", "betterSqlite3", "sqliteWasm"]) assert.ok(report.versions[key], `versions.${key}`);
  assert.ok(report.machine.cores > 0 && report.machine.cpu);
  const sizes = report.plan.commitAt;
  assert.equal(sizes.length, 3);
  for (const c of report.columns) {
    for (const w of WORKLOADS) {
      if (w.id === "commitAt") for (const s of sizes) checkFigure(c.figures.commitAt?.[s], `${c.id}.commitAt[${s}]`);
      else checkFigure(c.figures[w.id], `${c.id}.${w.id}`);
    }
    for (const a of c.anchors) assert.ok(COLUMNS.includes(a), `${c.id}: unknown anchor ${a}`);
  }
  // The measured work is what the issue names: rows really renamed, pages
  // full, the onestore columns' sizes measured, file columns really opened.
  for (const id of ["onestore-memory", "onestore-file-full", "onestore-file-relaxed"]) {
    const f = report.columns.find((c) => c.id === id).figures;
    assert.equal(f.rename.rows, report.plan.readRows / 10);
    assert.ok(f.rename.outboxBytes > 50);
    assert.ok(f.size.gzip < f.size.raw);
    assert.ok(f.bulk.putsPerSecond > 0 && f.replay.rowChangesPerSecond > 0);
    assert.ok(f.replica.rowChangesPerSecond > 0 && f.replica.batches === report.plan.replicaCommits / report.plan.replicaBatch + 1);
    assert.ok(f.docLoad.value > 0 && f.docLoad.pastLoadMs > 0 && f.docLoad.pastSeq > 1, "workload 13 loads a document now and at a past seq");
  }
  assert.ok(report.columns.find((c) => c.id === "onestore-file-full").figures.open.value > 0);
  assert.ok(report.columns.find((c) => c.id === "onestore-memory").figures.open.na);
  const snap = report.columns.find((c) => c.id === "onestore-file-full").figures.snapshot;
  assert.ok(snap.value > 0 && snap.rows === report.plan.commitAt.at(-1) && snap.bytes > 4096, "workload 15 snapshots the fixture file");

  for (const id of ["onestore-memory", "onestore-file-relaxed"]) {
    const f = report.columns.find((c) => c.id === id).figures.nearest;
    assert.ok(f.value > 0 && f.plainJsMs > 0 && f.rows === report.plan.nearestRows && f.k === 10, `${id}: the nearest workload searched the vectors`);
  }
  const ts = targets(report);
  for (const id of ["commitVsRaw", "commitVsOfficial", "vsNative.commit", "memoryPuts", "rename", "renameBytes", "page", "get", "commitAt", "open", "size", "replicaRate", "vsNative.replica", "archive.export", "archive.import", "docLoad", "openAltered", "walCommit", "walBulk", "walGet", "snapshot", "nearest"]) {
    assert.ok(ts.some((t) => t.id === id), `target ${id} not evaluated`);
  }
  for (const t of ts) assert.ok(Number.isFinite(t.value) && typeof t.ok === "boolean", `${t.id}: ${t.value}`);

  const md = readFileSync(join(out, "report.md"), "utf8");
  for (const c of report.columns) assert.ok(md.includes(c.label), `report.md lacks ${c.label}`);
  for (const w of WORKLOADS) assert.ok(md.includes(w.n === undefined ? `| ${w.id}` : `${w.n}. `), `report.md lacks workload ${w.n ?? w.id}`);
  assert.match(md, /journal_mode=TRUNCATE/);
  assert.match(md, /journal_mode=WAL/);
  // The WAL anchors really ran in WAL mode.
  for (const id of ["better-sqlite3-wal-full", "better-sqlite3-wal-normal"]) {
    assert.equal(report.columns.find((c) => c.id === id).settings.journal_mode, "WAL");
  }
  assert.match(md, /synchronous=FULL/);
  assert.match(md, /## Targets/);
  assert.doesNotMatch(md, /NaN|undefined|Infinity/);
});

test("a column's figures over the rounds are medians, its side figures too (not the first, cold round's)", () => {
  const p = { bulk: 25000 };
  const col = {};
  // Three rounds of workload 2 as the memory column gives them: the first
  // one cold (slow), with its plain-JS loops beside it.
  const rounds = [[120, 40, 70], [60, 6, 45], [50, 5, 40]];
  for (const [value, loop, map] of rounds) {
    mergeRun(col, { bulk: { value, unit: "ms", runs: [value], putsPerSecond: p.bulk / (value / 1000), callerLoopMs: loop, callerLoopRuns: [loop], jsMapMs: map, jsMapRuns: [map] } }, p);
  }
  assert.deepEqual(col.bulk.runs, [120, 60, 50]);
  assert.equal(col.bulk.value, 60);
  assert.equal(col.bulk.putsPerSecond, 25000 / 0.06);
  assert.deepEqual(col.bulk.callerLoopRuns, [40, 6, 5]);
  assert.equal(col.bulk.callerLoopMs, 6);
  assert.equal(col.bulk.jsMapMs, 45);
  // A figure's first round is copied, not kept by reference.
  const first = { bulk: { value: 1, unit: "ms", runs: [1], xMs: 1, xRuns: [1] } };
  const other = {};
  mergeRun(other, first, p);
  mergeRun(other, { bulk: { value: 3, unit: "ms", runs: [3], xMs: 3, xRuns: [3] } }, p);
  assert.deepEqual(first.bulk.xRuns, [1]);
  assert.deepEqual(other.bulk.xRuns, [1, 3]);
});

test("a column source script is included when well formed, reported when not", async () => {
  const dir = tempDir("onestore-bench-sources-");
  const good = join(dir, "good.mjs");
  const bad = join(dir, "bad.mjs");
  const failing = join(dir, "failing.mjs");
  const column = { id: "chromium-onestore-opfs", label: "onestore OPFS (Chromium)", kind: "onestore", anchors: ["chromium-sahpool"], figures: { commit: { value: 0.5, unit: "ms", per: "commit" } } };
  writeFileSync(good, `console.log("progress"); console.log(JSON.stringify({ source: "chromium", environment: { browser: "x" }, columns: [${JSON.stringify(column)}], quick: process.argv.includes("--quick") }));`);
  writeFileSync(bad, `console.log(JSON.stringify({ columns: [{ id: 1 }] }));`);
  writeFileSync(failing, `console.error("no browser"); process.exit(3);`);
  const logs = [];
  const sources = await externalSources(root, true, (m) => logs.push(m), [good, bad, failing, join(dir, "missing.mjs")]);
  assert.equal(sources.length, 3);
  assert.equal(sources[0].ok, true);
  assert.equal(sources[0].columns[0].id, "chromium-onestore-opfs");
  assert.equal(sources[0].columns[0].group, "chromium");
  assert.equal(sources[1].ok, false);
  assert.match(sources[1].error, /kind/);
  assert.equal(sources[2].ok, false);
  assert.match(sources[2].error, /exited with 3.*no browser/);
});

test("the real Chromium and workerd column sources give well-formed columns", { timeout: 300_000 }, async () => {
  const logs = [];
  const sources = await externalSources(root, true, (m) => logs.push(m));
  assert.deepEqual(sources.map((s) => s.script), ["bench/opfs-figures.mjs", "bench/edge-figures.mjs", "bench/link-figures.mjs"]);
  // The link source: onestore's columns only (no other engine has links),
  // each with a p50 and a p99 over its writes.
  const link = sources[2];
  assert.equal(link.ok, true, `${link.script}: ${link.error}\n${logs.join("\n")}`);
  // Two shapes: the written derive alone dirty, and all 100 dirty.
  assert.deepEqual(link.columns.map((c) => c.id), ["chromium-link-memory", "chromium-link-opfs-full", "chromium-link-opfs-relaxed", "chromium-link-opfs-full-by-an-index", "chromium-link-memory-all-dirty", "chromium-link-opfs-full-all-dirty"]);
  for (const c of link.columns) {
    const f = c.figures.link;
    checkFigure(f, `${c.id}.link`);
    assert.ok(f.p50 > 0 && f.p99 >= f.p50 && f.writes > 0 && f.derives === 100, `${c.id}.link: ${JSON.stringify(f)}`);
    assert.equal(f.dirty, c.id.endsWith("-all-dirty") ? 100 : 1, `${c.id}.link.dirty`);
    // The floor beside it: bare round trips to an echoing worker, as many
    // as the judged writes (the quick mode has no later writes: no warm).
    assert.equal(f.floor.flushBytes, c.id.startsWith("chromium-link-opfs-full") ? 16384 : 0, `${c.id}.link.floor.flushBytes`);
    assert.ok(f.floor.writes === f.writes && f.floor.p50 > 0 && f.floor.p99 >= f.floor.p50 && f.floor.max >= f.floor.p99, `${c.id}.link.floor: ${JSON.stringify(f.floor)}`);
    assert.equal(f.warm, undefined, `${c.id}.link.warm in the quick mode`);
  }
  // The report judges the first writes and prints the floor beside them.
  const goals = targets({ columns: link.columns, plan: { commitAt: [] } }).filter((t) => t.id === "link");
  assert.equal(goals.length, link.columns.length);
  for (const g of goals) {
    const flushes = g.subject.startsWith("chromium-link-opfs-full");
    assert.match(g.shown, new RegExp(`; a round trip to a worker that ${flushes ? "writes and flushes 16 KiB to OPFS before it answers" : "only echoes"}, paced the same: p50 [0-9.]+ .s, p99 [0-9.]+ .s$`), g.subject);
  }
  for (const s of sources.slice(0, 2)) {
    assert.equal(s.ok, true, `${s.script}: ${s.error}\n${logs.join("\n")}`);
    const ids = new Set(s.columns.map((c) => c.id));
    assert.ok(s.columns.some((c) => c.kind === "onestore") && s.columns.some((c) => c.kind === "anchor"), `${s.script}: onestore and anchor columns`);
    for (const c of s.columns) {
      for (const a of c.anchors) assert.ok(ids.has(a), `${c.id}: unknown anchor ${a}`);
      for (const w of ["commit", "bulk", "get"]) checkFigure(c.figures[w], `${c.id}.${w}`);
      for (const [w, f] of Object.entries(c.figures)) {
        // commitAt is keyed by the row count, each entry a figure.
        if (w === "commitAt" && f.na === undefined) {
          assert.ok(Object.keys(f).length > 0, `${c.id}.commitAt: no sizes`);
          for (const [size, g] of Object.entries(f)) checkFigure(g, `${c.id}.commitAt[${size}]`);
        } else checkFigure(f, `${c.id}.${w}`);
      }
    }
  }
  assert.deepEqual(sources.map((s) => s.source), ["chromium", "workerd", "chromium-link"]);
});
