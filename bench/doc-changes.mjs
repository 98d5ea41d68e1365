// Changes of one large document (about 1.9 MB of JSON, 20,000 items) on a
// memory store: the time per change with 4 changes a commit (7 rounds of 10
// commits, the median round), the load, and one change a commit against 40
// in one. `node bench/doc-changes.mjs [root]` (root: a checkout with js/ and
// dist/, this one by default), to compare two builds.
const root = process.argv[2] ?? new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const { openStore } = await import(`${root}/js/index.js`);
const s = await openStore({ backend: "memory" });
const o = s.object({ type: "notes" });
const big = { items: Array.from({ length: 20000 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ["a", "b"], meta: { n: i, deep: { x: [i, i + 1] } } })) };
const id = await o.tx((tx) => tx.documents.create({ kind: "big" }, big));
const times = [];
for (let r = 0; r < 7; r++) {
  const t0 = performance.now();
  for (let c = 0; c < 10; c++) {
    await o.tx(async (tx) => { for (let k = 0; k < 4; k++) await tx.documents.change(id, [{ op: "replace", path: `/items/${(r * 40 + c * 4 + k) % 20000}/name`, value: `v${r}-${c}-${k}` }]); });
  }
  times.push((performance.now() - t0) / 40);
}
times.sort((a, b) => a - b);
console.log(root, "ms per change, median of 7 rounds:", times[3].toFixed(3), "min", times[0].toFixed(3));
await s.close();
{
  const s2 = await openStore({ backend: "memory" });
  const o2 = s2.object({ type: "notes" });
  const id2 = await o2.tx((tx) => tx.documents.create({ kind: "big" }, big));
  let t0 = performance.now();
  for (let i = 0; i < 10; i++) await o2.documents.load(id2);
  console.log("load ms", ((performance.now() - t0) / 10).toFixed(2));
  t0 = performance.now();
  for (let i = 0; i < 10; i++) await o2.tx((tx) => tx.documents.change(id2, [{ op: "replace", path: `/items/${i}/name`, value: "z" }]));
  console.log("1 change per commit ms", ((performance.now() - t0) / 10).toFixed(2));
  t0 = performance.now();
  await o2.tx(async (tx) => { for (let i = 0; i < 40; i++) await tx.documents.change(id2, [{ op: "replace", path: `/items/${i}/name`, value: "y" }]); });
  console.log("40 changes in one commit, ms per change", ((performance.now() - t0) / 40).toFixed(2));
  t0 = performance.now();
  JSON.parse(JSON.stringify(big));
  console.log("JS JSON round trip ms", (performance.now() - t0).toFixed(2), "bytes", JSON.stringify(big).length);
  await s2.close();
}
