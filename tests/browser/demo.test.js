// The demo page (demo/) driven by clicks in real Chromium: the store lives in
// a dedicated Worker, the page is linked to it. Adds a message, renames a
// folder (one updateWhere), pages through the file-history query with
// cursors, saves the note (a document: one doc.change a save) and steps back
// through its versions, filters the outbox by owner and actor (store.log),
// and saves a screenshot for review in
// build/screenshots/demo.png. With the OPFS backend, also a reload that
// keeps everything and a second tab that takes the store over. The archive
// card exports the session and imports it again, its progress bar moving
// to the end both ways (build/screenshots/demo-archive.png).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { root, startHarness } from "./harness.js";

const shots = join(root, "build", "screenshots");

async function openDemo(h, page) {
  const p = page ?? (await h.newPage("/demo/"));
  if (page) await p.goto(h.url + "/demo/");
  await p.waitForFunction(() => /^\d+$/.test(document.getElementById("head").textContent)
    && document.querySelectorAll("#messages .msg").length > 0
    && document.querySelectorAll("#edits tr").length > 0
    && document.querySelectorAll("#records .record").length > 0, null, { timeout: 20000 });
  return p;
}

const text = (page, sel) => page.locator(sel).first().innerText();
const head = async (page) => Number(await text(page, "#head"));

// Whether the package's browser runtime has the OPFS backend inside a
// dedicated Worker, where the demo opens its store (it comes with the OPFS
// branch; until then the demo runs on memory and says so).
async function hasOpfs(page) {
  return page.evaluate(() => new Promise((ok, fail) => {
    const src = `import(${JSON.stringify(location.origin + "/js/loader-browser.js")}).then(
      (m) => postMessage(m.browserRuntime.backends.includes("opfs")), (e) => postMessage("error: " + e.message));`;
    const w = new Worker(URL.createObjectURL(new Blob([src], { type: "text/javascript" })), { type: "module" });
    w.onmessage = (e) => { w.terminate(); typeof e.data === "boolean" ? ok(e.data) : fail(new Error(e.data)); };
  }));
}

