// Workloads 11 and 12 alone (bench/lib/archive.mjs): export and import of a
// store of 100k rows and 100 MB of blobs on one onestore column, with the
// full plan's sizes, printed as JSON. For measuring the archive path without
// the whole bench (docs/performance.md, "Archives").
//
//   node --expose-gc bench/archive-rate.mjs [--column onestore-file-full|onestore-file-relaxed|onestore-memory] [--runs N] [--quick]

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { archiveFigures } from "./lib/archive.mjs";
import { plan } from "./lib/work.mjs";

const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const columns = {
  "onestore-file-full": { backend: "sqlite", durability: "full" },
  "onestore-file-relaxed": { backend: "sqlite", durability: "relaxed" },
  "onestore-memory": { backend: "memory" },
};
const id = opt("--column", "onestore-file-full");
if (!columns[id]) throw new Error(`archive-rate: --column must be one of ${Object.keys(columns).join(", ")}, got ${id}`);
const p = { ...plan(args.includes("--quick")), archiveRuns: Number(opt("--runs", 3)) };
const dir = mkdtempSync(join(tmpdir(), "onestore-archive-rate-"));
try {
  const f = await archiveFigures({ id, ...columns[id], dir, p, log: (m) => process.stderr.write(`archive-rate: ${m}\n`) });
  const show = (x) => ({ ms: Math.round(x.value), runs: x.runs.map(Math.round), mbPerSecond: Number(x.mbPerSecond.toFixed(1)) });
  console.log(JSON.stringify({ column: id, archiveBytes: f.export.archiveBytes, export: show(f.export), import: show(f.import) }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
