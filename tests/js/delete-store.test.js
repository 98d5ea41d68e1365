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

test("deleteStore refuses a file that is not a store (a text file, another application's SQLite database made by the sqlite3 command) and deletes nothing", async (t) => {
  const { execFileSync } = await import("node:child_process");
  const dir = mkdtempSync(join(tmpdir(), "onestore-delete-other-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const app = join(dir, "app.db");
  execFileSync("sqlite3", [app, "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users VALUES (1, 'ana');"]);
  const notes = join(dir, "notes.txt");
  writeFileSync(notes, "a user's own notes, not a store");
  for (const [path, why] of [[app, "another application"], [notes, "not a SQLite database"]]) {
    await assert.rejects(deleteStore({ backend: "sqlite", path }), (e) => e.code === ErrorCodes.InvalidArgs && e.message.includes(why) && e.message.includes(path) && e.message.includes("nothing was deleted"));
    assert.ok(existsSync(path), `${path} is still there`);
  }
  assert.equal(execFileSync("sqlite3", [app, "SELECT name FROM users"], { encoding: "utf8" }).trim(), "ana");
  // A store beside them is still deleted.
  const store = await openStore({ backend: "sqlite", path: join(dir, "s.sqlite") });
  await store.close();
  assert.equal(await deleteStore({ backend: "sqlite", path: join(dir, "s.sqlite") }), true);
  assert.equal(existsSync(join(dir, "s.sqlite")), false);
});
