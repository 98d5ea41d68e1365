// Checks that the JS list of error codes matches the one list in
// src/onestore/status.h, as the wasm module exports it, and docs/api.md.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { ErrorCodes, StoreError } from "../../js/index.js";
import { asStoreError, unwrap } from "../../js/errors.js";
import { loadNodeCore } from "../../js/loader-node.js";
import { repoRoot } from "./helpers.js";

test("ErrorCodes lists exactly the codes of the wasm core, in its order", async () => {
  const mod = await loadNodeCore();
  const fromCore = JSON.parse(mod.errorCodes()).map((c) => c.code);
  assert.deepEqual(Object.values(ErrorCodes), fromCore);
});

test("every code is in the docs' error table", () => {
  const doc = readFileSync(join(repoRoot, "docs/api.md"), "utf8");
  for (const code of Object.values(ErrorCodes)) assert.ok(doc.includes(`\`${code}\``), `docs/api.md should list \`${code}\``);
});

test("unwrap returns a payload and throws a StoreError for a failed answer", () => {
  assert.equal(unwrap('{"a":1}'), '{"a":1}');
  assert.equal(unwrap(""), "");
  assert.throws(() => unwrap("!fenced another owner holds the store"), (e) => {
    assert.ok(e instanceof StoreError);
    assert.equal(e.code, "fenced");
    assert.equal(e.message, "another owner holds the store");
    return true;
  });
  assert.throws(() => unwrap("!weird x"), (e) => e.code === "storage_failed" && e.message.includes("!weird"));
});

test("asStoreError: a call refused for its arguments' room is limit (the instance is sound), a trap storage_failed, anything else invalid/args", () => {
  const refused = new Error("Core.get: its arguments (300000044 bytes) do not fit in what is left of the wasm heap");
  refused.name = "OnestoreLimitError";  // as wasm/core_post.js names it
  const e = asStoreError(refused, "notes.get");
  assert.ok(e instanceof StoreError);
  assert.equal(e.code, ErrorCodes.Limit);
  assert.equal(e.message, `notes.get: ${refused.message}`);
  assert.equal(e.cause, refused);
  assert.equal(asStoreError(new WebAssembly.RuntimeError("unreachable"), "x").code, ErrorCodes.StorageFailed);
  assert.equal(asStoreError(new TypeError("Core.get: argument 1"), "x").code, ErrorCodes.InvalidArgs);
});
