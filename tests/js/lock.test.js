// Checks the lock between processes that a sqlite store file takes for each
// SQLite transaction (js/files-node.js): under heavy contention it excludes
// every other process (no read-modify-write of a shared counter is lost),
// a stale lock that several find at once is broken once, nothing is left
// when its holders are done, and a waiter that announced itself goes first.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { createNodeFiles } from "../../js/files-node.js";
import { tempDir } from "./helpers.js";

const worker = new URL("./fixtures/lock-worker.mjs", import.meta.url).pathname;

async function runWorkers(db) {
  writeFileSync(`${db}.count`, "0");
  const exits = [1, 2, 3].map(
    () =>
      new Promise((resolve) => {
        spawn(process.execPath, [worker, db, "2000"], { stdio: "inherit" }).on("exit", resolve);
      }),
  );
  assert.deepEqual(await Promise.all(exits), [0, 0, 0]);
  assert.equal(Number(readFileSync(`${db}.count`, "utf8")), 6000);
  assert.ok(!existsSync(`${db}-lock`), "released at the end");
  assert.ok(!existsSync(`${db}-lock.break`), "no breaker left");
  assert.ok(!existsSync(`${db}-lock.want`), "no waiter's announcement left");
}

test("three processes that take turns through the lock lose none of 6000 increments", async () => {
  await runWorkers(join(tempDir("onestore-lock-"), "s.sqlite"));
});

test("three processes that all find a stale lock at once break it once and then take turns", async () => {
  const db = join(tempDir("onestore-lock-"), "s.sqlite");
  const ended = spawnSync(process.execPath, ["-e", ""]).pid;  // no process has this pid any more
  writeFileSync(`${db}-lock`, `${ended}@${hostname()}`);
  await runWorkers(db);
});

test("a process that finds the lock held announces itself, and the others let it go first while it still waits", () => {
  const db = join(tempDir("onestore-lock-"), "s.sqlite");
  const files = createNodeFiles();
  const me = `${process.pid}@${hostname()}`;
  const other = `1@${hostname()}`;  // pid 1 runs as long as the system does
  const want = `${db}-lock.want`;

  // Another process holds the lock: this one is busy, and says it waits.
  writeFileSync(`${db}-lock`, other);
  assert.equal(files.lock(db), false);
  assert.equal(readFileSync(want, "utf8"), me);
  // Released: this one gets it, and its announcement goes.
  rmSync(`${db}-lock`);
  assert.equal(files.lock(db), true);
  assert.ok(!existsSync(want));
  files.unlock(db);

  // Another process waits: the lock is free, but it goes first.
  writeFileSync(want, other);
  assert.equal(files.lock(db), false);
  assert.ok(!existsSync(`${db}-lock`), "nothing taken");
  assert.equal(readFileSync(want, "utf8"), other, "its announcement stays");
  // One that has not tried for over a second gave up: no longer waited for.
  const old = new Date(Date.now() - 5000);
  utimesSync(want, old, old);
  assert.equal(files.lock(db), true);
  files.unlock(db);
  // Nor is one whose process ended.
  const ended = spawnSync(process.execPath, ["-e", ""]).pid;
  writeFileSync(want, `${ended}@${hostname()}`);
  assert.equal(files.lock(db), true);
  files.unlock(db);
});
