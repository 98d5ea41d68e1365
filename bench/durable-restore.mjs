// The cost of store.restore() on a durable store (docs/api.md, "Snapshots
// and restore"), for two builds of the package compared in one run: each
// round, for each build (the order rotated from round to round, so the
// machine's load falls on both alike), a fresh Durable Object is filled with
// ROWS rows of about 90 bytes, a snapshot taken, CHANGED rows updated,
// deleted and added, and then store.restore() is timed from Node (workerd's
// own clock stands still between I/O). Prints the medians with the load
// average. Not part of `npm run bench`; not a test.
//
//   node bench/durable-restore.mjs <repo root A> <repo root B> [rounds] [rows]
//
// Each root is a checkout with js/ and dist/ (its own build); the worker is
// handed to workerd with that root's package, as examples/miniflare-package.mjs does.

import { readFileSync, readdirSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";

import { Miniflare } from "miniflare";

const [rootA, rootB, roundsArg, rowsArg] = process.argv.slice(2);
if (!rootA || !rootB) {
  console.error("usage: node bench/durable-restore.mjs <root A> <root B> [rounds] [rows]");
  process.exit(2);
}
const ROUNDS = Number(roundsArg ?? 3);
const ROWS = Number(rowsArg ?? 100_000);
const CHANGED = 100;

const WORKER = `
import { openStore, defineTable, int, str } from "./js/workerd.js";
const Items = defineTable("items", { columns: { id: str(), n: int(), text: str() }, key: ["id"] });
const text = (i) => ("row " + i + " ").padEnd(70, "x");
export class Bench {
  constructor(ctx) { this.ctx = ctx; this.store = null; }
  async fetch(request) {
    const { op, rows, changed } = await request.json();
    if (!this.store) {
      this.store = await openStore({ backend: "durable", storage: this.ctx.storage });
      this.owner = this.store.object({ type: "bench" });
      this.items = this.owner.table(Items);
    }
    const { owner, items, store } = this;
    if (op === "fill") {
      for (let at = 0; at < rows; at += 5000) {
        await owner.tx(async (tx) => { for (let i = at; i < Math.min(rows, at + 5000); i++) await tx.put(items, { id: "k" + String(i).padStart(7, "0"), n: i, text: text(i) }); });
      }
      const snap = await store.snapshot({ label: "bench" });
      await owner.tx(async (tx) => {
        for (let i = 0; i < changed; i++) await tx.update(items, ["k" + String(i * 7).padStart(7, "0")], { n: -i });
        for (let i = 0; i < changed / 2; i++) await tx.delete(items, ["k" + String(rows - 1 - i * 3).padStart(7, "0")]);
        for (let i = 0; i < changed / 2; i++) await tx.put(items, { id: "new" + i, n: i, text: text(i) });
      });
      return Response.json({ snap: snap.id, head: store.head });
    }
    if (op === "restore") {
      const r = await store.restore();
      return Response.json({ seq: r.seq, count: await items.count(), ops: (await store.log({ seq: r.seq })).ops.length });
    }
    return new Response("unknown op", { status: 400 });
  }
}
export default { fetch: () => new Response("bench") };
`;

function modulesOf(root) {
  const at = (name) => join(root, name);
  const modules = [{ type: "ESModule", path: at("bench-restore-worker.js"), contents: WORKER }];
  for (const f of readdirSync(at("js")).filter((f) => f.endsWith(".js"))) {
    modules.push({ type: "ESModule", path: at(`js/${f}`), contents: readFileSync(at(`js/${f}`), "utf8") });
  }
  modules.push({ type: "ESModule", path: at("dist/onestore-core.mjs"), contents: readFileSync(at("dist/onestore-core.mjs"), "utf8") });
  modules.push({ type: "CompiledWasm", path: at("dist/onestore-core.wasm"), contents: readFileSync(at("dist/onestore-core.wasm")) });
  return modules;
}

async function start(root) {
  const mf = new Miniflare({
    modulesRoot: root,
    modules: modulesOf(root),
    compatibilityDate: "2025-01-01",
    durableObjects: { BENCH: { className: "Bench", useSQLite: true } },
  });
  await mf.ready;
  const ns = await mf.getDurableObjectNamespace("BENCH");
  return {
    mf,
    async call(object, body) {
      const stub = ns.get(ns.idFromName(object));
      const res = await stub.fetch("http://bench/", { method: "POST", body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${body.op}: ${res.status} ${await res.text()}`);
      return res.json();
    },
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const builds = [
  { name: "A", root: resolve(rootA), times: [] },
  { name: "B", root: resolve(rootB), times: [] },
];
for (const b of builds) b.w = await start(b.root);
const loads = [];
let outcome = null;
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 ? [...builds].reverse() : builds;
  for (const b of order) {
    const object = `r${round}-${b.name}`;
    await b.w.call(object, { op: "fill", rows: ROWS, changed: CHANGED });
    loads.push(loadavg()[0]);
    const t0 = performance.now();
    const r = await b.w.call(object, { op: "restore" });
    b.times.push(performance.now() - t0);
    if (outcome && (outcome.count !== r.count || outcome.ops !== r.ops)) {
      throw new Error(`the builds restore differently: ${JSON.stringify(outcome)} vs ${JSON.stringify(r)}`);
    }
    outcome = { count: r.count, ops: r.ops };
    console.error(`round ${round + 1} ${b.name}: ${(b.times.at(-1) / 1000).toFixed(2)} s`);
  }
}
for (const b of builds) await b.w.mf.dispose();
console.log(JSON.stringify({
  rows: ROWS,
  changed: outcome,
  rounds: ROUNDS,
  loadavg1: { median: Number(median(loads).toFixed(2)), min: Math.min(...loads), max: Math.max(...loads) },
  medianSeconds: Object.fromEntries(builds.map((b) => [`${b.name} ${b.root}`, Number((median(b.times) / 1000).toFixed(3))])),
  runs: Object.fromEntries(builds.map((b) => [b.name, b.times.map((t) => Number((t / 1000).toFixed(3)))])),
}, null, 2));
