// Checks OPFS stores in Chromium (a dedicated Worker, the package's browser
// root) against the differential runner's plain JS model
// (tests/differential/differential.js): seeded random op sequences, every
// read compared; a difference is shrunk through the same Worker and written
// as a conformance vector. ONESTORE_DIFF_BROWSER_SEEDS sets the number of
// sequences (default 60).

import assert from "node:assert/strict";
import { test } from "node:test";

import * as api from "../../js/index.js";
import { differential } from "../differential/differential.js";
import { explain } from "../differential/report.js";
import { call, openTab, startHarness } from "./harness.js";

const d = differential(api);
const SEEDS = Number(process.env.ONESTORE_DIFF_BROWSER_SEEDS ?? 60);
const LENGTH = 40;

test(`${SEEDS} random sequences on opfs give exactly the model's answers`, async () => {
  const h = await startHarness();
  try {
    const page = await openTab(h, "/tests/browser/pages/diff.html");
    const seeds = Array.from({ length: SEEDS }, (_, i) => 100001 + i);
    // The worker compares with its own copy of the model and sends back its failures.
    const res = await call(page, "run", { seeds, length: LENGTH, perStore: 20 });
    assert.equal(res.observations, SEEDS * LENGTH);
    if (res.failures.length > 0) {
      assert.fail(await explain(d, res.failures[0], LENGTH, "opfs", async (ops) => call(page, "observe", { text: d.toText(ops) })));
    }
    assert.deepEqual(page.errors, []);
  } finally {
    await h.close();
  }
});
