// Checks what a failing disk does to a sqlite store, end to end through the
// real wasm module: an fsync that fails during COMMIT stops the store with
// storage_failed (nobody knows whether the commit landed), every later call
// is refused, and the file reopens whole with every acknowledged commit. A
// write that fails before COMMIT only fails its own commit. The fault is
// injected by wrapping a method of the Node files object the VFS calls, the
// one fault the real file system cannot be made to produce on demand.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, test } from "node:test";

import { defineTable, int, openStore, str } from "../../js/index.js";
import nodeFiles from "../../js/files-node.js";
import { rejectsWith, tempDir } from "./helpers.js";

const Notes = defineTable("notes", { columns: { id: int(), text: str() }, key: ["id"] });
const dir = tempDir("onestore-faults-");
const original = { sync: nodeFiles.sync, write: nodeFiles.write };

afterEach(() => Object.assign(nodeFiles, original));

// Makes the next calls of `method` fail (all of them until restored).
function failFrom(method, message) {
  nodeFiles[method] = () => {
    throw new Error(message);
  };
}

async function open(path) {
  const store = await openStore({ backend: "sqlite", path });
  const owner = store.object({ type: "notebook" });
  return { store, owner, notes: owner.table(Notes) };
}

const put = (s, id) => s.owner.tx(async (tx) => { await tx.put(s.notes, { id, text: `note ${id}` }); });

test("an fsync failing during COMMIT stops the store, and the file reopens with every acknowledged commit", async () => {
  const path = join(dir, "sync.sqlite");
  const s = await open(path);
  for (let id = 1; id <= 5; id++) await put(s, id);
  const acknowledged = s.store.head;

  failFrom("sync", "EIO: i/o error, fsync (injected)");
  const e = await rejectsWith(put(s, 6), "storage_failed", ["COMMIT", "EIO"]);
  assert.match(e.message, /stopped/);
  Object.assign(nodeFiles, original);  // the disk is back; the store stays stopped
  await rejectsWith(put(s, 7), "storage_failed");
  await rejectsWith(s.notes.get(1), "storage_failed");
  // The calls that never reach the core are stopped too.
  for (const [what, call] of Object.entries({
    blobsPut: () => s.store.blobs.put(new Uint8Array([1, 2, 3])),
    blobsList: () => s.store.blobs.list(),
    lock: () => s.store.lock("job", async () => "ran"),
    snapshots: () => s.store.snapshots(),
  })) await rejectsWith(call, "storage_failed", ["stopped"]).catch((err) => assert.fail(`${what}: ${err.message}`));
  await s.store.close();

  const again = await open(path);
  assert.ok(again.store.head === acknowledged || again.store.head === acknowledged + 1, "the failed commit is all there or all gone");
  for (let id = 1; id <= 5; id++) assert.equal((await again.notes.get(id)).text, `note ${id}`);
  const six = await again.notes.get(6);
  assert.equal(six === undefined, again.store.head === acknowledged, "row 6 is there exactly when its commit is");
  await put(again, 7);
  await again.store.close();
  assert.equal(execFileSync("sqlite3", [path, "pragma integrity_check"], { encoding: "utf8" }).trim(), "ok");
});

test("a write failing before COMMIT fails only its own commit", async () => {
  const path = join(dir, "write.sqlite");
  const s = await open(path);
  await put(s, 1);
  const head = s.store.head;
  // A transaction big enough that SQLite writes pages before COMMIT: more
  // dirty pages (its rows and outbox record, about 24 MB) than the store's
  // 16 MiB page cache holds.
  failFrom("write", "ENOSPC: no space left on device, write (injected)");
  await assert.rejects(
    s.owner.tx(async (tx) => {
      for (let id = 100; id < 50100; id++) await tx.put(s.notes, { id, text: "x".repeat(200) });
    }),
    (err) => err.code === "storage_failed" && /ENOSPC/.test(err.message),
  );
  Object.assign(nodeFiles, original);
  assert.equal(s.store.head, head);
  assert.equal(await s.notes.get(100), undefined);
  await put(s, 2);
  assert.equal((await s.notes.get(2)).text, "note 2");
  await s.store.close();
  assert.equal(execFileSync("sqlite3", [path, "pragma integrity_check"], { encoding: "utf8" }).trim(), "ok");
});
