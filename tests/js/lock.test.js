// Checks the lock between processes that a sqlite store file takes for each
// SQLite transaction (js/files-node.js): under heavy contention it excludes
// every other process (no read-modify-write of a shared counter is lost),
// a stale lock that several find at once is broken once, and nothing is left
// when its holders are done.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

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
