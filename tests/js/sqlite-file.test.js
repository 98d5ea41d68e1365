// Checks what a sqlite store file promises beyond the contract: data
// survives close and reopen, the real sqlite3 command reads it, a second
// opener fences the first without losing anything either committed, and the
// lock file between processes is held while the store is open (a WAL in
// exclusive mode, put back to a plain rollback-journal file at close), taken
// over when stale, and waited for when live.

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs, { existsSync, rmSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { defineTable, int, json, openStore, query, str } from "../../js/index.js";
import { rejectsWith, tempDir } from "./helpers.js";

const Edits = defineTable("edits", {
  columns: { id: str(), path: str(), at: int(), meta: json().optional() },
  key: ["id"],
  indexes: { byPath: ["path", "at"] },
});

const dir = tempDir("onestore-file-");
const sqlite3 = "/usr/bin/sqlite3";

async function openEdits(path, options = {}) {
  const store = await openStore({ backend: "sqlite", path, ...options });
  const owner = store.object({ host: "session", type: "file-history" });
  return { store, owner, edits: owner.table(Edits) };
}

test("data survives close and reopen, with its id and head", async () => {
  const path = join(dir, "nested", "folder", "reopen.sqlite");
  const a = await openEdits(path, { id: "session-42" });
  assert.ok(existsSync(path), "openStore creates the file and its folders");
  await a.owner.tx(async (tx) => {
    await tx.put(a.edits, { id: "e1", path: "src/app.ts", at: 1, meta: { lines: 3 } });
    await tx.put(a.edits, { id: "e2", path: "src/b.ts", at: 2n ** 60n });
  });
  const head = a.store.head;
  await a.store.close();

  const b = await openEdits(path);
  assert.equal(b.store.id, "session-42");
  assert.equal(b.store.head, head, "reopening the same table commits nothing");
  assert.deepEqual(await b.edits.get("e1"), { id: "e1", path: "src/app.ts", at: 1, meta: { lines: 3 } });
  assert.equal((await b.edits.get("e2")).at, 2n ** 60n);
  assert.equal((await b.store.outbox.read(0, 100)).commits.length, head);
  await b.store.close();
});

test("reopening a file whose table has an index listing key columns commits nothing", async () => {
  // issue 9: the index was recorded without its key columns, so every
  // reopen saw another declaration and committed the table record again.
  const path = join(dir, "key-index.sqlite");
  const AB = defineTable("ab", {
    columns: { a: str(), b: int(), c: str() },
    key: ["a", "b"],
    indexes: { byB: ["b"], byCB: ["c", "b"] },
  });
  let store = await openStore({ backend: "sqlite", path });
  let ab = store.object({ host: "session", type: "t" }).table(AB);
  await store.object({ host: "session", type: "t" }).tx((tx) => tx.put(ab, { a: "x", b: 1, c: "k" }));
  const head = store.head;
  await store.close();
  for (let i = 0; i < 3; i++) {
    store = await openStore({ backend: "sqlite", path });
    ab = store.object({ host: "session", type: "t" }).table(AB);
    assert.deepEqual(await ab.get(["x", 1]), { a: "x", b: 1, c: "k" });
    assert.equal(store.head, head, `reopen ${i + 1} committed nothing`);
    await store.close();
  }
  const indexes = execFileSync(sqlite3, [path, "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name"], { encoding: "utf8" });
  assert.match(indexes, /"t\/ab\/byB" ON "t\/ab" \("b", "a"\)/, "the physical index ends with the key");
  assert.match(indexes, /"t\/ab\/byCB" ON "t\/ab" \("c", "b", "a"\)/);
});

test("the sqlite3 command reads the store file's tables", async (t) => {
  assert.ok(existsSync(sqlite3), "the sqlite3 command is installed (npm run setup)");
  const path = join(dir, "readable.sqlite");
  const { store, owner, edits } = await openEdits(path);
  await owner.tx(async (tx) => {
    await tx.put(edits, { id: "e1", path: "src/测试😀.ts", at: 7, meta: { a: 1 } });
  });
  await store.close();
  const out = execFileSync(sqlite3, ["-json", path, 'select * from "file-history/edits"'], { encoding: "utf8" });
  const rows = JSON.parse(out);
  assert.equal(rows.length, 1);
  assert.equal(rows[0].id, "e1");
  assert.equal(rows[0].path, "src/测试😀.ts");
  assert.equal(rows[0].at, 7);
  assert.deepEqual(JSON.parse(rows[0].meta), { a: 1 });
});

test("the sqlite3 command reads the store while it is open", async (t) => {
  assert.ok(existsSync(sqlite3), "the sqlite3 command is installed (npm run setup)");
  const path = join(dir, "live.sqlite");
  const { store, owner, edits } = await openEdits(path);
  await owner.tx(async (tx) => {
    await tx.put(edits, { id: "e1", path: "a", at: 1 });
  });
  const out = execFileSync(sqlite3, ["-readonly", path, 'select count(*) from "file-history/edits"'], { encoding: "utf8" });
  assert.equal(out.trim(), "1");
  await store.close();
});

test("a sqlite file takes rows far above a Durable Object's 2 MB (its limit is the durable backend's only)", async () => {
  const path = join(dir, "big-rows.sqlite");
  const { store, owner, edits } = await openEdits(path);
  const path8 = "p".repeat(8 * 2 ** 20);
  await owner.tx(async (tx) => { await tx.put(edits, { id: "big", path: path8, at: 1, meta: { text: "m".repeat(3 * 2 ** 20) } }); });
  await store.close();
  const again = await openEdits(path);
  const row = await again.edits.get("big");
  assert.equal(row.path.length, 8 * 2 ** 20);
  assert.equal(row.meta.text.length, 3 * 2 ** 20);
  await again.store.close();
});

test("an outbox record damaged in the file is reported as storage_failed naming its seq, never a raw SyntaxError; the rows still read", async () => {
  assert.ok(existsSync(sqlite3), "the sqlite3 command is installed (npm run setup)");
  for (const [damage, label] of [["''", "empty"], ["substr(record, 1, 20)", "cut"]]) {
    const path = join(dir, `damaged-${label}.sqlite`);
    const { store, owner, edits } = await openEdits(path);
    for (let i = 0; i < 5; i++) await owner.tx(async (tx) => { await tx.put(edits, { id: `e${i}`, path: "a", at: i }); });
    await store.close();
    // What SQLite reads back from a page cut short or overwritten, made
    // with the real sqlite3 command: the record of seq 3 is not its JSON.
    execFileSync(sqlite3, [path, `update _outbox set record = ${damage} where seq = 3`]);
    const again = await openEdits(path);
    await rejectsWith(again.store.outbox.read(0, 100), "storage_failed", ["outbox record read as seq 3", "damaged"]);
    await rejectsWith(again.store.log({ seq: 3 }), "storage_failed", ["seq 3", "damaged"]);
    const batch = await again.store.outbox.read(3, 100);
    assert.equal(batch.commits[0].seq, 4, `${label}: the records after it still read`);
    assert.equal(batch.to, again.store.head);
    assert.equal(await again.edits.count(), 5, `${label}: the rows still read`);
    await again.store.close();
  }
});

test("a second opener fences the first; nothing either committed is lost", async () => {
  const path = join(dir, "fence.sqlite");
  const told = [];
  const first = await openEdits(path, { onFenced: (e) => told.push(e.code) });
  await first.owner.tx(async (tx) => {
    await tx.put(first.edits, { id: "by-first", path: "a", at: 1 });
  });
  const second = await openEdits(path);
  assert.deepEqual(told, ["fenced"], "the first store's onFenced was called once");
  await second.owner.tx(async (tx) => {
    await tx.put(second.edits, { id: "by-second", path: "b", at: 2 });
  });
  await rejectsWith(first.owner.tx(async (tx) => {
    await tx.put(first.edits, { id: "late", path: "c", at: 3 });
  }), "fenced");
  await rejectsWith(first.store.commit([{ op: "put", table: "file-history/edits", row: { id: "late2", path: "c", at: 3 } }]), "fenced");
  // Its id, head and origin still read (the last known): a listener that
  // only shows them must not throw.
  assert.equal(first.store.origin, null);
  assert.ok(first.store.head >= 1);
  // Every later call, not only commits: the docs promise `fenced` for each.
  for (const [what, call] of Object.entries({
    lock: () => first.store.lock("nightly", async () => "ran"),
    snapshot: () => first.store.snapshot(),
    snapshots: () => first.store.snapshots(),
    object: async () => first.store.object({ type: "another" }),
    read: () => first.store.read(async () => "read"),
    log: () => first.store.log({ seq: 1 }),
    get: () => first.edits.get("by-first"),
    blobs: () => first.store.blobs.has("0".repeat(64)),
    outbox: () => first.store.outbox.read(0, 10),
  })) await rejectsWith(call, "fenced").catch((e) => assert.fail(`store.${what}: ${e.message}`));
  assert.deepEqual((await second.edits.page(query(Edits), 10)).rows.map((r) => r.id), ["by-first", "by-second"]);
  await first.store.close();
  await second.store.close();

  const third = await openEdits(path);
  assert.deepEqual((await third.edits.page(query(Edits), 10)).rows.map((r) => r.id), ["by-first", "by-second"]);
  const seqs = (await third.store.outbox.read(0, 100)).commits.map((c) => c.seq);
  assert.deepEqual(seqs, seqs.map((_, i) => i + 1), "one unbroken seq");
  await third.store.close();
});

test("an open store holds its file's lock between transactions and runs a WAL; closed, it is a plain file with no side files", async () => {
  const path = join(dir, "held.sqlite");
  const a = await openEdits(path);
  await a.owner.tx(async (tx) => { await tx.put(a.edits, { id: "e1", path: "p", at: 1 }); });
  // Before: the lock was taken per transaction and released after it, and
  // the journal was a rollback journal (TRUNCATE): neither file was there.
  assert.ok(existsSync(`${path}-lock`), "the lock is held between transactions");
  assert.ok(existsSync(`${path}-wal`), "the store writes a WAL");
  assert.equal((await a.edits.get("e1")).at, 1);
  await a.store.close();
  for (const side of ["-lock", "-wal", "-journal", "-shm"]) assert.ok(!existsSync(path + side), `no ${side} after close`);
  assert.equal(execFileSync(sqlite3, ["-readonly", path, "pragma journal_mode"], { encoding: "utf8" }).trim(), "delete");
  const b = await openEdits(path);
  assert.equal((await b.edits.get("e1")).at, 1);
  await b.store.close();
});

// The store keeps 16 MiB of its file's pages in memory (SQLite's own default
// is 2 MB) and keeps them between transactions (it holds the file's lock for
// life): once a table of about 5 MB has been read, reading it again reads
// nothing from the file. Counted at Node's fs.readSync, which the store's
// file runtime (js/files-node.js) reads every page through.
test("a table of a few MB read once is read again without reading the file", async () => {
  const path = join(dir, "page-cache.sqlite");
  const { store, owner, edits } = await openEdits(path);
  const N = 30000;
  const id = (i) => `e${String(i).padStart(6, "0")}`;
  const pad = "x".repeat(120);
  for (let at = 0; at < N; at += 10000) {
    await owner.tx(async (tx) => { for (let i = at; i < at + 10000; i++) await tx.put(edits, { id: id(i), path: `src/${pad}/${i}.ts`, at: i }); });
  }
  await store.close();
  assert.ok(statSync(path).size > 6_000_000, `the file is ${statSync(path).size} bytes, more than SQLite's default cache`);
  const again = await openEdits(path);
  const readSync = fs.readSync;
  let reads = 0;
  fs.readSync = (...args) => { reads++; return readSync(...args); };
  try {
    const pass = async () => {
      for (let i = 0; i < N; i += 7) assert.equal((await again.edits.get(id(i)))?.at, i);
    };
    await pass();
    assert.ok(reads > 100, `the first pass reads the table from the file (${reads} reads)`);
    reads = 0;
    await pass();
    assert.equal(reads, 0, "the second pass finds every page in memory");
  } finally {
    fs.readSync = readSync;
    await again.store.close();
  }
});

test("a lock file left by a process that ended is taken over; a live holder makes an open wait, then fail, and the next open works", async () => {
  const path = join(dir, "locks.sqlite");
  const a = await openEdits(path, { lockTimeout: 300 });
  await a.owner.tx(async (tx) => { await tx.put(a.edits, { id: "e1", path: "p", at: 1 }); });
  await a.store.close();
  assert.ok(!existsSync(`${path}-lock`), "the lock is released when the store closes");

  const ended = spawnSync(process.execPath, ["-e", ""]).pid;  // no process has this pid any more
  writeFileSync(`${path}-lock`, `${ended}@${hostname()}`);
  const b = await openEdits(path, { lockTimeout: 300 });
  await b.owner.tx(async (tx) => { await tx.put(b.edits, { id: "e2", path: "p", at: 2 }); });
  assert.equal((await b.edits.get("e2")).at, 2);
  await b.store.close();

  writeFileSync(`${path}-lock`, `${process.pid}@${hostname()}`);  // a live holder
  await rejectsWith(openEdits(path, { lockTimeout: 300 }), "storage_failed", ["locked"]);
  rmSync(`${path}-lock`);
  const c = await openEdits(path, { lockTimeout: 300 });
  await c.owner.tx(async (tx) => { await tx.put(c.edits, { id: "e3", path: "p", at: 3 }); });
  assert.deepEqual((await c.edits.page(query(Edits), 10)).rows.map((r) => r.id), ["e1", "e2", "e3"]);
  await c.store.close();
});

test("a path that cannot hold a store, or a file that is not one, is refused with a StoreError naming it", async () => {
  await rejectsWith(openStore({ backend: "sqlite", path: "/dev/null/x.sqlite" }), "storage_failed", ["/dev/null/x.sqlite"]);
  const notAStore = join(dir, "not-a-store.sqlite");
  writeFileSync(notAStore, "hello, this is not SQLite at all, just some text");
  await rejectsWith(openStore({ backend: "sqlite", path: notAStore }), "storage_failed", [`opening ${notAStore}:`, "not a database"]);
  assert.equal(execFileSync("cat", [notAStore], { encoding: "utf8" }).startsWith("hello"), true, "the file is left as it was");
});

// A store's file, its WAL or its folder removed while it is open. Before,
// nothing noticed: commits went on being acknowledged into files with no
// name left on the disk, and were lost at close (or at a crash: a WAL
// removed, then a kill, left none of the commits after it). Now the store
// stops at its next look (within a millisecond of a call, 20 ms idle) with
// `storage_failed` naming the file.
test("a store whose file, WAL or folder is removed while it is open stops with storage_failed naming the file", async () => {
  const Notes = defineTable("notes", { columns: { id: str() }, key: ["id"] });
  for (const [what, remove] of [
    ["the file", (dir, path) => rmSync(path)],
    ["the WAL", (dir, path) => rmSync(`${path}-wal`)],
    ["the folder", (dir) => rmSync(dir, { recursive: true })],
  ]) {
    const dir = join(tempDir("onestore-removed-"), "store");
    const path = join(dir, "s.sqlite");
    const store = await openStore({ backend: "sqlite", path });
    const owner = store.object({ type: "app" });
    const notes = owner.table(Notes);
    await owner.tx(async (tx) => { await tx.put(notes, { id: "a" }); });
    assert.ok(existsSync(`${path}-wal`), "the store writes a WAL");
    remove(dir, path);
    await new Promise((r) => setTimeout(r, 50));
    const named = what === "the WAL" ? `${path}-wal` : path;
    await rejectsWith(owner.tx(async (tx) => { await tx.put(notes, { id: "b" }); }), "storage_failed", [named, "was removed while its store was open"]);
    await rejectsWith(notes.get("a"), "storage_failed", ["was removed"]);
    await store.close();
  }
});
