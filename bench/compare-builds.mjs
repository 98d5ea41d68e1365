// Compares two builds of the wasm core (say -O3 and -Oz) on a few memory
// workloads, interleaved run by run in one process so that the machine's
// load falls on both alike. Not part of `npm run bench`; it is how the size
// flags of wasm/flags.cmake were chosen (docs/performance.md).
//
//   node bench/compare-builds.mjs <repo root A> <repo root B> [runs]
//
// Each root is a checkout with js/ and dist/ (its own build). The raw SQLite
// rows use the root's RawSqlite: its bench build (build/wasm/bench/, see
// bench/lib/bench-core.mjs), or its dist/ core in a build from before
// RawSqlite left the shipped .wasm; a root with neither skips them.

import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { readFileSync } from "node:fs";

import { ROW, getKeys, median } from "./lib/common.mjs";
import { loadBenchCore } from "./lib/bench-core.mjs";

const [rootA, rootB, runsArg] = process.argv.slice(2);
if (!rootA || !rootB) {
  console.error("usage: node bench/compare-builds.mjs <root A> <root B> [runs]");
  process.exit(2);
}
const runs = Number(runsArg ?? 5);

async function load(root) {
  const base = pathToFileURL(`${resolve(root)}/`);
  const api = await import(new URL("js/index.js", base).href);
  const { loadNodeCore } = await import(new URL("js/loader-node.js", base).href);
  const wasm = readFileSync(new URL("dist/onestore-core.wasm", base));
  const Edits = api.defineTable("edits", {
    columns: { id: api.str(), path: api.str(), entry: api.int(), at: api.int(), meta: api.json() },
    key: ["id"],
    indexes: { byPath: ["path", "at"] },
  });
  const mod = await loadNodeCore();
  const rawMod = mod.RawSqlite ? mod : await loadBenchCore(base).catch(() => null);
  return { root, api, mod, rawMod, Edits, size: { raw: wasm.length, gzip: gzipSync(wasm, { level: 9 }).length } };
}

const ROWS = 20000;
async function once(b, out) {
  const { api, Edits } = b;
  const store = await api.openStore({ backend: "memory" });
  const owner = store.object({ type: "bench" });
  const edits = owner.table(Edits);
  await edits.get("x");
  let n = 0;
  let t = performance.now();
  for (let i = 0; i < 200; i++) await owner.tx(async (tx) => { await tx.put(edits, ROW(n++)); });
  (out.commit ??= []).push((performance.now() - t) / 200);
  t = performance.now();
  await owner.tx(async (tx) => { for (let i = 0; i < ROWS; i++) await tx.put(edits, ROW(n++)); });
  (out.bulk20k ??= []).push(performance.now() - t);
  const q = api.query(Edits).orderBy((e) => e.path).orderBy((e) => e.at);
  t = performance.now();
  let after;
  for (let i = 0; i < 100; i++) after = (await edits.page(q, 100, undefined, after ? { after } : undefined)).next;
  (out.page ??= []).push((performance.now() - t) / 100);
  const keys = getKeys(5000, ROWS);
  t = performance.now();
  for (const k of keys) await edits.get(k);
  (out.get ??= []).push((performance.now() - t) / keys.length);
  // The paths compiled for size (wasm/flags.cmake, ONESTORE_WASM_SIZE_SOURCES):
  // the store's fingerprint and export, and document commits and loads.
  t = performance.now();
  await store.fingerprint();
  (out.fingerprint20k ??= []).push(performance.now() - t);
  t = performance.now();
  for await (const chunk of store.export()) void chunk;
  (out.export20k ??= []).push(performance.now() - t);
  const notes = store.object({ type: "docs" });
  t = performance.now();
  let doc;
  for (let i = 0; i < 100; i++) {
    await notes.tx(async (tx) => {
      if (i === 0) doc = await tx.documents.create({ kind: "note" }, { title: "t", body: "" });
      else await tx.documents.change(doc, [{ op: "replace", path: "/body", value: "b".repeat(i) }]);
    });
  }
  (out.docCommit ??= []).push((performance.now() - t) / 100);
  t = performance.now();
  for (let i = 0; i < 100; i++) await notes.documents.load(doc);
  (out.docLoad ??= []).push((performance.now() - t) / 100);
  await store.close();

  if (!b.rawMod) return;
  const db = new b.rawMod.RawSqlite();
  db.open(":memory:");
  db.exec('CREATE TABLE t (id TEXT PRIMARY KEY, path TEXT, entry INTEGER, at INTEGER, meta TEXT) STRICT; CREATE INDEX tp ON t (path, at, id);');
  t = performance.now();
  db.exec("BEGIN");
  for (let i = 0; i < ROWS; i++) {
    const r = ROW(i);
    db.run("INSERT INTO t VALUES (?, ?, ?, ?, ?)", JSON.stringify([r.id, r.path, r.entry, r.at, JSON.stringify(r.meta)]));
  }
  db.exec("COMMIT");
  (out.rawInsert20k ??= []).push(performance.now() - t);
  t = performance.now();
  for (let i = 0; i < 200; i++) db.all("SELECT * FROM t ORDER BY path, at, id LIMIT 100 OFFSET ?", JSON.stringify([i * 10]));
  (out.rawSelect ??= []).push((performance.now() - t) / 200);
  db.close();
  db.delete();
}

const builds = [await load(rootA), await load(rootB)];
const figures = builds.map(() => ({}));
for (let r = 0; r < runs; r++) for (let i = 0; i < builds.length; i++) await once(builds[i], figures[i]);
console.log(`| workload (ms, median of ${runs}) | ${builds.map((b) => b.root).join(" | ")} | B/A |`);
console.log("|---|---:|---:|---:|");
// A workload only one build ran (the raw rows, with no RawSqlite) is left out.
for (const k of Object.keys(figures[0]).filter((key) => key in figures[1])) {
  const [a, b] = figures.map((f) => median(f[k]));
  console.log(`| ${k} | ${a.toFixed(3)} | ${b.toFixed(3)} | ${(b / a).toFixed(2)}× |`);
}
console.log(`| wasm bytes (gzip) | ${builds.map((b) => `${b.size.raw} (${b.size.gzip})`).join(" | ")} | ${(builds[1].size.gzip / builds[0].size.gzip).toFixed(2)}× |`);
