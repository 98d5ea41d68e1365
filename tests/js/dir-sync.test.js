// Checks, with the real strace, that a Node store file's first `full` commit
// is durable by name as well as by content: the WAL a store creates at open
// has its directory synced before the commit returns (a file's name is an
// entry of its directory, and until the directory is synced a power cut may
// take the file, and every commit in it, away), as SQLite's own VFS does.
// Files the store did not create get no directory sync.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { repoRoot, tempDir } from "./helpers.js";

const strace = "/usr/bin/strace";
const dir = tempDir("onestore-dirsync-");

// Runs `script` (an ES module's text) under strace; returns its syscalls of
// interest, one per line, fds shown with their paths (-y).
function traced(name, script) {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, script);
  const log = join(dir, `${name}.strace`);
  const r = spawnSync(
    strace,
    ["-f", "-y", "-qq", "-e", "trace=openat,fsync,fdatasync", "-o", log, process.execPath, file],
    { encoding: "utf8" },
  );
  assert.equal(r.status, 0, `${name}: ${r.stderr}`);
  return readFileSync(log, "utf8").split("\n");
}

const index = JSON.stringify(join(repoRoot, "js/index.js"));

// The script touches `${marker}-opened` once openStore has resolved and
// `marker` once its commit has returned.
function commitScript(storeDir, marker) {
  return `
import { closeSync, openSync } from "node:fs";
import { defineTable, openStore, str } from ${index};
const T = defineTable("notes", { columns: { id: str(), text: str() }, key: ["id"] });
const store = await openStore({ backend: "sqlite", path: ${JSON.stringify(join(storeDir, "s.sqlite"))}, durability: "full" });
closeSync(openSync(${JSON.stringify(`${marker}-opened`)}, "w"));
const owner = store.object({ host: "session", type: "notes" });
const notes = owner.table(T);
await owner.tx(async (tx) => { await tx.put(notes, { id: "a", text: "hello" }); });
closeSync(openSync(${JSON.stringify(marker)}, "w"));  // the commit has returned
await store.close();
`;
}

test("a store's first full commit syncs the directory of the WAL it created before it returns", {
  skip: !existsSync(strace) && "strace is not installed (scripts/setup.sh installs it)",
}, () => {
  const storeDir = join(dir, "first");
  mkdirSync(storeDir);
  const marker = join(dir, "first-committed");
  const lines = traced("first", commitScript(storeDir, marker));
  const at = (pred, what) => {
    const i = lines.findIndex(pred);
    assert.notEqual(i, -1, `no ${what} in the trace:\n${lines.join("\n")}`);
    return i;
  };
  const walCreated = at(
    (l) => l.includes("openat(") && l.includes(`${storeDir}/s.sqlite-wal"`) && l.includes("O_EXCL") && !l.includes("= -1"),
    "creation of the WAL",
  );
  const walSynced = at((l, i) => i > walCreated && /fdatasync\(\d+<[^>]*s\.sqlite-wal>\)/.test(l), "sync of the WAL");
  const dirSynced = at((l, i) => i > walCreated && l.includes(`fsync(`) && l.includes(`<${storeDir}>)`), "sync of the store's directory");
  const returned = at((l) => l.includes(`"${marker}"`), "marker");
  assert.ok(walSynced < dirSynced, "the directory is synced after the WAL's first sync");
  assert.ok(dirSynced < returned, "the directory is synced before the commit returns");
});

test("only a file the store created and synced gets its directory synced, once", {
  skip: !existsSync(strace) && "strace is not installed (scripts/setup.sh installs it)",
}, () => {
  const storeDir = join(dir, "again");
  mkdirSync(storeDir);
  traced("again-1", commitScript(storeDir, join(dir, "again-1-committed")));
  // The second open finds the database file; it creates a WAL again (the
  // WAL is removed at close); its switches of mode write page 1 with no
  // journal file.
  const marker = join(dir, "again-2-committed");
  const lines = traced("again-2", commitScript(storeDir, marker));
  // Opening a store that has pages syncs nothing: its switch to WAL and its
  // transaction (the epoch) reach the disk with the first commit's sync (or
  // the close's checkpoint); a power cut before that loses no commit
  // (tests/cpp/vfs_test.cc, NodeFileModeTest).
  const opened = lines.findIndex((l) => l.includes(`"${marker}-opened"`));
  const returned = lines.findIndex((l) => l.includes(`"${marker}"`));
  assert.ok(opened > 0 && returned > opened, `the markers are in the trace:\n${lines.join("\n")}`);
  const syncsOf = (from, to) => lines.slice(from, to).filter((l) => /^\d+\s+f(data)?sync\(/.test(l));
  assert.deepEqual(syncsOf(0, opened), [], "no sync while the store opens");
  assert.ok(syncsOf(opened, returned).some((l) => l.includes("s.sqlite-wal")), `the first commit syncs the WAL:\n${lines.slice(opened, returned + 1).join("\n")}`);
  const dirSyncs = lines.filter((l) => l.includes("fsync(") && l.includes(`<${storeDir}>)`));
  const created = lines
    .filter((l) => l.includes("openat(") && l.includes(storeDir) && l.includes("O_EXCL") && !l.includes("= -1"))
    .map((l) => /openat\([^,]*, "([^"]+)"/.exec(l)[1]);
  assert.ok(!created.includes(join(storeDir, "s.sqlite")), "the database file was not created again");
  assert.ok(created.includes(join(storeDir, "s.sqlite-wal")), `a WAL was created: ${created}`);
  assert.ok(!created.includes(join(storeDir, "s.sqlite-journal")), `no journal file for the switches of mode: ${created}`);
  const createdAndSynced = created.filter((path) => lines.some((l) => l.includes("fdatasync(") && l.includes(`<${path}`)));
  assert.ok(createdAndSynced.includes(join(storeDir, "s.sqlite-wal")), `the WAL was synced: ${createdAndSynced}`);
  assert.equal(dirSyncs.length, createdAndSynced.length,
    `one directory sync per file created and synced:\n${dirSyncs.join("\n")}\n${createdAndSynced.join("\n")}`);
});
