// Several tabs opening one OPFS store at once (tabs restored together, a
// page opened in several tabs): docs/api.md, "The opfs backend": each open
// takes the store over, so in the end exactly one of them owns it and can
// write; every other open either rejects with `fenced` (taken over during
// its open) or resolved first and was fenced afterwards (its onFenced
// called, its writes rejected with `fenced`).
//
// Before: an opener whose Web Lock was stolen while it acquired the
// store's three OPFS files kept retrying them until lockTimeout, holding
// the ones it had got; two such openers each holding a part of the set
// blocked each other and the last opener, until all of them failed after
// lockTimeout and nobody owned the store (js/files-opfs.js,
// acquireOpfsFiles). And an open taken over after its files were acquired
// resolved with a store already fenced, its onFenced called before the
// open resolved (js/loader-browser.js, openOpfsSession).
import { test } from "node:test";
import assert from "node:assert/strict";
import { startHarness, openTab, call } from "./harness.js";

const TABS = 4;
const ROUNDS = 5;
// Far above the few milliseconds a fenced owner takes to let go of its
// handles: an open that needs it waited for an opener that never let go.
const LOCK_TIMEOUT = 6000;

test("tabs racing to open one OPFS store: exactly one owns it and can write, the others are fenced, none waits out lockTimeout", async () => {
  const h = await startHarness();
  try {
    const pages = [];
    for (let i = 0; i < TABS; i++) pages.push(await openTab(h));
    const problems = [];
    for (let round = 0; round < ROUNDS; round++) {
      const name = `race-${round}`;
      const stagger = [0, 0, 2, 5, 10][round];
      const opens = await Promise.all(pages.map(async (p, i) => {
        if (stagger) await new Promise((r) => setTimeout(r, i * stagger));
        return call(p, "openRace", { name, lockTimeout: LOCK_TIMEOUT });
      }));
      // Every take-over has happened once every open settled; a store that
      // opened and was taken over is fenced by now.
      const writes = [];
      for (const [i, p] of pages.entries()) {
        if (!opens[i].opened) { writes.push(null); continue; }
        const r = await p.evaluate(([id]) => window.call("put", { id }), [`w${round}-${i}`]);
        writes.push(r.ok ? "ok" : r.error.code);
      }
      const summary = JSON.stringify({ round, opens, writes });
      const owners = writes.filter((w) => w === "ok").length;
      if (owners !== 1) problems.push(`round ${round}: ${owners} owners can write: ${summary}`);
      for (const [i, o] of opens.entries()) {
        if (!o.opened && o.code !== "fenced") problems.push(`round ${round}: tab ${i}'s open failed with ${o.code}, not fenced: ${summary}`);
        if (!o.opened && /still holds the files/.test(o.message)) problems.push(`round ${round}: tab ${i} waited out lockTimeout for files nobody let go: ${summary}`);
        if (o.toldEarly) problems.push(`round ${round}: tab ${i}'s onFenced was called before its open settled (an open that resolves with a fenced store): ${summary}`);
        if (writes[i] !== null && writes[i] !== "ok" && writes[i] !== "fenced") problems.push(`round ${round}: tab ${i}'s write failed with ${writes[i]}: ${summary}`);
      }
      // The owner reads its write back and closes; a later open of the
      // name (here, by the first tab) finds it.
      const owner = writes.indexOf("ok");
      if (owner >= 0) {
        const rows = await call(pages[owner], "rows");
        assert.ok(rows.includes(`w${round}-${owner}`), summary);
        await call(pages[owner], "close");
        const again = await call(pages[0], "openRace", { name, lockTimeout: LOCK_TIMEOUT });
        assert.ok(again.opened, JSON.stringify(again));
        assert.deepEqual(await call(pages[0], "rows"), [`w${round}-${owner}`], summary);
        await call(pages[0], "close");
      }
    }
    assert.deepEqual(problems, []);
    for (const p of pages) assert.deepEqual(p.errors, []);
  } finally {
    await h.close();
  }
});
