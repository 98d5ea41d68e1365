// Checks a sqlite store on a real full disk: a 2 MiB tmpfs mounted for the
// test (as root; skipped with the reason where mounting is not allowed).
// A store whose commit hits ENOSPC stops with storage_failed, and its
// close() then resolves (the failure was said on the call that stopped it);
// a close whose WAL checkpoint hits ENOSPC rejects with storage_failed and
// says the -wal stays; in both cases every acknowledged commit is in the
// files, reopened on a disk with room.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { defineTable, int, openStore, str } from "../../js/index.js";
import { rejectsWith, tempDir } from "./helpers.js";

const Items = defineTable("items", { columns: { id: int(), v: str() }, key: ["id"] });

// A fresh 2 MiB tmpfs, unmounted after the test; null (with why) when this
// machine does not let the test mount one.
function smallDisk(t) {
  const mnt = tempDir("onestore-disk-full-");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt], { stdio: "pipe" });
  } catch (e) {
    return { why: `cannot mount a tmpfs here: ${String(e.stderr || e.message).trim()}` };
  }
  t.after(() => execFileSync("umount", [mnt]));
  return { mnt };
}

// The rows of the store at `files` (a folder), copied to a disk with room.
async function rowsOnRoomyDisk(files) {
  const copy = tempDir("onestore-disk-full-copy-");
  cpSync(files, copy, { recursive: true });
  const store = await openStore({ backend: "sqlite", path: join(copy, "s.sqlite") });
  const items = store.object({ type: "app" }).table(Items);
  const ids = [];
  for await (const r of items.rows()) ids.push(r.id);
  await store.close();
  return ids.sort((a, b) => a - b);
}

for (const durability of ["full", "relaxed"]) {
  test(`durability ${durability}: a commit that hits a full disk stops the store; its close() resolves, and every acknowledged commit is kept`, async (t) => {
    const disk = smallDisk(t);
    if (!disk.mnt) return t.skip(disk.why);
    const folder = join(disk.mnt, "s");
    mkdirSync(folder);
    const store = await openStore({ backend: "sqlite", path: join(folder, "s.sqlite"), durability });
    const owner = store.object({ type: "app" });
    const items = owner.table(Items);
    const acked = [];
    let failed;
    for (let id = 1; id <= 400 && !failed; id++) {
      try {
        await owner.tx(async (tx) => { await tx.put(items, { id, v: "x".repeat(20000) }); });
        acked.push(id);
      } catch (e) {
        failed = e;
      }
    }
    assert.ok(failed, "2 MiB cannot hold 400 rows of 20 KB");
    assert.equal(failed.code, "storage_failed", failed.message);
    await rejectsWith(owner.tx(async (tx) => { await tx.put(items, { id: 9999, v: "y" }); }), "storage_failed");
    await store.close();
    assert.deepEqual(await rowsOnRoomyDisk(folder), acked);
  });
}

test("a close whose WAL checkpoint hits a full disk rejects with storage_failed, keeps the -wal for the next open, and keeps every commit", async (t) => {
  const disk = smallDisk(t);
  if (!disk.mnt) return t.skip(disk.why);
  const folder = join(disk.mnt, "s");
  mkdirSync(folder);
  const store = await openStore({ backend: "sqlite", path: join(folder, "s.sqlite") });
  const owner = store.object({ type: "app" });
  const items = owner.table(Items);
  // About 1.6 MB of WAL: the checkpoint would need as much again in the file.
  const ids = [];
  for (let id = 1; id <= 30; id++) {
    await owner.tx(async (tx) => { await tx.put(items, { id, v: "x".repeat(20000) }); });
    ids.push(id);
  }
  // The file system's reason too (before: "disk I/O error" alone).
  await rejectsWith(store.close(), "storage_failed", ["every commit it acknowledged is kept", "wal_checkpoint", "ENOSPC"]);
  assert.ok(readdirSync(folder).includes("s.sqlite-wal"));
  assert.deepEqual(await rowsOnRoomyDisk(folder), ids);
});
