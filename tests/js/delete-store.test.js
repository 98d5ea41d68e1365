// deleteStore in Node: a closed sqlite store's file and side files go; the
// next open starts a new store.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineTable, openStore, deleteStore, ErrorCodes, str } from "../../js/index.js";

test("deleteStore removes a closed sqlite store, and a new open starts at head 0", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "onestore-delete-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "s.sqlite");
  const store = await openStore({ backend: "sqlite", path });
  // One commit: the table's declaration.
  await store.object({ type: "t" }).table(defineTable("notes", { columns: { id: str() }, key: ["id"] })).count();
  assert.equal(store.head, 1);
  await store.close();
  writeFileSync(`${path}-journal`, "");  // a side file left behind
  assert.equal(await deleteStore({ backend: "sqlite", path }), true);
  assert.equal(existsSync(path), false);
  assert.equal(existsSync(`${path}-journal`), false);
  assert.equal(await deleteStore({ backend: "sqlite", path }), false);
  const again = await openStore({ backend: "sqlite", path });
  assert.equal(again.head, 0);
  await again.close();
});

test("deleteStore refuses other backends and paths that name no file", async () => {
  for (const bad of [null, { backend: "opfs", name: "x" }, { backend: "memory" }, { backend: "sqlite", path: ":memory:" }, { backend: "sqlite", path: "" }]) {
    await assert.rejects(deleteStore(bad), (e) => e.code === ErrorCodes.InvalidArgs && /deleteStore/.test(e.message));
  }
});
