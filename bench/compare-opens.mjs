// Two checkouts in one process, interleaved: the open of a Node store file
// and its first get, then its close, the checkouts alternating run by run,
// with better-sqlite3 opening the same file as an anchor; prints the medians
// and the ratios.
//
//   node bench/compare-opens.mjs <checkout A> <checkout B> [rounds=7] [full|relaxed] [rows=100000] [commits=2000]
//
// The file is built once (by checkout A) with `rows` bench rows put in
// `commits` commits, so that it holds that many outbox records, and each
// checkout opens a copy of its own. A round opens and closes each copy 10
// times (after one open that is not timed). Workload 7 of `npm run bench`
// does the same on a 1M-row file, one checkout at a time; this script is
// the A/B of docs/performance.md, "Issue 13, the open and close of a Node
// store file".
//
// better-sqlite3 opens the copy read-write, reads the row by key and closes
// (the file is in rollback-journal mode when the store is closed, so a plain
// open takes no mode switch). Figures only (no assertion).
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { OWNER, TABLE, getKeys, loadBuild, median } from "./lib/common.mjs";
import { fill } from "./lib/onestore-column.mjs";
import { betterSqlite } from "./lib/drivers.mjs";

const [rootA, rootB] = [process.argv[2], process.argv[3]];
if (!rootA || !rootB) {
  console.error("usage: node bench/compare-opens.mjs <checkout A> <checkout B> [rounds] [full|relaxed] [rows] [commits]");
  process.exit(2);
}
const R = +(process.argv[4] || 7);
const durability = process.argv[5] || "full";
const ROWS = +(process.argv[6] || 100000), COMMITS = +(process.argv[7] || 2000);
const PER_ROUND = 10;

const builds = { A: await loadBuild(rootA), B: await loadBuild(rootB) };
const dir = mkdtempSync(join(tmpdir(), "compare-opens-"));
const fixture = join(dir, "fixture.sqlite");

{
  const { api, Edits } = builds.A;
  const store = await api.openStore({ backend: "sqlite", path: fixture, durability: "relaxed" });
  const owner = store.object({ type: OWNER });
  const per = Math.ceil(ROWS / COMMITS);  // one commit each (fewer than fill's chunk)
  for (let at = 0; at < ROWS; at += per) await fill(owner, owner.table(Edits), at, Math.min(ROWS, at + per));
  await store.close();
}
const files = {};
for (const name of ["A", "B", "native"]) copyFileSync(fixture, (files[name] = join(dir, `${name}.sqlite`)));

const keys = getKeys(PER_ROUND + 1, ROWS);
const GET = `SELECT * FROM "${TABLE}" WHERE id = ?`;

async function openOnce(name, key) {
  if (name === "native") {
    const t0 = performance.now();
    const db = betterSqlite(files.native);
    if (db.all(GET, [key]).length !== 1) throw new Error(`native: ${key} not in the file`);
    const t1 = performance.now();
    db.close();
    return [t1 - t0, performance.now() - t1];
  }
  const { api, Edits } = builds[name];
  const t0 = performance.now();
  const store = await api.openStore({ backend: "sqlite", path: files[name], durability });
  if ((await store.object({ type: OWNER }).table(Edits).get(key)) === undefined) throw new Error(`${name}: ${key} not in the file`);
  const t1 = performance.now();
  await store.close();
  return [t1 - t0, performance.now() - t1];
}

const order = ["A", "B", "native"];
const runs = { A: { open: [], close: [] }, B: { open: [], close: [] }, native: { open: [], close: [] } };
for (const name of order) await openOnce(name, keys[PER_ROUND]);  // the page cache, the JIT
for (let round = 0; round < R; round++) {
  const rotated = order.slice(round % 3).concat(order.slice(0, round % 3));
  for (let i = 0; i < PER_ROUND; i++) {
    for (const name of rotated) {
      const [open, close] = await openOnce(name, keys[i]);
      runs[name].open.push(open);
      runs[name].close.push(close);
    }
  }
}
rmSync(dir, { recursive: true, force: true });

const m = (name, what) => median(runs[name][what]);
console.log(`${ROWS} rows, ${COMMITS} outbox records, durability ${durability}, ${R} rounds of ${PER_ROUND} opens each`);
for (const what of ["open", "close"]) {
  const [a, b, n] = [m("A", what), m("B", what), m("native", what)];
  console.log(`${what.padEnd(5)} A ${a.toFixed(2)} ms  B ${b.toFixed(2)} ms  B/A ${(b / a).toFixed(2)}x  ` +
    `better-sqlite3 ${n.toFixed(3)} ms  A/native ${(a / n).toFixed(1)}x  B/native ${(b / n).toFixed(1)}x`);
}
