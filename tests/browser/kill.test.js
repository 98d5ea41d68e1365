// Checks that an OPFS store in Chromium loses no acknowledged commit and is
// left with no partial one when its Worker is terminated (as a closing page
// ends it) or the whole browser process group is killed with SIGKILL in the
// middle of a stream of commits or of a 25k-put transaction, and when four
// tabs take the store over from each other while committing: each reopen
// finds every acknowledged commit, each commit whole, the outbox contiguous
// (so no two owners' commits interleaved), and integrity_check ok on the
// file. The long form is tests/torture/kill-chromium.mjs.
import assert from "node:assert/strict";
import { test } from "node:test";

import { runChromiumKills } from "../kill/chromium-loop.js";

test("a terminated Worker, a killed browser and four tabs taking a store over lose no acknowledged commit and leave no partial one", { timeout: 900_000 }, async () => {
  const figures = await runChromiumKills({ terminate: 3, browser: 2, takeover: 8, seed: 14 });
  for (const [loop, f] of Object.entries(figures)) {
    console.log(`kill-chromium ${loop}: ${f.tries} tries, ${f.kills} kills (${f.inBig} in a 25k-put transaction), ${f.acked} acknowledged, ${f.lost} lost, ${f.partial} partial`);
  }
  for (const [loop, f] of Object.entries(figures)) {
    assert.deepEqual(f.problems, [], loop);
    assert.equal(f.lost, 0, loop);
    assert.ok(f.acked > 0, `${loop}: commits were acknowledged before the kills`);
  }
  assert.deepEqual(Object.keys(figures), ["terminate", "browser", "takeover"]);
  assert.equal(figures.terminate.kills, 3);
  assert.equal(figures.browser.kills, 2);
  assert.equal(figures.takeover.kills, 8);
});
