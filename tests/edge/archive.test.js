// Archives whose outbox was trimmed, imported over a durable store in
// workerd: the store's outbox then starts above seq 1, which the Durable
// Object's check that each outbox row follows the head (docs/formats.md,
// "The head on a Durable Object") must let in, and the commits after the
// import follow it with no hole.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import * as api from "../../js/index.js";
import { sessionFixture } from "../js/archive/session.js";
import { startWorkerd } from "./harness.js";

const { fill, state } = sessionFixture(api);

let workerd;
before(async () => { workerd = await startWorkerd({ script: "archive-worker.js" }); });
after(async () => { await workerd?.dispose(); });

const post = (object, op, body) => workerd.mf.dispatchFetch(`http://t/${object}/${op}`, { method: "POST", body }).then((r) => r.json());

// A Node store's archive with its outbox trimmed up to `keep(head)`.
async function trimmedArchive(keep) {
  const source = await api.openStore({ backend: "memory" });
  await fill(source, { tag: "src", rows: 30, blobs: 1 });
  const upTo = keep(source.head);
  assert.ok(await source.outbox.trim(upTo) > 0);
  const bytes = new Uint8Array(await new Response(source.export()).arrayBuffer());
  const want = JSON.parse(await state(source));
  await source.close();
  return { bytes, want, upTo };
}

for (const [name, keep] of [["part of its outbox", (head) => head - 2], ["its whole outbox", (head) => head]]) {
  test(`an archive with ${name} trimmed imports over a durable store, and the commits after it follow its head`, async () => {
    const { bytes, want, upTo } = await trimmedArchive(keep);
    const object = `trimmed-${upTo}-${name.length}`;
    assert.deepEqual(await post(object, "fill", JSON.stringify({ tag: "previous", rows: 5, blobs: 0 })), { ok: true });
    const imported = await post(object, "import", bytes);
    assert.ok(imported.ok, imported.message);
    const got = JSON.parse(imported.state);
    assert.equal(got.head, want.head);
    assert.deepEqual(got.outbox.map((c) => c.seq), want.outbox.map((c) => c.seq));
    assert.equal(got.outbox.length ? got.outbox[0].seq : got.head, upTo + (got.outbox.length ? 1 : 0));
    // Without the import's head set before its outbox (OutboxStartsAfter),
    // the trigger refuses the archive's first record and the import fails.
    // The commits after it take head + 1, head + 2, ...
    assert.deepEqual(await post(object, "fill", JSON.stringify({ tag: "after", rows: 3, blobs: 0 })), { ok: true });
    const now = JSON.parse((await (await workerd.mf.dispatchFetch(`http://t/${object}/state`)).json()).state);
    const seqs = now.outbox.map((c) => c.seq);
    assert.ok(now.head > want.head);
    assert.deepEqual(seqs, Array.from({ length: now.head - upTo }, (_, i) => upTo + 1 + i), "the outbox runs from the archive's first seq to the head, no hole");
  });
}
