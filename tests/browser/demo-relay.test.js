// The demo page's relay chip in real Chromium against the relay example in
// real workerd (examples/relay/start.mjs, as `npm start` runs it beside the
// page): the page reads GET <relay>/sessions/<its session id> and shows the
// relay's head and lease beside the store's head. When the package has the
// driver (startSync), the page's store drives the session through the relay
// and the relay's head catches up with the store's, also after a new
// message; without it, the relay holds nothing of the session yet.
// "Continue on another device": the page's link, opened in a second browser
// (another profile, so another OPFS), pulls the session from the relay into
// that browser's store and drives it; the first page's store splits off and
// its sync panel says so, with its new session id and its origin.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import * as api from "../../js/index.js";
import { launchChromium, root, startHarness } from "./harness.js";

async function startRelay(data) {
  const child = spawn(process.execPath, [join(root, "examples", "relay", "start.mjs")], {
    env: { ...process.env, PORT: "0", RELAY_DATA: data },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (d) => { err += d; });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the relay printed no URL in 60 s:\n${out}\n${err}`)), 60_000);
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/at (http:\/\/\S+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on("exit", (code) => { clearTimeout(timer); reject(new Error(`the relay exited with ${code}:\n${out}\n${err}`)); });
  });
  return {
    url,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.on("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

test("the demo page shows the relay's head for its session beside the store's head", async () => {
  const data = mkdtempSync(join(tmpdir(), "onestore-demo-relay-"));
  const relay = await startRelay(data);
  const h = await startHarness();
  try {
    const page = await h.newPage(`/demo/?relay=${encodeURIComponent(relay.url)}`);
    await page.waitForFunction(() => /^\d+$/.test(document.getElementById("head").textContent)
      && /^\d+$/.test(document.getElementById("relay-head").textContent), null, { timeout: 30000 });
    const title = await page.locator("#relay-chip").getAttribute("title");
    assert.match(title, /\/sessions\/[0-9a-f-]{36}\nlease epoch \d+, driver /);
    const session = title.split("\n")[0];
    const id = session.slice(session.lastIndexOf("/") + 1);
    assert.equal(await page.title(), `Session ${id.slice(0, 8)} · onestore demo`);

    if (typeof api.startSync === "function") {
      // The page's store drives the session: the relay catches up, and again after a commit.
      await page.waitForFunction(() => document.getElementById("relay-head").textContent === document.getElementById("head").textContent, null, { timeout: 30000 });
      const head = Number(await page.locator("#head").innerText());
      await page.fill("#text", "Synced?");
      await page.click("#send");
      await page.waitForFunction((h0) => document.getElementById("relay-head").textContent === String(h0 + 1), head, { timeout: 30000 });
      const info = await (await fetch(session)).json();
      assert.equal(info.head, head + 1);
      assert.ok(info.epoch >= 1);
    } else {
      // No driver in this build: the relay answers for the session and holds nothing of it.
      assert.equal(await page.locator("#relay-head").innerText(), "0");
      const info = await (await fetch(session)).json();
      assert.deepEqual([info.session, info.head, info.epoch], [id, 0, 0]);
      assert.ok(Number(await page.locator("#head").innerText()) > 0);
    }
  } finally {
    await h.close();
    await relay.stop();
    rmSync(data, { recursive: true, force: true });
  }
});

const text = (page, id) => page.locator(`#${id}`).innerText();
// Waits until the sync panel's acked seq equals the head (the relay has every commit).
const synced = (page) => page.waitForFunction(() => document.getElementById("sync-state").textContent === "driving"
  && /^\d+$/.test(document.getElementById("sync-head").textContent)
  && document.getElementById("sync-acked").textContent === document.getElementById("sync-head").textContent, null, { timeout: 30000 });
const messages = (page) => page.$$eval("#messages .bubble", (els) => els.map((e) => e.textContent));

test("continue on another device: a second browser pulls the session from the relay and drives it, and the first page's store splits off", async () => {
  const data = mkdtempSync(join(tmpdir(), "onestore-demo-relay-"));
  const relay = await startRelay(data);
  const h = await startHarness();
  let other = null;
  const base = relay.url.endsWith("/") ? relay.url : `${relay.url}/`;
  try {
    // Device A: its store drives the session; a message and a note version reach the relay.
    const a = await h.newPage(`/demo/?relay=${encodeURIComponent(relay.url)}`);
    await synced(a);
    await a.fill("#text", "Written on device A");
    await a.click("#send");
    await a.waitForFunction(() => [...document.querySelectorAll("#messages .bubble")].some((e) => e.textContent === "Written on device A"), null, { timeout: 30000 });
    await a.fill("#note-title", "Handed over");
    await a.click("#note-save");
    await a.waitForFunction(() => document.getElementById("note-state").textContent === "Saved", null, { timeout: 30000 });
    await synced(a);
    const id = await text(a, "sync-session");
    assert.match(id, /^[0-9a-f-]{36}$/);
    const headA = Number(await text(a, "sync-head"));

    // The link: this page with ?continue=<the session on the relay>&device=<new>.
    await a.click("#continue");
    const href = await a.locator("#continue-link").getAttribute("href");
    const link = new URL(href);
    assert.equal(link.searchParams.get("continue"), `${base}sessions/${id}`);
    assert.match(link.searchParams.get("device"), /^[0-9a-f]+$/);

    // Device B: another browser profile (its own OPFS) opens the link.
    other = await launchChromium();
    const b = await other.context.newPage();
    const errors = [];
    b.on("pageerror", (e) => errors.push(String(e)));
    await b.goto(href);
    await synced(b);
    assert.equal(await text(b, "sync-session"), id);
    assert.equal(Number(await text(b, "sync-head")), headA);
    assert.equal(await b.locator("#storage").innerText(), "OPFS · persisted");
    assert.deepEqual(await messages(b), await messages(a));
    assert.ok((await messages(b)).includes("Written on device A"));
    await b.waitForFunction(() => document.getElementById("note-title").value === "Handed over", null, { timeout: 30000 });
    assert.equal(new URL(b.url()).searchParams.get("continue"), null, "a reload opens B's store instead of pulling again");

    // B commits; the relay has it from B's driver.
    await b.fill("#text", "Continued on device B");
    await b.click("#send");
    await b.waitForFunction((h0) => document.getElementById("sync-head").textContent === String(h0 + 1), headA, { timeout: 30000 });
    await synced(b);
    const info = await (await fetch(`${base}sessions/${id}`)).json();
    assert.equal(info.head, headA + 1);
    assert.match(info.driver, /^device /);

    // A's driver is fenced (its heartbeat): its store is now a separate session split off at headA.
    await a.waitForFunction(() => document.getElementById("sync-state").textContent === "split off", null, { timeout: 60000 });
    const newId = await text(a, "sync-session");
    assert.match(newId, /^[0-9a-f-]{36}$/);
    assert.notEqual(newId, id);
    assert.equal(await text(a, "sync-origin"), `Split off session ${id} at seq ${headA}: another device continues that session.`);
    assert.match(await text(a, "banner"), new RegExp(`This copy is now its own session ${newId.slice(0, 8)}`));
    assert.ok(!(await messages(a)).includes("Continued on device B"));
    // And it goes on working: a commit on A is its own, the relay's session keeps B's head.
    await a.fill("#text", "Still here on A");
    await a.click("#send");
    await a.waitForFunction((h0) => document.getElementById("sync-head").textContent === String(h0 + 1), headA, { timeout: 30000 });
    assert.equal((await (await fetch(`${base}sessions/${id}`)).json()).head, headA + 1);
    assert.deepEqual(errors, []);
    // (the relay's 409 answer to A's fenced heartbeat is logged as a failed load; anything else is a fault)
    assert.deepEqual(a.errors.filter((e) => !/Failed to load resource: .* 409/.test(e)), []);
  } finally {
    await other?.close();
    await h.close();
    await relay.stop();
    rmSync(data, { recursive: true, force: true });
  }
});
