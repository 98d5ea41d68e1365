// Two checkouts in one process, interleaved: one transaction of N bench rows
// put on a fresh memory store (after a first one of 1000), the two checkouts
// alternating round by round; prints the medians and their ratio.
//
//   node --expose-gc bench/compare-bulk.mjs <checkout A> <checkout B> [N=25000] [rounds=7]
//
// Figures only (no assertion); see docs/performance.md, "Issue 13, a second step".
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [a, b] = [process.argv[2], process.argv[3]].map((r) => (r ? pathToFileURL(resolve(r)).href : ""));
if (!a || !b) {
  console.error("usage: node --expose-gc bench/compare-bulk.mjs <checkout A> <checkout B> [N] [rounds]");
  process.exit(2);
}
const roots = { main: a, mine: b };
const N = +(process.argv[4] || 25000), R = +(process.argv[5] || 7);
const apis = {};
for (const [k, r] of Object.entries(roots)) apis[k] = await import(`${r}/js/index.js`);
const keyOf = (i) => `e${String(i).padStart(7, "0")}`;
const ROW = (i) => ({ id: keyOf(i), path: `src/dir${i % 10}/file${i}.ts`, entry: i, at: i, meta: { lines: i % 7 } });
async function once(api) {
  const { openStore, defineTable, str, int, json } = api;
  const edits = defineTable("edits", { columns: { id: str(), path: str(), entry: int(), at: int(), meta: json() }, key: ["id"], indexes: { byPath: ["path", "at"] } });
  const store = await openStore({ backend: "memory" });
  const o = store.object({ type: "bench" });
  const t = o.table(edits);
  await t.get("none");
  await o.tx(async (tx) => { for (let i = 0; i < 1000; i++) await tx.put(t, ROW(i)); });
  globalThis.gc?.();
  const t0 = performance.now();
  let tp = 0;
  await o.tx(async (tx) => { for (let i = 1000; i < 1000 + N; i++) await tx.put(t, ROW(i)); tp = performance.now() - t0; });
  const ms = performance.now() - t0;
  await store.close();
  return [ms, tp];
}
const res = { main: [], mine: [] };
for (let r = 0; r < R; r++) {
  const order = r % 2 ? ["mine", "main"] : ["main", "mine"];
  for (const k of order) res[k].push(await once(apis[k]));
}
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[(s.length - 1) >> 1]; };
for (const k of ["main", "mine"]) {
  const tot = med(res[k].map((x) => x[0])), put = med(res[k].map((x) => x[1]));
  console.log(`${k === "main" ? "A" : "B"}: ${N} puts ${tot.toFixed(1)} ms median (${(N / tot * 1000).toFixed(0)}/s), tx.put part ${put.toFixed(1)} ms, commit part ${(tot - put).toFixed(1)} ms; runs ${res[k].map((x) => x[0].toFixed(0)).join(" ")}`);
}
console.log(`ratio B/A: ${(med(res.mine.map((x) => x[0])) / med(res.main.map((x) => x[0]))).toFixed(2)}`);
