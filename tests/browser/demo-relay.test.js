// The demo page's relay chip in real Chromium against the relay example in
// real workerd (examples/relay/start.mjs, as `npm start` runs it beside the
// page): the page reads GET <relay>/sessions/<its session id> and shows the
// relay's head and lease beside the store's head. When the package has the
// driver (startSync), the page's store drives the session through the relay
// and the relay's head catches up with the store's, also after a new
// message; without it, the relay holds nothing of the session yet.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import * as api from "../../js/index.js";
import { root, startHarness } from "./harness.js";

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
