// Starts real workerd (Miniflare 4 from node_modules) with the test Worker of
// tests/edge/worker.js, which imports the package's workerd root
// (js/workerd.js) and, through it, dist/onestore-core.wasm as a compiled
// WebAssembly.Module: the way a deployed Worker gets it.
//
//   const w = await startWorkerd({ persist: dir });
//   const answer = await w.call("object-name", "op", { ...args });
//   await w.dispose();

import { Miniflare } from "miniflare";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** JSON with BigInt as {"$bigint":"digits"} both ways. */
export function encode(v) {
  return JSON.stringify(v, (k, x) => (typeof x === "bigint" ? { $bigint: x.toString() } : x));
}
export function decode(text) {
  return JSON.parse(text, (k, x) =>
    x !== null && typeof x === "object" && !Array.isArray(x) && Object.keys(x).length === 1 && typeof x.$bigint === "string"
      ? BigInt(x.$bigint) : x);
}

/**
 * Starts workerd. `persist`: a directory that keeps the Durable Objects'
 * SQLite files across a restart (dispose, then start again with it);
 * `script`: the Worker of tests/edge/ (its Durable Object class is
 * TestSession), worker.js by default; `sqlite: false` makes the class
 * key-value backed (no SQL), as a wrangler.toml without
 * new_sqlite_classes does.
 */
export async function startWorkerd({ persist, script = "worker.js", sqlite = true } = {}) {
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(repoRoot, "tests", "edge", script),
    modulesRoot: repoRoot,
    // The package is ES modules ("type": "module"); a .wasm import is a
    // compiled module, as wrangler does by default.
    modulesRules: [
      { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: "2025-01-01",
    compatibilityFlags: ["nodejs_compat"],
    durableObjects: { SESSION: { className: "TestSession", useSQLite: sqlite } },
    durableObjectsPersist: persist ?? false,
  });
  await mf.ready;
  return {
    mf,
    /** Runs `op` on the Durable Object named `object`; returns its result or throws its error. */
    async call(object, op, args = {}) {
      const answer = await this.raw(object, op, args);
      if (!answer.ok) {
        const e = new Error(`${op} in workerd: ${answer.code ?? ""} ${answer.message}\n${answer.stack ?? ""}`);
        e.code = answer.code;
        throw e;
      }
      return answer.result;
    },
    /** The answer `{ ok, result }` or `{ ok: false, code, message }`. */
    async raw(object, op, args = {}) {
      const res = await mf.dispatchFetch(`http://test/${encodeURIComponent(object)}/${op}`, { method: "POST", body: encode(args) });
      return decode(await res.text());
    },
    dispose: () => mf.dispose(),
  };
}
