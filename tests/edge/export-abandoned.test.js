// A client that stops reading a Durable Object's export (hung, or gone in a
// way workerd does not notice, so the Response's stream is not cancelled) does not
// hold the store's commits for ever: after the export's idleTimeout the
// export fails and the commits asked for meanwhile run.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { startWorkerd } from "./harness.js";

let workerd;
before(async () => { workerd = await startWorkerd({ script: "archive-worker.js" }); });
after(async () => { await workerd?.dispose(); });

const fill = (object, tag, blobs = 1) => workerd.mf.dispatchFetch(`http://t/${object}/fill`, { method: "POST", body: JSON.stringify({ tag, rows: 5, blobs }) }).then((r) => r.json());

test("a durable export its client stopped reading lets the store commit again after idleTimeout", { timeout: 60_000 }, async () => {
  // 40 blobs, 20 MB in all: an archive larger than the sockets between
  // workerd and this process hold, so that workerd must wait for the client.
  assert.deepEqual(await fill("abandoned", "first", 40), { ok: true });
  const res = await workerd.mf.dispatchFetch("http://t/abandoned/export?idle=300");
  const reader = res.body.getReader();
  assert.ok((await reader.read()).value.byteLength > 0, "the export started");
  // The client stops reading (hung, or gone in a way workerd does not
  // notice): the stream is neither read nor cancelled. Before, this commit
  // waited for ever (the test's timeout).
  const started = Date.now();
  assert.deepEqual(await fill("abandoned", "after"), { ok: true });
  const waited = Date.now() - started;
  assert.ok(waited >= 250, `the commit waited for the export's idleTimeout (${waited} ms)`);
  // What the client reads of it then is cut short (workerd ends the body
  // when its stream fails), never a whole archive.
  let cut = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      cut += value.byteLength;
    }
  } catch { /* or the body fails */ }
  // A whole export read by its client is not cut short by the timeout.
  const whole = (await (await workerd.mf.dispatchFetch("http://t/abandoned/export?idle=300")).arrayBuffer()).byteLength;
  assert.ok(whole > 20_000_000, `the whole archive: ${whole} bytes`);
  assert.ok(cut < whole, `the abandoned export's client read ${cut} bytes more, of ${whole}`);
  console.log(`# the commit waited ${waited} ms for the abandoned export`);
});
