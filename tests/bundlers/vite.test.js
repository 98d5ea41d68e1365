// Vite with no configuration builds and serves an app that installed onestore
// from its packed tarball (fixtures/app: the store in a module Worker): the
// dev server and `vite build` served from dist/, each run in real Chromium
// through the whole app scenario (app-scenario.js).

import assert from "node:assert/strict";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { build, createServer } from "vite";

import { exerciseApp } from "./app-scenario.js";
import { appInChromium, installApp, listFiles, startServer } from "./harness.js";

const env = appInChromium();

test("the Vite dev server serves the app, and the store opens, persists and fences", async () => {
  // What `npx vite` does in the app folder: no config file, no options.
  const server = await createServer({ root: env.app.dir, configFile: false, logLevel: "error", server: { host: "127.0.0.1", port: 0 } });
  try {
    await server.listen();
    const { port } = server.httpServer.address();
    const { wasm } = await exerciseApp(env.browser.context, `http://127.0.0.1:${port}/`);
    // The package's own file, though Vite pre-bundled the package's JS.
    assert.deepEqual(wasm, [`http://127.0.0.1:${port}/node_modules/onestore/dist/onestore-core.wasm`]);
  } finally {
    await server.close();
  }
});

test("vite build emits the core's .wasm once, keeps the core out of the page, and the built app works served from dist/", async () => {
  // What `npx vite build` does in the app folder.
  await build({ root: env.app.dir, configFile: false, logLevel: "error" });
  const out = join(env.app.dir, "dist");
  const files = listFiles(out);
  const emitted = files.filter((f) => f.endsWith(".wasm"));
  assert.equal(emitted.length, 1, `one .wasm among ${files.join(", ")}`);
  assert.deepEqual(readFileSync(join(out, emitted[0])), readFileSync(join(env.app.dir, "node_modules", "onestore", "dist", "onestore-core.wasm")));
  // The page only links: the core stays in the worker's chunk ("sideEffects": false).
  const page = readFileSync(join(out, readFileSync(join(out, "index.html"), "utf8").match(/src="\/([^"]+\.js)"/)[1]), "utf8");
  assert.doesNotMatch(page, /_onestore_call_room/);
  const worker = readFileSync(join(out, files.find((f) => /worker.*\.js$/.test(f))), "utf8");
  assert.match(worker, /_onestore_call_room/);
  // The worker was built with the "browser" export condition: the OPFS loader, no Node one.
  assert.match(worker, /navigator\.locks/);
  assert.doesNotMatch(worker, /node:fs/);
  const srv = await startServer({ dir: out });
  try {
    const { wasm } = await exerciseApp(env.browser.context, `${srv.url}/`);
    assert.deepEqual(wasm, [`${srv.url}/${emitted[0]}`]);
  } finally {
    await srv.close();
  }
});

test("a worker with top-level await builds with worker.format \"es\", and that app works too", async () => {
  const tla = await installApp("app");
  try {
    copyFileSync(join(tla.dir, "worker-tla.js"), join(tla.dir, "worker.js"));
    // vite.config.js: export default { worker: { format: "es" } }
    await build({ root: tla.dir, configFile: false, logLevel: "error", worker: { format: "es" } });
    const srv = await startServer({ dir: join(tla.dir, "dist") });
    try {
      await exerciseApp(env.browser.context, `${srv.url}/`);
    } finally {
      await srv.close();
    }
  } finally {
    tla.remove();
  }
});
