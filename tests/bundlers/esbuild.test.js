// esbuild bundles an app that installed onestore from its packed tarball
// (fixtures/app), the way docs/guide.md says: the page and the worker as two
// entry points, the .wasm through the file loader and configureBrowserCore
// (esbuild leaves `new URL(..., import.meta.url)` alone). Served from its
// output folder, the app runs the whole scenario (app-scenario.js) in real
// Chromium.

import assert from "node:assert/strict";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import * as esbuild from "esbuild";

import { callFails, exerciseApp, openTab } from "./app-scenario.js";
import { appInChromium, listFiles, startServer } from "./harness.js";

const env = appInChromium();

test("an esbuild bundle with the .wasm file loader opens the store, persists and fences", async () => {
  // esbuild main.js worker=worker-esbuild.js --bundle --format=esm --outdir=out --loader:.wasm=file
  const result = await esbuild.build({
    absWorkingDir: env.app.dir,
    entryPoints: { main: "main.js", worker: "worker-esbuild.js" },
    bundle: true,
    format: "esm",
    outdir: "out",
    loader: { ".wasm": "file" },
    logLevel: "silent",
  });
  assert.deepEqual([...result.errors, ...result.warnings], []);
  const out = join(env.app.dir, "out");
  copyFileSync(join(env.app.dir, "index.html"), join(out, "index.html"));
  const files = listFiles(out);
  const emitted = files.filter((f) => f.endsWith(".wasm"));
  assert.equal(emitted.length, 1, `one .wasm among ${files.join(", ")}`);
  assert.deepEqual(readFileSync(join(out, emitted[0])), readFileSync(join(env.app.dir, "node_modules", "onestore", "dist", "onestore-core.wasm")));
  // The browser root alone: no Node loader, no node: module.
  const worker = readFileSync(join(out, "worker.js"), "utf8");
  assert.doesNotMatch(worker, /node:|files-node|readFile/);
  // The page only links: the core is in the worker alone ("sideEffects": false).
  assert.match(worker, /_onestore_call_room/);
  assert.doesNotMatch(readFileSync(join(out, "main.js"), "utf8"), /_onestore_call_room/);
  const srv = await startServer({ dir: out });
  try {
    const { wasm } = await exerciseApp(env.browser.context, `${srv.url}/`);
    assert.deepEqual(wasm, [`${srv.url}/${emitted[0]}`]);
  } finally {
    await srv.close();
  }
});

test("an esbuild bundle that leaves the .wasm out fails to open with the URL it tried and what to do", async () => {
  // The same app without wasm-esbuild.js: nothing emits the .wasm.
  await esbuild.build({ absWorkingDir: env.app.dir, entryPoints: ["main.js", "worker.js"], bundle: true, format: "esm", outdir: "bare", logLevel: "silent" });
  const out = join(env.app.dir, "bare");
  copyFileSync(join(env.app.dir, "index.html"), join(out, "index.html"));
  assert.deepEqual(listFiles(out).filter((f) => f.endsWith(".wasm")), []);
  const srv = await startServer({ dir: out });
  try {
    const tab = await openTab(env.browser.context, `${srv.url}/`);
    const error = await callFails(tab, "list");
    assert.equal(error.code, "storage_failed");
    assert.match(error.message, new RegExp(`cannot load the wasm core from ${srv.url}/dist/onestore-core\\.wasm: HTTP 404`));
    assert.match(error.message, /configureBrowserCore\(\{ wasmUrl \}\)/);
    await tab.close();
  } finally {
    await srv.close();
  }
  // A server that answers a missing file with its index page (a single-page
  // app's fallback, as Vite's does): before, the message was WebAssembly's
  // "expected magic word 00 61 73 6d, found 3c 21 64 6f".
  const spa = await startServer({ dir: out, fallback: "index.html" });
  try {
    const tab = await openTab(env.browser.context, `${spa.url}/`);
    const error = await callFails(tab, "list");
    assert.equal(error.code, "storage_failed");
    assert.match(error.message, new RegExp(`cannot load the wasm core from ${spa.url}/dist/onestore-core\\.wasm: the server answered an HTML page`));
    assert.match(error.message, /configureBrowserCore\(\{ wasmUrl \}\)/);
    await tab.close();
  } finally {
    await spa.close();
  }
});

test("a Node server bundled with esbuild: with onestore external it opens a store; bundled in, the open fails with storage_failed saying to keep it external", async () => {
  const { execFileSync } = await import("node:child_process");
  const { writeFileSync } = await import("node:fs");
  const server = join(env.app.dir, "server.mjs");
  writeFileSync(server, [
    'import { openStore } from "onestore";',
    "try {",
    '  const store = await openStore({ backend: "sqlite", path: process.argv[2] });',
    '  console.log(JSON.stringify({ head: store.head }));',
    "  await store.close();",
    "} catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }",
    "",
  ].join("\n"));
  const run = (outfile) => JSON.parse(execFileSync(process.execPath, [outfile, join(env.app.dir, `${outfile.slice(-8)}.sqlite`)], { encoding: "utf8" }));
  for (const [external, outfile] of [[true, join(env.app.dir, "node-out", "ext.mjs")], [false, join(env.app.dir, "node-out", "all.mjs")]]) {
    await esbuild.build({
      absWorkingDir: env.app.dir, entryPoints: [server], bundle: true, platform: "node", format: "esm",
      outfile, logLevel: "silent", external: external ? ["onestore"] : [],
    });
    const answer = run(outfile);
    if (external) assert.deepEqual(answer, { head: 0 });
    else {
      assert.equal(answer.code, "storage_failed", answer.message);
      assert.match(answer.message, /the wasm core is not in .*--external:onestore/);
    }
  }
});
