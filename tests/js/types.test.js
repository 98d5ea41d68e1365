// Checks that js/index.d.ts is true to its word: tests/types/api.ts, which
// uses the API and marks what must not compile with @ts-expect-error,
// type-checks under strict TypeScript.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { test } from "node:test";

import { repoRoot } from "./helpers.js";

test("the package's types accept the API's uses and refuse its misuses", () => {
  let tsc;
  try {
    tsc = createRequire(join(repoRoot, "package.json")).resolve("typescript/bin/tsc");
  } catch {
    assert.fail("typescript is not installed: run `npm install` (it is a devDependency)");
  }
  const run = spawnSync(process.execPath, [tsc, "-p", join(repoRoot, "tests/types")], { encoding: "utf8", timeout: 120_000 });
  assert.equal(run.status, 0, `tsc failed:\n${run.stdout}${run.stderr}`);
});
