// What a bundler sees of the package before it builds anything: the packed
// tarball holds every file the exports map names; the browser root reaches
// the core through static imports only and no Node module; the Emscripten
// glue has no `import.meta` of its own, so the browser loader's
// `new URL("../dist/onestore-core.wasm", import.meta.url)` is the only
// reference to the .wasm.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { test } from "node:test";

import { packedTarball, repoRoot } from "./harness.js";

const run = promisify(execFile);
const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8"));

// Every file target of an exports map, whatever its nesting of conditions.
function targets(entry) {
  if (typeof entry === "string") return [entry];
  return Object.values(entry).flatMap(targets);
}

test("the packed tarball holds every file the exports map names", async () => {
  const { stdout } = await run("tar", ["tzf", await packedTarball()]);
  const files = new Set(stdout.split("\n").filter(Boolean).map((f) => f.replace(/^package\//, "")));
  const named = [...new Set(targets(pkg.exports))].map((t) => t.replace(/^\.\//, ""));
  assert.ok(named.includes("dist/onestore-core.wasm"), "the .wasm has its own export (esbuild's file loader imports it)");
  assert.deepEqual(named.filter((f) => !files.has(f)), []);
  assert.ok(files.has("dist/onestore-core.mjs"));
  assert.deepEqual([...files].filter((f) => f.startsWith("tests/") || f.startsWith("build/")), []);
});

test("the browser root reaches the core through static imports and no Node module", () => {
  const seen = new Set();
  const specifiers = [];
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, "utf8");
    // Static imports and re-exports. A dynamic import of a computed URL is
    // an edge no bundler follows (the defect of issue 9).
    for (const m of text.matchAll(/^\s*(?:import|export)\s(?:[^;"']*?\sfrom\s)?["']([^"']+)["']/gm)) {
      specifiers.push(m[1]);
      if (m[1].startsWith(".")) visit(join(file, "..", m[1]));
    }
    assert.doesNotMatch(text, /\bimport\s*\((?!\s*["'])/, `${file} has a dynamic import() of a computed URL`);
  };
  visit(join(repoRoot, pkg.exports["."].browser));
  assert.ok(seen.has(join(repoRoot, "dist", "onestore-core.mjs")), "the core's module is imported statically");
  assert.deepEqual(specifiers.filter((s) => !s.startsWith(".")), [], "only the package's own files");
  assert.deepEqual([...seen].filter((f) => /files-node|loader-node|loader-workerd/.test(f)), []);
  const loader = readFileSync(join(repoRoot, "js", "loader-browser.js"), "utf8");
  assert.match(loader, /new URL\("\.\.\/dist\/onestore-core\.wasm", import\.meta\.url\)/);
});

test("the core's Emscripten glue has no import.meta and builds no URL of its own", () => {
  const glue = readFileSync(join(repoRoot, "dist", "onestore-core.mjs"), "utf8");
  assert.doesNotMatch(glue, /import\.meta/);
  assert.doesNotMatch(glue, /new URL\(/);
  assert.match(glue, /export default createOnestoreCore/);
});
