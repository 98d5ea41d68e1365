// A misspelt option is refused with invalid/args naming it and the options
// the call takes; these calls used to ignore it (a `lable` gave a snapshot
// without its label, a `limt` a page of the default size, a `timout` a lock
// that waited for ever).

import assert from "node:assert/strict";
import { test } from "node:test";

import { createRelay, defineEdges, defineTable, deleteStore, followRelay, importStore, int, listStores, openReplica, openStore, pullSession, query, serve, str } from "../../js/index.js";
import { rejectsWith, tempDir, throwsWith } from "./helpers.js";

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
  // A misspelt host put the owner (and its tables) under host "session".
  throwsWith(() => store.object({ type: "notes", hots: "agent" }), "invalid/args", ["address", '"hots"', "host, type"]);
  assert.equal(store.object({ type: "notes", host: "agent" }).name, "agent:notes");
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

// A misspelt edge option widened the call: deleteEdges(a, { directon: "out",
// knd: "tag" }) deleted all three of a's edges, where one was meant. A
// misspelt authorize left a relay open to every request.
test("neighbours, deleteEdges, owner.table, createRelay, followRelay, pullSession, deleteStore and listStores refuse an option they do not take", async () => {
  const store = await openStore({ backend: "memory" });
  const Links = defineEdges("links", { kinds: ["ref", "tag"] });
  const notes = store.object({ type: "notes" });
  const links = notes.table(Links);
  await notes.tx(async (tx) => {
    await tx.put(links, { from: "a", to: "b", kind: "ref" });
    await tx.put(links, { from: "c", to: "a", kind: "ref" });
    await tx.put(links, { from: "a", to: "d", kind: "tag" });
  });
  await rejectsWith(links.neighbours("a", { directon: "in" }), "invalid/args", ['"directon"', "kind, direction, limit, after"]);
  await rejectsWith(notes.tx((tx) => tx.deleteEdges(links, "a", { directon: "out", knd: "tag" })), "invalid/args", ['"directon"', "kind, direction"]);
  assert.equal(await links.count(), 3, "no edge was deleted");
  await notes.tx((tx) => tx.deleteEdges(links, "a", { direction: "out", kind: "tag" }));
  assert.equal(await links.count(), 2, "the right spelling deletes the one edge");
  assert.deepEqual((await links.neighbours("a", { direction: "in" })).rows.map((e) => e.from), ["c"]);
  throwsWith(() => notes.table(Items, { onprogres: () => {} }), "invalid/args", ['"onprogres"', "onProgress"]);

  throwsWith(() => createRelay({ open: () => ({ backend: "memory" }), authorise: () => false }), "invalid/args", ['"authorise"', "authorize"]);
  throwsWith(() => createRelay({ open: () => ({ backend: "memory" }), maxbody: 10 }), "invalid/args", ['"maxbody"', "maxBody"]);
  const replica = await openReplica({ backend: "memory" });
  throwsWith(() => followRelay({ relay: "http://r.test", replica, intervall: 20 }), "invalid/args", ['"intervall"', "interval"]);
  await replica.close();
  await rejectsWith(pullSession({ relay: "http://r.test/sessions/s", timout: 100 }, { backend: "memory" }), "invalid/args", ['"timout"', "timeout"]);
  const dir = tempDir("onestore-options-");
  await rejectsWith(deleteStore({ backend: "sqlite", path: `${dir}/s.sqlite`, pth: "x" }), "invalid/args", ['"pth"', "backend, path"]);
  await rejectsWith(listStores({ backend: "sqlite", dir, dirr: "x" }), "invalid/args", ['"dirr"', "backend, dir"]);
  assert.deepEqual(await listStores({ backend: "sqlite", dir }), []);
  await store.close();
});

test("openStore and openReplica refuse a set option of another backend, naming it and the backends it is for; undefined is no option", async () => {
  const { openReplica } = await import("../../js/index.js");
  for (const [options, named] of [
    [{ backend: "memory", durability: "relaxed" }, ["durability", '"sqlite" or "opfs"', '"memory"']],
    [{ backend: "memory", lockTimeout: 5 }, ["lockTimeout"]],
    [{ backend: "memory", onFenced: () => {} }, ["onFenced"]],
    [{ backend: "memory", adoptForeign: true }, ["adoptForeign"]],
    [{ backend: "memory", storage: {} }, ["storage", '"durable"']],
    [{ backend: "sqlite", path: ":memory:", name: "x" }, ["name", '"opfs"']],
    [{ backend: "sqlite", path: ":memory:", storage: {} }, ["storage"]],
  ]) {
    await rejectsWith(openStore(options), "invalid/args", named);
    await rejectsWith(openReplica(options), "invalid/args", named);
  }
  const store = await openStore({ backend: "memory", durability: undefined, lockTimeout: undefined });
  await store.close();
});
