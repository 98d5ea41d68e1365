// webpack 5 with no configuration beyond its entry and output (and its size
// hint kept off the .wasm) builds an app that installed onestore from its
// packed tarball (fixtures/app): the worker from
// `new Worker(new URL("./worker.js", import.meta.url))` and the .wasm from the
// package's `new URL(..., import.meta.url)`, both webpack 5 built-ins. Served
// from its output folder, the app runs the whole scenario (app-scenario.js)
// in real Chromium.

import assert from "node:assert/strict";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import webpack from "webpack";

import { exerciseApp } from "./app-scenario.js";
import { appInChromium, listFiles, startServer } from "./harness.js";

const env = appInChromium();

function compile(config) {
  return new Promise((ok, fail) => {
    webpack(config, (err, stats) => {
      if (err) { fail(err); return; }
      const info = stats.toJson({ all: false, errors: true, warnings: true });
      ok(info);
    });
  });
}

test("a webpack 5 build opens the store, persists and fences", async () => {
  const out = join(env.app.dir, "out");
  // The webpack.config.js of docs/guide.md: entry, output, and the size
  // hint kept for the app's own assets (the core is ~920 KiB).
  const info = await compile({
    context: env.app.dir,
    mode: "production",
    entry: "./main.js",
    output: { path: out },
    performance: { assetFilter: (file) => !file.endsWith(".wasm") },
  });
  assert.deepEqual([...info.errors, ...info.warnings].map((e) => e.message), []);
  copyFileSync(join(env.app.dir, "index.html"), join(out, "index.html"));
  const files = listFiles(out);
  const emitted = files.filter((f) => f.endsWith(".wasm"));
  assert.equal(emitted.length, 1, `one .wasm among ${files.join(", ")}`);
  assert.deepEqual(readFileSync(join(out, emitted[0])), readFileSync(join(env.app.dir, "node_modules", "onestore", "dist", "onestore-core.wasm")));
  // The worker's chunk has the core, built with the "browser" export
  // condition (the OPFS loader, no Node one); the page's entry does not.
  const chunks = files.filter((f) => f.endsWith(".js")).map((f) => ({ f, text: readFileSync(join(out, f), "utf8") }));
  const core = chunks.filter((c) => /_onestore_call_room/.test(c.text));
  assert.equal(core.length, 1, `one chunk with the core among ${chunks.map((c) => c.f).join(", ")}`);
  assert.notEqual(core[0].f, "main.js");
  assert.match(core[0].text, /navigator\.locks/);
  assert.deepEqual(chunks.filter((c) => /node:fs/.test(c.text)).map((c) => c.f), []);
  const srv = await startServer({ dir: out });
  try {
    const { wasm } = await exerciseApp(env.browser.context, `${srv.url}/`);
    assert.deepEqual(wasm, [`${srv.url}/${emitted[0]}`]);
  } finally {
    await srv.close();
  }
});
