// The opfs backend in real Chromium: SQLite in OPFS through onestore's own
// VFS, inside a dedicated Worker (pages/opfs-worker.js, driven through
// pages/opfs.html). Conformance vectors, data across reloads, worker and
// browser restarts, one owner across tabs (Web Lock + fencing), VFS faults.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { root, startHarness, openTab, call, callFails, integrity } from "./harness.js";

async function until(fn, what, ms = 10000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("the conformance vectors pass on the opfs backend inside a Worker", async () => {
  const dir = join(root, "tests", "conformance");
  const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
  const expected = files.reduce((n, f) => n + JSON.parse(readFileSync(join(dir, f), "utf8")).cases.length, 0);
  const h = await startHarness();
  try {
    const page = await openTab(h);
    const results = await call(page, "conformance", { files });
    assert.equal(results.length, expected, "every case ran");
    const failed = results.filter((r) => !r.ok);
    assert.deepEqual(failed.map((r) => `${r.file} / ${r.name}: ${r.error}`), []);
    assert.deepEqual(page.errors, []);
  } finally {
    await h.close();
  }
});

test("an opfs store survives a worker restart, a page reload and a browser restart", async () => {
  const h = await startHarness();
  let userDataDir = h.userDataDir;
  let port = Number(new URL(h.url).port);
  let second;
  try {
    const page = await openTab(h);
    const first = await call(page, "open", { name: "keep", durability: "full" });
    assert.equal(first.head, 1);  // the table's declaration
    for (const id of ["a", "b", "c"]) await call(page, "put", { id });
    assert.equal(await call(page, "walInUse", { name: "keep" }), true);  // the commits are in the WAL
    // The worker dies without closing its store.
    await page.evaluate(() => window.restartWorker());
    const again = await call(page, "open", { name: "keep" });
    assert.equal(again.id, first.id);
    assert.equal(again.head, 4);
    assert.deepEqual(await call(page, "rows"), ["a", "b", "c"]);
    await call(page, "put", { id: "d" });
    // The page reloads without closing its store.
    await page.reload();
    await page.waitForFunction(() => window.ready === true);
    assert.equal((await call(page, "open", { name: "keep", durability: "relaxed" })).head, 5);
    // A relaxed commit is written, not flushed: a worker that dies keeps it.
    await call(page, "put", { id: "e" });
    await page.evaluate(() => window.restartWorker());
    assert.equal((await call(page, "open", { name: "keep", durability: "relaxed" })).head, 6);
    assert.deepEqual(await call(page, "rows"), ["a", "b", "c", "d", "e"]);
    await call(page, "close");
    assert.deepEqual(page.errors, []);
    await h.close({ keepProfile: true });
    // The same profile and origin (OPFS is per origin: same port).
    second = await startHarness({ userDataDir, port });
    const tab = await openTab(second);
    const reopened = await call(tab, "open", { name: "keep" });
    assert.equal(reopened.id, first.id);
    assert.equal(reopened.head, 6);
    assert.deepEqual(await call(tab, "rows"), ["a", "b", "c", "d", "e"]);
    await call(tab, "close");
    // The layout of docs/formats.md; closing checkpointed the WAL into the database.
    const { files, expected } = await call(tab, "listing", { name: "keep" });
    assert.deepEqual(Object.keys(files).sort(), [...expected].sort());
    assert.ok(files["db.sqlite"] >= 4096);
    assert.equal(files["db.sqlite-wal"], 0);
    assert.equal(files["db.sqlite-journal"], 0);
    assert.deepEqual(await integrity(tab, "keep"), [["ok"]]);
    assert.deepEqual(tab.errors, []);
  } finally {
    if (second) await second.close();
    else await h.close();
  }
});

test("a second tab takes the store over: the first is fenced and no acknowledged commit is lost", async () => {
  const h = await startHarness();
  try {
    const a = await openTab(h);
    const b = await openTab(h);
    await call(a, "open", { name: "shared" });
    await call(a, "startLoop", { prefix: "a", tab: "A" });
    await until(async () => (await call(a, "loopResult")).acked.length >= 5, "tab A's first commits");
    // Tab B opens the same store while tab A commits in a loop.
    await call(b, "open", { name: "shared" });
    const loopA = await until(async () => { const r = await call(a, "loopResult"); return r.done && r; }, "tab A's loop to stop");
    assert.equal(loopA.error.code, "fenced", JSON.stringify(loopA.error));
    assert.ok(loopA.acked.length >= 5);
    // A's next write rejects with fenced too; onFenced was called once.
    const again = await callFails(a, "put", { id: "late", tab: "A" });
    assert.equal(again.code, "fenced");
    const events = await a.evaluate(() => window.events);
    assert.equal(events.length, 1);
    assert.equal(events[0].event, "fenced");
    assert.equal(events[0].code, "fenced");
    for (const id of ["b0", "b1", "b2"]) await call(b, "put", { id, tab: "B" });
    const rows = await call(b, "rows");
    for (const id of [...loopA.acked, "b0", "b1", "b2"]) assert.ok(rows.includes(id), `acknowledged ${id} is missing`);
    assert.ok(!rows.includes("late"));
    await call(b, "close");
    assert.deepEqual(await integrity(b, "shared"), [["ok"]]);
    // The fenced tab takes it back: everything is there.
    const back = await call(a, "open", { name: "shared" });
    assert.equal(back.head, 1 + rows.length);
    assert.deepEqual((await call(a, "rows")).sort(), [...rows].sort());
    await call(a, "close");
    assert.deepEqual(a.errors, []);
    assert.deepEqual(b.errors, []);
  } finally {
    await h.close();
  }
});

test("an opener waits lockTimeout for a busy owner's handles, then fails with fenced; the owner gives them up once it runs", async () => {
  const h = await startHarness();
  try {
    const a = await openTab(h);
    const b = await openTab(h);
    await call(a, "open", { name: "busy" });
    await call(a, "put", { id: "a0" });
    const busy = a.evaluate(() => window.call("busy", { ms: 4000 }));  // not awaited: A spins
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    const err = await callFails(b, "open", { name: "busy", lockTimeout: 800 });
    const waited = Date.now() - t0;
    assert.equal(err.code, "fenced", JSON.stringify(err));
    assert.match(err.message, /another owner still holds the files/);
    assert.ok(waited >= 800, `gave up after ${waited} ms`);
    await busy;
    // A noticed the take-over when it ran again: it is fenced.
    assert.equal((await callFails(a, "put", { id: "a1" })).code, "fenced");
    const opened = await call(b, "open", { name: "busy" });
    assert.equal(opened.head, 2);
    assert.deepEqual(await call(b, "rows"), ["a0"]);
    await call(b, "close");
  } finally {
    await h.close();
  }
});

test("an open that cannot get one of a store's three OPFS files fails with fenced and keeps none of the others", async () => {
  const h = await startHarness();
  try {
    const page = await openTab(h);
    await call(page, "open", { name: "held" });
    await call(page, "put", { id: "h0" });
    await call(page, "close");
    // Each of the three files in turn is still held by someone else. The
    // open takes the three at once; the two it got must be let go when the
    // third fails, or the next open could not take them.
    for (const file of ["db.sqlite", "db.sqlite-journal", "db.sqlite-wal"]) {
      await call(page, "holdFile", { name: "held", file });
      const err = await callFails(page, "open", { name: "held", lockTimeout: 300 });
      assert.equal(err.code, "fenced", `${file}: ${JSON.stringify(err)}`);
      assert.match(err.message, /another owner still holds the files/);
      assert.ok(err.message.includes(file), `${file}: ${err.message}`);
      await call(page, "heldRelease");
      const opened = await call(page, "open", { name: "held", lockTimeout: 2000 });
      assert.equal(opened.head, 2, file);
      assert.deepEqual(await call(page, "rows"), ["h0"]);
      await call(page, "close");
    }
    assert.deepEqual(page.errors, []);
  } finally {
    await h.close();
  }
});

test("a failed OPFS write or flush stops the store with storage_failed; a reopen has every acknowledged commit", async () => {
  const h = await startHarness();
  try {
    const page = await openTab(h);
    const faults = [
      { method: "write", k: 1, name: "QuotaExceededError" },
      { method: "write", k: 2, name: "InvalidStateError" },
      { method: "write", k: 3, name: "QuotaExceededError" },
      { method: "sync", k: 1, name: "InvalidStateError" },
      { method: "sync", k: 2, name: "InvalidStateError" },
    ];
    const acked = [];
    let n = 0;
    for (const [i, f] of faults.entries()) {
      const name = "faulty";
      await call(page, "open", { name, durability: "full" });
      await call(page, "put", { id: `ok${i}` });
      acked.push(`ok${i}`);
      await call(page, "fault", f);
      // Commit until the fault hits (it may take more than one commit).
      let error = null;
      const tried = [];
      for (let j = 0; j < 4 && !error; j++) {
        const id = `f${n++}`;
        const r = await page.evaluate(([o, a]) => window.call(o, a), ["put", { id }]);
        if (r.ok) acked.push(id);
        else { error = r.error; tried.push(id); }
      }
      assert.ok(error, `${JSON.stringify(f)}: no commit failed`);
      assert.equal(error.code, "storage_failed", `${JSON.stringify(f)}: ${JSON.stringify(error)}`);
      assert.match(error.message, new RegExp(`injected ${f.method} failure`));
      assert.ok(error.message.includes(f.name), `the message names the ${f.name}: ${error.message}`);
      // The store is stopped: later commits fail too, even after the fault.
      await call(page, "heal");
      assert.equal((await callFails(page, "put", { id: "after" })).code, "storage_failed");
      await call(page, "close");
      assert.deepEqual(await integrity(page, name), [["ok"]], JSON.stringify(f));
      await call(page, "open", { name });
      const rows = await call(page, "rows");
      for (const id of acked) assert.ok(rows.includes(id), `${JSON.stringify(f)}: acknowledged ${id} is missing`);
      assert.ok(!rows.includes("after"));
      // The commit that failed is either wholly there or not at all (one row each).
      for (const id of tried) if (rows.includes(id)) acked.push(id);
      assert.equal(await call(page, "head"), 1 + rows.length);
      await call(page, "close");
    }
    assert.deepEqual(page.errors, []);
  } finally {
    await h.close();
  }
});

test("deleteStore removes an opfs store, fencing its owner in another tab", async () => {
  const h = await startHarness();
  try {
    const a = await openTab(h);
    const b = await openTab(h);
    await call(a, "open", { name: "gone" });
    await call(a, "put", { id: "x" });
    assert.equal(await call(b, "delete", { name: "gone" }), true);
    assert.equal((await callFails(a, "put", { id: "y" })).code, "fenced");
    assert.equal(await call(b, "delete", { name: "gone" }), false);
    const fresh = await call(b, "open", { name: "gone" });
    assert.equal(fresh.head, 1);
    assert.deepEqual(await call(b, "rows"), []);
    await call(b, "close");
    // A page (not a Worker) cannot open an opfs store, and trying does not
    // fence the owner: invalid/args before the Web Lock is asked for.
    await call(a, "open", { name: "owned" });
    const fromPage = await b.evaluate(async () => {
      const { openStore } = await import("/js/browser.js");
      try { await openStore({ backend: "opfs", name: "owned" }); return "opened"; } catch (e) { return `${e.code}: ${e.message}`; }
    });
    assert.match(fromPage, /^invalid\/args: .*dedicated Worker/);
    // A bad name rejects the promise, as every failure of the open does;
    // before, openStore and openReplica threw it synchronously.
    const settled = await b.evaluate(async () => {
      const { openReplica, openStore } = await import("/js/browser.js");
      const out = [];
      for (const open of [openStore, openReplica]) {
        try {
          out.push(await open({ backend: "opfs", name: "a/b" }).then(() => "opened", (e) => `rejected ${e.code}`));
        } catch (e) {
          out.push(`threw ${e.code}`);
        }
      }
      return out;
    });
    assert.deepEqual(settled, ["rejected invalid/args", "rejected invalid/args"]);
    // Two opens of one name at once: one store, and the other is fenced
    // (it was taken over during its open), never a storage failure.
    // Each round also opens the name a third time: before, a take-over
    // that landed while the first open was still opening was swallowed,
    // the first store went on without its lock, and no later open (nor
    // deleteStore) got the files until its tab closed.
    for (let round = 0; round < 6; round++) {
      const { results: twice, again } = await call(b, "openTwice", { name: `twice-${round}`, delay: [0, 5, 20, 50, 100, 150][round] });
      assert.ok(twice.some((r) => r.ok), JSON.stringify(twice));
      for (const r of twice) if (!r.ok) assert.equal(r.code, "fenced", JSON.stringify(twice));
      assert.equal(again, "ok", `round ${round}: ${JSON.stringify(twice)}`);
    }
    // The same across two workers (two tabs restored together, a page that
    // starts its store worker twice): before, the winner often went on
    // without its lock and was never fenced, and every later open or
    // deleteStore of the name waited lockTimeout and failed.
    const raced = await b.evaluate(async () => {
      const worker = () => {
        const w = new Worker(new URL("/tests/browser/pages/opfs-worker.js", location.href), { type: "module" });
        let next = 1;
        const waiting = new Map();
        const events = [];
        w.onmessage = (e) => (e.data.event ? events.push(e.data) : waiting.get(e.data.id)?.(e.data));
        return { events, call: (op, args) => new Promise((ok) => { const id = next++; waiting.set(id, ok); w.postMessage({ id, op, args }); }), end: () => w.terminate() };
      };
      const out = [];
      for (const delay of [0, 0, 30, 100]) {
        const name = `raced-${out.length}`;
        const [w1, w2, w3] = [worker(), worker(), worker()];
        const first = w1.call("open", { name, lockTimeout: 3000 });
        if (delay) await new Promise((r) => setTimeout(r, delay));
        const both = await Promise.all([first, w2.call("open", { name, lockTimeout: 3000 })]);
        const third = await w3.call("open", { name, lockTimeout: 3000 });
        // Whoever opened and was taken over afterwards was told.
        const fencedTold = w1.events.length + w2.events.length;
        out.push({ both: both.map((a) => (a.ok ? "ok" : a.error.code)), third: third.ok ? "ok" : `${third.error.code}: ${third.error.message}`, fencedTold });
        for (const w of [w1, w2, w3]) w.end();
      }
      return out;
    });
    for (const r of raced) {
      assert.equal(r.third, "ok", JSON.stringify(raced));
      assert.ok(r.both.includes("ok"), JSON.stringify(raced));
      for (const a of r.both) assert.ok(a === "ok" || a === "fenced", JSON.stringify(raced));
      assert.ok(r.fencedTold >= r.both.filter((a) => a === "ok").length, `every store that opened was fenced by the third open: ${JSON.stringify(raced)}`);
    }
    // configureBrowserCore refuses what it cannot take, naming it.
    const configured = await b.evaluate(async () => {
      const { configureBrowserCore } = await import("/js/browser.js");
      const out = [];
      for (const bad of [null, "/dist/onestore-core.wasm", { wasmURL: "/x.wasm" }]) {
        try { configureBrowserCore(bad); out.push("taken"); } catch (e) { out.push(`${e.code}: ${e.message}`); }
      }
      configureBrowserCore({});
      return out;
    });
    assert.equal(configured.length, 3);
    assert.match(configured[0], /^invalid\/args: configureBrowserCore: options must be \{ wasmUrl \}, got null/);
    assert.match(configured[1], /^invalid\/args: .*got "\/dist\/onestore-core.wasm"/);
    assert.match(configured[2], /^invalid\/args: .*wasmURL/);
    await call(a, "put", { id: "still-mine" });
    await call(a, "close");
    // Bad names are refused with invalid/args.
    for (const name of ["", "a/b", "..", 7, "x\ud800", "notes.import-0123456789ab", "x".repeat(201)]) {
      assert.equal((await callFails(b, "open", { name })).code, "invalid/args", JSON.stringify(name));
      assert.equal((await callFails(b, "delete", { name })).code, "invalid/args", JSON.stringify(name));
    }
  } finally {
    await h.close();
  }
});
