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

test("a lock file naming this process's pid, written before it started (a container's process 1 restarted after a kill -9), is stale: the store opens at once with every commit", async () => {
  const { defineTable, int, openStore } = await import("../../js/index.js");
  const T = defineTable("t", { columns: { id: int() }, key: ["id"] });
  const db = join(tempDir("onestore-lock-pid-"), "s.sqlite");
  const first = await openStore({ backend: "sqlite", path: db });
  const owner = first.object({ type: "o" });
  await owner.tx(async (tx) => { await tx.put(owner.table(T), { id: 1 }); });
  await first.close();
  // What the killed predecessor left: its lock, naming the pid and host
  // this process has now, dated before this process started.
  writeFileSync(`${db}-lock`, `${process.pid}@${hostname()}`);
  const before = new Date(performance.timeOrigin - 60_000);
  utimesSync(`${db}-lock`, before, before);
  const files = createNodeFiles();
  assert.equal(files.lockHeld(db), false, "no live process holds it");
  const again = await openStore({ backend: "sqlite", path: db, lockTimeout: 500 });
  assert.equal(again.head, 2);
  assert.equal(files.lockHeld(db), true, "the new store holds it");
  await again.close();

  // The same text written by this process (any of its threads) is live.
  writeFileSync(`${db}-lock`, `${process.pid}@${hostname()}`);
  assert.equal(files.lockHeld(db), true);
  rmSync(`${db}-lock`);
});

test("an open that finds the lock held by a process it cannot see (another host) fails with storage_failed naming the lock file and its holder", async () => {
  const { openStore } = await import("../../js/index.js");
  const { rejectsWith } = await import("./helpers.js");
  const db = join(tempDir("onestore-lock-host-"), "s.sqlite");
  await (await openStore({ backend: "sqlite", path: db })).close();
  writeFileSync(`${db}-lock`, "4242@old-pod-7f9c");
  await rejectsWith(openStore({ backend: "sqlite", path: db, lockTimeout: 200 }), "storage_failed",
    ["database is locked", `${db}-lock`, "4242@old-pod-7f9c", `delete ${db}-lock`]);
  rmSync(`${db}-lock`);
  await (await openStore({ backend: "sqlite", path: db })).close();
});
