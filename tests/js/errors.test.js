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

// An instance of a class was named by its JSON, "{}", in the messages of
// many calls: "got {}" says nothing of what was passed.
test("a class instance passed where a value is expected is named by its class in the message", async () => {
  const { defineTable, int, openStore } = await import("../../js/index.js");
  const store = await openStore({ backend: "memory" });
  const t = store.object({ type: "o" }).table(defineTable("t", { columns: { id: int() }, key: ["id"] }));
  const message = async (p) => { try { await p; } catch (e) { return `${e.code}: ${e.message}`; } return "no error"; };
  assert.match(await message(store.blobs.put(new SharedArrayBuffer(4))), /^invalid\/args: .*got SharedArrayBuffer of 4 bytes/);
  assert.match(await message(store.blobs.get(new Map())), /^invalid\/args: .*got an object of class Map/);
  assert.match(await message(t.get(new Map())), /^invalid\/args: .*key\[0\] is an object of class Map/);
  assert.match(await message(store.outbox.read(new Set())), /^invalid\/args: .*got an object of class Set/);
  await store.close();
});
