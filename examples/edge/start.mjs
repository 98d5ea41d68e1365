// `npm run edge`: runs examples/edge/worker.js locally in workerd through
// Miniflare, with its Durable Objects' SQLite kept in .data/edge/ (delete it
// to start over; EDGE_DATA=dir to keep them elsewhere). Prints the URL
// (PORT=n to choose the port, 0 for any free one); Ctrl-C stops it.
//
// Miniflare does not bundle, so this script does what wrangler's bundler does
// for `import ... from "onestore"`: it resolves the package through the
// "workerd" condition of its package.json `exports` and hands workerd every
// module of the package, the .wasm as a compiled module (CompiledWasm).

import { Miniflare } from "miniflare";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pkgRoot = join(here, "..", "..");  // the onestore package (this repository)
const pkg = JSON.parse(readFileSync(join(pkgRoot, "package.json"), "utf8"));
const entry = pkg.exports["."].workerd;
if (!entry) throw new Error("package.json exports has no \"workerd\" condition");

// Module names are paths inside a virtual root: the worker at its top, so that
// its bare import "onestore" names the module "onestore".
const root = "/onestore-edge";
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

const port = Number(process.env.PORT || 8787);
const mf = new Miniflare({
  modulesRoot: root,
  modules,
  compatibilityDate: "2025-01-01",
  durableObjects: { SESSION: { className: "Session", useSQLite: true } },
  durableObjectsPersist: process.env.EDGE_DATA || join(pkgRoot, ".data", "edge"),
  host: "127.0.0.1",
  port,
});
const url = await mf.ready;
console.log(`onestore edge example (workerd via Miniflare) at ${url}`);
console.log(`  curl -X POST ${url}sessions/s1/notes -H 'x-actor: ana' -d '{"title":"first note"}'`);
console.log(`  curl '${url}sessions/s1/notes?limit=10'`);
console.log(`  curl '${url}sessions/s1/outbox'`);
const stop = async () => { await mf.dispose(); process.exit(0); };
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
