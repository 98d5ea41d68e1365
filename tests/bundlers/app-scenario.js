// What every bundled build of tests/bundlers/fixtures/app must do in real
// Chromium, whichever tool built it: open the OPFS store in its dedicated
// Worker, write, keep the writes across a reload, get one link message per
// commit, and be fenced by a second tab that opens the same store.

import assert from "node:assert/strict";

/** Opens `url` in a new tab of `context`; `tab.errors` collects its errors. */
export async function openTab(context, url) {
  const page = await context.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error" && !/status of 404/.test(m.text())) page.errors.push(m.text()); });
  // Failed loads by URL (Chromium's console line does not name it); a
  // browser asks every server for a favicon, which the apps do not have.
  const failed = (url, status) => { if (!url.endsWith("/favicon.ico")) page.errors.push(`${status} ${url}`); };
  page.on("response", (r) => { if (r.status() >= 400) failed(r.url(), r.status()); });
  page.on("requestfailed", (r) => failed(r.url(), r.failure()?.errorText));
  page.wasm = [];
  page.on("request", (r) => { if (/\.wasm(\?|$)/.test(r.url())) page.wasm.push(r.url()); });
  await page.goto(url);
  await page.waitForFunction(() => window.app?.run !== undefined);
  return page;
}

/** Calls window.app[method](...args) in `tab`: its value, or throws with the error's code. */
export async function call(tab, method, ...args) {
  const r = await tab.evaluate(([m, a]) => window.app.run(m, ...a), [method, args]);
  if (!r.ok) throw Object.assign(new Error(`app.${method}: ${r.code ?? r.name}: ${r.message}`), { code: r.code });
  return r.value;
}

/** The error { code, name, message } of a call that must fail. */
export async function callFails(tab, method, ...args) {
  const r = await tab.evaluate(([m, a]) => window.app.run(m, ...a), [method, args]);
  assert.equal(r.ok, false, `app.${method}(${JSON.stringify(args)}) should have failed, got ${JSON.stringify(r.value)}`);
  return r;
}

/**
 * The whole scenario against the app served at `url` (a fresh origin: its
 * OPFS starts empty), in the browser `context`. Resolves to the URLs the
 * .wasm was fetched from.
 */
export async function exerciseApp(context, url) {
  const a = await openTab(context, url);
  assert.deepEqual(await call(a, "list"), [], "a new origin starts with an empty store");
  const s1 = await call(a, "add", "one");
  const s2 = await call(a, "add", "two");
  assert.equal(s2, s1 + 1);
  // The linked tab got one message per commit, and its hold saw each commit's op.
  const linked = await a.evaluate(() => ({ held: window.app.held, wire: window.app.wire }));
  assert.equal(linked.wire.filter((t) => t === "commit").length, 2, `link messages: ${linked.wire.join(", ")}`);
  assert.deepEqual(linked.held, [
    { seq: s1 - 1, rows: [] },
    { seq: s1, ops: ["one"] },
    { seq: s2, ops: ["two"] },
  ]);

  // The writes are in OPFS: a reload (a new worker, a new open) finds them.
  await a.reload();
  await a.waitForFunction(() => window.app?.run !== undefined);
  assert.deepEqual(await call(a, "list"), ["one", "two"]);

  // A second tab opens the same store: it takes it over, the first is fenced.
  const b = await openTab(context, url);
  assert.deepEqual(await call(b, "list"), ["one", "two"]);
  await a.waitForFunction(() => window.app.fenced !== null);
  assert.equal(await a.evaluate(() => window.app.fenced), "fenced");
  assert.equal((await callFails(a, "add", "late")).code, "fenced");
  await call(b, "add", "three");
  assert.deepEqual(await call(b, "list"), ["one", "two", "three"]);

  assert.deepEqual(a.errors, []);
  assert.deepEqual(b.errors, []);
  await a.close();
  await b.close();
  // Every worker (tab A's two, tab B's) fetched the core.
  const wasm = [...a.wasm, ...b.wasm];
  assert.equal(wasm.length, 3, `the .wasm fetches: ${wasm.join(", ")}`);
  return { wasm: [...new Set(wasm)] };
}
