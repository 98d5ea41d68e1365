// Sync from a browser: an OPFS store in a Chromium Worker drives a session
// through the relay (createRelay in Node behind a small HTTP server, reached
// with the browser's own fetch across origins); Node pulls the session,
// continues it and takes the lease over; the browser's store splits off
// with its origin and goes on; a second OPFS store in the browser pulls the
// session as Node left it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";

import { createRelay, defineTable, int, openStore, pullSession, startSync, str } from "../../js/index.js";
import { startHarness, call } from "./harness.js";

const PAGE = "/tests/browser/pages/opfs.html";
const Items = defineTable("items", { columns: { id: str(), n: int(), tab: str() }, key: ["id"] });

// The relay over HTTP on a free port of 127.0.0.1.
async function serveRelay(relay) {
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = ["GET", "HEAD", "OPTIONS"].includes(req.method) ? undefined : Buffer.concat(chunks);
    const answer = await relay.fetch(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers: req.headers, body }));
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

test("an OPFS store in Chromium drives a session; Node pulls it and takes it over; the browser's store splits off; a second OPFS store pulls it", async () => {
  const relay = createRelay({ open: () => ({ backend: "memory" }) });
  const http = await serveRelay(relay);
  const h = await startHarness();
  let node = null;
  try {
    const page = await h.newPage(PAGE);
    await page.waitForFunction(() => window.ready === true);
    await call(page, "delete", { name: "sync-a" });
    const { id: session } = await call(page, "open", { name: "sync-a" });
    for (let i = 0; i < 7; i++) await call(page, "put", { id: `r${i}`, n: i });
    await call(page, "syncStart", { relay: http.url });
    const settled = await call(page, "syncSettled");
    assert.deepEqual(settled, { acked: 8, state: "driving", head: 8 });

    // Node, another device: the session at the relay's head, then its own sync.
    node = await pullSession({ relay: `http://relay.test/sessions/${session}`, fetch: relay.fetch }, { backend: "memory" });
    assert.equal(node.id, session);
    assert.equal(await node.fingerprint(), (await call(page, "fingerprint")).fingerprint);
    const nodeSync = startSync(node, { relay: "http://relay.test", fetch: relay.fetch });
    const owner = node.object({ type: "t" });
    const items = owner.table(Items);
    await owner.tx(async (tx) => { await tx.put(items, { id: "from-node", n: 99, tab: "" }); });
    assert.equal(await nodeSync.settled(), 9);

    // The browser commits on: its push is fenced and its store splits off.
    await call(page, "put", { id: "from-browser", n: 1 });
    const split = await call(page, "syncLost");
    assert.equal(split.state, "lost");
    assert.notEqual(split.id, session);
    assert.deepEqual(split.origin, { id: session, seq: 8 });
    assert.deepEqual(split.event, { id: split.id, origin: { id: session, seq: 8 } });
    assert.equal(split.head, 9);

    // Another browser store continues the session as Node left it.
    await call(page, "close");
    const b = await call(page, "pullSession", { relay: `${http.url}/sessions/${session}`, name: "sync-b" });
    assert.equal(b.id, session);
    assert.equal(b.head, 9);
    assert.equal(b.fingerprint, await node.fingerprint());
    await nodeSync.stop();
    await call(page, "close");
    await call(page, "delete", { name: "sync-a" });
    await call(page, "delete", { name: "sync-b" });
    assert.deepEqual(page.errors, []);
  } finally {
    await node?.close();
    await h.close();
    await http.close();
    await relay.close();
  }
});
