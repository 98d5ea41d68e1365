// `npm run edge`: runs examples/edge/worker.js locally in workerd through
// Miniflare (examples/miniflare-package.mjs, which hands workerd the
// package as wrangler's bundler would), with its Durable Objects' SQLite
// kept in .data/edge/ of the current folder (delete it to start over; EDGE_DATA=dir to keep them
// elsewhere). Prints the URL (PORT=n to choose the port, 0 for any free
// one); Ctrl-C stops it.

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { startExample } from "../miniflare-package.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const pkgRoot = join(here, "..", "..");  // the onestore package (this repository, or node_modules/onestore)
const url = await startExample({
  here,
  pkgRoot,
  root: "/onestore-edge",
  options: {
    port: Number(process.env.PORT || 8787),
    durableObjects: { SESSION: { className: "Session", useSQLite: true } },
    durableObjectsPersist: process.env.EDGE_DATA || join(process.cwd(), ".data", "edge"),
  },
});
console.log(`onestore edge example (workerd via Miniflare) at ${url}`);
console.log(`  curl -X POST ${url}sessions/s1/notes -H 'x-actor: ana' -d '{"title":"first note"}'`);
console.log(`  curl '${url}sessions/s1/notes?limit=10'`);
console.log(`  curl '${url}sessions/s1/outbox'`);
