// store.log and store.at(seq) on the opfs backend in real Chromium, inside a
// dedicated Worker (pages/opfs-worker.js): the history of
// tests/history/scenario.js, where a view at every seq reads what the store
// read then, the log answers and filters each commit, a trimmed seq is
// not_found; and the same states and fingerprints as Node's memory store.
import { test } from "node:test";
import assert from "node:assert/strict";

import * as api from "../../js/index.js";
import { afterTrim, runHistory } from "../history/scenario.js";
import { checkHistory, checkTrim } from "../history/checks.js";
import { startHarness } from "./harness.js";

const PAGE = "/tests/browser/pages/opfs.html";

test("an opfs store's views at every seq, its log and a trim answer as Node's memory store does", async () => {
  const node = await api.openStore({ backend: "memory" });
  const expected = await runHistory(api, node);
  await node.close();
  const h = await startHarness();
  try {
    const page = await h.newPage(PAGE);
    await page.waitForFunction(() => window.ready === true);
    const r = await page.evaluate(() => window.call("history", {}));
    if (!r.ok) throw Object.assign(new Error(`history: ${r.error.code}: ${r.error.message}`), r.error);
    const { run, trim } = r.value;
    checkHistory(run);
    checkTrim(trim);
    assert.deepEqual(run.live, expected.live);
    assert.deepEqual(run.fingerprints, expected.fingerprints);
    assert.deepEqual(page.errors, []);
  } finally {
    await h.close();
  }
});
