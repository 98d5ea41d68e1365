// Checks the Node loader: one wasm module per process, no process-wide
// handlers left behind by Emscripten, a sqlite file's folder created, and
// bad open options refused.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { openStore } from "../../js/index.js";
import { loadNodeCore } from "../../js/loader-node.js";
import { rejectsWith, tempDir } from "./helpers.js";

test("the wasm module is loaded once and shared", async () => {
  const [a, b] = await Promise.all([loadNodeCore(), loadNodeCore()]);
  assert.equal(a, b);
  assert.equal(await loadNodeCore(), a);
  assert.equal(typeof a.Core, "function");
});

test("loading leaves no uncaughtException or unhandledRejection handler behind", async () => {
  await loadNodeCore();
  const store = await openStore({ backend: "memory" });
  await store.close();
  // The test runner has handlers of its own; Emscripten's rethrow.
  const emscripten = (f) => /throw (reason|ex)\b|ExitStatus/.test(String(f));
  assert.deepEqual(process.listeners("unhandledRejection").filter(emscripten), []);
  assert.deepEqual(process.listeners("uncaughtException").filter(emscripten), []);
  assert.equal(typeof globalThis.__dirname, "undefined");
});

test("a sqlite file's missing folders are created", async () => {
  const dir = tempDir("onestore-loader-");
  const path = join(dir, "a", "b", "c.sqlite");
  const store = await openStore({ backend: "sqlite", path });
  await store.close();
  assert.ok(existsSync(path));
});

test("bad open options are refused with invalid/args", async () => {
  await rejectsWith(openStore(), "invalid/args", ["options"]);
  await rejectsWith(openStore({ backend: "opfs", name: "x" }), "invalid/args", ['"opfs"']);
  await rejectsWith(openStore({ backend: "sqlite" }), "invalid/args", ["path"]);
  await rejectsWith(openStore({ backend: "memory", id: 42 }), "invalid/args", ["id"]);
  await rejectsWith(openStore({ backend: "sqlite", path: ":memory:", durabilty: "relaxed" }), "invalid/args", ['"durabilty"', "durability"]);
  // A memory store keeps nothing on disk: a path or a name is a mistake to name.
  await rejectsWith(openStore({ backend: "memory", path: "/tmp/kept.sqlite" }), "invalid/args", ["memory", '"/tmp/kept.sqlite"', '"sqlite"']);
  await rejectsWith(openStore({ backend: "memory", name: "s1" }), "invalid/args", ["memory", '"s1"', '"opfs"']);
  await rejectsWith(openStore({ backend: "sqlite", path: ":memory:", durability: "sometimes" }), "invalid/args", ["sometimes"]);
});

test("a store opened with an id keeps it", async () => {
  const store = await openStore({ backend: "memory", id: "session-7" });
  assert.equal(store.id, "session-7");
  assert.equal(store.head, 0);
  await store.close();
  const other = await openStore({ backend: "memory" });
  assert.notEqual(other.id, "session-7");
  assert.ok(other.id.length >= 8);
  await other.close();
});
