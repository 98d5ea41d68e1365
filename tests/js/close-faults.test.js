// Checks that a store whose release fails after its commits succeeded says
// so: close() rejects with storage_failed (the store is closed anyway, every
// acknowledged commit is kept and reopens). On a Node store file the faults
// are injected by wrapping a method of the Node files object the VFS calls
// (unlinking the lock file, closing a file), which the real file system
// cannot be made to fail on demand; SQLite ignores both while closing, so
// before this check close() resolved as if all were well. A replica's
// close() reports it too. The core of any
// backend (a Durable Object's among them) whose close answers an error, and
// a session whose release throws, are injected through a fake core.
import assert from "node:assert/strict";
import { existsSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, test } from "node:test";

import { defineTable, int, openReplica, openStore, str } from "../../js/index.js";
import { makeStore } from "../../js/store.js";
import nodeFiles from "../../js/files-node.js";
import { fakeCore } from "./fake-core.js";
import { rejectsWith, tempDir } from "./helpers.js";

const Notes = defineTable("notes", { columns: { id: int(), text: str() }, key: ["id"] });
const dir = tempDir("onestore-close-faults-");
const original = { unlock: nodeFiles.unlock, close: nodeFiles.close };

afterEach(() => Object.assign(nodeFiles, original));

async function open(path) {
  const store = await openStore({ backend: "sqlite", path });
  const owner = store.object({ type: "notebook" });
  return { store, owner, notes: owner.table(Notes) };
}

async function putNotes(s, n) {
  for (let id = 1; id <= n; id++) await s.owner.tx((tx) => tx.put(s.notes, { id, text: `note ${id}` }));
}

test("a lock file that cannot be removed at close rejects close() with storage_failed, and the commits stay", async () => {
  const path = join(dir, "unlock.sqlite");
  const s = await open(path);
  await putNotes(s, 3);
  nodeFiles.unlock = () => { throw new Error("EACCES: permission denied, unlink (injected)"); };
  const e = await rejectsWith(s.store.close(), "storage_failed", ["EACCES", "releasing the lock", path]);
  assert.match(e.message, /every commit it acknowledged is kept/);
  await rejectsWith(s.notes.get(1), "closed");
  Object.assign(nodeFiles, original);

  // The lock file is this (running) process's, so nothing else breaks it:
  // the user removes it, as the error told them it stayed.
  assert.ok(existsSync(`${path}-lock`), "the lock file the failed unlink left");
  unlinkSync(`${path}-lock`);
  const again = await open(path);
  assert.equal(again.store.head, 3 + 1);  // the table's declaration, then three puts
  assert.equal((await again.notes.get(3)).text, "note 3");
  await again.store.close();  // and a clean close resolves
});

test("a store file that fails to close rejects close() with storage_failed, and the file reopens whole", async () => {
  const path = join(dir, "close.sqlite");
  const s = await open(path);
  await putNotes(s, 2);
  nodeFiles.close = (id) => {
    original.close(id);  // the handle is gone, but the call reports a failure
    throw new Error("EIO: i/o error, close (injected)");
  };
  await rejectsWith(s.store.close(), "storage_failed", ["EIO", path]);
  Object.assign(nodeFiles, original);
  await rejectsWith(s.store.close(), "storage_failed", ["EIO"]);  // the same answer, asked twice

  const again = await open(path);
  assert.equal((await again.notes.get(2)).text, "note 2");
  await again.store.close();
});

test("a replica on a sqlite file whose lock file cannot be removed rejects close() the same way, and keeps its batches", async () => {
  const source = await open(join(dir, "source.sqlite"));
  await putNotes(source, 2);
  const path = join(dir, "replica.sqlite");
  const replica = await openReplica({ backend: "sqlite", path });
  await replica.applyBatch(await source.store.outbox.read(0, 100));
  nodeFiles.unlock = () => { throw new Error("EACCES: permission denied, unlink (injected)"); };
  await rejectsWith(replica.close(), "storage_failed", ["EACCES", "every commit it acknowledged is kept"]);
  Object.assign(nodeFiles, original);
  await rejectsWith(replica.close(), "storage_failed", ["EACCES"]);
  unlinkSync(`${path}-lock`);
  const again = await openReplica({ backend: "sqlite", path });
  assert.equal(again.head, source.store.head);
  await again.close();
  await source.store.close();
});

test("a core whose close answers storage_failed (a durable store's, injected) rejects close() after closing", async () => {
  const { core, calls } = fakeCore({ close: () => "!storage_failed durable: the Durable Object's storage refused to let go (injected)" });
  const store = makeStore(core, { id: "s1", head: 0 });
  const e = await rejectsWith(store.close(), "storage_failed", ["refused to let go", "every commit it acknowledged is kept"]);
  assert.ok(e.cause, "the core's error is the cause");
  assert.ok(calls.some((c) => c[0] === "delete"), "the core is freed anyway");
  await rejectsWith(() => store.outbox.read(0, 1), "closed");
});

test("a session whose release throws rejects close() with storage_failed after the core is closed", async () => {
  const { core, calls } = fakeCore();
  const session = { release() { throw new Error("the Web Lock could not be released (injected)"); } };
  const store = makeStore(core, { id: "s1", head: 0 }, session);
  await rejectsWith(store.close(), "storage_failed", ["Web Lock could not be released"]);
  assert.ok(calls.some((c) => c[0] === "close"), "the core was closed first");
});

test("closing a store whose release succeeds resolves, and a second close resolves too", async () => {
  const store = makeStore(fakeCore().core, { id: "s1", head: 0 });
  await store.close();
  await store.close();
});
