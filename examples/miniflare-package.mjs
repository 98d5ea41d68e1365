// What examples/edge/start.mjs and examples/relay/start.mjs share: running an
// example Worker locally in workerd through Miniflare.
//
// Miniflare does not bundle, so this does what wrangler's bundler does for
// `import ... from "onestore"`: it resolves the package through the
// "workerd" condition of its package.json `exports` and hands workerd every
// module of the package, the .wasm as a compiled module (CompiledWasm).

import { Miniflare } from "miniflare";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * Starts the Worker `worker.js` of the folder `here` in Miniflare with the
 * onestore package of `pkgRoot` (its modules under the virtual root
 * `root`) and the other Miniflare `options`; stops it on Ctrl-C (SIGINT)
 * or SIGTERM. Resolves to the URL it serves.
 *
 * @example
 * const url = await startExample({ here, pkgRoot, root: "/onestore-edge", options: { port: 8787 } });
 */
export async function startExample({ here, pkgRoot, root, options }) {
  const pkg = JSON.parse(readFileSync(join(pkgRoot, "package.json"), "utf8"));
  const entry = pkg.exports["."].workerd;
  if (!entry) throw new Error("package.json exports has no \"workerd\" condition");

  // Module names are paths inside a virtual root: the worker at its top, so
  // that its bare import "onestore" names the module "onestore".
  const at = (name) => `${root}/${name}`;
  const modules = [
    { type: "ESModule", path: at("worker.js"), contents: readFileSync(join(here, "worker.js"), "utf8") },
    { type: "ESModule", path: at("onestore"), contents: `export * from "./node_modules/onestore/${entry.replace(/^\.\//, "")}";\n` },
  ];
  for (const f of readdirSync(join(pkgRoot, "js")).filter((f) => f.endsWith(".js"))) {
    modules.push({ type: "ESModule", path: at(`node_modules/onestore/js/${f}`), contents: readFileSync(join(pkgRoot, "js", f), "utf8") });
  }
  modules.push({ type: "ESModule", path: at("node_modules/onestore/dist/onestore-core.mjs"), contents: readFileSync(join(pkgRoot, "dist", "onestore-core.mjs"), "utf8") });
  modules.push({ type: "CompiledWasm", path: at("node_modules/onestore/dist/onestore-core.wasm"), contents: readFileSync(join(pkgRoot, "dist", "onestore-core.wasm")) });

  const mf = new Miniflare({
    modulesRoot: root,
    modules,
    compatibilityDate: "2025-01-01",
    host: "127.0.0.1",
    ...options,
  });
  const url = await mf.ready;
  const stop = async () => { await mf.dispose(); process.exit(0); };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  return url;
}
