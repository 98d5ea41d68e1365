// listStores({ backend: "sqlite", dir }) in Node: the stores of a folder with
// their id, head, size and role, read without taking any over (an open
// store keeps committing), other files and other applications' SQLite
// databases skipped; bad options refused.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { test } from "node:test";
import Database from "better-sqlite3";

import { defineTable, int, listStores, openReplica, openStore, str } from "../../js/index.js";
import { rejectsWith, tempDir } from "./helpers.js";

const Msgs = defineTable("messages", { columns: { id: int(), text: str() }, key: ["id"] });

test("lists a store per conversation beside the global one, with id, head and size, without taking them over", async () => {
  const dir = tempDir("onestore-list-");
  const global = await openStore({ backend: "sqlite", path: join(dir, "global.sqlite"), id: "global" });
  const convs = [];
  for (const c of ["c1", "c2"]) {
    const s = await openStore({ backend: "sqlite", path: join(dir, "conversations", `${c}.sqlite`), id: c });
    const chat = s.object({ type: "chat" });
    const msgs = chat.table(Msgs);
    await chat.tx(async (tx) => { await tx.put(msgs, { id: 1, text: "hi" }); });
    convs.push({ s, chat, msgs });
  }
  const replica = await openReplica({ backend: "sqlite", path: join(dir, "copy.sqlite") });
  writeFileSync(join(dir, "notes.txt"), "not a store");
  const other = new Database(join(dir, "other.db"));
  other.exec("CREATE TABLE t (x)");
  other.close();

  const top = await listStores({ backend: "sqlite", dir });
  assert.deepEqual(top.map((s) => [s.path, s.id, s.head, s.replica]), [
    [join(dir, "copy.sqlite"), replica.id, 0, true],
    [join(dir, "global.sqlite"), "global", 0, false],
  ]);
  for (const s of top) assert.ok(s.size >= 4096, `${s.path}: ${s.size} bytes`);

  const listed = await listStores({ backend: "sqlite", dir: join(dir, "conversations") });
  assert.deepEqual(listed.map((s) => [s.id, s.head]), [["c1", 2], ["c2", 2]]);
  // Listing took nothing over: the owners go on committing.
  const { chat, msgs } = convs[0];
  await chat.tx(async (tx) => { await tx.put(msgs, { id: 2, text: "still mine" }); });
  assert.deepEqual((await listStores({ backend: "sqlite", dir: join(dir, "conversations") })).map((s) => s.head), [3, 2]);

  assert.deepEqual(await listStores({ backend: "sqlite", dir: join(dir, "nothing-here") }), []);
  for (const { s } of convs) await s.close();
  await replica.close();
  await global.close();
});

test("listing a store another process has open leaves it with that process: no fence, its commits go on", async (t) => {
  const dir = tempDir("onestore-list-other-");
  const path = join(dir, "theirs.sqlite");
  const child = spawn(process.execPath, [new URL("./fixtures/list-owner.mjs", import.meta.url).pathname, path], { stdio: ["pipe", "pipe", "inherit"] });
  t.after(() => child.kill("SIGKILL"));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => (await lines.next()).value;
  const head = Number((await next()).split(" ")[1]);
  const listed = await listStores({ backend: "sqlite", dir });
  assert.deepEqual(listed.map((s) => [s.path, s.head]), [[path, head]]);
  // A look that waited for the file's lock would have asked the owner to
  // hand it over: the owner would print "fenced" here instead.
  child.stdin.write("commit\n");
  assert.equal(await next(), `committed ${head + 1}`);
  assert.deepEqual((await listStores({ backend: "sqlite", dir })).map((s) => s.head), [head + 1]);
  child.stdin.write("commit\n");
  assert.equal(await next(), `committed ${head + 2}`);
  child.stdin.end("close\n");
  assert.equal(await next(), undefined);
  assert.deepEqual((await listStores({ backend: "sqlite", dir })).map((s) => s.head), [head + 2]);
});

test("bad options are refused with invalid/args", async () => {
  await rejectsWith(listStores(), "invalid/args", ["options"]);
  await rejectsWith(listStores({ backend: "memory" }), "invalid/args", ["memory"]);
  await rejectsWith(listStores({ backend: "sqlite" }), "invalid/args", ["dir"]);
  await rejectsWith(listStores({ backend: "sqlite", dir: "a\0b" }), "invalid/args", ["NUL"]);
});

// A store file this process may read but not write (mode 0444, a user
// other than its owner). Before, its read-only listing opened it for
// writing, failed with EACCES, and skipped it as no store. Run as the
// unprivileged user `nobody` (root reads and writes any file): skipped where
// this process cannot switch user.
test("a store file that can only be read is listed; opening it as a store fails naming EACCES", async (t) => {
  if (process.getuid?.() !== 0) return t.skip("needs root, to run the check as another user");
  const dir = tempDir("onestore-list-ro-");
  chmodSync(dir, 0o777);
  const path = join(dir, "ro.sqlite");
  const store = await openStore({ backend: "sqlite", path });
  const owner = store.object({ type: "app" });
  await owner.tx(async (tx) => { await tx.put(owner.table(Msgs), { id: 1, text: "a" }); });
  const head = store.head;
  await store.close();
  chmodSync(path, 0o444);
  const script = `
    import { listStores, openStore } from ${JSON.stringify(new URL("../../js/index.js", import.meta.url).href)};
    const listed = (await listStores({ backend: "sqlite", dir: process.argv[1] })).map((s) => [s.path, s.head]);
    let open = "opened";
    try { await (await openStore({ backend: "sqlite", path: process.argv[1] + "/ro.sqlite" })).close(); } catch (e) { open = e.code + " " + e.message; }
    console.log(JSON.stringify({ listed, open }));`;
  const out = await new Promise((resolve, reject) => {
    const child = spawn("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "--input-type=module", "-e", script, dir], { stdio: ["ignore", "pipe", "inherit"] });
    let text = "";
    child.stdout.on("data", (d) => { text += d; });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(text) : reject(new Error(`exit ${code}: ${text}`))));
  });
  const { listed, open } = JSON.parse(out.trim().split("\n").at(-1));
  assert.deepEqual(listed, [[path, head]]);
  assert.match(open, /^storage_failed .*EACCES/);
});