test("the demo page works by clicks: message, folder rename, cursor paging, note; screenshot saved", async () => {
  const h = await startHarness();
  try {
    const page = await openDemo(h);
    await page.setViewportSize({ width: 1360, height: 980 });
    const opfs = await hasOpfs(page);
    assert.equal(await text(page, "#storage"), opfs ? "OPFS · persisted" : "Memory · not persisted");
    if (!opfs) assert.match(await text(page, "#banner"), /in memory: a reload starts it again/);
    assert.match(await text(page, "#owner"), /^This tab \([0-9A-F]{4}\)$/);

    // The seeded session: 5 messages, 14 edits on 3 pages of 6.
    assert.equal(await page.locator("#messages .msg").count(), 5);
    assert.equal(await text(page, "#page-info"), "Page 1 · rows 1–6 of 14");

    // Add a message: it appears, the head moves by one, the outbox shows the commit.
    const h0 = await head(page);
    await page.fill("#text", "Please also move the tests next to each tab.");
    await page.click("#send");
    await page.waitForFunction(() => document.querySelectorAll("#messages .msg").length === 6);
    await page.waitForFunction((h) => Number(document.getElementById("head").textContent) === h + 1, h0);
    assert.equal(await text(page, "#messages .msg:last-child .bubble"), "Please also move the tests next to each tab.");
    assert.equal(await text(page, "#records .record .seq"), `#${h0 + 1}`);
    assert.match(await text(page, "#records .record .ops"), /^put agent\/messages$/);

    // Page through the query with cursors.
    const page1 = await page.locator("#edits td.path").allInnerTexts();
    await page.click("#older");
    await page.waitForFunction(() => document.getElementById("page-info").textContent.startsWith("Page 2"));
    const page2 = await page.locator("#edits td.path").allInnerTexts();
    assert.notDeepEqual(page2, page1);
    assert.notEqual(await text(page, "#cursor"), "(first page)");
    await page.click("#older");
    await page.waitForFunction(() => document.getElementById("page-info").textContent === "Page 3 · rows 13–14 of 14");
    assert.equal(await page.locator("#older").isDisabled(), true);
    await page.click("#newer");
    await page.waitForFunction(() => document.getElementById("page-info").textContent.startsWith("Page 2"));
    assert.deepEqual(await page.locator("#edits td.path").allInnerTexts(), page2);

    // Rename a folder: one updateWhere, one small outbox op for 10 rows.
    await page.selectOption("#rename-from", "src/panels/settings/");
    assert.equal(await page.inputValue("#rename-to"), "src/components/settings/");
    const h1 = await head(page);
    await page.click("#rename-go");
    await page.waitForFunction((h) => Number(document.getElementById("head").textContent) === h + 1, h1);
    assert.match(await text(page, "#toast"), /^Renamed 10 edits from src\/panels\/settings\/ to src\/components\/settings\//);
    assert.equal(await text(page, "#records .record .ops"), "update where file-history/edits (10 rows)");
    const bytes = Number((await text(page, "#records .record .bytes")).replace(/\D/g, ""));
    assert.ok(bytes > 100 && bytes < 400, `the rename's outbox record should be one small op, got ${bytes} B`);
    await page.waitForFunction(() => document.getElementById("rename-from").value === "src/components/settings/");
    const folders = await page.locator("#rename-from option").allInnerTexts();
    assert.ok(folders.some((f) => f.startsWith("src/components/settings/")));
    assert.ok(!folders.some((f) => f.startsWith("src/panels/settings/")));
    await page.waitForFunction(() => document.getElementById("page-info").textContent.startsWith("Page 1"));
    await page.fill("#under", "src/components/");
    await page.waitForFunction(() => document.getElementById("page-info").textContent === "Page 1 · rows 1–6 of 10");

    // The note is a document: each save is a version, one doc.change op.
    await page.waitForFunction(() => document.getElementById("note-version").textContent === "version 1 of 1 (latest)");
    const seeded = await page.inputValue("#note-body");
    assert.match(seeded, /^Goal: one component per settings tab\./);
    await page.fill("#note-body", "Goal: one component per settings tab.\n\n- Folder settled: src/components/settings/");
    await page.click("#note-save");
    await page.waitForFunction(() => document.getElementById("note-version").textContent === "version 2 of 2 (latest)");
    assert.match(await text(page, "#records .record .ops"), /^doc\.change notes document \d+$/);
    await page.fill("#note-title", "Settings refactor: done");
    await page.click("#note-save");
    await page.waitForFunction(() => document.getElementById("note-version").textContent === "version 3 of 3 (latest)");
    assert.equal(await page.locator("#note-newer").isDisabled(), true);
    // Step back through the history: each version as documents.load({ at }) gives it.
    await page.click("#note-older");
    await page.waitForFunction(() => document.getElementById("note-version").textContent.startsWith("version 2 of 3 · seq "));
    assert.equal(await page.inputValue("#note-title"), "Settings refactor");
    assert.equal(await page.inputValue("#note-body"), "Goal: one component per settings tab.\n\n- Folder settled: src/components/settings/");
    assert.equal(await page.locator("#note-title").getAttribute("readonly"), "");
    await page.click("#note-older");
    await page.waitForFunction(() => document.getElementById("note-version").textContent.startsWith("version 1 of 3 · seq "));
    assert.equal(await page.inputValue("#note-body"), seeded);
    assert.equal(await page.locator("#note-older").isDisabled(), true);
    await page.click("#note-newer");
    await page.click("#note-newer");
    await page.waitForFunction(() => document.getElementById("note-version").textContent === "version 3 of 3 (latest)");
    assert.equal(await page.inputValue("#note-title"), "Settings refactor: done");
    assert.equal(await page.locator("#note-title").getAttribute("readonly"), null);

    // Filter the outbox by owner, then by actor: store.log in the worker.
    await page.selectOption("#outbox-owner", "notes");
    await page.waitForFunction(() => document.getElementById("outbox-showing").textContent.startsWith("store.log"));
    const owners = await page.locator("#records .record .owner").allInnerTexts();
    assert.ok(owners.length >= 3 && owners.every((o) => o === "notes"), `only notes' commits: ${owners}`);
    await page.selectOption("#outbox-owner", "");
    await page.selectOption("#outbox-actor", "ana");
    await page.waitForFunction(() => [...document.querySelectorAll("#records .record .actor")].every((a) => a.textContent === "· ana"));
    const anaOwners = await page.locator("#records .record .owner").allInnerTexts();
    assert.deepEqual([...new Set(anaOwners)].sort(), ["agent", "file-history", "notes"], "ana seeded the three owners' first commits");
    await page.selectOption("#outbox-actor", "");
    await page.waitForFunction(() => document.getElementById("outbox-showing").textContent === "");

    await page.fill("#under", "");
    await page.waitForFunction(() => document.getElementById("page-info").textContent === "Page 1 · rows 1–6 of 14");
    await page.fill("#text", "Done: the settings tabs now live in src/components/settings/.");
    await page.selectOption("#role", "assistant");
    await page.click("#send");
    await page.waitForFunction(() => document.querySelectorAll("#messages .msg").length === 7);
    await page.waitForFunction(() => document.getElementById("toast").classList.contains("hidden"), null, { timeout: 10000 });
    await page.evaluate(() => { document.activeElement?.blur(); window.scrollTo(0, 0); });
    await page.waitForTimeout(1600);  // let the highlight animations end
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: join(shots, "demo.png"), fullPage: true });
    assert.deepEqual(page.errors, []);
  } finally {
    await h.close();
  }
});

