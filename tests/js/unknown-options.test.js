// A misspelt option is refused with invalid/args naming it and the options
// the call takes; these calls used to ignore it (a `lable` gave a snapshot
// without its label, a `limt` a page of the default size, a `timout` a lock
// that waited for ever).

import assert from "node:assert/strict";
import { test } from "node:test";

import { defineTable, importStore, int, openStore, query, serve, str } from "../../js/index.js";
import { rejectsWith, throwsWith } from "./helpers.js";

const Items = defineTable("items", { columns: { id: str(), n: int() }, key: ["id"] });

test("store.object, snapshot, blobs.list, documents, page, export, importStore, lock and serve refuse an option they do not take, naming it", async () => {
  const store = await openStore({ backend: "memory" });
  const notes = store.object({ type: "notes" });
  const items = notes.table(Items);
  const id = await notes.tx(async (tx) => {
    await tx.put(items, { id: "a", n: 1 });
    return tx.documents.create({ kind: "d" }, { v: 1 });
  });
  const head = store.head;

  throwsWith(() => store.object({ type: "other" }, { adpot() {} }), "invalid/args", ['"adpot"', "adopt, checkpointWhen"]);
  await rejectsWith(store.snapshot({ lable: "x" }), "invalid/args", ['"lable"', "label"]);
  assert.deepEqual(await store.snapshots(), [], "no snapshot was taken");
  await rejectsWith(store.blobs.list({ limt: 5 }), "invalid/args", ['"limt"', "after, limit"]);
  await rejectsWith(notes.documents.load(id, { seq: 1 }), "invalid/args", ['"seq"', "at"]);
  await rejectsWith(notes.documents.find({ kind: "d" }, { seq: 1 }), "invalid/args", ['"seq"', "at"]);
  await rejectsWith(notes.documents.list({}, 10, { afetr: "x" }), "invalid/args", ['"afetr"', "after"]);
  await rejectsWith(items.page(query(Items), 10, undefined, { cursor: "x" }), "invalid/args", ['"cursor"', "after"]);
  throwsWith(() => store.export({ onProgres: () => {} }), "invalid/args", ['"onProgres"', "onProgress"]);
  const archive = new Uint8Array(await new Response(store.export()).arrayBuffer());
  await rejectsWith(importStore(archive, { backend: "memory" }, { onprogress: () => {} }), "invalid/args", ['"onprogress"', "onProgress"]);
  await rejectsWith(store.lock("x", async () => 1, { timout: 5 }), "invalid/args", ['"timout"', "timeout"]);
  throwsWith(() => serve(store, { methods: {}, prot: null }), "invalid/args", ['"prot"', "methods, port"]);

  // The right spellings still work, and nothing was written by the refusals.
  assert.equal(store.head, head);
  assert.equal((await store.snapshot({ label: "x" })).label, "x");
  assert.deepEqual((await store.blobs.list({ limit: 5 })).hashes, []);
  assert.deepEqual((await notes.documents.load(id, { at: head })).value, { v: 1 });
  assert.equal((await items.page(query(Items), 10, undefined, { after: "" })).rows.length, 1);
  assert.equal(await store.lock("x", async () => 1, { timeout: 5 }), 1);
  await store.close();
});
