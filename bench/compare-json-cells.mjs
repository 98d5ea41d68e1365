// Two checkouts in one process, interleaved: the commit of one transaction
// of N puts on a fresh memory store, for rows whose json column holds each
// kind of value an app puts there (an object of ints, as the bench's rows;
// an object holding a fraction; a string; a number; a bool; an array), the
// two checkouts alternating round by round. Prints the median commit time a
// put (the core's commit step: the batch read, the rows stored, the outbox
// record) per shape and checkout, and their ratio.
//
//   node --expose-gc bench/compare-json-cells.mjs <checkout A> <checkout B> [N=10000] [rounds=7]
//
// Written for the fast put reader's json cells (src/writes/fast_puts.cc,
// FastCell and CanonicalJson): before 7 December only an object or array of
// integers was read straight into its cell, and any other value went the
// DOM way (docs/performance.md, "Session 52"). Figures only (no assertion).
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const roots = [process.argv[2], process.argv[3]];
if (!roots[0] || !roots[1]) {
  console.error("usage: node --expose-gc bench/compare-json-cells.mjs <checkout A> <checkout B> [N] [rounds]");
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
const row = (meta) => (i) => ({ id: keyOf(i), path: `src/dir${i % 10}/file${i}.ts`, at: i, meta: meta(i) });
const shapes = {
  "object of ints": row((i) => ({ lines: i % 7 })),
  "object with a fraction": row((i) => ({ lines: i % 7, score: (i % 1000) / 8 })),
  "string": row((i) => `note ${i}`),
  "number": row((i) => i % 97),
  "bool": row((i) => i % 2 === 0),
  "array": row((i) => [i % 7, "x", null]),
};

// One transaction of N puts on a fresh memory store: its commit step, in ms.
async function commitMs(build, make) {
  const store = await build.api.openStore({ backend: "memory" });
  const owner = store.object({ type: "bench" });
  const t = owner.table(build.T);
  await t.get("none");  // the table's declaration has committed
  globalThis.gc?.();
  let t1 = 0;
  await owner.tx(async (tx) => {
    for (let i = 0; i < N; i++) await tx.put(t, make(i));
    t1 = performance.now();
  });
  const ms = performance.now() - t1;
  await store.close();
  return ms;
}

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log(`commit of ${N} puts on a memory store, µs a put (medians of ${R} rounds; A ${roots[0]}, B ${roots[1]})`);
for (const [name, make] of Object.entries(shapes)) {
  for (const b of builds) await commitMs(b, make);  // warm both
  const runs = [[], []];
  for (let r = 0; r < R; r++) {
    const order = r % 2 === 0 ? [0, 1] : [1, 0];
    for (const k of order) runs[k].push(await commitMs(builds[k], make));
  }
  const [a, b] = runs.map((x) => (median(x) * 1000) / N);
  console.log(`${name.padEnd(24)} A ${a.toFixed(2).padStart(6)}  B ${b.toFixed(2).padStart(6)}  B/A ${(b / a).toFixed(2)}`);
}
