// Workload "nearest" (issue 15): k = 10 nearest rows by cosine distance over
// `p.nearestRows` vectors of `p.nearestDims` float32 (100,000 of 384 in the
// full plan), on the onestore columns, beside a brute-force loop in plain JS
// over the same Float32Arrays (the same top 10 by the same order, in double
// arithmetic). Each run searches with a new query vector; the figure is the
// median time of one `nearest` call.

import { join } from "node:path";

import * as api from "../../js/index.js";
import { figure, median, now } from "./common.mjs";

const OWNER = "bench-vectors";

// A deterministic pseudo-random vector (xorshift32), values in [-1, 1).
function vectorOf(seed, dims) {
  let x = (seed * 2654435761) >>> 0 || 1;
  const v = new Float32Array(dims);
  for (let i = 0; i < dims; i++) {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    v[i] = (x / 2 ** 32) * 2 - 1;
  }
  return v;
}

// The plain JS anchor: cosine distance of every vector, the 10 best kept in a
// small sorted array (ties by index, which is key order here).
function bruteForce(vectors, q, k) {
  let qq = 0;
  for (let i = 0; i < q.length; i++) qq += q[i] * q[i];
  const best = [];
  for (let r = 0; r < vectors.length; r++) {
    const v = vectors[r];
    let dot = 0;
    let vv = 0;
    for (let i = 0; i < v.length; i++) {
      dot += q[i] * v[i];
      vv += v[i] * v[i];
    }
    const d = qq === 0 || vv === 0 ? 1 : 1 - dot / (Math.sqrt(qq) * Math.sqrt(vv));
    if (best.length === k && d >= best[k - 1][0]) continue;
    let at = best.length;
    while (at > 0 && best[at - 1][0] > d) at--;
    best.splice(at, 0, [d, r]);
    if (best.length > k) best.pop();
  }
  return best;
}

/**
 * { nearest } figure of one onestore column's backend, with the plain JS
 * loop's time beside it (`plainJsMs`).
 * @example const f = await nearestFigures({ id, backend: "memory", dir, p, log });
 */
export async function nearestFigures({ id, backend, durability, dir, p, log }) {
  const rows = p.nearestRows;
  const dims = p.nearestDims;
  const Vectors = api.defineTable("vectors", { columns: { id: api.str(), embedding: api.vector(dims) }, key: ["id"] });
  const path = backend === "sqlite" ? join(dir, `${id}-nearest.sqlite`) : undefined;
  const open = (extra = {}) => api.openStore({ backend, durability, ...(path ? { path } : {}), ...extra });
  let store = await open();
  let table = store.object({ type: OWNER }).table(Vectors);
  const vectors = [];
  let t0 = now();
  for (let from = 0; from < rows; from += 5000) {
    await store.object({ type: OWNER }).tx(async (tx) => {
      for (let i = from; i < Math.min(from + 5000, rows); i++) {
        const v = vectorOf(i + 1, dims);
        vectors.push(v);
        await tx.put(table, { id: `v${String(i).padStart(7, "0")}`, embedding: v });
      }
    });
  }
  log(`${id}: ${rows} vectors of ${dims} written in ${Math.round(now() - t0)} ms`);
  // A sqlite file keeps the searched column in the core (the vector cache,
  // docs/architecture.md): its first search reads every row and builds it.
  t0 = now();
  await table.nearest((e) => e.embedding, vectorOf(999999, dims), p.nearestK);  // warm-up
  const firstMs = now() - t0;
  const runs = [];
  const plain = [];
  let agree = true;
  for (let r = 0; r < p.nearestRuns; r++) {
    const q = vectorOf(1000000 + r, dims);
    t0 = now();
    const hits = await table.nearest((e) => e.embedding, q, p.nearestK, { metric: "cosine" });
    runs.push(now() - t0);
    t0 = now();
    const best = bruteForce(vectors, q, p.nearestK);
    plain.push(now() - t0);
    // float32 sums against double ones: the same rows, unless two are within rounding.
    agree &&= hits.map((h) => h.row.id).join() === best.map(([, i]) => `v${String(i).padStart(7, "0")}`).join();
  }
  const extra = {};
  if (path) {
    // The same searches with the cache off (vectorCache: 0, every row read
    // through SQLite: the figure before the cache), rounds interleaved with
    // the cached store's, the same answers asked for.
    const cache = store.vectorCache();
    const uncached = [];
    const cached = [];
    for (let round = 0; round < 2; round++) {
      for (const off of round % 2 ? [false, true] : [true, false]) {
        await store.close();
        store = await open(off ? { vectorCache: 0 } : {});
        table = store.object({ type: OWNER }).table(Vectors);
        await table.nearest((e) => e.embedding, vectorOf(999999, dims), p.nearestK);  // warm-up (builds the cache)
        for (let r = 0; r < Math.max(2, Math.ceil(p.nearestRuns / 4)); r++) {
          const q = vectorOf(2000000 + r, dims);
          t0 = now();
          await table.nearest((e) => e.embedding, q, p.nearestK, { metric: "cosine" });
          (off ? uncached : cached).push(now() - t0);
        }
      }
    }
    Object.assign(extra, { firstMs, cacheBytes: cache.bytes, uncachedMs: median(uncached), uncachedRuns: uncached, cachedInterleavedMs: median(cached), cachedInterleavedRuns: cached });
    log(`${id}: nearest ${median(runs).toFixed(1)} ms from the cache (${(cache.bytes / 1e6).toFixed(0)} MB), ${median(uncached).toFixed(1)} ms without (interleaved: ${median(cached).toFixed(1)} ms with); the first search ${firstMs.toFixed(0)} ms`);
  }
  await store.close();
  return {
    nearest: figure(median(runs), "ms", { runs, rows, dims, k: p.nearestK, plainJsMs: median(plain), plainJsRuns: plain, sameRowsAsPlainJs: agree, ...extra }),
  };
}