test("with OPFS, a reload keeps the session and a second tab takes the store over", async (t) => {
  const h = await startHarness();
  try {
    const a = await openDemo(h);
    if (!(await hasOpfs(a))) {
      t.skip("the browser runtime has no OPFS backend on this branch (it comes with the OPFS branch)");
      return;
    }
    await a.fill("#text", "kept across a reload");
    await a.click("#send");
    await a.waitForFunction(() => document.querySelectorAll("#messages .msg").length === 6);
    const before = await head(a);
    await a.reload();
    await openDemo(h, a);
    assert.equal(await head(a), before);
    assert.equal(await text(a, "#messages .msg:last-child .bubble"), "kept across a reload");

    const b = await openDemo(h);
    const tabB = (await text(b, "#owner")).match(/\(([0-9A-F]{4})\)/)[1];
    await a.waitForFunction(() => document.getElementById("banner").classList.contains("fenced"));
    assert.match(await text(a, "#banner"), /took the store over/);
    await a.waitForFunction((t) => document.getElementById("owner").textContent === `Tab ${t}`, tabB);
    assert.equal(await a.locator("#send").isDisabled(), true);
    assert.equal(await head(b), before);
    await b.setViewportSize({ width: 1360, height: 980 });
    await a.setViewportSize({ width: 1360, height: 980 });
    mkdirSync(shots, { recursive: true });
    await a.screenshot({ path: join(shots, "demo-fenced.png") });
    assert.deepEqual(a.errors, []);
    assert.deepEqual(b.errors, []);
  } finally {
    await h.close();
  }
});

test("the archive card exports the session and imports it again, its progress bar filling both ways", async () => {
  const h = await startHarness();
  try {
    const page = await openDemo(h);
    await page.setViewportSize({ width: 1360, height: 1200 });
    await page.click("#export");
    await page.waitForSelector("#download:not(.hidden)");
    assert.match(await text(page, "#archive-state"), /^Exported at seq \d+ · \d+ KiB$/);
    const bar = () => page.evaluate(() => ({ value: document.getElementById("archive-progress").value, max: document.getElementById("archive-progress").max }));
    const full = await bar();
    assert.ok(full.max > 1 && full.value === full.max, JSON.stringify(full));
    const r = await page.evaluate(() => window.importLastExport());
    assert.equal(r.same, true);
    assert.match(await text(page, "#archive-state"), /^Imported into .* at seq \d+ · same content as this session/);
    const seen = await page.evaluate(() => window.archiveProgress);
    for (const kind of ["export", "import"]) {
      const mine = seen.filter((p) => p.kind === kind);
      assert.ok(mine.length >= 3, `${kind}: ${mine.length} reports`);
      assert.deepEqual(mine.map((p) => p.done), [...mine.map((p) => p.done)].sort((a, b) => a - b), `${kind}: done only grows`);
      assert.equal(mine.at(-1).done, mine.at(-1).total, `${kind}: the bar ends full`);
    }
    mkdirSync(shots, { recursive: true });
    await page.locator("section.archive").screenshot({ path: join(shots, "demo-archive.png") });
    assert.deepEqual(page.errors, []);
  } finally {
    await h.close();
  }
});
