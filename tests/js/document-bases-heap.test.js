// A document on a memory store grown by large patches, until the wasm heap
// cannot take its next base (docs/reliability.md, "A full wasm heap"). Each
// change past `checkpointWhen.bytes` writes a base, the whole value again,
// and on a memory store every base stays in the heap. The commit's room
// check sees only the patch: before, the change whose base did not fit
// aborted the core (session 48's probe: the 23rd change of 5 MB, near 110
// MB), the store's every row gone with it. Now the document asks for its
// base's room (src/onestore/heap.h) and the change is refused with `limit`;
// the document keeps its versions and takes the changes that fit. In its
// own file: its process alone holds the full heap.

import { test } from "node:test";
import assert from "node:assert/strict";

import { openStore, StoreError } from "../../js/index.js";

const PART = 5 << 20;
const part = (i) => `${i}:`.padEnd(PART, "z");

test("a change whose document base would not fit in the wasm heap is refused with limit; the memory store keeps the document and goes on", async () => {
  const store = await openStore({ backend: "memory" });
  try {
    const owner = store.object({ type: "docs" });
    const id = await owner.tx(async (tx) => tx.documents.create({ kind: "notes", key: "big" }, { parts: [] }));
    let changed = 0;
    let refused = null;
    while (changed < 60 && refused === null) {
      try {
        await owner.tx(async (tx) => { await tx.documents.change(id, [{ op: "add", path: "/parts/-", value: part(changed) }]); });
        changed++;
      } catch (e) {
        refused = e;
      }
    }
    // 2 GB of heap hold the bases of some 20 such changes (5 MB, 10 MB, ...).
    assert.ok(refused !== null, `no change was refused after ${changed}`);
    assert.ok(refused instanceof StoreError, `a StoreError, not ${refused}`);
    assert.equal(refused.code, "limit", refused.message);
    assert.match(refused.message, new RegExp(`document ${id}'s new base`));
    assert.match(refused.message, /wasm heap/);
    assert.ok(changed >= 10, `${changed} changes before the refusal`);

    // Every committed change, none of the refused one.
    const doc = await owner.documents.load(id);
    assert.equal(doc.version, changed + 1);
    assert.equal(doc.value.parts.length, changed);
    assert.equal(doc.value.parts[changed - 1], part(changed - 1));
    // A change that writes no base still commits.
    await owner.tx(async (tx) => { await tx.documents.change(id, [{ op: "add", path: "/small", value: 1 }]); });
    assert.equal((await owner.documents.load(id)).value.small, 1);
    assert.equal(store.head, changed + 2);

    // The list of versions, with the heap as full as the refusal left it:
    // each version's row holds its base (5 MB, 10 MB, ... each), and the
    // list read them all at once, which aborted the core (session 50's
    // probe). It reads them a page of 8 MiB at a time now.
    const versions = await owner.documents.versions(id);
    assert.deepEqual(versions.map((v) => v.version), Array.from({ length: changed + 2 }, (_, i) => i + 1));
    assert.deepEqual(versions.map((v) => v.seq), Array.from({ length: changed + 2 }, (_, i) => i + 1));
    assert.equal((await owner.documents.load(id, { at: 3 })).value.parts.length, 2);
    await owner.tx(async (tx) => { await tx.documents.change(id, [{ op: "add", path: "/after", value: 2 }]); });
    assert.equal((await owner.documents.versions(id)).length, changed + 3);
  } finally {
    await store.close();
  }
});
