// Two checkouts in one process, interleaved: the commit of one transaction
// of N ops on a fresh memory store, for each shape of op an app commits in
// bulk: puts of rows whose json column holds each kind of value (an object
// of ints, as the bench's rows; an object holding a fraction; a string; a
// number; a bool; an array), and updates (a value, an expression) and
// deletes by key of N rows put before. The two checkouts alternate round
// by round. Prints the median commit time an op (the core's commit step:
// the batch read, the rows stored, the outbox record) per shape and
// checkout, and their ratio.
//
//   node --expose-gc bench/compare-commit-shapes.mjs <checkout A> <checkout B> [N=10000] [rounds=7]
//
// Written for the batch reader (src/writes/fast_puts.cc): before 7
// December a json cell was read straight into its cell only as an object
// or array of integers, and every update and delete went the DOM way
// (docs/performance.md, "Session 52"). Figures only (no assertion).
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const roots = [process.argv[2], process.argv[3]];
if (!roots[0] || !roots[1]) {
  console.error("usage: node --expose-gc bench/compare-commit-shapes.mjs <checkout A> <checkout B> [N] [rounds]");
  process.exit(2);
}
const N = +(process.argv[4] || 10000), R = +(process.argv[5] || 7);
const builds = [];
for (const root of roots) {
  const api = await import(pathToFileURL(`${resolve(root)}/js/index.js`).href);
  const { defineTable, str, int, json } = api;
  builds.push({ root, api, T: defineTable("cells", { columns: { id: str(), path: str(), at: int(), meta: json() }, key: ["id"] }) });
}
const keyOf = (i) => `e${String(i).padStart(7, "0")}`;
const row = (meta, i) => ({ id: keyOf(i), path: `src/dir${i % 10}/file${i}.ts`, at: i, meta: meta(i) });
const put = (meta) => ({ op: (api, tx, t, i) => tx.put(t, row(meta, i)) });
const onRows = (op) => ({ fill: true, op });  // on N rows put before
const shapes = {
  "put, an object of ints": put((i) => ({ lines: i % 7 })),
  "put, an object with a fraction": put((i) => ({ lines: i % 7, score: (i % 1000) / 8 })),
  "put, a string": put((i) => `note ${i}`),
  "put, a number": put((i) => i % 97),
  "put, a bool": put((i) => i % 2 === 0),
  "put, an array": put((i) => [i % 7, "x", null]),
  "update by key, a value": onRows((api, tx, t, i) => tx.update(t, [keyOf(i)], { at: i + 1 })),
  "update by key, an expression": onRows((api, tx, t, i) => tx.update(t, [keyOf(i)], { at: api.add(api.col("at"), 1) })),
  "delete by key": onRows((api, tx, t, i) => tx.delete(t, [keyOf(i)])),
};

// One transaction of N ops on a fresh memory store: its commit step, in ms.
async function commitMs(build, shape) {
  const store = await build.api.openStore({ backend: "memory" });
  const owner = store.object({ type: "bench" });
  const t = owner.table(build.T);
  await t.get("none");  // the table's declaration has committed
  if (shape.fill) await owner.tx(async (tx) => { for (let i = 0; i < N; i++) await tx.put(t, row(() => ({}), i)); });
  globalThis.gc?.();
  let t1 = 0;
  await owner.tx(async (tx) => {
    for (let i = 0; i < N; i++) await shape.op(build.api, tx, t, i);
    t1 = performance.now();
  });
  const ms = performance.now() - t1;
  await store.close();
  return ms;
}

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log(`commit of ${N} ops on a memory store, µs an op (medians of ${R} rounds; A ${roots[0]}, B ${roots[1]})`);
for (const [name, shape] of Object.entries(shapes)) {
  for (const b of builds) await commitMs(b, shape);  // warm both
  const runs = [[], []];
  for (let r = 0; r < R; r++) {
    const order = r % 2 === 0 ? [0, 1] : [1, 0];
    for (const k of order) runs[k].push(await commitMs(builds[k], shape));
  }
  const [a, b] = runs.map((x) => (median(x) * 1000) / N);
  console.log(`${name.padEnd(32)} A ${a.toFixed(2).padStart(6)}  B ${b.toFixed(2).padStart(6)}  B/A ${(b / a).toFixed(2)}`);
}
