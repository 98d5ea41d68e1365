// Where an opfs commit's time goes (bench/opfs-figures.mjs --profile): the
// one-row commit of opfs-worker.js, split into the time inside the OPFS
// files object (per method: calls and ms) and the rest (JS + wasm + SQLite).
import { defineTable, deleteStore, int, json, openStore, str } from "../../js/browser.js";
import { loadBrowserCore } from "../../js/loader-browser.js";

const Edits = defineTable("edits", {
  columns: { id: str(), path: str(), entry: int(), at: int(), meta: json() },
  key: ["id"],
  indexes: { byPath: ["path", "at"] },
});
const ROW = (i) => ({ id: `e${String(i).padStart(7, "0")}`, path: `src/dir${i % 50}/file${i}.ts`, entry: i, at: i, meta: { lines: i % 7 } });
const COMMITS = 300;

async function profile(durability) {
  const mod = await loadBrowserCore();
  const name = `profile-${durability}`;
  await deleteStore({ backend: "opfs", name });
  const store = await openStore({ backend: "opfs", name, durability });
  const owner = store.object({ type: "file-history" });
  const edits = owner.table(Edits);
  await edits.count();
  let n = 0;
  await owner.tx(async (tx) => { for (let i = 0; i < 1000; i++) await tx.put(edits, ROW(n++)); });
  const real = mod.onestoreFiles;
  const stats = {};
  const timed = Object.create(real);
  for (const m of ["read", "write", "sync", "size", "truncate", "exists", "open", "close", "delete"]) {
    stats[m] = { calls: 0, ms: 0 };
    timed[m] = (...args) => {
      const t0 = performance.now();
      try { return real[m](...args); } finally { stats[m].calls++; stats[m].ms += performance.now() - t0; }
    };
  }
  mod.onestoreFiles = timed;
  const t0 = performance.now();
  for (let i = 0; i < COMMITS; i++) await owner.tx(async (tx) => { await tx.put(edits, ROW(n++)); });
  const total = performance.now() - t0;
  mod.onestoreFiles = real;
  // The same commits through store.commit with prepared wire ops: no tx callback.
  const t1 = performance.now();
  for (let i = 0; i < COMMITS; i++) await store.commit([{ op: "put", table: "file-history/edits", row: ROW(n++) }]);
  const raw = performance.now() - t1;
  await store.close();
  await deleteStore({ backend: "opfs", name });
  const files = Object.fromEntries(Object.entries(stats).filter(([, s]) => s.calls).map(([m, s]) => [m, { perCommit: s.calls / COMMITS, msPerCommit: s.ms / COMMITS }]));
  const inFiles = Object.values(stats).reduce((a, s) => a + s.ms, 0) / COMMITS;
  return { durability, msPerCommit: total / COMMITS, msInFiles: inFiles, msPerStoreCommit: raw / COMMITS, files };
}

self.onmessage = async () => {
  try {
    self.postMessage({ ok: true, rows: [await profile("relaxed"), await profile("full")] });
  } catch (e) {
    self.postMessage({ ok: false, error: String(e?.stack ?? e) });
  }
};
