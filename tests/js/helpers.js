// Shared helpers of the Node tests: temp folders and StoreError assertions.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { StoreError } from "../../js/index.js";

/** The repository root. */
export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/**
 * A fresh temp folder, removed when the process exits.
 *
 * @example const dir = tempDir("onestore-");
 */
export function tempDir(prefix = "onestore-test-") {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Asserts that `work` (a promise or a function) fails with a StoreError of
 * `code` whose message contains every string of `mentions`.
 *
 * @example await rejectsWith(edits.get(["nope", 1]), "invalid/args", ["key"]);
 */
export async function rejectsWith(work, code, mentions = []) {
  let error;
  try {
    await (typeof work === "function" ? work() : work);
  } catch (e) {
    error = e;
  }
  assert.ok(error !== undefined, `expected a StoreError ${code}, but nothing was thrown`);
  assert.ok(error instanceof StoreError, `expected a StoreError ${code}, got ${error?.constructor?.name}: ${error?.message ?? error}`);
  assert.equal(error.code, code, `expected code ${code}, got ${error.code}: ${error.message}`);
  for (const m of mentions) {
    assert.ok(error.message.includes(m), `the message ${JSON.stringify(error.message)} should mention ${JSON.stringify(m)}`);
  }
  return error;
}

/**
 * Asserts that a synchronous call throws a StoreError of `code`.
 *
 * @example throwsWith(() => eq("path", 1), "invalid/args");
 */
export function throwsWith(fn, code, mentions = []) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof StoreError, `expected a StoreError ${code}, got ${error === undefined ? "no error" : error.message}`);
  assert.equal(error.code, code, error.message);
  for (const m of mentions) assert.ok(error.message.includes(m), `${JSON.stringify(error.message)} should mention ${JSON.stringify(m)}`);
  return error;
}
