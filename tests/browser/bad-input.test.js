// Runs the bad-input corpus (tests/bad-input/cases.json) on the opfs backend
// in Chromium, inside a Worker, through the same runner as Node and workerd
// (tests/bad-input/runner.js), with an OPFS replica for the raw batches. Each
// case ends in its documented acceptance or its StoreError code, a refused
// call changes nothing, and the store keeps committing and reading.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { call, openTab, root, startHarness } from "./harness.js";

const { cases } = JSON.parse(readFileSync(join(root, "tests", "bad-input", "cases.json"), "utf8"));

let h;
before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

test("every bad-input case ends as documented on an OPFS store in Chromium, and the store keeps working", async () => {
  const page = await openTab(h, "/tests/browser/pages/bad-input.html");
  const report = await call(page, "run", { name: "bad-input" });
  assert.deepStrictEqual(report.failures, []);
  assert.equal(report.ran, cases.length, "every case ran");
  assert.deepStrictEqual(page.errors, []);
});
