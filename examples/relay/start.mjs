// `npm run relay`: runs examples/relay/worker.js locally in workerd through
// Miniflare, with the sessions' Durable Objects kept in .data/relay/ (delete
// it to start over; RELAY_DATA=dir to keep them elsewhere). Prints the URL
// (PORT=n to choose the port, 0 for any free one; RELAY_TOKEN=t to require a
// token to drive); Ctrl-C stops it.
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

const root = "/onestore-relay";
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

const port = Number(process.env.PORT ?? 8788);
const mf = new Miniflare({
  modulesRoot: root,
  modules,
  compatibilityDate: "2025-01-01",
  durableObjects: { SESSIONS: { className: "Sessions", useSQLite: true } },
  durableObjectsPersist: process.env.RELAY_DATA || join(pkgRoot, ".data", "relay"),
  bindings: process.env.RELAY_TOKEN ? { RELAY_TOKEN: process.env.RELAY_TOKEN } : {},
  host: "127.0.0.1",
  port,
});
const url = await mf.ready;
console.log(`onestore relay (workerd via Miniflare) at ${url}`);
console.log(`  curl ${url}sessions/s1`);
console.log(`  curl -X POST ${url}sessions/s1/lease -d '{"op":"take","device":"laptop"}'`);
console.log(`  a driver: startSync(store, { relay: "${url}sessions/" + store.id })`);
const stop = async () => { await mf.dispose(); process.exit(0); };
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
