// `npm run relay`: runs examples/relay/worker.js locally in workerd through
// Miniflare (examples/miniflare-package.mjs, which hands workerd the
// package as wrangler's bundler would), with the sessions' Durable Objects
// kept in .data/relay/ of the current folder (delete it to start over; RELAY_DATA=dir to keep them
// elsewhere). Prints the URL (PORT=n to choose the port, 0 for any free
// one; RELAY_TOKEN=t to require a token to drive); Ctrl-C stops it.

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { startExample } from "../miniflare-package.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const pkgRoot = join(here, "..", "..");  // the onestore package (this repository, or node_modules/onestore)
const url = await startExample({
  here,
  pkgRoot,
  root: "/onestore-relay",
  options: {
    port: Number(process.env.PORT ?? 8788),
    durableObjects: { SESSIONS: { className: "Sessions", useSQLite: true } },
    durableObjectsPersist: process.env.RELAY_DATA || join(process.cwd(), ".data", "relay"),
    bindings: process.env.RELAY_TOKEN ? { RELAY_TOKEN: process.env.RELAY_TOKEN } : {},
  },
});
console.log(`onestore relay (workerd via Miniflare) at ${url}`);
console.log(`  curl ${url}sessions/s1`);
console.log(`  curl -X POST ${url}sessions/s1/lease -d '{"op":"take","device":"laptop"}'`);
console.log(`  a driver: startSync(store, { relay: "${url}sessions/" + store.id })`);
