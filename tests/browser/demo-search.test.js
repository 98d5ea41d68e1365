// The demo page's search box in real Chromium: a query typed into it finds
// transcript messages by meaning. The messages carry embeddings made when
// they were written (demo/embed.js, hashed character trigrams, no model),
// and the store worker answers with table.nearest (cosine), so the seeded
// message about the Models and Keys tabs ranks first for "API keys and
// models", and a message added a moment ago is found by its own words.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { root, startHarness } from "./harness.js";

async function search(page, text) {
  await page.fill("#search-text", text);
  const before = await page.locator("#hits").innerHTML();
  await page.click("#search-go");
  await page.waitForFunction((b) => document.querySelectorAll("#hits .hit").length > 0 && document.getElementById("hits").innerHTML !== b, before, { timeout: 20000 });
  return page.locator("#hits .hit .hit-text").allInnerTexts();
}

test("the demo's search box ranks the message nearest in meaning first, a new message included", async () => {
  const h = await startHarness();
  try {
    const page = await h.newPage("/demo/");
    await page.waitForFunction(() => document.querySelectorAll("#messages .msg").length >= 5, null, { timeout: 20000 });
    await page.setViewportSize({ width: 1360, height: 980 });

    const hits = await search(page, "API keys and models");
    assert.equal(hits.length, 3);
    assert.match(hits[0], /four tabs inline: General, Models, Keys and Plugins/);
    const distances = (await page.locator("#hits .hit .distance").allInnerTexts()).map(Number);
    assert.deepEqual([...distances].sort((a, b) => a - b), distances, "nearest first");
    assert.ok(distances[0] > 0 && distances[0] < 1, `a cosine distance: ${distances[0]}`);

    await page.fill("#text", "Remember to update the changelog before the release.");
    await page.click("#send");
    await page.waitForFunction(() => [...document.querySelectorAll("#messages .msg")].some((m) => m.textContent.includes("changelog")), null, { timeout: 20000 });
    const again = await search(page, "changelog release");
    assert.match(again[0], /update the changelog before the release/);

    mkdirSync(join(root, "build", "screenshots"), { recursive: true });
    await page.screenshot({ path: join(root, "build", "screenshots", "demo-search.png"), fullPage: true });
  } finally {
    await h.close();
  }
});
