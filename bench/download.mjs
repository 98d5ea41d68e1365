// The download figure of the bench's workload 9 alone, for a checkout:
// the .wasm plus the browser root bundled and minified by esbuild (the glue
// included), gzipped, as bench/run.mjs reports it. For a quick check of a
// change's bytes without a whole bench run.
//
//   node bench/download.mjs [checkout ...]     (default: this one)

import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { bundledSize, sizeOf } from "./lib/common.mjs";

const roots = process.argv.length > 2 ? process.argv.slice(2) : [new URL("..", import.meta.url).pathname];
for (const dir of roots) {
  const root = pathToFileURL(resolve(dir) + "/");
  const wasm = sizeOf([new URL("dist/onestore-core.wasm", root)]);
  const js = await bundledSize(root);
  const total = wasm.gzip + js.gzip;
  console.log(`${dir}: ${total} bytes gzipped (.wasm ${wasm.gzip} + JS ${js.gzip}); ${500000 - total} under the 500 KB (500,000 bytes) target, as bench/lib/report.mjs judges it`);
}
