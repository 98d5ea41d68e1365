// The browser loader's wasm URL when the module runs from a blob: URL (a
// worker inlined by Vite's `?worker&inline`): no relative URL resolves
// against it, and the open rejected with a bare TypeError ("Failed to
// construct 'URL': Invalid URL") instead of a StoreError saying what to do.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startHarness } from "./harness.js";

test("loaded from a blob: URL, the loader fails with storage_failed naming the wasm URL, its base and configureBrowserCore", async () => {
  const h = await startHarness();
  try {
    const page = await h.newPage("/tests/browser/pages/smoke.html");
    const got = await page.evaluate(async () => {
      // js/loader-browser.js as a bundler would inline it: its own code at a
      // blob: URL, its imports resolved to the served files.
      const base = new URL("/js/", location.href).href;
      const text = (await (await fetch("/js/loader-browser.js")).text())
        .replace(/from "\.\.\/dist\//g, `from "${new URL("/dist/", location.href).href}`)
        .replace(/from "\.\//g, `from "${base}`);
      const url = URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
      const { loadBrowserCore } = await import(url);
      try {
        await loadBrowserCore();
        return { loaded: true };
      } catch (e) {
        return { name: e?.name, code: e?.code, message: String(e?.message ?? e), url };
      }
    });
    assert.equal(got.code, "storage_failed", JSON.stringify(got));
    assert.equal(got.name, "StoreError", JSON.stringify(got));
    assert.ok(got.message.includes("../dist/onestore-core.wasm"), got.message);
    assert.ok(got.message.includes(got.url), got.message);
    assert.match(got.message, /configureBrowserCore\(\{ wasmUrl \}\)/);
  } finally {
    await h.close();
  }
});
