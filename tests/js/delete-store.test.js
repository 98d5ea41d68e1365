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
  for (const bad of [null, { backend: "opfs", name: "x" }, { backend: "memory" }, { backend: "sqlite", path: ":memory:" }, { backend: "sqlite", path: "" }, { backend: "sqlite", path: 10n }]) {
    await assert.rejects(deleteStore(bad), (e) => e.code === ErrorCodes.InvalidArgs && /deleteStore/.test(e.message));
  }
  // A file name no file system takes: before, a raw ENAMETOOLONG.
  await assert.rejects(deleteStore({ backend: "sqlite", path: join(mkdtempSync(join(tmpdir(), "onestore-delete-")), "x".repeat(300)) }), (e) => e.code === ErrorCodes.StorageFailed && /cannot delete/.test(e.message));
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

test("deleteStore refuses a store that is open, in this process or another, and deletes nothing; once the holder is gone (closed, or killed) it deletes", async (t) => {
  const { spawn } = await import("node:child_process");
  const { createInterface } = await import("node:readline");
  const { rejectsWith } = await import("./helpers.js");
  const dir = mkdtempSync(join(tmpdir(), "onestore-delete-open-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const Notes = defineTable("notes", { columns: { id: str() }, key: ["id"] });

  // In this process: the store goes on, and nothing it acknowledged is lost.
  const mine = join(dir, "mine.sqlite");
  const store = await openStore({ backend: "sqlite", path: mine });
  const owner = store.object({ type: "t" });
  const notes = owner.table(Notes);
  await owner.tx(async (tx) => { await tx.put(notes, { id: "before" }); });
  await rejectsWith(deleteStore({ backend: "sqlite", path: mine }), ErrorCodes.InvalidArgs, [mine, "is open", "nothing was deleted"]);
  await owner.tx(async (tx) => { await tx.put(notes, { id: "after" }); });
  await store.close();
  const reopened = await openStore({ backend: "sqlite", path: mine });
  const kept = [];
  for await (const r of reopened.object({ type: "t" }).table(Notes).rows()) kept.push(r.id);
  assert.deepEqual(kept, ["after", "before"]);
  await reopened.close();
  assert.equal(await deleteStore({ backend: "sqlite", path: mine }), true);

  // In another process, which is then killed: its lock file is left behind,
  // with no live holder, and the delete goes ahead.
  const theirs = join(dir, "theirs.sqlite");
  const child = spawn(process.execPath, [new URL("./fixtures/list-owner.mjs", import.meta.url).pathname, theirs], { stdio: ["pipe", "pipe", "inherit"] });
  t.after(() => child.kill("SIGKILL"));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  assert.match((await lines.next()).value, /^ready \d+$/);
  await rejectsWith(deleteStore({ backend: "sqlite", path: theirs }), ErrorCodes.InvalidArgs, [theirs, "is open"]);
  assert.ok(existsSync(theirs) && existsSync(`${theirs}-wal`), "nothing was deleted");
  child.stdin.write("commit\n");
  assert.match((await lines.next()).value, /^committed \d+$/, "the owner was not fenced");
  const exited = new Promise((resolve) => child.on("exit", resolve));
  child.kill("SIGKILL");
  await exited;
  assert.ok(existsSync(`${theirs}-lock`), "a killed owner leaves its lock file");
  assert.equal(await deleteStore({ backend: "sqlite", path: theirs }), true);
  assert.equal(existsSync(theirs) || existsSync(`${theirs}-wal`) || existsSync(`${theirs}-lock`), false);
});
