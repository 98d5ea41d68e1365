// Compares two checkouts of the package on one-put commits of a Node store
// file alone (durability `full` by default), interleaved round by round: each
// round opens a new file per build and times `per` commits, wall and CPU
// time. bench/compare-file-commits.mjs times its full commits right after a
// 25k-put transaction, whose writeback the syncs then wait for; this one
// times nothing else. Not part of `npm run bench`; docs/performance.md,
// "Issue 13, two statements fewer in a file commit", has what it measured.
//
//   node bench/compare-full-commits.mjs <root A> <root B> [rounds] [commits] [full|relaxed]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { loadBuild, median, ROW } from "./lib/common.mjs";

const [rootA, rootB, roundsArg, perArg, durArg] = process.argv.slice(2);
if (!rootA || !rootB) {
  console.error("usage: node bench/compare-full-commits.mjs <root A> <root B> [rounds] [commits] [full|relaxed]");
  process.exit(2);
}
const rounds = Number(roundsArg ?? 10), per = Number(perArg ?? 200), durability = durArg ?? "full";
const dir = mkdtempSync(join(tmpdir(), "onestore-compare-full-commits-"));
const load = loadBuild;
let files = 0;
async function once(b, out) {
  const store = await b.api.openStore({ backend: "sqlite", path: join(dir, `s${files++}.sqlite`), durability });
  const owner = store.object({ type: "bench" });
  const edits = owner.table(b.Edits);
  await edits.get("x");
  let n = 0;
  const c0 = process.cpuUsage(); const t0 = performance.now();
  for (let i = 0; i < per; i++) await owner.tx(async (tx) => { await tx.put(edits, ROW(n++)); });
  const wall = (performance.now() - t0) / per; const c = process.cpuUsage(c0);
  (out.wall ??= []).push(wall); (out.cpu ??= []).push((c.user + c.system) / 1000 / per);
  await store.close();
}
const builds = [await load(rootA), await load(rootB)];
const figs = [{}, {}];
await once(builds[0], {}); await once(builds[1], {});
for (let r = 0; r < rounds; r++) for (let i = 0; i < 2; i++) await once(builds[(i + r) % 2], figs[(i + r) % 2]);
for (const k of ["wall", "cpu"]) {
  const [a, b] = figs.map((f) => median(f[k]));
  console.log(`${durability} commit, ${k}: A ${a.toFixed(4)} ms, B ${b.toFixed(4)} ms, B/A ${(b / a).toFixed(2)}×`);
}
rmSync(dir, { recursive: true, force: true });
