// The workerd side of the edge benchmarks (bench/edge-figures.mjs,
// bench/edge-ab.mjs): one Miniflare running a package tree's
// bench/edge-worker.js with SQLite Durable Objects on disk, a phase of that
// worker on one fresh object, and the one-put commit timed by Node's clock.

import { join } from "node:path";

import { Miniflare } from "miniflare";

// A Miniflare serving <root>/bench/edge-worker.js (its js/ and dist/ from the
// same tree), its objects persisted under `persist` like a deployed object's.
export function startBenchWorker(root, persist) {
  return new Miniflare({
    modules: true,
    scriptPath: join(root, "bench", "edge-worker.js"),
    modulesRoot: root,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: "2025-01-01",
    durableObjects: { BENCH: { className: "Bench", useSQLite: true } },
    durableObjectsPersist: persist,
  });
}

// One phase of bench/edge-worker.js ("main", "read", "replay", "fixture")
// for `impl` ("store" or "raw") on the object named `object`; `body` is the
// request's JSON ({ W, batches }). Answers the worker's figures.
export async function runPhase(mf, phase, impl, object, body) {
  const res = await mf.dispatchFetch(`http://bench/run?${new URLSearchParams({ phase, impl, object })}`, {
    method: "POST",
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`workerd ${phase}/${impl} on ${object}: ${res.status} ${await res.text()}`);
  return res.json();
}

// The one-put commit in ms, by Node's clock. workerd's clock does not move
// inside a request that does no I/O (a Durable Object's SQL is synchronous),
// so a batch of commits timed inside the worker reads 0 or one coarse step:
// this times a "main" request of `commits` commits, less one of none, each on
// a fresh object (so both pay the open and the first declaration).
export async function commitWall(mf, impl, W, commits, name) {
  return requestWall(mf, impl, W, "commitsBatch", commits, name);
}

// The transaction of W.edgeBulk puts in ms, by Node's clock, the same way:
// a "main" request of `txs` such transactions (and no one-put commits) less
// one of none, each on a fresh object.
export async function bulkWall(mf, impl, W, txs, name) {
  return requestWall(mf, impl, W, "bulkRuns", txs, `bulk-${name}`);
}

// A request of `n` of what `field` of W counts (the rest of the "main"
// phase's work turned off) less one of none, per unit, in ms.
async function requestWall(mf, impl, W, field, n, name) {
  const wall = async (k) => {
    const t0 = performance.now();
    await runPhase(mf, "main", impl, `wall-${k}-${name}`, { W: { ...W, commitsBatch: 0, bulkRuns: 0, [field]: k } });
    return performance.now() - t0;
  };
  const none = await wall(0);
  return (await wall(n) - none) / n;
}
